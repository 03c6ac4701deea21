"""``kli top nodes`` and ``kli top gpus`` against the real API server: two fake GPU Nodes
(hack/fake_nodes.py) and pods written as their controllers and kubelets would, bound with
``spec.nodeName`` (no scheduler) or left pending, owned by a Job, by a ReplicaSet of a Deployment,
or by nothing; a Succeeded pod holds nothing. Then users who may list only pods, or nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from karta.kube import ConfigOverrides, KubeClient

from ..conftest import hack_module
from ..kubehttp import REVIEWS, KubeHTTP, access_review, wait_allowed
from .conftest import RUNNING, SUCCEEDED, UNSCHEDULABLE, Result, make_pod


@dataclass
class Scene:
    kubeconfig: str
    namespace: str
    nodes: tuple[str, str]
    label: str  # the selector of the two Nodes


def _template(gpus: int) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": "500m", "memory": "1Gi"}}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": gpus}  # an extended resource's request is its limit
    return {"spec": {"containers": [{"name": "main", "image": "busybox", "resources": resources}]}}


@pytest.fixture(scope="module")
def scene(cluster: KubeHTTP) -> Iterator[Scene]:
    tag = uuid.uuid4().hex[:6]
    namespace, label = f"top-{tag}", f"karta-top={tag}"
    nodes = (f"top-{tag}-a", f"top-{tag}-b")
    fake = hack_module("fake_nodes.py")
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig)))
    for name, gpus in zip(nodes, (8, 4), strict=True):
        fake.ensure_fake_node(client, name, gpus=gpus, labels={"karta-top": tag})
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    job = client.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train", "namespace": namespace},
            "spec": {
                "suspend": True,
                "template": {**_template(2), "spec": {**_template(2)["spec"], "restartPolicy": "Never"}},
            },
        }
    )
    labels = {"app": "serve"}
    pod_template = {"metadata": {"labels": labels}, **_template(1)}
    deployment = client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "serve", "namespace": namespace},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": pod_template},
        }
    )
    owner = {k: deployment[k] for k in ("apiVersion", "kind")}
    replicaset = client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "serve-7f9c",
                "namespace": namespace,
                "ownerReferences": [
                    {
                        **owner,
                        "name": "serve",
                        "uid": deployment["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": pod_template},
        }
    )
    a, b = nodes
    pods: list[tuple[str, dict[str, Any] | None, int, str | None, dict[str, Any]]] = [
        ("train-0", job, 2, a, RUNNING),
        ("train-1", job, 2, b, RUNNING),
        ("train-2", job, 2, None, UNSCHEDULABLE),
        ("train-3", job, 2, a, SUCCEEDED),  # done: holds nothing
        ("serve-7f9c-0", replicaset, 1, b, RUNNING),
        ("serve-7f9c-1", replicaset, 1, None, UNSCHEDULABLE),
        ("debug", None, 1, a, RUNNING),
        ("cpu-only", None, 0, a, RUNNING),
    ]
    for name, pod_owner, gpus, node, status in pods:
        make_pod(
            cluster,
            namespace,
            name=name,
            owner=pod_owner,
            labels={},
            template=_template(gpus),
            node=node,
            status=status,
        )
    yield Scene(str(cluster.kubeconfig), namespace, nodes, label)
    for name in nodes:
        client.delete("nodes", name)
    client.close()
    cluster.delete(f"/api/v1/namespaces/{namespace}")


def test_top_nodes_sums_the_bound_active_pods(kli: Callable[..., Result], scene: Scene) -> None:
    a, b = scene.nodes
    table = kli("top", "nodes", "-l", scene.label, "--kubeconfig", scene.kubeconfig)
    assert table.code == 0, table.err
    assert table.err == ""
    header, row_a, row_b = (line.split() for line in table.out.splitlines())
    assert " ".join(header) == "NAME GPU GPU REQUESTED GPU FREE PODS CPU REQUESTED MEMORY REQUESTED"
    # a: train-0 (2), debug (1), cpu-only; train-3 Succeeded is not counted
    assert row_a == [a, "8", "3", "(37%)", "5", "3/110", "1500m/64000m", "3072Mi/524288Mi"]
    assert row_b == [b, "4", "3", "(75%)", "1", "2/110", "1000m/64000m", "2048Mi/524288Mi"]
    bare = kli("top", "node", "-l", scene.label, "--no-headers", "--kubeconfig", scene.kubeconfig)
    assert bare.out.splitlines()[0].split()[0] == a and len(bare.out.splitlines()) == 2
    data = json.loads(
        kli("top", "nodes", "-l", scene.label, "-o", "json", "--kubeconfig", scene.kubeconfig).out
    )
    assert data["count"] == 2
    assert data["items"][0]["gpus"] == {"allocatable": 8, "requested": 3, "free": 5}
    assert data["items"][1]["pods"] == {"allocatable": 110, "count": 2}
    assert data["items"][1]["cpuMillis"] == {"allocatable": 64000, "requested": 1000}


def test_top_gpus_groups_by_namespace_and_top_owner(kli: Callable[..., Result], scene: Scene) -> None:
    ns = scene.namespace
    result = kli("top", "gpus", "-n", ns, "--kubeconfig", scene.kubeconfig)
    assert result.code == 0, result.err
    assert result.err == ""
    lines = [line.split() for line in result.out.splitlines()]
    assert lines[0] == ["NAMESPACE", "TYPE", "WORKLOADS", "PODS", "GPU", "REQUESTED", "GPU", "PENDING"]
    assert lines[1:4] == [
        [ns, "Deployment.apps", "1", "2", "1", "1"],  # through its ReplicaSet
        [ns, "Job.batch", "1", "3", "4", "2"],
        [ns, "Pod", "1", "1", "1", "0"],
    ]
    total = result.out.splitlines()[-1]
    assert total.startswith("Cluster: ") and total.endswith(f"namespace {ns}: requested 6, pending 3")
    data = json.loads(kli("top", "gpus", "-o", "json", "--kubeconfig", scene.kubeconfig).out)
    mine = [item for item in data["items"] if item["namespace"] == ns]
    assert [(i["type"], i["workloads"], i["pods"], i["gpusRequested"], i["gpusPending"]) for i in mine] == [
        ("Deployment.apps", 1, 2, 1, 1),
        ("Job.batch", 1, 3, 4, 2),
        ("Pod", 1, 1, 1, 0),
    ]
    total_all = data["total"]
    assert total_all["gpusAllocatable"] >= 12 and total_all["gpusRequested"] >= 6
    assert total_all["gpusRequested"] == sum(i["gpusRequested"] for i in data["items"])
    assert total_all["gpusFree"] == total_all["gpusAllocatable"] - total_all["gpusRequested"]
    both = kli("top", "gpus", "-A", "-n", ns, "--kubeconfig", scene.kubeconfig)
    assert both.code == 2 and "cannot be combined with -n" in both.err


@pytest.fixture(scope="module")
def pod_reader(scene: Scene) -> str:
    """User top-pods may list pods (and nothing else, owners included) in every namespace."""
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=scene.kubeconfig))
    name = f"top-pods-{scene.namespace}"
    client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}],
        }
    )
    client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}],
        }
    )
    review = access_review(name, verb="list", resource="pods")
    wait_allowed(lambda body: client.request_json("POST", REVIEWS, body=body), review)
    client.close()
    return name


def test_what_cannot_be_listed_is_said_and_unknown(
    kli: Callable[..., Result], scene: Scene, pod_reader: str
) -> None:
    a, _ = scene.nodes
    nodes = kli("top", "nodes", "--as", pod_reader, "--kubeconfig", scene.kubeconfig)
    assert nodes.code == 0, nodes.err
    assert nodes.err.splitlines() == [
        "warning: cannot list nodes (forbidden): the allocatable columns are <unknown>"
    ]
    (row_a,) = [line.split() for line in nodes.out.splitlines() if line.startswith(a)]
    assert row_a == [a, "<unknown>", "3", "<unknown>", "3", "1500m", "3072Mi"]

    gpus = kli("top", "gpus", "-n", scene.namespace, "--as", pod_reader, "--kubeconfig", scene.kubeconfig)
    assert gpus.code == 0, gpus.err
    err = gpus.err.splitlines()
    assert err[0] == "warning: cannot list nodes (forbidden): the allocatable columns are <unknown>"
    assert sorted(err[1:]) == [
        f"warning: cannot get jobs.batch in namespace {scene.namespace} (forbidden): 3 pods grouped "
        "under the nearest owner reference, not the top one",
        f"warning: cannot get replicasets.apps in namespace {scene.namespace} (forbidden): 2 pods "
        "grouped under the nearest owner reference, not the top one",
    ]
    types = [line.split()[1] for line in gpus.out.splitlines()[1:-1]]
    assert types == ["Job.batch", "Pod", "ReplicaSet.apps"]
    assert "GPUs allocatable <unknown> (nodes not readable)" in gpus.out.splitlines()[-1]

    nobody = kli("top", "nodes", "--as", "top-nobody", "--kubeconfig", scene.kubeconfig)
    assert nobody.code == 1 and nobody.out == ""
    assert "error: not allowed to list nodes or list pods: nothing to show" in nobody.err
    assert nobody.err.count("warning: ") == 2
