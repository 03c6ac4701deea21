"""jq's operations on plain values, used by the fast path and the generated code.

Owns indexing, slicing and iteration (null-safe, negative indices, sorted object order), the
arithmetic operators with jq semantics (object merge, array subtraction, string repetition with a
cap, C-style ``%``), and the value functions of the builtins that the fast path runs as plain
functions: ``f(v)`` for ``name/0``, ``f(v, a)`` for ``name/1``, and the type tests of the selectors
(``strings``, ``objects``, ...). Which builtin uses which function is said by the builtin table
(:mod:`karta.jq.builtin_table`, ``Fast.impl``), never here. Errors are raised as
:class:`karta.jq._values.JqFail` with jq 1.8's messages where practical.
"""

from __future__ import annotations

import base64
import math
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from karta.jq._values import (
    JqFail,
    compare,
    describe,
    dumps,
    equal,
    fix_int,
    is_number,
    norm_number,
    sort_key,
    tostring,
    truthy,
    type_name,
)

__all__ = [
    "BINARY_OPS",
    "MAX_EXACT",
    "MAX_REPEAT_CHARS",
    "absolute",
    "add",
    "add_all",
    "all_true",
    "any_true",
    "ascii_downcase",
    "ascii_upcase",
    "base64_text",
    "ceil",
    "contains",
    "dumps",
    "endswith",
    "flatten",
    "flatten_all",
    "floor",
    "from_entries",
    "fromjson",
    "getpath_value",
    "has",
    "index_of",
    "index_value",
    "indices",
    "inside",
    "is_array",
    "is_boolean",
    "is_in",
    "is_iterable",
    "is_null",
    "is_number",
    "is_object",
    "is_scalar",
    "is_string",
    "is_value",
    "iterate_value",
    "join",
    "keys",
    "length",
    "ltrimstr",
    "maximum",
    "minimum",
    "negate",
    "num_result",
    "reverse",
    "rindex_of",
    "rtrimstr",
    "slice_value",
    "sort",
    "split",
    "sqrt",
    "startswith",
    "to_entries",
    "tonumber",
    "tostring",
    "type_name",
    "unique",
]

MAX_REPEAT_CHARS = 10_000_000


# --- primitive operations --------------------------------------------------------------------------


def index_value(v: Any, key: Any) -> Any:
    """``v[key]`` with jq semantics (null-safe, negative array indices)."""
    cls = v.__class__
    kcls = key.__class__
    if cls is dict:
        if kcls is str:
            return v.get(key)
        raise JqFail(f"Cannot index object with {_key_desc(key)}")
    if v is None:
        if kcls is str or kcls is int or kcls is float or kcls is dict:
            return None
        raise JqFail(f"Cannot index null with {_key_desc(key)}")
    if cls is list:
        if kcls is int or kcls is float:
            if kcls is float and (math.isnan(key) or math.isinf(key)):
                return None
            i = int(key)
            if i < 0:
                i += len(v)
                if i < 0:
                    return None
            return v[i] if i < len(v) else None
        if kcls is list:
            return _array_indices(v, key)
        raise JqFail(f"Cannot index array with {_key_desc(key)}")
    raise JqFail(f"Cannot index {type_name(v)} with {_key_desc(key)}")


def _key_desc(key: Any) -> str:
    return describe(key)


def iterate_value(v: Any) -> list[Any]:
    cls = v.__class__
    if cls is list:
        return list(v)
    if cls is dict:
        return [v[k] for k in sorted(v)]
    raise JqFail(f"Cannot iterate over {describe(v)}")


def _slice_bound(b: Any, length: int, *, is_end: bool) -> int:
    if b is None:
        return length if is_end else 0
    if not is_number(b):
        raise JqFail("Array/string slice indices must be integers")
    f = float(b)
    if math.isnan(f):
        return 0
    n = (length if f > 0 else -length) if math.isinf(f) else (math.ceil(f) if is_end else math.floor(f))
    if n < 0:
        n = max(0, n + length)
    return min(n, length)


def slice_value(v: Any, start: Any, end: Any) -> Any:
    if v is None:
        return None
    cls = v.__class__
    if cls is list or cls is str:
        n = len(v)
        s = _slice_bound(start, n, is_end=False)
        e = _slice_bound(end, n, is_end=True)
        if e < s:
            e = s
        return v[s:e]
    raise JqFail(f"Cannot index {type_name(v)} with object")


def getpath_value(v: Any, path: Any) -> Any:
    if path.__class__ is not list:
        raise JqFail("Path must be specified as an array")
    for key in path:
        if v is None:
            return None
        v = slice_value(v, key.get("start"), key.get("end")) if key.__class__ is dict else index_value(v, key)
    return v


def _array_indices(v: list[Any], sub: list[Any]) -> Any:
    if not sub:
        return []
    n = len(sub)
    return [i for i in range(len(v) - n + 1) if all(equal(v[i + j], sub[j]) for j in range(n))]


# --- arithmetic ------------------------------------------------------------------------------------


_MAX_EXACT = 2**53
MAX_EXACT = _MAX_EXACT  # integers beyond stay exact in Python but not in jq (doubles)


def num_result(x: int | float) -> int | float:
    if x.__class__ is int:
        if -_MAX_EXACT <= x <= _MAX_EXACT:
            return x
        return fix_int(int(x))
    return norm_number(float(x))


def op_add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        return num_result(a + b)
    if ca is cb:
        if ca is str or ca is list:
            return a + b
        if ca is dict:
            out = dict(a)
            out.update(b)
            return out
    raise JqFail(f"{describe(a)} and {describe(b)} cannot be added")


def op_sub(a: Any, b: Any) -> Any:
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        return num_result(a - b)
    if ca is list and cb is list:
        return [x for x in a if not any(equal(x, y) for y in b)]
    raise JqFail(f"{describe(a)} and {describe(b)} cannot be subtracted")


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, bv in b.items():
        av = out.get(k)
        if av.__class__ is dict and bv.__class__ is dict:
            out[k] = _deep_merge(av, bv)
        else:
            out[k] = bv
    return out


def _repeat(s: str, n: Any) -> Any:
    f = float(n)
    if math.isnan(f) or f < 0:
        return None
    count = int(f) if f < 1e9 else MAX_REPEAT_CHARS + 1
    if len(s) * count > MAX_REPEAT_CHARS:
        raise JqFail("Repeat string result too long")
    return s * count


def op_mul(a: Any, b: Any) -> Any:
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        return num_result(a * b)
    if ca is str and (cb is int or cb is float):
        return _repeat(a, b)
    if cb is str and (ca is int or ca is float):
        return _repeat(b, a)
    if ca is dict and cb is dict:
        return _deep_merge(a, b)
    raise JqFail(f"{describe(a)} and {describe(b)} cannot be multiplied")


def op_div(a: Any, b: Any) -> Any:
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        if b == 0:
            raise JqFail(f"{describe(a)} and {describe(b)} cannot be divided because the divisor is zero")
        return norm_number(a / b)
    if ca is str and cb is str:
        return split(a, b)
    raise JqFail(f"{describe(a)} and {describe(b)} cannot be divided")


def op_mod(a: Any, b: Any) -> Any:
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        if (ca is float and math.isnan(a)) or (cb is float and math.isnan(b)):
            return math.nan
        x, y = int(a), int(b)
        if y == 0:
            raise JqFail(
                f"{describe(a)} and {describe(b)} cannot be divided (remainder) because the divisor is zero"
            )
        r = abs(x) % abs(y)
        return -r if x < 0 else r
    raise JqFail(f"{describe(a)} and {describe(b)} cannot be divided (remainder)")


def _fast_cmp_op(
    test: Callable[[int], bool], direct: Callable[[Any, Any], bool]
) -> Callable[[Any, Any], Any]:
    # Two ints or two strings compare as Python compares them (strings: code points, which is
    # UTF-8 byte order); everything else (floats: NaN) goes through the total order of compare.
    def op(a: Any, b: Any) -> Any:
        ca = a.__class__
        if ca is b.__class__ and (ca is int or ca is str):
            return direct(a, b)
        return test(compare(a, b))

    return op


BINARY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": op_add,
    "-": op_sub,
    "*": op_mul,
    "/": op_div,
    "%": op_mod,
    "==": equal,
    "!=": lambda a, b: not equal(a, b),
    "<": _fast_cmp_op(lambda c: c < 0, operator.lt),
    "<=": _fast_cmp_op(lambda c: c <= 0, operator.le),
    ">": _fast_cmp_op(lambda c: c > 0, operator.gt),
    ">=": _fast_cmp_op(lambda c: c >= 0, operator.ge),
}


# --- value functions of builtins (named by the builtin table) --------------------------------------


def length(v: Any) -> Any:
    if v is None:
        return 0
    cls = v.__class__
    if cls is bool:
        raise JqFail(f"{describe(v)} has no length")
    if cls is int or cls is float:
        return abs(v)
    return len(v)


def keys(v: Any) -> list[Any]:
    cls = v.__class__
    if cls is dict:
        return sorted(v)
    if cls is list:
        return list(range(len(v)))
    raise JqFail(f"{describe(v)} has no keys")


def to_entries(v: Any) -> list[Any]:
    cls = v.__class__
    if cls is dict:
        return [{"key": k, "value": v[k]} for k in sorted(v)]
    if cls is list:
        return [{"key": i, "value": x} for i, x in enumerate(v)]
    raise JqFail(f"{describe(v)} has no keys")


def from_entries(v: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for e in iterate_value(v):
        if e is None:
            raise JqFail("Cannot use null (null) as object key")
        if e.__class__ is not dict:
            raise JqFail(f'Cannot index {type_name(e)} with "key"')
        key = e.get("key")
        if not truthy(key):
            for alt in ("k", "name", "Name", "K", "Key"):
                key = e.get(alt)
                if truthy(key):
                    break
        if "value" in e:
            value = e["value"]
        elif "v" in e:
            value = e["v"]
        else:
            value = e.get("Value")
        if key.__class__ is not str:
            raise JqFail(f"Cannot use {describe(key)} as object key")
        out[key] = value
    return out


def add_all(items: Sequence[Any]) -> Any:
    acc: Any = None
    for x in items:
        acc = op_add(acc, x)
    return acc


def _ascii_case(v: Any, *, upper: bool) -> str:
    if v.__class__ is not str:
        raise JqFail("explode input must be a string")
    if upper:
        return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in v)
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in v)


_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def tonumber(v: Any) -> Any:
    cls = v.__class__
    if cls is int or cls is float:
        return v
    if cls is str:
        if _NUMBER_RE.fullmatch(v):
            f = float(v)
            if math.isinf(f):
                return 1.7976931348623157e308 if f > 0 else -1.7976931348623157e308
            if "." not in v and "e" not in v and "E" not in v and abs(f) < 2**53:
                return int(v)
            return norm_number(f)
        raise JqFail(f"{describe(v)} cannot be parsed as a number")
    raise JqFail(f"{describe(v)} cannot be parsed as a number")


def split(s: Any, sep: Any) -> list[str]:
    if s.__class__ is not str or sep.__class__ is not str:
        raise JqFail("split input and separator must be strings")
    if s == "":
        return []
    if sep == "":
        return list(s)
    return s.split(sep)


def join(v: Any, sep: Any) -> Any:
    acc: Any = None
    for x in iterate_value(v):
        acc = "" if acc is None else op_add(acc, sep)
        if x is None:
            part: Any = ""
        elif x.__class__ is str:
            part = x
        elif x.__class__ is bool or is_number(x):
            part = dumps(x)
        else:
            part = x
        acc = op_add(acc, part)
    return "" if acc is None else acc


def startswith(v: Any, s: Any) -> bool:
    if v.__class__ is not str or s.__class__ is not str:
        raise JqFail("startswith() requires string inputs")
    return bool(v.startswith(s))


def endswith(v: Any, s: Any) -> bool:
    if v.__class__ is not str or s.__class__ is not str:
        raise JqFail("endswith() requires string inputs")
    return bool(v.endswith(s))


def ltrimstr(v: Any, s: Any) -> Any:
    if startswith(v, s):
        return v[len(s) :]
    return v


def rtrimstr(v: Any, s: Any) -> Any:
    if v.__class__ is not str or s.__class__ is not str:
        raise JqFail("endswith() requires string inputs")
    if s and v.endswith(s):
        return v[: len(v) - len(s)]
    return v


def _kind(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    return type_name(v)


def contains(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        raise JqFail(f"{describe(a)} and {describe(b)} cannot have their containment checked")
    if ka == "object":
        return all(k in a and contains(a[k], bv) for k, bv in b.items())
    if ka == "array":
        return all(any(_kind(x) == _kind(y) and contains(x, y) for x in a) for y in b)
    if ka == "string":
        return b in a
    return equal(a, b)


def has(v: Any, k: Any) -> bool:
    if v is None:  # null has no keys (libjq 1.8 and gojq answer false, whatever the key)
        return False
    cls, kcls = v.__class__, k.__class__
    if cls is dict and kcls is str:
        return k in v
    if cls is list and (kcls is int or kcls is float):
        return bool(0 <= k < len(v))
    raise JqFail(f"Cannot check whether {type_name(v)} has a {type_name(k)} key")


def indices(v: Any, x: Any) -> Any:
    cls = v.__class__
    if cls is list:
        return _array_indices(v, x if x.__class__ is list else [x])
    if cls is str and x.__class__ is str:
        if x == "":
            return []
        out: list[int] = []
        start = v.find(x)
        while start != -1:
            out.append(start)
            start = v.find(x, start + 1)
        return out
    return index_value(v, x)


def index_of(v: Any, x: Any) -> Any:
    return index_value(indices(v, x), 0)


def rindex_of(v: Any, x: Any) -> Any:
    return index_value(slice_value(indices(v, x), -1, None), 0)


def sort(v: Any) -> list[Any]:
    if v.__class__ is not list:
        raise JqFail(f"{describe(v)} cannot be sorted, as it is not an array")
    return sorted(v, key=sort_key)


def _minmax(v: Any, *, want_max: bool) -> Any:
    if v.__class__ is not list:
        raise JqFail(f"{describe(v)} and {describe(v)} cannot be iterated over")
    if not v:
        return None
    best = v[0]
    for x in v[1:]:
        c = compare(x, best)
        if (c >= 0) if want_max else (c < 0):
            best = x
    return best


def unique(v: Any) -> list[Any]:
    out: list[Any] = []
    for x in sort(v):
        if not out or not equal(out[-1], x):
            out.append(x)
    return out


def reverse(v: Any) -> Any:
    if v is None:
        return []
    cls = v.__class__
    if cls is list:
        return v[::-1]
    if length(v) == 0:
        return []
    raise JqFail(f"Cannot index {type_name(v)} with number")


def flatten(v: Any, depth: Any) -> list[Any]:
    if compare(depth, 0) < 0:
        raise JqFail("flatten depth must not be negative")
    if v.__class__ is not list:
        v = iterate_value(v)
    limit = int(depth) if is_number(depth) and not math.isinf(depth) else 1 << 30
    return _flatten_to(v, limit)


def _flatten_to(v: list[Any], depth: int) -> list[Any]:
    out: list[Any] = []
    for x in v:
        if x.__class__ is list and depth > 0:
            out.extend(_flatten_to(x, depth - 1))
        else:
            out.append(x)
    return out


def _math(fn: Callable[[float], float], name: str) -> Callable[[Any], Any]:
    def run(v: Any) -> Any:
        if not is_number(v):
            raise JqFail(f"{describe(v)} number required")
        try:
            return norm_number(float(fn(v)))
        except ValueError:
            return math.nan

    run.__name__ = name
    return run


def fromjson(v: Any) -> Any:
    if v.__class__ is not str:
        raise JqFail(f"{describe(v)} cannot be parsed as JSON")
    try:
        parsed = orjson.loads(v)
    except orjson.JSONDecodeError as exc:
        raise JqFail(f"{v} (while parsing '{v}'): {exc}") from None
    return _norm_tree(parsed)


def _norm_tree(v: Any) -> Any:
    cls = v.__class__
    if cls is float:
        return norm_number(v)
    if cls is list:
        return [_norm_tree(x) for x in v]
    if cls is dict:
        return {k: _norm_tree(x) for k, x in v.items()}
    return v


def absolute(v: Any) -> Any:
    if not is_number(v):
        raise JqFail(f"{describe(v)} has no absolute value")
    return -v if v < 0 else v


def base64_text(v: Any) -> str:
    """``@base64``: the base64 of the text of ``v``."""
    return base64.b64encode(tostring(v).encode()).decode()


def negate(v: Any) -> bool:
    return not truthy(v)


def ascii_downcase(v: Any) -> str:
    return _ascii_case(v, upper=False)


def ascii_upcase(v: Any) -> str:
    return _ascii_case(v, upper=True)


def add(v: Any) -> Any:
    return add_all(iterate_value(v))


def any_true(v: Any) -> bool:
    return any(truthy(x) for x in iterate_value(v))


def all_true(v: Any) -> bool:
    return all(truthy(x) for x in iterate_value(v))


def minimum(v: Any) -> Any:
    return _minmax(v, want_max=False)


def maximum(v: Any) -> Any:
    return _minmax(v, want_max=True)


def flatten_all(v: Any) -> list[Any]:
    return flatten(v, 1e9)


floor = _math(math.floor, "floor")
ceil = _math(math.ceil, "ceil")
sqrt = _math(math.sqrt, "sqrt")


def inside(v: Any, b: Any) -> bool:
    return contains(b, v)


def is_in(v: Any, o: Any) -> bool:
    return has(o, v)


# --- the type tests of the selectors (``values``, ``strings``, ...) -----------------------------------


def is_value(v: Any) -> bool:
    return v is not None


def is_null(v: Any) -> bool:
    return v is None


def is_boolean(v: Any) -> bool:
    return v.__class__ is bool


def is_string(v: Any) -> bool:
    return v.__class__ is str


def is_array(v: Any) -> bool:
    return v.__class__ is list


def is_object(v: Any) -> bool:
    return v.__class__ is dict


def is_iterable(v: Any) -> bool:
    return v.__class__ is list or v.__class__ is dict


def is_scalar(v: Any) -> bool:
    return v.__class__ is not list and v.__class__ is not dict
