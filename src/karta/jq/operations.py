"""jq's operations on plain values, used by the fast path and the generated code.

Owns indexing, slicing and iteration (null-safe, negative indices, sorted object order), the
arithmetic operators with jq semantics (object merge, array subtraction, string repetition with a
cap, C-style ``%``, doubles beyond 2**53: huge integers lose precision, overflow is infinite and
prints as +-1.7976931348623157e+308, never a Python ``OverflowError``), and the value functions of
the builtins that the fast path runs as plain functions: ``f(v)`` for ``name/0``, ``f(v, a)`` for
``name/1``, and the type tests of the selectors (``strings``, ``objects``, ...). Which builtin uses
which function is said by the builtin table (:mod:`karta.jq.builtin_table`, ``Fast.impl``), never
here. Errors are raised as :class:`karta.jq._values.JqFail` with jq 1.8's messages where practical.

Budgets (:mod:`karta.jq.budget`). While an untrusted evaluation runs, :func:`karta.jq.budget.current`
is its meter, and every operation that can allocate or work much before returning charges it
*before* doing so (trusted evaluation has no meter: each guard is one attribute read):

* strings built: ``+``, repetition ``*``, ``ascii_downcase``/``ascii_upcase``, ``ltrimstr``/
  ``rtrimstr``, string slices, ``join``, ``add``, ``@base64``, and ``tojson``/``tostring``/
  ``@json``/``@text``, whose input is first walked with a cap (:meth:`~karta.jq.budget.Meter.walk`:
  a tree of shared subtrees renders exponentially larger than it is) and whose text is checked
  again after rendering — length checked against the output cap, then charged as memory;
* arrays and objects built: ``+``, ``-``, ``*`` (object merge: walked first, then charged per
  merged level), array slices, ``keys``, ``to_entries``, ``from_entries``, ``add``, ``flatten``
  (the flattened length is counted with a cap first), ``reverse``, ``sort``, ``unique``,
  ``split``, ``/``, ``indices``, ``fromjson`` (the text length, before parsing) — length checked,
  then charged as memory;
* walks and comparisons: ``==``/``!=`` and ``<``... on arrays or objects, ``sort``, ``unique``,
  ``min``/``max``, and :func:`sort_key` walk their operands first (each distinct subtree once,
  charged by the size of the tree it stands for, so a shared tree cannot make them exponential);
  ``contains``/``inside`` walk their operands and charge a step per pair they compare; array
  ``-`` and array ``indices`` charge the product of the two lengths;
* linear scans: ``any``/``all`` (the length), ``getpath`` (the path length), ``tonumber``,
  ``startswith``/``endswith`` (the string lengths, in 64-byte steps).

The rest are constant-time (``length``, ``type``, ``has``, ``not``, the selectors, scalar
arithmetic and comparisons, indexing) or return parts of their input (``first``, ``index_value``,
``iterate_value``, whose outputs the fast path charges).
"""

from __future__ import annotations

import base64
import itertools
import math
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from karta.jq import budget
from karta.jq._values import (
    JqFail,
    is_number,
    norm_number,
    string_text,
    truthy,
    type_name,
)
from karta.jq._values import compare as _compare
from karta.jq._values import dumps as _dumps
from karta.jq._values import equal as _equal
from karta.jq._values import sort_key as _sort_key

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
    "compare",
    "contains",
    "describe",
    "dumps",
    "endswith",
    "equal",
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
    "json_prefix",
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
    "sort_key",
    "split",
    "sqrt",
    "startswith",
    "to_double",
    "to_entries",
    "tonumber",
    "tostring",
    "type_name",
    "unique",
]

MAX_REPEAT_CHARS = 10_000_000

_METER = budget.local()  # ``.meter``: the current evaluation's meter, None when trusted
_LIST_SLOT = budget.LIST_SLOT


# --- guarded walks: the value semantics of karta.jq._values, charged when metered ----------------------


def _walk2(a: Any, b: Any) -> None:
    m = _METER.meter
    if m is not None:
        m.walk(a)
        m.walk(b)


def equal(a: Any, b: Any) -> bool:
    """jq's ``==`` (booleans apart from numbers; arrays and objects by value)."""
    ca = a.__class__
    if ca is list or ca is dict:
        _walk2(a, b)
    return _equal(a, b)


def compare(a: Any, b: Any) -> int:
    """jq's total order: -1, 0 or 1."""
    ca, cb = a.__class__, b.__class__
    if ca is list or ca is dict or cb is list or cb is dict:
        _walk2(a, b)
    elif ca is float or cb is float:
        return _cmp_numbers(a, b)
    return _compare(a, b)


def _cmp_numbers(a: Any, b: Any) -> int:
    """jq 1.8's jv_cmp on two values one of which is a float: a NaN compares as null does (below
    every number, itself included: ``nan < nan``), then as doubles."""
    if a.__class__ is float and a != a:
        return -1 if is_number(b) else _compare(None, b)
    if b.__class__ is float and b != b:
        return 1 if is_number(a) else _compare(a, None)
    return _compare(a, b)


def sort_key(value: Any) -> tuple[Any, ...]:
    """A key whose Python ordering is jq's total order."""
    cls = value.__class__
    if cls is list or cls is dict:
        m = _METER.meter
        if m is not None:
            m.walk(value)
    return _sort_key(value)


def dumps(value: Any) -> str:
    """``tojson``: compact JSON text with sorted keys (the size checked first when metered)."""
    m = _METER.meter
    if m is None:
        return _dumps(value)
    cls = value.__class__
    if cls is list or cls is dict:
        m.walk(value)
    elif cls is str:
        m.output(len(value) + 2)
    else:
        return _dumps(value)
    text = _dumps(value)
    m.string(len(text))
    return text


def tostring(value: Any) -> str:
    """``tostring``: strings as they are, anything else as ``tojson``."""
    if value.__class__ is str:
        return str(value)
    return dumps(value)


def _chunks(value: Any) -> Iterator[str]:
    cls = value.__class__
    if cls is list:
        yield "["
        for i, x in enumerate(value):
            if i:
                yield ","
            yield from _chunks(x)
        yield "]"
    elif cls is dict:
        yield "{"
        for i, k in enumerate(sorted(value)):
            if i:
                yield ","
            yield string_text(k)
            yield ":"
            yield from _chunks(value[k])
        yield "}"
    else:
        yield _dumps(value)


def json_prefix(value: Any, limit: int) -> str:
    """The first ``limit`` characters of ``tojson`` (all of it when shorter), rendering no more
    of the value than that: error messages show a prefix of values of any size."""
    parts: list[str] = []
    size = 0
    for chunk in _chunks(value):
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return "".join(parts)[:limit]


def describe(value: Any) -> str:
    """``type (json)`` as jq prints values in error messages (truncated to 30 characters)."""
    text = json_prefix(value, 31)
    if len(text) > 30:
        text = text[:27] + "..."
    return f"{type_name(value)} ({text})"


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
    f = to_double(b)
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
        m = _METER.meter
        if m is not None:
            if cls is str:
                m.string(e - s)
            else:
                m.array(e - s)
        return v[s:e]
    raise JqFail(f"Cannot index {type_name(v)} with object")


def getpath_value(v: Any, path: Any) -> Any:
    if path.__class__ is not list:
        raise JqFail("Path must be specified as an array")
    m = _METER.meter
    if m is not None:
        m.charge(len(path))
    for key in path:
        if v is None:
            return None
        if key.__class__ is dict:
            if "start" not in key or "end" not in key:  # gojq: a slice needs both, null or not
                raise JqFail(f'expected "start" and "end" for slicing but got: {dumps(key)}')
            v = slice_value(v, key["start"], key["end"])
        else:
            v = index_value(v, key)
    return v


def _array_indices(v: list[Any], sub: list[Any]) -> Any:
    if not sub:
        return []
    n = len(sub)
    m = _METER.meter
    if m is not None:
        m.charge(len(v) * n)
        m.array(len(v))
    return [i for i in range(len(v) - n + 1) if all(equal(v[i + j], sub[j]) for j in range(n))]


# --- arithmetic ------------------------------------------------------------------------------------


_MAX_EXACT = 2**53
MAX_EXACT = _MAX_EXACT  # integers beyond stay exact in Python but not in jq (doubles)
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def to_double(x: int | float) -> float:
    """The double jq computes with: huge integers round, beyond the double range they are
    infinite (never an ``OverflowError``)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _operand(x: Any) -> Any:
    """A number as jq's arithmetic sees it: integers beyond 2**53 become doubles first."""
    if x.__class__ is int and not -_MAX_EXACT <= x <= _MAX_EXACT:
        return to_double(x)
    return x


def num_result(x: int | float) -> int | float:
    if x.__class__ is int:
        if -_MAX_EXACT <= x <= _MAX_EXACT:
            return x
        return norm_number(to_double(x))
    return norm_number(float(x))


def _arith(op: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    return num_result(op(_operand(a), _operand(b)))


def op_add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        return _arith(operator.add, a, b)
    if ca is cb:
        if ca is str or ca is list:
            m = _METER.meter
            if m is not None:
                if ca is str:
                    m.string(len(a) + len(b))
                else:
                    m.array(len(a) + len(b))
            return a + b
        if ca is dict:
            m = _METER.meter
            if m is not None:
                m.object(len(a) + len(b))
            out = dict(a)
            out.update(b)
            return out
    raise JqFail(f"{describe(a)} and {describe(b)} cannot be added")


def op_sub(a: Any, b: Any) -> Any:
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        return _arith(operator.sub, a, b)
    if ca is list and cb is list:
        m = _METER.meter
        if m is not None:
            m.charge(len(a) * len(b))
            m.array(len(a))
        return [x for x in a if not any(equal(x, y) for y in b)]
    raise JqFail(f"{describe(a)} and {describe(b)} cannot be subtracted")


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    m = _METER.meter
    if m is not None:
        m.object(len(a) + len(b))
    out = dict(a)
    for k, bv in b.items():
        av = out.get(k)
        if av.__class__ is dict and bv.__class__ is dict:
            out[k] = _deep_merge(av, bv)
        else:
            out[k] = bv
    return out


def _repeat(s: str, n: Any) -> Any:
    f = to_double(n)
    if math.isnan(f) or f < 0:
        return None
    m = _METER.meter
    if m is not None:  # the size asked for, before the fast path's own cap
        m.output(int(min(len(s) * f, 1e18)))
    count = int(f) if f < 1e9 else MAX_REPEAT_CHARS + 1
    if m is not None:
        m.string(len(s) * count)
    if len(s) * count > MAX_REPEAT_CHARS:
        raise JqFail("Repeat string result too long")
    return s * count


def op_mul(a: Any, b: Any) -> Any:
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        return _arith(operator.mul, a, b)
    if ca is str and (cb is int or cb is float):
        return _repeat(a, b)
    if cb is str and (ca is int or ca is float):
        return _repeat(b, a)
    if ca is dict and cb is dict:
        _walk2(a, b)  # the merge copies every level the two share
        return _deep_merge(a, b)
    raise JqFail(f"{describe(a)} and {describe(b)} cannot be multiplied")


def op_div(a: Any, b: Any) -> Any:
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        if b == 0:
            raise JqFail(f"{describe(a)} and {describe(b)} cannot be divided because the divisor is zero")
        x, y = _operand(a), _operand(b)
        if x.__class__ is int and y.__class__ is int:
            return norm_number(x / y)  # both exact doubles: Python rounds the quotient once, as C does
        return norm_number(to_double(x) / to_double(y))
    if ca is str and cb is str:
        return split(a, b)
    raise JqFail(f"{describe(a)} and {describe(b)} cannot be divided")


def _dtoi(x: int | float) -> int:
    """jq's ``dtoi``: a double to a 64-bit integer, truncated, saturating at the range ends."""
    f = to_double(x)
    if f < -9.223372036854775808e18:
        return _INT64_MIN
    if f >= 9.223372036854775808e18:
        return _INT64_MAX
    return int(f)


def op_mod(a: Any, b: Any) -> Any:
    ca, cb = a.__class__, b.__class__
    if (ca is int or ca is float) and (cb is int or cb is float):
        if (ca is float and math.isnan(a)) or (cb is float and math.isnan(b)):
            return math.nan
        # jq 1.8: both sides through dtoi; a divisor of -1 gives 0 (INT64_MIN % -1 overflows in C).
        x = a if ca is int and -_MAX_EXACT <= a <= _MAX_EXACT else _dtoi(a)
        y = b if cb is int and -_MAX_EXACT <= b <= _MAX_EXACT else _dtoi(b)
        if y == 0:
            raise JqFail(
                f"{describe(a)} and {describe(b)} cannot be divided (remainder) because the divisor is zero"
            )
        if y == -1:
            return 0
        r = abs(x) % abs(y)
        return num_result(-r if x < 0 else r)
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
    if cls is int:
        return num_result(abs(v))
    if cls is float:
        return abs(v)
    return len(v)


def keys(v: Any) -> list[Any]:
    cls = v.__class__
    if cls is dict:
        _charge_array(len(v))
        return sorted(v)
    if cls is list:
        _charge_array(len(v))
        return list(range(len(v)))
    raise JqFail(f"{describe(v)} has no keys")


def _charge_array(n: int) -> None:
    m = _METER.meter
    if m is not None:
        m.array(n)


def _charge_entries(n: int) -> None:
    """An array of ``n`` new ``{key, value}`` objects."""
    m = _METER.meter
    if m is not None:
        m.array(n)
        m.alloc(n * (56 + 2 * budget.DICT_SLOT))


def to_entries(v: Any) -> list[Any]:
    cls = v.__class__
    if cls is dict:
        _charge_entries(len(v))
        return [{"key": k, "value": v[k]} for k in sorted(v)]
    if cls is list:
        _charge_entries(len(v))
        return [{"key": i, "value": x} for i, x in enumerate(v)]
    raise JqFail(f"{describe(v)} has no keys")


def from_entries(v: Any) -> dict[str, Any]:
    entries = iterate_value(v)
    m = _METER.meter
    if m is not None:
        m.object(len(entries))
    out: dict[str, Any] = {}
    for e in entries:
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
    """``add``: ``null + items[0] + items[1] + ...`` in one pass (a run of strings, arrays or
    objects is joined once, not copied at every step)."""
    acc: Any = None
    i, n = 0, len(items)
    while i < n:
        x = items[i]
        i += 1
        if x is None:
            continue
        if acc is None:
            acc = x
            continue
        cls = acc.__class__
        if x.__class__ is cls and (cls is str or cls is list or cls is dict):
            run = [acc, x]
            while i < n and (items[i] is None or items[i].__class__ is cls):
                if items[i] is not None:
                    run.append(items[i])
                i += 1
            acc = _concat(cls, run)
        else:
            acc = op_add(acc, x)
    return acc


def _concat(cls: type, run: list[Any]) -> Any:
    m = _METER.meter
    if m is not None:
        total = sum(map(len, run))
        if cls is str:
            m.string(total)
        elif cls is list:
            m.array(total)
        else:
            m.object(total)
    if cls is str:
        return "".join(run)
    if cls is list:
        return list(itertools.chain.from_iterable(run))
    out: dict[str, Any] = {}
    for d in run:
        out.update(d)
    return out


def _ascii_case(v: Any, *, upper: bool) -> str:
    if v.__class__ is not str:
        raise JqFail("explode input must be a string")
    m = _METER.meter
    if m is not None:
        m.string(len(v))
    if upper:
        return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in v)
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in v)


_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _scan(length: int) -> None:
    """Charge a linear scan over ``length`` characters (in 64-character steps)."""
    m = _METER.meter
    if m is not None:
        m.charge(length >> 6)


def tonumber(v: Any) -> Any:
    cls = v.__class__
    if cls is int or cls is float:
        return v
    if cls is str:
        _scan(len(v))
        if _NUMBER_RE.fullmatch(v):
            f = float(v)
            if math.isinf(f):
                return 1.7976931348623157e308 if f > 0 else -1.7976931348623157e308
            if "." not in v and "e" not in v and "E" not in v and abs(f) < 2**53:
                return int(f)  # exact: below 2**53 the double is the integer (and leading zeros cost nothing)
            return norm_number(f)
        raise JqFail(f"{describe(v)} cannot be parsed as a number")
    raise JqFail(f"{describe(v)} cannot be parsed as a number")


def split(s: Any, sep: Any) -> list[str]:
    if s.__class__ is not str or sep.__class__ is not str:
        raise JqFail("split input and separator must be strings")
    if s == "":
        return []
    m = _METER.meter
    if m is not None:
        m.alloc(len(s))
        m.array(len(s) + 1 if sep == "" else len(s) // len(sep) + 1)
    if sep == "":
        return list(s)
    return s.split(sep)


def join(v: Any, sep: Any) -> Any:
    """``join(sep)``: the items' texts (null as "", numbers and booleans as JSON) between ``sep``;
    errors as jq's ``reduce`` definition raises them (a non-string separator, array or object)."""
    items = iterate_value(v)
    parts: list[str] = []
    for i, x in enumerate(items):
        if i and sep is not None:
            if sep.__class__ is not str:
                op_add("".join(parts), sep)  # raises jq's error
            parts.append(sep)
        if x is None:
            continue
        if x.__class__ is str:
            parts.append(x)
        elif x.__class__ is bool or is_number(x):
            parts.append(_dumps(x))
        else:
            op_add("".join(parts), x)  # raises jq's error
    m = _METER.meter
    if m is not None:
        m.string(sum(map(len, parts)))
    return "".join(parts)


def startswith(v: Any, s: Any) -> bool:
    if v.__class__ is not str or s.__class__ is not str:
        raise JqFail("startswith() requires string inputs")
    _scan(len(s))
    return bool(v.startswith(s))


def endswith(v: Any, s: Any) -> bool:
    if v.__class__ is not str or s.__class__ is not str:
        raise JqFail("endswith() requires string inputs")
    _scan(len(s))
    return bool(v.endswith(s))


def ltrimstr(v: Any, s: Any) -> Any:
    if startswith(v, s):
        m = _METER.meter
        if m is not None:
            m.string(len(v) - len(s))
        return v[len(s) :]
    return v


def rtrimstr(v: Any, s: Any) -> Any:
    if v.__class__ is not str or s.__class__ is not str:
        raise JqFail("endswith() requires string inputs")
    if s and v.endswith(s):
        m = _METER.meter
        if m is not None:
            m.string(len(v) - len(s))
        return v[: len(v) - len(s)]
    return v


def _kind(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    return type_name(v)


def contains(a: Any, b: Any) -> bool:
    ca, cb = a.__class__, b.__class__
    if ca is list or ca is dict or cb is list or cb is dict:
        _walk2(a, b)
    return _contains(a, b)


def _contains(a: Any, b: Any) -> bool:
    m = _METER.meter
    if m is not None:  # one step per pair compared (arrays compare every pair)
        m.fuel -= 1
        if m.fuel < 0:
            m.refill()
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        raise JqFail(f"{describe(a)} and {describe(b)} cannot have their containment checked")
    if ka == "object":
        return all(k in a and _contains(a[k], bv) for k, bv in b.items())
    if ka == "array":
        return all(any(_kind(x) == _kind(y) and _contains(x, y) for x in a) for y in b)
    if ka == "string":
        _scan(len(a))
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
        _scan(len(v))
        out: list[int] = []
        start = v.find(x)
        while start != -1:
            out.append(start)
            start = v.find(x, start + 1)
        _charge_array(len(out))
        return out
    return index_value(v, x)


def index_of(v: Any, x: Any) -> Any:
    return index_value(indices(v, x), 0)


def rindex_of(v: Any, x: Any) -> Any:
    return index_value(slice_value(indices(v, x), -1, None), 0)


def sort(v: Any) -> list[Any]:
    if v.__class__ is not list:
        raise JqFail(f"{describe(v)} cannot be sorted, as it is not an array")
    m = _METER.meter
    if m is not None:
        m.walk(v)
        m.array(len(v))
    return sorted(v, key=_sort_key)


def _minmax(v: Any, *, want_max: bool) -> Any:
    if v.__class__ is not list:
        raise JqFail(f"{describe(v)} and {describe(v)} cannot be iterated over")
    if not v:
        return None
    if all(x.__class__ is int for x in v):
        # Integers only (the scale expressions' ``[a, b] | min``): equal ones are the same value,
        # so Python's own is the loop below's result.
        return max(v) if want_max else min(v)
    keyed: list[tuple[Any, ...] | None] | None = None
    if any(x.__class__ is list or x.__class__ is dict for x in v):
        # Key the arrays and objects once: compare would key the best so far again every time.
        m = _METER.meter
        if m is not None:
            m.walk(v)
        keyed = [_sort_key(x) if x.__class__ is list or x.__class__ is dict else None for x in v]
    best = 0
    for i in range(1, len(v)):
        if keyed is None or (keyed[i] is None and keyed[best] is None):
            c = _cmp_numbers(v[i], v[best])
        else:
            ki, kb = keyed[i], keyed[best]
            if ki is None:
                ki = _sort_key(v[i])
            if kb is None:
                kb = _sort_key(v[best])
            c = -1 if ki < kb else (1 if ki > kb else 0)
        if (c >= 0) if want_max else (c < 0):
            best = i
    return v[best]


def unique(v: Any) -> list[Any]:
    out: list[Any] = []
    for x in sort(v):
        if not out or not _equal(out[-1], x):
            out.append(x)
    return out


def reverse(v: Any) -> Any:
    if v is None:
        return []
    cls = v.__class__
    if cls is list:
        _charge_array(len(v))
        return v[::-1]
    if length(v) == 0:
        return []
    raise JqFail(f"Cannot index {type_name(v)} with number")


def flatten(v: Any, depth: Any) -> list[Any]:
    if compare(depth, 0) < 0:
        raise JqFail("flatten depth must not be negative")
    if v.__class__ is not list:
        v = iterate_value(v)
    if not is_number(depth):
        # jq's definition recurses with ``$depth - 1`` into the first array element, which fails
        # for a depth that is not a number; without array elements the items come back as they
        # are (gojq refuses any such depth: README, "jq engines", not unified).
        if any(x.__class__ is list for x in v):
            raise JqFail(f"{type_name(depth)} ({dumps(depth)}) and number (1) cannot be subtracted")
        return list(v)
    limit = int(depth) if not math.isinf(to_double(depth)) else 1 << 30
    m = _METER.meter
    if m is not None:
        m.array(_flat_length(v, limit, m.budget.output_bytes + 1))
    return _flatten_to(v, limit)


def _flat_length(v: list[Any], depth: int, cap: int) -> int:
    """The length of ``v`` flattened to ``depth``, counted over the distinct arrays (a shared
    array at the same depth is counted once, then multiplied) and no further than ``cap``."""
    m = _METER.meter
    memo: dict[tuple[int, int], int] = {}
    stack: list[tuple[list[Any], int]] = [(v, depth)]
    visited = 0
    while stack:
        items, d = stack[-1]
        key = (id(items), d)
        if key in memo:
            stack.pop()
            continue
        if d > 0:
            pending = [(x, d - 1) for x in items if x.__class__ is list and (id(x), d - 1) not in memo]
            if pending:
                stack.extend(pending)
                continue
        stack.pop()
        total = 0
        for x in items:
            total += memo[(id(x), d - 1)] if x.__class__ is list and d > 0 else 1
        memo[key] = min(total, cap)
        visited += len(items)
        if m is not None and visited >= budget.TANK:
            m.charge(visited)
            visited = 0
        if total >= cap:
            return cap
    if m is not None:
        m.charge(visited)
    return memo[(id(v), depth)]


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
        x = to_double(v)
        try:
            return norm_number(float(fn(x)))
        except OverflowError:  # floor/ceil of an infinity: itself
            return x
        except ValueError:
            return math.nan

    run.__name__ = name
    return run


def fromjson(v: Any) -> Any:
    if v.__class__ is not str:
        raise JqFail(f"{describe(v)} cannot be parsed as JSON")
    m = _METER.meter
    if m is not None:  # the parsed tree is not larger than its text (counted as arrays)
        m.array(len(v))
    import orjson  # here, not at the top: kli start-up is budgeted (karta.jq._values)

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
    r = -v if v < 0 else v
    return num_result(r) if r.__class__ is int else r


def base64_text(v: Any) -> str:
    """``@base64``: the base64 of the text of ``v``."""
    text = tostring(v)
    m = _METER.meter
    if m is not None:
        m.string((len(text) + 2) // 3 * 4)
    return base64.b64encode(text.encode()).decode()


def negate(v: Any) -> bool:
    return not truthy(v)


def ascii_downcase(v: Any) -> str:
    return _ascii_case(v, upper=False)


def ascii_upcase(v: Any) -> str:
    return _ascii_case(v, upper=True)


def add(v: Any) -> Any:
    return add_all(iterate_value(v))


def _charge_scan(v: Any) -> Any:
    items = iterate_value(v)
    m = _METER.meter
    if m is not None:
        m.charge(len(items))
    return items


def any_true(v: Any) -> bool:
    return any(truthy(x) for x in _charge_scan(v))


def all_true(v: Any) -> bool:
    return all(truthy(x) for x in _charge_scan(v))


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
