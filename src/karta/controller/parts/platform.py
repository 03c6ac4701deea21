"""Platform metrics (docs/controller/platform-metrics.md): per namespace and root kind, the
workloads by primary status, the GPUs their running and pending pods request, the pods pending
because their gang cannot fit, and the gang state of the workloads with gang instructions (bound
pods against the gang minimum, sub-group minimums counted: :mod:`karta.report.gang_state`),
computed at each scrape from this part's informer caches.

**Caches.** The covered-types tracker (:class:`karta.kube.tracker.CoveredTypes`, shared with the
gang reconciler) gives the covered types; every one whose definition validates gets a reference on
the shared cache's informer (:class:`karta.kube.cache.SharedCache`: the gang reconciler's objects,
one list and one watch for both; one per ``--namespace`` when given); pods have one reference of
their own (the ``Pod`` type, when a definition covers it, reads the same cache). A scrape makes no
API call: it reads the caches, links objects to their controllers by UID, and counts each
top-level workload once (:mod:`karta.report.platform`).

**Top-level.** The rule of every other view (:class:`karta.kube.workloads.TopLevel`): none of the
controllers in the owner chain is of a covered kind. The nearest controller reference decides
most objects at scrape time; an object whose controller is of a kind no definition claims has its
chain walked (owners read once and cached) by the part's own thread, never by a scrape: until that
walk is done, it counts as top-level. Its pods are the pods found below it through controller
references among the cached objects (at most 6 deep).

**Leader only.** The part runs on the leader (its caches are empty elsewhere), so that a sum over
the replicas counts every workload once. The primary status of each workload is cached per
resourceVersion, its gang state until it, its definition or one of its pods changes, and each
pod's GPUs from one scrape to the next; nothing else is kept. The caches drop ``managedFields`` and
kubectl's last-applied annotation (the shared cache's transform).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from karta import model, report
from karta.controller.runtime.definitions import LiveDefinitions
from karta.controller.runtime.follow import FollowsTypes
from karta.controller.runtime.logs import logger
from karta.controller.runtime.owners import readable_owner_kinds
from karta.definitions import DefinitionStore, StoredDefinition, evaluator_for
from karta.errors import ClusterError, KartaError
from karta.extract.requests import DEFAULT_GPU_RESOURCES
from karta.gang import gang_format
from karta.kube.cache import SharedCache, Watch
from karta.kube.client import KubeClient
from karta.kube.resources import ResourceType
from karta.kube.tracker import Coverage, CoveredTypes
from karta.kube.workloads import TopLevel
from karta.model.gvk import GroupKind

__all__ = ["PART", "PlatformMetrics"]

PART: Final = "platform-metrics"
_LOG = logger(PART)
_POD = GroupKind("", "Pod")


@dataclass
class _Type:
    """One covered type: its served resource, definition, informers (the pods' for ``Pod``)."""

    resource: ResourceType
    definition: StoredDefinition
    informers: dict[str | None, Watch]
    shared: bool = False  # the pod informers: not released with the type

    def objects(self) -> list[dict[str, Any]]:
        return [obj for informer in self.informers.values() for obj in informer.objects()]


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
    ) -> None:
        self.client = client
        self.definitions = definitions
        self.backend = backend
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
        self._top = self._top_level(definitions.store)
        self._walked: dict[str, tuple[str, bool]] = {}  # uid → (controller uid, top-level)
        self._to_walk: dict[str, dict[str, Any]] = {}  # uid → object whose chain is to be walked
        self._types: dict[GroupKind, _Type] = {}
        self._pods: dict[str | None, Watch] = {}
        self._statuses: dict[str, tuple[str, int, str]] = {}  # uid → (resourceVersion, id(karta), status)
        self._gpus: dict[str, tuple[str, int]] = {}  # pod uid → (resourceVersion, GPUs requested)
        # uid → ((resourceVersion, id(karta), its pods' uids and resourceVersions), gang state)
        self._gangs: dict[str, tuple[tuple[Any, ...], report.GangState | None]] = {}
        self._refreshed = threading.Event()

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

        def walking() -> None:
            while not stop.wait(0.2):
                self._walk_pending()

        try:
            self._follow(stop, walking)
        finally:
            with self._lock:
                held, self._held = list(self._held.values()), {}
                self._types, self._pods = {}, {}
                self._statuses.clear()
                self._gangs.clear()
                self._gpus = {}
            for watch in held:
                watch.release()

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
        top = self._top_level(coverage.store)
        stopped: list[_Type] = []
        with self._lock:
            if top.covered != self._top.covered:
                self._top, self._walked, self._to_walk = top, {}, {}
            for gk in list(self._types):
                target = wanted.get(gk)
                if target is None or target.resource.gvk != self._types[gk].resource.gvk:
                    stopped.append(self._types.pop(gk))
                else:
                    self._types[gk].definition = target.definition
            started = {gk: target for gk, target in wanted.items() if gk not in self._types}
        for t in stopped:
            self._release(t)
        for gk, target in started.items():
            if gk == _POD:
                with self._lock:
                    self._types[gk] = _Type(target.resource, target.definition, self._pods, shared=True)
                continue
            informers = {
                ns: self._informer(target.resource, ns)
                for ns in (self.namespaces if target.resource.namespaced else (None,))
            }
            with self._lock:
                self._types[gk] = _Type(target.resource, target.definition, informers)
        self._refreshed.set()

    def _top_level(self, store: DefinitionStore) -> TopLevel:
        readable = readable_owner_kinds(d.karta for d in store.definitions)
        return TopLevel.of(self.client, store, readable=readable)

    def _informer(self, rtype: ResourceType, namespace: str | None) -> Watch:
        """A reference, held, on the shared cache's informer of ``rtype`` in ``namespace`` (read
        through the reference: a wide cache's informer holds every namespace)."""
        watch = self.cache.watch(rtype, namespace=namespace)
        with self._lock:
            self._held[(rtype.gvk.group_kind, namespace)] = watch
        return watch

    def _release(self, t: _Type) -> None:
        if t.shared:
            return
        with self._lock:
            held = [self._held.pop((t.resource.gvk.group_kind, ns), None) for ns in t.informers]
        for watch in held:
            if watch is not None:
                watch.release()

    # -- top-level ----------------------------------------------------------------------------------
    def _is_top_level(self, obj: Mapping[str, Any], top: TopLevel) -> bool:
        """:class:`TopLevel`'s answer without an API call: from the controller reference, else from
        the walk this part's thread made (not made yet: top-level, and the walk is asked for)."""
        decided = top.by_reference(obj)
        if decided is not None:
            return decided
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        owner = report.controller_uid(obj) or ""
        with self._lock:
            walked = self._walked.get(uid)
            if walked is not None and walked[0] == owner:
                return walked[1]
            self._to_walk[uid] = dict(obj)
        return True

    def _walk_pending(self) -> None:
        with self._lock:
            pending, self._to_walk = self._to_walk, {}
            top = self._top
        if not pending:
            return
        decided = top.walk(list(pending.values()))
        with self._lock:
            if top is not self._top:
                return  # the types changed meanwhile: walked again when asked
            for (uid, obj), (is_top, _error) in zip(pending.items(), decided, strict=True):
                self._walked[uid] = (report.controller_uid(obj) or "", is_top)

    # -- counting (scrape threads) --------------------------------------------------------------
    def counts(self) -> list[report.WorkloadCounts]:
        """One record per top-level workload in the caches."""
        with self._lock:
            types = list(self._types.values())
            pods = [p for informer in self._pods.values() for p in informer.objects()]
            top = self._top
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
        for t, obj in listed:
            if not self._is_top_level(obj, top):
                continue
            uid = str((obj.get("metadata") or {}).get("uid") or "")
            seen.add(uid)
            karta = t.definition.karta
            owned = report.owned_pods(obj, children)
            out.append(
                report.workload_counts(
                    obj,
                    owned,
                    status=self._status(uid, obj, t.definition),
                    gpu_resources=DEFAULT_GPU_RESOURCES,
                    gang=gang_on and gang_format(karta) is not None,
                    gpus_of=gpus,
                    gang_state=self._gang(uid, obj, t.definition, owned),
                )
            )
        with self._lock:
            for uid in [u for u in self._statuses if u not in seen]:
                del self._statuses[uid]
            for uid in [u for u in self._gangs if u not in seen]:
                del self._gangs[uid]
            for uid in [u for u in self._walked if u not in seen]:
                del self._walked[uid]
            self._gpus = gpus.used
        return out

    def _status(self, uid: str, obj: Mapping[str, Any], definition: StoredDefinition) -> str:
        version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        karta = definition.karta
        with self._lock:
            cached = self._statuses.get(uid)
        if cached is not None and cached[:2] == (version, id(karta)):
            return cached[2]
        status = report.primary_status(karta, obj, evaluator=evaluator_for(definition))
        with self._lock:
            self._statuses[uid] = (version, id(karta), status)
        return status

    def _gang(
        self, uid: str, obj: Mapping[str, Any], definition: StoredDefinition, pods: list[Mapping[str, Any]]
    ) -> report.GangState | None:
        """The workload's gang state (None: no gang instructions, or a plan that cannot be
        computed), cached until the object, its definition or one of its pods changes."""
        karta = definition.karta
        if gang_format(karta) is None:
            return None
        key = (
            str((obj.get("metadata") or {}).get("resourceVersion") or ""),
            id(karta),
            *sorted(
                (
                    str((p.get("metadata") or {}).get("uid")),
                    str((p.get("metadata") or {}).get("resourceVersion")),
                )
                for p in pods
            ),
        )
        with self._lock:
            cached = self._gangs.get(uid)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            state = report.workload_gang(karta, obj, pods, evaluator=evaluator_for(definition))
        except KartaError:
            state = None
        with self._lock:
            self._gangs[uid] = (key, state)
        return state

    # -- the collector ----------------------------------------------------------------------------
    def describe(self) -> Iterable[Metric]:
        return _families()

    def collect(self) -> Iterable[Metric]:
        workloads, gpus, gang, gangs, bound, minimum = _families()
        try:
            totals = report.platform_totals(self.counts())
        except Exception:  # never a failed scrape: the other metrics are still served
            _LOG.exception("cannot compute the platform metrics")
            totals = []
        for t in totals:
            where = [t.namespace, t.group, t.kind]
            for status, count in sorted(t.workloads.items()):
                workloads.add_metric([*where, status], count)
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
    """The GPUs of each pod, from the last scrape's values when its resourceVersion is the same
    (parsing every pod's quantities is most of a scrape); ``used`` is what the next one reuses."""

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
            "(PodScheduled False, reason Unschedulable, not bound).",
            labels=_WHERE,
        ),
        GaugeMetricFamily(
            "karta_gangs",
            "Top-level workloads whose definition has gang instructions, per namespace, root group and "
            "kind, and whether their pods bound to a Node reach every gang's minimum (a gang with "
            "sub-groups: every sub-group's): minimum met or not_met.",
            labels=[*_WHERE, "minimum"],
        ),
        GaugeMetricFamily(
            "karta_gang_pods_bound",
            "Pods bound to a Node of the workloads with gang instructions, per namespace, root group "
            "and kind.",
            labels=_WHERE,
        ),
        GaugeMetricFamily(
            "karta_gang_pods_minimum",
            "The gang minimums of the workloads with gang instructions summed (a gang with sub-groups: "
            "its sub-groups' minimums), per namespace, root group and kind.",
            labels=_WHERE,
        ),
    ]


def _valid(definition: StoredDefinition) -> bool:
    try:
        model.validate_or_raise(definition.karta)
    except KartaError:
        return False
    return True
