"""One cluster as a source of web-view rows: watches of every covered workload type, of the pods and
of the scheduler group objects, kept in memory and turned into rows (:mod:`karta.ui.rows`) in a
:class:`~karta.ui.store.RowStore`.

Owns :class:`ClusterSource`. Its thread lists and watches (:class:`karta.kube.MergedWatch`: resume,
re-list on 410, reconnect) the covered types (:func:`karta.kube.covered_types`), ``v1`` Pods and the
group-object resources of every gang backend the cluster serves (the registry,
:data:`karta.render.BACKENDS`), all namespaces. A workload is shown when it is top-level
(:class:`karta.kube.TopLevel`); a pod counts for every object of its controller-owner chain (the
direct owner from its reference, deeper ones read once and cached, :class:`karta.kube.OwnerChains`),
a group object for the objects its owner references name. Changes mark workloads dirty; their rows
are recomputed at most every :data:`FLUSH_SECONDS`, so a burst of pod events costs one row each.

Several clusters are several sources writing into one store (each row carries its cluster's
name): the store, the server and the page need nothing else. The workload page
(:meth:`ClusterSource.detail`) reads the Events of the workload and its unhealthy pods on request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karta import kube, report
from karta.definitions import DefinitionStore, StoredDefinition
from karta.errors import KartaError
from karta.extract.requests import DEFAULT_GPU_RESOURCES
from karta.render import BACKENDS
from karta.ui.detail import workload_detail
from karta.ui.rows import row_id, workload_row
from karta.ui.store import RowStore

__all__ = ["FLUSH_SECONDS", "MAX_OWNER_CACHE", "ClusterSource"]

FLUSH_SECONDS = 0.25
MAX_OWNER_CACHE = 20000  # owner reads cached before the cache starts again


@dataclass(frozen=True)
class _Watched:
    """What the watch at one index follows."""

    role: str  # "workload", "pods" or "groups"
    resource: kube.ResourceType
    definition: StoredDefinition | None = None


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _uid(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("uid") or "")


class ClusterSource:
    """The rows of one cluster (see the module docstring); ``run(stop)`` blocks, as a controller
    part does; :meth:`start` runs it in a thread for ``kli ui``."""

    def __init__(
        self,
        client: kube.KubeClient,
        definitions: Callable[[], DefinitionStore],
        *,
        store: RowStore,
        cluster: str = "default",
        gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES,
        after: threading.Event | None = None,
        readable: Container[tuple[str, str]] | None = None,
    ) -> None:
        self.name = f"ui-source/{cluster}"
        self.readable = readable  # the owner kinds read walking up from a pod (kube.OwnerChains)
        self.client = client
        self.cluster = cluster
        self.definitions = definitions
        self.store = store
        self.gpu_resources = tuple(gpu_resources)
        self.after = after  # set when the definitions are ready (the controller's first sync)
        self.synced = threading.Event()
        self._lock = threading.RLock()
        self._reload = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reset_state()

    def _reset_state(self) -> None:
        self._watched: list[_Watched] = []
        self._workloads: dict[str, tuple[dict[str, Any], StoredDefinition]] = {}
        self._by_index: dict[int, set[str]] = {}
        self._pods: dict[str, dict[str, Any]] = {}
        self._pod_links: dict[str, tuple[str, ...]] = {}
        self._pods_of: dict[str, set[str]] = {}
        # uid -> (Kind/name, owner uids, index of the watch it came from: a type's re-list replaces
        # that type's group objects only)
        self._groups: dict[str, tuple[str, tuple[str, ...], int]] = {}
        self._groups_of: dict[str, set[str]] = {}
        self._dirty: set[str] = set()
        self._unlinked: dict[str, dict[str, Any]] = {}  # pods held until the workloads are listed
        self._synced_indexes: set[int] = set()
        self._warnings: list[str] = []
        self._top: kube.TopLevel | None = None
        self._chains: kube.OwnerChains | None = None
        self._fresh = True  # no complete sync since the plan: the store may hold rows of an older one

    # -- life cycle -------------------------------------------------------------------------------
    def start(self) -> ClusterSource:
        self._thread = threading.Thread(target=self.run, args=(self._stop,), daemon=True, name=self.name)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def reload(self, _store: object = None) -> None:
        """The definitions changed: plan the watched types again (from any thread)."""
        self._reload.set()

    def run(self, stop: threading.Event) -> None:
        while self.after is not None and not self.after.wait(0.5):
            if stop.is_set():
                return
        while not stop.is_set():
            self._reload.clear()
            try:
                merged = self._plan()
            except KartaError as exc:  # discovery failed, or a definition could not be resolved
                self.store.set_state(self.cluster, synced=False, warnings=[f"cannot list the types: {exc}"])
                stop.wait(5.0)
                continue
            with merged:
                try:
                    self._follow(merged, stop)
                except KartaError as exc:  # not expected (rows catch their own): plan again
                    self.store.set_state(self.cluster, synced=False, warnings=[f"watching stopped: {exc}"])
                    stop.wait(1.0)

    def _plan(self) -> kube.MergedWatch:
        store = self.definitions()
        covered, skipped = kube.covered_types(self.client, store)
        with self._lock:
            self._reset_state()
            self._warnings = [*store.warnings, *skipped]
            self._top = kube.TopLevel.of(self.client, store, readable=self.readable)
            self._chains = kube.OwnerChains(self.client, readable=self.readable)
            for c in covered:
                self._watched.append(_Watched("workload", c.resource, c.definition))
            self._watched.append(_Watched("pods", self.client.discovery.for_gvk("", "v1", "Pod")))
            for rtype in self._group_types():
                self._watched.append(_Watched("groups", rtype))
        self.store.set_state(self.cluster, synced=False, warnings=self._warnings)
        return kube.MergedWatch(self.client, [w.resource for w in self._watched])

    def _group_types(self) -> list[kube.ResourceType]:
        wanted = {(b.api_group, plural) for b in BACKENDS.values() for plural in b.resources}
        best: dict[tuple[str, str], kube.ResourceType] = {}
        for r in self.client.discovery.resources():
            key = (r.group, r.plural)
            if key in wanted and r.supports("watch") and key not in best:
                best[key] = r
        return [best[k] for k in sorted(best)]

    def _follow(self, merged: kube.MergedWatch, stop: threading.Event) -> None:
        last_flush = time.monotonic()
        while not stop.is_set() and not self._reload.is_set():
            entry = merged.next(FLUSH_SECONDS)
            if entry is not None:
                self._apply(entry)
            now = time.monotonic()
            if now - last_flush >= FLUSH_SECONDS or entry is None:
                self._flush()
                last_flush = now

    # -- events -----------------------------------------------------------------------------------
    def _apply(self, entry: tuple[int, kube.SyncEvent | kube.WatchEvent] | kube.WatchFailed) -> None:
        if isinstance(entry, kube.WatchFailed):
            watched = self._watched[entry.index]
            with self._lock:
                self._warnings.append(f"stopped watching {watched.resource.group_resource}: {entry.error}")
                self._synced_indexes.add(entry.index)
            return
        index, event = entry
        if event.type == "BOOKMARK":
            return
        watched = self._watched[index]
        with self._lock:
            if isinstance(event, kube.SyncEvent):
                self._resync(index, watched, event.items)
                self._synced_indexes.add(index)
            elif event.type == "DELETED":
                self._delete(watched, event.object)
            else:
                self._upsert(index, watched, event.object)

    def _resync(self, index: int, watched: _Watched, items: list[dict[str, Any]]) -> None:
        if watched.role == "workload":
            for uid in list(self._by_index.get(index, ())):
                self._drop_workload(uid)
            if watched.definition is not None:
                self._add_workloads(index, watched.definition, items)
            return
        if watched.role == "pods":
            for uid in list(self._pods):
                self._drop_pod(uid)
            self._add_pods(items)
            return
        kept = {_uid(o) for o in items}
        for uid in [u for u, entry in self._groups.items() if entry[2] == index and u not in kept]:
            self._drop_group(uid)
        for obj in items:
            self._put_group(index, obj)

    def _upsert(self, index: int, watched: _Watched, obj: dict[str, Any]) -> None:
        if watched.role == "workload":
            if watched.definition is not None:
                self._add_workloads(index, watched.definition, [obj])
        elif watched.role == "pods":
            self._add_pods([obj])
        else:
            self._put_group(index, obj)

    def _delete(self, watched: _Watched, obj: dict[str, Any]) -> None:
        uid = _uid(obj)
        if watched.role == "workload":
            self._drop_workload(uid)
        elif watched.role == "pods":
            self._drop_pod(uid)
        else:
            self._drop_group(uid)

    # -- workloads --------------------------------------------------------------------------------
    def _add_workloads(self, index: int, definition: StoredDefinition, objs: list[dict[str, Any]]) -> None:
        assert self._top is not None
        undecided: list[dict[str, Any]] = []
        for obj in objs:
            decided = self._top.by_reference(obj)
            if decided is None:
                undecided.append(obj)
            elif decided:
                self._keep_workload(index, definition, obj)
            else:
                self._drop_workload(_uid(obj))
        if undecided:
            for obj, (top, _error) in zip(undecided, self._top.walk(undecided), strict=True):
                if top:
                    self._keep_workload(index, definition, obj)
                else:
                    self._drop_workload(_uid(obj))

    def _keep_workload(self, index: int, definition: StoredDefinition, obj: dict[str, Any]) -> None:
        uid = _uid(obj)
        if not uid:
            return
        self._workloads[uid] = (obj, definition)
        self._by_index.setdefault(index, set()).add(uid)
        self._dirty.add(uid)

    def _drop_workload(self, uid: str) -> None:
        if self._workloads.pop(uid, None) is not None:
            for uids in self._by_index.values():
                uids.discard(uid)
            self._dirty.add(uid)

    # -- pods -------------------------------------------------------------------------------------
    def _add_pods(self, pods: list[dict[str, Any]]) -> None:
        walk: list[dict[str, Any]] = []
        for pod in pods:
            uid = _uid(pod)
            if not uid:
                continue
            self._drop_pod(uid)
            self._pods[uid] = pod
            ref = kube.controller_ref(pod)
            if ref is None:
                self._link_pod(uid, (uid,))  # a bare pod is its own workload's pod
            elif str(ref.get("uid") or "") in self._workloads:
                self._link_pod(uid, (uid, str(ref.get("uid"))))
            elif not self._workloads_listed():
                self._unlinked[uid] = pod  # its owner may be a workload not listed yet
            else:
                walk.append(pod)
        self._walk_pods(walk)

    def _workloads_listed(self) -> bool:
        return all(i in self._synced_indexes for i, w in enumerate(self._watched) if w.role == "workload")

    def _link_unlinked(self) -> None:
        """The pods held while the workloads were being listed: linked directly or walked."""
        held, self._unlinked = list(self._unlinked.values()), {}
        walk: list[dict[str, Any]] = []
        for pod in held:
            ref = kube.controller_ref(pod) or {}
            if str(ref.get("uid") or "") in self._workloads:
                self._link_pod(_uid(pod), (_uid(pod), str(ref.get("uid"))))
            else:
                walk.append(pod)
        self._walk_pods(walk)

    def _walk_pods(self, walk: list[dict[str, Any]]) -> None:
        if walk:
            chains = self._owner_chains()
            for pod, chain in zip(walk, chains.walk_many(walk), strict=True):
                self._link_pod(_uid(pod), (_uid(pod), *(link.uid for link in chain.links if link.uid)))

    def _owner_chains(self) -> kube.OwnerChains:
        if self._chains is None or self._chains.reads > MAX_OWNER_CACHE:
            self._chains = kube.OwnerChains(self.client, readable=self.readable)
        return self._chains

    def _link_pod(self, uid: str, links: tuple[str, ...]) -> None:
        self._pod_links[uid] = links
        for owner in links:
            self._pods_of.setdefault(owner, set()).add(uid)
            if owner in self._workloads:
                self._dirty.add(owner)

    def _drop_pod(self, uid: str) -> None:
        self._pods.pop(uid, None)
        self._unlinked.pop(uid, None)
        for owner in self._pod_links.pop(uid, ()):
            members = self._pods_of.get(owner)
            if members is not None:
                members.discard(uid)
                if not members:
                    del self._pods_of[owner]
            if owner in self._workloads:
                self._dirty.add(owner)

    def pods_of(self, uid: str) -> list[dict[str, Any]]:
        with self._lock:
            obj = self._workloads.get(uid)
            if obj is not None and obj[0].get("kind") == "Pod" and obj[0].get("apiVersion") == "v1":
                return [obj[0]]
            found = [self._pods[p] for p in self._pods_of.get(uid, ()) if p in self._pods]
        return sorted(found, key=lambda p: str(_meta(p).get("name") or ""))

    # -- group objects ----------------------------------------------------------------------------
    def _put_group(self, index: int, obj: dict[str, Any]) -> None:
        uid = _uid(obj)
        self._drop_group(uid)
        refs = _meta(obj).get("ownerReferences")
        owners = tuple(
            str(r.get("uid")) for r in (refs if isinstance(refs, list) else ()) if isinstance(r, Mapping)
        )
        label = f"{obj.get('kind')}/{_meta(obj).get('name')} ({obj.get('apiVersion')})"
        self._groups[uid] = (label, owners, index)
        for owner in owners:
            self._groups_of.setdefault(owner, set()).add(uid)
            if owner in self._workloads:
                self._dirty.add(owner)

    def _drop_group(self, uid: str) -> None:
        found = self._groups.pop(uid, None)
        if found is None:
            return
        for owner in found[1]:
            members = self._groups_of.get(owner)
            if members is not None:
                members.discard(uid)
                if not members:
                    del self._groups_of[owner]
            if owner in self._workloads:
                self._dirty.add(owner)

    def group_objects_of(self, uid: str) -> list[str]:
        with self._lock:
            return sorted(self._groups[g][0] for g in self._groups_of.get(uid, ()) if g in self._groups)

    # -- rows -------------------------------------------------------------------------------------
    def _flush(self) -> None:
        with self._lock:
            if self._unlinked and self._workloads_listed():
                self._link_unlinked()
            dirty, self._dirty = self._dirty, set()
            work = [(uid, self._workloads.get(uid)) for uid in dirty]
            synced = len(self._synced_indexes) >= len(self._watched)
            warnings = list(self._warnings)
        for uid, found in work:
            if found is None:
                self.store.remove(row_id(self.cluster, uid))
                continue
            self.store.put(self.row(uid, *found))
        if synced and self._fresh:
            self._fresh = False
            with self._lock:
                keep = {row_id(self.cluster, uid) for uid in self._workloads}
            self.store.retain_cluster(self.cluster, keep)
        if synced and not self.synced.is_set():
            self.synced.set()
        self.store.set_state(self.cluster, synced=synced, warnings=warnings)

    def row(self, uid: str, obj: dict[str, Any], definition: StoredDefinition) -> dict[str, Any]:
        pods = self.pods_of(uid)
        with self._lock:
            groups = len(self._groups_of.get(uid, ()))
        return workload_row(
            obj,
            definition,
            cluster=self.cluster,
            pods=pods,
            gpu_resources=self.gpu_resources,
            group_objects=groups,
        )

    # -- the workload page ------------------------------------------------------------------------
    def detail(self, uid: str) -> dict[str, Any] | None:
        """Everything the workload page shows about ``uid`` (None: not a workload of this
        cluster); reads its Events (and those of its unhealthy pods) now."""
        with self._lock:
            found = self._workloads.get(uid)
        if found is None:
            return None
        obj, definition = found
        pods = self.pods_of(uid)
        namespace = str(_meta(obj).get("namespace") or "") or None
        events = kube.object_events(self.client, namespace, report.event_subjects(obj, pods))
        row = self.store.get(row_id(self.cluster, uid)) or self.row(uid, obj, definition)
        try:
            return workload_detail(
                obj,
                definition,
                row=row,
                pods=pods,
                events=events.events,
                events_read=events.failure is None,
                warnings=events.warnings,
                group_objects=self.group_objects_of(uid),
                gpu_resources=self.gpu_resources,
            )
        except KartaError as exc:
            return {"row": row, "error": f"cannot describe it with definition {definition.name}: {exc}"}
