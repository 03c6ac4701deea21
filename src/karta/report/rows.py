"""The component rows of a workload (docs/spec/format.md#workload-tree, #kli-describe): what ``kli describe``
shows as a tree and what ``kli get`` sums into a row, with desired replicas, live pods and requests.

A row is one component, or one instance of a multi-instance component (named by its instance key,
or ``name[replicaKey]``). Desired replicas per instance: ``replicas``, else ``minReplicas``, else 1;
a row nested under a scaled instance is multiplied by that instance's desired count, so a row's
``desired`` is the total number of pods it stands for. A pod-bearing row requests its per-replica
request × desired; any other row the sum of its children. Components that extract nothing are
left out: grouping components that end up empty (17.5 rule 9) and pod-bearing components none of
whose instances desires a replica or has a pod specification (a replica type the object does not
use, such as a TFJob without a chief).

:func:`workload_rows` builds the tree and its rows from a definition and an object;
:func:`describe_report` is the ``kli describe -o json`` contract.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, cast

from karta._records import record
from karta.extract import (
    ComponentFactory,
    ComponentNode,
    ExtractedInstance,
    InstanceNode,
    Scale,
    WorkloadTree,
    build_tree,
)
from karta.extract.requests import Requests, fragment_requests, pod_requests
from karta.jq import Evaluator
from karta.model import GroupVersionKind, Karta
from karta.report.contracts import DescribeComponent, DescribeReport
from karta.report.pods import PodRow, natural_key, pod_row

if TYPE_CHECKING:
    from karta.report.live import LiveDetails

__all__ = [
    "UNATTRIBUTED",
    "Row",
    "WorkloadRows",
    "build_rows",
    "describe_report",
    "desired_replicas",
    "has_pod_spec",
    "instance_absent",
    "resource_rows",
    "total_requests",
    "workload_rows",
]

UNATTRIBUTED = "(unattributed)"
_MAX_NODES_SHOWN = 3


@record(frozen=False)
class Row:
    """One line of the component tree (see the module docstring)."""

    name: str
    kind: GroupVersionKind | None
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
    counted: bool = True  # False: some pods could not be read, ``current`` and ``ready`` are unknown
    external: bool = False  # extension E2: pods found by labels, not the workload's (never in its sums)

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

    def to_dict(self) -> DescribeComponent:
        out: dict[str, Any] = {"name": self.name}
        if self.kind is not None:
            out["kind"] = {"group": self.kind.group, "version": self.kind.version, "kind": self.kind.kind}
        out["replicas"] = {
            "desired": self.desired,
            "current": self.current if self.counted else None,
            "ready": self.ready if self.counted else None,
        }
        out["resources"] = self.resources.to_dict()
        if self.nodes:
            out["nodes"] = list(self.nodes)
        if self.pods is not None:
            out["pods"] = [pod.to_dict() for pod in self.pods]
        visible = [child for child in self.children if not child.hidden]
        if visible:
            out["children"] = [child.to_dict() for child in visible]
        return cast("DescribeComponent", out)  # in the printed key order


def desired_replicas(scale: Scale | None) -> int:
    """17.5 step 7: ``replicas``, else ``minReplicas``, else 1 (also 1 without a scale)."""
    if scale is not None and scale.replicas is not None:
        return max(0, int(scale.replicas))
    if scale is not None and scale.min_replicas is not None:
        return max(0, int(scale.min_replicas))
    return 1


def _per_replica(extracted: ExtractedInstance | None, gpu_resources: Sequence[str]) -> Requests:
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


def instance_absent(*, pods: int, scale: Scale | None, has_pod_spec: bool) -> bool:
    """The one rule for an instance the object does not have, used by every text view
    (``kli describe``, ``kli get``'s component rows, the web view, ``kli inspect``'s text): no
    pods, nothing desired (:func:`desired_replicas` 0) and no pod specification extracted
    (template, spec or fragments). A component is absent when it has no instance, or is pod-bearing
    and every instance is absent (a replica type the object does not use, such as a TFJob without a
    chief); a grouping component when every child component is absent. ``-o json`` of
    ``kli inspect`` still lists every component (the full extraction result)."""
    return not pods and desired_replicas(scale) == 0 and not has_pod_spec


def has_pod_spec(extracted: ExtractedInstance | None) -> bool:
    """Whether an instance's pod template, pod spec or fragmented pod spec was extracted."""
    return extracted is not None and any(
        (extracted.pod_template_spec, extracted.pod_spec, extracted.fragmented_pod_spec)
    )


def _is_absent(instance: InstanceNode) -> bool:
    return instance_absent(
        pods=len(instance.pods), scale=instance.scale, has_pod_spec=has_pod_spec(instance.extracted)
    )


def build_rows(
    tree: WorkloadTree, *, gpu_resources: Sequence[str], root_multiplier: int = 1, pods_complete: bool = True
) -> list[Row]:
    """The top-level rows of a (pruned) workload tree: a pod-bearing root, then the root's children,
    then (live mode) the ``(unattributed)`` pods.

    ``root_multiplier`` scales the root's children (the desired count of a scaled, non-pod-bearing
    root). A tree built with pods (``tree.unattributed`` is not None) gives live rows; with
    ``pods_complete`` False (some pods could not be read) their current and ready counts are
    unknown (``counted`` False on every row).
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
        rows.append(_pods_row(UNATTRIBUTED, None, tree.unattributed, gpu_resources, unattributed=True))
    if live and not pods_complete:
        for row in rows:
            _uncounted(row)
    return rows


def _pods_row(
    name: str,
    kind: GroupVersionKind | None,
    found: Iterable[Mapping[str, Any]],
    gpu_resources: Sequence[str],
    *,
    unattributed: bool = False,
    external: bool = False,
) -> Row:
    """A row of pods that are no component's replicas: the ``(unattributed)`` bucket (desired 0)
    or an external component (extension E2: desired = the pods found); never pod-bearing, so never
    in the Resources table or the desired pods."""
    pods = sorted((pod_row(p, gpu_resources=gpu_resources) for p in found), key=lambda p: natural_key(p.name))
    return Row(
        name=name,
        kind=kind,
        pod_bearing=False,
        desired=len(pods) if external else 0,
        resources=_sum(p.resources for p in pods),
        current=len(pods),
        ready=sum(1 for p in pods if p.ready),
        pods=pods,
        nodes=_nodes(pods, []),
        unattributed=unattributed,
        external=external,
    )


def _uncounted(row: Row) -> None:
    row.counted = False
    for child in row.children:
        _uncounted(child)


def _nodes(pods: Sequence[PodRow], children: Sequence[Row]) -> list[str]:
    names = {p.node for p in pods if p.node}
    for child in children:
        names.update(child.nodes)
    return sorted(names, key=natural_key)


class _Rows:
    def __init__(self, *, gpu_resources: Sequence[str], live: bool) -> None:
        self.gpu_resources = gpu_resources
        self.live = live

    def component(self, node: ComponentNode, multiplier: int) -> Row | None:
        if not node.instances:
            return None
        if node.external:
            return self._external(node)
        if node.has_pod_definition and all(_is_absent(i) for i in node.instances):
            return None
        instances = [self.instance(node, i, multiplier) for i in node.instances]
        if (
            not node.has_pod_definition
            and any(i.children for i in node.instances)
            and all(not r.children for r in instances)
        ):
            return None  # a grouping component every child component of which is absent
        multi = any(i.instance_key is not None or i.replica_key is not None for i in node.instances)
        if multi and _sole_named_instance(node):
            multi = False
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

    def _external(self, node: ComponentNode) -> Row | None:
        """Extension E2: the row of a component whose pods are not the workload's own: as many
        desired as found, shown only when it has pods, not pod-bearing (so never in the Resources
        table, the desired pods or ``kli get``'s components)."""
        found = [p for i in node.instances for p in i.pods]
        if not found:
            return None
        return _pods_row(node.name, node.kind, found, self.gpu_resources, external=True)

    def _missing_replicas(self, node: ComponentNode, multiplier: int) -> tuple[int, list[Row]]:
        """R7: the desired count of a component split by replica keys (from its scale, per instance),
        and hidden rows for the replicas the scale asks for but no pod carries yet."""
        first: dict[str | None, InstanceNode] = {}
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

    def instance(
        self, node: ComponentNode, instance: InstanceNode, multiplier: int, *, per_replica: bool = False
    ) -> Row:
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


def _sole_named_instance(node: ComponentNode) -> bool:
    """One instance named after its component (a role the object has or not, such as KServe's
    transformer: its instance id path yields the component's name or nothing): shown as the
    component itself, not as a component with one instance row."""
    if len(node.instances) != 1:
        return False
    only = node.instances[0]
    return only.instance_key == node.name and only.replica_key is None


def _hide(row: Row) -> Row:
    row.hidden = True
    for child in row.children:
        _hide(child)
    return row


def _sum(items: Iterable[Requests]) -> Requests:
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


def total_requests(rows: Sequence[Row]) -> tuple[int, Requests]:
    """Desired pods and requests of the whole workload (the Resources table's TOTAL)."""
    body = resource_rows(rows)
    return sum(d for _, d, _ in body), _sum(r for _, _, r in body)


def _phases(tree: WorkloadTree) -> list[str]:
    status = tree.status
    return [str(s) for s in status.matched] if status is not None and status.matched else ["Undefined"]


def describe_report(
    *,
    obj: Mapping[str, Any],
    definition: str,
    origin: str,
    tree: WorkloadTree,
    rows: Sequence[Row],
    file_mode: bool,
    live: LiveDetails | None = None,
    pods_complete: bool = True,
) -> DescribeReport:
    """The describe JSON: the View fields, ``fileMode``, ``stale`` (true, only when the root
    status is stale), ``resources`` and ``components``; live (``live`` given), then
    ``podsComplete`` (``pods_complete``: were all the pods read) and the details of
    :class:`~karta.report.live.LiveDetails`."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    pods, total = total_requests(rows)
    report: dict[str, Any] = {
        "name": meta.get("name") or meta.get("generateName"),
        "namespace": meta.get("namespace"),
        "kind": obj.get("kind"),
        "apiVersion": obj.get("apiVersion"),
        "createdAt": _timestamp(meta.get("creationTimestamp")),
        "definition": definition,
        "origin": origin,
        "phases": _phases(tree),
        "fileMode": file_mode,
    }
    if tree.status is not None and tree.status.stale:
        report["stale"] = True
    report["resources"] = {**total.to_dict(), "pods": pods}
    report["components"] = [row.to_dict() for row in rows]
    if live is not None:
        report["podsComplete"] = pods_complete
        report.update(live.to_dict())
    return cast("DescribeReport", report)


@record
class WorkloadRows:
    """A workload's tree (pruned) and its rows; ``pods_complete`` False: live, some pods could not
    be read (the rows' counts are unknown)."""

    tree: WorkloadTree
    rows: list[Row]
    pods_complete: bool = True

    @property
    def phases(self) -> list[str]:
        """The matched statuses, or ``["Undefined"]``."""
        return _phases(self.tree)


def workload_rows(
    karta: Karta,
    obj: Mapping[str, Any],
    *,
    evaluator: Evaluator,
    gpu_resources: Sequence[str],
    pods: list[dict[str, Any]] | None = None,
    pods_complete: bool = True,
    external_pods: Sequence[Mapping[str, Any]] = (),
) -> WorkloadRows:
    """The tree of ``obj`` through ``karta`` (with ``pods`` placed, when given) and its rows; a
    scaled root that bears no pods multiplies its children by its desired replicas.
    ``external_pods``: the pods listed by the labels of its external components (extension E2).
    ``pods_complete`` False says ``pods`` are only some of the workload's (a list or owners could
    not be read): the rows' current and ready counts are then unknown. Raises
    :class:`~karta.errors.KartaError` when the definition is invalid or extraction fails."""
    factory = ComponentFactory(karta, dict(obj), evaluator=evaluator)
    tree = build_tree(factory, pods, external_pods=external_pods).pruned()
    multiplier = 1
    root = karta.root
    if not root.is_pod_bearing and root.scale_definition is not None:
        scales = factory.root().scales()
        if scales:
            multiplier = sum(desired_replicas(s) for s in scales.values())
    complete = pods_complete or pods is None
    rows = build_rows(tree, gpu_resources=gpu_resources, root_multiplier=multiplier, pods_complete=complete)
    return WorkloadRows(tree, rows, pods_complete=complete)
