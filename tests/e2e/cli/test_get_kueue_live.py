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
from .test_describe_access import RBAC, _account, _bind, _wait_allowed


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


def test_get_says_unknown_when_the_workloads_are_refused_and_reads_them_with_kli_rbacs_role(
    kueue_cluster: KubeHTTP, queues: Queues, corpus: Path, kli: Callable[..., Result], tmp_path: Path
) -> None:
    """An account that may list PyTorchJobs but not Kueue's Workloads: QUEUE says ``team:?`` (never
    a state) and a warning says why; bound to the role ``kli rbac`` prints, it reads the states."""
    two_queued_jobs(kueue_cluster, queues, corpus)
    suffix = queues.ns.rpartition("-")[2]
    narrow, full = f"karta-no-kueue-{suffix}", f"karta-kli-rbac-{suffix}"
    jobs = {"apiGroups": ["kubeflow.org"], "resources": ["pytorchjobs"], "verbs": ["get", "list", "watch"]}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": narrow}}
    _bind(kueue_cluster, {**role, "rules": [jobs]}, namespace=queues.ns, account="narrow")
    printed = kli("rbac", "kubeflow-org-pytorchjob-v1", "--name", full, "-o", "json")
    assert printed.code == 0, printed.err
    (kli_role,) = json.loads(printed.out)["items"]
    _bind(kueue_cluster, kli_role, namespace=queues.ns, account="full")
    try:
        configs = {a: _account(kueue_cluster, queues.ns, a, tmp_path) for a in ("narrow", "full")}
        _wait_allowed(kueue_cluster, queues.ns, "narrow", "list", "kubeflow.org", "pytorchjobs")
        _wait_allowed(kueue_cluster, queues.ns, "full", "list", "kueue.x-k8s.io", "workloads")

        refused = kli("get", "pytorchjob", "--kubeconfig", str(configs["narrow"]))
        assert refused.code == 0, refused.err
        cells = {row.split()[0]: row.split()[-2] for row in refused.out.splitlines()[1:]}
        assert cells == {"first": f"{queues.lq}:?", "second": f"{queues.lq}:?"}
        assert (
            f"cannot list workloads.kueue.x-k8s.io in namespace {queues.ns} (forbidden): the Kueue queue "
            "state is not shown"
        ) in refused.err

        allowed = kli("get", "pytorchjob", "--kubeconfig", str(configs["full"]))
        assert allowed.code == 0, allowed.err
        cells = {row.split()[0]: row.split()[-2] for row in allowed.out.splitlines()[1:]}
        assert cells == {"first": f"{queues.lq}:Admitted", "second": f"{queues.lq}:Pending"}
        assert "workloads.kueue" not in allowed.err
    finally:
        for name in (narrow, full):
            kueue_cluster.delete(f"{RBAC}/clusterrolebindings/{name}")
            kueue_cluster.delete(f"{RBAC}/clusterroles/{name}")
