"""``kli describe`` on the real Kueue (``kueue_cluster``): two PyTorchJobs of 8 GPUs on a queue of
8, each with the Workload karta's controller creates for it. The first reads Admitted on its
ClusterQueue; the second Pending with Kueue's own reason and message; a job without the queue
label has no Queue line (and no request for Workloads is made for it), and once the first job's
Workload is gone, the first job says that it has none."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..kubehttp import KubeHTTP, ok, wait
from ..queued import two_queued_jobs
from ..test_kueue_live import GPU, KUEUE, Queues
from ..test_kueue_live import queues as queues  # the fixture
from .conftest import Result


def test_describe_shows_the_queue_the_admission_state_and_why_it_waits(
    kueue_cluster: KubeHTTP, queues: Queues, corpus: Path, kli: Callable[..., Result]
) -> None:
    first, _ = two_queued_jobs(kueue_cluster, queues, corpus)
    config = ("--kubeconfig", str(kueue_cluster.kubeconfig), "-n", queues.ns)

    admitted = kli("describe", "pytorchjob", "first", *config)
    assert admitted.code == 0, admitted.err
    assert (
        f"Queue: {queues.lq} (ClusterQueue {queues.cq}): Admitted   workload: pytorchjob-first"
        in admitted.out
    )

    pending = kli("describe", "pytorchjob", "second", *config)
    assert pending.code == 0, pending.err
    message = (
        f"couldn't assign flavors to pod set worker: insufficient unused quota for {GPU} in flavor "
        f"{queues.flavor}, 8 more needed"
    )
    where = f"position 1 in ClusterQueue {queues.cq}, 1 in LocalQueue {queues.lq}"  # visibility API
    assert (
        f"Queue: {queues.lq}: Pending, {where} (Pending: {message})   workload: pytorchjob-second"
        in pending.out
    )

    report = json.loads(kli("describe", "pytorchjob", "second", *config, "-o", "json").out)
    assert report["queue"] == {
        "queue": queues.lq,
        "workload": "pytorchjob-second",
        "state": "Pending",
        "clusterQueue": None,
        "reason": "Pending",
        "message": message,
        "position": {
            "clusterQueue": 1,
            "localQueue": 1,
            "clusterQueueName": queues.cq,
            "localQueueName": queues.lq,
            "text": where,
        },
    }

    unlabelled = {**first, "metadata": {"name": "third", "namespace": queues.ns}}
    unlabelled.pop("status", None)
    ok(kueue_cluster.post(f"/apis/kubeflow.org/v1/namespaces/{queues.ns}/pytorchjobs", unlabelled))
    plain = kli("describe", "pytorchjob", "third", *config)
    assert plain.code == 0, plain.err
    assert "Queue:" not in plain.out

    ok(kueue_cluster.delete(f"{KUEUE}/namespaces/{queues.ns}/workloads/pytorchjob-first"))
    wait(
        "the first Workload to be gone",
        lambda: "pytorchjob-first" not in {w["metadata"]["name"] for w in queues.workloads()},
    )
    gone = kli("describe", "pytorchjob", "first", *config)
    assert f"Queue: {queues.lq}: NoWorkload (no Kueue Workload exists for it yet" in gone.out
