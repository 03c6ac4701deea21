"""The ``kli describe`` view (section 17.6): rows built from a workload tree, their JSON shape and
the table rendering (header, component tree, Resources table).

A row is one component, or one instance of a multi-instance component (named by its instance key,
or ``name[replicaKey]``). Desired replicas per instance: ``replicas``, else ``minReplicas``, else 1;
a row nested under a scaled instance is multiplied by that instance's desired count, so a row's
``desired`` is the total number of pods it stands for. A pod-bearing row requests its per-replica
request × desired; any other row the sum of its children. Components that extract nothing are
left out: grouping components that end up empty (17.5 rule 9) and pod-bearing components none of
whose instances desires a replica or has a pod specification (a replica type the object does not
use, such as a TFJob without a chief).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karta.cli.describe_pods import PodRow, limit_pods, natural_key, pod_row
from karta.extract.requests import Requests, format_cpu, format_memory, fragment_requests, pod_requests

__all__ = ["UNATTRIBUTED", "Row", "build_rows", "build_view", "human_age", "render_table"]

UNATTRIBUTED = "(unattributed)"
_MAX_NODES_SHOWN = 3


@dataclass
class Row:
    """One line of the component tree (see the module docstring)."""

    name: str
    kind: Any  # GroupVersionKind | None
    pod_bearing: bool
    desired: int
    resources: Requests
    children: list[Row] = field(default_factory=list)
    instance_rows: bool = False  # the children are this component's instances
    own: Requests = field(default_factory=Requests)  # this row's own pods (resources less children)
    current: int = 0
    ready: int = 0
    pods: list[PodRow] | None = None  # live mode, pod-bearing rows: this row's own pods
    nodes: list[str] = field(default_factory=list)  # nodes of this row's pods and those below it
    hidden: bool = False  # desired replicas without pods: counted in the Resources table only
    unattributed: bool = False  # the (unattributed) bucket of pods no component claims

    @property
    def pods_desired(self) -> int:
        """Pods this row and the rows below it stand for (the ``D`` of ``R/D ready``)."""
        below = sum(child.pods_desired for child in self.children)
        if self.pod_bearing and not self.instance_rows:
            return self.desired + below
        return below

    @property
    def has_unhealthy(self) -> bool:
        return any(p.unhealthy for p in self.pods or ()) or any(c.has_unhealthy for c in self.children)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.kind is not None:
            out["kind"] = {"group": self.kind.group, "version": self.kind.version, "kind": self.kind.kind}
        out["replicas"] = {"desired": self.desired, "current": self.current, "ready": self.ready}
        out["resources"] = self.resources.to_dict()
        if self.nodes:
            out["nodes"] = list(self.nodes)
        if self.pods is not None:
            out["pods"] = [pod.to_dict() for pod in self.pods]
        visible = [child for child in self.children if not child.hidden]
        if visible:
            out["children"] = [child.to_dict() for child in visible]
        return out


def desired_replicas(scale: Any) -> int:
    """17.5 step 7: ``replicas``, else ``minReplicas``, else 1 (also 1 without a scale)."""
    if scale is not None and scale.replicas is not None:
        return max(0, int(scale.replicas))
    if scale is not None and scale.min_replicas is not None:
        return max(0, int(scale.min_replicas))
    return 1


def _per_replica(extracted: Any, gpu_resources: Sequence[str]) -> Requests:
    if extracted is None:
        return Requests()
    if extracted.pod_template_spec is not None:
        spec = (
            extracted.pod_template_spec.get("spec") if isinstance(extracted.pod_template_spec, dict) else None
        )
        return pod_requests(spec, gpu_resources=gpu_resources)
    if extracted.pod_spec is not None:
        return pod_requests(extracted.pod_spec, gpu_resources=gpu_resources)
    if extracted.fragmented_pod_spec is not None:
        return fragment_requests(extracted.fragmented_pod_spec, gpu_resources=gpu_resources)
    return Requests()


def _is_absent(instance: Any) -> bool:
    """No pods, nothing desired and no pod specification: a replica type the object does not use."""
    if instance.pods or desired_replicas(instance.scale) > 0:
        return False
    extracted = instance.extracted
    if extracted is None:
        return True
    return not any((extracted.pod_template_spec, extracted.pod_spec, extracted.fragmented_pod_spec))


def build_rows(tree: Any, *, gpu_resources: Sequence[str], root_multiplier: int = 1) -> list[Row]:
    """The top-level rows of a (pruned) workload tree: a pod-bearing root, then the root's children,
    then (live mode) the ``(unattributed)`` pods.

    ``root_multiplier`` scales the root's children (the desired count of a scaled, non-pod-bearing
    root). A tree built with pods (``tree.unattributed`` is not None) gives live rows.
    """
    live = tree.unattributed is not None
    builder = _Rows(gpu_resources=gpu_resources, live=live)
    rows: list[Row] = []
    if tree.root is not None:
        row = builder.component(tree.root, 1)
        if row is not None:
            rows.append(row)
    for node in tree.children:
        row = builder.component(node, root_multiplier)
        if row is not None:
            rows.append(row)
    if live and tree.unattributed:
        pods = sorted(
            (pod_row(p, gpu_resources=gpu_resources) for p in tree.unattributed),
            key=lambda p: natural_key(p.name),
        )
        rows.append(
            Row(
                name=UNATTRIBUTED,
                kind=None,
                pod_bearing=False,
                desired=0,
                resources=_sum(p.resources for p in pods),
                current=len(pods),
                ready=sum(1 for p in pods if p.ready),
                pods=pods,
                nodes=_nodes(pods, []),
                unattributed=True,
            )
        )
    return rows


def _nodes(pods: Sequence[PodRow], children: Sequence[Row]) -> list[str]:
    names = {p.node for p in pods if p.node}
    for child in children:
        names.update(child.nodes)
    return sorted(names, key=natural_key)


class _Rows:
    def __init__(self, *, gpu_resources: Sequence[str], live: bool) -> None:
        self.gpu_resources = gpu_resources
        self.live = live

    def component(self, node: Any, multiplier: int) -> Row | None:
        if not node.instances:
            return None
        if node.has_pod_definition and all(_is_absent(i) for i in node.instances):
            return None
        instances = [self.instance(node, i, multiplier) for i in node.instances]
        multi = any(i.instance_key is not None or i.replica_key is not None for i in node.instances)
        if not multi:
            only = instances[0]
            only.name = node.name
            return only
        desired = sum(r.desired for r in instances)
        if any(i.replica_key is not None for i in node.instances):
            desired, phantoms = self._missing_replicas(node, multiplier)
            instances.extend(phantoms)
        return Row(
            name=node.name,
            kind=node.kind,
            pod_bearing=node.has_pod_definition,
            desired=desired,
            resources=_sum(r.resources for r in instances),
            children=instances,
            instance_rows=True,
            current=sum(r.current for r in instances),
            ready=sum(r.ready for r in instances),
            nodes=_nodes([], instances),
        )

    def _missing_replicas(self, node: Any, multiplier: int) -> tuple[int, list[Row]]:
        """R7: the desired count of a component split by replica keys (from its scale, per instance),
        and hidden rows for the replicas the scale asks for but no pod carries yet."""
        first: dict[str | None, Any] = {}
        found: dict[str | None, int] = {}
        for instance in node.instances:
            first.setdefault(instance.instance_key, instance)
            found[instance.instance_key] = found.get(instance.instance_key, 0) + 1
        desired = 0
        phantoms: list[Row] = []
        for key, instance in first.items():
            wanted = desired_replicas(instance.scale)
            desired += wanted * multiplier
            missing = wanted - found[key] if instance.replica_key is not None else 0
            if missing > 0:
                phantom = _Rows(gpu_resources=self.gpu_resources, live=False).instance(
                    node, instance, multiplier * missing, per_replica=True
                )
                phantoms.append(_hide(phantom))
        return desired, phantoms

    def instance(self, node: Any, instance: Any, multiplier: int, *, per_replica: bool = False) -> Row:
        own = 1 if per_replica or instance.replica_key is not None else desired_replicas(instance.scale)
        desired = own * multiplier
        children = [
            row for row in (self.component(child, desired) for child in instance.children) if row is not None
        ]
        own_pods = Requests()
        pods: list[PodRow] | None = None
        if node.has_pod_definition:
            own_pods = _per_replica(instance.extracted, self.gpu_resources).times(desired)
            if self.live:
                pods = sorted(
                    (pod_row(p, gpu_resources=self.gpu_resources) for p in instance.pods),
                    key=lambda p: natural_key(p.name),
                )
        mine = pods or []
        return Row(
            name=instance.name,
            kind=node.kind,
            pod_bearing=node.has_pod_definition,
            desired=desired,
            resources=_sum(r.resources for r in children) + own_pods,
            children=children,
            own=own_pods,
            current=len(mine) + sum(r.current for r in children),
            ready=sum(1 for p in mine if p.ready) + sum(r.ready for r in children),
            pods=pods,
            nodes=_nodes(mine, children),
        )


def _hide(row: Row) -> Row:
    row.hidden = True
    for child in row.children:
        _hide(child)
    return row


def _sum(items: Any) -> Requests:
    total = Requests()
    for item in items:
        total = total + item
    return total


def resource_rows(rows: Sequence[Row]) -> list[tuple[str, int, Requests]]:
    """The Resources table body: pod-bearing rows (instances of multi-instance ones), same names merged."""
    merged: dict[str, tuple[int, Requests]] = {}

    def walk(row: Row) -> None:
        if row.pod_bearing and not row.instance_rows:
            desired, resources = merged.get(row.name, (0, Requests()))
            merged[row.name] = (desired + row.desired, resources + row.own)
        for child in row.children:
            walk(child)

    for row in rows:
        walk(row)
    return [(name, desired, resources) for name, (desired, resources) in merged.items()]


def _timestamp(value: Any) -> str | None:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        text: str = value.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return text
    return str(value) if value else None


def build_view(
    *,
    obj: Mapping[str, Any],
    definition: Any,
    tree: Any,
    rows: Sequence[Row],
    file_mode: bool,
) -> dict[str, Any]:
    """The describe JSON: the View fields, ``fileMode``, ``resources`` and ``components``."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    status = tree.status
    phases = [str(s) for s in status.matched] if status is not None and status.matched else ["Undefined"]
    table_rows = resource_rows(rows)
    total = _sum(r for _, _, r in table_rows)
    return {
        "name": meta.get("name") or meta.get("generateName"),
        "namespace": meta.get("namespace"),
        "kind": obj.get("kind"),
        "apiVersion": obj.get("apiVersion"),
        "createdAt": _timestamp(meta.get("creationTimestamp")),
        "definition": definition.name,
        "origin": definition.origin,
        "phases": phases,
        "fileMode": file_mode,
        "resources": {**total.to_dict(), "pods": sum(d for _, d, _ in table_rows)},
        "components": [row.to_dict() for row in rows],
    }


# table ------------------------------------------------------------------------------------------


def render_table(
    view: Mapping[str, Any],
    rows: Sequence[Row],
    *,
    component_limit: int = 0,
    pod_limit: int = 0,
    now: _dt.datetime | None = None,
) -> str:
    """The human form: header, component tree, phase line (live only) and the Resources table.

    ``now`` (for the header's age) defaults to the current time.
    """
    file_mode = bool(view.get("fileMode"))
    header = [
        f"{view.get('kind')}/{view.get('name') or '<unnamed>'}",
        f"namespace: {view.get('namespace') or '<none>'}",
        f"definition: {view.get('definition')} ({view.get('origin')})",
    ]
    if not file_mode:
        header.append(f"age: {human_age(view.get('createdAt'), now=now)}")
    lines = ["   ".join(header)]
    if file_mode:
        lines.append("(file mode: no live status)")
    lines.append("")
    tree_lines: list[tuple[str, list[str]]] = []
    _Tree(tree_lines, component_limit=component_limit, pod_limit=pod_limit, file_mode=file_mode).rows(
        rows, ""
    )
    lines.extend(_align(tree_lines) if tree_lines else ["<no components>"])
    if not file_mode:
        lines.extend(["", f"Phase: {','.join(view.get('phases') or ['Undefined'])}"])
    lines.extend(["", "Resources:"])
    body = resource_rows(rows)
    table = [["COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY"]]
    for name, desired, resources in body:
        table.append([name, *_resource_cells(desired, resources)])
    total = _sum(r for _, _, r in body)
    table.append(["TOTAL", *_resource_cells(sum(d for _, d, _ in body), total)])
    lines.extend(_columns(table))
    return "\n".join(lines) + "\n"


def human_age(created: Any, *, now: _dt.datetime | None = None) -> str:
    """kubectl's short human duration since ``created`` (an RFC 3339 text), or ``<unknown>``."""
    if not isinstance(created, str) or not created:
        return "<unknown>"
    try:
        start = _dt.datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    if start.tzinfo is None:
        start = start.replace(tzinfo=_dt.UTC)
    seconds = int(((now or _dt.datetime.now(_dt.UTC)) - start).total_seconds())
    if seconds < -1:
        return "<invalid>"
    seconds = max(seconds, 0)
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if seconds < 120:
        return f"{seconds}s"
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    years = days // 365
    if years < 8:
        return f"{years}y{days % 365}d" if days % 365 else f"{years}y"
    return f"{years}y"


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
        return ",".join(nodes)
    return ",".join(nodes[:_MAX_NODES_SHOWN]) + f",+{len(nodes) - _MAX_NODES_SHOWN} more"


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
                self.out.append((indent + glyph + item.name, _pod_cells(item)))
            else:
                self.out.append((indent + glyph + item.name, self._cells(item)))
                self.rows(item.children, indent + ("    " if last else "|   "), pods=item.pods)

    def _cells(self, row: Row) -> list[str]:
        if self.file_mode:
            return [f"replicas: {row.desired}", _gpu_cell(row.resources.gpus)]
        if row.unattributed:
            return [f"{row.ready}/{row.current} ready", _gpu_cell(row.resources.gpus), _nodes_cell(row.nodes)]
        return [
            f"{row.ready}/{row.pods_desired} ready",
            _gpu_cell(row.resources.gpus),
            _nodes_cell(row.nodes),
        ]


def _pod_cells(pod: PodRow) -> list[str]:
    phase = pod.phase if pod.ready or not pod.reason else f"{pod.phase} ({pod.reason})"
    return [phase, _gpu_cell(pod.resources.gpus), pod.node or "<none>"]


def _align(lines: Sequence[tuple[str, list[str]]]) -> list[str]:
    label_width = max(len(label) for label, cells in lines if cells) if any(c for _, c in lines) else 0
    widths: list[int] = []
    for _, cells in lines:
        for i, cell in enumerate(cells):
            if i >= len(widths):
                widths.append(0)
            widths[i] = max(widths[i], len(cell))
    out = []
    for label, cells in lines:
        if not cells:
            out.append(label)
            continue
        # a column that is empty on every line (no GPUs anywhere) takes no room
        parts = [label.ljust(label_width)] + [
            cell.ljust(widths[i]) for i, cell in enumerate(cells) if widths[i]
        ]
        out.append("    ".join(parts).rstrip())
    return out


def _columns(table: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return ["   ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table]
