"""Kueue with a gang backend (issue 25, item 3): one karta-controller runs the Kueue part and the
gang part with pod binding (``--kueue --backend workload-api --enable-webhook``) against the real
Kueue v0.17.0, kube-scheduler 1.37 (GenericWorkload: its GangScheduling plugin), kwok GPU Nodes and
the training operator of ``kueue_cluster``. Kueue decides when a job may run (quota), the
scheduler where its pods go, all or nothing (capacity); karta is the adapter for both.

A PyTorchJob of a master and 3 workers of 2 GPUs each (8 GPUs, the whole ClusterQueue), pinned to
the flavor's kwok Nodes of 2 GPUs each:

- suspended at creation by the Kueue part's webhook, no pods. The gang part renders its gang while
  it is suspended (its rule: a suspended workload keeps its group objects, so nothing is deleted
  and made again across suspend and resume): a PodGroup of minimum 4 that no pod names asks
  nothing of the scheduler and holds no capacity (kube-scheduler reserves nothing for a PodGroup;
  its GangScheduling plugin only holds the pods that name it);
- admitted (quota), resumed, the operator's 4 pods each bound to the gang by the pod webhook; with
  Nodes for only 3 of them none binds (Kueue admitted it: quota is not capacity); one more Node:
  the 4 bind together;
- a second such job while the first holds the quota: suspended, pending, no pods, nothing bound;
  the first deleted: the second admitted and its gang binds;
- preemption: a higher-priority job evicts a bound gang: the low job is suspended with its
  templates restored, its pods go away, its PodGroup is kept with its own minimum (no pod names it:
  it blocks nobody), the urgent gang binds; the urgent job deleted: the low one is admitted again
  and its new pods bind together through the kept PodGroup.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..kubehttp import KubeHTTP, ok, wait
from ..test_kueue_live import KUEUE, Queues, _condition
from ..test_kueue_live import queues as queues  # the fixture
from .kueue_support import (
    GANG_GPUS,
    GANG_SIZE,
    PYTORCHJOBS,
    admitted,
    bound_together,
    change_cq,
    flavor_node,
    gang_job,
    job,
    job_selector,
    kueue_controller,
    pending,
    pods,
    pods_ready_of,
    pytorchjob_crd,
    suspended,
    workload_of,
)
from .pods_support import bound, gang_min_count, hold_unbound, pod_group


@pytest.fixture
def nodes(kueue_cluster: KubeHTTP, queues: Queues, corpus: Path) -> Iterator[list[str]]:
    """The test's kwok Nodes (deleted afterwards); the PyTorchJob CRD installed."""
    pytorchjob_crd(kueue_cluster, corpus)
    made: list[str] = []
    yield made
    for name in made:
        kueue_cluster.delete(f"/api/v1/nodes/{name}")


def _group(kube: KubeHTTP, q: Queues, name: str) -> dict[str, Any]:
    """The job's PodGroup (the gang part names it ``<job>-pytorchjob``), once the gang part made it."""
    group: dict[str, Any] = wait(
        f"the PodGroup of {name}", lambda: pod_group(kube, q.ns, f"{name}-pytorchjob"), timeout=30
    )
    return group


def test_kueue_admits_and_the_scheduler_binds_the_gang_all_or_nothing(
    kueue_cluster: KubeHTTP, queues: Queues, nodes: list[str], tmp_path: Path
) -> None:
    kube, q = kueue_cluster, queues
    nodes += [
        flavor_node(kube, q, i, gpus=GANG_GPUS) for i in range(GANG_SIZE - 1)
    ]  # room for 3 of the 4 pods
    with kueue_controller(kube, tmp_path, q, backend="workload-api", namespaces=(q.ns,)):
        created = ok(kube.post(PYTORCHJOBS.format(ns=q.ns), gang_job(q, "first")))
        assert suspended(created), "the Kueue part's webhook suspends a queued workload at creation"
        assert gang_min_count(_group(kube, q, "first")) == GANG_SIZE  # rendered while suspended, no pods
        wait("the first Workload to be admitted", lambda: admitted(q, "first"))
        running = wait("the first job to be resumed", lambda: not suspended(j := job(kube, q, "first")) and j)
        master = running["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
        assert master["nodeSelector"] == q.node_labels and q.toleration in master["tolerations"]

        started = time.monotonic()
        held = hold_unbound(kube, q.ns, GANG_SIZE, job_selector("first"))  # admitted, but only room for 3
        assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in held} == {"first-pytorchjob"}
        assert all(q.toleration in p["spec"]["tolerations"] for p in held)  # Kueue's flavor, on the pods
        # what Kueue's waitForPodsReady would time out on: admitted, its pods not ready
        assert pods_ready_of(q, "first") == ("False", "WaitForStart")

        second = ok(kube.post(PYTORCHJOBS.format(ns=q.ns), gang_job(q, "second")))
        assert suspended(second)
        wait("the second Workload to be pending", lambda: pending(q, "second"))

        nodes.append(flavor_node(kube, q, GANG_SIZE - 1, gpus=GANG_GPUS))  # room for the whole gang
        placed = bound_together(kube, q, "first")
        assert len({p["spec"]["nodeName"] for p in placed}) == GANG_SIZE
        wait("PodsReady once kwok runs them", lambda: pods_ready_of(q, "first") == ("True", "Started"))
        print(
            f"\nfirst gang: admitted, 0/{GANG_SIZE} bound on room for 3; "
            f"{GANG_SIZE}/{GANG_SIZE} after the 4th Node"
        )

        # the second waits for quota, not for Nodes: suspended, no pods, its PodGroup named by none
        assert suspended(job(kube, q, "second")) and pending(q, "second")
        assert not pods(kube, q, "second")
        assert gang_min_count(_group(kube, q, "second")) == GANG_SIZE

        ok(kube.delete(f"{PYTORCHJOBS.format(ns=q.ns)}/first"))
        wait("the second Workload to be admitted", lambda: admitted(q, "second"))
        wait("the second job to be resumed", lambda: not suspended(job(kube, q, "second")))
        bound_together(kube, q, "second")
        print(f"both gangs in {time.monotonic() - started:.1f}s from the first's pods")


def test_a_preempted_gang_goes_away_and_keeps_no_minimum_that_blocks(
    kueue_cluster: KubeHTTP, queues: Queues, nodes: list[str], tmp_path: Path
) -> None:
    kube, q = kueue_cluster, queues
    change_cq(kube, q, lambda cq: cq["spec"].update(preemption={"withinClusterQueue": "LowerPriority"}))
    high: dict[str, Any] = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
            "metadata": {"name": f"{q.ns}-high"}, "value": 1000}  # fmt: skip
    ok(kube.post(f"{KUEUE}/workloadpriorityclasses", high))
    nodes += [flavor_node(kube, q, i, gpus=GANG_GPUS) for i in range(GANG_SIZE)]  # room for one gang
    try:
        with kueue_controller(kube, tmp_path, q, backend="workload-api", namespaces=(q.ns,)):
            held = ok(kube.post(PYTORCHJOBS.format(ns=q.ns), gang_job(q, "low")))
            bound_together(kube, q, "low")
            low_group = _group(kube, q, "low")

            urgent = gang_job(q, "urgent", priority_class=f"{q.ns}-high")
            started = time.monotonic()
            ok(kube.post(PYTORCHJOBS.format(ns=q.ns), urgent))
            stopped = wait("the low job to be suspended", lambda: suspended(j := job(kube, q, "low")) and j)
            assert stopped["spec"]["pytorchReplicaSpecs"] == held["spec"]["pytorchReplicaSpecs"]
            wait("the low job's pods to go away", lambda: not pods(kube, q, "low"), timeout=60)
            bound_together(kube, q, "urgent")  # on the Nodes the low gang left
            preempted_in = time.monotonic() - started

            # what the gang part does with a suspended workload: its PodGroup is kept as it was (the
            # same object, its own minimum), and no pod names it, so it holds nothing back
            kept = _group(kube, q, "low")
            assert kept["metadata"]["uid"] == low_group["metadata"]["uid"]
            assert gang_min_count(kept) == GANG_SIZE
            low = workload_of(q, "low")
            assert low is not None and _condition(low, "Requeued").get("reason") == "Preempted"
            wait("the low Workload to be pending again", lambda: pending(q, "low"))
            assert not bound(pods(kube, q, "low"))

            ok(kube.delete(f"{PYTORCHJOBS.format(ns=q.ns)}/urgent"))
            wait("the low Workload to be admitted again", lambda: admitted(q, "low"))
            wait("the low job to be resumed", lambda: not suspended(job(kube, q, "low")))
            bound_together(kube, q, "low")  # through the kept PodGroup, all 4 new pods together
            print(
                f"\nurgent gang bound {preempted_in:.1f}s after its creation (the low one preempted); "
                f"the low gang bound again {time.monotonic() - started - preempted_in:.1f}s later"
            )
    finally:
        kube.delete(f"{KUEUE}/workloadpriorityclasses/{q.ns}-high")
