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

The position of a pending Workload is Kueue's, read from its visibility API (an aggregated API
server, ``visibility.kueue.x-k8s.io``, served by Kueue's manager when its ``VisibilityOnDemand``
feature gate is on, the default since v0.9): ``GET .../namespaces/<ns>/localqueues/<lq>/
pendingworkloads`` answers a ``PendingWorkloadsSummary`` whose items carry
``positionInClusterQueue`` and ``positionInLocalQueue`` (from 0, in the order Kueue's queue
manager would try them: priority, then creation or eviction time, inadmissible ones included;
``pkg/visibility/storage/pending_workloads_lq.go`` in v0.17.0). :func:`pending_query` says which
list to read (only for a ``Pending`` Workload), :class:`PendingInput` is what was read (the pages'
items, whether the list was read to its end, the LocalQueue's ClusterQueue, or why it could not
be read), and :func:`queue_detail` turns it into :class:`QueuePosition` (shown from 1: ``position
3 in ClusterQueue gpu, 2 in LocalQueue team``) or, when the API is not served, refused, failed,
answered something unreadable or did not list the Workload, a one-line ``position_note``. Never
a guessed number: counting pending Workloads here would ignore priorities, fair sharing and
borrowing.

For lists (``kli get``'s QUEUE column, the web view's queue column): :func:`queue_cell` is the
short form, ``<queue>:<state>`` (``team:Admitted``), and :func:`unknown_queue` the detail of a
workload whose Workloads could not be read (state ``Unknown``, the cell ``team:?``): never a
state that was not read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from karta._records import record, replace

__all__ = [
    "JOB_UID_LABEL",
    "MAX_POSITION",
    "QUEUE_LABEL",
    "UNKNOWN",
    "PendingInput",
    "PendingQuery",
    "QueueDetail",
    "QueuePosition",
    "pending_query",
    "queue_cell",
    "queue_detail",
    "queue_name",
    "unknown_queue",
]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
UNKNOWN = "Unknown"  # the state of a workload whose Kueue Workloads could not be read

MAX_POSITION = 1 << 30  # a position beyond this (int32 in Kueue's API) is not a position

_NO_WORKLOAD = "no Kueue Workload exists for it yet (Kueue, or karta-controller's Kueue part, creates one)"


@record
class QueuePosition:
    """Where a pending Workload stands, from 1: ``cluster_queue`` in its ClusterQueue
    (``cluster_queue_name``, None when the LocalQueue could not be read), ``local_queue`` in its
    LocalQueue ``local_queue_name``."""

    cluster_queue: int
    local_queue: int
    local_queue_name: str
    cluster_queue_name: str | None = None

    @property
    def text(self) -> str:
        """``position 3 in ClusterQueue gpu, 2 in LocalQueue team``."""
        where = f"ClusterQueue {self.cluster_queue_name}" if self.cluster_queue_name else "its ClusterQueue"
        lq = f"{self.local_queue} in LocalQueue {self.local_queue_name}"
        return f"position {self.cluster_queue} in {where}, {lq}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "clusterQueue": self.cluster_queue,
            "localQueue": self.local_queue,
            "clusterQueueName": self.cluster_queue_name,
            "localQueueName": self.local_queue_name,
            "text": self.text,
        }


@record
class PendingQuery:
    """The pending list to read for a Workload: LocalQueue ``local_queue`` in ``namespace``, where
    Kueue's Workload ``workload`` is expected."""

    namespace: str
    local_queue: str
    workload: str


class PendingInput(Protocol):
    """What was read of a LocalQueue's pending list (Kueue's visibility API;
    :class:`karta.kube.KueuePending` is one): the ``items`` of the ``PendingWorkloadsSummary``
    pages in order; ``complete`` False when the reader stopped at its bound before the list's end;
    ``cluster_queue``: the LocalQueue's ``spec.clusterQueue`` (None: not read); ``unread``: why
    the list could not be read (then nothing else counts)."""

    @property
    def items(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def complete(self) -> bool: ...
    @property
    def cluster_queue(self) -> str | None: ...
    @property
    def unread(self) -> str: ...


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
    position: QueuePosition | None = None
    position_note: str = ""  # why a pending Workload's position is not shown

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
        if self.position is not None:
            out["position"] = self.position.to_dict()
        if self.position_note:
            out["positionNote"] = self.position_note
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
    unknown, ``<none>`` without one; a pending one whose position was read ends with ``#<n>``,
    its position in its ClusterQueue (``team:Pending#3``)."""
    if not isinstance(queue, Mapping):
        return "<none>"
    name = _text(queue.get("queue")) or "<none>"
    state = _text(queue.get("state"))
    cell = f"{name}:{'?' if state == UNKNOWN or not state else state}"
    position = queue.get("position")
    in_cq = position.get("clusterQueue") if isinstance(position, Mapping) else None
    if isinstance(in_cq, int) and not isinstance(in_cq, bool):
        cell += f"#{in_cq}"
    return cell


def pending_query(obj: Mapping[str, Any], detail: QueueDetail | None) -> PendingQuery | None:
    """The pending list that holds the position of ``obj`` (``detail``: its
    :func:`queue_detail`), or None when it has none to show: no Workload, or one that is not
    ``Pending`` (admitted, reserved, finished, inactive) or names no LocalQueue."""
    if detail is None or detail.state != "Pending" or not detail.workload or not detail.queue:
        return None
    namespace = _meta(obj).get("namespace")
    if not isinstance(namespace, str) or not namespace:
        return None
    return PendingQuery(namespace=namespace, local_queue=detail.queue, workload=detail.workload)


def queue_detail(
    obj: Mapping[str, Any],
    workloads: Sequence[Mapping[str, Any]],
    pending: PendingInput | None = None,
) -> QueueDetail | None:
    """Where ``obj`` stands in Kueue, from the Kueue ``workloads`` read for it (those not owned by
    it, by controller owner reference and uid, are ignored); None when it has neither a queue
    label nor a Workload (Kueue does not manage it). ``pending``: its LocalQueue's pending list as
    read for :func:`pending_query` (None: not read, no position and no note)."""
    detail = _queue_detail(obj, workloads)
    query = pending_query(obj, detail)
    if detail is None or pending is None or query is None:
        return detail
    position, note = _position(pending, query)
    return replace(detail, position=position, position_note=note)


def _position(pending: PendingInput, query: PendingQuery) -> tuple[QueuePosition | None, str]:
    """The position of ``query.workload`` in ``pending``, or None and why it is not shown."""
    if pending.unread:
        return None, f"position not shown: {pending.unread}"
    lq = query.local_queue
    for item in pending.items:
        if not isinstance(item, Mapping):
            continue
        meta = _meta(item)
        if meta.get("name") != query.workload or meta.get("namespace") not in (None, query.namespace):
            continue
        in_cq, in_lq = _index(item.get("positionInClusterQueue")), _index(item.get("positionInLocalQueue"))
        if in_cq is None or in_lq is None:
            return None, (
                f"position not shown: Kueue's pending list of LocalQueue {lq} gives no valid "
                "positionInClusterQueue/positionInLocalQueue for it"
            )
        return QueuePosition(
            cluster_queue=in_cq + 1,
            local_queue=in_lq + 1,
            local_queue_name=lq,
            cluster_queue_name=pending.cluster_queue or None,
        ), ""
    if not pending.complete:
        return None, (
            f"position not shown: not among the first {len(pending.items)} pending Workloads of "
            f"LocalQueue {lq} read"
        )
    return None, (
        f"position not shown: Kueue's pending list of LocalQueue {lq} does not hold it yet "
        f"({len(pending.items)} listed)"
    )


def _index(value: Any) -> int | None:
    """A position Kueue gives (an int from 0), or None."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_POSITION:
        return None
    return value


def _queue_detail(obj: Mapping[str, Any], workloads: Sequence[Mapping[str, Any]]) -> QueueDetail | None:
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
