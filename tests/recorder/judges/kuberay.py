"""Judges for the KubeRay kinds (ray-operator v1.5.0, the pinned module): the state a user should
see, read from the operator's OWN fields, written from KubeRay's source (never from karta). Each
rule names the function of ``ray-operator/controllers/ray`` that writes what it reads.

The vocabulary is karta's primary statuses (README "Statuses"): Initializing, Running, Suspending,
Suspended, Resuming, Degraded, Completed, Failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import Judge, Judged, conditions, is_true, stale, status_of

__all__ = ["JUDGES"]


def raycluster(obj: Mapping[str, Any]) -> Judged:
    """raycluster_controller.go ``calculateStatus`` (feature gate RayClusterStatusConditions, on by
    default in v1.5.0): ``state`` becomes ``ready`` once every pod runs (and is never reset: a lost
    worker does not change it), ``suspended`` once ``spec.suspend`` holds and no pod is left; the
    conditions HeadPodReady (the head pod's Ready), RayClusterProvisioned (all pods ready for the
    first time), RayClusterSuspending/RayClusterSuspended (``FindRayClusterSuspendStatus``) and
    ReplicaFailure (a reconcile error creating or deleting pods)."""
    spec = obj.get("spec") or {}
    status = status_of(obj)
    conds = conditions(obj)
    suspend = spec.get("suspend") is True
    if not status.get("conditions") and not status.get("state"):
        # Its first reconcile confirms a suspension at once when there is no pod (state suspended).
        if suspend:
            return Judged("Suspended", "spec.suspend, no status yet")
        return Judged("Initializing", "no status yet")
    if is_true(conds, "RayClusterSuspending"):
        return Judged("Suspending", "RayClusterSuspending=True: deleting the pods")
    if is_true(conds, "RayClusterSuspended"):
        return Judged("Suspended", "RayClusterSuspended=True")
    if status.get("state") == "suspended" and suspend:
        return Judged("Suspended", "state suspended (no pods left)")
    if stale(obj):
        return Judged(
            "Initializing", "observedGeneration behind generation: the latest spec not acted on yet"
        )
    if is_true(conds, "ReplicaFailure"):
        return Judged("Degraded", f"ReplicaFailure=True: {conds['ReplicaFailure'].get('reason')}")
    head_ready = is_true(conds, "HeadPodReady")
    provisioned = is_true(conds, "RayClusterProvisioned")
    if status.get("state") == "suspended" and not suspend:
        # Resumed: RayClusterSuspended went False, the pods are being recreated; state stays
        # suspended until they all run again.
        return Judged("Resuming", "state suspended, spec.suspend false, RayClusterSuspended=False")
    if not provisioned:
        return Judged("Initializing", "RayClusterProvisioned not True: pods provisioned for the first time")
    if not head_ready:
        return Judged("Degraded", "provisioned once, HeadPodReady not True: the head pod is down")
    ready = int(status.get("readyWorkerReplicas") or 0)
    desired = int(status.get("desiredWorkerReplicas") or 0)
    if ready < desired:
        # KubeRay keeps state ready and sets no condition: the cluster serves with fewer workers
        # (the autoscaler's normal situation). The operator's own verdict is Running.
        return Judged(
            "Running", f"state ready, head ready, {ready}/{desired} workers ready (KubeRay flags nothing)"
        )
    return Judged("Running", f"head ready, {ready}/{desired} workers ready")


def rayjob(obj: Mapping[str, Any]) -> Judged:
    """rayjob_controller.go ``Reconcile``: ``jobDeploymentStatus`` is the operator's own phase
    (New "" -> Initializing -> Running -> Complete | Failed; Suspending -> Suspended -> New on
    resume; Retrying -> New; Waiting in InteractiveMode; ValidationFailed), ``jobStatus`` the Ray
    job's status from the dashboard (PENDING, RUNNING, STOPPED, SUCCEEDED, FAILED). In
    JobDeploymentStatusRunning a terminal jobStatus is the job's verdict even while the operator
    waits for the submitter to finish (``isJobTerminal && finishedAt != nil``) before it writes
    Complete/Failed."""
    status = status_of(obj)
    deployment = status.get("jobDeploymentStatus") or ""
    job = status.get("jobStatus") or ""
    if deployment == "Complete":
        if job == "STOPPED":
            # IsJobTerminal: STOPPED is terminal and only FAILED maps to JobDeploymentStatusFailed, so
            # the operator writes Complete. Ray's JobStatus docs: STOPPED is "intentionally stopped
            # by the user": the job finished without succeeding, which the format's vocabulary
            # (docs/spec/format.md#status-vocabulary) calls Failed, not Completed ("finished successfully").
            return Judged("Failed", "jobDeploymentStatus Complete, jobStatus STOPPED: stopped, not succeeded")
        return Judged("Completed", f"jobDeploymentStatus Complete (jobStatus {job or 'not reported'})")
    if deployment in ("Failed", "ValidationFailed"):
        return Judged("Failed", f"jobDeploymentStatus {deployment} ({status.get('reason') or 'no reason'})")
    if deployment == "Suspending":
        return Judged("Suspending", "jobDeploymentStatus Suspending: deleting the RayCluster and submitter")
    if deployment == "Suspended":
        return Judged("Suspended", "jobDeploymentStatus Suspended")
    if deployment == "Running":
        if job == "SUCCEEDED":
            return Judged(
                "Completed", "jobStatus SUCCEEDED (the operator writes Complete once the submitter ends)"
            )
        if job == "FAILED":
            return Judged("Failed", "jobStatus FAILED (the operator writes Failed once the submitter ends)")
        if job == "STOPPED":
            # Terminal (IsJobTerminal); not a success: see the Complete branch above.
            return Judged("Failed", "jobStatus STOPPED (the operator writes Complete, reason empty)")
        if job == "RUNNING":
            return Judged("Running", "jobDeploymentStatus Running, jobStatus RUNNING")
        return Judged(
            "Initializing", f"jobDeploymentStatus Running, jobStatus {job or 'not reported'}: not started"
        )
    # "", Initializing (cluster being created), Waiting (interactive), Retrying (back to New).
    return Judged("Initializing", f"jobDeploymentStatus {deployment or 'New'}")


def rayservice(obj: Mapping[str, Any]) -> Judged:
    """rayservice_controller.go ``calculateConditions``/``calculateStatus``: Ready is True while the
    serve endpoints are > 0 (NonZeroServeEndpoints), False with Initializing before the first
    endpoint, ZeroServeEndpoints once they dropped to 0, InitializingTimeout past the
    ``ray.io/initializing-timeout`` annotation (terminal: the reconcile stops). UpgradeInProgress is
    True while a pending cluster exists next to the active one. ``activeServiceStatus.
    applicationStatuses`` is what the Ray dashboard says about each Serve application of the
    cluster serving the traffic (``getAndCheckServeStatus``)."""
    status = status_of(obj)
    conds = conditions(obj)
    ready = conds.get("Ready") or {}
    reason = ready.get("reason")
    apps = ((status.get("activeServiceStatus") or {}).get("applicationStatuses")) or {}
    if stale(obj):
        return Judged(
            "Initializing", "observedGeneration behind generation: the latest spec not acted on yet"
        )
    broken = sorted(
        name for name, app in apps.items() if (app or {}).get("status") in ("UNHEALTHY", "DEPLOY_FAILED")
    )
    if ready.get("status") == "True":
        if broken:
            return Judged("Degraded", f"Ready=True but applications {', '.join(broken)} are unhealthy")
        if is_true(conds, "UpgradeInProgress"):
            return Judged("Running", "Ready=True on the active cluster while the pending one is prepared")
        return Judged("Running", "Ready=True (NonZeroServeEndpoints)")
    if reason == "InitializingTimeout":
        return Judged("Failed", "Ready=False InitializingTimeout")
    if reason == "ZeroServeEndpoints":
        return Judged("Degraded", "Ready=False ZeroServeEndpoints: served before, no endpoint now")
    return Judged("Initializing", f"Ready {ready.get('status') or 'absent'} ({reason or 'no condition yet'})")


JUDGES: Mapping[str, Judge] = {"RayCluster": raycluster, "RayJob": rayjob, "RayService": rayservice}
