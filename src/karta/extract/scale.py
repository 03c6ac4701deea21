"""Scale values (docs/spec/format.md#scale): integral int32 numbers or base-10 numeric strings.

The library reports scale as found: nothing is defaulted, clamped or reordered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from karta.errors import ConversionError
from karta.extract.types import Scale
from karta.jq import json_type

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
_DECIMAL = re.compile(r"[+-]?[0-9]+")


def to_replicas(value: Any, index: int, *, field: str = "replicas") -> int | None:
    """One scale value; ``None`` for null. ``field`` names the scale field in messages."""
    if type(value) is int and INT32_MIN <= value <= INT32_MAX:
        return value
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConversionError(f"{field}: replicas value {_text(value)} at index {index} is not a number")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not value.is_integer():
            raise ConversionError(f"{field}: replicas value {value!r} at index {index} is not an integer")
        number = int(value)
    elif isinstance(value, str):
        if _DECIMAL.fullmatch(value) is None:
            raise ConversionError(f'{field}: replicas value "{value}" at index {index} is not a number')
        number = int(value)
    else:
        raise ConversionError(
            f"{field}: replicas value of type {json_type(value)} at index {index} is not a number"
        )
    if not INT32_MIN <= number <= INT32_MAX:
        raise ConversionError(
            f"{field}: replicas value {_text(value)} at index {index} is out of the 32-bit integer range"
        )
    return number


def build_scales(
    *,
    replicas: Sequence[Any] | None,
    min_replicas: Sequence[Any] | None,
    max_replicas: Sequence[Any] | None,
) -> list[Scale]:
    """Combine independently evaluated results position by position; the count is the largest."""
    reps = _column(replicas, "replicas")
    mins = _column(min_replicas, "minReplicas")
    maxs = _column(max_replicas, "maxReplicas")
    count = max(len(reps), len(mins), len(maxs))
    if len(mins) < count:
        mins += [None] * (count - len(mins))
    if len(maxs) < count:
        maxs += [None] * (count - len(maxs))
    if len(reps) < count:
        reps += [None] * (count - len(reps))
    return [scale_of(r, lo, hi) for r, lo, hi in zip(reps, mins, maxs, strict=True)]


def _column(values: Sequence[Any] | None, name: str) -> list[int | None]:
    if values is None:
        return []
    for value in values:
        if value.__class__ is not int or not INT32_MIN <= value <= INT32_MAX:
            return [to_replicas(v, i, field=name) for i, v in enumerate(values)]
    return list(values)


_SCALES_SIZE = 4096
_scales: dict[tuple[int | None, int | None, int | None], Scale] = {}


def scale_of(replicas: int | None, min_replicas: int | None, max_replicas: int | None) -> Scale:
    """The Scale with these values; a Scale is an immutable value, so equal ones are shared
    (a bounded intern table: building a frozen dataclass costs more than the lookup)."""
    key = (replicas, min_replicas, max_replicas)
    found = _scales.get(key)
    if found is None:
        found = Scale(replicas=replicas, min_replicas=min_replicas, max_replicas=max_replicas)
        if len(_scales) >= _SCALES_SIZE:
            _scales.clear()
        _scales[key] = found
    return found


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)
