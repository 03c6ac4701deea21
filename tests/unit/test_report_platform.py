"""karta.report.platform: what a platform counts per workload (primary status, GPUs of running
and pending pods, gang-pending pods) and the totals per namespace and root kind (the controller's
platform metrics)."""

from __future__ import annotations

from typing import Any

import pytest

from karta.catalog import catalog_by_gvk
from karta.model import Karta
from karta.model.load import karta_from_dict
from karta.report import (
    WorkloadCounts,
    controller_uid,
    gang_pending,
    owned_pods,
    platform_totals,
    pod_placement,
    primary_status,
    workload_counts,
)

GPUS = ("nvidia.com/gpu",)


def _pod(
    name: str,
    *,
    gpus: int = 1,
    node: str | None = None,
    phase: str = "Pending",
    scheduled: tuple[str, str] | None = None,
    owner: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": gpus}}}]
    }
    if node:
        spec["nodeName"] = node
    status: dict[str, Any] = {"phase": phase}
    if scheduled is not None:
        status["conditions"] = [{"type": "PodScheduled", "status": scheduled[0], "reason": scheduled[1]}]
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    if owner:
        meta["ownerReferences"] = [{"kind": "Job", "name": owner, "uid": owner, "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _job(name: str = "train", **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ns", "uid": name, "resourceVersion": "1"},
        "spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": "c"}]}}},
        "status": status,
    }


@pytest.fixture(scope="module")
def job_karta() -> Karta:
    karta = catalog_by_gvk("batch", "v1", "Job")
    assert karta is not None
    return karta


def test_a_pod_is_running_once_bound_pending_before_and_nothing_when_terminal() -> None:
    assert pod_placement(_pod("a", node="n1")) == "running"
    assert pod_placement(_pod("a", node="n1", phase="Running")) == "running"
    assert pod_placement(_pod("a")) == "pending"
    assert pod_placement(_pod("a", node="n1", phase="Succeeded")) is None
    assert pod_placement(_pod("a", phase="Failed")) is None
    assert pod_placement({"spec": "junk", "status": 3}) == "pending"  # hostile shapes: no error


def test_gang_pending_needs_the_unschedulable_reason_and_no_node() -> None:
    assert gang_pending(_pod("a", scheduled=("False", "Unschedulable")))
    assert not gang_pending(_pod("a"))  # not tried yet
    assert not gang_pending(_pod("a", scheduled=("False", "SchedulingGated")))
    assert not gang_pending(_pod("a", scheduled=("True", "")))
    assert not gang_pending(_pod("a", node="n1", scheduled=("False", "Unschedulable")))
    assert not gang_pending(_pod("a", phase="Failed", scheduled=("False", "Unschedulable")))
    assert not gang_pending({"status": {"phase": "Pending", "conditions": "junk"}})


def test_primary_status_follows_the_definition_and_is_undefined_when_it_cannot(job_karta: Karta) -> None:
    assert primary_status(job_karta, _job(ready=1, active=2)) == "Running"
    assert primary_status(job_karta, _job(active=2, ready=0)) == "Initializing"
    done = _job(conditions=[{"type": "Complete", "status": "True"}])
    assert primary_status(job_karta, done) == "Completed"
    broken = karta_from_dict(
        {
            "apiVersion": "run.ai/v1alpha1",
            "kind": "Karta",
            "metadata": {"name": "broken"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "job",
                        "kind": {"group": "batch", "version": "v1", "kind": "Job"},
                        "statusDefinition": {
                            "statusMappings": {"running": [{"byExpression": {"expression": 'error("no")'}}]}
                        },
                    }
                }
            },
        }
    )
    assert primary_status(broken, _job(ready=1)) == "Undefined"
    assert primary_status(job_karta, {"kind": "Job", "status": "junk"}) == "Undefined"


def test_workload_counts_split_gpus_by_placement_and_count_gang_pending_only_for_gangs() -> None:
    pods = [
        _pod("r0", gpus=2, node="n1"),
        _pod("r1", gpus=2, node="n1", phase="Running"),
        _pod("p0", gpus=1, scheduled=("False", "Unschedulable")),
        _pod("p1", gpus=1),  # not tried yet: pending, not gang-pending
        _pod("done", gpus=8, node="n1", phase="Succeeded"),  # holds nothing
    ]
    counts = workload_counts(_job(), pods, status="Running", gpu_resources=GPUS, gang=True)
    assert counts == WorkloadCounts("ns", "batch", "Job", "Running", 4, 2, 1)
    no_gang = workload_counts(_job(), pods, status="Running", gpu_resources=GPUS, gang=False)
    assert (no_gang.gpus_pending, no_gang.gang_pods_pending) == (2, 0)
    bare = workload_counts(_pod("solo"), [_pod("solo")], status="Pending", gpu_resources=GPUS, gang=False)
    assert (bare.group, bare.kind, bare.gpus_pending) == ("", "Pod", 1)


def test_totals_are_per_namespace_and_root_kind_with_workloads_per_status() -> None:
    records = [
        WorkloadCounts("b", "batch", "Job", "Running", 4, 0, 0),
        WorkloadCounts("a", "batch", "Job", "Running", 2, 0, 0),
        WorkloadCounts("a", "batch", "Job", "Initializing", 0, 4, 4),
        WorkloadCounts("a", "batch", "Job", "Running", 1, 1, 0),
        WorkloadCounts("a", "kubeflow.org", "PyTorchJob", "Undefined", 0, 0, 0),
    ]
    totals = platform_totals(records)
    assert [(t.namespace, t.group, t.kind) for t in totals] == [
        ("a", "batch", "Job"),
        ("a", "kubeflow.org", "PyTorchJob"),
        ("b", "batch", "Job"),
    ]
    a_jobs = totals[0]
    assert a_jobs.workloads == {"Running": 2, "Initializing": 1}
    assert (a_jobs.gpus_running, a_jobs.gpus_pending, a_jobs.gang_pods_pending) == (3, 5, 4)
    assert platform_totals([]) == []


def test_owned_pods_follow_controller_references_through_the_objects_between() -> None:
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"uid": "js"}}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"uid": "j1"}}
    job["metadata"]["ownerReferences"] = [{"uid": "js", "controller": True}]
    pods = [_pod("a", owner="j1"), _pod("b", owner="j1")]
    other = _pod("c", owner="elsewhere")
    children: dict[str, list[dict[str, Any]]] = {}
    for obj in (job, *pods, other):
        owner = controller_uid(obj)
        assert owner is not None
        children.setdefault(owner, []).append(obj)
    assert [p["metadata"]["name"] for p in owned_pods(jobset, children)] == ["a", "b"]
    assert owned_pods(pods[0], children) == [pods[0]]  # a bare Pod is its own pod
    loop = {"apiVersion": "x/v1", "kind": "X", "metadata": {"uid": "x"}}
    assert owned_pods(loop, {"x": [loop]}) == []  # a cycle ends
    assert controller_uid({"metadata": {"ownerReferences": [{"uid": "u", "controller": False}]}}) is None
    assert controller_uid({"metadata": "junk"}) is None
