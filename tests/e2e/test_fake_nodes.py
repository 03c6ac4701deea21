"""``hack/fake_nodes.py``, the fake GPU Nodes of the tests and of the docs, against the real API
server: the script makes Ready Nodes with ``nvidia.com/gpu`` capacity through the status
subresource, updates them in place, deletes them and fails in one line; kube-scheduler binds a GPU
pod to such a Node and leaves one that asks for more GPUs than it has Pending."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import karta

from .conftest import REPO
from .kubehttp import KubeHTTP, ok
from .nodes import dedicated_node, pin

SCRIPT = REPO / "hack" / "fake_nodes.py"


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(karta.__file__).resolve().parents[1])}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _node(kube: KubeHTTP, name: str) -> dict[str, Any]:
    answer = kube.get(f"/api/v1/nodes/{name}")
    assert answer.status == 200, answer.body
    return answer.json()


def test_the_script_makes_ready_gpu_nodes_updates_and_deletes_them(cluster: KubeHTTP) -> None:
    prefix = f"fake-{uuid.uuid4().hex[:6]}"
    base = ["--prefix", prefix, "--kubeconfig", str(cluster.kubeconfig)]
    sizes = ["--gpus", "8", "--cpu", "32", "--memory", "256Gi"]
    made = _script("--count", "2", *sizes, "--label", "pool=a", "--taint", "pool=a:NoSchedule", *base)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines() == [
        f"node/{prefix}-{i} ready: 8 x nvidia.com/gpu, cpu 32, memory 256Gi" for i in (0, 1)
    ]
    for index in (0, 1):
        node = _node(cluster, f"{prefix}-{index}")
        assert node["metadata"]["labels"]["pool"] == "a"
        assert node["spec"]["taints"] == [{"key": "pool", "value": "a", "effect": "NoSchedule"}]
        expected = {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"}
        assert node["status"]["capacity"] == node["status"]["allocatable"] == expected
        (ready,) = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready["status"] == "True"

    again = _script("--count", "1", "--gpus", "4", "--label", "rack=r1", *base)
    assert again.returncode == 0, again.stderr
    node = _node(cluster, f"{prefix}-0")
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "4"
    labels = node["metadata"]["labels"]
    assert (labels["pool"], labels["rack"]) == ("a", "r1")  # merged, not replaced

    gone = _script("--count", "2", "--delete", *base)
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.splitlines() == [f"node/{prefix}-{i} deleted" for i in (0, 1)]
    assert all(cluster.get(f"/api/v1/nodes/{prefix}-{i}").status == 404 for i in (0, 1))


def test_the_script_fails_in_one_line(tmp_path: Path) -> None:
    missing = _script("--kubeconfig", str(tmp_path / "none"))
    assert missing.returncode == 1
    assert missing.stdout == ""
    assert len(missing.stderr.splitlines()) == 1 and missing.stderr.startswith("fake_nodes: ")
    bad = _script("--count", "0")
    assert bad.returncode == 2 and "--count and --pods must be at least 1" in bad.stderr
    taint = _script("--taint", "gpu=yes")
    assert taint.returncode == 2 and "--taint 'gpu=yes': expected KEY[=VALUE]:EFFECT" in taint.stderr


def _pod(name: str, gpus: int, selector: dict[str, str]) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": pin({"containers": [container]}, selector),
    }


def test_the_scheduler_places_gpu_pods_by_the_fake_capacity(controllers_cluster: KubeHTTP) -> None:
    kube = controllers_cluster
    tag = uuid.uuid4().hex[:8]
    selector, name, ns = {"karta-test": tag}, f"gpu-{tag}", f"fake-nodes-{tag}"
    dedicated_node(kube, name, selector=selector, gpus=2)
    ok(kube.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
    pods = f"/api/v1/namespaces/{ns}/pods"
    try:
        assert kube.post(pods, _pod("fits", 2, selector)).status == 201
        assert kube.post(pods, _pod("too-big", 3, selector)).status == 201
        deadline = time.monotonic() + 300  # an unschedulable pod may wait out a retry
        while True:  # a bounded wait for the scheduler, not a timing
            fits, too_big = kube.get(f"{pods}/fits").json(), kube.get(f"{pods}/too-big").json()
            placed = fits["spec"].get("nodeName")
            pending = too_big["status"].get("conditions") or []
            if placed and any(c.get("reason") == "Unschedulable" for c in pending):
                break
            on_node = kube.get("/api/v1/pods", params={"fieldSelector": f"spec.nodeName={name}"}).json()
            assert time.monotonic() < deadline, (fits, too_big, [p["metadata"] for p in on_node["items"]])
            time.sleep(0.2)
        assert placed == name
        (unschedulable,) = [c for c in pending if c["type"] == "PodScheduled"]
        assert "Insufficient nvidia.com/gpu" in unschedulable["message"]
        assert kube.get(f"{pods}/too-big").json()["spec"].get("nodeName") is None
    finally:
        kube.delete(f"/api/v1/namespaces/{ns}")
        kube.delete(f"/api/v1/nodes/{name}")
