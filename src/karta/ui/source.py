"""One cluster as a source of web-view rows: every covered workload type, the pods and the
scheduler group objects, read from the shared cache and turned into rows (:mod:`karta.ui.rows`)
in a :class:`~karta.ui.store.RowStore`.

Owns :class:`ClusterSource`. The types come from the covered-types tracker
(:class:`karta.kube.tracker.CoveredTypes`: read again as definitions, CRDs and discovery change);
the objects from references on the shared informer cache (:class:`karta.kube.cache.SharedCache`)
of each covered type, of ``v1`` Pods and of the group-object resources of every gang backend the
cluster serves (the registry, :data:`karta.render.BACKENDS`: those the controller made and any
other, e.g. a Volcano Job's own PodGroup), all namespaces. In ``karta-controller --ui`` the cache
and the tracker are the controller's (one list and one watch of each resource, whichever parts
read it); ``kli ui`` gives none, and the source makes and runs its own.

A workload is shown when it is top-level (:class:`karta.kube.TopLevel`); a pod counts for every
object of its controller-owner chain (the direct owner from its reference, deeper ones read once
and cached, :class:`karta.kube.OwnerChains`), a group object for the objects its owner references
name. The cache's handlers only queue what changed; the source's thread applies it (owner reads
included, never on an informer's thread). Changes mark workloads dirty; their rows are recomputed
at most every :data:`FLUSH_SECONDS`, so a burst of pod events costs one row each. When the covered
types change, the source takes references for the new plan (the objects already cached are
replayed, nothing is listed again) and releases the old ones.

Kueue (when the cluster serves ``workloads.kueue.x-k8s.io``): the Workloads are followed too (one
more watch, all namespaces), indexed by their controller owner's uid, so that a row's queue
state (:func:`karta.report.queue_detail`, the ``queue`` of the row) changes with its Workload; a
refused watch makes the state of the rows carrying a queue label ``Unknown`` (never stale), a
warning says why. The queue page (:meth:`ClusterSource.queues`) reads the ClusterQueues and
LocalQueues on request (:func:`karta.kube.kueue_queues`, :func:`karta.report.queue_rows`).

Several clusters are several sources writing into one store (each row carries its cluster's
name): the store, the server and the page need nothing else. The workload page
(:meth:`ClusterSource.detail`) reads the Events of the workload and its unhealthy pods on request,
and the labels of its namespace (whether it is in the gang-scheduling scope).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from karta import kube, report
from karta.definitions import DefinitionStore, StoredDefinition
from karta.errors import KartaError
from karta.extract.requests import DEFAULT_GPU_RESOURCES
from karta.kube.cache import SharedCache, Watch
from karta.kube.informer import Handler
from karta.kube.kueue import GROUP as KUEUE_GROUP
from karta.kube.reference_index import ReferenceIndex
from karta.kube.tracker import Coverage, CoveredTypes, following
from karta.render import BACKENDS
from karta.ui.detail import workload_detail
from karta.ui.rows import row_id, workload_row
from karta.ui.store import RowStore

if TYPE_CHECKING:
    from karta.jq import Evaluator

__all__ = ["FLUSH_SECONDS", "MAX_OWNER_CACHE", "ClusterSource"]

FLUSH_SECONDS = 0.25
MAX_OWNER_CACHE = 20000  # owner reads cached before the cache starts again
BATCH = 2000  # queued events applied at once (between flushes)
NODES_SECONDS = 60.0  # the Nodes listed for the capacity page at most this often (a list of every Node)

# What a handler queues: (plan generation, index of the watch, event type, object), or the error
# of the watch at that index (type "ERROR").
_Event = tuple[int, int, str, Any]


@dataclass(frozen=True)
class _Watched:
    """What the watch at one index follows."""

    role: str  # "workload", "pods", "groups" or "kueue" (Kueue's Workloads)
    resource: kube.ResourceType
    definition: StoredDefinition | None = None


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _uid(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("uid") or "")


def kueue_workload_resource(resources: Sequence[kube.ResourceType]) -> kube.ResourceType | None:
    """Kueue's served ``Workload`` resource (its preferred version: discovery's first), if any."""
    return next(
        (
            r
            for r in resources
            if r.group == KUEUE_GROUP and r.kind == "Workload" and r.supports("list", "watch")
        ),
        None,
    )


def group_resources(resources: Sequence[kube.ResourceType]) -> list[kube.ResourceType]:
    """The served group-object resources of every backend of the registry, one version each
    (the first watchable one discovery gives)."""
    wanted = {(b.api_group, plural) for b in BACKENDS.values() for plural in b.resources}
    best: dict[tuple[str, str], kube.ResourceType] = {}
    for r in resources:
        key = (r.group, r.plural)
        if key in wanted and r.supports("list", "watch") and key not in best:
            best[key] = r
    return [best[k] for k in sorted(best)]


class ClusterSource:
    """The rows of one cluster (see the module docstring); ``run(stop)`` blocks, as a controller
    part does; :meth:`start` runs it in a thread for ``kli ui``. ``cache`` and ``tracker``: the
    controller's, shared; None: the source's own (``definitions`` is then read by its tracker)."""

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
        cache: SharedCache | None = None,
        tracker: CoveredTypes | None = None,
        scope_mode: str | None = None,
        scope_excluded: Sequence[str] = (),
    ) -> None:
        self.name = f"ui-source/{cluster}"
        # the gang-scheduling scope the workload page shows: the controller's --gang-scope and
        # excluded namespaces (karta-controller --ui), or unknown (kli ui: what each mode decides)
        self.scope_mode = scope_mode
        self.scope_excluded = tuple(scope_excluded)
        self.readable = readable  # the owner kinds read walking up from a pod (kube.OwnerChains)
        self.client = client
        self.cluster = cluster
        self.definitions = definitions
        self.store = store
        self.gpu_resources = tuple(gpu_resources)
        self.cache = cache or SharedCache(client)
        self.tracker = tracker or CoveredTypes(client, definitions, after=after)
        self._own: list[SharedCache | CoveredTypes] = []
        if cache is None:
            self._own.append(self.cache)
        if tracker is None:
            self._own.append(self.tracker)
        self.synced = threading.Event()
        self._lock = threading.RLock()
        self._events: queue.Queue[_Event] = queue.Queue()
        self._coverage: Coverage | None = None  # the last one heard, not planned yet
        self._plan_key: tuple[Any, ...] | None = None
        self._generation = 0
        self._watches: list[Watch] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._kueue_served = False
        self._nodes: tuple[float, list[dict[str, Any]] | None, str | None] | None = None
        self._nodes_lock = threading.Lock()
        # Extension E3: references from the shared cache; a referenced object's change marks the
        # rows of the workloads that read it (a runtime edited: its TrainJobs' rows change).
        self.references = ReferenceIndex(client, self.cache, on_change=self._reference_changed)
        self._reset_state()

    def _reset_state(self) -> None:
        self._watched: list[_Watched] = []
        self._workloads: dict[str, tuple[dict[str, Any], StoredDefinition]] = {}
        self._pods: dict[str, dict[str, Any]] = {}
        self._pod_links: dict[str, tuple[str, ...]] = {}
        self._pods_of: dict[str, set[str]] = {}
        # uid -> (Kind/name, owner uids)
        self._groups: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._groups_of: dict[str, set[str]] = {}
        # Kueue Workloads: uid -> (object, controller owner uid); owner uid -> Workload uids
        self._kueue: dict[str, tuple[dict[str, Any], str]] = {}
        self._kueue_of: dict[str, set[str]] = {}
        self._kueue_failed: str | None = None  # why the Workloads cannot be watched
        self._dirty: set[str] = set()
        self._unlinked: dict[str, dict[str, Any]] = {}  # pods held until the workloads are listed
        self._synced_indexes: set[int] = set()
        self._warnings: list[str] = []
        self._failed: dict[int, str] = {}  # the watches the cluster refuses, with the error
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

    def run(self, stop: threading.Event) -> None:
        self.store.set_state(self.cluster, synced=False, warnings=[])
        try:
            with following(self.tracker, self._covered, stop, own=self._own):
                self._follow(stop)
        finally:
            self._release(self._watches)
            self._watches = []
            self.references.close()

    def _covered(self, coverage: Coverage) -> None:
        """A read of the types (the tracker's thread): planned by the source's thread."""
        with self._lock:
            self._coverage = coverage

    def _follow(self, stop: threading.Event) -> None:
        last_flush = time.monotonic()
        while not stop.is_set():
            with self._lock:
                coverage, self._coverage = self._coverage, None
            if coverage is not None:
                self._plan(coverage)
            try:
                first: _Event | None = self._events.get(timeout=FLUSH_SECONDS)
            except queue.Empty:
                first = None
            if first is not None:
                self._apply([first, *self._queued(BATCH)])
            now = time.monotonic()
            if now - last_flush >= FLUSH_SECONDS or first is None:
                self._flush()
                last_flush = now

    def _queued(self, most: int | None = None) -> list[_Event]:
        """The events queued now (at most ``most``), without waiting."""
        out: list[_Event] = []
        while most is None or len(out) < most:
            try:
                out.append(self._events.get_nowait())
            except queue.Empty:
                break
        return out

    # -- the plan ---------------------------------------------------------------------------------
    def _plan(self, coverage: Coverage) -> None:
        """Follow what ``coverage`` says is covered: the same plan keeps its references (only the
        warnings change); another takes new ones (the cached objects replayed) and releases the
        old ones after, so that a shared informer never stops in between."""
        store = coverage.store
        pods = coverage.resource("", "v1", "Pod")
        watched = [
            _Watched("workload", c.resource, c.definition)
            for _, c in sorted(coverage.types.items(), key=lambda item: item[0])
        ]
        if pods is not None:
            watched.append(_Watched("pods", pods))
        watched.extend(_Watched("groups", r) for r in group_resources(coverage.resources))
        kueue = kueue_workload_resource(coverage.resources)
        self._kueue_served = any(
            r.group == KUEUE_GROUP and r.kind == "ClusterQueue" for r in coverage.resources
        )
        if kueue is not None:
            watched.append(_Watched("kueue", kueue))
        key = (
            tuple((w.role, w.resource.gvk) for w in watched),
            tuple(coverage.types[gk].definition for gk in sorted(coverage.types)),
            tuple(sorted(str(gvk) for gvk in store.gvks())),
        )
        warnings = [*store.warnings, *coverage.warnings]
        with self._lock:
            if key == self._plan_key:
                self._warnings = warnings + list(self._failed.values())
                return
            self._plan_key = key
            self._generation += 1
            generation = self._generation
            self._reset_state()
            self._warnings = warnings
            self._watched = watched
            self._top = kube.TopLevel.of(self.client, store, readable=self.readable)
            self._chains = kube.OwnerChains(self.client, readable=self.readable)
        self.store.set_state(self.cluster, synced=False, warnings=warnings)
        old, self._watches = self._watches, []
        for index, w in enumerate(watched):
            self._watches.append(
                self.cache.watch(
                    w.resource,
                    handler=self._handler(generation, index),
                    on_error=self._error_handler(generation, index),
                )
            )
        self._release(old)

    def _handler(self, generation: int, index: int) -> Handler:
        def queued(kind: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
            self._events.put((generation, index, kind, obj))

        return queued

    def _error_handler(self, generation: int, index: int) -> Callable[[KartaError], None]:
        return lambda exc: self._events.put((generation, index, "ERROR", exc))

    @staticmethod
    def _release(watches: list[Watch]) -> None:
        for watch in watches:
            watch.release()

    # -- events -----------------------------------------------------------------------------------
    def _apply(self, entries: list[_Event]) -> None:
        """Apply queued events in order; a run of changes of one watch is applied together (one
        owner walk for a list's objects)."""
        with self._lock:
            run: list[dict[str, Any]] = []
            run_index = -1
            for generation, index, kind, obj in entries:
                if generation != self._generation:
                    continue  # a reference of an older plan, released
                if run and (index != run_index or kind in ("ERROR", "DELETED")):
                    self._upsert(self._watched[run_index], run)
                    run = []
                watched = self._watched[index]
                if kind == "ERROR":
                    if index not in self._failed:
                        self._failed[index] = f"cannot watch {watched.resource.group_resource}: {obj}"
                        self._warnings.append(self._failed[index])
                    if watched.role == "kueue" and self._kueue_failed is None:
                        self._kueue_failed = self._failed[index]
                        self._dirty.update(u for u, (o, _) in self._workloads.items() if report.queue_name(o))
                    self._synced_indexes.add(index)  # refused: nothing to wait for (retried meanwhile)
                elif kind == "DELETED":
                    self._delete(watched, obj)
                else:
                    run.append(obj)
                    run_index = index
            if run:
                self._upsert(self._watched[run_index], run)

    def _drain(self) -> None:
        """Every queued event applied, and the watches synced before it marked so: an informer
        queues its whole list before it says it is synced."""
        with self._lock:
            synced = [i for i, watch in enumerate(self._watches) if watch.synced.is_set()]
        self._apply(self._queued())
        with self._lock:
            self._synced_indexes.update(synced)

    def _upsert(self, watched: _Watched, objs: list[dict[str, Any]]) -> None:
        objs = list({_uid(obj) or str(id(obj)): obj for obj in objs}.values())  # each one as it is now
        if watched.role == "workload":
            if watched.definition is not None:
                self._add_workloads(watched.definition, objs)
        elif watched.role == "pods":
            self._add_pods(objs)
        elif watched.role == "kueue":
            for obj in objs:
                self._put_kueue(obj)
        else:
            for obj in objs:
                self._put_group(obj)

    def _delete(self, watched: _Watched, obj: dict[str, Any]) -> None:
        uid = _uid(obj)
        if watched.role == "workload":
            self._drop_workload(uid)
        elif watched.role == "pods":
            self._drop_pod(uid)
        elif watched.role == "kueue":
            self._drop_kueue(uid)
        else:
            self._drop_group(uid)

    # -- workloads --------------------------------------------------------------------------------
    def _add_workloads(self, definition: StoredDefinition, objs: list[dict[str, Any]]) -> None:
        assert self._top is not None
        undecided: list[dict[str, Any]] = []
        for obj in objs:
            decided = self._top.by_reference(obj)
            if decided is None:
                undecided.append(obj)
            elif decided:
                self._keep_workload(definition, obj)
            else:
                self._drop_workload(_uid(obj))
        if undecided:
            for obj, (top, _error) in zip(undecided, self._top.walk(undecided), strict=True):
                if top:
                    self._keep_workload(definition, obj)
                else:
                    self._drop_workload(_uid(obj))

    def _keep_workload(self, definition: StoredDefinition, obj: dict[str, Any]) -> None:
        uid = _uid(obj)
        if not uid:
            return
        self._workloads[uid] = (obj, definition)
        self._dirty.add(uid)

    def _drop_workload(self, uid: str) -> None:
        if self._workloads.pop(uid, None) is not None:
            self._dirty.add(uid)
        self.references.forget(uid)

    def _reference_changed(self, reader: object) -> None:
        """A referenced object a workload reads changed (an informer's thread): its row again."""
        if isinstance(reader, str):
            with self._lock:
                self._dirty.add(reader)

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

    def external_pods_of(
        self, obj: Mapping[str, Any], definition: StoredDefinition, *, evaluator: Evaluator | None = None
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """Extension E2: the cached pods of the workload's namespace its external components select
        by labels (the watch holds every pod: no extra list), and why they could not be selected."""
        from karta.extract.external import matches

        try:
            selectors = report.external_selectors_of(definition, obj, evaluator=evaluator)
        except KartaError as exc:
            return [], [f"cannot select the external pods: {exc}"]
        if not selectors:
            return [], []
        namespace = str(_meta(obj).get("namespace") or "")
        with self._lock:
            found = [
                pod
                for pod in self._pods.values()
                if str(_meta(pod).get("namespace") or "") == namespace
                and any(matches(pod, labels) for labels in selectors.values())
            ]
        return sorted(found, key=lambda p: str(_meta(p).get("name") or "")), []

    # -- group objects ----------------------------------------------------------------------------
    def _put_group(self, obj: dict[str, Any]) -> None:
        uid = _uid(obj)
        self._drop_group(uid)
        refs = _meta(obj).get("ownerReferences")
        owners = tuple(
            str(r.get("uid")) for r in (refs if isinstance(refs, list) else ()) if isinstance(r, Mapping)
        )
        label = f"{obj.get('kind')}/{_meta(obj).get('name')} ({obj.get('apiVersion')})"
        self._groups[uid] = (label, owners)
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

    # -- Kueue Workloads --------------------------------------------------------------------------
    def _put_kueue(self, obj: dict[str, Any]) -> None:
        uid = _uid(obj)
        if not uid:
            return
        self._drop_kueue(uid)
        ref = kube.controller_ref(obj)
        owner = str((ref or {}).get("uid") or "")
        self._kueue[uid] = (obj, owner)
        self._kueue_failed = None  # listed: the watch works (again)
        if owner:
            self._kueue_of.setdefault(owner, set()).add(uid)
            if owner in self._workloads:
                self._dirty.add(owner)

    def _drop_kueue(self, uid: str) -> None:
        found = self._kueue.pop(uid, None)
        if found is None or not found[1]:
            return
        members = self._kueue_of.get(found[1])
        if members is not None:
            members.discard(uid)
            if not members:
                del self._kueue_of[found[1]]
        if found[1] in self._workloads:
            self._dirty.add(found[1])

    def kueue_workloads_of(self, uid: str) -> list[dict[str, Any]] | None:
        """The cached Kueue Workloads the workload ``uid`` controls; None when they cannot be
        watched (refused)."""
        with self._lock:
            if self._kueue_failed is not None:
                return None
            return [self._kueue[k][0] for k in sorted(self._kueue_of.get(uid, ())) if k in self._kueue]

    def _queue(self, uid: str, obj: Mapping[str, Any]) -> dict[str, Any] | None:
        """The row's queue state: Kueue's, from the watched Workloads; Unknown when they cannot be
        watched; None when Kueue does not manage it."""
        workloads = self.kueue_workloads_of(uid)
        if workloads is None:
            if report.queue_name(obj) is None:
                return None
            with self._lock:
                why = self._kueue_failed or ""
            return report.unknown_queue(obj, why).to_dict()
        detail = report.queue_detail(obj, workloads)
        return None if detail is None else detail.to_dict()

    def kueue_served(self) -> bool:
        """Kueue's queues are served here (the tracker's last discovery; the queue page's link)."""
        return self._kueue_served

    def queues(self) -> dict[str, Any]:
        """The queue page of this cluster: ``{cluster, served, warnings, clusterQueues}``, the
        ClusterQueues and LocalQueues read now (:func:`karta.report.queue_rows`)."""
        read = kube.kueue_queues(self.client)
        return {
            "cluster": self.cluster,
            "served": read.served,
            "warnings": read.warnings,
            "clusterQueues": report.queue_rows(read.cluster_queues, read.local_queues),
        }

    # -- capacity ---------------------------------------------------------------------------------
    def _listed_nodes(self) -> tuple[list[dict[str, Any]] | None, str | None]:
        """The Nodes (listed at most every :data:`NODES_SECONDS`), or None and why not."""
        with self._nodes_lock:
            now = time.monotonic()
            if self._nodes is None or now - self._nodes[0] >= NODES_SECONDS:
                try:
                    listed = kube.list_nodes(self.client)
                except KartaError as exc:
                    self._nodes = (now, None, f"cannot list the Nodes: {exc}")
                else:
                    failure = listed.failure
                    why = None if failure is None else f"cannot {failure.what} ({failure.reason})"
                    self._nodes = (now, listed.items, why)
            return self._nodes[1], self._nodes[2]

    def capacity(self) -> dict[str, Any]:
        """The capacity page of this cluster: the GPUs the Nodes can allocate (listed now, at most
        every :data:`NODES_SECONDS`), the GPUs the non-terminal pods request, bound to a Node
        (``gpusRequested``) and pending, in total and per namespace (the pods of the source's
        watch, :func:`karta.report.gpu_usage`); None where it could not be read, never a zero,
        and ``partial`` says why any number is not the whole cluster's; ``summary`` the totals in
        words (:meth:`karta.report.GpuTotals.summary`)."""
        nodes, nodes_unread = self._listed_nodes()
        with self._lock:
            watching = [i for i, w in enumerate(self._watched) if w.role == "pods"]
            refused = [self._failed[i] for i in watching if i in self._failed]
            listed = all(i in self._synced_indexes for i in watching)
            pods = list(self._pods.values())
        partial: list[str] = []
        if not watching:
            partial.append(
                "the pods are not watched (Pod is not served or not readable): no GPU request is counted"
            )
        partial.extend(refused)
        if watching and not refused and not listed:
            partial.append("the pods are still being listed: the requests may be low")
        if nodes_unread:
            partial.append(f"{nodes_unread}: the capacity is unknown")
        usage = None
        if watching and not refused:
            usage = report.gpu_usage(pods, lambda _pod: None, gpu_resources=self.gpu_resources)
        totals = report.gpu_totals(nodes, usage, gpu_resources=self.gpu_resources)
        return {
            "cluster": self.cluster,
            **totals.to_dict(),
            "summary": totals.summary(),
            "namespaces": [
                {
                    "namespace": u.namespace,
                    "pods": u.pods,
                    "gpusRequested": u.requested,
                    "gpusPending": u.pending,
                }
                for u in usage or ()
            ],
            "partial": partial,
        }

    # -- rows -------------------------------------------------------------------------------------
    def _flush(self) -> None:
        self._drain()
        with self._lock:
            if self._unlinked and self._workloads_listed():
                self._link_unlinked()
            dirty, self._dirty = self._dirty, set()
            work = [(uid, self._workloads.get(uid)) for uid in dirty]
            synced = self._plan_key is not None and len(self._synced_indexes) >= len(self._watched)
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
        evaluator, _ = self.references_of(obj, definition, reader=uid)
        return workload_row(
            obj,
            definition,
            cluster=self.cluster,
            pods=pods,
            gpu_resources=self.gpu_resources,
            group_objects=groups,
            evaluator=evaluator,
            queue=self._queue(uid, obj),
        )

    def references_of(
        self, obj: Mapping[str, Any], definition: StoredDefinition, *, reader: str | None = None
    ) -> tuple[Evaluator | None, list[str]]:
        """Extension E3: the definition's evaluator with the workload's references read from the
        shared cache (:class:`~karta.kube.reference_index.ReferenceIndex`; ``reader``, the
        workload's UID, has its row marked when one of them changes), through the API while a
        referenced kind's cache has not synced yet (:func:`karta.kube.resolve_live`), and what
        could not be read (a forbidden or failing read names the reference and its kind);
        ``(None, [])`` without references."""
        if not definition.karta.spec.structure_definition.references or definition.problems:
            return None, []
        from karta.definitions.evaluators import evaluator_for

        base = evaluator_for(definition)
        try:
            resolution = self.references.resolve(reader or _uid(obj), definition.karta, obj, base)
            if resolution is None:
                resolution = kube.resolve_live(self.client, definition.karta, obj, base)
        except KartaError as exc:  # a limit or budget: the references are not bound
            return None, [f"cannot read the references: {exc}"]
        return resolution.evaluator(base), [p.message for p in resolution.errors]

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
        labels = kube.namespace_labels(self.client, namespace) if namespace else None
        scope = None
        if labels is not None:
            scope = report.ScopeInput(
                labels.labels, unread=labels.unread, mode=self.scope_mode, excluded=self.scope_excluded
            )
        row = self.store.get(row_id(self.cluster, uid)) or self.row(uid, obj, definition)
        evaluator, unread = self.references_of(obj, definition)
        external, unselected = self.external_pods_of(obj, definition, evaluator=evaluator)
        kueue_workloads = self.kueue_workloads_of(uid)
        pending = None
        if kueue_workloads is not None:  # a pending Workload's position, read now (Kueue's visibility API)
            query = report.pending_query(obj, report.queue_detail(obj, kueue_workloads))
            if query is not None:
                pending = kube.kueue_pending(self.client, query.namespace, query.local_queue, query.workload)
        # the workloads it owns through other kinds, read now as kli describe reads them (owner tree)
        store = self.definitions()
        resolve = report.owner_resolver(
            store, served=lambda gvk: self.client.discovery.find(*gvk) is not None
        )
        owned, unowned = kube.owned_workloads(
            self.client, obj, kinds_of=report.child_kinds_of(store, resolve)
        )
        with self._lock:  # each pod's owners as its walk read them (a Deployment's pods: its ReplicaSet)
            lineage = {_uid(p): list(self._pod_links.get(_uid(p), ())[1:]) for p in pods}
        try:
            return workload_detail(
                obj,
                definition,
                row=row,
                pods=pods,
                events=events.events,
                events_read=events.failure is None,
                warnings=[*events.warnings, *unread, *unselected, *unowned],
                group_objects=self.group_objects_of(uid),
                gpu_resources=self.gpu_resources,
                scope=scope,
                external_pods=external,
                kueue_workloads=kueue_workloads,
                kueue_pending=pending,
                evaluator=evaluator,
                owned=owned,
                resolve=resolve,
                lineage=lineage,
            )
        except KartaError as exc:
            return {"row": row, "error": f"cannot describe it with definition {definition.name}: {exc}"}
