"""``kli get`` on the real Kueue (``kueue_cluster``): two PyTorchJobs of 8 GPUs on a queue of 8,
each with the Workload karta's controller creates for it, read ``team:Admitted`` and
``team:Pending`` in the QUEUE column, and ``-o json`` gives each row describe's ``queue`` dict;
a namespace whose jobs carry no queue label has no QUEUE column."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..kubehttp import KubeHTTP, load_manifests, ok
from ..queued import two_queued_jobs
from ..test_kueue_live import Queues
from ..test_kueue_live import queues as queues  # the fixture
from .conftest import Result


def test_get_shows_the_queue_and_the_admission_state(
    kueue_cluster: KubeHTTP, queues: Queues, corpus: Path, kli: Callable[..., Result]
) -> None:
    two_queued_jobs(kueue_cluster, queues, corpus)
    config = ("--kubeconfig", str(kueue_cluster.kubeconfig), "-n", queues.ns)

    table = kli("get", "pytorchjob", *config)
    assert table.code == 0, table.err
    header, *rows = table.out.splitlines()
    assert header.split() == ["NAME", "PHASE", "GPU", "COMPONENTS", "QUEUE", "AGE"]
    cells = {row.split()[0]: row.split() for row in rows}
    assert cells["first"][-2] == f"{queues.lq}:Admitted"
    assert cells["second"][-2] == f"{queues.lq}:Pending"
    assert "Kueue" not in table.err and "workloads.kueue" not in table.err  # read, no warning

    listed = json.loads(kli("get", "pytorchjob", *config, "-o", "json").out)
    by_name = {item["name"]: item["queue"] for item in listed["items"]}
    assert by_name["first"] == {
        "queue": queues.lq,
        "workload": "pytorchjob-first",
        "state": "Admitted",
        "clusterQueue": queues.cq,
        "reason": "",
        "message": "",
    }
    assert by_name["second"]["state"] == "Pending"
    assert "insufficient unused quota" in by_name["second"]["message"]

    watched = kli("get", "pytorchjob", *config, "-w", "--watch-timeout", "1")
    assert watched.code == 0, watched.err
    assert "QUEUE" not in watched.out
    assert "2 workloads carry a Kueue queue label: no QUEUE column with -w" in watched.err


def test_get_without_queue_labels_has_no_queue_column(
    kueue_cluster: KubeHTTP, queues: Queues, corpus: Path, kli: Callable[..., Result]
) -> None:
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    kueue_cluster.ensure_crd(crd)
    worker = {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "busybox"}]}}}
    plain = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "plain", "namespace": queues.ns},
        "spec": {"pytorchReplicaSpecs": {"Worker": worker}},
    }
    ok(kueue_cluster.post(f"/apis/kubeflow.org/v1/namespaces/{queues.ns}/pytorchjobs", plain))
    table = kli("get", "pytorchjob", "--kubeconfig", str(kueue_cluster.kubeconfig), "-n", queues.ns)
    assert table.code == 0, table.err
    assert table.out.splitlines()[0].split() == ["NAME", "PHASE", "GPU", "COMPONENTS", "AGE"]
