"""Platform metrics (docs/controller/platform-metrics.md): per namespace and root kind, the
workloads by primary status, the GPUs their running and pending pods request, the pods pending
because their gang cannot fit, and the gang state of the workloads with gang instructions (bound
pods against the gang minimum, sub-group minimums counted: :mod:`karta.report.gang_state`),
computed at each scrape from this part's informer caches.

**Caches.** Every ``types_interval`` seconds, and at once when the definitions change, API discovery
is read (:func:`karta.kube.workloads.covered_types`) and every covered type whose definition
validates gets one :class:`~karta.controller.runtime.informer.Informer` (one per ``--namespace`` when
given); pods have one informer of their own (the ``Pod`` type, when a definition covers it, reads
the same cache). A scrape makes no API call: it reads the caches, links objects to their
controllers by UID, and counts each top-level workload once (:mod:`karta.report.platform`).

**Top-level, in the caches.** A workload is top-level when it has no controller, or its controller
is of a kind no definition claims (the chain is not walked further for metrics: e.g. the
Deployments Knative Revisions control count as Deployments). Its pods are the pods found below it
through controller references among the cached objects (at most 6 deep).

**Leader only.** The part runs on the leader (its caches are empty elsewhere), so that a sum over
the replicas counts every workload once. The primary status of each workload is cached per
resourceVersion, its gang state until it, its definition or one of its pods changes, and each
pod's GPUs from one scrape to the next; nothing else is kept. The caches
drop ``managedFields`` and kubectl's last-applied annotation.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from karta import model, report
from karta.controller.runtime.definitions import LiveDefinitions
from karta.controller.runtime.informer import Informer
from karta.controller.runtime.logs import logger
from karta.controller.runtime.tracker import watchable_types
from karta.definitions import StoredDefinition, evaluator_for
from karta.errors import ClusterError, KartaError
from karta.extract.requests import DEFAULT_GPU_RESOURCES
from karta.gang import gang_format
from karta.kube.client import KubeClient
from karta.kube.resources import ResourceType
from karta.model.gvk import GroupKind

__all__ = ["PART", "PlatformMetrics"]

PART: Final = "platform-metrics"
_LOG = logger(PART)
_POD = GroupKind("", "Pod")
_CONTROLLER_INDEX: Final = "controller"


def _trimmed(obj: dict[str, Any]) -> dict[str, Any]:
    """What the caches keep: the object without ``managedFields`` and kubectl's last-applied
    annotation (often half of a pod's size; no definition reads them)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    annotations = meta.get("annotations")
    heavy = annotations if isinstance(annotations, dict) and _LAST_APPLIED in annotations else None
    if "managedFields" not in meta and heavy is None:
        return obj
    meta = {k: v for k, v in meta.items() if k != "managedFields"}
    if heavy is not None:
        meta["annotations"] = {k: v for k, v in heavy.items() if k != _LAST_APPLIED}
    return {**obj, "metadata": meta}


_LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"


def _controller_index(obj: Mapping[str, Any]) -> list[str]:
    uid = report.controller_uid(obj)
    return [uid] if uid else []


@dataclass
class _Type:
    """One covered type: its served resource, definition, informers (the pods' for ``Pod``)."""

    resource: ResourceType
    definition: StoredDefinition
    informers: dict[str | None, Informer]
    shared: bool = False  # the pod informers: not started or stopped with the type
    stop: threading.Event = field(default_factory=threading.Event)

    def objects(self) -> list[dict[str, Any]]:
        return [obj for informer in self.informers.values() for obj in informer.objects()]


class PlatformMetrics(Collector):
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
    ) -> None:
        self.client = client
        self.definitions = definitions
        self.backend = backend
        self.namespaces: tuple[str | None, ...] = tuple(namespaces) or (None,)
        self.types_interval = types_interval
        self.informer_retry_s = informer_retry_s
        self._lock = threading.Lock()
        self._types: dict[GroupKind, _Type] = {}
        self._pods: dict[str | None, Informer] = {}
        self._statuses: dict[str, tuple[str, int, str]] = {}  # uid → (resourceVersion, id(karta), status)
        self._gpus: dict[str, tuple[str, int]] = {}  # pod uid → (resourceVersion, GPUs requested)
        # uid → ((resourceVersion, id(karta), its pods' uids and resourceVersions), gang state)
        self._gangs: dict[str, tuple[tuple[Any, ...], report.GangState | None]] = {}
        self._refresh_now = threading.Event()
        self._refreshed = threading.Event()
        definitions.subscribe(lambda _store: self._refresh_now.set())

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
        pods_stop = threading.Event()
        for informer in pods.values():
            self._start(informer, pods_stop)
        try:
            while not stop.is_set() and not self.definitions.synced.wait(0.2):
                pass
            next_read = last_read = 0.0
            while not stop.is_set():
                now = time.monotonic()
                # A definition change reads the types at once, but at most once a second (the
                # store is rebuilt on every Karta update, status updates included).
                if now >= next_read or (self._refresh_now.is_set() and now >= last_read + 1.0):
                    self._refresh_now.clear()
                    try:
                        self.refresh_types()
                    except Exception:  # a bug must not stop the metrics: logged, retried
                        _LOG.exception("cannot refresh the counted types")
                    last_read = time.monotonic()
                    next_read = last_read + self.types_interval
                stop.wait(0.2)
        finally:
            pods_stop.set()
            with self._lock:
                types, self._types, self._pods = list(self._types.values()), {}, {}
                self._statuses.clear()
                self._gangs.clear()
                self._gpus = {}
            for informer in pods.values():
                informer.stop()
            for t in types:
                self._stop_type(t)

    def synced(self) -> bool:
        """The types were read once and every cache holds its first list."""
        with self._lock:
            informers = [*self._pods.values()]
            informers += [i for t in self._types.values() if not t.shared for i in t.informers.values()]
        return self._refreshed.is_set() and bool(informers) and all(i.synced.is_set() for i in informers)

    def counted_types(self) -> list[GroupKind]:
        with self._lock:
            return sorted(self._types)

    def refresh_types(self) -> None:
        """Start and stop informers so that they match the served, covered, valid types."""
        try:
            wanted = watchable_types(self.client, self.definitions.store, _valid, log=_LOG.debug)
        except ClusterError as exc:
            _LOG.warning("cannot read the served types; keeping the caches", extra={"error": str(exc)})
            return
        started: list[_Type] = []
        stopped: list[_Type] = []
        with self._lock:
            for gk in list(self._types):
                target = wanted.get(gk)
                if target is None or target.resource.gvk != self._types[gk].resource.gvk:
                    stopped.append(self._types.pop(gk))
                else:
                    self._types[gk].definition = target.definition
            for gk, target in wanted.items():
                if gk in self._types:
                    continue
                if gk == _POD:
                    self._types[gk] = _Type(target.resource, target.definition, self._pods, shared=True)
                    continue
                informers = {
                    ns: self._informer(target.resource, ns)
                    for ns in (self.namespaces if target.resource.namespaced else (None,))
                }
                self._types[gk] = t = _Type(target.resource, target.definition, informers)
                started.append(t)
        for t in stopped:
            self._stop_type(t)
        for t in started:
            for informer in t.informers.values():
                self._start(informer, t.stop)
        self._refreshed.set()

    def _informer(self, rtype: ResourceType, namespace: str | None) -> Informer:
        informer = Informer(
            self.client,
            rtype,
            namespace=namespace,
            retry_s=self.informer_retry_s,
            name=f"{PART}/{rtype.group_resource}" + (f"/{namespace}" if namespace else ""),
            transform=_trimmed,
        )
        informer.add_index(_CONTROLLER_INDEX, _controller_index)
        return informer

    def _start(self, informer: Informer, stop: threading.Event) -> None:
        def body() -> None:
            while not stop.is_set():
                try:
                    informer.run(stop)
                except Exception:  # closing the watch under the reader may raise anything
                    if stop.is_set():
                        return
                    _LOG.exception("informer failed; restarting", extra={"informer": informer.name})
                    stop.wait(self.informer_retry_s)

        threading.Thread(target=body, name=informer.name, daemon=True).start()

    @staticmethod
    def _stop_type(t: _Type) -> None:
        if t.shared:
            return
        t.stop.set()
        for informer in t.informers.values():
            informer.stop()

    # -- counting (scrape threads) --------------------------------------------------------------
    def counts(self) -> list[report.WorkloadCounts]:
        """One record per top-level workload in the caches."""
        with self._lock:
            types = list(self._types.values())
            pods = [p for informer in self._pods.values() for p in informer.objects()]
        covered = {gvk.group_kind for gvk in self.definitions.store.gvks()}
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
            if not _top_level(obj, covered):
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


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _top_level(obj: Mapping[str, Any], covered: set[GroupKind]) -> bool:
    """No controller, or a controller of a kind no definition covers (not walked further)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            return GroupKind(group, str(ref.get("kind") or "")) not in covered
    return True


def _valid(definition: StoredDefinition) -> bool:
    try:
        model.validate_or_raise(definition.karta)
    except KartaError:
        return False
    return True
