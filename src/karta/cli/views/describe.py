"""The ``kli describe`` text (section 17.6): the header with the age, the component tree with
``ready/desired`` (``?/desired`` when some pods could not be read), GPUs, nodes and one line per
pod (with the reason a pod is not ready), the Phase line, the Gang line when the definition has gang
instructions (bound pods against the gang's minimum, :mod:`karta.report.gang_state`; from a file:
unknown, there are no pods) and, live, the Gang scope line (in or outside karta-controller's
gang-scheduling scope, and why), the Resources table and, live, as
``kubectl describe`` shows them: the pending pods' scheduling messages (after the Phase line), the
workload's Conditions and its recent Events (at the end), over the library's rows
(:func:`karta.report.workload_rows`) and report (:func:`karta.report.describe_report`).
``--pod-limit`` and ``--component-limit`` choose what the tree shows; unhealthy pods and
components first. Names, phases, reasons, messages and nodes come from the cluster: each is escaped
(:func:`karta.cli.text.printable`) before it is measured and aligned.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta import report
from karta.cli.text import printable
from karta.cli.views.age import human_age
from karta.cli.views.table import join, render, widths
from karta.extract.requests import Requests, format_cpu, format_memory
from karta.report.pods import PodRow, natural_key

if TYPE_CHECKING:
    from karta.report.rows import Row

__all__ = ["limit_pods", "render_table"]

_MAX_NODES_SHOWN = 3


def render_table(
    view: Mapping[str, Any],
    rows: Sequence[Row],
    *,
    component_limit: int = 0,
    pod_limit: int = 0,
    now: _dt.datetime | None = None,
    staleness: tuple[int, int] | None = None,
) -> str:
    """The human form: header, component tree, phase line (live only) and the Resources table.

    ``now`` (for the header's age) defaults to the current time; ``staleness`` (observedGeneration,
    generation) adds a note to the phase line when the view's status is stale.
    """
    file_mode = bool(view.get("fileMode"))
    header = [
        f"{view.get('kind')}/{view.get('name') or '<unnamed>'}",
        f"namespace: {view.get('namespace') or '<none>'}",
        f"definition: {view.get('definition')} ({view.get('origin')})",
    ]
    if not file_mode:
        header.append(f"age: {human_age(view.get('createdAt'), now=now)}")
    lines = [printable("   ".join(header))]
    if file_mode:
        lines.append("(file mode: no live status)")
    lines.append("")
    tree_lines: list[tuple[str, list[str]]] = []
    _Tree(tree_lines, component_limit=component_limit, pod_limit=pod_limit, file_mode=file_mode).rows(
        rows, ""
    )
    lines.extend(_align(tree_lines) if tree_lines else ["<no components>"])
    lines.extend(_owner_tree(view.get("ownerTree")))
    if not file_mode:
        phase = f"Phase: {','.join(view.get('phases') or ['Undefined'])}"
        if view.get("stale"):
            phase += _stale_note(staleness)
        lines.extend(["", printable(phase), *_gang(view.get("gang")), *_scope(view.get("gangScope"))])
        if view.get("ownedBy"):
            lines.append(printable(f"Owned by: {view['ownedBy']} (its top-level workload)"))
        lines.extend(_queue(view.get("queue")))
        lines.extend(_pending(view.get("pendingPods") or []))
    elif view.get("gang") is not None:
        lines.extend(["", *_gang(view.get("gang"))])
    lines.extend(["", "Resources:"])
    table = [["COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY"]]
    for name, desired, resources in report.resource_rows(rows):
        table.append([name, *_resource_cells(desired, resources)])
    table.append(["TOTAL", *_resource_cells(*report.total_requests(rows))])
    lines.extend(render(table))
    if not file_mode and "events" in view:  # the live details (karta.report.live_details)
        lines.extend(_conditions(view.get("conditions") or [], now=now))
        lines.extend(_events(view.get("events"), int(view.get("eventsOmitted") or 0), now=now))
    return "\n".join(lines) + "\n"


def _owner_tree(tree: Any) -> list[str]:
    """The ``Owner tree:`` section (:mod:`karta.report.owner_tree`): one line per workload, indented
    under its owner, with its phases, its pods (ready/total, its nodes' pods included) and GPUs, and
    which one owns the gang; none when the workload owns no workload of another kind."""
    if not isinstance(tree, Mapping) or not isinstance(tree.get("root"), Mapping):
        return []
    out: list[tuple[str, list[str]]] = []

    def walk(node: Mapping[str, Any], label: str, indent: str) -> None:
        counts = node.get("pods")
        pods: Mapping[str, Any] = counts if isinstance(counts, Mapping) else {}
        error = node.get("error")
        phase = f"unknown ({error})" if error else ",".join(node.get("phases") or ["Undefined"])
        cells = [
            printable(str(phase)),
            f"{pods.get('ready', 0)}/{pods.get('total', 0)} pods ready",
            _gpu_cell(int(node.get("gpus") or 0)),
            "owns the gang" if node.get("gang") else "",
        ]
        out.append((label + printable(f"{node.get('kind')}/{node.get('name')}"), cells))
        children = [c for c in node.get("children") or () if isinstance(c, Mapping)]
        for index, child in enumerate(children):
            last = index == len(children) - 1
            walk(child, indent + ("`-- " if last else "|-- "), indent + ("    " if last else "|   "))

    walk(tree["root"], "", "")
    lines = ["", "Owner tree:", *_align(out)]
    if tree.get("omitted"):
        lines.append(f"... and {tree['omitted']} more owned workload(s) beyond the tree's bounds")
    return lines


def _gang(gang: Any) -> list[str]:
    """The ``Gang:`` line: the library's text, or why the state is unknown; none without gang
    instructions."""
    if not isinstance(gang, Mapping):
        return []
    if gang.get("error"):
        return [printable(f"Gang: unknown ({gang['error']})")]
    return [printable(f"Gang: {gang.get('text') or ''}")]


def _scope(scope: Any) -> list[str]:
    """The ``Gang scope:`` line: in or outside karta-controller's gang-scheduling scope, and why;
    none without gang instructions."""
    if not isinstance(scope, Mapping):
        return []
    in_scope = scope.get("inScope")
    state = "in" if in_scope is True else "outside" if in_scope is False else "undecided"
    return [printable(f"Gang scope: {state} ({scope.get('reason') or ''})")]


def _queue(queue: Any) -> list[str]:
    """The ``Queue:`` line (Kueue: the queue, the admission state, the position of a pending
    Workload and why it waits) and its notes (and why the position is not shown);
    none when Kueue does not manage the workload."""
    if not isinstance(queue, Mapping):
        return []
    where = str(queue.get("queue") or "<no queue label>")
    if queue.get("clusterQueue"):
        where += f" (ClusterQueue {queue['clusterQueue']})"
    why = ": ".join(str(part) for part in (queue.get("reason"), queue.get("message")) if part)
    position = queue.get("position")
    at = f", {position['text']}" if isinstance(position, Mapping) and position.get("text") else ""
    line = f"Queue: {where}: {queue.get('state')}{at}" + (f" ({why})" if why else "")
    if queue.get("workload"):
        line += f"   workload: {queue['workload']}"
    notes = [*(queue.get("notes") or ()), *([queue["positionNote"]] if queue.get("positionNote") else [])]
    return [printable(line), *(printable(f"  {note}") for note in notes)]


def _pending(groups: Sequence[Mapping[str, Any]]) -> list[str]:
    """``N pods Pending: Reason: message`` per group of unscheduled pods."""
    if not groups:
        return []
    lines = ["", "Pending pods:"]
    for group in groups:
        count = int(group.get("count") or 0)
        why = ": ".join(part for part in (group.get("reason"), group.get("message")) if part)
        text = f"  {count} pod{'s' if count != 1 else ''} Pending: {why or 'not scheduled yet'}"
        lines.append(printable(text))
    return lines


def _conditions(conditions: Sequence[Mapping[str, Any]], *, now: _dt.datetime | None) -> list[str]:
    """The workload's conditions, as kubectl lists them (in the object's order)."""
    if not conditions:
        return []
    table = [["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"]]
    for c in conditions:
        age = human_age(c.get("lastTransitionTime"), now=now) if c.get("lastTransitionTime") else ""
        table.append(
            [
                str(c.get("type") or ""),
                str(c.get("status") or ""),
                str(c.get("reason") or ""),
                age,
                str(c.get("message") or ""),
            ]
        )
    return ["", "Conditions:", *render(table)]


def _events(
    events: Sequence[Mapping[str, Any]] | None, omitted: int, *, now: _dt.datetime | None
) -> list[str]:
    """kubectl's Events table (newest last), with the OBJECT each one is about: ``<none>`` when
    there are none, ``<unknown>`` when they could not be read, a closing note when older ones were
    left out."""
    if events is None:
        return ["", "Events: <unknown> (they could not be read)"]
    if not events:
        return ["", "Events: <none>"]
    table = [["TYPE", "REASON", "AGE", "FROM", "OBJECT", "MESSAGE"]]
    for e in events:
        table.append(
            [
                str(e.get("type") or ""),
                str(e.get("reason") or ""),
                _event_age(e, now=now),
                str(e.get("from") or ""),
                _objects_cell(e.get("objects") or []),
                str(e.get("message") or ""),
            ]
        )
    lines = ["", "Events:", *render(table)]
    if omitted:
        lines.append(f"({omitted} older event{'s' if omitted != 1 else ''} not shown)")
    return lines


def _event_age(event: Mapping[str, Any], *, now: _dt.datetime | None) -> str:
    """kubectl's interval: ``AGE`` of the last occurrence, ``(xN over AGE-of-the-first)`` if repeated."""
    count = int(event.get("count") or 1)
    last = human_age(event.get("lastSeen"), now=now)
    if count > 1:
        return f"{last} (x{count} over {human_age(event.get('firstSeen'), now=now)})"
    return last


def _objects_cell(objects: Sequence[str]) -> str:
    if len(objects) <= 1:
        return str(objects[0]) if objects else ""
    return f"{objects[0]} (+{len(objects) - 1})"


def _stale_note(staleness: tuple[int, int] | None) -> str:
    if staleness is None:
        return " (stale)"
    observed, generation = staleness
    return f" (stale: observedGeneration {observed} < generation {generation})"


def _resource_cells(desired: int, resources: Requests) -> list[str]:
    return [
        str(desired),
        str(resources.gpus),
        format_cpu(resources.cpu_millis),
        format_memory(resources.memory_bytes),
    ]


def _gpu_cell(gpus: int) -> str:
    return f"gpu: {gpus}" if gpus else ""


def _nodes_cell(nodes: Sequence[str]) -> str:
    if len(nodes) <= _MAX_NODES_SHOWN:
        return printable(",".join(nodes))
    return printable(",".join(nodes[:_MAX_NODES_SHOWN])) + f",+{len(nodes) - _MAX_NODES_SHOWN} more"


class _Tree:
    """The component tree's lines: (label with glyphs, cells) pairs, aligned afterwards."""

    def __init__(
        self, out: list[tuple[str, list[str]]], *, component_limit: int, pod_limit: int, file_mode: bool
    ) -> None:
        self.out = out
        self.component_limit = component_limit
        self.pod_limit = pod_limit
        self.file_mode = file_mode

    def _select(self, rows: Sequence[Row]) -> list[Row]:
        """``--component-limit``: live, components with unhealthy pods first, then those missing
        pods, then the rest; shown in declared order."""
        if self.file_mode:
            return list(rows[: self.component_limit])
        order = sorted(
            range(len(rows)),
            key=lambda i: (
                0 if rows[i].has_unhealthy else 1 if rows[i].current < rows[i].pods_desired else 2,
                i,
            ),
        )
        return [rows[i] for i in sorted(order[: self.component_limit])]

    def rows(self, rows: Sequence[Row], indent: str, *, pods: Sequence[PodRow] | None = None) -> None:
        """Child component rows, then (live) the pods of the row above them."""
        visible = [row for row in rows if not row.hidden and not row.unattributed]
        tail = [row for row in rows if row.unattributed]
        shown = visible
        hidden_note: str | None = None
        if self.component_limit and len(visible) > self.component_limit:
            shown = self._select(visible)
            count = len(visible) - len(shown)
            extra = ""
            if not self.file_mode:
                unhealthy = sum(1 for row in visible if row not in shown and row.has_unhealthy)
                extra = f", {unhealthy} with unhealthy pods" if unhealthy else ""
            hidden_note = (
                f"... and {count} more component(s) "
                f"({count} of {len(visible)} not shown{extra}; --component-limit 0 shows all)"
            )
        pod_rows, pod_note = limit_pods(pods or (), self.pod_limit)
        items: list[Row | PodRow | str] = [*shown]
        if hidden_note:
            items.append(hidden_note)
        items.extend(tail)
        items.extend(pod_rows)
        if pod_note:
            items.append(pod_note)
        for index, item in enumerate(items):
            last = index == len(items) - 1
            glyph = "`-- " if last else "|-- "
            if isinstance(item, str):
                self.out.append((indent + glyph + item, []))
            elif isinstance(item, PodRow):
                self.out.append((indent + glyph + printable(item.name), _pod_cells(item)))
            else:
                self.out.append((indent + glyph + printable(item.name), self._cells(item)))
                self.rows(item.children, indent + ("    " if last else "|   "), pods=item.pods)

    def _cells(self, row: Row) -> list[str]:
        if self.file_mode:
            return [f"replicas: {row.desired}", _gpu_cell(row.resources.gpus)]
        ready = str(row.ready) if row.counted else "?"
        if row.unattributed:
            current = str(row.current) if row.counted else "?"
            return [f"{ready}/{current} ready", _gpu_cell(row.resources.gpus), _nodes_cell(row.nodes)]
        return [
            f"{ready}/{row.pods_desired} ready",
            _gpu_cell(row.resources.gpus),
            _nodes_cell(row.nodes),
        ]


def _pod_cells(pod: PodRow) -> list[str]:
    phase = pod.phase if pod.ready or not pod.reason else f"{pod.phase} ({pod.reason})"
    return [printable(phase), _gpu_cell(pod.resources.gpus), printable(pod.node or "<none>")]


def _align(lines: Sequence[tuple[str, list[str]]]) -> list[str]:
    """The tree's lines: labels, then their cells in columns; a column that is empty on every line
    (no GPUs anywhere) takes no room; a line without cells (a note) is not aligned."""
    rows = [[label, *cells] for label, cells in lines if cells]
    column_widths = widths(rows) if rows else [0]
    shown = [0, *(i for i in range(1, len(column_widths)) if column_widths[i])]
    kept = [column_widths[i] for i in shown]
    out = []
    for label, cells in lines:
        row = [label, *cells]
        out.append(join([row[i] for i in shown if i < len(row)], kept, sep="    ") if cells else label)
    return out


def limit_pods(pods: Sequence[PodRow], limit: int) -> tuple[list[PodRow], str | None]:
    """The pods ``--pod-limit`` shows (unhealthy first, then by name; shown in name order) and the
    closing line's text, ``... and K more (U unhealthy shown)`` or ``(U of T unhealthy shown)``;
    None when nothing is hidden (``limit`` 0 shows all)."""
    if not limit or len(pods) <= limit:
        return list(pods), None
    ranked = sorted(pods, key=lambda p: (not p.unhealthy, natural_key(p.name)))
    kept = ranked[:limit]
    shown_unhealthy = sum(1 for p in kept if p.unhealthy)
    total_unhealthy = sum(1 for p in pods if p.unhealthy)
    if shown_unhealthy == total_unhealthy:
        note = f"({shown_unhealthy} unhealthy shown)"
    else:
        note = f"({shown_unhealthy} of {total_unhealthy} unhealthy shown)"
    kept.sort(key=lambda p: natural_key(p.name))
    return kept, f"... and {len(pods) - limit} more {note}"
