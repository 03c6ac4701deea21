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

from karta.cli.resources import Requests, format_cpu, format_memory, fragment_requests, pod_requests

__all__ = ["Row", "build_rows", "build_view", "render_table"]


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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.kind is not None:
            out["kind"] = {"group": self.kind.group, "version": self.kind.version, "kind": self.kind.kind}
        out["replicas"] = {"desired": self.desired, "current": self.current, "ready": self.ready}
        out["resources"] = self.resources.to_dict()
        if self.children:
            out["children"] = [child.to_dict() for child in self.children]
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
    """The top-level rows of a (pruned) workload tree: a pod-bearing root, then the root's children.

    ``root_multiplier`` scales the root's children (the desired count of a scaled, non-pod-bearing
    root).
    """
    rows: list[Row] = []
    if tree.root is not None:
        row = _component(tree.root, 1, gpu_resources)
        if row is not None:
            rows.append(row)
    for node in tree.children:
        row = _component(node, root_multiplier, gpu_resources)
        if row is not None:
            rows.append(row)
    return rows


def _component(node: Any, multiplier: int, gpu_resources: Sequence[str]) -> Row | None:
    if not node.instances:
        return None
    if node.has_pod_definition and all(_is_absent(i) for i in node.instances):
        return None
    instances = [_instance(node, i, multiplier, gpu_resources) for i in node.instances]
    multi = any(i.instance_key is not None or i.replica_key is not None for i in node.instances)
    if multi:
        return Row(
            name=node.name,
            kind=node.kind,
            pod_bearing=node.has_pod_definition,
            desired=sum(r.desired for r in instances),
            resources=_sum(r.resources for r in instances),
            children=instances,
            instance_rows=True,
            current=sum(r.current for r in instances),
            ready=sum(r.ready for r in instances),
        )
    only = instances[0]
    only.name = node.name
    return only


def _instance(node: Any, instance: Any, multiplier: int, gpu_resources: Sequence[str]) -> Row:
    own = desired_replicas(instance.scale)
    desired = own * multiplier
    children = [
        row
        for row in (_component(child, desired, gpu_resources) for child in instance.children)
        if row is not None
    ]
    own_pods = Requests()
    if node.has_pod_definition:
        own_pods = _per_replica(instance.extracted, gpu_resources).times(desired)
    return Row(
        name=instance.name,
        kind=node.kind,
        pod_bearing=node.has_pod_definition,
        desired=desired,
        resources=_sum(r.resources for r in children) + own_pods,
        children=children,
        own=own_pods,
    )


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


def render_table(view: Mapping[str, Any], rows: Sequence[Row], *, component_limit: int = 0) -> str:
    """The human form: header, component tree, phase line (live only) and the Resources table."""
    file_mode = bool(view.get("fileMode"))
    header = [
        f"{view.get('kind')}/{view.get('name') or '<unnamed>'}",
        f"namespace: {view.get('namespace') or '<none>'}",
        f"definition: {view.get('definition')} ({view.get('origin')})",
    ]
    if not file_mode and view.get("age"):
        header.append(f"age: {view['age']}")
    lines = ["   ".join(header)]
    if file_mode:
        lines.append("(file mode: no live status)")
    lines.append("")
    tree_lines: list[tuple[str, list[str]]] = []
    _tree(rows, "", tree_lines, component_limit=component_limit, file_mode=file_mode)
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


def _resource_cells(desired: int, resources: Requests) -> list[str]:
    return [
        str(desired),
        str(resources.gpus),
        format_cpu(resources.cpu_millis),
        format_memory(resources.memory_bytes),
    ]


def _tree(
    rows: Sequence[Row],
    indent: str,
    out: list[tuple[str, list[str]]],
    *,
    component_limit: int,
    file_mode: bool,
) -> None:
    shown = list(rows)
    hidden = 0
    if component_limit and len(shown) > component_limit:
        hidden = len(shown) - component_limit
        shown = shown[:component_limit]
    for index, row in enumerate(shown):
        last = index == len(shown) - 1 and not hidden
        glyph = "`-- " if last else "|-- "
        replicas = f"replicas: {row.desired}" if file_mode else f"{row.ready}/{row.desired} ready"
        gpu = f"gpu: {row.resources.gpus}" if row.resources.gpus else ""
        out.append((indent + glyph + row.name, [replicas, gpu]))
        _tree(
            row.children,
            indent + ("    " if last else "|   "),
            out,
            component_limit=component_limit,
            file_mode=file_mode,
        )
    if hidden:
        out.append(
            (
                f"{indent}`-- ... and {hidden} more component(s) "
                f"({hidden} of {len(rows)} not shown; --component-limit 0 shows all)",
                [],
            )
        )


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
        parts = [label.ljust(label_width)] + [cell.ljust(widths[i]) for i, cell in enumerate(cells)]
        out.append("    ".join(parts).rstrip())
    return out


def _columns(table: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return ["   ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table]
