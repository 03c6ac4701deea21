"""The rows of ``kli get`` (karta-format.md 17.4): one View per workload, the ``--phase`` filter,
the sort order, kubectl-style ages and the table (``-o table|wide``), fitted to 100 columns.

A View is ``{name, namespace, kind, apiVersion, createdAt, definition, origin, phases, gpus,
components}``: ``phases`` the matched statuses (``["Undefined"]`` when none), ``gpus`` the GPUs of
all desired pods (from the pod templates, per the describe arithmetic of 17.5), ``components`` the
pod-bearing components with their desired pod counts. Pure: objects and definitions in, dicts and
text out; no cluster access here.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta.cli.errors import UsageError

if TYPE_CHECKING:
    from karta.definitions import StoredDefinition
    from karta.jq import Evaluator

__all__ = [
    "PHASES",
    "TABLE_WIDTH",
    "Table",
    "ViewBuilder",
    "human_age",
    "keep",
    "parse_phases",
    "sort_views",
]

PHASES = (
    "Undefined",
    "Resuming",
    "Suspending",
    "Suspended",
    "Running",
    "Failed",
    "Completed",
    "Initializing",
    "Degraded",
)
TABLE_WIDTH = 100
_SEP = "   "
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


def parse_phases(values: Iterable[str]) -> frozenset[str]:
    """``--phase`` values (repeatable, comma-separated, any case) as canonical phase names."""
    canonical = {p.lower(): p for p in PHASES}
    out: set[str] = set()
    for value in values:
        for part in value.split(","):
            word = part.strip()
            if not word:
                continue
            if word.lower() not in canonical:
                raise UsageError(f"--phase: unknown phase {word!r} (expected one of {', '.join(PHASES)})")
            out.add(canonical[word.lower()])
    return frozenset(out)


def keep(view: Mapping[str, Any], phases: frozenset[str]) -> bool:
    """Any-match: the row stays if one of its phases is listed (no ``--phase``: every row)."""
    return not phases or any(p in phases for p in view.get("phases") or ())


def sort_views(views: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Newest first, then Kind, then name (then namespace, for a stable order)."""
    items = list(views)
    items.sort(key=lambda v: (v.get("kind") or "", v.get("name") or "", v.get("namespace") or ""))
    items.sort(key=lambda v: _epoch(v.get("createdAt")), reverse=True)
    return items


def _epoch(value: Any) -> float:
    moment = _parse_time(value)
    return moment.timestamp() if moment is not None else float("-inf")


def _parse_time(value: Any) -> _dt.datetime | None:
    if isinstance(value, _dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=_dt.UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=_dt.UTC)


def human_age(created: Any, *, now: _dt.datetime) -> str:
    """kubectl's ``HumanDuration`` of ``now - created`` (``<unknown>`` without a timestamp)."""
    moment = _parse_time(created)
    if moment is None:
        return "<unknown>"
    seconds = int((now - moment).total_seconds())
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


# ------------------------------------------------------------------------------------------ views


class ViewBuilder:
    """Views of workload objects; one jq evaluator per definition, shared by all its objects."""

    def __init__(self, *, gpu_resources: Sequence[str]) -> None:
        self.gpu_resources = tuple(gpu_resources)
        self._evaluators: dict[int, Evaluator] = {}

    def _evaluator(self, definition: StoredDefinition) -> Evaluator:
        from karta.jq import Evaluator

        key = id(definition.karta)
        found = self._evaluators.get(key)
        if found is None:
            found = self._evaluators[key] = Evaluator(trusted=definition.trusted)
        return found

    def view(self, obj: Mapping[str, Any], definition: StoredDefinition) -> dict[str, Any]:
        """The View of ``obj`` resolved through ``definition``; raises KartaError when the
        definition is invalid or extraction fails."""
        from karta.cli.describe_view import build_rows, desired_replicas, resource_rows
        from karta.extract import ComponentFactory, build_tree

        factory = ComponentFactory(definition.karta, dict(obj), evaluator=self._evaluator(definition))
        tree = build_tree(factory).pruned()
        multiplier = 1
        root = definition.karta.root
        if not root.is_pod_bearing and root.scale_definition is not None:
            scales = factory.root().scales()
            if scales:
                multiplier = sum(desired_replicas(s) for s in scales.values())
        rows = build_rows(tree, gpu_resources=self.gpu_resources, root_multiplier=multiplier)
        components = resource_rows(rows)
        status = tree.status
        phases = [str(s) for s in status.matched] if status is not None and status.matched else ["Undefined"]
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        created = meta.get("creationTimestamp")
        if isinstance(created, _dt.datetime):
            created = _parse_time(created)
            created = created.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if created else None
        return {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "kind": obj.get("kind"),
            "apiVersion": obj.get("apiVersion"),
            "createdAt": created or None,
            "definition": definition.name,
            "origin": definition.origin,
            "phases": phases,
            "gpus": sum(r.gpus for _, _, r in components),
            "components": [{"name": name, "replicas": desired} for name, desired, _ in components],
        }


# ------------------------------------------------------------------------------------------ table


def components_cell(view: Mapping[str, Any]) -> str:
    parts = [f"{c['name']}:{c['replicas']}" for c in view.get("components") or ()]
    return ",".join(parts) if parts else "<none>"


def _shorten(cell: str, width: int) -> str:
    """A comma list cut to ``width``: whole entries, then ``+N`` for the rest (or ``...``)."""
    if len(cell) <= width:
        return cell
    parts = cell.split(",")
    for keep_n in range(len(parts) - 1, 0, -1):
        text = ",".join(parts[:keep_n]) + f",+{len(parts) - keep_n}"
        if len(text) <= width:
            return text
    return cell[: max(1, width - 3)] + "..."


class Table:
    """``NAME NAMESPACE [TYPE] PHASE GPU COMPONENTS AGE [ORIGIN]`` (TYPE with ``--all-types``,
    ORIGIN with ``-o wide``). :meth:`render` sets the column widths; :meth:`line` formats one more
    row with them (``--watch``). COMPONENTS is shortened so that a line fits :data:`TABLE_WIDTH`."""

    def __init__(
        self,
        *,
        show_type: bool,
        wide: bool,
        type_label: Callable[[Mapping[str, Any]], str] | None = None,
        now: Callable[[], _dt.datetime] | None = None,
        colour: bool = False,
        width: int = TABLE_WIDTH,
    ) -> None:
        self.show_type = show_type
        self.wide = wide
        self.type_label = type_label or (lambda v: str(v.get("kind") or ""))
        self.now = now or (lambda: _dt.datetime.now(_dt.UTC))
        self.colour = colour
        self.width = width
        self.header = [
            "NAME",
            "NAMESPACE",
            *(["TYPE"] if show_type else []),
            "PHASE",
            "GPU",
            "COMPONENTS",
            "AGE",
        ]
        if wide:
            self.header.append("ORIGIN")
        self.widths = [len(h) for h in self.header]
        self._components = self.header.index("COMPONENTS")
        self._phase = self.header.index("PHASE")

    def cells(self, view: Mapping[str, Any], *, now: _dt.datetime | None = None) -> list[str]:
        cells = [str(view.get("name") or ""), str(view.get("namespace") or "<none>")]
        if self.show_type:
            cells.append(self.type_label(view))
        cells += [
            ",".join(view.get("phases") or ["Undefined"]),
            str(view.get("gpus", 0)),
            components_cell(view),
            human_age(view.get("createdAt"), now=now or self.now()),
        ]
        if self.wide:
            cells.append(str(view.get("origin") or ""))
        return cells

    def render(self, views: Sequence[Mapping[str, Any]]) -> str:
        now = self.now()
        rows = [self.cells(v, now=now) for v in views]
        self.widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(self.header)]
        budget = (
            self.width
            - (sum(self.widths) - self.widths[self._components])
            - len(_SEP) * (len(self.header) - 1)
        )
        limit = max(len("COMPONENTS"), budget)
        if self.widths[self._components] > limit:
            self.widths[self._components] = limit
        lines = [self._join(self.header, header=True)] + [self._join(r) for r in rows]
        return "\n".join(lines) + "\n"

    def line(self, view: Mapping[str, Any]) -> str:
        """One row with the widths of the last :meth:`render` (growing a column if it must)."""
        cells = self.cells(view)
        for i, cell in enumerate(cells):
            if i != self._components and len(cell) > self.widths[i]:
                self.widths[i] = len(cell)
        return self._join(cells) + "\n"

    def _join(self, cells: Sequence[str], *, header: bool = False) -> str:
        out = []
        last = len(cells) - 1
        for i, cell in enumerate(cells):
            if i == self._components and not header:
                cell = _shorten(cell, self.widths[i])
            padded = cell if i == last else cell.ljust(self.widths[i])
            if self.colour and not header and i == self._phase:
                padded = _paint(cell, padded)
            out.append(padded)
        return _SEP.join(out).rstrip()


def _paint(cell: str, padded: str) -> str:
    import click

    colour = _COLOURS.get(cell.split(",")[0])
    if colour is None:
        return padded
    return click.style(cell, fg=colour) + padded[len(cell) :]
