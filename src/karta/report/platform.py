"""What a platform counts of each workload, and the totals per namespace and root kind: the
controller's ``karta_workloads``, ``karta_workload_gpus_requested`` and ``karta_gang_pods_pending``
(docs/controller/platform-metrics.md), and what a web view can show from the same caches.

Per workload (:func:`workload_counts`): its primary status (``Undefined`` when no mapping matches or
the status cannot be computed), the GPUs its pods request split by where the pods are, and how many
of its pods wait because their gang cannot fit:

- a pod is **running** once bound to a Node (``spec.nodeName`` set) and not terminal (phase neither
  Succeeded nor Failed): its GPUs are taken on that Node, whether its containers started or not;
- a pod is **pending** while not bound and not terminal: its GPUs are asked for, not held;
- a pod is **gang-pending** when it is pending, its ``PodScheduled`` condition is ``False`` with
  reason ``Unschedulable`` (the scheduler tried it and found no room), and its workload's gang is
  one the controller manages (``gang``: the controller runs a gang backend and the workload's
  definition has gang instructions). A pod the scheduler has not tried yet, or rejected for another
  reason (``SchedulingGated``), is not counted.

Per gang owner (the topmost workload in the owner chain with gang instructions, the caller's rule:
:meth:`karta.kube.TopLevel.of` with ``gangs``; a record with ``top_level`` False when it is below a
top-level workload, its gang counted under its own kind), its gang state
(:mod:`karta.report.gang_state`: bound pods against the minimum, sub-group minimums counted), summed
per namespace and kind as the workloads whose minimum is met or not, their bound pods and their
minimums.

GPUs are the requests of :func:`karta.extract.requests.pod_requests` (the effective request of a
pod, every configured GPU resource summed), as ``kli top`` counts them. Pure: objects in, records
out; no cluster access.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from karta.errors import JqBudgetError, KartaError
from karta.extract import ComponentFactory
from karta.extract.requests import pod_requests
from karta.jq import Evaluator
from karta.model import Karta

if TYPE_CHECKING:
    from karta.report.gang_state import GangState

__all__ = [
    "KindTotals",
    "WorkloadCounts",
    "controller_uid",
    "gang_pending",
    "owned_pods",
    "platform_totals",
    "pod_gpus",
    "pod_placement",
    "primary_status",
    "workload_counts",
]

UNDEFINED = "Undefined"
UNSCHEDULABLE = "Unschedulable"
_TERMINAL = frozenset({"Succeeded", "Failed"})
MAX_OWNER_DEPTH = 6  # 17.5: controller chains are followed at most this deep


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def primary_status(
    karta: Karta, obj: Mapping[str, Any], *, evaluator: Evaluator | None = None, raise_budget: bool = False
) -> str:
    """The workload's primary status as its definition maps it; ``Undefined`` when nothing
    matches or the definition cannot compute it (an invalid expression, a budget exceeded:
    ``raise_budget`` raises :class:`~karta.errors.JqBudgetError` then, for a caller that counts
    breaches)."""
    try:
        status = ComponentFactory(karta, obj, evaluator=evaluator).root().status()
    except JqBudgetError:
        if raise_budget:
            raise
        return UNDEFINED
    except KartaError:
        return UNDEFINED
    return str(status.primary) if status is not None else UNDEFINED


def pod_placement(pod: Mapping[str, Any]) -> Literal["running", "pending"] | None:
    """``running`` (bound to a Node, not terminal), ``pending`` (not bound, not terminal) or None
    (Succeeded or Failed: it holds nothing)."""
    if _mapping(pod.get("status")).get("phase") in _TERMINAL:
        return None
    return "running" if _mapping(pod.get("spec")).get("nodeName") else "pending"


def gang_pending(pod: Mapping[str, Any]) -> bool:
    """Pending, and its PodScheduled condition is False with reason Unschedulable (the gang
    membership is the caller's ``gang``, see :func:`workload_counts`)."""
    if pod_placement(pod) != "pending":
        return False
    conditions = _mapping(pod.get("status")).get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == "PodScheduled":
            return condition.get("status") == "False" and condition.get("reason") == UNSCHEDULABLE
    return False


@dataclass(frozen=True, slots=True)
class WorkloadCounts:
    """One workload: where it is counted (namespace, root group and kind), its primary status (None:
    not computed yet, not counted by status), the GPUs of its running and pending pods, its
    gang-pending pods and its gang state (None: no gang instructions). ``top_level`` False: a gang
    owner below a top-level workload (a Trial under an Experiment), counted for its gang only (no
    status, no GPUs: its top-level workload's record has them)."""

    namespace: str
    group: str
    kind: str
    status: str | None
    gpus_running: int = 0
    gpus_pending: int = 0
    gang_pods_pending: int = 0
    gang: GangState | None = None
    top_level: bool = True


def pod_gpus(pod: Mapping[str, Any], *, gpu_resources: Sequence[str]) -> int:
    """The GPUs the pod requests (its effective request, every resource of ``gpu_resources``)."""
    return pod_requests(_mapping(pod.get("spec")), gpu_resources=gpu_resources).gpus


def workload_counts(
    obj: Mapping[str, Any],
    pods: Iterable[Mapping[str, Any]],
    *,
    status: str | None,
    gpu_resources: Sequence[str],
    gang: bool,
    gpus_of: Callable[[Mapping[str, Any]], int] | None = None,
    gang_state: GangState | None = None,
    top_level: bool = True,
) -> WorkloadCounts:
    """The counts of ``obj`` whose pods are ``pods`` and primary status ``status``
    (:func:`primary_status`, which callers may cache per resourceVersion); ``gang``: the
    controller manages the workload's gang, so its Unschedulable pods are gang-pending.
    ``gpus_of``: :func:`pod_gpus` for ``gpu_resources`` unless given (a cache of it).
    ``gang_state``: the workload's gang state (:func:`karta.report.workload_gang`), None without
    gang instructions. ``top_level`` False: a gang owner below a top-level workload, whose GPUs
    are its top-level workload's (not counted here)."""
    running = pending = waiting = 0
    for pod in pods:
        where = pod_placement(pod)
        if where is None:
            continue
        if not top_level:
            waiting += int(gang and gang_pending(pod))
            continue
        gpus = gpus_of(pod) if gpus_of is not None else pod_gpus(pod, gpu_resources=gpu_resources)
        if where == "running":
            running += gpus
        else:
            pending += gpus
            waiting += int(gang and gang_pending(pod))
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    namespace = str(_mapping(obj.get("metadata")).get("namespace") or "")
    kind = str(obj.get("kind") or "")
    return WorkloadCounts(namespace, group, kind, status, running, pending, waiting, gang_state, top_level)


@dataclass(slots=True)
class KindTotals:
    """The workloads of one root kind in one namespace: how many per primary status, the GPUs of
    their running and pending pods, their gang-pending pods, and of those with gang instructions:
    how many reach their gang minimum (``gangs["met"]``) or not (``gangs["not met"]``), their bound
    pods and their minimums summed. ``top_level``: some top-level workload is of this kind (not
    only gang owners below one): its GPUs are counted."""

    namespace: str
    group: str
    kind: str
    workloads: dict[str, int] = field(default_factory=dict)
    gpus_running: int = 0
    gpus_pending: int = 0
    gang_pods_pending: int = 0
    gangs: dict[str, int] = field(default_factory=dict)  # "met" / "not met": workloads with a gang
    gang_pods_bound: int = 0
    gang_pods_minimum: int = 0
    top_level: bool = False


def platform_totals(records: Iterable[WorkloadCounts]) -> list[KindTotals]:
    """``records`` summed per namespace and root kind, sorted by namespace, group and kind."""
    totals: dict[tuple[str, str, str], KindTotals] = {}
    for r in records:
        t = totals.get((r.namespace, r.group, r.kind))
        if t is None:
            t = totals[(r.namespace, r.group, r.kind)] = KindTotals(r.namespace, r.group, r.kind)
        if r.status is not None:
            t.workloads[r.status] = t.workloads.get(r.status, 0) + 1
        t.top_level = t.top_level or r.top_level
        t.gpus_running += r.gpus_running
        t.gpus_pending += r.gpus_pending
        t.gang_pods_pending += r.gang_pods_pending
        if r.gang is not None:
            state = "met" if r.gang.met else "not met"
            t.gangs[state] = t.gangs.get(state, 0) + 1
            t.gang_pods_bound += r.gang.bound
            t.gang_pods_minimum += r.gang.minimum
    return [totals[key] for key in sorted(totals)]


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The UID of the object's controller (the ownerReference with ``controller: true``)."""
    for ref in _mapping(obj.get("metadata")).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True and ref.get("uid"):
            return str(ref["uid"])
    return None


def owned_pods(
    obj: Mapping[str, Any],
    children: Mapping[str, Sequence[Mapping[str, Any]]] | Callable[[str], Sequence[Mapping[str, Any]]],
) -> list[Mapping[str, Any]]:
    """The pods under ``obj`` through controller references, at most :data:`MAX_OWNER_DEPTH` deep:
    ``children`` maps a UID to the objects it controls (pods and the objects between, e.g. the
    Jobs of a JobSet), as a mapping or a function (a cache's index); a bare Pod is its own pod."""
    if obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1":
        return [obj]
    lookup = children if callable(children) else (lambda uid: children.get(uid, ()))
    out: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    level = [str(_mapping(obj.get("metadata")).get("uid") or "")]
    for _ in range(MAX_OWNER_DEPTH):
        below: list[str] = []
        for uid in level:
            if not uid or uid in seen:
                continue
            seen.add(uid)
            for child in lookup(uid):
                if child.get("kind") == "Pod" and child.get("apiVersion") == "v1":
                    out.append(child)
                else:
                    below.append(str(_mapping(child.get("metadata")).get("uid") or ""))
        if not below:
            break
        level = below
    return out
