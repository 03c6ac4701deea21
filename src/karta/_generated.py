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
