"""Workload types and workloads of a live cluster, seen through the definitions (17.4, 17.5).

Owns the cluster half of definition resolution; the rule itself is
:meth:`karta.definitions.DefinitionStore.definition_for`, so a workload read live resolves to the
same definition as its manifest read from a file.

- :func:`resolve_type`: a kubectl TYPE token to a definition and the served resource (17.4 "Type
  resolution"): API discovery first, its GVK resolved by the store (preferring versions the
  cluster serves); else the store's token rule (a kind or a guessed plural, qualified or not).
- :func:`covered_types`: every GroupKind a definition covers, once, at its most stable served
  version (``kli get --all-types``, the controller's informers).
- :class:`TopLevel`: whether a workload is top-level, none of its controllers being of a covered
  kind (17.4 ``--all-types``); :meth:`TopLevel.of` with ``gangs`` the same over the kinds whose
  definitions have gang instructions (:func:`gang_kinds`): the topmost workload with gang
  instructions owns the gang (a controller must not make gangs for a JobSet's Jobs, but does for
  a Katib Experiment's Trials and a CronJob's Jobs).
- :func:`owned_workloads`: the objects a workload may own through the kinds its definition names
  (``additionalChildKinds``), level by level, for its owner tree (:mod:`karta.report.owner_tree`).
- :func:`external_pods`: the pods a workload's external components select by labels (format
  extension E2: one LIST per component, by label selector, outside the owner chain).
- :func:`find_pods`: the pods whose controller-owner chain reaches a workload (17.5 rules 1-2),
  and what could not be read (:class:`WorkloadPods`: the pod list refused, owners forbidden), so
  that a report never shows a partial pod set as the whole; :func:`find_pods_many` the same for
  several workloads, each namespace's pods listed once; :func:`workload_pods` the same as a
  ``(pods, warnings)`` pair for the controller.

Errors are the library's: :class:`~karta.errors.NoDefinitionError`,
:class:`~karta.errors.AmbiguousDefinitionError` and :class:`~karta.errors.ClusterError`; callers
decide how to report them.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from karta.definitions import DefinitionStore, StoredDefinition
from karta.errors import (
    AmbiguousDefinitionError,
    ClusterError,
    KartaError,
    NoDefinitionError,
    UnknownResourceTypeError,
)
from karta.kube.client import KubeClient
from karta.kube.owners import OwnerChain, OwnerChains, OwnerLink, ReadFailure, controller_ref, read_failure
from karta.kube.resources import ResourceType
from karta.model.gvk import GVK, GroupKind, version_key

__all__ = [
    "CoveredType",
    "ResolvedType",
    "TopLevel",
    "UnreadOwners",
    "WorkloadPods",
    "covered_types",
    "external_pods",
    "find_pods",
    "find_pods_many",
    "gang_kinds",
    "owned_workloads",
    "pod_lineage",
    "resolve_type",
    "workload_pods",
]


@dataclass(frozen=True)
class ResolvedType:
    """A TYPE token resolved: the definition, and the resource to read (None: the kind is not
    served by this cluster; ``kind`` and ``group`` still name it for messages)."""

    definition: StoredDefinition
    resource: ResourceType | None
    kind: str
    group: str
    notes: tuple[str, ...] = ()  # what resolving it had to decide (DefinitionStore.notes_for)

    @property
    def installed(self) -> bool:
        return self.resource is not None


@dataclass(frozen=True)
class CoveredType:
    """A served resource and the definition its objects resolve through."""

    resource: ResourceType
    definition: StoredDefinition
    notes: tuple[str, ...] = ()  # what resolving it had to decide (DefinitionStore.notes_for)


def _served(client: KubeClient) -> Callable[[GVK], bool]:
    def served(gvk: GVK) -> bool:
        return client.discovery.find(*gvk) is not None

    return served


def resolve_type(token: str, *, client: KubeClient, store: DefinitionStore) -> ResolvedType:
    """17.4 "Type resolution" for ``token`` (see the module docstring).

    Raises :class:`NoDefinitionError` (nothing covers it), :class:`AmbiguousDefinitionError`
    (colliding definitions, or a token naming several covered kinds) and :class:`ClusterError`
    (discovery failed)."""
    try:
        rtype: ResourceType | None = client.discovery.resolve(token)
    except UnknownResourceTypeError:
        rtype = None
    if rtype is not None:
        chosen = store.definition_for(rtype.gvk, served=_served(client))
        version = chosen.gvk.version if chosen.gvk else rtype.version
        read = rtype if version == rtype.version else client.discovery.find(rtype.group, version, rtype.kind)
        notes = tuple(store.notes_for(rtype.gvk, chosen.gvk))
        return ResolvedType(chosen, read or rtype, rtype.kind, rtype.group, notes)
    try:
        only = store.definition_for_token(token)
    except NoDefinitionError:
        raise store.no_definition(f'"{token}" (and the server has no resource type "{token}")') from None
    assert only.gvk is not None
    return ResolvedType(only, None, only.gvk.kind, only.gvk.group, tuple(store.notes_for(only.gvk)))


def covered_types(client: KubeClient, store: DefinitionStore) -> tuple[list[CoveredType], list[str]]:
    """Every GroupKind a visible definition covers, once, at its most stable served version that
    can be listed (17.4 ``--all-types``), sorted by group and kind; plus one warning per GroupKind
    skipped because colliding or only invalid definitions claim it. Kinds the cluster does not
    serve are left out silently. Raises :class:`ClusterError` when discovery fails."""
    covered = {gvk.group_kind for gvk in store.gvks()}
    best: dict[GroupKind, ResourceType] = {}
    for r in client.discovery.resources():
        gk = GroupKind(r.group, r.kind)
        if (
            gk in covered
            and r.supports("list")
            and (gk not in best or version_key(r.version) > version_key(best[gk].version))
        ):
            best[gk] = r
    out: list[CoveredType] = []
    warnings: list[str] = []
    for gk in sorted(best):
        rtype = best[gk]
        try:
            chosen = store.definition_for(rtype.gvk, served=_served(client))
        except (AmbiguousDefinitionError, NoDefinitionError) as exc:  # colliding, or only invalid
            warnings.append(f"skipping {rtype.kind}: {exc}")
            continue
        out.append(CoveredType(rtype, chosen, tuple(store.notes_for(rtype.gvk, chosen.gvk))))
    return out, warnings


class TopLevel:
    """Which workloads are top-level: none of the controllers in their owner chain (depth ≤ 6) is
    of a covered GroupKind (17.4). Decided from the nearest controller reference where it can
    (no controller: top-level; one of a covered kind: nested); otherwise the chain is walked,
    owners read as metadata, cached and shared by every walk of this instance."""

    def __init__(
        self,
        client: KubeClient,
        covered: Iterable[GroupKind],
        *,
        readable: Container[tuple[str, str]] | None = None,
        chains: OwnerChains | None = None,
    ) -> None:
        self.client = client
        self.covered = frozenset(covered)
        self.readable = readable  # see OwnerChains
        self._chains: OwnerChains | None = chains  # None: its own, made on first use

    @classmethod
    def of(
        cls,
        client: KubeClient,
        store: DefinitionStore,
        *,
        readable: Container[tuple[str, str]] | None = None,
        chains: OwnerChains | None = None,
        gangs: bool = False,
    ) -> TopLevel:
        """The GroupKinds the store's definitions claim; with ``gangs``, for gang ownership, those
        whose definitions have gang instructions (:func:`gang_kinds`). The gang belongs to the
        topmost workload in the owner chain whose definition has gang instructions; owners above
        it without any (a Katib Experiment, a CronJob, a ScheduledSparkApplication) only contain
        it. So a workload owns its gang when none of its controllers is of such a kind, and
        :meth:`top_owner` is the workload whose gang its pods are in."""
        covered = gang_kinds(store) if gangs else (gvk.group_kind for gvk in store.gvks())
        return cls(client, covered, readable=readable, chains=chains)

    def by_reference(self, obj: Mapping[str, Any]) -> bool | None:
        """True: top-level (no controller); False: nested (the controller is of a covered kind);
        None: only the owner chain can tell (:meth:`walk`)."""
        ref = controller_ref(obj)
        if ref is None:
            return True
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        return False if GroupKind(group, str(ref.get("kind") or "")) in self.covered else None

    def walk(self, objs: Sequence[Mapping[str, Any]]) -> list[tuple[bool, str | None]]:
        """``(top-level, why the walk stopped early)`` per object, its whole owner chain walked; an
        object whose owners cannot all be read counts as top-level (the error says why)."""
        if self._chains is None:
            self._chains = OwnerChains(self.client, readable=self.readable)
        chains = self._chains.walk_many(objs)
        return [(not chain.has_owner_of_kind(self.covered), chain.error) for chain in chains]

    def is_top_level(self, obj: Mapping[str, Any]) -> bool:
        decided = self.by_reference(obj)
        return decided if decided is not None else self.walk([obj])[0][0]

    def top_owner(self, obj: Mapping[str, Any]) -> OwnerLink | None:
        """The topmost controller of a covered kind in the owner chain of ``obj`` (decided from the
        references, as :meth:`walk`); made with ``gangs``, the workload whose gang its pods are
        in (the gang reconciler makes none for ``obj`` itself); None when there is none (no
        controller: nothing is read)."""
        if controller_ref(obj) is None:
            return None
        if self._chains is None:
            self._chains = OwnerChains(self.client, readable=self.readable)
        chain = self._chains.walk(obj)
        covered = [link for link in chain.links if GroupKind(link.group, link.kind) in self.covered]
        return covered[-1] if covered else None


def gang_kinds(store: DefinitionStore) -> frozenset[GroupKind]:
    """The GroupKinds of the store's definitions that have gang instructions: the kinds that can
    own a gang (:meth:`TopLevel.of` with ``gangs``)."""
    from karta.gang import gang_format

    kinds: set[GroupKind] = set()
    for gvk in store.gvks():
        try:
            stored = store.definition_for(gvk)  # the one that wins (a user's overrides the catalog's)
        except KartaError:  # invalid or ambiguous: no gang from it (the tools say why elsewhere)
            continue
        if gang_format(stored.karta) is not None:
            kinds.add(gvk.group_kind)
    return frozenset(kinds)


@dataclass(frozen=True)
class UnreadOwners:
    """Pods whose owner chain stopped at owners that exist but could not be read (``failure``: the
    first such read; the others are the same verb, resource, namespace and reason): each may
    belong to the workload or not."""

    failure: ReadFailure
    pods: tuple[str, ...]


@dataclass(frozen=True)
class WorkloadPods:
    """The pods of one workload (sorted by name) and what could not be read: ``list_failure`` (the
    pod list itself was refused: no pods known) and ``unread`` (pods that may belong to it but
    whose owners could not be read). ``complete`` is False when either happened: the pods are then
    a part of the workload's, and counts made from them are not the workload's."""

    workload: str  # Kind/name, for messages
    pods: list[dict[str, Any]]
    unread: tuple[UnreadOwners, ...] = ()
    list_failure: ReadFailure | None = None

    @property
    def complete(self) -> bool:
        return self.list_failure is None and not self.unread

    @property
    def warnings(self) -> list[str]:
        """One line per failed read: what could not be done, why, and what is missing because of it."""
        out: list[str] = []
        if self.list_failure is not None:
            out.append(
                f"cannot {self.list_failure.what} ({self.list_failure.reason}): {self.workload} is shown "
                "without pods and its ready counts are unknown"
            )
        for group in self.unread:
            count = len(group.pods)
            pods = f"{count} pod{'s' if count != 1 else ''}"
            out.append(
                f"cannot {group.failure.what} ({group.failure.reason}): {pods} owned through them "
                f"{'are' if count != 1 else 'is'} not shown, and the ready counts of {self.workload} "
                "are unknown"
            )
        return out


def find_pods(
    client: KubeClient, obj: Mapping[str, Any], *, chains: OwnerChains | None = None
) -> WorkloadPods:
    """The pods of the workload ``obj`` (17.5 rules 1-2) and what could not be read.

    Every pod of the workload's namespace is read from the API server's cache (resourceVersion
    "0") and kept when its controller-owner chain reaches the workload's UID (depth ≤ 6, owner
    reads cached and shared through ``chains``). A bare Pod is its own pod. A pod list the cluster
    refuses, and pods whose chain stops at an owner that exists but cannot be read (forbidden, the
    server failing), are recorded, never raised; an owner that no longer exists (not found, kind
    not served, replaced) means the pod is not owned through it."""
    return find_pods_many(client, [obj], chains=chains)[0]


def find_pods_many(
    client: KubeClient, objs: Sequence[Mapping[str, Any]], *, chains: OwnerChains | None = None
) -> list[WorkloadPods]:
    """:func:`find_pods` of each of ``objs``, in order, with each namespace's pods listed once
    (a cluster-scoped workload's: every namespace's) and each pod's owner chain walked once."""
    out: list[WorkloadPods | None] = [None] * len(objs)
    by_namespace: dict[str | None, list[int]] = {}
    for index, obj in enumerate(objs):
        if obj.get("kind") == "Pod" and str(obj.get("apiVersion")) == "v1":
            out[index] = WorkloadPods(_label(obj), [dict(obj)])
            continue
        namespace = str((obj.get("metadata") or {}).get("namespace") or "") or None
        by_namespace.setdefault(namespace, []).append(index)
    walker = chains if chains is not None else OwnerChains(client)
    for namespace, indexes in by_namespace.items():
        for index, found in zip(
            indexes, _namespace_pods(client, namespace, [objs[i] for i in indexes], walker), strict=True
        ):
            out[index] = found
    assert all(found is not None for found in out)
    return cast("list[WorkloadPods]", out)


def _namespace_pods(
    client: KubeClient, namespace: str | None, objs: Sequence[Mapping[str, Any]], walker: OwnerChains
) -> list[WorkloadPods]:
    """:func:`find_pods` of ``objs``, every one in ``namespace``: one pod list, one walk per pod."""
    labels = [_label(obj) for obj in objs]
    try:
        pod_type = client.discovery.for_gvk("", "v1", "Pod")
        listed = client.list(pod_type, namespace=namespace, resource_version="0")
    except ClusterError as exc:
        failure = read_failure(exc, resource="pods", namespace=namespace or "", verb="list")
        return [WorkloadPods(label, [], list_failure=failure) for label in labels]
    uids = [str((obj.get("metadata") or {}).get("uid") or "") for obj in objs]
    candidates = [p for p in listed.items if controller_ref(p) is not None] if any(uids) else []
    reached: dict[str, list[dict[str, Any]]] = {}  # an owner's UID: the pods whose chain reaches it
    stopped: list[tuple[dict[str, Any], OwnerChain]] = []  # chains an unreadable owner stopped
    for pod, chain in zip(candidates, walker.walk_many(candidates) if candidates else [], strict=True):
        for uid in {link.uid for link in chain.links if link.uid}:
            reached.setdefault(uid, []).append(pod)
        if chain.failure is not None and not chain.failure.missing:
            stopped.append((pod, chain))
    out: list[WorkloadPods] = []
    for uid, label in zip(uids, labels, strict=True):
        if not uid:
            out.append(WorkloadPods(label, []))
            continue
        owned = sorted(reached.get(uid, ()), key=_name)
        unread: dict[tuple[str, str, str, str], tuple[ReadFailure, list[str]]] = {}
        for pod, chain in stopped:
            if not chain.reaches(uid) and chain.failure is not None:
                failure = chain.failure
                key = (failure.verb, failure.resource, failure.namespace, failure.reason)
                unread.setdefault(key, (failure, []))[1].append(_name(pod))
        groups = tuple(UnreadOwners(failure, tuple(sorted(names))) for failure, names in unread.values())
        out.append(WorkloadPods(label, owned, unread=groups))
    return out


def _label(obj: Mapping[str, Any]) -> str:
    return f"{obj.get('kind')}/{_name(obj)}"


def workload_pods(
    client: KubeClient, obj: Mapping[str, Any], *, chains: OwnerChains | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """:func:`find_pods` as ``(pods, warnings)``, with the warning only when the pod list itself
    was refused (the controller retries then); pods whose owners cannot be read are left out, as
    17.5 rule 2 says ("an unreadable chain means not owned")."""
    found = find_pods(client, obj, chains=chains)
    if found.list_failure is None:
        return found.pods, []
    return [], [
        f"could not list the pods of {found.workload}: {found.list_failure.message}; showing it without pods"
    ]


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def external_pods(
    client: KubeClient, obj: Mapping[str, Any], selectors: Mapping[str, Mapping[str, str]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Extension E2: ``(pods, warnings)``, the pods of the workload's namespace carrying each label
    map of ``selectors`` (an external component's name: its labels), one LIST per component from
    the API server's cache, through the same client (and RBAC) as the other reads; a refused list
    is a warning naming the component, never raised."""
    from karta.extract.external import label_selector

    namespace = str((obj.get("metadata") or {}).get("namespace") or "") or None
    pods: list[dict[str, Any]] = []
    warnings: list[str] = []
    if not selectors:
        return pods, warnings
    pod_type = client.discovery.for_gvk("", "v1", "Pod")
    for name, labels in selectors.items():
        text = label_selector(labels)
        try:
            listed = client.list(pod_type, namespace=namespace, label_selector=text, resource_version="0")
        except ClusterError as exc:
            failure = read_failure(exc, resource="pods", namespace=namespace or "", verb="list")
            warnings.append(
                f"could not list the pods of component {name} ({text}) of {_label(obj)}: {failure.message}"
            )
            continue
        pods.extend(dict(p) for p in listed.items)
    return pods, warnings


def owned_workloads(
    client: KubeClient,
    root: Mapping[str, Any],
    *,
    kinds_of: Callable[[Mapping[str, Any]], Iterable[tuple[str, str]]],
    max_depth: int = 6,
    max_objects: int = 256,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The objects a workload may own as its owner tree's nodes (:func:`karta.report.owner_tree`,
    which decides), and what could not be read (warnings, never raised).

    Level by level from ``root``: the kinds ``kinds_of`` names for an owner (its definition's
    ``additionalChildKinds``: :func:`karta.report.tree_kinds`, ``()`` for an object no definition
    describes) are listed in the root's namespace, once per kind (the most stable served version,
    from the API server's cache, ``resourceVersion=0``), and the objects whose controller
    ownerReference names an owner of the level above make the next level: at most ``max_depth``
    levels and ``max_objects`` objects. A kind the cluster does not serve is skipped; a list it
    refuses is a warning."""
    namespace = str((root.get("metadata") or {}).get("namespace") or "") or None
    listed: dict[tuple[str, str], list[dict[str, Any]]] = {}
    warnings: list[str] = []
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    level: list[Mapping[str, Any]] = [root]
    root_uid = str((root.get("metadata") or {}).get("uid") or "")
    if root_uid:
        seen.add(root_uid)
    for _ in range(max_depth):
        owners: dict[str, set[tuple[str, str]]] = {}
        for owner in level:
            uid = str((owner.get("metadata") or {}).get("uid") or "")
            if uid:
                owners[uid] = set(kinds_of(owner))
        below: list[Mapping[str, Any]] = []
        for group_kind in sorted({gk for kinds in owners.values() for gk in kinds}):
            if group_kind not in listed:
                listed[group_kind] = _list_kind(client, group_kind, namespace, warnings)
            for obj in listed[group_kind]:
                ref = controller_ref(obj) or {}
                uid = str((obj.get("metadata") or {}).get("uid") or "")
                parent = str(ref.get("uid") or "")
                if not uid or uid in seen or group_kind not in owners.get(parent, ()):
                    continue
                if len(found) >= max_objects:
                    return found, warnings
                seen.add(uid)
                found.append(obj)
                below.append(obj)
        level = below
        if not level:
            break
    return found, warnings


def pod_lineage(chains: OwnerChains, pods: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each pod's controller owners' UIDs, nearest first (``pod UID → UIDs``), from ``chains``: the
    walker that found the pods has them cached, so nothing is read again."""
    out: dict[str, list[str]] = {}
    items = [p for p in pods if str((p.get("metadata") or {}).get("uid") or "")]
    for pod, chain in zip(items, chains.walk_many(items), strict=True):
        out[str(pod["metadata"]["uid"])] = [link.uid for link in chain.links if link.uid]
    return out


def _list_kind(
    client: KubeClient, group_kind: tuple[str, str], namespace: str | None, warnings: list[str]
) -> list[dict[str, Any]]:
    group, kind = group_kind
    try:
        served = [
            r for r in client.discovery.resources() if (r.group, r.kind) == group_kind and r.supports("list")
        ]
    except ClusterError as exc:
        warnings.append(f"cannot read the API discovery for {kind}.{group}: {exc}")
        return []
    if not served:
        return []
    rtype = max(served, key=lambda r: version_key(r.version))
    try:
        return [dict(o) for o in client.list(rtype, namespace=namespace, resource_version="0").items]
    except ClusterError as exc:
        failure = read_failure(exc, resource=rtype.group_resource, namespace=namespace or "", verb="list")
        warnings.append(
            f"cannot {failure.what} ({failure.reason}): the {kind} objects it owns are not in its owner tree"
        )
        return []
