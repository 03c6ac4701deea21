"""The ``kli`` configuration file and the output format precedence (section 17.2, R16).

The file is ``--config PATH``, else ``$KARTA_CONFIG``, else ``~/.karta/config.yaml``. A missing
default file is fine; a missing explicit one (flag or variable) is an error. Keys: ``output`` (one
of the output formats) and ``gpuResources`` (the extended resource names counted as GPUs, default
``nvidia.com/gpu``). Unknown keys, malformed YAML and invalid values are usage errors.

Output format precedence: explicit ``-o`` flag > ``$KARTA_OUTPUT`` > config file > ``table``. A
format that is valid but not offered by the command at hand (``wide`` for ``kli definitions``)
falls back to ``table`` when it comes from the environment or the file: only the flag is strict.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from karta import model
from karta._records import record
from karta.cli.errors import UsageError
from karta.extract.types import DEFAULT_GPU_RESOURCES

__all__ = [
    "DEFAULT_GPU_RESOURCES",
    "OUTPUT_FORMATS",
    "Config",
    "config_path",
    "load_config",
    "resolve_output",
]

OUTPUT_FORMATS = ("table", "wide", "json", "yaml")
_KEYS = ("output", "gpuResources")


@record
class Config:
    """The settings of the configuration file; ``source`` is the file read, or None."""

    output: str | None = None
    gpu_resources: tuple[str, ...] = DEFAULT_GPU_RESOURCES
    source: str | None = None


def config_path(explicit: str | None = None) -> tuple[Path, bool]:
    """``(path, explicitly chosen)``: the flag, else ``$KARTA_CONFIG``, else ``~/.karta/config.yaml``."""
    if explicit:
        return Path(explicit), True
    env = os.environ.get("KARTA_CONFIG")
    if env:
        return Path(env), True
    return Path.home() / ".karta" / "config.yaml", False


def load_config(explicit: str | None = None) -> Config:
    """Read and check the configuration file (see the module docstring for the rules)."""
    path, chosen = config_path(explicit)
    try:
        text = model.read_bytes(path).decode("utf-8")
    except model.DocumentError as exc:
        raise UsageError(f"cannot read the config file {path}: {exc.problem}") from None
    except FileNotFoundError:
        if chosen:
            raise UsageError(f"cannot read the config file {path}: no such file") from None
        return Config()
    except IsADirectoryError:
        raise UsageError(f"cannot read the config file {path}: it is a directory") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read the config file {path}: not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"cannot read the config file {path}: {exc.strerror or exc}") from None
    return _parse(text, str(path))


def _parse(text: str, name: str) -> Config:
    try:
        docs = model.read_documents(text, source=name)
    except model.DocumentError as exc:
        where = f" (line {exc.line}, column {exc.column})" if exc.line else ""
        raise UsageError(f"cannot parse the config file {name}{where}: {exc.problem}") from None
    if len(docs) > 1:
        raise UsageError(f"config file {name}: expected one YAML document, got {len(docs)}")
    data: Any = docs[0].value if docs else None
    if data is None:
        return Config(source=name)
    if not isinstance(data, dict):
        raise UsageError(f"config file {name}: expected a mapping of settings, got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in _KEYS]
    if unknown:
        raise UsageError(
            f"config file {name}: unknown key {', '.join(repr(k) for k in unknown)} "
            f"(known keys: {', '.join(_KEYS)})"
        )
    output = data.get("output")
    if output is not None and output not in OUTPUT_FORMATS:
        raise UsageError(
            f"config file {name}: invalid output {output!r} (expected one of {', '.join(OUTPUT_FORMATS)})"
        )
    gpus = DEFAULT_GPU_RESOURCES
    if "gpuResources" in data:
        value = data["gpuResources"]
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v.strip() for v in value)
        ):
            raise UsageError(
                f"config file {name}: gpuResources must be a non-empty list of resource names "
                "(for example [nvidia.com/gpu, amd.com/gpu])"
            )
        gpus = tuple(dict.fromkeys(v.strip() for v in value))
    return Config(output=output, gpu_resources=gpus, source=name)


def resolve_output(flag: str | None, *, config: Config, allowed: Sequence[str]) -> str:
    """The output format: flag > ``$KARTA_OUTPUT`` > config file > ``table``."""
    if flag:
        return flag
    env = os.environ.get("KARTA_OUTPUT", "").strip()
    if env:
        if env not in OUTPUT_FORMATS:
            raise UsageError(f"invalid $KARTA_OUTPUT {env!r} (expected one of {', '.join(OUTPUT_FORMATS)})")
        return env if env in allowed else "table"
    if config.output is not None:
        return config.output if config.output in allowed else "table"
    return "table"
