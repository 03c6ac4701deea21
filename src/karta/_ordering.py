"""The order names are shown in: numbers inside a name sort as numbers, so ``worker-2`` comes
before ``worker-10`` and a pod ``big-8b5px`` before ``big-26vkg``. One key for the tree's replica
indexes, pod lists and pending-pod groups, so that every view lists the same names the same way."""

from __future__ import annotations

import re

__all__ = ["natural_key"]

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str | None) -> list[tuple[int, int | str]]:
    """The sort key of ``text`` (``None`` sorts as ``""``)."""
    return [(0, int(p)) if p.isdigit() else (1, p) for p in _DIGITS.split(text or "") if p]
