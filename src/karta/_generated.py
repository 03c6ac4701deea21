"""Generated files kept in the tree: write one, or check that it is current (``--check``).

Owns :func:`write_or_check`, the step shared by ``python -m karta.crd`` and ``python -m
karta.catalog``: a stale file is one message naming the file and the command that rewrites it.
"""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(target: Path, text: str, *, check: bool, command: str) -> int:
    """With ``check``: 0 when ``target`` holds exactly ``text``, else 1 (and the message on
    stderr). Without: write ``text`` to ``target``, 0."""
    if check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{target} is stale: run `{command}`", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    return 0


def write_or_check_block(target: Path, begin: str, end: str, text: str, *, check: bool, command: str) -> int:
    """The same for the lines strictly between the marker lines ``begin`` and ``end`` of ``target``
    (the rest of the file is left as it is); 1 with a message when the file or a marker is missing."""
    current = target.read_text(encoding="utf-8") if target.exists() else ""
    lines = current.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == begin]
    ends = [i for i, line in enumerate(lines) if line.strip() == end]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        print(f"{target}: needs one line {begin} and, after it, one line {end}", file=sys.stderr)
        return 1
    block = "".join(lines[starts[0] + 1 : ends[0]])
    if block == text:
        return 0
    if check:
        print(f"{target}: the block between {begin} and {end} is stale: run `{command}`", file=sys.stderr)
        return 1
    target.write_text("".join(lines[: starts[0] + 1]) + text + "".join(lines[ends[0] :]), encoding="utf-8")
    return 0
