"""The real operators on kwok GPU Nodes: a PyTorchJob through the Kubeflow training operator and a
RayCluster through KubeRay, both built from their Go modules (``ecosystem_cluster``). kube-scheduler
binds their pods to kwok Nodes (``nvidia.com/gpu`` capacity), kwok runs them (Running and Ready),
the operator writes its own status (PyTorchJob ``Running`` condition, RayCluster ``state: ready``),
and ``kli get`` reads it. Then a PyTorchJob whose pods exit (the kwok-exit annotation) is
Succeeded by the operator's own account, and karta reads that too; and a RayCluster created
suspended reads Suspended before and after KubeRay confirms it, Running once resumed.

Each test has its own namespace and its own Nodes (tainted for its pods only: tests/e2e/nodes.py).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.kube import ConfigOverrides, KubeClient

from ..kubehttp import KubeHTTP
from ..nodes import dedicated_node, pin
from .conftest import Result

GPU = "nvidia.com/gpu"
EXIT = "karta.dev/kwok-exit"  # hack/kwok/stages.yaml


@pytest.fixture
def place(ecosystem_cluster: KubeHTTP) -> Iterator[tuple[KubeClient, str, dict[str, str]]]:
    """(client, namespace, node selector): a namespace and two kwok Nodes of 8 GPUs for this test."""
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(ecosystem_cluster.kubeconfig)))
    ns = f"real-op-{uuid.uuid4().hex[:6]}"
    selector = {"karta.test/pool": ns}
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for index in range(2):
        dedicated_node(ecosystem_cluster, f"{ns}-gpu-{index}", selector=selector, gpus=8, kwok=True)
    yield client, ns, selector
    for index in range(2):
        client.delete("nodes", f"{ns}-gpu-{index}")
    client.delete("namespaces", ns)
    client.close()


def _wait(what: str, probe: Callable[[], Any], timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}; last seen: {last!r}")


def _wait_for(
    what: str, client: KubeClient, resource: str, name: str, ns: str, ok: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The object once ``ok`` holds for it."""
    found: dict[str, Any] = _wait(
        what, lambda: obj if ok(obj := client.get(resource, name, namespace=ns)) else None
    )
    return found


def _pods_running(client: KubeClient, ns: str, count: int) -> list[dict[str, Any]] | None:
    pods = client.list("pods", namespace=ns).items
    running = [
        p
        for p in pods
        if (p.get("spec") or {}).get("nodeName")
        and (p.get("status") or {}).get("phase") == "Running"
        and any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (p.get("status") or {}).get("conditions") or []
        )
    ]
    return running if len(running) == count else None


def _karta(kli: Callable[..., Result], kubeconfig: str, resource: str, ns: str, name: str) -> dict[str, Any]:
    result = kli("get", resource, name, "-n", ns, "--kubeconfig", kubeconfig, "-o", "json")
    assert result.code == 0, result.err
    answer: dict[str, Any] = json.loads(result.out)
    items = answer.get("items", [answer])
    (item,) = [i for i in items if i.get("name") == name]
    return item


def _conditions(obj: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or []}


def _replica(image: str, gpus: int, selector: dict[str, str], exit_as: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"annotations": {EXIT: exit_as, f"{EXIT}-delay": "3s"}} if exit_as else {}
    container = {"name": "pytorch", "image": image, "resources": {"limits": {GPU: gpus}}}
    return {
        "replicas": 1,
        "restartPolicy": "OnFailure",
        "template": {"metadata": metadata, "spec": pin({"containers": [container]}, selector)},
    }


def _pytorchjob(name: str, ns: str, selector: dict[str, str], exit_as: str | None = None) -> dict[str, Any]:
    image = "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": _replica(image, 4, selector, exit_as),
                "Worker": _replica(image, 4, selector, exit_as),
            }
        },
    }


def test_pytorchjob_runs_through_the_training_operator(
    kli: Callable[..., Result], ecosystem_cluster: KubeHTTP, place: tuple[KubeClient, str, dict[str, str]]
) -> None:
    client, ns, selector = place
    kubeconfig = str(ecosystem_cluster.kubeconfig)
    client.create(_pytorchjob("train", ns, selector))
    pods = _wait("2 PyTorchJob pods Running and Ready on kwok Nodes", lambda: _pods_running(client, ns, 2))
    assert {p["spec"]["nodeName"] for p in pods} <= {f"{ns}-gpu-0", f"{ns}-gpu-1"}
    job = _wait_for(
        "the training operator's Running condition", client, "pytorchjobs.kubeflow.org", "train", ns,
        lambda j: _conditions(j).get("Running") == "True",
    )  # fmt: skip
    replicas = job["status"]["replicaStatuses"]
    assert replicas["Master"].get("active") == 1 and replicas["Worker"].get("active") == 1, replicas
    karta = _karta(kli, kubeconfig, "pytorchjobs", ns, "train")
    assert karta["phases"] == ["Running"], (karta, job["status"])
    assert karta["gpus"] == 8, karta


def test_pytorchjob_succeeds_when_its_pods_exit(
    kli: Callable[..., Result], ecosystem_cluster: KubeHTTP, place: tuple[KubeClient, str, dict[str, str]]
) -> None:
    client, ns, selector = place
    kubeconfig = str(ecosystem_cluster.kubeconfig)
    client.create(_pytorchjob("done", ns, selector, exit_as="succeeded"))
    job = _wait_for(
        "the training operator's Succeeded condition", client, "pytorchjobs.kubeflow.org", "done", ns,
        lambda j: _conditions(j).get("Succeeded") == "True",
    )  # fmt: skip
    karta = _karta(kli, kubeconfig, "pytorchjobs", ns, "done")
    assert karta["phases"] == ["Completed"], (karta, job["status"])


def _raycluster(name: str, ns: str, selector: dict[str, str], suspend: bool = False) -> dict[str, Any]:
    image = "rayproject/ray:2.46.0"

    def group_spec(container_name: str, gpus: int) -> dict[str, Any]:
        container = {"name": container_name, "image": image, "resources": {"limits": {GPU: gpus}}}
        return {"spec": pin({"containers": [container]}, selector)}

    spec: dict[str, Any] = {"suspend": True} if suspend else {}
    spec["headGroupSpec"] = {"rayStartParams": {}, "template": group_spec("ray-head", 0)}
    spec["workerGroupSpecs"] = [
        {
            "groupName": "gpu",
            "replicas": 2,
            "minReplicas": 2,
            "maxReplicas": 2,
            "rayStartParams": {},
            "template": group_spec("ray-worker", 4),
        }
    ]
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def _raycluster_ready(client: KubeClient, ns: str, name: str) -> dict[str, Any]:
    """The RayCluster once its head and 2 workers run Ready on kwok Nodes and KubeRay says ready."""
    _wait("the head and 2 worker pods Running and Ready on kwok Nodes", lambda: _pods_running(client, ns, 3))
    return _wait_for(
        "KubeRay's state ready", client, "rayclusters.ray.io", name, ns,
        lambda c: (c.get("status") or {}).get("state") == "ready",
    )  # fmt: skip


def test_raycluster_runs_through_kuberay(
    kli: Callable[..., Result], ecosystem_cluster: KubeHTTP, place: tuple[KubeClient, str, dict[str, str]]
) -> None:
    client, ns, selector = place
    kubeconfig = str(ecosystem_cluster.kubeconfig)
    client.create(_raycluster("ray", ns, selector))
    cluster = _raycluster_ready(client, ns, "ray")
    karta = _karta(kli, kubeconfig, "rayclusters", ns, "ray")
    assert karta["phases"] == ["Running"], (karta, cluster["status"])
    assert karta["gpus"] == 8, karta


def test_raycluster_created_suspended_reads_suspended_throughout(
    kli: Callable[..., Result],
    ecosystem_cluster: KubeHTTP,
    place: tuple[KubeClient, str, dict[str, str]],
    tmp_path: Path,
) -> None:
    """A RayCluster created with ``suspend: true`` reads Suspended as created (no status yet) and as
    KubeRay confirms it (state suspended, RayClusterSuspended True, no pod), then Running once
    resumed: the flow "created suspended" of tests/catalog/lifecycle/ray-io-raycluster-v1.yaml."""
    client, ns, selector = place
    kubeconfig = str(ecosystem_cluster.kubeconfig)
    created = client.create(_raycluster("held", ns, selector, suspend=True))
    as_created = tmp_path / "as-created.json"
    as_created.write_text(json.dumps({k: v for k, v in created.items() if k != "status"}))
    offline = kli("inspect", "-f", str(as_created), "-o", "json")
    assert offline.code == 0, offline.err
    status = json.loads(offline.out)["status"]
    assert (status["primary"], status["matched"]) == ("Suspended", ["Suspended"]), status
    cluster = _wait_for(
        "KubeRay's RayClusterSuspended condition", client, "rayclusters.ray.io", "held", ns,
        lambda c: _conditions(c).get("RayClusterSuspended") == "True",
    )  # fmt: skip
    assert cluster["status"].get("state") == "suspended", cluster["status"]
    assert client.list("pods", namespace=ns).items == []
    karta = _karta(kli, kubeconfig, "rayclusters", ns, "held")
    assert karta["phases"] == ["Suspended"], (karta, cluster["status"])
    client.patch("rayclusters.ray.io", "held", {"spec": {"suspend": False}}, namespace=ns)
    cluster = _raycluster_ready(client, ns, "held")
    karta = _karta(kli, kubeconfig, "rayclusters", ns, "held")
    assert karta["phases"] == ["Running"], (karta, cluster["status"])
