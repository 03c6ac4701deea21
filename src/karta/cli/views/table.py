"""The one table renderer of ``kli``'s text output: columns padded to their widest cell and joined
by a separator, trailing blanks dropped (:func:`render`, :func:`join`), and lists cut to a width
with a tail counting what was left out (:func:`fit_list`). Every table of every command is made
with these, so they all align and cut alike. Every cell is measured and written with its control
characters escaped (:func:`karta.cli.text.printable`), so no cell can move the cursor, set the
title or write the clipboard, and columns still align.

Cutting is for a reader at a terminal only (:func:`fit_width`): as kubectl, ``kli`` never cuts
what goes to a pipe or a file, and ``-o wide`` never cuts at all.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from karta.cli.text import printable

__all__ = ["SEP", "TABLE_WIDTH", "fit_list", "fit_width", "join", "render", "widths"]

SEP = "   "
TABLE_WIDTH = 100  # a terminal's width when it cannot be told


def fit_width() -> int | None:
    """The width tables are cut to: the terminal's columns (``$COLUMNS`` first, else
    :data:`TABLE_WIDTH` when unknown) when standard output is a terminal; None (no cutting) when
    it is a pipe or a file."""
    isatty = getattr(sys.stdout, "isatty", None)
    if not (isatty and isatty()):
        return None
    return _columns() or TABLE_WIDTH


def _columns() -> int:
    """The terminal's columns as :func:`shutil.get_terminal_size` tells them (``$COLUMNS``, else
    standard output's terminal), without importing :mod:`shutil` (and its compression modules)
    on every command's start-up; 0 when unknown."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns


def widths(rows: Sequence[Sequence[str]]) -> list[int]:
    """The width of each column: its widest cell (rows may be shorter than the widest row)."""
    out: list[int] = []
    for row in rows:
        for i, cell in enumerate(row):
            if i == len(out):
                out.append(0)
            out[i] = max(out[i], len(printable(cell)))
    return out


def join(
    cells: Sequence[str],
    column_widths: Sequence[int],
    *,
    sep: str = SEP,
    paint: Callable[[int, str, str], str] | None = None,
) -> str:
    """One line: each cell padded to its column's width (the last one is not), passed through
    ``paint(column, cell, padded)`` when given (colour), joined by ``sep``; trailing blanks dropped."""
    out = []
    last = len(cells) - 1
    for i, raw in enumerate(cells):
        cell = printable(raw)
        padded = cell if i == last else cell.ljust(column_widths[i])
        out.append(paint(i, cell, padded) if paint is not None else padded)
    return sep.join(out).rstrip()


def render(rows: Sequence[Sequence[str]], *, sep: str = SEP, indent: str = "") -> list[str]:
    """The lines of a table whose first row is usually the header."""
    column_widths = widths(rows)
    return [indent + join(row, column_widths, sep=sep) for row in rows]


def fit_list(
    items: Sequence[str],
    width: int,
    *,
    sep: str = ", ",
    prefix: str = "",
    hidden: int = 0,
    tails: Sequence[str] = ("+{n}",),
    least: int = 0,
) -> str | None:
    """``prefix``, then as many of ``items`` as fit in ``width`` followed by a tail counting the
    rest (``hidden`` more were already left out): for ``keep`` from all but one item down to
    ``least``, each of ``tails`` (``{n}`` is the count) in turn; None when none fits."""
    items = [printable(item) for item in items]
    prefix = printable(prefix)
    for keep in range(len(items) - 1, least - 1, -1):
        count = len(items) - keep + hidden
        for tail in tails:
            text = prefix + sep.join([*items[:keep], tail.format(n=count)])
            if len(text) <= width:
                return text
    return None
