"""Judges for the Kubeflow training operator's v1 kinds (PyTorchJob, TFJob, XGBoostJob, JAXJob,
PaddleJob, MPIJob), github.com/kubeflow/training-operator v1.9.3, written from its source:

- pkg/util/status.go: the job conditions ``Created``, ``Running``, ``Restarting``, ``Succeeded``,
  ``Failed``, ``Suspended`` (``setCondition``/``filterOutCondition``: ``Restarting`` and ``Running``
  replace each other; ``Succeeded``/``Failed`` turn ``Running`` False; nothing changes once
  ``Failed``).
- pkg/controller.v1/common/job.go ``ReconcileJobs``: ``runPolicy.suspend`` deletes the pods, sets
  every replica's ``active`` to 0, ``Running`` False and ``Suspended`` True (reason
  ``<Kind>Suspended``) in one status update; clearing it sets ``Suspended`` False (reason
  ``<Kind>Resumed``) and a new ``startTime`` in the same sync that recreates the pods, so a resume
  is acknowledged at once and the job is then starting (not Resuming) until ``Running``.
- pkg/controller.v1/<framework>/*_controller.go ``UpdateJobStatus``: ``Running`` True once the
  deciding replica (Master, Chief, Launcher, or the workers) has active pods; ``Succeeded`` when it
  has succeeded; a failed replica under restartPolicy Never is ``Failed``, under OnFailure/
  ExitCode (retryable code) ``Restarting`` (the pod is deleted and created again,
  pkg/controller.v1/common/pod.go ``ReconcilePods``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import Judge, Judged, conditions, is_true, status_of

__all__ = ["JUDGES"]


def _active(obj: Mapping[str, Any]) -> int:
    replicas = status_of(obj).get("replicaStatuses") or {}
    return sum(int((r or {}).get("active") or 0) for r in replicas.values() if isinstance(r, Mapping))


def job(obj: Mapping[str, Any]) -> Judged:
    conds = conditions(obj)
    run_policy = (obj.get("spec") or {}).get("runPolicy") or {}
    if is_true(conds, "Failed"):
        return Judged("Failed", "condition Failed True")
    if is_true(conds, "Succeeded"):
        return Judged("Completed", "condition Succeeded True")
    if run_policy.get("suspend") is True:
        if is_true(conds, "Suspended"):
            if _active(obj):
                return Judged("Suspending", "Suspended True, replicas still active")
            return Judged("Suspended", "runPolicy.suspend and Suspended True (ReconcileJobs)")
        if _active(obj) or is_true(conds, "Running"):
            return Judged("Suspending", "runPolicy.suspend set, not acknowledged yet, the job runs")
        return Judged("Initializing", "runPolicy.suspend set, no status written yet")
    if is_true(conds, "Suspended"):
        return Judged("Resuming", "runPolicy.suspend cleared, Suspended still True")
    if is_true(conds, "Restarting"):
        # A replica failed with a retryable exit code after the job ran; the operator drops Running
        # and recreates the pod (MPIJob v1 never does, so it stays here). The format's vocabulary
        # (docs/spec/format.md#status-vocabulary): Degraded is "running, but with reduced health or capacity";
        # Initializing is "before running", which this job is not.
        return Judged("Degraded", "condition Restarting True: a failed replica is being recreated")
    if is_true(conds, "Running"):
        return Judged("Running", "condition Running True")
    return Judged("Initializing", "created, not running yet")


JUDGES: Mapping[str, Judge] = {
    kind: job for kind in ("PyTorchJob", "TFJob", "XGBoostJob", "JAXJob", "PaddleJob", "MPIJob")
}
