"""karta-controller ``--kueue`` against the real Kueue of the test cluster (``kueue_cluster``) and
the training operator: what tests/e2e/test_kueue_adapter_live.py does by hand, done by the
controller part (docs/kueue.md section 9): PyTorchJobs suspended at creation by the webhook, their
Workloads created, the admitted one started with the flavor's node selector (the operator's pods
carry it), the second pending until the first is deleted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..kubehttp import KubeHTTP, load_manifests, ok, wait
from ..test_kueue_live import KUEUE, Queues, _condition
from ..test_kueue_live import queues as queues  # the fixture
from .kueue_support import (
    PYTORCHJOBS,
    admitted,
    change_cq,
    job,
    kueue_controller,
    pending,
    pods,
    pytorchjob,
    suspended,
    workload_of,
)


@pytest.fixture
def pytorchjob_crd(kueue_cluster: KubeHTTP, corpus: Path) -> None:
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    kueue_cluster.ensure_crd(crd)


def test_two_pytorchjobs_share_8_gpus_one_after_the_other(
    kueue_cluster: KubeHTTP, queues: Queues, pytorchjob_crd: None, tmp_path: Path
) -> None:
    kube, q = kueue_cluster, queues
    with kueue_controller(kube, tmp_path, q):
        first = ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "first")))
        assert suspended(first), "the webhook suspends a queued workload at creation"
        wait("the first Workload to be admitted", lambda: admitted(q, "first"))
        running = wait("the first job to be started", lambda: not suspended(j := job(kube, q, "first")) and j)
        template = running["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
        assert template["spec"]["nodeSelector"] == q.node_labels
        assert q.toleration in template["spec"]["tolerations"]
        assert template["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "worker"
        created = wait("the first job's pods", lambda: pods(kube, q, "first"))
        assert all(p["spec"]["nodeSelector"] == q.node_labels for p in created)

        second = ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "second")))
        assert suspended(second)
        wait("the second Workload to be pending", lambda: pending(q, "second"))
        assert suspended(job(kube, q, "second"))
        assert not pods(kube, q, "second")

        ok(kube.delete(f"{PYTORCHJOBS.format(ns=q.ns)}/first"))
        wait("the second Workload to be admitted", lambda: admitted(q, "second"))
        running = wait(
            "the second job to be started", lambda: not suspended(j := job(kube, q, "second")) and j
        )
        spec = running["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
        assert spec["nodeSelector"] == q.node_labels
        created = wait("the second job's pods", lambda: pods(kube, q, "second"))
        assert all(p["spec"]["nodeSelector"] == q.node_labels for p in created)


def test_a_higher_priority_job_preempts_a_lower_one(
    kueue_cluster: KubeHTTP, queues: Queues, pytorchjob_crd: None, tmp_path: Path
) -> None:
    """Kueue evicts the low job's Workload; the controller suspends the job with its templates
    restored, releases the quota once its pods are gone, and the urgent one is admitted and started;
    the low one is requeued and waits."""
    kube, q = kueue_cluster, queues
    change_cq(kube, q, lambda cq: cq["spec"].update(preemption={"withinClusterQueue": "LowerPriority"}))
    high: dict[str, Any] = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
            "metadata": {"name": f"{q.ns}-high"}, "value": 1000}  # fmt: skip
    ok(kube.post(f"{KUEUE}/workloadpriorityclasses", high))
    try:
        with kueue_controller(kube, tmp_path, q):
            held = ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "low")))
            wait("the low job to be started", lambda: not suspended(job(kube, q, "low")))
            wait("the low job's pods", lambda: pods(kube, q, "low"))

            ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "urgent", priority_class=f"{q.ns}-high")))
            wait("the urgent Workload", lambda: workload_of(q, "urgent"))
            assert workload_of(q, "urgent")["spec"]["priority"] == 1000  # type: ignore[index]
            stopped = wait("the low job to be stopped", lambda: suspended(j := job(kube, q, "low")) and j)
            assert stopped["spec"]["pytorchReplicaSpecs"] == held["spec"]["pytorchReplicaSpecs"]
            assert "run.ai/karta-kueue-restore" not in (stopped["metadata"].get("annotations") or {})
            wait("the urgent Workload to be admitted", lambda: admitted(q, "urgent"))
            running = wait(
                "the urgent job to be started", lambda: not suspended(j := job(kube, q, "urgent")) and j
            )
            spec = running["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
            assert spec["nodeSelector"] == q.node_labels
            low = workload_of(q, "low")
            assert low is not None and _condition(low, "Requeued").get("status") == "True"
            assert _condition(low, "Requeued").get("reason") == "Preempted"
            assert "admission" not in (low.get("status") or {})
            wait("the low Workload to be pending again", lambda: pending(q, "low"))
            assert suspended(job(kube, q, "low"))
    finally:
        kube.delete(f"{KUEUE}/workloadpriorityclasses/{q.ns}-high")


def test_the_controller_restarted_between_admission_and_start(
    kueue_cluster: KubeHTTP, queues: Queues, pytorchjob_crd: None, tmp_path: Path
) -> None:
    """The second job is admitted while the controller is down (the ClusterQueue grown to 16
    GPUs): the restarted controller finds it admitted and suspended, and starts it."""
    kube, q = kueue_cluster, queues
    with kueue_controller(kube, tmp_path, q):
        ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "first")))
        wait("the first job to be started", lambda: not suspended(job(kube, q, "first")))
        ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "second")))
        wait("the second Workload to be pending", lambda: pending(q, "second"))

    def grow(cq: dict[str, Any]) -> None:
        for resource in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
            if resource["name"] == "nvidia.com/gpu":
                resource["nominalQuota"] = "16"

    change_cq(kube, q, grow)
    wait("the second Workload to be admitted while the controller is down", lambda: admitted(q, "second"))
    assert suspended(job(kube, q, "second"))
    with kueue_controller(kube, tmp_path, q):
        running = wait(
            "the second job to be started", lambda: not suspended(j := job(kube, q, "second")) and j
        )
        spec = running["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
        assert spec["nodeSelector"] == q.node_labels
        assert not suspended(job(kube, q, "first"))


def test_a_workload_deleted_by_hand_stops_the_job_and_queues_it_again(
    kueue_cluster: KubeHTTP, queues: Queues, pytorchjob_crd: None, tmp_path: Path
) -> None:
    """Kueue's rule: the finalizer keeps the deleted Workload until the job is stopped (its
    templates restored); then a new Workload is made, admitted, and the job started again."""
    kube, q = kueue_cluster, queues
    with kueue_controller(kube, tmp_path, q):
        held = ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "first")))
        wait("the first job to be started", lambda: not suspended(job(kube, q, "first")))
        old = workload_of(q, "first")
        assert old is not None and "kueue.x-k8s.io/resource-in-use" in old["metadata"]["finalizers"]
        ok(kube.delete(f"{KUEUE}/namespaces/{q.ns}/workloads/{old['metadata']['name']}"))

        def replaced() -> dict[str, Any] | None:
            wl = workload_of(q, "first")
            return wl if wl is not None and wl["metadata"]["uid"] != old["metadata"]["uid"] else None

        wait("a new Workload", replaced, timeout=60)
        # the job was stopped in between: its admission's values were removed from the templates
        wait("the new Workload to be admitted", lambda: admitted(q, "first"))
        running = wait("the job to be started again", lambda: not suspended(j := job(kube, q, "first")) and j)
        spec = running["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
        assert spec["nodeSelector"] == q.node_labels
        assert (
            running["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"]
            == (held["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"])
        )
        events = ok(kube.get(f"/api/v1/namespaces/{q.ns}/events"))["items"]
        assert any(e["reason"] == "KueueStopped" and "being deleted" in e["message"] for e in events), (
            "the job was stopped before the finalizer was dropped"
        )
