"""The libjq reference engine: the only module that imports the ``jq`` binding.

libjq iterates objects in insertion order and keeps the text of number literals (``3.0`` stays
``3.0`` through ``tostring``); gojq, whose results we must reproduce, iterates in sorted key order
and renders integral numbers without a fraction. So every input is serialised with sorted keys and
integral floats turned into ints before libjq sees it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jq
import orjson

from karta.errors import JqCompileError, JqParseError, JqResultLimitError, JqRuntimeError


def normalise(value: Any) -> Any:
    """Return ``value`` with every integral float replaced by an int (recursively)."""
    if isinstance(value, float):
        # Beyond 1e17 jq prints doubles with an exponent, and orjson cannot write huge ints.
        if value.is_integer() and abs(value) < 1e17:
            return int(value)
        return value
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def _needs_normalising(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer() and abs(value) < 1e17
    if isinstance(value, dict):
        return any(_needs_normalising(v) for v in value.values())
    if isinstance(value, list):
        return any(_needs_normalising(v) for v in value)
    return False


def to_json_text(data: Any) -> str:
    """Serialise one input document the way the engine must see it."""
    if _needs_normalising(data):
        data = normalise(data)
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()


@lru_cache(maxsize=4096)
def compile_program(expression: str) -> Any:
    """Compile ``expression`` with libjq (cached by text)."""
    try:
        return jq.compile(expression)
    except ValueError as exc:
        detail = str(exc).strip()
        if "syntax error" in detail or "unexpected" in detail:
            raise JqParseError(
                f"failed to parse JQ expression '{expression}': {detail}", expression=expression
            ) from None
        raise JqCompileError(
            f"failed to compile JQ expression '{expression}': {detail}", expression=expression
        ) from None


def run_text(expression: str, text: str, *, max_results: int) -> list[Any]:
    """Evaluate ``expression`` on one JSON document given as text; collect at most ``max_results``."""
    program = compile_program(expression)
    out: list[Any] = []
    try:
        for result in program.input_text(text):
            if len(out) >= max_results:
                raise JqResultLimitError(
                    f"JQ execution error for expression '{expression}': "
                    f"query results exceed the allowed number {max_results}",
                    expression=expression,
                )
            out.append(result)
    except ValueError as exc:
        raise JqRuntimeError(
            f"JQ execution error for expression '{expression}': {str(exc).strip()}", expression=expression
        ) from None
    return out


def run(expression: str, data: Any, *, max_results: int) -> list[Any]:
    """Evaluate ``expression`` on ``data`` (plain JSON values)."""
    return run_text(expression, to_json_text(data), max_results=max_results)
