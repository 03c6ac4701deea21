"""Judges for the Kubernetes core kinds (kube-controller-manager v1.37.2 and kwok's kubelet),
written from the controllers' source in k8s.io/kubernetes and the API documentation.

- Job: pkg/controller/job/job_controller.go (``syncJob``: the ``Complete``, ``Failed``,
  ``FailureTarget``, ``SuccessCriteriaMet`` and ``Suspended`` conditions; ``active``/``ready``
  counters from ``manageJob``); a resume flips ``Suspended`` to False (reason ``JobResumed``) in
  the same sync that recreates the pods.
- CronJob: pkg/controller/cronjob/cronjob_controllerv2.go (``syncCronJob``: ``status.active``,
  ``lastScheduleTime``, ``lastSuccessfulTime``; ``spec.suspend`` stops scheduling, never echoed
  in status).
- Deployment: pkg/controller/deployment/sync.go (``calculateStatus``: ``readyReplicas``,
  ``updatedReplicas``, ``availableReplicas``, ``observedGeneration``) and progress.go
  (``Progressing`` reason ``ProgressDeadlineExceeded``).
- StatefulSet: pkg/controller/statefulset/stateful_set_control.go (``updateStatefulSet`` and
  ``computeReplicaStatus``: ``readyReplicas``, ``updatedReplicas``, ``observedGeneration``).
- Pod: the kubelet's ``status.phase`` (pkg/kubelet/kubelet_pods.go ``getPhase``) and the
  ``Ready`` condition (pkg/kubelet/status/generate.go ``GeneratePodReadyCondition``); kwok plays
  the kubelet here (hack/kwok/stages.yaml).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import Judge, Judged, conditions, is_true, stale, status_of

__all__ = ["JUDGES"]


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def job(obj: Mapping[str, Any]) -> Judged:
    conds = conditions(obj)
    status = status_of(obj)
    active, ready = _int(status.get("active")), _int(status.get("ready"))
    suspend = (obj.get("spec") or {}).get("suspend") is True
    if is_true(conds, "Failed") or is_true(conds, "FailureTarget"):
        return Judged("Failed", "condition Failed/FailureTarget True (syncJob)")
    if is_true(conds, "Complete") or is_true(conds, "SuccessCriteriaMet"):
        return Judged("Completed", "condition Complete/SuccessCriteriaMet True (syncJob)")
    if suspend:
        if is_true(conds, "Suspended"):
            if active or _int(status.get("terminating")):
                return Judged("Suspending", "Suspended True while pods are still active or terminating")
            return Judged("Suspended", "spec.suspend and condition Suspended True, no active pod")
        if active:
            return Judged(
                "Suspending", "spec.suspend set, the controller has not acknowledged it, pods active"
            )
        return Judged("Initializing", "spec.suspend set but no status written yet")
    if is_true(conds, "Suspended"):
        return Judged("Resuming", "spec.suspend cleared, condition Suspended still True")
    if ready:
        return Judged("Running", f"{ready} of {active} active pod(s) ready")
    return Judged("Initializing", f"{active} active pod(s), none ready yet")


def cronjob(obj: Mapping[str, Any]) -> Judged:
    status = status_of(obj)
    if (obj.get("spec") or {}).get("suspend") is True:
        return Judged("Suspended", "spec.suspend: the controller schedules nothing (syncCronJob)")
    if status.get("active"):
        return Judged("Running", f"{len(status['active'])} job(s) active")
    scheduled = status.get("lastScheduleTime")
    if scheduled:
        # syncCronJob writes lastSuccessfulTime only when a job it owns completes (the RFC 3339
        # stamps order as strings). No job active and the last scheduled one never succeeded: that
        # run failed, and the CronJob schedules on with reduced health (Degraded,
        # docs/spec/format.md#status-vocabulary), not plain Running.
        succeeded = status.get("lastSuccessfulTime")
        if not succeeded or str(succeeded) < str(scheduled):
            return Judged("Degraded", "no job active; the last scheduled job did not succeed")
        return Judged("Running", "scheduling: a job ran, waiting for the next schedule")
    return Judged("Initializing", "no job scheduled yet")


def _replicated(obj: Mapping[str, Any], *, what: str) -> Judged:
    status = status_of(obj)
    desired = _int((obj.get("spec") or {}).get("replicas"), 1)
    ready = _int(status.get("readyReplicas"))
    updated = _int(status.get("updatedReplicas"))
    if stale(obj):
        return Judged(
            "Initializing", f"observedGeneration behind generation: {what} not acted on the spec yet"
        )
    if not status:
        return Judged("Initializing", "no status yet")
    if desired == 0:
        return Judged("Running", "scaled to zero replicas, as asked")
    if ready >= desired and updated >= desired:
        return Judged("Running", f"{ready} ready of {desired} desired, {updated} updated")
    return Judged("Initializing", f"{ready} ready, {updated} updated of {desired} desired")


def deployment(obj: Mapping[str, Any]) -> Judged:
    progressing = conditions(obj).get("Progressing") or {}
    if progressing.get("status") == "False" and progressing.get("reason") == "ProgressDeadlineExceeded":
        return Judged("Failed", "Progressing False, ProgressDeadlineExceeded (progress.go)")
    return _replicated(obj, what="the deployment controller")


def statefulset(obj: Mapping[str, Any]) -> Judged:
    return _replicated(obj, what="the statefulset controller")


def pod(obj: Mapping[str, Any]) -> Judged:
    phase = status_of(obj).get("phase")
    if phase == "Succeeded":
        return Judged("Completed", "phase Succeeded")
    if phase == "Failed":
        return Judged("Failed", "phase Failed")
    if phase == "Running":
        if is_true(conditions(obj), "Ready"):
            return Judged("Running", "phase Running, Ready True")
        return Judged("Initializing", "phase Running, not Ready")
    if phase in (None, "Pending"):
        return Judged("Initializing", f"phase {phase or 'not set'}")
    return Judged("Undefined", f"phase {phase}")


JUDGES: Mapping[str, Judge] = {
    "Job": job,
    "CronJob": cronjob,
    "Deployment": deployment,
    "StatefulSet": statefulset,
    "Pod": pod,
}
