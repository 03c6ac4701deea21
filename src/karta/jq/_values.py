"""jq value semantics on plain Python JSON data, shared by the fast path and the evaluator.

Owns: jq type names, truthiness, the total order (null < false < true < numbers < strings <
arrays < objects), equality that keeps booleans apart from numbers, number normalisation
(integral doubles behave and render as ints, gojq style) and the canonical JSON text that
``tojson``/``tostring`` produce (sorted keys, compact).
"""

from __future__ import annotations

import math
from typing import Any

import orjson

_MAX_FLOAT = 1.7976931348623157e308
# Integral doubles below this magnitude print without exponent in jq, so they come back as ints.
_INT_LIMIT = 1e17


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


def normalise_output(value: Any) -> Any:
    """The value libjq would hand back: integral floats as ints, NaN as null, inf clamped."""
    cls = value.__class__
    if cls is float:
        if value.is_integer():
            return int(value) if abs(value) < _INT_LIMIT else value
        if math.isnan(value):
            return None
        if math.isinf(value):
            return _MAX_FLOAT if value > 0 else -_MAX_FLOAT
        return value
    if cls is dict:
        return {k: normalise_output(v) for k, v in value.items()}
    if cls is list:
        return [normalise_output(v) for v in value]
    return value


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
        return str(value)
    f = float(value)
    if f.is_integer() and abs(f) < _INT_LIMIT:
        return str(int(f))
    if math.isnan(f):
        return "null"
    if math.isinf(f):
        return "1.7976931348623157e+308" if f > 0 else "-1.7976931348623157e+308"
    return repr(f)


def string_text(value: str) -> str:
    text = orjson.dumps(value).decode()
    if "\x7f" in text:
        text = text.replace("\x7f", "\\u007f")
    return text


def dumps(value: Any) -> str:
    """Compact JSON text with sorted keys, as ``tojson`` renders it."""
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
        return "[" + ",".join(dumps(v) for v in value) + "]"
    if cls is dict:
        return "{" + ",".join(string_text(k) + ":" + dumps(value[k]) for k in sorted(value)) + "}"
    raise JqFail(f"unsupported value of Python type {cls.__name__}")


def tostring(value: Any) -> str:
    if value.__class__ is str:
        return str(value)
    return dumps(value)
