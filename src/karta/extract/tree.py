"""The workload tree (docs/spec/format.md#workload-tree, R7, R16): components → instances → child components,
with live pods placed on the instances that own them.

``build_tree`` validates the definition, reads the root status, and builds one
:class:`ComponentNode` per child of the root (and, separately, one for a pod-bearing root), each with
its instances sorted by key. Offline (``pods=None``) every instance carries the same child subtree,
as in the original. With pods (already filtered to the workload's pods by the caller):

* a pod-bearing component claims the pods its component type selector matches; without a selector
  it claims all of them only when it is the only pod-bearing component;
* a grouping component hands its pods on to its children (a pod-bearing component hands on the
  pods it claimed);
* a multi-instance component narrows its pods by instance id (11.4), and a component with a
  ``replicaSelector`` is split into one instance node per replica key found on its pods (R7), whose
  descendants see only that replica's pods;
* pods no pod-bearing component claims are listed as ``unattributed`` (R16).

Bounds (issue 9): the definition is validated first, so the tree is at most
:data:`~karta.model.validate_structure.MAX_COMPONENT_DEPTH` components deep and the recursion here
(a few frames per level) stays far below Python's limit; and since every instance carries its
own copy of the child subtree, a tree grows with the product of the instance counts along a chain,
so at most :data:`MAX_TREE_NODES` instance nodes are built: more is an
:class:`~karta.errors.ExtractionError`, not hours and gigabytes.

Resource arithmetic and rendering belong to the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta._ordering import natural_key
from karta._records import record, replace
from karta.errors import ExtractionError, PodQueryError
from karta.extract.external import external_selectors, split_external
from karta.extract.factory import ComponentFactory
from karta.extract.pods import PodQuerier, pod_functions
from karta.extract.types import ExtractedInstance, Scale
from karta.jq import Evaluator
from karta.model.findings import Finding, Severity
from karta.model.types import ComponentDefinition, GroupVersionKind
from karta.model.validity import validate_or_raise
from karta.status import StatusResult

__all__ = ["MAX_TREE_NODES", "ComponentNode", "InstanceNode", "WorkloadTree", "build_tree"]

Pod = Mapping[str, Any]

MAX_TREE_NODES = 100_000
"""Instance nodes (instances, and replicas of instances) one workload tree may have."""


def _pod_name(pod: Pod) -> str:
    metadata = pod.get("metadata")
    return str(metadata.get("name") or "") if isinstance(metadata, Mapping) else ""


@record(slots=True)
class InstanceNode:
    """One instance (or one replica of an instance) of a component.

    ``instance_key`` is None for the implicit instance; ``replica_key`` is None unless pods supplied
    one (R7). ``pods`` are the pods of this node when its component is pod-bearing.
    """

    component: str
    instance_key: str | None
    replica_key: str | None
    scale: Scale | None
    extracted: ExtractedInstance | None
    children: tuple[ComponentNode, ...] = ()
    pods: tuple[Pod, ...] = ()

    @property
    def name(self) -> str:
        """The row name: the instance key, ``<name>[<replicaKey>]``, or the component name."""
        base = self.instance_key if self.instance_key is not None else self.component
        return f"{base}[{self.replica_key}]" if self.replica_key is not None else base

    def to_dict(self, *, with_pods: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.instance_key is not None:
            out["instanceKey"] = self.instance_key
        if self.replica_key is not None:
            out["replicaKey"] = self.replica_key
        if self.scale is not None:
            out["scale"] = self.scale.to_dict()
        if self.extracted is not None:
            out["extracted"] = _extracted_to_dict(self.extracted)
        if self.children:
            out["children"] = [child.to_dict(with_pods=with_pods) for child in self.children]
        if with_pods:
            out["pods"] = [_pod_name(pod) for pod in self.pods]
        return out


@record(slots=True)
class ComponentNode:
    """One component of the tree; ``kind`` is None for virtual components."""

    name: str
    kind: GroupVersionKind | None
    has_pod_definition: bool
    instances: tuple[InstanceNode, ...] = ()
    external: bool = False
    """Extension E2: its pods are found by labels, not owned by the workload (never counted in
    its replicas or gangs)."""

    @property
    def pods(self) -> tuple[Pod, ...]:
        """The pods of all instances of this component (not of its descendants)."""
        return tuple(pod for instance in self.instances for pod in instance.pods)

    def is_empty_grouping(self) -> bool:
        """A non-pod-bearing component none of whose instances has children (17.5 rule 9)."""
        return not self.has_pod_definition and all(not i.children for i in self.instances)

    def to_dict(self, *, with_pods: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.kind is not None:
            out["kind"] = {"group": self.kind.group, "version": self.kind.version, "kind": self.kind.kind}
        out["hasPodDefinition"] = self.has_pod_definition
        if self.external:
            out["external"] = True
        out["instances"] = [instance.to_dict(with_pods=with_pods) for instance in self.instances]
        return out


@record(slots=True)
class WorkloadTree:
    """The tree of one workload.

    ``root`` is the pod-bearing root shown as a component (None otherwise); ``children`` are the
    root's child components. ``unattributed`` is None offline, else the pods no component claimed.
    """

    status: StatusResult | None
    children: tuple[ComponentNode, ...] = ()
    root: ComponentNode | None = None
    unattributed: tuple[Pod, ...] | None = None
    diagnostics: tuple[Finding, ...] = ()

    @property
    def components(self) -> tuple[ComponentNode, ...]:
        """The top-level rows: the pod-bearing root (if any), then the root's children."""
        return ((self.root,) if self.root is not None else ()) + self.children

    def pruned(self) -> WorkloadTree:
        """A copy without grouping components that ended up empty (17.5 rule 9)."""
        return replace(self, children=_prune(self.children))

    def to_dict(self) -> dict[str, Any]:
        """``{status?: {phases, primary, stale?}, root?, children, unattributed?, diagnostics?}``
        (``stale: true`` only when the status is stale)."""
        with_pods = self.unattributed is not None
        out: dict[str, Any] = {}
        if self.status is not None:
            out["status"] = {
                "phases": [str(s) for s in self.status.matched],
                "primary": str(self.status.primary),
            }
            if self.status.stale:
                out["status"]["stale"] = True
        if self.root is not None:
            out["root"] = self.root.to_dict(with_pods=with_pods)
        out["children"] = [child.to_dict(with_pods=with_pods) for child in self.children]
        if self.unattributed is not None:
            out["unattributed"] = [_pod_name(pod) for pod in self.unattributed]
        if self.diagnostics:
            out["diagnostics"] = [d.to_dict() for d in self.diagnostics]
        return out


def _prune(nodes: Sequence[ComponentNode]) -> tuple[ComponentNode, ...]:
    out: list[ComponentNode] = []
    for node in nodes:
        instances = tuple(replace(i, children=_prune(i.children)) for i in node.instances)
        pruned = replace(node, instances=instances)
        if pruned.external or not pruned.is_empty_grouping():
            out.append(pruned)
    return tuple(out)


def _extracted_to_dict(extracted: ExtractedInstance) -> dict[str, Any]:
    out: dict[str, Any] = dict(extracted.spec_parts())
    if extracted.scale is not None:
        out["scale"] = extracted.scale.to_dict()
    return out


def build_tree(
    factory: ComponentFactory,
    pods: Sequence[Pod] | None = None,
    *,
    evaluator: Evaluator | None = None,
    external_pods: Sequence[Pod] = (),
) -> WorkloadTree:
    """The workload tree of the factory's object; ``pods`` are the workload's live pods or None.
    ``external_pods`` (extension E2, with ``pods`` only): the pods listed by the labels of its
    external components; the pods of ``pods`` carrying those labels go to them too (offline, the
    given pods are matched the same way).

    Raises ValidationError (``invalid karta: <findings>``) for an invalid definition, and
    ExtractionError for a tree of more than :data:`MAX_TREE_NODES` instance nodes; extraction
    errors propagate. Pod-side evaluation errors become diagnostics, and the pod stays unplaced.
    """
    validate_or_raise(factory.karta)
    evaluator = evaluator if evaluator is not None else factory.evaluator
    builder = _Builder(factory)
    pool = None
    if pods is not None:
        own, external = split_external(external_selectors(factory), [*pods, *external_pods])
        functions = pod_functions(factory.karta, evaluator) if own or external else None
        pool = [PodQuerier(pod, evaluator=evaluator, functions=functions) for pod in own]
        builder.external = {
            name: [PodQuerier(pod, evaluator=evaluator, functions=functions) for pod in found]
            for name, found in external.items()
        }
    root = factory.karta.root
    root_node = builder.node(root, pool, with_children=False) if root.is_pod_bearing else None
    children = tuple(builder.node(child, pool) for child in builder.children_of(root.name))
    unattributed = None
    if pool is not None:
        unattributed = tuple(q.pod for q in pool if id(q) not in builder.placed)
    return WorkloadTree(
        status=factory.root().status(),
        children=children,
        root=root_node,
        unattributed=unattributed,
        diagnostics=tuple(builder.diagnostics),
    )


class _Builder:
    def __init__(self, factory: ComponentFactory) -> None:
        self.factory = factory
        karta = factory.karta
        self.sole_pod_bearing = sum(1 for c in karta.components if c.is_pod_bearing) == 1
        self._children: dict[str, list[ComponentDefinition]] = {}
        for child in karta.children:
            self._children.setdefault(child.owner_ref or "", []).append(child)
        self.placed: set[int] = set()
        self.external: dict[str, list[PodQuerier]] = {}  # extension E2: each external component's pods
        self.diagnostics: list[Finding] = []
        self._reported: set[tuple[int, str]] = set()
        self._nodes = 0

    def _count(self, definition: ComponentDefinition, nodes: int) -> None:
        self._nodes += nodes
        if self._nodes > MAX_TREE_NODES:
            raise ExtractionError(
                f"the workload tree has more than {MAX_TREE_NODES:,} instance nodes (at component "
                f"'{definition.name}'): every instance repeats the components below it, so the "
                "instance counts along a chain multiply"
            )

    def children_of(self, name: str) -> list[ComponentDefinition]:
        return self._children.get(name, [])

    def _diagnose(self, querier: PodQuerier, definition: ComponentDefinition, exc: PodQueryError) -> None:
        key = (id(querier), f"{definition.name}:{exc}")
        if key not in self._reported:
            self._reported.add(key)
            self.diagnostics.append(
                Finding(Severity.WARNING, f"pod {querier.name}: {exc}", f"components/{definition.name}")
            )

    def _claimed(self, definition: ComponentDefinition, pool: list[PodQuerier]) -> list[PodQuerier]:
        if not definition.is_pod_bearing:
            return pool
        selector = definition.pod_selector.component_type_selector if definition.pod_selector else None
        if selector is None or not (selector.key_path or selector.match_labels):
            return pool if self.sole_pod_bearing else []
        claimed: list[PodQuerier] = []
        for querier in pool:
            try:
                if querier.matches_component_type(definition):
                    claimed.append(querier)
            except PodQueryError as exc:
                self._diagnose(querier, definition, exc)
        return claimed

    def _by_instance(
        self, definition: ComponentDefinition, pods: list[PodQuerier], ids: list[str]
    ) -> dict[str, list[PodQuerier]]:
        if not definition.instance_id_path:
            return {instance_id: pods for instance_id in ids}
        out: dict[str, list[PodQuerier]] = {instance_id: [] for instance_id in ids}
        for querier in pods:
            try:
                out[querier.matching_instance_id(definition, ids)].append(querier)
            except PodQueryError as exc:
                self._diagnose(querier, definition, exc)
        return out

    def _by_replica(
        self, definition: ComponentDefinition, pods: list[PodQuerier]
    ) -> dict[str | None, list[PodQuerier]]:
        out: dict[str | None, list[PodQuerier]] = {}
        for querier in pods:
            try:
                key = querier.extract_replica_key(definition)
            except PodQueryError as exc:
                self._diagnose(querier, definition, exc)
                continue
            out.setdefault(key, []).append(querier)
        if not out:
            return {None: []}
        return {key: out[key] for key in sorted(out, key=natural_key)}

    def node(
        self, definition: ComponentDefinition, pool: list[PodQuerier] | None, *, with_children: bool = True
    ) -> ComponentNode:
        component = self.factory.component(definition.name)
        ids = component.instance_ids()
        extracted = component.extracted_instances()
        external = definition.pod_selector is not None and definition.pod_selector.external_pods is not None
        if external and pool is not None:
            pool = self.external.get(definition.name, [])
        pod_bearing = definition.is_pod_bearing or external
        splits_replicas = bool(definition.pod_selector and definition.pod_selector.replica_selector)
        own = None if pool is None else self._by_instance(definition, self._claimed(definition, pool), ids)
        instances: list[InstanceNode] = []
        for instance_id in sorted(ids):
            record = extracted.get(instance_id)
            groups: dict[str | None, list[PodQuerier] | None] = {None: None}
            if own is not None:
                mine = own[instance_id]
                groups = dict(self._by_replica(definition, mine)) if splits_replicas else {None: mine}
            self._count(definition, len(groups))
            for replica_key, members in groups.items():
                if pod_bearing and members:
                    self.placed.update(id(q) for q in members)
                children: tuple[ComponentNode, ...] = ()
                if with_children:
                    children = tuple(self.node(child, members) for child in self.children_of(definition.name))
                instances.append(
                    InstanceNode(
                        component=definition.name,
                        instance_key=instance_id or None,
                        replica_key=replica_key,
                        scale=record.scale if record is not None else None,
                        extracted=record,
                        children=children,
                        pods=tuple(q.pod for q in members) if pod_bearing and members else (),
                    )
                )
        return ComponentNode(
            name=definition.name,
            kind=definition.kind,
            has_pod_definition=pod_bearing and not external,
            instances=tuple(instances),
            external=external,
        )
