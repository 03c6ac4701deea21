"""Machine-readable output (JSON indented and stable, YAML in block style with the key order kept)
and warnings on stderr."""

from __future__ import annotations

import sys
from typing import Any

import orjson

from karta.cli.errors import one_line

__all__ = ["dump_json", "dump_yaml", "emit", "warn"]


def dump_json(data: Any) -> str:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"


def dump_yaml(data: Any) -> str:
    import yaml  # ~30 ms: loaded when YAML is written, not for every --help and completion

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return text


def emit(data: Any, fmt: str) -> None:
    sys.stdout.write(dump_json(data) if fmt == "json" else dump_yaml(data))


def warn(message: str) -> None:
    sys.stderr.write(f"warning: {one_line(message)}\n")
