"""Evaluation of jq expressions on plain JSON data, and writing back through path expressions.

The :class:`Evaluator` is the single entry point every other layer uses. It chooses the engine per
expression (today: libjq for everything; the fast path and the sandbox plug in here) and applies
the limits of the format (result cap, timeout).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from karta.errors import JqRuntimeError, WriteBackError
from karta.jq import _libjq

DEFAULT_MAX_RESULTS = 1000
DEFAULT_TIMEOUT_MS = 10_000

PathElem = str | int


class Evaluator:
    """Evaluates jq expressions with the format's limits.

    ``trusted`` is True for built-in definitions; untrusted expressions that cannot be proven
    bounded are evaluated in a killable worker process.
    """

    def __init__(
        self,
        *,
        max_results: int = DEFAULT_MAX_RESULTS,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        trusted: bool = False,
    ) -> None:
        self.max_results = max_results
        self.timeout_ms = timeout_ms
        self.trusted = trusted

    def evaluate(self, expression: str, data: Any) -> list[Any]:
        """All outputs of ``expression`` on ``data``, in order (section 3.3)."""
        return _libjq.run(expression, data, max_results=self.max_results)

    def paths(self, expression: str, data: Any) -> list[list[PathElem]]:
        """The locations ``path(expression)`` selects in ``data``."""
        wrapped = f"path({expression})"
        try:
            results = _libjq.run(wrapped, data, max_results=self.max_results)
        except JqRuntimeError as exc:
            raise JqRuntimeError(
                f"JQ execution error for expression '{expression}': {_detail(exc)}", expression=expression
            ) from None
        return [list(p) for p in results]

    def assign(self, expression: str, data: Any, value: Any) -> Any:
        """``(expression) = value`` on a copy of ``data`` (section 9.1)."""
        result = copy.deepcopy(data)
        for path in self.paths(expression, data):
            result = setpath(result, path, copy.deepcopy(value))
        return result

    def assign_zip(self, expression: str, data: Any, values: Sequence[Any]) -> Any:
        """Set the i-th location of ``path(expression)`` to ``values[i]`` (section 9.1)."""
        paths = self.paths(expression, data)
        if len(paths) != len(values):
            raise WriteBackError(
                f"array length mismatch: expected {len(paths)} values but got {len(values)} "
                f"(path '{expression}')"
            )
        result = copy.deepcopy(data)
        for path, value in zip(paths, values, strict=True):
            result = setpath(result, path, copy.deepcopy(value))
        return result


def _detail(exc: JqRuntimeError) -> str:
    text = str(exc)
    marker = "': "
    return text.split(marker, 1)[1] if marker in text else text


def setpath(data: Any, path: Sequence[PathElem], value: Any) -> Any:
    """jq's ``setpath``: create missing objects/arrays, pad arrays with null; mutates containers."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, str):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise WriteBackError(f"cannot index {_type_name(data)} with \"{head}\"")
        data[head] = setpath(data.get(head), rest, value)
        return data
    if isinstance(head, bool) or not isinstance(head, int):
        raise WriteBackError(f"invalid path component {head!r}")
    if data is None:
        data = []
    if not isinstance(data, list):
        raise WriteBackError(f"cannot index {_type_name(data)} with number")
    index = head
    if index < 0:
        index += len(data)
        if index < 0:
            raise WriteBackError("out of bounds negative array index")
    while len(data) <= index:
        data.append(None)
    data[index] = setpath(data[index], rest, value)
    return data


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
