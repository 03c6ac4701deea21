"""Where a workload stands in Kueue: its queue, its Kueue ``Workload``, the admission state and
why it waits, for ``kli describe`` (and any consumer of the describe report). Pure: the object and
the Kueue Workloads :mod:`karta.kube` read in, a record out.

The state is Kueue's own classification (``pkg/workload/workload.go`` ``Status`` in Kueue
v0.17.0): ``Finished`` when the Workload's ``Finished`` condition is True, else ``Admitted`` when
``Admitted`` is True, else ``QuotaReserved`` when ``QuotaReserved`` is True (quota held, admission
checks pending), else ``Pending``. Two states Kueue's classification folds into those are named
too: ``Inactive`` (``spec.active: false``: deactivated, never admitted until reactivated) and, on
an admitted or reserved Workload, an ``Evicted`` condition that is True (being evicted: the job is
suspended and requeued). Why it waits is the message of the condition that decides the state:
``QuotaReserved`` for a pending Workload (Kueue writes the flavor assignment's failure there,
e.g. ``couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in
flavor default, 8 more needed``), ``Admitted`` for a reserved one (the admission checks),
``Evicted`` and ``Preempted`` when True.

Which Workload is the object's: Kueue labels each Workload it creates for a job with
``kueue.x-k8s.io/job-uid`` (``pkg/controller/constants``) and makes the job its controller owner;
the reader lists by that label, and :func:`queue_detail` keeps those whose controller owner is
the object (by uid). Several (an old one being deleted next to its replacement): the newest that
is not being deleted, and a note says so. A queue label without any Workload is said as such
(Kueue, or karta-controller's Kueue part, has not created one yet), never as "pending".

Not shown: the position in the queue. Kueue serves it only through its visibility API (an
aggregated API server, ``visibility.kueue.x-k8s.io``), and counting pending Workloads here would
ignore priorities, fair sharing and borrowing: a position we cannot read is left out rather than
guessed.

For lists (``kli get``'s QUEUE column, the web view's queue column): :func:`queue_cell` is the
short form, ``<queue>:<state>`` (``team:Admitted``), and :func:`unknown_queue` the detail of a
workload whose Workloads could not be read (state ``Unknown``, the cell ``team:?``): never a
state that was not read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta._records import record

__all__ = [
    "JOB_UID_LABEL",
    "QUEUE_LABEL",
    "UNKNOWN",
    "QueueDetail",
    "queue_cell",
    "queue_detail",
    "queue_name",
    "unknown_queue",
]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
UNKNOWN = "Unknown"  # the state of a workload whose Kueue Workloads could not be read

_NO_WORKLOAD = "no Kueue Workload exists for it yet (Kueue, or karta-controller's Kueue part, creates one)"


@record
class QueueDetail:
    """The object's place in Kueue. ``workload`` is None when no Kueue Workload exists for it
    (``state`` is then ``NoWorkload``); ``cluster_queue`` is known once quota is reserved
    (``status.admission.clusterQueue``); ``reason``/``message`` say why it waits or what happened
    (the deciding condition's); ``notes`` are further facts (an eviction, a preemption, several
    Workloads)."""

    queue: str | None
    workload: str | None
    state: str
    cluster_queue: str | None = None
    reason: str = ""
    message: str = ""
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "queue": self.queue,
            "workload": self.workload,
            "state": self.state,
            "clusterQueue": self.cluster_queue,
            "reason": self.reason,
            "message": self.message,
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def queue_name(obj: Mapping[str, Any]) -> str | None:
    """The ``kueue.x-k8s.io/queue-name`` label of ``obj`` (a non-empty string), or None."""
    metadata = obj.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    value = labels.get(QUEUE_LABEL) if isinstance(labels, Mapping) else None
    return value if isinstance(value, str) and value else None


def unknown_queue(obj: Mapping[str, Any], why: str) -> QueueDetail:
    """The detail of ``obj`` when its Kueue Workloads could not be read (``why``)."""
    return QueueDetail(queue=queue_name(obj), workload=None, state=UNKNOWN, message=why)


def queue_cell(queue: Mapping[str, Any] | None) -> str:
    """The list cell of a :meth:`QueueDetail.to_dict`: ``<queue>:<state>``, ``<queue>:?`` when
    unknown, ``<none>`` without one."""
    if not isinstance(queue, Mapping):
        return "<none>"
    name = _text(queue.get("queue")) or "<none>"
    state = _text(queue.get("state"))
    return f"{name}:{'?' if state == UNKNOWN or not state else state}"


def queue_detail(obj: Mapping[str, Any], workloads: Sequence[Mapping[str, Any]]) -> QueueDetail | None:
    """Where ``obj`` stands in Kueue, from the Kueue ``workloads`` read for it (those not owned by
    it, by controller owner reference and uid, are ignored); None when it has neither a queue
    label nor a Workload (Kueue does not manage it)."""
    queue = queue_name(obj)
    metadata = obj.get("metadata")
    uid = metadata.get("uid") if isinstance(metadata, Mapping) else None
    owned = [w for w in workloads if isinstance(w, Mapping) and uid and _controlled_by(w, uid)]
    if not owned:
        if queue is None:
            return None
        return QueueDetail(
            queue=queue,
            workload=None,
            state="NoWorkload",
            message=_NO_WORKLOAD,
        )
    live = [w for w in owned if not _meta(w).get("deletionTimestamp")] or owned
    chosen = max(
        live, key=lambda w: (str(_meta(w).get("creationTimestamp") or ""), str(_meta(w).get("name")))
    )
    notes: list[str] = []
    if len(owned) > 1:
        others = sorted(str(_meta(w).get("name") or "") for w in owned if w is not chosen)
        notes.append(
            f"{len(owned)} Kueue Workloads are owned by it; shown: the newest, others: {', '.join(others)}"
        )
    return _detail(queue, chosen, notes)


def _detail(queue: str | None, workload: Mapping[str, Any], notes: list[str]) -> QueueDetail:
    conditions = _conditions(workload)
    spec, status = _field(workload, "spec"), _field(workload, "status")
    cluster_queue = _field(status, "admission").get("clusterQueue")
    if not isinstance(cluster_queue, str) or not cluster_queue:
        cluster_queue = None
    if queue is None and isinstance(spec.get("queueName"), str) and spec.get("queueName"):
        queue = spec["queueName"]

    def true(kind: str) -> Mapping[str, Any] | None:
        c = conditions.get(kind)
        return c if c is not None and c.get("status") == "True" else None

    evicted, preempted = true("Evicted"), true("Preempted")
    if true("Finished") is not None:
        state, deciding = "Finished", conditions.get("Finished")
    elif true("Admitted") is not None:
        state, deciding = "Admitted", None
    elif true("QuotaReserved") is not None:
        state, deciding = "QuotaReserved", conditions.get("Admitted")
    elif spec.get("active") is False:
        state, deciding = "Inactive", evicted
    else:
        state, deciding = "Pending", conditions.get("QuotaReserved")
    if state in ("Admitted", "QuotaReserved") and evicted is not None:
        state, deciding = "Evicting", evicted
    for label, condition in (("evicted", evicted), ("preempted", preempted)):
        if condition is not None and condition is not deciding:
            why = ": ".join(p for p in (_text(condition.get("reason")), _text(condition.get("message"))) if p)
            notes.append(f"{label}: {why}" if why else label)
    return QueueDetail(
        queue=queue,
        workload=_text(_meta(workload).get("name")) or None,
        state=state,
        cluster_queue=cluster_queue,
        reason=_text(deciding.get("reason")) if deciding else "",
        message=_text(deciding.get("message")) if deciding else "",
        notes=tuple(notes),
    )


def _age_key(workload: Mapping[str, Any]) -> tuple[str, str]:
    """Newest last: RFC 3339 creation times in UTC sort as text; the name breaks ties."""
    meta = _meta(workload)
    return str(meta.get("creationTimestamp") or ""), str(meta.get("name") or "")


def _controlled_by(workload: Mapping[str, Any], uid: str) -> bool:
    refs = _meta(workload).get("ownerReferences")
    return any(
        isinstance(ref, Mapping) and ref.get("uid") == uid and ref.get("controller") is True
        for ref in (refs if isinstance(refs, list) else ())
    )


def _conditions(workload: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    status = workload.get("status")
    items = status.get("conditions") if isinstance(status, Mapping) else None
    out: dict[str, Mapping[str, Any]] = {}
    for item in items if isinstance(items, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("type"), str):
            out[item["type"]] = item
    return out


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _field(obj, "metadata")


def _field(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``obj[key]`` when it is an object, else an empty one."""
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)
