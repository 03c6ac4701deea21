"""A workload's owner tree: the workloads it creates through other kinds, as one tree (issue 27
item 3), for ``kli describe`` and the web view's workload page.

Some kinds make their pods through another kind: a Katib Trial through a PyTorchJob or a Job, a
Tekton PipelineRun through TaskRuns, a KubeVirt VirtualMachine through its VirtualMachineInstance
(whose virt-launcher pod is its own), a Kubeflow Pipelines ScheduledWorkflow through Argo
Workflows, a Spark ScheduledSparkApplication through SparkApplications. The definition of the
top-level kind names those kinds in ``additionalChildKinds`` (docs/spec/format.md#field-meaning:
kinds its operator creates that are not modelled as components); this module is the tool that
walks them.

**The rule** (:func:`tree_kinds`, :func:`build_owner_tree`): an object is a node of the tree when its
``controller: true`` ownerReference names a node by UID, its GroupKind is one of the parent's
definition's ``additionalChildKinds`` and a definition describes it (a workload kind; Services,
claims, ConfigMaps and Pods are not nodes: pods are the leaves; nor are a Deployment's ReplicaSets,
:data:`REVISION_KINDS`). The root is the described workload. A pod is placed on the deepest node
its controller-owner chain reaches (its walk's owners, or the objects given: a Spark executor
through its driver pod); a pod whose chain reaches no node stays on the root (the caller found it
through the root).

**The gang** belongs to the topmost workload of the chain whose definition has gang instructions
(``gang`` is true on that node alone): the root when its definition has them (and no owner above
it is in a gang, ``in_gang``), else each topmost node below it that has them (an Experiment's
Trials, a CronJob's Jobs); the owners above it without instructions only contain it. That is the
rule karta-controller applies: its gang reconciler writes group objects for those workloads only
(:meth:`karta.kube.workloads.TopLevel.of` with ``gangs``), and its pod webhook binds each pod to the gang
of the topmost owner of its chain with gang instructions, so a PyTorchJob a Trial owns gets no
second, competing gang.

**Bounds.** At most :data:`MAX_DEPTH` levels below the root (the owner-chain depth of
docs/spec/format.md#workload-tree) and :data:`MAX_NODES` nodes; what the bounds leave out is counted
(``omitted``). Cycles cannot loop: every object is placed at most once, top-down from the root, so
an ownerReference cycle among the objects (hostile, or two objects pointing at each other) ends
where it meets a placed object. Objects with a foreign owner (not a node) and pods of other
workloads are ignored.

Pure: objects in, records out. The objects are read by :func:`karta.kube.owned_workloads` (live,
``kli describe``) or come from the web view's shared cache.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta._ordering import natural_key
from karta._records import record
from karta.report.pods import PodRow, pod_row

if TYPE_CHECKING:
    from karta.definitions import DefinitionStore, StoredDefinition
    from karta.model import Karta

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "REVISION_KINDS",
    "OwnerNode",
    "OwnerTree",
    "Resolve",
    "build_owner_tree",
    "child_kinds_of",
    "owner_resolver",
    "tree_kinds",
]

MAX_DEPTH = 6
"""Levels below the root (the owner-chain depth of docs/spec/format.md#workload-tree)."""
MAX_NODES = 64
"""Nodes in one tree, the root included."""

Resolve = Callable[[Mapping[str, Any]], "StoredDefinition | None"]


REVISION_KINDS: frozenset[tuple[str, str]] = frozenset(
    {("apps", "ReplicaSet"), ("apps", "ControllerRevision")}
)
"""A controller's revisions, never nodes: a Deployment's ReplicaSets hold the Deployment's own pods
(its component tree shows them) and one is kept per old revision; a pod is placed through them."""


def tree_kinds(karta: Karta) -> frozenset[tuple[str, str]]:
    """``(group, kind)`` of the objects a workload of ``karta`` may own as tree nodes: its
    ``additionalChildKinds`` but the core group's (Pods are leaves; Services, claims and ConfigMaps
    are no workloads) and :data:`REVISION_KINDS`. Whether a definition describes the kind is the
    caller's ``resolve``."""
    kinds = karta.spec.structure_definition.additional_child_kinds
    return frozenset(
        (gvk.group, gvk.kind)
        for gvk in kinds
        if gvk.group and gvk.kind and (gvk.group, gvk.kind) not in REVISION_KINDS
    )


def owner_resolver(store: DefinitionStore, *, served: Callable[[Any], bool] | None = None) -> Resolve:
    """An object's definition through ``store`` (the one resolution rule,
    :meth:`~karta.definitions.DefinitionStore.definition_for`; ``served``: the versions the
    cluster serves), None when none is usable (no definition, colliding or invalid ones), once per
    apiVersion and kind."""
    from karta.errors import KartaError
    from karta.model.gvk import GVK

    memo: dict[tuple[str, str], StoredDefinition | None] = {}

    def resolve(obj: Mapping[str, Any]) -> StoredDefinition | None:
        key = (_text(obj.get("apiVersion")), _text(obj.get("kind")))
        if key not in memo:
            found: StoredDefinition | None = None
            if key[0] and key[1]:
                try:
                    found = store.definition_for(GVK.of(*key), served=served)
                except (KartaError, ValueError):
                    found = None
            memo[key] = found if found is not None and not found.problems else None
        return memo[key]

    return resolve


def child_kinds_of(
    store: DefinitionStore, resolve: Resolve
) -> Callable[[Mapping[str, Any]], frozenset[tuple[str, str]]]:
    """What :func:`karta.kube.owned_workloads` lists below an object: the :func:`tree_kinds` of
    its definition (none without one) that a definition of ``store`` describes (a Service or an
    HTTPRoute a definition names is never listed: it could not be a node)."""
    covered = frozenset((gvk.group, gvk.kind) for gvk in store.gvks())

    def kinds(obj: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
        found = resolve(obj)
        return tree_kinds(found.karta) & covered if found is not None else frozenset()

    return kinds


@record(frozen=False)
class OwnerNode:
    """One workload of the tree: the object's identity, its status through its own definition
    (``phases``; ``error`` when it could not be read), the pods placed on it (not its children's),
    its children, and ``gang``: this node's definition's gang instructions own the gang (the root's
    only)."""

    kind: str
    api_version: str
    name: str
    uid: str
    definition: str | None
    phases: tuple[str, ...]
    error: str | None
    pods: list[PodRow]
    children: list[OwnerNode]
    gang: bool = False

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}"

    def totals(self) -> tuple[int, int, int]:
        """``(ready, total, gpus)`` of the pods of this node and every node below it."""
        ready = sum(1 for p in self.pods if p.ready)
        total = len(self.pods)
        gpus = sum(p.resources.gpus for p in self.pods)
        for child in self.children:
            r, t, g = child.totals()
            ready, total, gpus = ready + r, total + t, gpus + g
        return ready, total, gpus

    def to_dict(self) -> dict[str, Any]:
        ready, total, gpus = self.totals()
        out: dict[str, Any] = {
            "kind": self.kind,
            "apiVersion": self.api_version,
            "name": self.name,
            "uid": self.uid,
            "definition": self.definition,
            "phases": list(self.phases),
        }
        if self.error is not None:
            out["error"] = self.error
        out["gang"] = self.gang
        out["pods"] = {"ready": ready, "total": total}
        out["gpus"] = gpus
        out["ownPods"] = [p.name for p in self.pods]
        out["children"] = [c.to_dict() for c in self.children]
        return out


@record
class OwnerTree:
    """The root node, how many objects the bounds left out, and the gang's owner (``Kind/name`` of
    the root when its definition has gang instructions, else None)."""

    root: OwnerNode
    omitted: int = 0

    @property
    def gang_owner(self) -> str | None:
        return self.root.label if self.root.gang else None

    @property
    def nested(self) -> bool:
        """The root owns at least one workload (a tree worth showing)."""
        return bool(self.root.children)

    def nodes(self) -> list[OwnerNode]:
        """Every node, depth first from the root."""
        out: list[OwnerNode] = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"gangOwner": self.gang_owner, "root": self.root.to_dict()}
        if self.omitted:
            out["omitted"] = self.omitted
        return out


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _uid(obj: Mapping[str, Any]) -> str:
    return _text(_meta(obj).get("uid"))


def _controller_uid(obj: Mapping[str, Any]) -> str:
    refs = _meta(obj).get("ownerReferences")
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return _text(ref.get("uid"))
    return ""


def _group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    return _text(obj.get("apiVersion")).rpartition("/")[0], _text(obj.get("kind"))


def build_owner_tree(
    root: Mapping[str, Any],
    definition: StoredDefinition,
    *,
    objects: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    resolve: Resolve,
    gpu_resources: Sequence[str],
    status_of: Callable[[StoredDefinition, Mapping[str, Any]], tuple[tuple[str, ...], str | None]]
    | None = None,
    lineage: Mapping[str, Sequence[str]] | None = None,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
    in_gang: bool = False,
) -> OwnerTree:
    """The owner tree of ``root`` (described with ``definition``) from ``objects`` (candidate
    children, of any kind and owner: only those the rule places become nodes) and ``pods`` (the
    root's pods, as :func:`karta.kube.find_pods` finds them); ``resolve`` gives an object's
    definition (None: no definition describes it, it is not a node); ``status_of`` its phases and
    an error (default: :func:`karta.report.summarize`'s phases, without pods); ``lineage``: a
    pod's controller owners' UIDs, nearest first, as its owner-chain walk read them (a pod owned
    through an object not given, such as a Deployment's ReplicaSet, is placed through them);
    ``in_gang``: the root's pods are in the gang of a workload that owns it (it and its nodes own
    none)."""
    from karta.gang import gang_format

    status = status_of if status_of is not None else _phases
    by_parent: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objects:
        parent, uid = _controller_uid(obj), _uid(obj)
        if parent and uid:
            by_parent.setdefault(parent, []).append(obj)
    root_uid = _uid(root)
    placed: set[str] = {root_uid} if root_uid else set()
    node_of: dict[str, OwnerNode] = {}
    phases, error = status(definition, root)
    top = _node(root, definition, phases, error)
    top.gang = not in_gang and gang_format(definition.karta) is not None
    if root_uid:
        node_of[root_uid] = top
    omitted = 0
    count = 1
    # a node with its definition and whether it or a node above it owns the gang
    level: list[tuple[OwnerNode, StoredDefinition, bool]] = [(top, definition, in_gang or top.gang)]
    for depth in range(1, max_depth + 2):
        below: list[tuple[OwnerNode, StoredDefinition, bool]] = []
        for node, node_definition, ganged in level:
            kinds = tree_kinds(node_definition.karta)
            children = sorted(
                by_parent.get(node.uid, ()), key=lambda o: natural_key(_text(_meta(o).get("name")))
            )
            for child in children:
                uid = _uid(child)
                if uid in placed or _group_kind(child) not in kinds:
                    continue  # placed already (a cycle, a duplicate) or not a workload it creates
                child_definition = resolve(child)
                if child_definition is None:
                    continue
                placed.add(uid)
                if depth > max_depth or count >= max_nodes:
                    omitted += 1
                    continue
                phases, error = status(child_definition, child)
                made = _node(child, child_definition, phases, error)
                made.gang = not ganged and gang_format(child_definition.karta) is not None
                node.children.append(made)
                node_of[uid] = made
                count += 1
                below.append((made, child_definition, ganged or made.gang))
        level = below
        if not level:
            break
    _place_pods(
        top,
        node_of,
        objects=objects,
        pods=pods,
        lineage=lineage or {},
        gpu_resources=gpu_resources,
        max_depth=max_depth,
    )
    return OwnerTree(top, omitted)


def _node(
    obj: Mapping[str, Any], definition: StoredDefinition, phases: tuple[str, ...], error: str | None
) -> OwnerNode:
    return OwnerNode(
        kind=_text(obj.get("kind")),
        api_version=_text(obj.get("apiVersion")),
        name=_text(_meta(obj).get("name")),
        uid=_uid(obj),
        definition=definition.name,
        phases=phases,
        error=error,
        pods=[],
        children=[],
    )


def _place_pods(
    top: OwnerNode,
    node_of: Mapping[str, OwnerNode],
    *,
    objects: Collection[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    lineage: Mapping[str, Sequence[str]],
    gpu_resources: Sequence[str],
    max_depth: int,
) -> None:
    """Each pod on the nearest node of its ``lineage``, else of its controller chain climbed
    through ``objects`` and the pods (at most ``max_depth + 1`` links), else on the root."""
    parent_of: dict[str, str] = {}
    for obj in (*objects, *pods):
        uid = _uid(obj)
        if uid:
            parent_of.setdefault(uid, _controller_uid(obj))
    for pod in pods:
        owner = _controller_uid(pod)
        target = top
        known = [node_of[uid] for uid in lineage.get(_uid(pod), ()) if uid in node_of]
        if known:
            owner, target = "", known[0]
        for _ in range(max_depth + 1):
            if not owner:
                break
            found = node_of.get(owner)
            if found is not None:
                target = found
                break
            owner = parent_of.get(owner, "")
        target.pods.append(pod_row(pod, gpu_resources=gpu_resources))
    for node in {id(n): n for n in (top, *node_of.values())}.values():
        node.pods.sort(key=lambda p: natural_key(p.name))


def _phases(definition: StoredDefinition, obj: Mapping[str, Any]) -> tuple[tuple[str, ...], str | None]:
    """The phases of ``obj`` through ``definition`` (its status only), or why they are unknown."""
    from karta.errors import KartaError
    from karta.report.summary import summarize

    if definition.problems:
        return (), "; ".join(definition.problems[:1])
    try:
        read = summarize(definition, obj, gpu_resources=())
    except KartaError as exc:
        return (), str(exc)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        return (), f"cannot read it: {exc}"
    return tuple(read.phases), None
