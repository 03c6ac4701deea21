"""Machine-readable output: JSON (indented, stable) and YAML (block style, key order kept)."""

from __future__ import annotations

import sys
from typing import Any


def dump_json(data: Any) -> str:
    import orjson

    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"


def dump_yaml(data: Any) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return text


def emit(data: Any, fmt: str) -> None:
    sys.stdout.write(dump_json(data) if fmt == "json" else dump_yaml(data))


def warn(message: str) -> None:
    sys.stderr.write(f"warning: {one_line(message)}\n")


def one_line(message: str) -> str:
    """A multi-line message (click's list of choices, a YAML error's excerpt) as one line, so that
    every stderr line starts with ``error:``, ``hint:`` or ``warning:``."""
    parts = [part.strip() for part in message.splitlines()]
    return " ".join(part for part in parts if part and part != "^").replace(" ,", ",")
