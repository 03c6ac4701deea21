"""jq value semantics on plain Python JSON data, shared by the fast path and the evaluator.

Owns: jq type names, truthiness, the total order (null < false < true < numbers < strings <
arrays < objects), equality that keeps booleans apart from numbers, number normalisation
(integral doubles behave and render as ints, gojq style; integers beyond the double range render
as the largest double), the canonical JSON text that ``tojson``/``tostring`` produce (sorted
keys, compact), and the input conversion (:func:`as_input`: integers beyond 2**53 read as the
doubles the original sees; the evaluator applies it once per object).

Input depth: :func:`normalise_output` is iterative and :func:`dumps` falls back to an iterative
writer when the value is nested deeper than the interpreter's stack, so neither fails on deep
values; :func:`sort_key` and :func:`equal` recurse (the evaluator turns a ``RecursionError`` on the
fast path into a runtime error, ``input nested too deeply``).
"""

from __future__ import annotations

import math
from typing import Any

_MAX_FLOAT = 1.7976931348623157e308
# Integral doubles below this magnitude print without exponent in jq, so they come back as ints.
_INT_LIMIT = 1e17
# An int of more bits has no double; it renders as the largest double of its sign.
_DOUBLE_BITS = 1024


class JqFail(Exception):
    """A jq runtime error raised inside the fast path; ``value`` is the error value (any JSON)."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value

    @property
    def message(self) -> str:
        if isinstance(self.value, str):
            return self.value
        if self.value is None:
            return "null (null)"
        return f"{dumps(self.value)} (not a string)"


def json_type(value: Any) -> str:
    """The JSON type name of a plain value, for messages; never raises (unknown types: ``object``)."""
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


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    cls = value.__class__
    if cls is bool:
        return "boolean"
    if cls is int or cls is float:
        return "number"
    if cls is str:
        return "string"
    if cls is list:
        return "array"
    if cls is dict:
        return "object"
    raise JqFail(f"unsupported value of Python type {cls.__name__}")


def describe(value: Any) -> str:
    """``type (json)`` as jq prints values in error messages (truncated)."""
    text = dumps(value)
    if len(text) > 30:
        text = text[:27] + "..."
    return f"{type_name(value)} ({text})"


def is_number(value: Any) -> bool:
    cls = value.__class__
    return cls is int or cls is float


def truthy(value: Any) -> bool:
    return value is not None and value is not False


def norm_number(value: float) -> int | float:
    """An integral double becomes an int (as jq prints it); NaN/inf become what jq prints."""
    if value.is_integer():
        if abs(value) < _INT_LIMIT:
            return int(value)
        return value
    if math.isnan(value):
        return value
    return value


def fix_int(value: int) -> int | float:
    """Integer arithmetic beyond 2**53 loses precision like a double does."""
    if -(2**53) <= value <= 2**53:
        return value
    return norm_number(float(value))


def _output_float(value: float) -> Any:
    if value.is_integer():
        return int(value) if abs(value) < _INT_LIMIT else value
    if math.isnan(value):
        return None
    if math.isinf(value):
        return _MAX_FLOAT if value > 0 else -_MAX_FLOAT
    return value


def normalise_output(value: Any) -> Any:
    """The value libjq would hand back: integral floats as ints, NaN as null, inf clamped.

    Containers are copied, iteratively: any depth, no recursion."""
    cls = value.__class__
    if cls is float:
        return _output_float(value)
    if cls is not dict and cls is not list:
        return value
    return _copy_mapping(value, float, _output_float)


def _copy_mapping(value: Any, leaf: type, convert: Any) -> Any:
    """A copy of the container ``value`` with ``convert`` applied to every scalar of class
    ``leaf`` (iterative: any depth)."""
    root: Any = {} if value.__class__ is dict else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        src, dst = stack.pop()
        is_dict = dst.__class__ is dict
        for key, child in src.items() if is_dict else enumerate(src):
            ccls = child.__class__
            if ccls is dict or ccls is list:
                copy: Any = {} if ccls is dict else []
                stack.append((child, copy))
                child = copy
            elif ccls is leaf:
                child = convert(child)
            if is_dict:
                dst[key] = child
            else:
                dst.append(child)
    return root


# --- input: numbers as the original's doubles --------------------------------------------------

_EXACT = 2**53
# 2**53 has 16 digits: a number text of fewer cannot hold an integer beyond it. Every digit of a
# text becomes "0", everything else " ", and a run of 16 is one ``find`` (a regular expression
# costs ten times as much).
_DIGITS = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_SIXTEEN_DIGITS = b"0" * 16

# orjson is imported where it is used: importing it costs a few milliseconds (it imports dataclasses)
# that a kli command reading YAML never needs (kli start-up is budgeted).


def as_double(value: int) -> int | float:
    """An integer as the double the original reads for it (docs/spec/format.md#jq-dialect): exact up to
    2**53, rounded to the nearest double beyond (an int again below 1e17, as jq prints it), the
    largest double of its sign beyond the double range (what libjq reads for an infinite input)."""
    if -_EXACT <= value <= _EXACT:
        return value
    try:
        return norm_number(float(value))
    except OverflowError:
        return _MAX_FLOAT if value > 0 else -_MAX_FLOAT


def as_input(value: Any) -> Any:
    """``value`` as the original's engine sees its input: the original converts every input into
    generic JSON values once, numbers as IEEE-754 doubles, so an integer beyond 2**53 is the
    nearest double (``9007199254740993`` is ``9007199254740992``).

    The value itself when it holds no such integer (the common case, found by one C-level
    serialisation that refuses integers beyond 53 bits: ``OPT_STRICT_INTEGER``), else a copy
    with those integers converted (iterative: any depth). A refusal is not a verdict: the walk
    of :func:`_converted` decides (2**53 itself, which the option refuses but is exact, a key
    that is not a string, nesting deeper than orjson goes)."""
    cls = value.__class__
    if cls is int:
        return as_double(value)
    if cls is not dict and cls is not list:
        return value
    import orjson

    try:
        # orjson's limit is |n| < 2**53: an integer it refuses may still be 2**53 (exact), the walk decides
        orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER)
    except (TypeError, orjson.JSONEncodeError):  # beyond 53 bits, not JSON, or nested deeper than orjson goes
        return _converted(value)
    return value


def long_digits(raw: bytes | str) -> bool:
    """Whether the text ``raw`` holds a run of 16 digits or more (the only way its JSON or YAML
    can hold an integer beyond 2**53): one C-level ``translate`` and ``find``, well under a
    microsecond per kilobyte."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    return data.translate(_DIGITS).find(_SIXTEEN_DIGITS) >= 0


def decoded_input(value: Any, raw: bytes | str) -> Any:
    """``value``, just decoded from the text ``raw``, as the original's engine reads it: the
    value itself when ``raw`` has no run of 16 digits (the common case: one scan of the bytes),
    else a copy with every integer beyond 2**53 as its double (:func:`as_input`).

    Every decoder of objects that an evaluation reads calls it where the bytes are at hand, once
    per object (CONTRIBUTING.md "Numbers beyond 2**53"): ``kli``'s document reader, the API
    client's answers and watch events, the webhook's AdmissionReview. Their objects are then read
    as they are by the ``decoded`` evaluators (:class:`karta.jq.Evaluator`)."""
    if not long_digits(raw):
        return value
    return as_input(value)


def _has_long_int(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        cls = v.__class__
        if cls is dict:
            stack.extend(v.values())
        elif cls is list:
            stack.extend(v)
        elif cls is int and not -_EXACT <= v <= _EXACT:
            return True
    return False


def _converted(value: Any) -> Any:
    return _copy_mapping(value, int, as_double) if _has_long_int(value) else value


# --- ordering and equality -----------------------------------------------------------------------


def sort_key(value: Any) -> tuple[Any, ...]:
    """A key whose Python ordering is jq's total order."""
    if value is None:
        return (0,)
    cls = value.__class__
    if cls is bool:
        return (2,) if value else (1,)
    if cls is int or cls is float:
        if cls is float and math.isnan(value):
            return (3, -math.inf)
        return (3, value)
    if cls is str:
        return (4, value)
    if cls is list:
        return (5, tuple(sort_key(v) for v in value))
    keys = sorted(value)
    return (6, tuple(keys), tuple(sort_key(value[k]) for k in keys))


def compare(a: Any, b: Any) -> int:
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        return -1 if a < b else (1 if a > b else 0)
    if ca is str and cb is str:
        return -1 if a < b else (1 if a > b else 0)
    ka, kb = sort_key(a), sort_key(b)
    return -1 if ka < kb else (1 if ka > kb else 0)


def equal(a: Any, b: Any) -> bool:
    ca, cb = a.__class__, b.__class__
    if ca is cb:
        if ca is dict or ca is list:
            return sort_key(a) == sort_key(b)
        return bool(a == b)
    if (ca is int or ca is float) and (cb is int or cb is float):
        return bool(a == b)
    return False


# --- text ------------------------------------------------------------------------------------------


def number_text(value: int | float) -> str:
    if value.__class__ is int:
        try:  # exact, as gojq keeps big integers (arithmetic turns them into doubles)
            return str(value)
        except ValueError:  # beyond Python's int-string conversion limit (4300 digits)
            return "1.7976931348623157e+308" if value > 0 else "-1.7976931348623157e+308"
    f = float(value)
    if f.is_integer() and abs(f) < _INT_LIMIT:
        return str(int(f))
    if math.isnan(f):
        return "null"
    if math.isinf(f):
        return "1.7976931348623157e+308" if f > 0 else "-1.7976931348623157e+308"
    return repr(f)


def string_text(value: str) -> str:
    import orjson

    text = orjson.dumps(value).decode()
    if "\x7f" in text:
        text = text.replace("\x7f", "\\u007f")
    return text


def dumps(value: Any) -> str:
    """Compact JSON text with sorted keys, as ``tojson`` renders it (any depth)."""
    try:
        return _dumps(value)
    except RecursionError:
        return _dumps_deep(value)


def _dumps_deep(value: Any) -> str:
    """:func:`dumps` without recursion, for values nested deeper than the interpreter's stack."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if v.__class__ is _Raw:
            out.append(v.text)
        elif v.__class__ is list:
            out.append("[")
            stack.append(_CLOSE_ARRAY)
            for i in range(len(v) - 1, -1, -1):
                stack.append(v[i])
                if i:
                    stack.append(_SEP)
        elif v.__class__ is dict:
            out.append("{")
            stack.append(_CLOSE_OBJECT)
            keys = sorted(v)
            for i in range(len(keys) - 1, -1, -1):
                stack.append(v[keys[i]])
                stack.append(_Raw(string_text(keys[i]) + ":"))
                if i:
                    stack.append(_SEP)
        else:
            out.append(_dumps(v))  # a scalar
    return "".join(out)


class _Raw:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_SEP = _Raw(",")
_CLOSE_ARRAY = _Raw("]")
_CLOSE_OBJECT = _Raw("}")


def _dumps(value: Any) -> str:
    if value is None:
        return "null"
    cls = value.__class__
    if cls is bool:
        return "true" if value else "false"
    if cls is int or cls is float:
        return number_text(value)
    if cls is str:
        return string_text(value)
    if cls is list:
        return "[" + ",".join(_dumps(v) for v in value) + "]"
    if cls is dict:
        return "{" + ",".join(string_text(k) + ":" + _dumps(value[k]) for k in sorted(value)) + "}"
    raise JqFail(f"unsupported value of Python type {cls.__name__}")


def tostring(value: Any) -> str:
    if value.__class__ is str:
        return str(value)
    return dumps(value)
