"""kwok's pod lifecycle of the test cluster (hack/kwok/stages.yaml) on the ``ecosystem_cluster``:
a pod kube-scheduler binds to a kwok GPU Node (``hack/fake_nodes.py --kwok``) runs, Ready; the
``karta.dev/kwok-exit`` annotation ends it Succeeded, or Failed with the given exit code, or (with a
restarting policy) restarts its containers once; a deleted pod is removed; a pod on a Node without
the annotation stays Pending (kwok leaves it alone)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from karta.kube import ConfigOverrides, KubeClient

from .kubehttp import KubeHTTP
from .nodes import dedicated_node, pin

EXIT = "karta.dev/kwok-exit"


@pytest.fixture
def pool(ecosystem_cluster: KubeHTTP) -> Iterator[tuple[KubeClient, str, dict[str, str]]]:
    """(client, namespace, selector): a namespace, a kwok GPU Node and a plain one for this test."""
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(ecosystem_cluster.kubeconfig)))
    ns = f"kwok-{uuid.uuid4().hex[:6]}"
    selector = {"karta.test/pool": ns}
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    dedicated_node(ecosystem_cluster, f"{ns}-kwok", selector=selector, gpus=8, kwok=True)
    dedicated_node(ecosystem_cluster, f"{ns}-plain", selector={"karta.test/pool": f"{ns}-plain"}, gpus=8)
    yield client, ns, selector
    for name in (f"{ns}-kwok", f"{ns}-plain"):
        client.delete("nodes", name)
    client.delete("namespaces", ns)
    client.close()


def _pod(name: str, ns: str, selector: dict[str, str], policy: str, **annotations: str) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": 1}}}
    spec = pin({"restartPolicy": policy, "containers": [container]}, selector)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "spec": spec,
    }


def _until(
    client: KubeClient, ns: str, name: str, ok: Callable[[dict[str, Any]], bool], timeout: float = 60.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    pod: dict[str, Any] = {}
    while time.monotonic() < deadline:
        pod = client.get("pods", name, namespace=ns)
        if ok(pod):
            return pod
        time.sleep(0.3)
    raise AssertionError(f"pod {name} never got there: {pod.get('status')}")


def _ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or []
    )


def _phase(phase: str) -> Callable[[dict[str, Any]], bool]:
    return lambda pod: (pod.get("status") or {}).get("phase") == phase


def test_pods_on_kwok_nodes_run_and_exit_on_demand(pool: tuple[KubeClient, str, dict[str, str]]) -> None:
    client, ns, selector = pool
    client.create(_pod("runs", ns, selector, "Always"))
    client.create(_pod("ok", ns, selector, "Never", **{EXIT: "succeeded", f"{EXIT}-delay": "1s"}))
    client.create(_pod("bad", ns, selector, "Never", **{EXIT: "failed", f"{EXIT}-code": "3"}))
    client.create(_pod("restarts", ns, selector, "OnFailure", **{EXIT: "failed", f"{EXIT}-code": "137"}))

    running = _until(client, ns, "runs", _ready)
    assert running["spec"]["nodeName"] == f"{ns}-kwok"
    (container,) = running["status"]["containerStatuses"]
    assert container["ready"] is True and "running" in container["state"]
    assert running["status"]["podIP"].startswith("10.244.")

    done = _until(client, ns, "ok", _phase("Succeeded"))
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0

    failed = _until(client, ns, "bad", _phase("Failed"))
    terminated = failed["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")

    restarted = _until(
        client, ns, "restarts", lambda p: p["status"]["containerStatuses"][0]["restartCount"] == 1
    )
    (container,) = restarted["status"]["containerStatuses"]
    assert container["lastState"]["terminated"]["exitCode"] == 137 and "running" in container["state"]
    time.sleep(2)  # once only: the restart does not repeat
    again = client.get("pods", "restarts", namespace=ns)
    assert _ready(again) and again["status"]["containerStatuses"][0]["restartCount"] == 1

    client.delete("pods", "runs", namespace=ns)
    deadline = time.monotonic() + 30
    while any(p["metadata"]["name"] == "runs" for p in client.list("pods", namespace=ns).items):
        assert time.monotonic() < deadline, "kwok did not remove the deleted pod"
        time.sleep(0.3)


def test_pods_on_a_node_without_kwok_stay_pending(pool: tuple[KubeClient, str, dict[str, str]]) -> None:
    client, ns, _ = pool
    client.create(_pod("idle", ns, {"karta.test/pool": f"{ns}-plain"}, "Always"))
    bound = _until(client, ns, "idle", lambda p: bool(p["spec"].get("nodeName")))
    assert bound["spec"]["nodeName"] == f"{ns}-plain"
    time.sleep(2)
    assert client.get("pods", "idle", namespace=ns)["status"]["phase"] == "Pending"
