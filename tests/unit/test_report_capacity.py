"""karta.report.capacity: allocatable against requested per Node, GPU pods grouped per namespace
and top-owner type, and the cluster total (``kli top nodes``, ``kli top gpus``)."""

from __future__ import annotations

from typing import Any

from karta.extract.requests import Requests
from karta.report import TopOwner, gpu_pods, gpu_totals, gpu_usage, node_capacity

GPUS = ("nvidia.com/gpu", "amd.com/gpu")


def _node(
    name: str, gpus: int, *, cpu: str = "64", memory: str = "512Gi", extra: str | None = None
) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110", "nvidia.com/gpu": str(gpus)}
    if extra is not None:
        allocatable["amd.com/gpu"] = extra
    return {"metadata": {"name": name}, "status": {"allocatable": allocatable}}


def _pod(
    name: str,
    *,
    gpus: int | str = 0,
    node: str | None = None,
    phase: str = "Running",
    namespace: str = "ns",
    cpu: str = "1",
    limit_only: bool = False,
    init_gpus: int = 0,
) -> dict[str, Any]:
    resources: dict[str, Any] = {"cpu": cpu, "memory": "1Gi"}
    if gpus:
        resources["nvidia.com/gpu"] = gpus
    block = {"limits": resources} if limit_only else {"requests": resources}
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": block}]}
    if init_gpus:
        spec["initContainers"] = [{"name": "i", "resources": {"requests": {"nvidia.com/gpu": init_gpus}}}]
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"phase": phase},
    }


def test_node_rows_sum_the_requests_of_the_active_pods_bound_to_each_node() -> None:
    nodes = [_node("n2", 4), _node("n1", 8, extra="2")]
    pods = [
        _pod("a", gpus=2, node="n1"),
        _pod("b", gpus=1, node="n1", limit_only=True),  # the limit stands for the request
        _pod("c", gpus=3, node="n1", phase="Succeeded"),  # terminal: holds nothing
        _pod("d", gpus=1, node="n1", phase="Failed"),
        _pod("e", gpus=1, node="n2", phase="Pending", init_gpus=4),  # bound, still initialising
        _pod("f", gpus=8),  # not bound: no node's
        _pod("g", gpus=1, node="elsewhere"),  # a node the selector left out
    ]
    rows = node_capacity(nodes, pods, gpu_resources=GPUS)
    assert [r.name for r in rows] == ["n1", "n2"]
    n1, n2 = rows
    assert n1.allocatable == Requests(gpus=10, cpu_millis=64000, memory_bytes=512 * 2**30)
    assert n1.allocatable_pods == 110
    assert n1.requested == Requests(gpus=3, cpu_millis=2000, memory_bytes=2 * 2**30)
    assert (n1.pods, n1.free_gpus) == (2, 7)
    assert n2.requested is not None and n2.requested.gpus == 4  # the init container's 4 > 1
    assert (n2.pods, n2.free_gpus) == (1, 0)
    assert n1.to_dict()["gpus"] == {"allocatable": 10, "requested": 3, "free": 7}
    assert n1.to_dict()["pods"] == {"allocatable": 110, "count": 2}


def test_unreadable_nodes_or_pods_are_unknown_not_zero() -> None:
    pods = [_pod("a", gpus=2, node="n1"), _pod("b", gpus=1, node="n0"), _pod("c", gpus=5)]
    (only,) = node_capacity([_node("n1", 8)], None, gpu_resources=GPUS)
    assert (only.requested, only.pods, only.free_gpus) == (None, None, None)
    assert only.to_dict()["gpus"] == {"allocatable": 8, "requested": None, "free": None}
    from_pods = node_capacity(None, pods, gpu_resources=GPUS)
    assert [(r.name, r.allocatable, r.requested and r.requested.gpus) for r in from_pods] == [
        ("n0", None, 1),
        ("n1", None, 2),
    ]
    assert from_pods[0].free_gpus is None


def test_a_gpu_quantity_is_rounded_up_and_an_invalid_one_skipped() -> None:
    pods = [_pod("a", gpus="500m", node="n1"), _pod("b", gpus="lots", node="n1")]
    (row,) = node_capacity([_node("n1", 8)], pods, gpu_resources=GPUS)
    assert row.requested is not None and row.requested.gpus == 1
    assert row.pods == 2


def test_gpu_pods_are_grouped_by_namespace_and_top_owner_type() -> None:
    job_a = TopOwner("Job", "batch", "a")
    job_b = TopOwner("Job", "batch", "b")
    deploy = TopOwner("Deployment", "apps", "web")
    owners = {
        "uid-a0": job_a,
        "uid-a1": job_a,
        "uid-a2": job_a,
        "uid-b0": job_b,
        "uid-w0": deploy,
        "uid-w1": deploy,
        "uid-t": TopOwner("PyTorchJob", "kubeflow.org", "t"),
    }
    pods = [
        _pod("a0", gpus=2, node="n1"),
        _pod("a1", gpus=2, node="n1"),
        _pod("a2", gpus=2),  # pending
        _pod("b0", gpus=1, phase="Succeeded", node="n1"),  # terminal: not counted
        _pod("w0", gpus=1, node="n2", namespace="serve"),
        _pod("w1", gpus=1, node="n2", namespace="serve"),
        _pod("t", gpus=4, node="n2", namespace="train"),
        _pod("bare", gpus=1, namespace="ns"),  # no owner: its own workload
        _pod("bare2", gpus=1, node="n1", namespace="ns"),
        _pod("cpu-only", node="n1"),  # requests no GPU: not a GPU pod
    ]
    usage = gpu_usage(pods, lambda p: owners.get(p["metadata"]["uid"]), gpu_resources=GPUS)
    assert [u.to_dict() for u in usage] == [
        {
            "namespace": "ns",
            "type": "Job.batch",
            "workloads": 1,
            "pods": 3,
            "gpusRequested": 4,
            "gpusPending": 2,
        },
        {"namespace": "ns", "type": "Pod", "workloads": 2, "pods": 2, "gpusRequested": 1, "gpusPending": 1},
        {
            "namespace": "serve",
            "type": "Deployment.apps",
            "workloads": 1,
            "pods": 2,
            "gpusRequested": 2,
            "gpusPending": 0,
        },
        {
            "namespace": "train",
            "type": "PyTorchJob.kubeflow.org",
            "workloads": 1,
            "pods": 1,
            "gpusRequested": 4,
            "gpusPending": 0,
        },
    ]
    assert [p["metadata"]["name"] for p in gpu_pods(pods, gpu_resources=GPUS)] == [
        "a0", "a1", "a2", "w0", "w1", "t", "bare", "bare2"
    ]  # fmt: skip
    totals = gpu_totals([_node("n1", 8), _node("n2", 4, extra="4")], usage, gpu_resources=GPUS)
    assert totals.to_dict() == {
        "nodes": 2,
        "gpusAllocatable": 16,
        "gpusRequested": 11,
        "gpusPending": 3,
        "gpusFree": 5,
    }


def test_core_kinds_have_no_group_and_unreadable_lists_give_unknown_totals() -> None:
    assert TopOwner("ReplicationController", "", "rc").type == "ReplicationController"
    assert TopOwner("JobSet", "jobset.x-k8s.io", "js").type == "JobSet.jobset.x-k8s.io"
    unknown = gpu_totals(None, None, gpu_resources=GPUS)
    assert unknown.to_dict() == {
        "nodes": None,
        "gpusAllocatable": None,
        "gpusRequested": None,
        "gpusPending": None,
        "gpusFree": None,
    }
    assert gpu_totals([_node("n", 2)], [], gpu_resources=GPUS).free == 2
