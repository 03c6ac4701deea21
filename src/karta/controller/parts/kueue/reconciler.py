"""The Kueue reconciler (docs/kueue.md sections 2 and 9.3): Kueue's ``ReconcileGenericJob`` loop
(``pkg/controller/jobframework/reconciler.go``, v0.17.0) for every top-level workload of a managed
kind (:func:`~karta.controller.parts.kueue.webhook.managed`) that carries the
``kueue.x-k8s.io/queue-name`` label.

Types come from the shared covered-types tracker; each managed type and Kueue's Workloads get a
reference on the shared cache (the Workloads indexed by owner UID, so that a Workload's change
brings its workload back to the queue). Keys are (GVK, namespace, name), deduplicated and retried
with back-off on API errors, every key again each ``resync_period``.

One reconcile, in Kueue's order (the library decides, this module reads and writes):

1. the workload gone or being deleted: its Workloads' finalizer ``kueue.x-k8s.io/resource-in-use``
   dropped (the owner reference deletes them);
2. a Workload being deleted (by hand): the workload stopped (``patches.stop``), then the finalizer
   dropped; a new Workload is made on the next round;
3. a finished Workload: the finalizer dropped;
4. the workload Completed / Failed (``finished.finished_condition``): the Workload's ``Finished``;
5. no Workload: a running workload is stopped first; once none of its pods is active
   (``activity.is_active``) the Workload is created (``workload.build_workload``, ``priority``
   read from the WorkloadPriorityClass or PriorityClass ``priority_class_ref`` names);
6. not ``equivalent``: the spec updated while suspended and without quota, else the workload
   stopped and the Workload deleted (and made again);
7. ``Evicted`` or not admitted while running: ``patches.stop``; once no pod is active, the quota
   reservation released in the Workload's status (admission null, ``QuotaReserved`` False/Pending,
   ``Admitted`` False/NoReservation, ``Requeued`` True), as Kueue leaves to an external framework's
   controller;
8. admitted and suspended: the ResourceFlavors read, ``admission.admission_infos``,
   ``patches.start``, the workload updated. A ``KueueError`` or ``WriteBackError`` is permanent:
   the Workload ``Finished`` with reason ``FailedToStart`` and a Warning event.
9. admitted and running: the Workload's ``PodsReady`` condition (``activity.pods_ready_condition``,
   written when its status or reason changes), which Kueue's ``waitForPodsReady`` times out on;
   the pods are looked at again every 5 s until they are all ready (they are not watched).

**Quarantine** (docs/controller/quarantine.md). A definition the process's
:class:`~karta.controller.runtime.quarantine.Quarantine` holds is not evaluated: its workloads are
left as they are (a suspended one stays suspended and its Workload queued; an admitted one keeps
running) and each gets a Warning event ``KueueQuarantined`` once per definition version; every
budget breach met here is told to the quarantine. While it holds, karta cannot suspend such a
workload if Kueue evicts it: the Karta's ``Degraded`` condition says so, and a new generation
lifts it (docs/kueue.md section 9.2).

Writes to the workload are full updates (PUT) with its resourceVersion: a conflict is retried.
A request the API server refuses is a Warning event on the workload, once per workload and message:
``KueueForbidden`` (403: the controller's RBAC lacks a right; tried again every minute, never
hammered) or ``KueueWorkloadRejected`` (400, 413, 422, or an admission webhook's denial: the object
as written, such as a Workload beyond Kueue's limits of PodSets or size; not retried until the
workload changes). The API server creates nothing partial: the workload stays suspended. A start
the API server refuses (400, 413, 422, a webhook's denial) is a ``FailedToStart`` as in step 8, so
the admitted quota is not held by a job that stays suspended.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from karta import extract
from karta.controller.parts.kueue.webhook import KUEUE_MANAGED, managed, managed_condition, manages
from karta.controller.runtime.definitions import LiveDefinitions
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.follow import FollowsTypes, Watched
from karta.controller.runtime.logs import logger
from karta.controller.runtime.mappers import owner_keys
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import owner_rules
from karta.controller.runtime.quarantine import Quarantine, definition_version
from karta.controller.runtime.workqueue import WorkQueue
from karta.definitions import StoredDefinition, evaluator_for
from karta.errors import ApiError, ClusterError, KartaError, KueueError, WriteBackError
from karta.kube.cache import OWNER_INDEX, SharedCache
from karta.kube.client import KubeClient
from karta.kube.informer import Handler
from karta.kube.kartas import KARTA_RESOURCE
from karta.kube.reference_index import ReferenceIndex
from karta.kube.resources import ResourceType
from karta.kube.tracker import Coverage, CoveredTypes, same_definition
from karta.kube.workloads import workload_pods
from karta.kueue import names
from karta.kueue.activity import is_active, pods_ready_condition
from karta.kueue.admission import admission_infos
from karta.kueue.finished import finished_condition
from karta.kueue.patches import is_suspended, start, stop
from karta.kueue.workload import build_workload, equivalent, priority_class_ref
from karta.model import Karta
from karta.model.documents import DocumentError, check_json_value
from karta.model.gvk import GVK, GroupKind
from karta.model.names import plural_guess
from karta.rbac import READ_VERBS, rule

__all__ = ["CONTROLLER", "Key", "KueueReconciler", "kueue_rules"]

CONTROLLER: Final = "kueue"
_LOG = logger(CONTROLLER)
WORKLOADS = GroupKind("kueue.x-k8s.io", "Workload")
_WORKLOAD_GVK = GVK(WORKLOADS.group, "v1beta2", WORKLOADS.kind)
_ACTIVE_RECHECK_S: Final = (
    2.0  # pods are not watched: how soon an evicted workload's pods are looked at again
)
_READY_RECHECK_S: Final = 5.0  # and an admitted one's, until they are all ready (PodsReady)
_FORBIDDEN_RECHECK_S: Final = 60.0  # how soon a workload refused for want of rights is tried again
_REJECTED: Final = frozenset({400, 413, 422})  # the object itself refused: until the workload changes
_MAX_REFUSALS: Final = 4096  # refusals remembered (so reported once each); forgotten past that


@dataclass(frozen=True, slots=True)
class Key:
    gvk: GVK
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.gvk.kind} {self.namespace}/{self.name}"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(c, Mapping) and c.get("type") == kind:
            return c
    return {}


def _true(obj: Mapping[str, Any], kind: str) -> bool:
    return _condition(obj, kind).get("status") == "True"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _with_conditions(obj: Mapping[str, Any], new: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The Workload's conditions with ``new`` replacing those of their types (a transition time kept
    when the status does not change)."""
    old = {
        c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or [] if isinstance(c, Mapping)
    }
    replaced = {c["type"] for c in new}
    out = [dict(c) for t, c in old.items() if t not in replaced]
    now = _now()
    for c in new:
        previous = old.get(c["type"]) or {}
        stamp = previous.get("lastTransitionTime") if previous.get("status") == c["status"] else None
        out.append({**c, "lastTransitionTime": stamp or now})
    return out


class KueueReconciler(FollowsTypes):
    """The Kueue reconciler as a leader-only manager part (``run`` blocks until ``stop``)."""

    name = CONTROLLER

    def __init__(
        self,
        client: KubeClient,
        *,
        definitions: LiveDefinitions,
        metrics: Metrics,
        events: EventRecorder,
        native: Sequence[str] = (),
        namespaces: tuple[str, ...] = (),
        workers: int = 4,
        resync_period: float = 600.0,
        types_interval: float = 30.0,
        informer_retry_s: float = 5.0,
        cache: SharedCache | None = None,
        tracker: CoveredTypes | None = None,
        quarantine: Quarantine | None = None,
    ) -> None:
        self.client = client
        self.quarantine = quarantine or Quarantine(metrics=metrics)
        self._quarantine_told: set[tuple[str, str, Any]] = set()
        self._init_following(
            client,
            definitions,
            cache=cache,
            tracker=tracker,
            types_interval=types_interval,
            retry_s=informer_retry_s,
            log=_LOG,
        )
        self.definitions = definitions
        self.metrics = metrics
        self.events = events
        self.native = tuple(native)
        self.namespaces: tuple[str | None, ...] = tuple(namespaces) or (None,)
        self.workers = workers
        self.resync_period = resync_period
        self.queue: WorkQueue[Key] = WorkQueue(CONTROLLER, metrics)
        self._lock = threading.RLock()
        self._types: dict[GroupKind, Watched] = {}
        self._workloads: Watched | None = None
        self._refreshed = threading.Event()
        self._ineligible_reported: set[tuple[str, str]] = set()
        self._refusals: dict[str, str] = {}  # workload UID: the refusal last reported for it
        # Extension E3: references read from the shared cache; a referenced object's change
        # brings back every workload that reads it.
        self.references = ReferenceIndex(
            client, self.cache, namespaces=self.namespaces, on_change=self._reference_changed
        )

    # -- readiness ------------------------------------------------------------------------------
    def ready(self) -> bool:
        if not self._refreshed.is_set():
            return False
        with self._lock:
            watched = [*self._types.values(), *([self._workloads] if self._workloads else [])]
        return all(w.synced for w in watched)

    def watched_types(self) -> dict[GroupKind, GVK]:
        with self._lock:
            return {gk: w.resource.gvk for gk, w in self._types.items()}

    # -- running --------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        def release() -> list[Watched]:
            with self._lock:
                watched = [*self._types.values(), *([self._workloads] if self._workloads else [])]
                self._types, self._workloads = {}, None
            self.references.close()
            return watched

        self._reconcile_following(stop, CONTROLLER, release)

    def resync(self) -> None:
        with self._lock:
            watched = list(self._types.values())
        for w in watched:
            for obj in w.objects():
                self._enqueue(w.resource.gvk, obj)

    def _enqueue(self, gvk: GVK, obj: Mapping[str, Any]) -> None:
        meta = _meta(obj)
        self.queue.add(Key(gvk, str(meta.get("namespace") or ""), str(meta.get("name") or "")))

    # -- types ----------------------------------------------------------------------------------
    def _coverage(self, coverage: Coverage) -> None:
        wanted = {gk: c for gk, c in coverage.types.items() if managed(c.definition, self.native)}
        self._report_ineligible(coverage)
        workload_type = next(
            (
                r
                for r in coverage.resources
                if r.group == WORKLOADS.group and r.plural == "workloads" and r.version == "v1beta2"
            ),
            None,
        )
        stopped: list[Watched] = []
        started: list[tuple[Watched, Any, tuple[str, ...]]] = []
        requeue: list[Watched] = []
        with self._lock:
            for gk in list(self._types):
                current, target = self._types[gk], wanted.get(gk)
                if target is None or target.resource.gvk != current.resource.gvk:
                    stopped.append(self._types.pop(gk))
                    _LOG.info("type no longer queued through Kueue", extra={"type": current.resource.token})
                elif current.definition is None or not same_definition(current.definition, target.definition):
                    current.definition = target.definition
                    requeue.append(current)
            for gk, target in wanted.items():
                if gk not in self._types:
                    w = self._types[gk] = Watched(target.resource, target.definition)
                    started.append((w, self._workload_handler, ()))
                    _LOG.info(
                        "queueing type through Kueue",
                        extra={"type": target.resource.token, "definition": target.definition.name},
                    )
            if workload_type is None and self._workloads is not None:
                stopped.append(self._workloads)
                self._workloads = None
            elif workload_type is not None and self._workloads is None:
                self._workloads = Watched(workload_type, None)
                started.append((self._workloads, self._kueue_workload_handler, (OWNER_INDEX,)))
        for w in stopped:
            w.release()
        for w, handler, indexes in started:
            for ns in self.namespaces if w.resource.namespaced else (None,):
                w.watches[ns] = self.cache.watch(
                    w.resource, namespace=ns, handler=_bound(handler, w.resource), indexes=indexes
                )
        for w in requeue:
            for obj in w.objects():
                self._enqueue(w.resource.gvk, obj)
        self._refreshed.set()

    def _report_ineligible(self, coverage: Coverage) -> None:
        """Whether each cluster Karta's workloads are queued through Kueue: the condition
        ``KueueManaged`` on its status (:func:`managed_condition`), written when it changes
        (merge patch of the conditions guarded by the resourceVersion; a refusal is logged and
        tried again on the next coverage). Definitions karta leaves alone are logged once."""
        kartas = {
            str(_meta(o).get("name")): o for o in self.definitions.informer.objects() if _meta(o).get("name")
        }
        for d in coverage.store.definitions:
            if not d.valid:
                continue
            wanted = managed_condition(d.karta, self.native)
            if wanted is None:
                continue
            if wanted["status"] == "False" and (d.name, wanted["message"]) not in self._ineligible_reported:
                self._ineligible_reported.add((d.name, wanted["message"]))
                _LOG.info("not queued through Kueue", extra={"definition": d.name, "why": wanted["message"]})
            obj = kartas.get(d.name) if d.origin == "cluster" else None
            if obj is None:
                continue
            have = _condition(obj, KUEUE_MANAGED)
            if all(have.get(k) == v for k, v in wanted.items()):
                continue
            body = {
                "metadata": {"resourceVersion": _meta(obj).get("resourceVersion")},
                "status": {"conditions": _with_conditions(obj, [wanted])},
            }
            try:
                self.client.patch(KARTA_RESOURCE, d.name, body, subresource="status")
            except ClusterError as exc:
                _LOG.warning(
                    "cannot write the KueueManaged condition", extra={"karta": d.name, "error": str(exc)}
                )

    # -- event handlers -------------------------------------------------------------------------
    def _workload_handler(self, rtype: ResourceType, kind: str, obj: dict[str, Any], _old: Any) -> None:
        self._enqueue(rtype.gvk, obj)

    def _kueue_workload_handler(
        self, _rtype: ResourceType, _kind: str, obj: dict[str, Any], _old: Any
    ) -> None:
        with self._lock:
            reconciled = {gk: w.resource.gvk for gk, w in self._types.items()}
        keys = owner_keys(obj, reconciled)
        for gvk, ns, name in keys:
            self.queue.add(Key(gvk, ns, name))
        meta = _meta(obj)
        if not keys and meta.get("deletionTimestamp") and _ours(obj):
            # Its kind is no longer managed (the Karta deleted): nothing can be stopped any more,
            # and nobody else drops our finalizer.
            self.queue.add(Key(_WORKLOAD_GVK, str(meta.get("namespace") or ""), str(meta.get("name") or "")))

    # -- reconcile ------------------------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        if key.gvk == _WORKLOAD_GVK:
            self._release_unmanaged(key)
            return None
        with self._lock:
            w = self._types.get(key.gvk.group_kind)
            workloads = self._workloads
        if w is None or w.definition is None or workloads is None:
            return None
        obj = w.get(key.namespace, key.name)
        if obj is None or _meta(obj).get("deletionTimestamp"):
            self._release_orphans(workloads, key)
            return None
        meta = _meta(obj)
        labels = meta.get("labels") or {}
        if not labels.get(names.QUEUE_LABEL):
            return None
        if any(isinstance(r, Mapping) and r.get("controller") for r in meta.get("ownerReferences") or []):
            return None  # not top-level: its owner is the one queued
        definition = w.definition
        if self.quarantine.holds(definition):
            self._quarantined(obj, definition)
            return None  # not evaluated: left as it is until the definition changes
        try:
            check_json_value(obj, source=_label(obj))  # nested or wide beyond any real object
        except DocumentError as exc:
            self.events.warning(obj, "KueueWorkloadFailed", f"karta cannot queue it through Kueue: {exc}")
            return None
        evaluator = evaluator_for(definition)
        try:
            resolution = self.references.resolve(key, definition.karta, obj, evaluator)
        except KartaError as exc:
            self.quarantine.breached(definition, exc, part=CONTROLLER)
            self.events.warning(obj, "KueueWorkloadFailed", f"karta cannot queue it through Kueue: {exc}")
            return None
        if resolution is None:
            return 1.0  # a referenced kind's cache has not synced yet
        if resolution.errors:  # a reference not readable is not a missing object: nothing is done
            unread = "; ".join(p.message for p in resolution.errors)
            self.events.warning(obj, "KueueWorkloadFailed", f"karta cannot queue it through Kueue: {unread}")
            return None
        factory = extract.ComponentFactory(definition.karta, obj, evaluator=resolution.evaluator(evaluator))
        owned = [o for o in workloads.owned(key.namespace, str(meta.get("uid") or "")) if _owns(o, meta)]
        try:
            requeue = self._reconcile(key, w, workloads, obj, factory, owned)
        except ApiError as exc:
            if exc.status == 403 and not _rejected(exc):
                # No right to write (RBAC narrower than kueue_rules): reported once, looked at
                # again now and then, never hammered; the webhook still suspends new workloads.
                self._refused(obj, "KueueForbidden", exc)
                return min(_FORBIDDEN_RECHECK_S, self.resync_period)
            if _rejected(exc):
                # The object karta wrote is refused as it is (a Workload beyond Kueue's limits:
                # PodSets, size): it will be again until the workload changes.
                self._refused(obj, "KueueWorkloadRejected", exc)
                return None
            raise
        except (KueueError, WriteBackError) as exc:
            self.quarantine.breached(definition, exc, part=CONTROLLER)
            admitted = next((o for o in owned if _true(o, names.ADMITTED)), None)
            if admitted is not None:
                self._failed_to_start(obj, workloads, admitted, str(exc))
            else:
                self.events.warning(obj, "KueueWorkloadFailed", f"karta cannot queue it through Kueue: {exc}")
            return None
        except ClusterError:
            raise
        except KartaError as exc:
            self.quarantine.breached(definition, exc, part=CONTROLLER)
            self.events.warning(obj, "KueueWorkloadFailed", f"karta cannot queue it through Kueue: {exc}")
            return None
        with self._lock:
            self._refusals.pop(str(meta.get("uid") or ""), None)
        return requeue

    def _refused(self, obj: Mapping[str, Any], reason: str, exc: ApiError) -> None:
        """A Warning event and a log line for a request the API server refused, once per workload
        and message (again only after a reconcile of it succeeded)."""
        uid = str(_meta(obj).get("uid") or "")
        message = f"the API server refused a request of karta's Kueue part (HTTP {exc.status}): {exc}"
        with self._lock:
            if self._refusals.get(uid) == message:
                return
            if len(self._refusals) >= _MAX_REFUSALS:
                self._refusals.clear()
            self._refusals[uid] = message
        self.metrics.kueue_actions.labels(action="refused").inc()
        self.events.warning(obj, reason, message)
        _LOG.warning("workload refused", extra={"controller": CONTROLLER, "key": _label(obj), "why": message})

    def _reference_changed(self, reader: object) -> None:
        """A referenced object (extension E3) a workload reads changed: that workload again."""
        if isinstance(reader, Key):
            self.queue.add(reader)

    def _quarantined(self, obj: Mapping[str, Any], definition: StoredDefinition) -> None:
        """The Warning event of a workload left alone for its quarantined definition, once per
        workload and definition version."""
        told = (str(_meta(obj).get("uid") or ""), definition.name, definition_version(definition))
        with self._lock:
            if told in self._quarantine_told:
                return
            if len(self._quarantine_told) > 100_000:
                self._quarantine_told.clear()  # bounded: at worst an event told again
            self._quarantine_told.add(told)
        self.events.warning(
            obj,
            "KueueQuarantined",
            f"karta leaves it as it is while its definition {definition.name} is quarantined "
            "(its expressions breached their budget; see the Karta's Degraded condition): "
            "nothing is suspended, resumed or queued for it until the Karta changes",
        )

    def _reconcile(
        self,
        key: Key,
        w: Watched,
        workloads: Watched,
        obj: dict[str, Any],
        factory: extract.ComponentFactory,
        owned: list[dict[str, Any]],
    ) -> float | None:
        suspended = is_suspended(factory)
        # 2. a Workload being deleted (by hand): stop, then drop its finalizer.
        for going in owned:
            if _meta(going).get("deletionTimestamp"):
                if not suspended:
                    self._update(w, obj, stop(factory, going), "stopped", "its Workload is being deleted")
                    return None
                self._drop_finalizer(workloads, going)
                return None
        # Several Workloads: keep the first (Kueue's ensureOneWorkload), delete the others.
        wl = owned[0] if owned else None
        for extra in owned[1:]:
            self._delete(workloads, extra)
        # 3. finished
        if wl is not None and _true(wl, names.FINISHED):
            self._drop_finalizer(workloads, wl)
            return None
        # 4. the workload finished
        done = finished_condition(factory, observed_generation=_meta(wl).get("generation") if wl else None)
        if done is not None:
            if wl is not None:
                self._set_conditions(workloads, wl, [done])
                self.metrics.kueue_actions.labels(action="finished").inc()
            return None
        # 5. no Workload
        if wl is None:
            if not suspended:
                self._update(w, obj, stop(factory, None), "stopped", "it has no Kueue Workload yet")
                return None
            if self._active(obj):
                return _ACTIVE_RECHECK_S
            built = build_workload(factory, priority=self._priority(factory))
            self.client.create(built.obj, namespace=key.namespace)
            self.metrics.kueue_actions.labels(action="created").inc()
            self.events.normal(
                obj, "KueueWorkloadCreated", f"created Kueue Workload {built.obj['metadata']['name']}"
            )
            return None
        admitted = _true(wl, names.ADMITTED)
        reserved = _true(wl, names.QUOTA_RESERVED)
        # 6. not equivalent
        built = build_workload(factory, priority=self._priority(factory))
        if not equivalent(wl, built, admitted=admitted):
            if suspended and not reserved:
                fresh = dict(wl)
                fresh["spec"] = built.obj["spec"]
                fresh["metadata"] = {**_meta(wl), "annotations": built.obj["metadata"].get("annotations")}
                self.client.request_json("PUT", _path(workloads.resource, wl), body=fresh)
                self.metrics.kueue_actions.labels(action="updated").inc()
                return None
            if not suspended:
                self._update(w, obj, stop(factory, wl), "stopped", "it changed since its Workload was made")
                return None
            self._delete(workloads, wl)
            return None
        # 7. evicted, or running without admission
        evicted = _true(wl, names.EVICTED)
        if evicted or (not admitted and not suspended):
            if not suspended:
                reason = _condition(wl, names.EVICTED).get("reason") or "NotAdmitted"
                self._update(w, obj, stop(factory, wl), "stopped", f"Kueue evicted it ({reason})")
                return None
            if reserved:
                if self._active(obj):
                    return _ACTIVE_RECHECK_S
                self._release(workloads, wl)
            return None
        # 8. admitted and suspended: start
        if admitted and suspended:
            flavors = {
                str(_meta(f).get("name")): f
                for f in self.client.list("resourceflavors.v1beta2.kueue.x-k8s.io").items
            }
            infos = admission_infos(wl, flavors)
            self._update(
                w,
                obj,
                start(factory, wl, infos),
                "started",
                f"Kueue admitted Workload {_meta(wl).get('name')}",
            )
            return None
        # 9. admitted and running: PodsReady, as Kueue's job reconciler writes it for its own kinds
        if admitted:
            return self._pods_ready(workloads, obj, wl)
        return None

    def _pods_ready(self, workloads: Watched, obj: Mapping[str, Any], wl: Mapping[str, Any]) -> float | None:
        condition = pods_ready_condition(self._pods(obj), wl)
        current = _condition(wl, names.PODS_READY)
        if (current.get("status"), current.get("reason")) != (condition["status"], condition["reason"]):
            self._set_conditions(workloads, wl, [condition])
        return None if condition["status"] == "True" else _READY_RECHECK_S

    # -- reads ----------------------------------------------------------------------------------
    def _pods(self, obj: Mapping[str, Any]) -> list[dict[str, Any]]:
        pods, warnings = workload_pods(self.client, obj)
        if warnings:
            raise ClusterError("; ".join(warnings))
        return list(pods)

    def _active(self, obj: Mapping[str, Any]) -> bool:
        return is_active(self._pods(obj))

    def _priority(self, factory: extract.ComponentFactory) -> int | None:
        ref = priority_class_ref(factory)
        if ref is None:
            return None
        if ref.get("group") == names.WORKLOAD_PRIORITY_CLASS_GROUP:
            path = f"/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses/{ref['name']}"
        else:
            path = f"/apis/scheduling.k8s.io/v1/priorityclasses/{ref['name']}"
        try:
            found = self.client.request_json("GET", path)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise
        value = found.get("value") if isinstance(found, Mapping) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    # -- writes ---------------------------------------------------------------------------------
    def _update(self, w: Watched, obj: Mapping[str, Any], new: Any, action: str, why: str) -> None:
        body = dict(new)
        body["metadata"] = {
            **(body.get("metadata") or {}),
            "resourceVersion": _meta(obj).get("resourceVersion"),
        }
        try:
            self.client.request_json("PUT", _path(w.resource, obj), body=body)
        except ApiError as exc:
            if action == "started" and _rejected(exc):
                # The admitted workload cannot be written (say its annotations are full): the
                # admission cannot be applied, so its quota is handed back (FailedToStart).
                raise WriteBackError(f"the API server refused the started workload: {exc}") from exc
            raise
        self.metrics.kueue_actions.labels(action=action).inc()
        self.events.normal(obj, "KueueStarted" if action == "started" else "KueueStopped", f"{action}: {why}")
        _LOG.info("workload " + action, extra={"controller": CONTROLLER, "key": _label(obj), "why": why})

    def _drop_finalizer(self, workloads: Watched, wl: Mapping[str, Any]) -> None:
        """Kueue's ``resource-in-use`` finalizer removed from ``wl``. The JSON patch tests the
        finalizers it read (not the resourceVersion: garbage collection and Kueue change a Workload
        being deleted all the time, and a test on the version failed on nearly every handover);
        another finalizer added meanwhile fails the test, and the Workload is read again once."""
        name, namespace = str(_meta(wl).get("name")), str(_meta(wl).get("namespace"))
        for attempt in range(2):
            finalizers = list(_meta(wl).get("finalizers") or [])
            if names.RESOURCE_IN_USE_FINALIZER not in finalizers:
                return
            kept = [f for f in finalizers if f != names.RESOURCE_IN_USE_FINALIZER]
            patch = [
                {"op": "test", "path": "/metadata/finalizers", "value": finalizers},
                {"op": "replace", "path": "/metadata/finalizers", "value": kept},
            ]
            try:
                self.client.patch(workloads.resource, name, patch, namespace=namespace, patch_type="json")
            except ApiError as exc:
                if exc.status == 404:
                    return
                if exc.status != 422 or attempt:
                    raise
                try:
                    wl = self.client.get(workloads.resource, name, namespace=namespace)
                except ApiError as again:
                    if again.status == 404:
                        return
                    raise
                continue
            self.metrics.kueue_actions.labels(action="finalizer-dropped").inc()
            return

    def _delete(self, workloads: Watched, wl: Mapping[str, Any]) -> None:
        try:
            self.client.delete(
                workloads.resource, str(_meta(wl).get("name")), namespace=str(_meta(wl).get("namespace"))
            )
        except ApiError as exc:
            if exc.status != 404:
                raise
        self.metrics.kueue_actions.labels(action="deleted").inc()

    def _set_conditions(
        self, workloads: Watched, wl: Mapping[str, Any], new: Sequence[Mapping[str, Any]], **status: Any
    ) -> None:
        body = {
            "metadata": {"resourceVersion": _meta(wl).get("resourceVersion")},
            "status": {"conditions": _with_conditions(wl, new), **status},
        }
        self.client.patch(
            workloads.resource, str(_meta(wl).get("name")), body,
            namespace=str(_meta(wl).get("namespace")), subresource="status",
        )  # fmt: skip

    def _release(self, workloads: Watched, wl: Mapping[str, Any]) -> None:
        """Kueue's UnsetQuotaReservationWithCondition + SetRequeuedCondition for an evicted Workload
        whose workload has no active pod left."""
        evicted = _condition(wl, names.EVICTED)
        reason = str(evicted.get("reason") or "Evicted")
        message = str(evicted.get("message") or "evicted")
        self._set_conditions(
            workloads,
            wl,
            [
                {"type": names.QUOTA_RESERVED, "status": "False", "reason": "Pending", "message": message},
                {
                    "type": names.ADMITTED,
                    "status": "False",
                    "reason": "NoReservation",
                    "message": "The workload has no reservation",
                },
                {"type": "Requeued", "status": "True", "reason": reason, "message": message},
            ],
            admission=None,
        )
        self.metrics.kueue_actions.labels(action="released").inc()

    def _failed_to_start(
        self, obj: Mapping[str, Any], workloads: Watched, wl: Mapping[str, Any], message: str
    ) -> None:
        condition = {"type": names.FINISHED, "status": "True", "reason": "FailedToStart", "message": message}
        self._set_conditions(workloads, wl, [condition])
        self.metrics.kueue_actions.labels(action="failed-to-start").inc()
        self.events.warning(
            obj,
            "KueueFailedToStart",
            f"the admission of Workload {_meta(wl).get('name')} cannot be applied: {message}",
        )

    def _release_unmanaged(self, key: Key) -> None:
        """A Workload of ours being deleted whose owner's kind karta no longer manages: its
        finalizer dropped."""
        with self._lock:
            workloads = self._workloads
            reconciled = {gk: w.resource.gvk for gk, w in self._types.items()}
        wl = workloads.get(key.namespace, key.name) if workloads is not None else None
        if workloads is None or wl is None or not _meta(wl).get("deletionTimestamp") or not _ours(wl):
            return
        if owner_keys(wl, reconciled):
            return  # managed again: the owner's reconcile decides
        self._drop_finalizer(workloads, wl)

    def _release_orphans(self, workloads: Watched, key: Key) -> None:
        """The workload is gone or going: its Workloads' finalizers dropped (the owner reference
        deletes them; there is nothing left to stop)."""
        for wl in workloads.objects():
            meta = _meta(wl)
            if meta.get("namespace") != key.namespace:
                continue
            if any(_names(r, key) for r in meta.get("ownerReferences") or []):
                self._drop_finalizer(workloads, wl)


def _rejected(exc: ApiError) -> bool:
    """The API server refused the object itself: invalid (400, 413, 422), or denied by an admission
    webhook (Kueue's own, a policy engine's), which answers 403 as a missing right does."""
    return exc.status in _REJECTED or (exc.status == 403 and "admission webhook" in str(exc))


def _ours(wl: Mapping[str, Any]) -> bool:
    """A Workload karta made (its managed-by label) still holding Kueue's finalizer."""
    meta = _meta(wl)
    labels = meta.get("labels") or {}
    return labels.get("app.kubernetes.io/managed-by") == "karta" and names.RESOURCE_IN_USE_FINALIZER in (
        meta.get("finalizers") or []
    )


def _names(ref: Any, key: Key) -> bool:
    """An owner reference that is the controller ``key`` names."""
    if not isinstance(ref, Mapping) or not ref.get("controller"):
        return False
    group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    return ref.get("kind") == key.gvk.kind and ref.get("name") == key.name and group == key.gvk.group


def _owns(wl: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    return any(
        isinstance(r, Mapping) and r.get("controller") and r.get("uid") == meta.get("uid")
        for r in _meta(wl).get("ownerReferences") or []
    )


def _path(rtype: ResourceType, obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    return rtype.object_path(str(meta.get("name")), str(meta.get("namespace") or "") or None)


def _label(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    return f"{obj.get('kind')} {meta.get('namespace')}/{meta.get('name')}"


def _bound(handler: Any, rtype: ResourceType) -> Handler:
    def bound(kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        handler(rtype, kind, obj, old)

    return bound


def kueue_rules(
    kartas: Sequence[Karta],
    *,
    native: Sequence[str] = (),
    plurals: Mapping[tuple[str, str], str] | None = None,
) -> list[dict[str, Any]]:
    """The RBAC rules of ``--kueue`` for the definitions ``kartas`` (docs/kueue.md section 8): the
    managed kinds read and updated (suspend, resume, the pod templates) and their ``finalizers``
    updated (the Workload's owner reference blocks owner deletion); Kueue's Workloads written,
    their status patched; ResourceFlavors read; WorkloadPriorityClasses and PriorityClasses got;
    pods read and the owner walk between a pod and its workload (``get``)."""
    plurals = plurals or {}
    managed_kinds: dict[str, set[str]] = {}
    for karta in kartas:
        gvk = karta.root_gvk
        if gvk is None or not gvk.kind or not manages(karta, native):
            continue
        managed_kinds.setdefault(gvk.group, set()).add(
            plurals.get((gvk.group, gvk.kind)) or plural_guess(gvk.kind)
        )
    rules = [
        rule(g, sorted(names), ("get", "list", "watch", "update", "patch"))
        for g, names in sorted(managed_kinds.items())
    ]
    rules += [
        rule(g, sorted(f"{n}/finalizers" for n in names), ("update",))
        for g, names in sorted(managed_kinds.items())
    ]
    rules += [
        rule(WORKLOADS.group, ["workloads"], ("get", "list", "watch", "create", "update", "patch", "delete")),
        rule(WORKLOADS.group, ["workloads/status"], ("get", "update", "patch")),
        rule(WORKLOADS.group, ["resourceflavors"], READ_VERBS),
        rule(WORKLOADS.group, ["workloadpriorityclasses"], ("get",)),
        rule("scheduling.k8s.io", ["priorityclasses"], ("get",)),
        rule("", ["pods"], READ_VERBS),
    ]
    read: dict[str, set[str]] = {g: set(n) for g, n in managed_kinds.items()}
    read.setdefault("", set()).add("pods")
    rules += owner_rules([k for k in kartas if manages(k, native)], read=read, plurals=plurals)
    return rules
