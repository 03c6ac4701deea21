"""Whether a workload's pods still run, and whether they are all ready (Kueue's GenericJob IsActive
and PodsReady; docs/kueue.md 5), from the pods karta finds for the workload (its pod selector, the
pods ``kli get`` lists).

``is_active`` is stricter than Kueue's batch Job (which counts ``status.active``): a pod that is
terminating still counts, so that an evicted workload's quota is released only once nothing of it
runs any more.

``pods_ready_condition`` is the ``PodsReady`` condition Kueue's job reconciler writes for its own
kinds (``generatePodsReadyCondition``): with ``waitForPodsReady`` on, Kueue evicts an admitted
Workload whose condition is not True within its timeout, the remedy for a job admitted on quota
whose pods do not fit (a gang, all or nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta.kueue import names

__all__ = ["is_active", "pods_ready", "pods_ready_condition"]

_TERMINAL = frozenset({"Succeeded", "Failed"})


def _phase(pod: Mapping[str, Any]) -> str:
    status = pod.get("status")
    return str(status.get("phase") or "") if isinstance(status, Mapping) else ""


def _ready(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return any(
        isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True"
        for c in conditions or []
    )


def is_active(pods: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any pod is neither Succeeded nor Failed (terminating pods included)."""
    return any(_phase(pod) not in _TERMINAL for pod in pods)


def pods_ready(pods: Sequence[Mapping[str, Any]], workload: Mapping[str, Any]) -> bool:
    """Whether the pods ready (not terminating) or succeeded reach the Workload's PodSet counts in
    total, as Kueue's batch Job compares ready + succeeded with its pod count."""
    spec = workload.get("spec")
    pod_sets = spec.get("podSets") if isinstance(spec, Mapping) else None
    wanted: int = sum(
        int(p["count"])
        for p in pod_sets or []
        if isinstance(p, Mapping) and isinstance(p.get("count"), int) and not isinstance(p.get("count"), bool)
    )
    done = 0
    for pod in pods:
        metadata = pod.get("metadata")
        terminating = isinstance(metadata, Mapping) and bool(metadata.get("deletionTimestamp"))
        if _phase(pod) == "Succeeded" or (not terminating and _phase(pod) == "Running" and _ready(pod)):
            done += 1
    return done >= wanted


def pods_ready_condition(pods: Sequence[Mapping[str, Any]], workload: Mapping[str, Any]) -> dict[str, str]:
    """The ``PodsReady`` condition of an admitted Workload (without ``lastTransitionTime``), as
    Kueue v0.17.0's ``generatePodsReadyCondition``: True ``Started`` (``Recovered`` after a
    recovery) once :func:`pods_ready`; else False, ``WaitForRecovery`` when it was True or already
    waiting for recovery, ``WaitForStart`` otherwise."""
    status = workload.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    current: Mapping[str, Any] = next(
        (c for c in conditions or [] if isinstance(c, Mapping) and c.get("type") == names.PODS_READY), {}
    )
    recovering = current.get("reason") in (names.PODS_READY_WAIT_FOR_RECOVERY, names.PODS_READY_RECOVERED)
    if pods_ready(pods, workload):
        reason = names.PODS_READY_RECOVERED if recovering else names.PODS_READY_STARTED
        return _pods_ready(True, reason, "All pods reached readiness and the workload is running")
    if current.get("status") == "True" or current.get("reason") == names.PODS_READY_WAIT_FOR_RECOVERY:
        return _pods_ready(
            False, names.PODS_READY_WAIT_FOR_RECOVERY, "At least one pod has failed, waiting for recovery"
        )
    return _pods_ready(False, names.PODS_READY_WAIT_FOR_START, "Not all pods are ready or succeeded")


def _pods_ready(status: bool, reason: str, message: str) -> dict[str, str]:
    return {
        "type": names.PODS_READY,
        "status": "True" if status else "False",
        "reason": reason,
        "message": message,
    }
