"""The ``kli definitions`` table (section 17.7): ``NAME KIND ORIGIN STATUS COMPONENTS``; on a
terminal fitted to its width (KIND shortened to the Kind, COMPONENTS cut with ``+N more`` or left
out, then KIND left out), never cut on a pipe or in a file (:func:`karta.cli.views.table.fit_width`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta.cli.text import printable
from karta.cli.views.table import SEP, fit_list, render, widths

if TYPE_CHECKING:
    from karta.definitions import Listing, StoredDefinition

__all__ = ["table"]


def _kind_cell(d: StoredDefinition) -> str:
    return d.kind_token or "<none>"


def _components_cell(d: StoredDefinition, limit: int) -> str:
    root, *children = d.component_names
    shown = children if limit == 0 else children[:limit]
    cell = ", ".join([root, *shown])
    if len(children) > len(shown):
        cell += f", +{len(children) - len(shown)} more"
    return cell


def table(
    items: list[Listing],
    component_limit: int,
    *,
    fit: bool = True,
    width: int | None = None,
    headers: bool = True,
) -> str:
    """``NAME KIND ORIGIN STATUS COMPONENTS`` (without the header line unless ``headers``), fitted
    to ``width`` columns when one is given and the table is wider: when COMPONENTS would have less
    than :data:`_MIN_COMPONENTS` columns, KIND shows the Kind alone (the catalog's NAMEs spell
    group and version; ``kli definitions NAME`` shows it all); then, with ``fit`` (the default
    ``--component-limit``), COMPONENTS keeps whole names and ends in ``+N more`` or ``+N``, or is
    left out when not even :data:`_LEAST_COMPONENTS` columns are left for it (the whole catalog's
    long names; a filter or NAME shows them), and KIND too when even that does not fit (the
    catalog's NAME spells the kind, lower-cased)."""
    header = ["NAME", "KIND", "ORIGIN", "STATUS", "COMPONENTS"]
    rows = [
        [
            printable(cell)
            for cell in (
                e.definition.name,
                _kind_cell(e.definition),
                e.definition.origin,
                e.text,
                _components_cell(e.definition, component_limit),
            )
        ]
        for e in items
    ]
    last = len(header) - 1
    if width is not None and _width([header, *rows]) > width:
        if _room(header, rows, width) < _MIN_COMPONENTS:
            for row, e in zip(rows, items, strict=True):
                if e.definition.gvk is not None:
                    row[1] = printable(e.definition.gvk.kind)
        room = _room(header, rows, width)
        if fit and room < _LEAST_COMPONENTS:
            header, rows = header[:last], [row[:last] for row in rows]
            if _width([header, *rows]) > width:  # the NAME spells the kind too (lower-cased)
                header, rows = [header[0], *header[2:]], [[row[0], *row[2:]] for row in rows]
        else:
            room = max(room, len("COMPONENTS"))
            for row in rows:
                row[last] = _fit_components(row[last], room) if fit else row[last]
    return "".join(line + "\n" for line in render([header, *rows] if headers else rows))


_MIN_COMPONENTS = 24
_LEAST_COMPONENTS = len("pytorchjob, +2")


def _room(header: list[str], rows: list[list[str]], width: int) -> int:
    """The columns left for COMPONENTS (the last column) within ``width``."""
    return width - _width([header[:-1], *(r[:-1] for r in rows)]) - len(SEP)


def _width(rows: list[list[str]]) -> int:
    column_widths = widths(rows)
    return sum(column_widths) + len(SEP) * (len(column_widths) - 1)


def _fit_components(cell: str, width: int) -> str:
    """``a, b, c, +N more`` cut to ``width``: whole names, then ``+N more`` (or ``+N`` when that
    keeps one more name) for the rest."""
    if len(cell) <= width:
        return cell
    names = cell.split(", ")
    hidden = 0
    if names[-1].startswith("+") and names[-1].endswith(" more"):
        hidden = int(names.pop()[1:-5])
    cut = fit_list(names, width, hidden=hidden, tails=("+{n} more", "+{n}"))
    return cut if cut is not None else f"+{len(names) + hidden}"
