"""The ``kli get`` table (docs/spec/format.md#kli-get): ``[CLUSTER] [NAMESPACE] NAME [TYPE] PHASE GPU
COMPONENTS [QUEUE] AGE [GANG ORIGIN]`` over :class:`karta.report.WorkloadSummary` rows. CLUSTER (the row's
``cluster``: its kubeconfig context) comes first when several clusters are listed; as kubectl,
NAMESPACE comes next and only with ``-A``, ``-o wide`` adds GANG (the gang state) and ORIGIN, and
nothing is cut unless a
width is given (a terminal's, for ``-o table``: COMPONENTS is then cut with ``+N``); phases are
coloured on a terminal; QUEUE (``<queue>:<state>``, :func:`karta.report.queue_cell`) only when
some row has a Kueue queue state; every cell with its control characters escaped."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from karta.cli.text import printable
from karta.cli.views.age import human_age
from karta.cli.views.table import SEP, fit_list, join, widths
from karta.report.queue import queue_cell

__all__ = ["Table", "components_cell", "gang_cell"]

_COLOURS = {
    "Running": "green",
    "Completed": "blue",
    "Failed": "red",
    "Degraded": "yellow",
    "Initializing": "cyan",
    "Resuming": "cyan",
    "Suspending": "magenta",
    "Suspended": "magenta",
}


def components_cell(summary: Mapping[str, Any]) -> str:
    parts = [f"{c['name']}:{c['replicas']}" for c in summary.get("components") or ()]
    return ",".join(parts) if parts else "<none>"


def gang_cell(summary: Mapping[str, Any]) -> str:
    """The GANG cell (``-o wide``): the gang state's text, ``unknown (why)`` when it could not be
    computed, ``<none>`` without gang instructions."""
    gang = summary.get("gang")
    if not isinstance(gang, Mapping):
        return "<none>"
    return f"unknown ({gang['error']})" if gang.get("error") else str(gang.get("text") or "")


def _shorten(cell: str, width: int) -> str:
    """A comma list cut to ``width``: whole entries, then ``+N`` for the rest (or ``...``)."""
    if len(cell) <= width:
        return cell
    cut = fit_list(cell.split(","), width, sep=",", least=1)
    return cut if cut is not None else cell[: max(1, width - 3)] + "..."


class Table:
    """The table: :meth:`render` sets the column widths; :meth:`line` formats one more row with
    them (``--watch``). CLUSTER appears with ``show_cluster`` (several contexts), NAMESPACE with
    ``show_namespace`` (``-A``), TYPE with ``show_type`` (``--all-types``), QUEUE with
    ``show_queue``, GANG and ORIGIN with ``wide``; ``headers=False`` leaves the header line out
    (``--no-headers``); ``width`` (None: no limit) is what COMPONENTS is cut to fit."""

    def __init__(
        self,
        *,
        show_type: bool,
        wide: bool,
        show_namespace: bool = False,
        show_cluster: bool = False,
        show_queue: bool = False,
        headers: bool = True,
        type_label: Callable[[Mapping[str, Any]], str] | None = None,
        now: Callable[[], _dt.datetime] | None = None,
        colour: bool = False,
        width: int | None = None,
    ) -> None:
        self.show_type = show_type
        self.show_namespace = show_namespace
        self.show_cluster = show_cluster
        self.show_queue = show_queue
        self.headers = headers
        self.wide = wide
        self.type_label = type_label or (lambda v: str(v.get("kind") or ""))
        self.now = now or (lambda: _dt.datetime.now(_dt.UTC))
        self.colour = colour
        self.width = None if wide else width
        self.header = [
            *(["CLUSTER"] if show_cluster else []),
            *(["NAMESPACE"] if show_namespace else []),
            "NAME",
            *(["TYPE"] if show_type else []),
            "PHASE",
            "GPU",
            "COMPONENTS",
            *(["QUEUE"] if show_queue else []),
            "AGE",
        ]
        if wide:
            self.header += ["GANG", "ORIGIN"]
        self.widths = [len(h) if headers else 0 for h in self.header]
        self._components = self.header.index("COMPONENTS")
        self._phase = self.header.index("PHASE")

    def cells(self, summary: Mapping[str, Any], *, now: _dt.datetime | None = None) -> list[str]:
        cells = [str(summary.get("cluster") or "")] if self.show_cluster else []
        if self.show_namespace:
            cells.append(str(summary.get("namespace") or "<none>"))
        cells.append(str(summary.get("name") or ""))
        if self.show_type:
            cells.append(self.type_label(summary))
        cells += [
            ",".join(summary.get("phases") or ["Undefined"]),
            str(summary.get("gpus", 0)),
            components_cell(summary),
            *([queue_cell(summary.get("queue"))] if self.show_queue else []),
            human_age(summary.get("createdAt"), now=now or self.now()),
        ]
        if self.wide:
            cells += [gang_cell(summary), str(summary.get("origin") or "")]
        return [printable(cell) for cell in cells]  # escaped before they are measured and cut

    def render(self, summaries: Sequence[Mapping[str, Any]]) -> str:
        now = self.now()
        rows = [self.cells(v, now=now) for v in summaries]
        self.widths = widths([self.header, *rows] if self.headers else rows) or [0] * len(self.header)
        if self.width is not None:
            budget = (
                self.width
                - (sum(self.widths) - self.widths[self._components])
                - len(SEP) * (len(self.header) - 1)
            )
            limit = max(len("COMPONENTS"), budget)
            if self.widths[self._components] > limit:
                self.widths[self._components] = limit
        lines = [self._join(self.header, header=True)] if self.headers else []
        lines += [self._join(r) for r in rows]
        return "".join(line + "\n" for line in lines)

    def line(self, summary: Mapping[str, Any]) -> str:
        """One row with the widths of the last :meth:`render` (growing a column if it must)."""
        cells = self.cells(summary)
        for i, cell in enumerate(cells):
            if (i != self._components or self.width is None) and len(cell) > self.widths[i]:
                self.widths[i] = len(cell)
        return self._join(cells) + "\n"

    def _join(self, cells: Sequence[str], *, header: bool = False) -> str:
        if not header:
            cells = [
                _shorten(cell, self.widths[i]) if i == self._components else cell
                for i, cell in enumerate(cells)
            ]
        paint = self._paint if self.colour and not header else None
        return join(cells, self.widths, paint=paint)

    def _paint(self, column: int, cell: str, padded: str) -> str:
        if column != self._phase:
            return padded
        colour = _COLOURS.get(cell.split(",")[0])
        if colour is None:
            return padded
        return click.style(cell, fg=colour) + padded[len(cell) :]
