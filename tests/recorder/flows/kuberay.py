"""Flows for the KubeRay kinds (ray-operator v1.5.0): RayCluster, RayJob and RayService on kwok.

No Ray runs on kwok: the Ray dashboard of every head pod is hack/raydash, which the operator reaches
through ``HTTP_PROXY`` (``hack/cluster/up.sh --operators kuberay`` starts it and prints
``KARTA_RAYDASH_URL``). A flow moves the Ray side (a job's status, a Serve application's status)
through its control API, the way Ray itself would report it, and lets KubeRay write its own status
from there. RayJobs use ``submissionMode: HTTPMode`` (the operator submits the job to the dashboard
itself; the default K8sJobMode runs ``ray job submit`` in a pod, which kwok cannot run).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ...e2e.conftest import hack_module
from ..registry import Flow
from ..session import FlowError, Session

__all__ = ["FLOWS", "raydash"]

IMAGE = "rayproject/ray:2.46.0"
SERVE_CONFIG = """\
applications:
  - name: fruit
    import_path: fruit.deployment_graph
    route_prefix: /fruit
    deployments:
      - name: MangoStand
        num_replicas: {replicas}
"""


def raydash() -> Any:
    """The control client of the Ray dashboard stand-in (hack/raydash) this cluster runs."""
    url = os.environ.get("KARTA_RAYDASH_URL")
    if not url:
        raise FlowError("KARTA_RAYDASH_URL is not set: start the cluster with up.sh --operators kuberay")
    return hack_module("raydash/raydash.py").RayDash(url)


def _status(obj: Mapping[str, Any]) -> dict[str, Any]:
    return dict(obj.get("status") or {})


def _cond(kind: str, value: str = "True") -> Callable[[dict[str, Any]], bool]:
    return lambda obj: any(
        c.get("type") == kind and c.get("status") == value for c in _status(obj).get("conditions") or []
    )


# -- RayCluster --------------------------------------------------------------------------------
def _group(s: Session, replicas: int) -> dict[str, Any]:
    return {
        "groupName": "gpu",
        "replicas": replicas,
        "minReplicas": 0,
        "maxReplicas": 32,
        "rayStartParams": {},
        "template": {"spec": s.pod_spec("ray-worker", gpus=1, image=IMAGE)},
    }


def _cluster_spec(s: Session, workers: int = 2) -> dict[str, Any]:
    return {
        "headGroupSpec": {"rayStartParams": {}, "template": {"spec": s.pod_spec("ray-head", image=IMAGE)}},
        "workerGroupSpecs": [_group(s, workers)],
    }


def _raycluster(s: Session, workers: int = 2, *, suspend: bool = False) -> dict[str, Any]:
    spec = _cluster_spec(s, workers)
    if suspend:
        spec["suspend"] = True
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "ray"}, "spec": spec}


def _workers_ready(count: int) -> Callable[[dict[str, Any]], bool]:
    def ok(obj: dict[str, Any]) -> bool:
        status = _status(obj)
        return (
            status.get("state") == "ready"
            and status.get("desiredWorkerReplicas") == count
            and status.get("readyWorkerReplicas") == count
            and _cond("HeadPodReady")(obj)
        )

    return ok


def _suspended(obj: dict[str, Any]) -> bool:
    return _status(obj).get("state") == "suspended" and _cond("RayClusterSuspended")(obj)


def _running_cluster(s: Session, workers: int = 2) -> None:
    """Create the RayCluster, record it once its head and ``workers`` workers are ready."""
    s.create(_raycluster(s, workers))
    s.settle(_workers_ready(workers), f"head and {workers} workers ready")
    s.record("running")


def raycluster_created(s: Session) -> None:
    _running_cluster(s)


def raycluster_scale_up_down(s: Session) -> None:
    _running_cluster(s, 1)
    s.patch({"spec": {"workerGroupSpecs": [_group(s, 3)]}})
    s.settle(_workers_ready(3), "3 workers ready")
    s.record("scaled-up")
    s.patch({"spec": {"workerGroupSpecs": [_group(s, 1)]}})
    s.settle(_workers_ready(1), "1 worker ready")
    s.record("scaled-down")


def raycluster_beyond_capacity(s: Session) -> None:
    """More GPU workers than the flow's Nodes hold (2 x 8 GPUs): 16 run, 4 stay Pending."""
    _running_cluster(s)
    s.patch({"spec": {"workerGroupSpecs": [_group(s, 20)]}})
    s.settle(
        lambda o: (
            _status(o).get("desiredWorkerReplicas") == 20 and _status(o).get("readyWorkerReplicas") == 16
        ),
        "16 of 20 workers ready",
    )
    s.record("scaled-beyond-capacity")


def raycluster_suspend_resume(s: Session) -> None:
    _running_cluster(s)
    s.set_path("spec.suspend", True)
    s.settle(_suspended, "suspended")
    s.record("suspended")
    s.set_path("spec.suspend", False)
    s.settle(_workers_ready(2), "2 workers ready again")
    s.record("resumed")


def raycluster_created_suspended(s: Session) -> None:
    s.create(_raycluster(s, 2, suspend=True))
    s.settle(_suspended, "suspended")
    s.record("suspended")
    s.set_path("spec.suspend", False)
    s.settle(_workers_ready(2), "2 workers ready")
    s.record("resumed")


def _restarts(pod: Mapping[str, Any]) -> int:
    return sum(
        int(c.get("restartCount") or 0) for c in (pod.get("status") or {}).get("containerStatuses") or []
    )


def _is_worker(pod: Mapping[str, Any]) -> bool:
    return (pod.get("metadata") or {}).get("labels", {}).get("ray.io/node-type") == "worker"


def raycluster_worker_restarts(s: Session) -> None:
    _running_cluster(s)
    s.end_pod(_is_worker, "failed", code=1)  # restartPolicy Always (KubeRay's default): restarted
    s.wait_pods("the worker restarted", lambda pods: any(_is_worker(p) and _restarts(p) for p in pods))
    s.settle(_workers_ready(2), "2 workers ready again")
    s.record("worker-restarted")


def raycluster_worker_deleted(s: Session) -> None:
    _running_cluster(s)
    gone = next(p for p in s.pods() if _is_worker(p))["metadata"]["name"]
    s.client.delete("pods", gone, namespace=s.namespace)
    s.wait_pods("a new worker", lambda pods: gone not in {p["metadata"]["name"] for p in pods})
    s.settle(_workers_ready(2), "2 workers ready again")
    s.record("worker-replaced")


# -- RayJob ------------------------------------------------------------------------------------
def _rayjob(s: Session, *, shutdown: bool = False, suspend: bool = False, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "entrypoint": "python -c 'print(1)'",
        "submissionMode": "HTTPMode",
        "rayClusterSpec": _cluster_spec(s, 1),
        **extra,
    }
    if shutdown:
        spec["shutdownAfterJobFinishes"] = True
    if suspend:
        spec["suspend"] = True
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "job"}, "spec": spec}


def _job(deployment: str, job: str | None = None) -> Callable[[dict[str, Any]], bool]:
    def ok(obj: dict[str, Any]) -> bool:
        status = _status(obj)
        return status.get("jobDeploymentStatus") == deployment and job in (None, status.get("jobStatus"))

    return ok


def _submitted(s: Session) -> dict[str, Any]:
    """Wait for the operator to submit the job to the dashboard (Running, PENDING), record it."""
    obj = s.settle(_job("Running", "PENDING"), "the job submitted")
    s.record("submitted")
    return obj


def _ray_job(s: Session, status: str) -> None:
    """The Ray job of the RayJob reports ``status`` (as Ray's job manager would)."""
    raydash().set_job(s.namespace, status, submission_id=_status(s.get()).get("jobId"))


def _running_job(s: Session, **spec: Any) -> dict[str, Any]:
    """Create the RayJob, record it submitted, let its Ray job run, record it running."""
    s.create(_rayjob(s, **spec))
    _submitted(s)
    _ray_job(s, "RUNNING")
    obj = s.settle(_job("Running", "RUNNING"), "RUNNING")
    s.record("running")
    return obj


def _job_ends(ray_status: str, deployment: str, label: str) -> Flow:
    """A flow whose Ray job ends with ``ray_status``; KubeRay then writes ``deployment``."""

    def flow(s: Session) -> None:
        _running_job(s)
        _ray_job(s, ray_status)
        s.settle(_job(deployment, ray_status), deployment)
        s.record(label)

    return flow


def rayjob_suspend_resume(s: Session) -> None:
    """Suspension needs shutdownAfterJobFinishes (validateRayJobSpec); resuming submits anew."""
    _running_job(s, shutdown=True)
    s.set_path("spec.suspend", True)
    s.settle(lambda o: _job("Suspended")(o) and not s.pods(), "Suspended, no pods")
    s.record("suspended")
    s.set_path("spec.suspend", False)
    s.settle(_job("Running", "PENDING"), "the job submitted again")
    s.record("resumed")


def rayjob_created_suspended(s: Session) -> None:
    s.create(_rayjob(s, shutdown=True, suspend=True))
    s.settle(_job("Suspended"), "Suspended")
    s.record("suspended")
    s.set_path("spec.suspend", False)
    _submitted(s)


def rayjob_cluster_deleted(s: Session) -> None:
    """The RayCluster under a running job is deleted: KubeRay creates it again and, the Ray job
    being gone with the old head (raydash reset), submits the job again."""
    obj = _running_job(s)
    cluster = _status(obj)["rayClusterName"]
    old_uid = s.client.get("rayclusters.ray.io", cluster, namespace=s.namespace)["metadata"]["uid"]
    s.client.delete("rayclusters.ray.io", cluster, namespace=s.namespace)
    s.wait(
        "the RayCluster created again",
        lambda _: _uid(s, "rayclusters.ray.io", cluster) not in (None, old_uid),
    )
    raydash().reset(s.namespace)
    s.settle(_job("Running", "PENDING"), "the job submitted to the new cluster")
    s.record("resubmitted")


def rayjob_submitter_lags(s: Session) -> None:
    """K8sJobMode (the default): a submitter Job's pod runs ``ray job submit`` and follows the
    job's logs; KubeRay writes Complete only once the Ray job is terminal AND the submitter has
    finished. Here the flow plays the submitter's POST to the dashboard, and kwok ends its pod."""
    submitter = {"spec": s.pod_spec("ray-job-submitter", image=IMAGE, restart="Never")}
    s.create(_rayjob(s, submissionMode="K8sJobMode", submitterPodTemplate=submitter))
    obj = s.settle(_job("Running"), "Running, the submitter started")
    s.wait_pods(
        "the submitter pod running",
        lambda pods: any(_is_submitter(p) and _phase(p) == "Running" for p in pods),
    )
    raydash().submit(_status(obj)["dashboardURL"], _status(obj)["jobId"], "python -c 'print(1)'")
    s.settle(_job("Running", "PENDING"), "the job submitted")
    s.record("submitted")
    _ray_job(s, "RUNNING")
    s.settle(_job("Running", "RUNNING"), "RUNNING")
    s.record("running")
    _ray_job(s, "SUCCEEDED")
    s.settle(_job("Running", "SUCCEEDED"), "SUCCEEDED, the submitter still running")
    s.record("succeeded-submitter-running")
    s.end_pod(_is_submitter, "succeeded")
    s.settle(_job("Complete", "SUCCEEDED"), "Complete")
    s.record("succeeded")


def _is_submitter(pod: Mapping[str, Any]) -> bool:
    return "job-name" in ((pod.get("metadata") or {}).get("labels") or {})


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase"))


def _uid(s: Session, what: str, name: str) -> str | None:
    found = s.client.list(what, namespace=s.namespace).items
    return next((str(o["metadata"]["uid"]) for o in found if o["metadata"]["name"] == name), None)


def rayjob_invalid_suspend(s: Session) -> None:
    """Suspending a RayJob without shutdownAfterJobFinishes fails its validation for good."""
    s.create(_rayjob(s))
    _submitted(s)
    s.set_path("spec.suspend", True)
    s.settle(_job("ValidationFailed"), "ValidationFailed")
    s.record("validation-failed")


def rayjob_deadline(s: Session) -> None:
    s.create(_rayjob(s, activeDeadlineSeconds=10))
    _submitted(s)
    s.settle(_job("Failed"), "Failed (DeadlineExceeded)")
    s.record("deadline-exceeded")


# -- RayService --------------------------------------------------------------------------------
def _rayservice(s: Session, *, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "serve"},
        "spec": {
            "serveConfigV2": SERVE_CONFIG.format(replicas=replicas),
            "rayClusterConfig": _cluster_spec(s, 1),
        },
    }


def _apps(which: str, status: str) -> Callable[[dict[str, Any]], bool]:
    def ok(obj: dict[str, Any]) -> bool:
        apps = (_status(obj).get(which) or {}).get("applicationStatuses") or {}
        return bool(apps) and all((a or {}).get("status") == status for a in apps.values())

    return ok


def _serving(obj: dict[str, Any]) -> bool:
    return (
        _cond("Ready")(obj)
        and _cond("UpgradeInProgress", "False")(obj)
        and _apps("activeServiceStatus", "RUNNING")(obj)
    )


def _app(s: Session, status: str) -> None:
    raydash().set_app(s.namespace, status)


def _deploying(s: Session) -> None:
    s.create(_rayservice(s))
    s.settle(_apps("pendingServiceStatus", "DEPLOYING"), "the Serve application deploying")
    s.record("deploying")


def _app_becomes(s: Session, status: str, which: str, label: str) -> None:
    """The Serve applications report ``status``; record once KubeRay shows it in ``which``
    (``_serving`` for RUNNING: Ready, no upgrade, the active cluster's applications running)."""
    _app(s, status)
    s.settle(_serving if status == "RUNNING" else _apps(which, status), f"{which}: {status}")
    s.record(label)


def _deployed(s: Session) -> None:
    _deploying(s)
    _app_becomes(s, "RUNNING", "activeServiceStatus", "running")


def rayservice_created(s: Session) -> None:
    _deployed(s)


def rayservice_deploy_failed(s: Session) -> None:
    _deploying(s)
    _app_becomes(s, "DEPLOY_FAILED", "pendingServiceStatus", "deploy-failed")


def rayservice_upgrade(s: Session) -> None:
    """A change of the cluster spec (the worker image): a pending cluster next to the active one,
    traffic switched once its applications run."""
    _deployed(s)
    spec = _cluster_spec(s, 1)
    spec["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["image"] = "rayproject/ray:2.47.0"
    s.patch({"spec": {"rayClusterConfig": spec}})
    s.settle(
        lambda o: _cond("UpgradeInProgress")(o) and _apps("pendingServiceStatus", "DEPLOYING")(o),
        "the pending cluster's applications deploying",
    )
    s.record("upgrading")
    _app_becomes(s, "RUNNING", "activeServiceStatus", "upgraded")


def rayservice_unhealthy(s: Session) -> None:
    _deployed(s)
    _app_becomes(s, "UNHEALTHY", "activeServiceStatus", "unhealthy")
    _app_becomes(s, "RUNNING", "activeServiceStatus", "recovered")


def rayservice_config_update(s: Session) -> None:
    """A change of serveConfigV2 only: applied in place on the active cluster."""
    _deployed(s)
    s.set_path("spec.serveConfigV2", SERVE_CONFIG.format(replicas=2))
    s.settle(_apps("activeServiceStatus", "DEPLOYING"), "the application redeploying")
    s.record("updating")
    _app_becomes(s, "RUNNING", "activeServiceStatus", "updated")


FLOWS: Mapping[str, Mapping[str, Flow]] = {
    "RayCluster": {
        "created": raycluster_created,
        "scale-up-down": raycluster_scale_up_down,
        "beyond-capacity": raycluster_beyond_capacity,
        "suspend-resume": raycluster_suspend_resume,
        "created-suspended": raycluster_created_suspended,
        "worker-restarts": raycluster_worker_restarts,
        "worker-deleted": raycluster_worker_deleted,
    },
    "RayJob": {
        "succeeds": _job_ends("SUCCEEDED", "Complete", "succeeded"),
        "fails": _job_ends("FAILED", "Failed", "failed"),
        "stopped": _job_ends("STOPPED", "Complete", "stopped"),
        "suspend-resume": rayjob_suspend_resume,
        "created-suspended": rayjob_created_suspended,
        "cluster-deleted": rayjob_cluster_deleted,
        "submitter-lags": rayjob_submitter_lags,
        "invalid-suspend": rayjob_invalid_suspend,
        "deadline": rayjob_deadline,
    },
    "RayService": {
        "created": rayservice_created,
        "deploy-failed": rayservice_deploy_failed,
        "upgrade": rayservice_upgrade,
        "unhealthy": rayservice_unhealthy,
        "config-update": rayservice_config_update,
    },
}
