"""Platform metrics (docs/controller/platform-metrics.md): per namespace and root kind, the
workloads by primary status, the GPUs their running and pending pods request, the pods pending
because their gang cannot fit, and the gang state of the workloads with gang instructions (bound
pods against the gang minimum, sub-group minimums counted: :mod:`karta.report.gang_state`), per gang
owner (**Gang owners** below).

**Caches.** The covered-types tracker (:class:`karta.kube.tracker.CoveredTypes`, shared with the
gang reconciler) gives the covered types; every one whose definition validates gets a reference on
the shared cache's informer (:class:`karta.kube.cache.SharedCache`: the gang reconciler's objects,
one list and one watch for both; one per ``--namespace`` when given); pods have one reference of
their own (the ``Pod`` type, when a definition covers it, reads the same cache).

**Evaluation off the scrape.** What needs a definition's expressions (each top-level workload's
primary status, each gang owner's gang state) is computed by this part's reconcile path: the caches'
events put the workload on a work queue (:func:`~karta.controller.runtime.workqueue.run_workers`; a
pod's change puts the workloads above it there, at most once a second each), and a worker evaluates
it, within the definition's budget, caching the result per object version (and, for the gang state,
per version of its pods). The part's thread counts (:meth:`PlatformMetrics.refresh`, at most every
:data:`TOTALS_EVERY_S` seconds, when something changed): it reads the caches and the cached results,
links objects to their controllers by UID, and counts each top-level workload once and each gang
owner below one once, for its gang only (:mod:`karta.report.platform`); a workload whose status was
not computed yet is left out of ``karta_workloads`` (its GPUs are counted). A scrape
(:meth:`PlatformMetrics.collect`) evaluates nothing, counts nothing and makes no API call: it serves
the last totals, so its cost does not grow with the cluster. Budget breaches go
to the process's :class:`~karta.controller.runtime.quarantine.Quarantine`; a quarantined
definition is not evaluated, its workloads keep their last computed status (``Undefined`` when
there was none).

**Scope.** A workload outside the gang-scheduling scope (``scope``: the gang reconciler's,
:func:`karta.gang.scope.gang_scope`) counts as one without gang instructions: no group objects are
written for it, so its pods are neither gang-pending nor part of a gang's bound/minimum.

**Top-level.** The rule of every other view (:class:`karta.kube.workloads.TopLevel`): none of the
controllers in the owner chain is of a covered kind. The nearest controller reference decides
most objects; an object whose controller is of a kind no definition claims has its chain walked
(owners read once and cached) by the part's own thread, never by a scrape: until that walk is
done, it counts as top-level. Its pods are the pods found below it through controller references
among the cached objects (at most 6 deep).

**Gang owners.** The gang belongs to the topmost workload in the owner chain whose definition has
gang instructions (the gang reconciler's rule: :meth:`TopLevel.of` with ``gangs``): a top-level
workload with gang instructions, or one below a workload without any (a Katib Experiment's Trial, a
CronJob's Job, a ScheduledSparkApplication's SparkApplication). A gang owner below a top-level
workload gets a record of its own (``top_level`` False: its kind labels its gang series; no status,
no GPUs, which are its top-level workload's), so ``karta_workloads`` and the GPUs still count each
top-level workload once. Decided as the top-level rule is, from the controller reference or the
part's own walk (the two rules share the owners read), never by a scrape.

**Leader only.** The part runs on the leader (its caches are empty elsewhere), so that a sum over
the replicas counts every workload once. Each pod's GPUs are cached from one count to the next;
nothing else is kept. The caches drop ``managedFields`` and kubectl's last-applied annotation (the
shared cache's transform).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from karta import model, report
from karta.controller.runtime.definitions import LiveDefinitions
from karta.controller.runtime.follow import FollowsTypes
from karta.controller.runtime.logs import logger
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import readable_owner_kinds
from karta.controller.runtime.quarantine import Quarantine, definition_version
from karta.controller.runtime.scope import GangScope
from karta.controller.runtime.workqueue import WorkQueue, run_workers
from karta.definitions import DefinitionStore, StoredDefinition, evaluator_for
from karta.errors import ClusterError, JqBudgetError, KartaError
from karta.extract.requests import DEFAULT_GPU_RESOURCES
from karta.gang import gang_format
from karta.kube.cache import CONTROLLER_INDEX, SharedCache, Watch
from karta.kube.client import KubeClient
from karta.kube.informer import Handler, object_key
from karta.kube.owners import OwnerChains
from karta.kube.reference_index import ReferenceIndex
from karta.kube.resources import ResourceType
from karta.kube.tracker import Coverage, CoveredTypes, same_definition
from karta.kube.workloads import TopLevel
from karta.model.gvk import GroupKind
from karta.report.platform import MAX_OWNER_DEPTH

if TYPE_CHECKING:
    from karta.jq import Evaluator

__all__ = ["PART", "PlatformMetrics"]

PART: Final = "platform-metrics"
_LOG = logger(PART)
_POD = GroupKind("", "Pod")
_UNDEFINED: Final = "Undefined"
POD_DELAY_S: Final = 1.0  # a workload is evaluated again at most this often for its pods' changes
TOTALS_EVERY_S: Final = 1.0  # the totals scrapes serve are at most this old (and something changed)
_Key = tuple[GroupKind, str]  # a workload: its kind and namespace/name


@dataclass
class _Type:
    """One covered type: its served resource, definition, informers (the pods' for ``Pod``)."""

    resource: ResourceType
    definition: StoredDefinition
    informers: dict[str | None, Watch]
    shared: bool = False  # the pod informers: not released with the type

    def objects(self) -> list[dict[str, Any]]:
        return [obj for informer in self.informers.values() for obj in informer.objects()]

    def get(self, key: str) -> dict[str, Any] | None:
        for informer in self.informers.values():
            found = informer.get(key)
            if found is not None:
                return found
        return None


class PlatformMetrics(FollowsTypes, Collector):
    """The platform metrics as a leader-only manager part and a Prometheus collector."""

    name = PART

    def __init__(
        self,
        client: KubeClient,
        *,
        definitions: LiveDefinitions,
        backend: str,
        namespaces: tuple[str, ...] = (),
        types_interval: float = 30.0,
        informer_retry_s: float = 5.0,
        cache: SharedCache | None = None,
        tracker: CoveredTypes | None = None,
        metrics: Metrics | None = None,
        quarantine: Quarantine | None = None,
        workers: int = 2,
        scope: GangScope | None = None,
    ) -> None:
        self.client = client
        self.scope = scope
        self.definitions = definitions
        self.backend = backend
        self.metrics = metrics
        self.quarantine = quarantine or Quarantine(metrics=metrics)
        self.workers = workers
        self.queue: WorkQueue[_Key] = WorkQueue(PART, metrics)
        self.namespaces: tuple[str | None, ...] = tuple(namespaces) or (None,)
        self._init_following(
            client,
            definitions,
            cache=cache,
            tracker=tracker,
            types_interval=types_interval,
            retry_s=informer_retry_s,
            log=_LOG,
        )
        self._lock = threading.Lock()
        self._held: dict[tuple[GroupKind, str | None], Watch] = {}
        self._top, self._gang_top = self._top_level(definitions.store)
        # (gangs, uid) → (controller uid, top-level): gangs False for the workloads' rule, True for
        # the gang owners' (the topmost owner with gang instructions); and the objects whose chain
        # is to be walked for either.
        self._walked: dict[tuple[bool, str], tuple[str, bool]] = {}
        self._to_walk: dict[tuple[bool, str], dict[str, Any]] = {}
        self._types: dict[GroupKind, _Type] = {}
        self._pods: dict[str | None, Watch] = {}
        # The reconcile path's results: uid → (object and definition version, primary status), and
        # uid → ((object and definition version, its pods' uids and resourceVersions), gang state).
        self._statuses: dict[str, tuple[tuple[Any, ...] | None, str]] = {}
        self._gangs: dict[str, tuple[tuple[Any, ...] | None, report.GangState | None]] = {}
        self._above: dict[str, tuple[_Key, str]] = {}  # uid → (its key, its controller's uid)
        self._delayed: set[_Key] = set()  # keys re-added after POD_DELAY_S for their pods
        self._gpus: dict[str, tuple[str, int]] = {}  # pod uid → (resourceVersion, GPUs requested)
        self._totals: list[report.KindTotals] = []  # what scrapes serve (refresh)
        self._changed = threading.Event()  # since the totals were counted
        self._refreshed = threading.Event()
        # Extension E3: references read from the shared cache; a referenced object's change
        # brings back every workload that reads it (its version then differs).
        self.references = ReferenceIndex(
            client, self.cache, namespaces=self.namespaces, on_change=self._reference_changed
        )

    # -- running --------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        pod_type = None
        while pod_type is None and not stop.is_set():
            try:
                pod_type = self.client.discovery.for_gvk("", "v1", "Pod")
            except ClusterError as exc:
                _LOG.warning("cannot read the Pod type; retrying", extra={"error": str(exc)})
                stop.wait(self.informer_retry_s)
        if pod_type is None:
            return
        pods = {ns: self._informer(pod_type, ns) for ns in self.namespaces}
        with self._lock:
            self._pods = pods
        workers = threading.Thread(
            target=run_workers,
            args=(self.queue, self.reconcile),
            kwargs={"workers": self.workers, "stop": stop, "controller": PART, "metrics": self.metrics},
            name=f"{PART}-workers",
            daemon=True,
        )
        workers.start()

        def walking() -> None:
            counted = 0.0
            while not stop.wait(0.2):
                self._walk_pending()
                if self._changed.is_set() and time.monotonic() - counted >= TOTALS_EVERY_S:
                    counted = time.monotonic()
                    self.refresh()

        try:
            self._follow(stop, walking)
        finally:
            stop.set()
            with self._lock:
                held, self._held = list(self._held.values()), {}
                self._types, self._pods = {}, {}
                self._statuses.clear()
                self._gangs.clear()
                self._above.clear()
                self._gpus = {}
                self._totals = []
            for watch in held:
                watch.release()
            self.references.close()
            workers.join(timeout=30)

    def synced(self) -> bool:
        """The types were read once and every cache holds its first list."""
        with self._lock:
            informers = [*self._pods.values()]
            informers += [i for t in self._types.values() if not t.shared for i in t.informers.values()]
        return self._refreshed.is_set() and bool(informers) and all(i.synced.is_set() for i in informers)

    def counted_types(self) -> list[GroupKind]:
        with self._lock:
            return sorted(self._types)

    def _coverage(self, coverage: Coverage) -> None:
        """Take and release references so that they match the served, covered, valid types."""
        wanted = {gk: c for gk, c in coverage.types.items() if _valid(c.definition)}
        top, gang_top = self._top_level(coverage.store)
        stopped: list[_Type] = []
        changed: list[_Type] = []
        with self._lock:
            if top.covered != self._top.covered or gang_top.covered != self._gang_top.covered:
                self._top, self._gang_top, self._walked, self._to_walk = top, gang_top, {}, {}
            for gk in list(self._types):
                target = wanted.get(gk)
                if target is None or target.resource.gvk != self._types[gk].resource.gvk:
                    stopped.append(self._types.pop(gk))
                elif not same_definition(self._types[gk].definition, target.definition):
                    self._types[gk].definition = target.definition
                    changed.append(self._types[gk])
            started = {gk: target for gk, target in wanted.items() if gk not in self._types}
        for t in stopped:
            self._release(t)
        for gk, target in started.items():
            if gk == _POD:
                with self._lock:
                    t = self._types[gk] = _Type(target.resource, target.definition, self._pods, shared=True)
                changed.append(t)
                continue
            informers = {
                ns: self._informer(target.resource, ns)
                for ns in (self.namespaces if target.resource.namespaced else (None,))
            }
            with self._lock:
                t = self._types[gk] = _Type(target.resource, target.definition, informers)
            changed.append(t)  # queued by the handler before the type was known: again now
        for t in changed:  # evaluated again with the new definition (or first, for pods)
            gk = t.resource.gvk.group_kind
            for obj in t.objects():
                self.queue.add((gk, object_key(obj)))
        self._changed.set()
        self._refreshed.set()

    def _top_level(self, store: DefinitionStore) -> tuple[TopLevel, TopLevel]:
        """The top-level rule of the workloads, and the gang owners' (``gangs``), sharing the
        owners they read."""
        readable = readable_owner_kinds(d.karta for d in store.definitions)
        chains = OwnerChains(self.client, readable=readable)
        return (
            TopLevel.of(self.client, store, readable=readable, chains=chains),
            TopLevel.of(self.client, store, readable=readable, chains=chains, gangs=True),
        )

    def _informer(self, rtype: ResourceType, namespace: str | None) -> Watch:
        """A reference, held, on the shared cache's informer of ``rtype`` in ``namespace`` (read
        through the reference: a wide cache's informer holds every namespace), its events heard
        (:meth:`_pod_event` for pods, else :meth:`_workload_event`)."""
        gk = rtype.gvk.group_kind
        handler = self._pod_event if gk == _POD else self._workload_event(gk)
        watch = self.cache.watch(rtype, namespace=namespace, handler=handler, indexes=(CONTROLLER_INDEX,))
        with self._lock:
            self._held[(rtype.gvk.group_kind, namespace)] = watch
        return watch

    def _release(self, t: _Type) -> None:
        if t.shared:
            return
        uids = {str((o.get("metadata") or {}).get("uid") or "") for o in t.objects()}
        with self._lock:
            held = [self._held.pop((t.resource.gvk.group_kind, ns), None) for ns in t.informers]
            self._forget(uids)
        for watch in held:
            if watch is not None:
                watch.release()

    def _forget(self, uids: set[str]) -> None:
        """Drop what is kept of objects gone (with the lock held)."""
        for uid in uids:
            self._statuses.pop(uid, None)
            self._gangs.pop(uid, None)
            self._above.pop(uid, None)

    # -- events (informer threads: quick) -----------------------------------------------------------
    def _workload_event(self, gk: GroupKind) -> Handler:
        def handler(kind: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
            uid = str((obj.get("metadata") or {}).get("uid") or "")
            key = (gk, object_key(obj))
            with self._lock:
                if kind == "DELETED":
                    self._forget({uid})
                    self._changed.set()
                    return
                if uid:
                    self._above[uid] = (key, report.controller_uid(obj) or "")
            self._changed.set()
            self.queue.add(key)

        return handler

    def _pod_event(self, kind: str, pod: dict[str, Any], _old: dict[str, Any] | None) -> None:
        """A pod changed: itself (a bare pod is a workload when ``Pod`` is covered) now, and the
        workloads above it (their gang state counts its pods) after :data:`POD_DELAY_S`."""
        key = (_POD, object_key(pod))
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        above: list[_Key] = []
        with self._lock:
            if kind == "DELETED":
                self._forget({uid})
            pod_covered = _POD in self._types
            owner = report.controller_uid(pod) or ""
            for _ in range(MAX_OWNER_DEPTH):
                found = self._above.get(owner) if owner else None
                if found is None:
                    break
                if found[0] not in self._delayed:
                    self._delayed.add(found[0])
                    above.append(found[0])
                owner = found[1]
        self._changed.set()
        if pod_covered and kind != "DELETED":
            self.queue.add(key)
        for workload in above:
            self.queue.add_after(workload, POD_DELAY_S)

    # -- top-level ----------------------------------------------------------------------------------
    def _is_top_level(self, obj: Mapping[str, Any], top: TopLevel, *, gangs: bool = False) -> bool:
        """:class:`TopLevel`'s answer without an API call: from the controller reference, else from
        the walk this part's thread made (not made yet: top-level, and the walk is asked for).
        ``gangs``: ``top`` is the gang owners' rule (whether ``obj`` owns its gang)."""
        decided = top.by_reference(obj)
        if decided is not None:
            return decided
        key = (gangs, str((obj.get("metadata") or {}).get("uid") or ""))
        owner = report.controller_uid(obj) or ""
        with self._lock:
            walked = self._walked.get(key)
            if walked is not None and walked[0] == owner:
                return walked[1]
            self._to_walk[key] = dict(obj)
        return True

    def _is_gang_owner(self, t: _Type, obj: Mapping[str, Any], gang_top: TopLevel) -> bool:
        """``obj`` owns its gang: its definition has gang instructions and no controller above it
        is of a kind whose definition has any (a Katib Trial under an Experiment does; a Job
        under a JobSet does not)."""
        return gang_format(t.definition.karta) is not None and self._is_top_level(obj, gang_top, gangs=True)

    def _walk_pending(self) -> None:
        with self._lock:
            pending, self._to_walk = self._to_walk, {}
            top, gang_top = self._top, self._gang_top
        for gangs, rule in ((False, top), (True, gang_top)):
            asked = {key: obj for key, obj in pending.items() if key[0] == gangs}
            if not asked:
                continue
            decided = rule.walk(list(asked.values()))
            with self._lock:
                if top is not self._top:
                    return  # the types changed meanwhile: walked again when asked
                for (key, obj), (is_top, _error) in zip(asked.items(), decided, strict=True):
                    self._walked[key] = (report.controller_uid(obj) or "", is_top)

    # -- counting (the part's thread) -----------------------------------------------------------
    def refresh(self) -> None:
        """Count the caches now; scrapes serve these totals until the next count."""
        self._changed.clear()
        try:
            totals = report.platform_totals(self.counts())
        except Exception:  # the last totals stay served
            _LOG.exception("cannot compute the platform metrics")
            return
        self._totals = totals  # replaced whole, read without the lock (collect)

    def counts(self) -> list[report.WorkloadCounts]:
        """One record per top-level workload in the caches (its status and GPUs), and per gang
        owner below one (a Trial under an Experiment: its gang only, ``top_level`` False)."""
        with self._lock:
            types = list(self._types.values())
            pods = [p for informer in self._pods.values() for p in informer.objects()]
            top, gang_top = self._top, self._gang_top
        children: dict[str, list[Mapping[str, Any]]] = {}
        listed: list[tuple[_Type, dict[str, Any]]] = []
        for t in types:
            objs = pods if t.shared else t.objects()
            listed.extend((t, obj) for obj in objs)
            if not t.shared:
                for obj in objs:
                    owner = report.controller_uid(obj)
                    if owner:
                        children.setdefault(owner, []).append(obj)
        for pod in pods:
            owner = report.controller_uid(pod)
            if owner:
                children.setdefault(owner, []).append(pod)
        gang_on = self.backend != "none"
        out: list[report.WorkloadCounts] = []
        seen: set[str] = set()
        gpus = _PodGpus(self._gpus)
        with self._lock:
            statuses, gangs = dict(self._statuses), dict(self._gangs)
        for t, obj in listed:
            uid = str((obj.get("metadata") or {}).get("uid") or "")
            seen.add(uid)
            root = self._is_top_level(obj, top)
            owns_gang = self._is_gang_owner(t, obj, gang_top)
            if not (root or owns_gang):
                continue
            status = statuses.get(uid) if root else None
            gang = gangs.get(uid) if owns_gang else None
            out.append(
                report.workload_counts(
                    obj,
                    report.owned_pods(obj, children),
                    status=status[1] if status is not None else None,
                    gpu_resources=DEFAULT_GPU_RESOURCES,
                    gang=gang_on and owns_gang and (self.scope is None or self.scope.decide(obj).in_scope),
                    gpus_of=gpus,
                    gang_state=gang[1] if gang is not None else None,
                    top_level=root,
                )
            )
        with self._lock:
            for key in [k for k in self._walked if k[1] not in seen]:
                del self._walked[key]
            self._gpus = gpus.used
        return out

    # -- the reconcile path (workers) ---------------------------------------------------------------
    def drain(self) -> None:
        """Evaluate every workload queued (the delayed ones too) in this thread, until none is
        left, then count (:meth:`refresh`); for a part that does not run (a test feeding the caches
        by hand)."""
        with self._lock:
            delayed = list(self._delayed)
        for key in delayed:
            self.queue.add(key)
        while True:
            queued = self.queue.get(timeout=0)
            if queued is None:
                break
            try:
                self.reconcile(queued)
            finally:
                self.queue.done(queued)
        self.refresh()

    def reconcile(self, key: _Key) -> None:
        """Compute the workload's primary status (a top-level workload) and gang state (a gang
        owner) when its object, its definition or (for the gang state) its pods changed since
        they were last computed."""
        gk, name = key
        with self._lock:
            self._delayed.discard(key)
            t = self._types.get(gk)
            top, gang_top = self._top, self._gang_top
            informers = [*self._pods.values()]
            informers += [i for x in self._types.values() if not x.shared for i in x.informers.values()]
        obj = t.get(name) if t is not None else None
        if t is None or obj is None:
            return
        root = self._is_top_level(obj, top)
        owns_gang = self._is_gang_owner(t, obj, gang_top)
        if not (root or owns_gang):
            return
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        definition = t.definition
        karta = definition.karta
        evaluator = evaluator_for(definition)
        referenced: tuple[Any, ...] = ()
        if karta.spec.structure_definition.references and not self.quarantine.holds(definition):
            bound = self._references(key, definition, obj, evaluator)
            if bound is None:
                return
            evaluator, referenced = bound
        version = (str(meta.get("resourceVersion") or ""), definition_version(definition), *referenced)
        gang_key: tuple[Any, ...] | None = None
        if owns_gang:

            def children(owner: str) -> list[dict[str, Any]]:
                return [o for i in informers for o in i.by_index(CONTROLLER_INDEX, owner)]

            pods = report.owned_pods(obj, children)
            gang_key = (version, *sorted(_pod_version(p) for p in pods))
        with self._lock:
            status = self._statuses.get(uid)
            gang = self._gangs.get(uid)
        status_due = root and (status is None or status[0] != version)
        gang_due = gang_key is not None and (gang is None or gang[0] != gang_key)
        if not (status_due or gang_due):
            return
        if self.quarantine.holds(definition):
            # Not evaluated: the last results stand (Undefined when there were none), computed
            # again once the definition changes (its types' objects are queued then).
            with self._lock:
                if root and uid not in self._statuses:
                    self._statuses[uid] = (None, _UNDEFINED)
            return
        if status_due:
            try:
                primary = report.primary_status(karta, obj, evaluator=evaluator, raise_budget=True)
            except JqBudgetError as exc:
                self.quarantine.breached(definition, exc, part=PART)
                primary = _UNDEFINED
            with self._lock:
                self._statuses[uid] = (version, primary)
            self._changed.set()
        if gang_due:
            try:
                state = report.workload_gang(karta, obj, pods, evaluator=evaluator)
            except KartaError as exc:
                self.quarantine.breached(definition, exc, part=PART)
                state = None
            with self._lock:
                self._gangs[uid] = (gang_key, state)
            self._changed.set()

    def _references(
        self, key: _Key, definition: StoredDefinition, obj: Mapping[str, Any], evaluator: Evaluator
    ) -> tuple[Evaluator, tuple[Any, ...]] | None:
        """Extension E3: the evaluator with the workload's references bound from the shared cache
        and what they were (resourceVersions, a problem's message: part of the version the
        results are kept for); None when a referenced kind's cache has not synced (the key
        comes back in a second) or the references cannot be bound (a limit: counted as a breach;
        the last results stand)."""
        try:
            resolution = self.references.resolve(key, definition.karta, obj, evaluator)
        except KartaError as exc:
            self.quarantine.breached(definition, exc, part=PART)
            _LOG.warning("cannot read the references", extra={"key": str(key), "error": str(exc)})
            return None
        if resolution is None:
            self.queue.add_after(key, 1.0)
            return None
        seen: list[Any] = [p.message for p in resolution.problems]
        for value in resolution.bindings.values():
            objects = value if isinstance(value, list) else [value]
            seen.append(tuple(_resource_version(o) for o in objects))
        return resolution.evaluator(evaluator), tuple(seen)

    def _reference_changed(self, reader: object) -> None:
        """A referenced object a workload reads changed: that workload again."""
        if isinstance(reader, tuple):
            self.queue.add(reader)

    # -- the collector ----------------------------------------------------------------------------
    def describe(self) -> Iterable[Metric]:
        return _families()

    def collect(self) -> Iterable[Metric]:
        """The last totals (:meth:`refresh`): nothing is evaluated or counted here."""
        workloads, gpus, gang, gangs, bound, minimum = _families()
        # One reference read, without the part's lock: the count takes it many times over, and
        # a scrape must not queue behind it.
        totals = self._totals
        for t in totals:
            where = [t.namespace, t.group, t.kind]
            for status, count in sorted(t.workloads.items()):
                workloads.add_metric([*where, status], count)
            if t.top_level:  # a kind counted only for gangs below top-level workloads has no GPU rows
                gpus.add_metric([*where, "running"], t.gpus_running)
                gpus.add_metric([*where, "pending"], t.gpus_pending)
            gang.add_metric(where, t.gang_pods_pending)
            if t.gangs:
                for state in ("met", "not met"):
                    gangs.add_metric([*where, state.replace(" ", "_")], t.gangs.get(state, 0))
                bound.add_metric(where, t.gang_pods_bound)
                minimum.add_metric(where, t.gang_pods_minimum)
        return [workloads, gpus, gang, gangs, bound, minimum]


class _PodGpus:
    """The GPUs of each pod, from the last count's values when its resourceVersion is the same
    (parsing every pod's quantities is most of a count); ``used`` is what the next one reuses."""

    def __init__(self, previous: dict[str, tuple[str, int]]) -> None:
        self.previous = previous
        self.used: dict[str, tuple[str, int]] = {}

    def __call__(self, pod: Mapping[str, Any]) -> int:
        meta = pod.get("metadata") or {}
        uid, version = str(meta.get("uid") or ""), str(meta.get("resourceVersion") or "")
        cached = self.previous.get(uid)
        if cached is None or cached[0] != version or not uid:
            cached = (version, report.pod_gpus(pod, gpu_resources=DEFAULT_GPU_RESOURCES))
        self.used[uid] = cached
        return cached[1]


_WHERE = ["namespace", "group", "kind"]


def _families() -> list[GaugeMetricFamily]:
    return [
        GaugeMetricFamily(
            "karta_workloads",
            "Top-level workloads per namespace, root group and kind, and primary status.",
            labels=[*_WHERE, "status"],
        ),
        GaugeMetricFamily(
            "karta_workload_gpus_requested",
            "GPUs requested by the pods of the workloads, per namespace, root group and kind; "
            "phase running: pods bound to a Node, pending: pods not bound yet (terminal pods: neither).",
            labels=[*_WHERE, "phase"],
        ),
        GaugeMetricFamily(
            "karta_gang_pods_pending",
            "Pods of a gang the controller manages that the scheduler found Unschedulable "
            "(PodScheduled False, reason Unschedulable, not bound), per namespace, the gang owner's "
            "group and kind.",
            labels=_WHERE,
        ),
        GaugeMetricFamily(
            "karta_gangs",
            "Gang owners (the topmost workload in the owner chain whose definition has gang "
            "instructions), per namespace, their group and kind, and whether their pods bound to a "
            "Node reach every gang's minimum (a gang with sub-groups: every sub-group's): minimum "
            "met or not_met.",
            labels=[*_WHERE, "minimum"],
        ),
        GaugeMetricFamily(
            "karta_gang_pods_bound",
            "Pods bound to a Node of the gang owners, per namespace, their group and kind.",
            labels=_WHERE,
        ),
        GaugeMetricFamily(
            "karta_gang_pods_minimum",
            "The gang minimums of the gang owners summed (a gang with sub-groups: its sub-groups' "
            "minimums), per namespace, their group and kind.",
            labels=_WHERE,
        ),
    ]


def _pod_version(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return (str(meta.get("uid")), str(meta.get("resourceVersion")))


def _valid(definition: StoredDefinition) -> bool:
    try:
        model.validate_or_raise(definition.karta)
    except KartaError:
        return False
    return True


def _resource_version(obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""
