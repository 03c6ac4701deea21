"""Flows for the Kubeflow training operator's v1 kinds: every kind runs the same flows over its
own replica layout (the deciding replica first: Master, Chief, Launcher, or the workers)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..registry import Flow
from ..session import Session

__all__ = ["FLOWS"]

REPLICA_TYPE = "training.kubeflow.org/replica-type"  # pkg/apis/kubeflow.org/v1/common_types.go

# kind -> (replica specs field, default container name, [(replica type, replicas)])
LAYOUTS: Mapping[str, tuple[str, str, tuple[tuple[str, int], ...]]] = {
    "PyTorchJob": ("pytorchReplicaSpecs", "pytorch", (("Master", 1), ("Worker", 1))),
    "TFJob": ("tfReplicaSpecs", "tensorflow", (("Chief", 1), ("Worker", 1))),
    "XGBoostJob": ("xgbReplicaSpecs", "xgboost", (("Master", 1), ("Worker", 1))),
    "PaddleJob": ("paddleReplicaSpecs", "paddle", (("Master", 1), ("Worker", 1))),
    "JAXJob": ("jaxReplicaSpecs", "jax", (("Worker", 2),)),
    "MPIJob": ("mpiReplicaSpecs", "mpi", (("Launcher", 1), ("Worker", 1))),
}


def _job(
    s: Session,
    kind: str,
    *,
    restart: str = "OnFailure",
    suspend: bool = False,
    workers: int | None = None,
) -> dict[str, Any]:
    field, container, layout = LAYOUTS[kind]
    specs: dict[str, Any] = {}
    for rtype, replicas in layout:
        gpus = 0 if rtype == "Launcher" else 2
        specs[rtype] = {
            "replicas": workers if rtype == "Worker" and workers is not None else replicas,
            "restartPolicy": restart,
            "template": {"spec": s.pod_spec(container, gpus=gpus)},
        }
    spec: dict[str, Any] = {field: specs}
    if suspend:
        spec["runPolicy"] = {"suspend": True}
    return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "train"}, "spec": spec}


# The MPIJob v1 controller does not recreate a worker that failed under ExitCode (observed: it stays
# Failed, flow worker-exit-137); its worker-restarts flow restarts in place under OnFailure.
RESTARTS: Mapping[str, str] = {"MPIJob": "OnFailure"}


def _phase(pod: Mapping[str, Any]) -> Any:
    return (pod.get("status") or {}).get("phase")


def _cond(kind: str) -> Callable[[dict[str, Any]], bool]:
    def holds(obj: dict[str, Any]) -> bool:
        found = (obj.get("status") or {}).get("conditions") or []
        return any(c.get("type") == kind and c.get("status") == "True" for c in found)

    return holds


def _worker(pod: Mapping[str, Any]) -> bool:
    return ((pod.get("metadata") or {}).get("labels") or {}).get(REPLICA_TYPE) == "worker"


def _running_pods(count: int) -> Callable[[list[dict[str, Any]]], bool]:
    def holds(pods: list[dict[str, Any]]) -> bool:
        alive = [p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")]
        running = [p for p in alive if (p.get("status") or {}).get("phase") == "Running"]
        return len(running) == count == len(alive)

    return holds


def _pods(kind: str, workers: int | None = None) -> int:
    return sum(workers if r == "Worker" and workers is not None else n for r, n in LAYOUTS[kind][2])


def _flows(kind: str) -> dict[str, Flow]:
    def running(s: Session, workers: int | None = None) -> None:
        s.wait_pods("the pods running", _running_pods(_pods(kind, workers)))
        s.settle(_cond("Running"), "Running")

    def succeeds(s: Session) -> None:
        s.create(_job(s, kind))
        running(s)
        s.record("running")
        s.end_pods(lambda p: True, "succeeded")
        s.settle(_cond("Succeeded"), "Succeeded")
        s.record("succeeded")

    def fails(s: Session) -> None:
        s.create(_job(s, kind, restart="Never"))
        running(s)
        s.record("running")
        s.end_pod(_worker, "failed", code=1)
        s.settle(_cond("Failed"), "Failed")
        s.record("failed")

    def worker_restarts(s: Session) -> None:
        s.create(_job(s, kind, restart=RESTARTS.get(kind, "ExitCode")))
        running(s)
        s.record("running")
        s.end_pod(_worker, "failed", code=137)
        s.settle(lambda o: _cond("Restarting")(o) or _cond("Running")(o), "Restarting or Running")
        running(s)
        s.record("restarted")

    def worker_exit_137(s: Session) -> None:
        s.create(_job(s, kind, restart="ExitCode"))
        running(s)
        s.record("running")
        s.end_pod(_worker, "failed", code=137)
        s.wait_pods("the worker ended", lambda pods: any(_phase(p) == "Failed" for p in pods))
        s.settle()
        s.record("worker-failed")

    def resume(s: Session) -> None:
        """Resume with the Nodes cordoned: the acknowledged resume (pods Pending) settles first."""
        s.cordon()
        s.set_path("spec.runPolicy.suspend", False)
        s.settle(lambda o: not _cond("Suspended")(o), "the resume acknowledged")
        s.record("resume-acknowledged")
        s.cordon(False)
        running(s)
        s.record("resumed")

    def suspend_resume(s: Session) -> None:
        s.create(_job(s, kind))
        running(s)
        s.record("running")
        s.set_path("spec.runPolicy.suspend", True)
        s.settle(_cond("Suspended"), "Suspended")
        s.wait_pods("the pods gone", lambda pods: not pods)
        s.settle()
        s.record("suspended")
        resume(s)

    def created_suspended(s: Session) -> None:
        s.create(_job(s, kind, suspend=True))
        s.settle(_cond("Suspended"), "Suspended")
        s.record("suspended")
        resume(s)

    def scaled(s: Session) -> None:
        s.create(_job(s, kind, workers=1))
        running(s, 1)
        s.record("running")
        s.cordon()
        s.set_path(f"spec.{LAYOUTS[kind][0]}.Worker.replicas", 2)
        s.settle()
        s.record("scaling-up")
        s.cordon(False)
        running(s, 2)
        s.record("scaled-up")
        s.set_path(f"spec.{LAYOUTS[kind][0]}.Worker.replicas", 1)
        running(s, 1)
        s.record("scaled-down")

    flows: dict[str, Flow] = {
        "succeeds": succeeds,
        "fails": fails,
        "worker-restarts": worker_restarts,
        "suspend-resume": suspend_resume,
        "created-suspended": created_suspended,
        "scaled": scaled,
    }
    if kind in RESTARTS:
        flows["worker-exit-137"] = worker_exit_137
    return flows


FLOWS: Mapping[str, Mapping[str, Flow]] = {kind: _flows(kind) for kind in LAYOUTS}
