"""The libjq engine: the only module that imports the ``jq`` binding.

libjq differs from gojq, whose results karta must reproduce (docs/spec/format.md#jq-dialect, R11): it keeps
objects in insertion order, keeps the text of number literals (``3.0`` stays ``3.0`` through
``tostring``), reads ``env`` from the process. So libjq never sees an expression as written:

* the expression is parsed by karta's parser (:mod:`karta.jq.parser`, with its limits), checked
  for undefined names (:func:`karta.jq.scope_check.compile_check`: ``failed to compile``), and
  the program libjq compiles is :func:`karta.jq.printer.gojq_program` of the tree: every object
  it builds is sorted, ``env``/``$ENV`` are ``{}``, literals are canonical;
* every input is serialised with sorted keys and integral floats as ints (:func:`to_json_text`).

So every object libjq iterates, serialises or returns is in gojq's key order, whichever objects
the expression builds.

Input conversion never recurses in Python. Numbers (:func:`karta.jq._values.normalise_output`):
integral floats below 1e17 become ints (jq would print ``3.0``), NaN becomes ``null`` and
infinities the largest double (what jq and gojq print for them); integers beyond 64 bits are
written exactly (libjq keeps their digits as long as no arithmetic touches them, as gojq keeps
big integers; arithmetic computes with doubles, so beyond the double range with infinity, as the
fast path does), and integers beyond Python's int-string conversion limit (4300 digits) as the
largest double of their sign.
Strings with lone surrogates have them replaced by U+FFFD, as jq reads them. Nesting: at most
:data:`MAX_INPUT_DEPTH` levels (5 000) go to libjq; a deeper input is one :class:`JqRuntimeError`
(``input nested too deeply``). Values that are not JSON (other Python types; keys that are not
strings, numbers, booleans or null) are a :class:`JqRuntimeError` too.

Left as libjq has it: a number of the input written with an exponent (``1e-07``, ``1.5e+300``)
keeps its text through ``tostring``/``tojson`` in libjq's own spelling (``1E-7``), where gojq and
the fast path print ``1e-07``; number literals of the expression are printed so that they do not.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any, Final

import jq
import orjson

from karta.errors import JqCompileError, JqParseError, JqResultLimitError, JqRuntimeError
from karta.jq import syntax
from karta.jq._values import normalise_output, number_text
from karta.jq.parser import parse_cached, shown
from karta.jq.printer import gojq_program
from karta.jq.scope_check import compile_check

__all__ = [
    "MAX_INPUT_DEPTH",
    "compile_program",
    "program_for",
    "run",
    "run_text",
    "to_json_text",
]

MAX_INPUT_DEPTH: Final = 5_000
"""The deepest input sent to libjq, in levels of arrays and objects. libjq's own parser stops at
10 000 levels of arrays and 5 000 of objects (``Exceeds depth limit for parsing``); karta refuses
anything deeper than 5 000 levels itself, whatever the mix."""

_INT_LIMIT: Final = 1e17  # integral doubles below it print without exponent, so they become ints
_MAX_FLOAT_TEXT: Final = "1.7976931348623157e+308"
_DOUBLE_BITS: Final = 1024  # an int of more bits has no double: the largest one stands in


def _float_needs_normalising(value: float) -> bool:
    return (value.is_integer() and abs(value) < _INT_LIMIT) or math.isnan(value) or math.isinf(value)


def _needs_normalising(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        cls = v.__class__
        if cls is float:
            if _float_needs_normalising(v):
                return True
        elif cls is dict:
            stack.extend(v.values())
        elif cls is list:
            stack.extend(v)
    return False


def to_json_text(data: Any) -> str:
    """Serialise one input document the way the engine must see it (see the module docstring)."""
    if _needs_normalising(data):
        data = normalise_output(data)
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, ValueError):  # deeper than orjson goes, integers beyond 64 bits, ...
        return _dumps(data)


def _int_text(value: int) -> str:
    if value.bit_length() > _DOUBLE_BITS:
        try:  # the digits: libjq keeps them for tostring, and computes with them as infinity
            return str(value)
        except ValueError:  # beyond Python's int-string conversion limit (4300 digits)
            return _MAX_FLOAT_TEXT if value > 0 else "-" + _MAX_FLOAT_TEXT
    return str(value)


def _float_text(value: float) -> str:
    number = normalise_output(value)
    return "null" if number is None else number_text(number)


def _string_text(value: str) -> str:
    try:
        return orjson.dumps(value).decode()
    except (TypeError, ValueError):  # surrogates: pairs joined, lone ones U+FFFD (as jq reads them)
        fixed = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return orjson.dumps(fixed).decode()


def _key_text(key: Any) -> str:
    if key.__class__ is str:
        return str(key)
    if key is None or key.__class__ is bool or key.__class__ is int or key.__class__ is float:
        return json.dumps(key)  # as json.dumps would write the key: 1 -> "1", True -> "true"
    raise _not_json(key)


def _not_json(value: Any) -> JqRuntimeError:
    return JqRuntimeError(
        f"JQ execution error: the input holds a {type(value).__name__}, which is not JSON", expression=""
    )


def _too_deep() -> JqRuntimeError:
    return JqRuntimeError(
        f"JQ execution error: input nested too deeply (libjq reads at most {MAX_INPUT_DEPTH} levels)",
        expression="",
    )


def _dumps(data: Any) -> str:
    """Compact JSON with sorted keys, iteratively, for what orjson refuses (module docstring)."""
    out: list[str] = []
    stack: list[Any] = [data]
    closers = (_Closer("]"), _Closer("}"))
    depth = 0
    while stack:
        v = stack.pop()
        cls = v.__class__
        if cls is _Closer:
            out.append(v.text)
            depth -= 1
        elif cls is _Text:
            out.append(v.text)
        elif v is None:
            out.append("null")
        elif cls is bool:
            out.append("true" if v else "false")
        elif cls is int:
            out.append(_int_text(v))
        elif cls is float:
            out.append(_float_text(v))
        elif cls is str:
            out.append(_string_text(v))
        elif cls is list or cls is tuple:
            depth += 1
            if depth > MAX_INPUT_DEPTH:
                raise _too_deep()
            out.append("[")
            stack.append(closers[0])
            for i in range(len(v) - 1, -1, -1):
                stack.append(v[i])
                if i:
                    stack.append(_COMMA)
        elif cls is dict:
            depth += 1
            if depth > MAX_INPUT_DEPTH:
                raise _too_deep()
            out.append("{")
            stack.append(closers[1])
            entries = sorted((_key_text(k), child) for k, child in v.items()) if v else []
            for i in range(len(entries) - 1, -1, -1):
                key, child = entries[i]
                stack.append(child)
                stack.append(_Text(_string_text(key) + ":"))
                if i:
                    stack.append(_COMMA)
        else:
            raise _not_json(v)
    return "".join(out)


class _Text:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Closer(_Text):
    __slots__ = ()


_COMMA: Final = _Text(",")


# --- programs ------------------------------------------------------------------------------------


def program_for(expression: str) -> str:
    """The program libjq compiles for ``expression`` (module docstring); raises
    :class:`JqParseError` or :class:`JqCompileError` as gojq would refuse it."""
    node = parse_cached(expression)
    if isinstance(node, syntax.ModuleDirective):
        raise JqCompileError(
            f"failed to compile JQ expression '{shown(expression)}': "
            "module directives are not supported (karta resolves no modules)",
            expression=expression,
        )
    detail = compile_check(node)
    if detail is not None:
        raise JqCompileError(
            f"failed to compile JQ expression '{expression}': {detail}", expression=expression
        )
    return gojq_program(node)


@lru_cache(maxsize=4096)
def compile_program(expression: str) -> Any:
    """Compile ``expression`` with libjq (cached by text)."""
    program = program_for(expression)
    try:
        return jq.compile(program)
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
        detail = str(exc).strip()
        if "Exceeds depth limit for parsing" in detail:  # only for text not from to_json_text
            detail = "input nested too deeply"
        raise JqRuntimeError(
            f"JQ execution error for expression '{expression}': {detail}", expression=expression
        ) from None
    return out


def run(expression: str, data: Any, *, max_results: int) -> list[Any]:
    """Evaluate ``expression`` on ``data`` (plain JSON values)."""
    return run_text(expression, to_json_text(data), max_results=max_results)
