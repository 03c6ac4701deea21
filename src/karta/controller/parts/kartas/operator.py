"""The Karta operator (docs/spec/format.md#operator-conditions, #index-labels): validates and indexes
``kartas.run.ai`` objects.

For every Karta not being deleted, :class:`KartaOperator` keeps three conditions on its status
(``Validated``, ``CRDExists``, ``Ready``, each with ``observedGeneration``; ``lastTransitionTime``
moves only when a condition's status does), writes a Warning event when validation fails or the
root kind's CRD is missing, and keeps the three index labels equal to the root GVK (merge patch).
Status goes through the ``status`` subresource. Only API errors re-queue a Karta (rate-limited);
a definition the library cannot even read is reported as not validated, never retried.

While the process's :class:`~karta.controller.runtime.quarantine.Quarantine` holds the Karta
(its evaluations breached their budget too often, docs/controller/quarantine.md), a fourth
condition ``Degraded=True``, reason ``BudgetExceeded``, says so (with a Warning event); once a new
generation lifts it, ``Degraded=False`` (reason ``WithinBudget``). A Karta never quarantined has
no ``Degraded`` condition.

The decisions are pure functions (:func:`validation_text`, :func:`desired_conditions`,
:func:`merge_conditions`; the root GVK and its index labels come from ``karta.definitions``); the
class only watches (Kartas through the shared cache, :class:`karta.kube.cache.SharedCache`, the
same informer as the live definitions'; CRDs through :class:`~karta.controller.runtime.crds.CRDIndex`,
the process's one) and writes. Definitions come from the cluster and are
untrusted: the library validator has its own budgets, and anything it raises becomes a
``ValidationFailed`` message instead of a crash.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from karta.controller.runtime.crds import CRDIndex
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.logs import logger
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.quarantine import (
    BUDGET_EXCEEDED,
    DEGRADED,
    WITHIN_BUDGET,
    Quarantine,
    Quarantined,
    degraded_message,
)
from karta.controller.runtime.workqueue import WorkQueue, run_workers
from karta.definitions import INDEX_LABELS, index_labels, root_gvk
from karta.errors import ApiError, ClusterError, KartaError
from karta.kube.cache import SharedCache
from karta.kube.client import KubeClient
from karta.kube.informer import object_key
from karta.kube.kartas import KARTA_RESOURCE
from karta.model import GVK
from karta.rbac import rule

__all__ = [
    "CONDITION_TYPES",
    "CONTROLLER",
    "CRD_EXISTS",
    "READY",
    "VALIDATED",
    "Condition",
    "KartaOperator",
    "crd_not_found_message",
    "degraded_condition",
    "desired_conditions",
    "merge_conditions",
    "operator_rules",
    "validation_text",
]

CONTROLLER: Final = "karta"  # the label of its reconcile and queue metrics
VALIDATED: Final = "Validated"
CRD_EXISTS: Final = "CRDExists"
READY: Final = "Ready"
CONDITION_TYPES: Final = (VALIDATED, CRD_EXISTS, READY)
LEGACY_VALIDATED: Final = "KartaValidated"  # a historical name, read (never written)

PENDING: Final = "Pending"
PENDING_MESSAGE: Final = "Condition has not been evaluated yet"
VALIDATION_FAILED: Final = "ValidationFailed"
VALIDATION_SUCCEEDED: Final = "ValidationSucceeded"
VALIDATION_SUCCEEDED_MESSAGE: Final = "the Karta definition is valid"
CRD_FOUND: Final = "CRDFound"
CRD_NOT_FOUND: Final = "CRDNotFound"
READY_REASON: Final = "Ready"
READY_MESSAGE: Final = "Validated and CRDExists are True"
NOT_READY: Final = "NotReady"
NOT_READY_MESSAGE: Final = "Validated and CRDExists must both be True"
VALIDATION_CACHE: Final = 4096  # validator texts kept, one per Karta (uid)
LABELS_RETRY_S: Final = 300.0  # after the index labels were refused
MAX_MESSAGE: Final = 32768  # the CRD's maxLength for a condition message
_LOG = logger("operator")


# --------------------------------------------------------------------------------- pure decisions


def validation_text(obj: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The library validator's text for a Karta object (empty: valid) and its warnings.

    The object is read leniently, as every cluster Karta is; a definition that cannot be read
    gives the reader's findings instead. Never raises (untrusted input)."""
    from karta.model import load_karta, validate_karta

    name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), Mapping) else None
    try:
        loaded = load_karta(dict(obj), strict=False, source_name=f"Karta {name or '<unnamed>'}")
        errors = [f.message for f in loaded.findings if f.is_error]
        if loaded.karta is None or errors:
            return "\n".join(errors) or "the Karta could not be read", []
        findings = validate_karta(loaded.karta)
    except KartaError as exc:
        return str(exc) or type(exc).__name__, []
    except Exception as exc:  # a library bug on hostile input must not take the operator down
        _LOG.exception("the validator failed", extra={"key": str(name)})
        return f"the definition could not be validated: {type(exc).__name__}", []
    text = "\n".join(f.message for f in findings if f.is_error)
    return text, [f.message for f in findings if not f.is_error]


def crd_not_found_message(gvk: GVK) -> str:
    return f"CRD for {gvk.group}/{gvk.kind} not found or does not serve version {gvk.version}"


@dataclass(frozen=True)
class Condition:
    """A condition's evaluated state (``metav1.Condition`` without the bookkeeping fields)."""

    type: str
    status: str
    reason: str
    message: str


def desired_conditions(validation: str, gvk: GVK | None, *, served: bool) -> list[Condition]:
    """The three conditions of 15.1 for a validator text (empty: valid), the root GVK (None: the
    root has no kind, CRDExists keeps its default) and whether the GVK is served."""
    if validation:
        validated = Condition(VALIDATED, "False", VALIDATION_FAILED, validation[:MAX_MESSAGE])
    else:
        validated = Condition(VALIDATED, "True", VALIDATION_SUCCEEDED, VALIDATION_SUCCEEDED_MESSAGE)
    if gvk is None:
        crd = Condition(CRD_EXISTS, "False", PENDING, PENDING_MESSAGE)
    elif served:
        crd = Condition(
            CRD_EXISTS, "True", CRD_FOUND, f"{gvk.group}/{gvk.kind} is served at version {gvk.version}"
        )
    else:
        crd = Condition(CRD_EXISTS, "False", CRD_NOT_FOUND, crd_not_found_message(gvk)[:MAX_MESSAGE])
    if validated.status == "True" and crd.status == "True":
        ready = Condition(READY, "True", READY_REASON, READY_MESSAGE)
    else:
        ready = Condition(READY, "False", NOT_READY, NOT_READY_MESSAGE)
    return [validated, crd, ready]


def degraded_condition(quarantined: str | None, existing: Any) -> Condition | None:
    """``Degraded`` for the quarantine's message (None: not quarantined): True with reason
    ``BudgetExceeded`` while quarantined; False once lifted; absent on a Karta never quarantined."""
    if quarantined is not None:
        return Condition(DEGRADED, "True", BUDGET_EXCEEDED, quarantined[:MAX_MESSAGE])
    current = existing if isinstance(existing, list) else []
    if not any(_is_condition(c) and c["type"] == DEGRADED for c in current):
        return None
    return Condition(DEGRADED, "False", WITHIN_BUDGET, "no budget breach quarantines this generation")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def merge_conditions(
    existing: Any, desired: Sequence[Condition], *, generation: int | None, now: str | None = None
) -> list[dict[str, Any]]:
    """The status conditions after setting ``desired`` on ``existing`` (any shape: what is not a
    condition is dropped), as ``meta.SetStatusCondition`` does: ``lastTransitionTime`` is kept
    unless the status changes; other condition types are kept in place; new ones are appended.
    A missing ``Validated`` inherits the legacy ``KartaValidated``'s transition time."""
    stamp = now or _now()
    current = [dict(c) for c in (existing if isinstance(existing, list) else []) if _is_condition(c)]
    by_type = {c["type"]: c for c in current}
    legacy = by_type.get(LEGACY_VALIDATED)
    out: list[dict[str, Any]] = []
    wanted = {d.type: d for d in desired}
    for c in current:
        if c["type"] not in wanted:
            out.append(c)
            continue
        out.append(_set(c, wanted.pop(c["type"]), generation, stamp))
    for d in desired:
        if d.type not in wanted:
            continue
        before = legacy if d.type == VALIDATED and legacy is not None else None
        out.append(_set(before, d, generation, stamp))
    return out


def _is_condition(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("type"), str) and bool(value.get("type"))


def _set(
    before: Mapping[str, Any] | None, d: Condition, generation: int | None, stamp: str
) -> dict[str, Any]:
    transition = stamp
    if (
        before is not None
        and before.get("status") == d.status
        and isinstance(before.get("lastTransitionTime"), str)
    ):
        transition = str(before["lastTransitionTime"])
    out: dict[str, Any] = {
        "type": d.type,
        "status": d.status,
        "reason": d.reason,
        "message": d.message,
        "lastTransitionTime": transition,
    }
    if generation is not None:
        out["observedGeneration"] = generation
    return out


def _generation(obj: Mapping[str, Any]) -> int | None:
    meta = obj.get("metadata")
    value = meta.get("generation") if isinstance(meta, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _conditions_of(obj: Mapping[str, Any]) -> Any:
    status = obj.get("status")
    return status.get("conditions") if isinstance(status, Mapping) else None


def _labels_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return dict(labels) if isinstance(labels, Mapping) else {}


# ------------------------------------------------------------------------------------- the part


class KartaOperator:
    """The reconciler of Karta objects; a manager part (run it leader-only)."""

    name = "karta-operator"

    def __init__(
        self,
        client: KubeClient,
        *,
        events: EventRecorder,
        metrics: Metrics,
        workers: int = 2,
        crds: CRDIndex | None = None,
        drain_timeout: float = 30.0,
        cache: SharedCache | None = None,
        quarantine: Quarantine | None = None,
    ) -> None:
        self.client = client
        self.events = events
        self.quarantine = quarantine or Quarantine(metrics=metrics)
        self.quarantine.listen(self._quarantine_changed)
        self.metrics = metrics
        self.workers = workers
        self.drain_timeout = drain_timeout
        self.queue: WorkQueue[str] = WorkQueue("karta", metrics)
        # Without a shared cache or CRD index (a part on its own), its own ones, run with it.
        self._own_cache = cache is None
        self.cache = cache or SharedCache(client, log=_LOG)
        self._kartas = self.cache.watch(KARTA_RESOURCE, handler=self._karta_changed, on_error=self._on_error)
        self.kartas = self._kartas.informer
        self._own_crds = crds is None
        self.crds = crds or CRDIndex(client)
        self.crds.listen(self._crd_changed)
        self._missing_crd = threading.Event()  # the Kartas CRD itself is absent: nothing to wait for
        self._summary: dict[str, tuple[tuple[str, str], ...]] = {}
        self._summary_lock = threading.Lock()
        self._validated: dict[str, tuple[int, str]] = {}  # uid -> (generation, validator text)

    # -- readiness ------------------------------------------------------------------------------
    def synced(self) -> bool:
        return (self.kartas.synced.is_set() or self._missing_crd.is_set()) and self.crds.synced.is_set()

    def _on_error(self, exc: KartaError) -> None:
        if isinstance(exc, ApiError) and exc.status in (403, 404):
            self._missing_crd.set()

    # -- event handlers (informer threads: enqueue only) ------------------------------------------
    def _karta_changed(self, kind: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        key = object_key(obj)
        if kind == "DELETED":
            meta = obj.get("metadata")
            self._forget(key, meta.get("uid") if isinstance(meta, Mapping) else None)
            return
        self.queue.add(key)

    def _quarantine_changed(self, entry: Quarantined, _held: bool) -> None:
        if entry.origin == "cluster":
            self.queue.add(entry.definition)

    def _crd_changed(self, group: str, kind: str) -> None:
        for obj in self.kartas.objects():
            labels = _labels_of(obj)
            gvk = root_gvk(obj)
            by_labels = labels.get(INDEX_LABELS[0]) == group and labels.get(INDEX_LABELS[2]) == kind
            if by_labels or (gvk is not None and (gvk.group, gvk.kind) == (group, kind)):
                self.queue.add(object_key(obj))

    # -- metrics ----------------------------------------------------------------------------------
    def _record(self, key: str, conditions: Sequence[Condition] | None) -> None:
        with self._summary_lock:
            if conditions is None:
                self._summary.pop(key, None)
            else:
                self._summary[key] = tuple((c.type, c.status) for c in conditions)
            counts: dict[tuple[str, str], int] = {
                (t, s): 0 for t in CONDITION_TYPES for s in ("True", "False")
            }
            for summary in self._summary.values():
                for pair in summary:
                    counts[pair] = counts.get(pair, 0) + 1
            for (condition, status), n in counts.items():
                self.metrics.kartas.labels(condition=condition, status=status).set(n)

    def _forget(self, key: str, uid: Any = None) -> None:
        self._record(key, None)
        self.quarantine.forget(key)
        if isinstance(uid, str):
            with self._summary_lock:
                self._validated.pop(uid, None)

    # -- reconcile --------------------------------------------------------------------------------
    def reconcile(self, key: str) -> float | None:
        """One pass over the Karta ``key``; API errors raise (the queue retries them)."""
        obj = self.kartas.get(key)
        if obj is None:
            self._forget(key)
            return None
        raw_meta = obj.get("metadata")
        meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
        if meta.get("deletionTimestamp"):
            self._forget(key)
            return None
        name = str(meta.get("name") or key)
        gvk = root_gvk(obj)
        validation = self._validation(obj, meta)
        served = self.crds.serves(*gvk) if gvk is not None else False  # discovery errors: requeue
        desired = desired_conditions(validation, gvk, served=served)
        generation = _generation(obj)
        existing = _conditions_of(obj)
        degraded = degraded_condition(self._quarantine_message(name, meta, generation, existing), existing)
        if degraded is not None:
            desired.append(degraded)
        previous = {
            c["type"]: c for c in (existing if isinstance(existing, list) else []) if _is_condition(c)
        }
        for condition in desired:
            before = previous.get(condition.type)
            changed = (
                before is None
                or before.get("status") != condition.status
                or before.get("reason") != condition.reason
                or before.get("message") != condition.message
                or before.get("observedGeneration") != generation
            )
            if condition.status == "False" and changed:
                if condition.reason == VALIDATION_FAILED:
                    self.events.warning(obj, VALIDATION_FAILED, condition.message)
                elif condition.reason == CRD_NOT_FOUND:
                    self.events.warning(obj, CRD_NOT_FOUND, condition.message)
            if condition.reason == BUDGET_EXCEEDED and changed:
                self.events.warning(obj, BUDGET_EXCEEDED, condition.message)

        resource_version = meta.get("resourceVersion")
        labels = index_labels(gvk)
        current = _labels_of(obj)
        missing = {k: v for k, v in labels.items() if current.get(k) != v}
        requeue: float | None = None
        if missing:
            try:
                patched = self._write(
                    lambda: self.client.patch(KARTA_RESOURCE, name, {"metadata": {"labels": missing}})
                )
            except ApiError as exc:
                if exc.status not in (400, 403, 422):
                    raise
                # Refused (an admission webhook denying an invalid definition, RBAC): retrying at
                # once cannot help, and the conditions must still be written. Try again later.
                _LOG.warning(
                    "cannot set the index labels",
                    extra={"controller": CONTROLLER, "key": key, "error": str(exc)},
                )
                requeue = LABELS_RETRY_S
            else:
                resource_version = (patched.get("metadata") or {}).get("resourceVersion", resource_version)

        conditions = merge_conditions(existing, desired, generation=generation)
        if conditions != existing:
            body: dict[str, Any] = {"status": {"conditions": conditions}}
            if resource_version:
                body["metadata"] = {"resourceVersion": resource_version}
            self._write(lambda: self.client.patch(KARTA_RESOURCE, name, body, subresource="status"))
        self._record(key, [c for c in desired if c.type in CONDITION_TYPES])
        return requeue

    def _quarantine_message(
        self, name: str, meta: Mapping[str, Any], generation: int | None, existing: Any
    ) -> str | None:
        """The quarantine's message for this Karta at this generation: the process's record, else
        the ``BudgetExceeded`` condition already written for this generation (kept: a restart or
        another leader does not lift a quarantine, a new generation does)."""
        uid = meta.get("uid") if isinstance(meta.get("uid"), str) else None
        entry = self.quarantine.for_karta(name, uid=uid, generation=generation)
        if entry is not None:
            return entry.message
        return degraded_message(existing if isinstance(existing, list) else (), generation)

    def _validation(self, obj: Mapping[str, Any], meta: Mapping[str, Any]) -> str:
        """The validator text, once per spec: our own status and label writes re-queue the Karta,
        and validating an untrusted definition again each time would only repeat the work."""
        generation = _generation(obj)
        uid = meta.get("uid")
        if not isinstance(uid, str) or not uid or generation is None:
            return validation_text(obj)[0]
        with self._summary_lock:
            cached = self._validated.get(uid)
        if cached is not None and cached[0] == generation:
            return cached[1]
        text = validation_text(obj)[0]
        with self._summary_lock:
            if len(self._validated) >= VALIDATION_CACHE and uid not in self._validated:
                self._validated.pop(next(iter(self._validated)))
            self._validated[uid] = (generation, text)
        return text

    def _write(self, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return call()
        except ApiError as exc:
            if exc.status == 404:  # deleted meanwhile: its DELETED event is on the way
                return {}
            raise
        except ClusterError:
            raise

    def _reconcile_safely(self, key: str) -> float | None:
        try:
            return self.reconcile(key)
        except ClusterError:
            raise
        except Exception:  # not an API error: retrying would fail the same way
            _LOG.exception("reconcile failed; not retrying", extra={"controller": CONTROLLER, "key": key})
            return None

    # -- running ----------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        owned = [p for p, own in ((self.cache, self._own_cache), (self.crds, self._own_crds)) if own]
        for part in owned:
            threading.Thread(target=part.run, args=(stop,), name=part.name, daemon=True).start()
        while not self.synced():
            if stop.wait(0.05):
                return
        _LOG.info("caches synced; reconciling", extra={"controller": CONTROLLER})
        run_workers(
            self.queue,
            self._reconcile_safely,
            workers=self.workers,
            stop=stop,
            controller=CONTROLLER,
            metrics=self.metrics,
            drain_timeout=self.drain_timeout,
        )


def operator_rules() -> list[dict[str, Any]]:
    """The RBAC rules of :class:`KartaOperator` beyond the Karta watch
    (:func:`karta.controller.runtime.definitions.definitions_rules`): patch ``kartas.run.ai`` (the
    index labels) and ``kartas/status`` (the conditions)."""
    return [rule("run.ai", ["kartas"], ["patch"]), rule("run.ai", ["kartas/status"], ["patch"])]
