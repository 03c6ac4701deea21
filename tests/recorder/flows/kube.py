"""Flows for the Kubernetes core kinds: batch Job, CronJob, Deployment, StatefulSet and Pod, run
by kube-controller-manager with kwok as the kubelet of their Nodes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..registry import Flow
from ..session import Session

__all__ = ["FLOWS"]


def _cond(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda obj: any(
        c.get("type") == kind and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )


def _field(name: str, value: Any) -> Callable[[dict[str, Any]], bool]:
    return lambda obj: (obj.get("status") or {}).get(name) == value


def _template(s: Session, annotations: Mapping[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": {"app": "rec"}}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"metadata": meta, "spec": s.pod_spec(**spec)}


# -- Job ---------------------------------------------------------------------------------------
def _job(s: Session, *, completions: int = 2, suspend: bool = False, **template: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "completions": completions,
        "parallelism": completions,
        "backoffLimit": 0,
        "template": template or _template(s, restart="Never"),
    }
    if suspend:
        spec["suspend"] = True
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job"}, "spec": spec}


def job_completes(s: Session) -> None:
    annotations = s.exit_annotations("succeeded", delay="6s")
    s.create(_job(s, **_template(s, annotations, restart="Never")))
    s.settle(_field("ready", 2), "2 ready pods")
    s.record("running")
    s.settle(_cond("Complete"), "Complete")
    s.record("completed")


def job_fails(s: Session) -> None:
    s.create(_job(s))
    s.settle(_field("ready", 2), "2 ready pods")
    s.record("running")
    s.end_pod(lambda p: True, "failed", code=3)
    s.settle(_cond("Failed"), "Failed")
    s.record("failed")


def job_suspend_resume(s: Session) -> None:
    s.create(_job(s))
    s.settle(_field("ready", 2), "2 ready pods")
    s.record("running")
    s.set_path("spec.suspend", True)
    s.settle(_cond("Suspended"), "Suspended")
    s.record("suspended")
    s.set_path("spec.suspend", False)
    s.settle(_field("ready", 2), "2 ready pods again")
    s.record("resumed")


def job_created_suspended(s: Session) -> None:
    s.create(_job(s, suspend=True))
    s.settle(_cond("Suspended"), "Suspended")
    s.record("suspended")
    s.set_path("spec.suspend", False)
    s.settle(_field("ready", 2), "2 ready pods")
    s.record("resumed")


def job_pod_restarts(s: Session) -> None:
    s.create(_job(s, completions=1, **_template(s, restart="OnFailure")))
    s.settle(_field("ready", 1), "1 ready pod")
    s.record("running")
    s.end_pod(lambda p: True, "failed", code=2)
    s.wait_pods("the container restarted", lambda pods: any(_restarts(p) for p in pods))
    s.settle(_field("ready", 1), "ready again")
    s.record("restarted")


def job_unschedulable(s: Session) -> None:
    s.create(_job(s, completions=1, **_template(s, restart="Never", gpus=64)))
    s.settle(_field("active", 1), "1 active pod")
    s.record("pending")


def _restarts(pod: Mapping[str, Any]) -> int:
    return sum(
        int(c.get("restartCount") or 0) for c in (pod.get("status") or {}).get("containerStatuses") or []
    )


# -- CronJob -----------------------------------------------------------------------------------
def _cronjob(s: Session, *, suspend: bool = False, exit_as: str | None = "succeeded") -> dict[str, Any]:
    annotations = s.exit_annotations(exit_as, delay="5s") if exit_as else None
    job = {"backoffLimit": 0, "template": _template(s, annotations, restart="Never")}
    spec: dict[str, Any] = {"schedule": "* * * * *", "suspend": suspend, "jobTemplate": {"spec": job}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cron"}, "spec": spec}


def _active(obj: dict[str, Any]) -> bool:
    return bool((obj.get("status") or {}).get("active"))


def cronjob_created(s: Session) -> None:
    s.create(_cronjob(s))
    s.settle()
    s.record("created")


def cronjob_created_suspended(s: Session) -> None:
    s.create(_cronjob(s, suspend=True))
    s.settle()
    s.record("suspended")


def cronjob_runs_a_job(s: Session) -> None:
    s.create(_cronjob(s))
    s.timeout = 150.0
    s.settle(_active, "the first scheduled job")
    s.record("job-active")
    s.settle(lambda o: bool((o.get("status") or {}).get("lastSuccessfulTime")), "the job's success")
    s.record("job-succeeded")


def cronjob_suspend_resume(s: Session) -> None:
    s.create(_cronjob(s, exit_as=None))
    s.timeout = 150.0
    s.settle(_active, "the first scheduled job")
    s.record("job-active")
    s.set_path("spec.suspend", True)
    s.settle()
    s.record("suspended")
    s.set_path("spec.suspend", False)
    s.settle()
    s.record("resumed")


def cronjob_job_fails(s: Session) -> None:
    s.create(_cronjob(s, exit_as="failed"))
    s.timeout = 150.0
    s.settle(_active, "the first scheduled job")
    s.record("job-active")
    s.settle(lambda o: not _active(o), "the job's end")
    s.record("job-failed")


# -- Deployment and StatefulSet ------------------------------------------------------------------
def _deployment(s: Session, replicas: int = 2) -> dict[str, Any]:
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": "rec"}}, "template": _template(s)}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": spec}


def _statefulset(s: Session, replicas: int = 2) -> dict[str, Any]:
    spec = {
        "replicas": replicas,
        "serviceName": "db",
        "selector": {"matchLabels": {"app": "rec"}},
        "template": _template(s),
    }
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"}, "spec": spec}


def _ready(count: int) -> Callable[[dict[str, Any]], bool]:
    return lambda obj: (obj.get("status") or {}).get("readyReplicas", 0) == count


def _build(kind: str) -> Callable[[Session, int], dict[str, Any]]:
    return _deployment if kind == "Deployment" else _statefulset


def _replicated_flows(kind: str) -> dict[str, Flow]:
    build = _build(kind)

    def created(s: Session) -> None:
        s.create(build(s, 2))
        s.settle(_ready(2), "2 ready")
        s.record("running")

    def scaled_up(s: Session) -> None:
        s.create(build(s, 1))
        s.settle(_ready(1), "1 ready")
        s.record("running")
        s.set_path("spec.replicas", 3)
        s.settle(_ready(3), "3 ready")
        s.record("scaled-up")

    def scaled_down(s: Session) -> None:
        s.create(build(s, 3))
        s.settle(_ready(3), "3 ready")
        s.record("running")
        s.set_path("spec.replicas", 1)
        s.settle(_ready(1), "1 ready")
        s.record("scaled-down")

    def unschedulable(s: Session) -> None:
        obj = build(s, 2)
        obj["spec"]["template"]["spec"] = s.pod_spec(gpus=64)
        s.create(obj)
        s.settle()
        s.record("pending")

    def pod_restarts(s: Session) -> None:
        s.create(build(s, 2))
        s.settle(_ready(2), "2 ready")
        s.record("running")
        s.end_pod(lambda p: True, "failed", code=1)
        s.wait_pods("the container restarted", lambda pods: any(_restarts(p) for p in pods))
        s.settle(_ready(2), "2 ready again")
        s.record("restarted")

    def rolling_update(s: Session) -> None:
        s.create(build(s, 2))
        s.settle(_ready(2), "2 ready")
        s.record("running")
        s.set_path("spec.template.metadata.labels", {"app": "rec", "rev": "2"})
        s.settle(lambda o: (o.get("status") or {}).get("updatedReplicas") == 2 and _ready(2)(o), "2 updated")
        s.record("updated")

    return {
        "created": created,
        "scaled-up": scaled_up,
        "scaled-down": scaled_down,
        "unschedulable": unschedulable,
        "pod-restarts": pod_restarts,
        "rolling-update": rolling_update,
    }


# -- Pod ---------------------------------------------------------------------------------------
def _pod(s: Session, annotations: Mapping[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "pod"}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s.pod_spec(**spec)}


def _phase(phase: str) -> Callable[[dict[str, Any]], bool]:
    return _field("phase", phase)


def pod_succeeds(s: Session) -> None:
    s.create(_pod(s, s.exit_annotations("succeeded", delay="6s"), restart="Never"))
    s.settle(_phase("Running"), "Running")
    s.record("running")
    s.settle(_phase("Succeeded"), "Succeeded")
    s.record("succeeded")


def pod_fails(s: Session) -> None:
    s.create(_pod(s, s.exit_annotations("failed", delay="6s", code=3), restart="Never"))
    s.settle(_phase("Running"), "Running")
    s.record("running")
    s.settle(_phase("Failed"), "Failed")
    s.record("failed")


def pod_restarts(s: Session) -> None:
    s.create(_pod(s, restart="Always"))
    s.settle(_phase("Running"), "Running")
    s.record("running")
    s.end_pod(lambda p: True, "failed", code=137)
    s.wait_pods("the container restarted", lambda pods: any(_restarts(p) for p in pods))
    s.settle()
    s.record("restarted")


def pod_unschedulable(s: Session) -> None:
    s.create(_pod(s, gpus=64))
    s.settle(lambda o: bool((o.get("status") or {}).get("conditions")), "PodScheduled False")
    s.record("pending")


def pod_gpu_runs(s: Session) -> None:
    s.create(_pod(s, gpus=4, restart="OnFailure"))
    s.settle(_phase("Running"), "Running")
    s.record("running")


FLOWS: Mapping[str, Mapping[str, Flow]] = {
    "Job": {
        "completes": job_completes,
        "fails": job_fails,
        "suspend-resume": job_suspend_resume,
        "created-suspended": job_created_suspended,
        "pod-restarts": job_pod_restarts,
        "unschedulable": job_unschedulable,
    },
    "CronJob": {
        "created": cronjob_created,
        "created-suspended": cronjob_created_suspended,
        "runs-a-job": cronjob_runs_a_job,
        "suspend-resume": cronjob_suspend_resume,
        "job-fails": cronjob_job_fails,
    },
    "Deployment": _replicated_flows("Deployment"),
    "StatefulSet": _replicated_flows("StatefulSet"),
    "Pod": {
        "succeeds": pod_succeeds,
        "fails": pod_fails,
        "restarts": pod_restarts,
        "unschedulable": pod_unschedulable,
        "gpu-runs": pod_gpu_runs,
    },
}
