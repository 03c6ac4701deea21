"""The RBAC a consumer of some Karta definitions needs (docs/spec/gang-backends.md#object-rules): a
ClusterRole with get/list/watch on the workload kinds and their pods and on ``kartas.run.ai``, plus each
chosen gang backend's rule for its group objects as its registry record states it
(:mod:`karta.render.backends`), and optionally a ClusterRoleBinding for a service account.

Finding a workload's pods reads the controller owners of every pod of its namespace (17.5), and
``kli describe`` reads Events, so the role also reads: the kinds the definitions name (their
components' kinds and ``additionalChildKinds``, and, through the ``related`` definitions of those
kinds, what those name in turn: a Milvus's Deployments own ReplicaSets), the kinds pods are most
often owned through whatever the workload (:data:`INTERMEDIATE_KINDS`: ReplicaSets, StatefulSets,
Jobs) and Events. :func:`owner_kinds` lists them. Kueue's queue state (``kli get``'s QUEUE
column, ``kli describe``'s Queue line, the web view's queue column and queue page) reads Kueue's
Workloads, ClusterQueues and LocalQueues: :data:`KUEUE_READ` (harmless where Kueue is not
installed), and the position of a pending Workload Kueue's visibility API
(:data:`KUEUE_VISIBILITY_GROUP`): ``get`` on ``localqueues/pendingworkloads``
(:func:`kueue_position_rule`), read-only.
The kinds a definition's references read (extension E3,
:func:`karta.references.referenced_kinds`: a TrainJob's training runtimes) are read too, by
every consumer (the controller included: its shared cache watches them), read-only.

Resource names are the CRDs' plurals when known (:func:`crd_plurals`), else a guess from the kind,
with a note saying so. Pure: the caller reads definitions and CRD files and prints the objects
(``kli rbac``; a controller's install manifests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta.model.names import plural_guess
from karta.render.backends import gang_backend

if TYPE_CHECKING:
    from karta.model import Karta

__all__ = [
    "INTERMEDIATE_KINDS",
    "KUEUE_GROUP",
    "KUEUE_READ",
    "KUEUE_VISIBILITY_GROUP",
    "READ_VERBS",
    "build_rbac",
    "crd_plurals",
    "kueue_position_rule",
    "owner_kinds",
    "rule",
]

READ_VERBS = ("get", "list", "watch")
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_READ = ("clusterqueues", "localqueues", "workloads")  # Kueue's queue state and queue page
KUEUE_VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"  # Kueue's visibility API (aggregated)


def rule(
    group: str, resources: Sequence[str], verbs: Sequence[str], names: Sequence[str] = ()
) -> dict[str, Any]:
    """One PolicyRule: ``verbs`` on ``resources`` of the API group ``group`` (``""``: core),
    limited to the objects ``names`` when given."""
    out: dict[str, Any] = {"apiGroups": [group], "resources": list(resources), "verbs": list(verbs)}
    if names:
        out["resourceNames"] = list(names)
    return out


#: (group, kind) of the owners most pods are created by (Deployment → ReplicaSet → Pod, StatefulSet,
#: Job, CronJob → Job): the owner walk of any workload reads them for the pods of its namespace.
INTERMEDIATE_KINDS: tuple[tuple[str, str], ...] = (
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("batch", "Job"),
)

# groups of built-in kinds, whose plurals are the regular lower-cased ones
_BUILT_IN_GROUPS = {"", "apps", "batch"}


def kueue_position_rule() -> dict[str, Any]:
    """Read a LocalQueue's pending Workloads and their positions (Kueue's visibility API)."""
    return rule(KUEUE_VISIBILITY_GROUP, ["localqueues/pendingworkloads"], ["get"])


def crd_plurals(documents: Iterable[Any]) -> dict[tuple[str, str], str]:
    """``(group, kind) → plural`` of the CustomResourceDefinitions among ``documents`` (those with
    ``spec.names.kind`` and ``spec.names.plural``); other documents are skipped."""
    out: dict[tuple[str, str], str] = {}
    for doc in documents:
        if not (isinstance(doc, Mapping) and doc.get("kind") == "CustomResourceDefinition"):
            continue
        spec = doc.get("spec")
        if not isinstance(spec, Mapping):
            continue
        names = spec.get("names")
        if isinstance(names, Mapping) and names.get("kind") and names.get("plural"):
            out[(str(spec.get("group", "")), str(names["kind"]))] = str(names["plural"])
    return out


def _named_kinds(karta: Karta) -> list[tuple[str, str]]:
    """(group, kind) of the components (root first) and ``additionalChildKinds`` of ``karta``."""
    named = [c.kind for c in karta.components if c.kind is not None and c.kind.kind]
    named.extend(g for g in karta.spec.structure_definition.additional_child_kinds if g.kind)
    return list(dict.fromkeys((g.group, g.kind) for g in named))


def owner_kinds(kartas: Sequence[Karta], related: Sequence[Karta] = ()) -> list[tuple[str, str]]:
    """(group, kind) of every kind the workloads of ``kartas`` are made of: their roots, the
    kinds they name (:func:`_named_kinds`) and, for each named kind some ``related`` definition
    has as its root, the kinds that one names, transitively; then :data:`INTERMEDIATE_KINDS`.
    In that order, each once."""
    by_root: dict[tuple[str, str], list[Karta]] = {}
    for other in related:
        gvk = other.root.kind
        if gvk is not None and gvk.kind:
            by_root.setdefault((gvk.group, gvk.kind), []).append(other)
    out: dict[tuple[str, str], None] = {}
    pending = [k for karta in kartas for k in _named_kinds(karta)]
    while pending:
        kind = pending.pop(0)
        if kind in out:
            continue
        out[kind] = None
        for other in by_root.get(kind, ()):
            pending.extend(k for k in _named_kinds(other) if k not in out)
    for kind in INTERMEDIATE_KINDS:
        out.setdefault(kind, None)
    return list(out)


def _referenced(kartas: Sequence[Karta]) -> list[tuple[str, str]]:
    """(group, kind) the references of ``kartas`` read (extension E3), each once."""
    from karta.references import referenced_kinds

    return list(
        dict.fromkeys((group, kind) for karta in kartas for group, _, kind in referenced_kinds(karta))
    )


def build_rbac(
    kartas: Sequence[Karta],
    *,
    name: str,
    backends: Sequence[str] = (),
    plurals: Mapping[tuple[str, str], str] | None = None,
    service_account: tuple[str, str] | None = None,
    related: Sequence[Karta] = (),
    owners: bool = True,
) -> tuple[list[dict[str, Any]], list[str]]:
    """``(objects, notes)``: the ClusterRole ``name`` (and its binding to ``service_account``,
    ``(namespace, name)``) and the comments explaining guesses. The role reads the kinds of
    :func:`owner_kinds` (``related``: the definitions consulted for the kinds ``kartas`` name),
    pods, Events, Kartas and Kueue's queues and Workloads (:data:`KUEUE_READ`) and pending
    positions (:func:`kueue_position_rule`); with ``owners``
    False (a consumer that reads only the workloads and their pods, such as the controller) the
    root kinds, pods and Kartas; in both, the kinds their references read (extension E3). An
    unknown backend is a
    GangError."""
    plurals = plurals or {}
    notes: list[str] = []
    by_group: dict[str, set[str]] = {"": {"pods", "events"} if owners else {"pods"}}
    roots: list[tuple[str, str]] = []
    for karta in kartas:
        gvk = karta.root.kind
        if gvk is None or not gvk.kind:
            notes.append(f"{karta.metadata.name} has no root kind; it adds nothing")
        else:
            roots.append((gvk.group, gvk.kind))
    kinds = owner_kinds(kartas, related) if owners else list(dict.fromkeys(roots))
    kinds.extend(k for k in _referenced(kartas) if k not in kinds)
    for group, kind in kinds:
        plural = plurals.get((group, kind))
        if plural is None:
            plural = plural_guess(kind)
            if group not in _BUILT_IN_GROUPS:
                notes.append(
                    f"{plural}.{group or 'core'}: plural of {kind} guessed (lower-cased kind + s); "
                    "pass --crd to use the CRD's"
                )
        by_group.setdefault(group, set()).add(plural)
    rules = [rule(group, sorted(resources), READ_VERBS) for group, resources in sorted(by_group.items())]
    rules.append(rule("run.ai", ["kartas"], READ_VERBS))
    if owners:
        rules.append(rule(KUEUE_GROUP, list(KUEUE_READ), READ_VERBS))
        rules.append(kueue_position_rule())
    rules.extend(gang_backend(backend).rbac_rule() for backend in backends)
    labels = {"app.kubernetes.io/managed-by": "karta"}
    role: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels},
        "rules": rules,
    }
    objects = [role]
    if service_account is not None:
        namespace, account = service_account
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name, "labels": labels},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
            }
        )
    return objects, notes
