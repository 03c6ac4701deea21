"""The queue position on the real Kueue (``kueue_cluster``), read through Kueue's visibility API
behind the test API server's aggregation layer (hack/cluster/controlplane.py): one PyTorchJob of
8 GPUs admitted on a queue of 8, three more pending; ``kli describe`` shows the pending ones at
positions 1, 2 and 3 in order of creation (same priority: Kueue orders by creation time), the
admitted one without a position; ``kli get -o wide`` ends their QUEUE cells with it, the default
table does not; a user who may read the jobs and Workloads but not the visibility API gets the
state and a one-line reason instead of a position."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..kubehttp import KubeHTTP, ok, wait
from ..queued import two_queued_jobs
from ..test_kueue_live import KUEUE, Queues, _pytorchjob, _workload_for
from ..test_kueue_live import queues as queues  # the fixture
from .conftest import Result
from .test_describe_access import RBAC, _account, _wait_allowed

VISIBILITY = "/apis/visibility.kueue.x-k8s.io/v1beta2"


def three_pending(cluster: KubeHTTP, queues: Queues, corpus: Path) -> list[str]:
    """``first`` admitted, ``second`` to ``fourth`` pending, each created in a later second than
    the one before (creation timestamps have second precision: Kueue's order is then theirs)."""
    two_queued_jobs(cluster, queues, corpus)
    base = f"{KUEUE}/namespaces/{queues.ns}/workloads"
    for name in ("third", "fourth"):
        time.sleep(1.1)
        job = _pytorchjob(cluster, queues.ns, name, queues.lq)
        ok(cluster.post(base, _workload_for(job, queues.lq)))

    def listed() -> list[str] | None:
        got = ok(cluster.get(f"{VISIBILITY}/namespaces/{queues.ns}/localqueues/{queues.lq}/pendingworkloads"))
        names = [item["metadata"]["name"] for item in got["items"]]
        return names if len(names) == 3 else None

    return wait("three pending Workloads in Kueue's pending list", listed)


def test_describe_shows_kueues_position_of_each_pending_job(
    kueue_cluster: KubeHTTP, queues: Queues, corpus: Path, kli: Callable[..., Result]
) -> None:
    order = three_pending(kueue_cluster, queues, corpus)
    assert order == ["pytorchjob-second", "pytorchjob-third", "pytorchjob-fourth"]
    config = ("--kubeconfig", str(kueue_cluster.kubeconfig), "-n", queues.ns)

    for position, name in enumerate(("second", "third", "fourth"), start=1):
        out = kli("describe", "pytorchjob", name, *config)
        assert out.code == 0, out.err
        where = f"position {position} in ClusterQueue {queues.cq}, {position} in LocalQueue {queues.lq}"
        assert f"Queue: {queues.lq}: Pending, {where} (Pending: couldn't assign flavors" in out.out, out.out
        assert "position not shown" not in out.out
        report = json.loads(kli("describe", "pytorchjob", name, *config, "-o", "json").out)
        assert report["queue"]["position"] == {
            "clusterQueue": position,
            "localQueue": position,
            "clusterQueueName": queues.cq,
            "localQueueName": queues.lq,
            "text": where,
        }

    admitted = kli("describe", "pytorchjob", "first", *config)
    assert f"Queue: {queues.lq} (ClusterQueue {queues.cq}): Admitted   workload:" in admitted.out
    assert "position" not in admitted.out

    wide = kli("get", "pytorchjob", *config, "-o", "wide")
    assert wide.code == 0, wide.err
    cells = {line.split()[0]: line for line in wide.out.splitlines()[1:]}
    for position, name in enumerate(("second", "third", "fourth"), start=1):
        assert f"{queues.lq}:Pending#{position}" in cells[name], wide.out
    assert f"{queues.lq}:Admitted" in cells["first"]
    narrow = kli("get", "pytorchjob", *config)
    assert "#" not in narrow.out and f"{queues.lq}:Pending " in narrow.out, narrow.out


def test_a_user_refused_the_visibility_api_gets_a_reason_not_a_position(
    kueue_cluster: KubeHTTP, queues: Queues, corpus: Path, kli: Callable[..., Result], tmp_path: Path
) -> None:
    three_pending(kueue_cluster, queues, corpus)
    kubeconfig = _reader_without_visibility(kueue_cluster, queues.ns, tmp_path)
    out = kli("describe", "pytorchjob", "third", "--kubeconfig", str(kubeconfig), "-n", queues.ns)
    assert out.code == 0, out.err
    assert f"Queue: {queues.lq}: Pending (Pending: couldn't assign flavors" in out.out, out.out
    (note,) = [line for line in out.out.splitlines() if "position not shown" in line]
    assert note.strip().startswith(
        f"position not shown: cannot get localqueues/pendingworkloads.visibility.kueue.x-k8s.io in namespace "
        f"{queues.ns} (forbidden"
    ), note


def _reader_without_visibility(cluster: KubeHTTP, namespace: str, tmp_path: Path) -> Path:
    """A kubeconfig of a ServiceAccount that may read PyTorchJobs, pods, events and Kueue's
    Workloads and LocalQueues in ``namespace``, and nothing of the visibility API."""
    name = "reader"
    kubeconfig = _account(cluster, namespace, name, tmp_path)
    rules: list[dict[str, Any]] = [
        {"apiGroups": ["kubeflow.org"], "resources": ["pytorchjobs"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["pods", "events"], "verbs": ["get", "list"]},
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads", "localqueues"],
            "verbs": ["get", "list"],
        },
    ]
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": name},
        "rules": rules,
    }
    ok(cluster.post(f"{RBAC}/namespaces/{namespace}/roles", role))
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }
    ok(cluster.post(f"{RBAC}/namespaces/{namespace}/rolebindings", binding))
    _wait_allowed(cluster, namespace, name, "list", "kueue.x-k8s.io", "workloads")
    return kubeconfig
