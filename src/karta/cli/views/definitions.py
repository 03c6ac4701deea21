"""The ``kli definitions`` table (section 17.7): ``NAME KIND ORIGIN COMPONENTS``; on a terminal
fitted to its width (KIND shortened to the Kind, COMPONENTS cut with ``+N more``), never cut on a
pipe or in a file (:func:`karta.cli.views.table.fit_width`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta.cli.text import printable
from karta.cli.views.table import SEP, fit_list, render, widths

if TYPE_CHECKING:
    from karta.definitions import StoredDefinition
    from karta.model import Karta

__all__ = ["table"]


def _kind_cell(d: StoredDefinition) -> str:
    root = d.karta.root.kind
    if root is None or not root.kind:
        return "<none>"
    return root.gvk.token


def _components_cell(karta: Karta, limit: int) -> str:
    children = [c.name for c in karta.children]
    shown = children if limit == 0 else children[:limit]
    cell = ", ".join([karta.root.name, *shown])
    if len(children) > len(shown):
        cell += f", +{len(children) - len(shown)} more"
    return cell


def table(
    items: list[StoredDefinition],
    component_limit: int,
    *,
    fit: bool = True,
    width: int | None = None,
    headers: bool = True,
) -> str:
    """``NAME KIND ORIGIN COMPONENTS`` (without the header line unless ``headers``), fitted to
    ``width`` columns when one is given and the table is wider: when COMPONENTS would have less
    than :data:`_MIN_COMPONENTS` columns, KIND shows the Kind alone (the catalog's NAMEs spell
    group and version; ``kli definitions NAME`` shows it all); then, with ``fit`` (the default
    ``--component-limit``), COMPONENTS keeps whole names and ends in ``+N more`` or ``+N``."""
    header = ["NAME", "KIND", "ORIGIN", "COMPONENTS"]
    rows = [
        [
            printable(cell)
            for cell in (d.name, _kind_cell(d), d.origin, _components_cell(d.karta, component_limit))
        ]
        for d in items
    ]
    if width is not None and _width([header, *rows]) > width:
        if _room(header, rows, width) < _MIN_COMPONENTS:
            for row, d in zip(rows, items, strict=True):
                if d.gvk is not None:
                    row[1] = printable(d.gvk.kind)
        room = max(_room(header, rows, width), len("COMPONENTS"))
        for row in rows:
            row[3] = _fit_components(row[3], room) if fit else row[3]
    return "".join(line + "\n" for line in render([header, *rows] if headers else rows))


_MIN_COMPONENTS = 24


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
