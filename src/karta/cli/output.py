"""Machine-readable output (JSON indented and stable, YAML in block style with the key order kept)
and warnings on stderr (one line each, control characters escaped: :func:`karta.cli.errors.one_line`).

JSON is exact: orjson, or the standard library for what orjson cannot write (integers beyond 64
bits, which jq arithmetic can make, and nesting deeper than orjson's 254 levels, which an object
from the cluster can have); a value nested too deeply even for that is an error (exit 1), never a
traceback. YAML likewise.
"""

from __future__ import annotations

import sys
from typing import Any

from karta.cli.errors import CliError, one_line
from karta.cli.prog import spelled

__all__ = ["dump_json", "dump_yaml", "emit", "warn"]


def dump_json(data: Any) -> str:
    # orjson and json are imported here: a command that prints text never needs them, and kli
    # start-up is budgeted (karta.jq._values)
    import json

    import orjson

    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    except orjson.JSONEncodeError:
        pass  # a big integer or deep nesting: the standard library writes both
    try:
        return json.dumps(data, indent=2, ensure_ascii=False, default=_json_default) + "\n"
    except (RecursionError, ValueError, TypeError) as exc:
        raise _unprintable("JSON", exc) from None


def _json_default(value: Any) -> Any:
    import datetime as _dt

    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON data")


def _unprintable(what: str, exc: BaseException) -> CliError:
    why = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
    return CliError(f"cannot print the result as {what}: {why}", hint="-o table shows a summary")


def dump_yaml(data: Any) -> str:
    import yaml  # ~30 ms: loaded when YAML is written, not for every --help and completion

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    try:
        text: str = yaml.dump(
            data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True
        )
    except (RecursionError, ValueError) as exc:
        raise _unprintable("YAML", exc) from None
    return text


def emit(data: Any, fmt: str) -> None:
    sys.stdout.write(dump_json(data) if fmt == "json" else dump_yaml(data))


def warn(message: str) -> None:
    sys.stderr.write(f"warning: {one_line(spelled(message))}\n")


def note(message: str) -> None:
    """What a check could not decide (``note: not checked: ...``): never a pass, never a failure."""
    sys.stderr.write(f"note: {one_line(spelled(message))}\n")
