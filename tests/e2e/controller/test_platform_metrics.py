"""The platform metrics, scraped by a real Prometheus (Debian's ``prometheus`` package) from the
controller's ``/metrics`` and read back through Prometheus's HTTP API (``/api/v1/query``).

``controllers_cluster`` (kube-controller-manager and kube-scheduler 1.37 with the Workload API's
gang scheduling, fake GPU Nodes, no kubelet) and ``karta-controller --backend workload-api
--enable-webhook`` in-process, its metrics on a free loopback port (plain HTTP, no auth: that is
what the controller serves), and in one namespace:

- Job ``fits``: 2 pods of 1 GPU on a Node with 2 GPUs: bound; the test marks them Running and
  Ready as a kubelet would, so the Job is ``Running`` with 2 GPUs running;
- Job ``too-big``: a gang of 4 pods of 1 GPU on a Node with 2: the scheduler holds all 4
  (Unschedulable), so the Job is ``Initializing`` with 4 GPUs pending and 4 gang-pending pods;
- Job ``held``: suspended, no pods: ``Suspended``, nothing requested;
- Deployment ``web`` (no gang instructions): 1 pod of 1 GPU no Node matches: Unschedulable too,
  but not in a gang: ``Initializing``, 1 GPU pending, 0 gang-pending pods (its pod is found through
  its ReplicaSet).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from karta.controller.main import Controller
from karta.kube import ConfigOverrides, KubeClient

from ..kubehttp import KubeHTTP, ok
from ..nodes import dedicated_node, pin
from .certs_support import free_port
from .pods_support import (
    batch_job,
    namespace,
    pods,
    registered_webhook,
    running_controller,
    wait,
    wait_webhook_active,
    webhook_url,
)

pytestmark = pytest.mark.slow

SCRAPE_S = 1


@dataclass
class Prometheus:
    url: str
    process: subprocess.Popen[bytes]

    def query(self, promql: str) -> list[dict[str, Any]]:
        """The instant vector of ``promql`` (``data.result``)."""
        q = urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{q}", timeout=10) as answer:
            body = json.load(answer)
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def values(self, promql: str, *, by: tuple[str, ...]) -> dict[tuple[str, ...], float]:
        return {tuple(r["metric"].get(k, "") for k in by): float(r["value"][1]) for r in self.query(promql)}


@contextmanager
def prometheus(workdir: Path, *, target: str) -> Iterator[Prometheus]:
    """``prometheus`` on a free loopback port scraping ``target`` every second, with its data in
    ``workdir``; stopped (SIGTERM, then SIGKILL after 10 s) and its data removed afterwards."""
    binary = shutil.which("prometheus")
    assert binary is not None, "prometheus is not installed: apt-get install -y prometheus (see .ci/run)"
    data = workdir / "prometheus-data"
    config = workdir / "prometheus.yml"
    config.write_text(
        json.dumps(  # JSON is YAML
            {
                "global": {"scrape_interval": f"{SCRAPE_S}s", "evaluation_interval": f"{SCRAPE_S}s"},
                "scrape_configs": [
                    {
                        "job_name": "karta-controller",
                        "scheme": "http",
                        "metrics_path": "/metrics",
                        "static_configs": [{"targets": [target]}],
                    }
                ],
            }
        )
    )
    port = free_port()
    log = (workdir / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--storage.tsdb.retention.time=1h",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    server = Prometheus(f"http://127.0.0.1:{port}", process)
    try:

        def ready() -> bool:
            assert process.poll() is None, (workdir / "prometheus.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as answer:
                    return bool(answer.status == 200)
            except OSError:
                return False

        wait("prometheus ready", ready, timeout=60, interval=0.5)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()
        shutil.rmtree(data, ignore_errors=True)


@dataclass
class Env:
    kube: KubeHTTP
    client: KubeClient
    controller: Controller
    prometheus: Prometheus
    ns: str
    labels: dict[str, dict[str, str]]


def _gpu_job(name: str, node_labels: dict[str, str], *, parallelism: int, **spec: Any) -> dict[str, Any]:
    job = batch_job(name, node_labels, parallelism=parallelism, backoffLimit=0, **spec)
    job["spec"]["template"]["spec"] = pin(job["spec"]["template"]["spec"], node_labels)
    resources = job["spec"]["template"]["spec"]["containers"][0]["resources"]
    resources["requests"]["nvidia.com/gpu"] = 1
    resources["limits"] = {"nvidia.com/gpu": 1}
    return job


def _deployment(name: str, node_labels: dict[str, str]) -> dict[str, Any]:
    template = _gpu_job(name, node_labels, parallelism=1)["spec"]["template"]
    template["metadata"]["labels"] = {"app": name}
    template["spec"]["restartPolicy"] = "Always"
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}}, "template": template},
    }


@pytest.fixture(scope="module")
def env(controllers_cluster: KubeHTTP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    kube = controllers_cluster
    ns = namespace(kube, "platform")
    run = uuid.uuid4().hex[:6]
    labels = {role: {"karta-e2e-platform": f"{role}-{run}"} for role in ("fits", "big", "none")}
    nodes = [f"platform-{role}-{run}" for role in ("fits", "big")]
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(kube.kubeconfig)))
    for node, role in zip(nodes, ("fits", "big"), strict=True):
        dedicated_node(kube, node, selector=labels[role], gpus=2, cpu="8", memory="16Gi")
    workdir = tmp_path_factory.mktemp("platform-metrics")
    try:
        with running_controller(
            kube, workdir, backend="workload-api", namespaces=(ns,), metrics_bind_address="127.0.0.1:0"
        ) as (controller, ca):
            target = f"127.0.0.1:{controller.manager.bound_port('metrics')}"
            with (
                registered_webhook(
                    kube, url=webhook_url(controller), ca=ca, namespaces=(ns,), failure_policy="Fail"
                ),
                prometheus(workdir, target=target) as server,
            ):
                wait_webhook_active(kube, controller, ns)
                yield Env(kube, client, controller, server, ns, labels)
    finally:
        for node in nodes:
            kube.delete(f"/api/v1/nodes/{node}")
        kube.delete(f"/api/v1/namespaces/{ns}")
        client.close()


def _mark_running(client: KubeClient, ns: str, items: list[dict[str, Any]]) -> None:
    """What a kubelet would report for a started pod: phase Running, Ready."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for pod in items:
        conditions = [
            {"type": t, "status": "True", "lastTransitionTime": now}
            for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
        ]
        status = {"phase": "Running", "conditions": conditions, "startTime": now}
        client.patch("pods", pod["metadata"]["name"], {"status": status}, namespace=ns, subresource="status")


def _unschedulable(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable"
        for c in (pod.get("status") or {}).get("conditions") or ()
    )


def _state(kube: KubeHTTP, ns: str) -> str:
    """What a failed wait should show: the pods (node, gates, group, conditions), the Nodes' GPUs
    and the namespace's Events."""
    shown = [
        (
            p["metadata"]["name"],
            p["spec"].get("nodeName"),
            p["spec"].get("schedulingGates"),
            p["spec"].get("schedulingGroup"),
            (p.get("status") or {}).get("conditions"),
        )
        for p in pods(kube, ns)
    ]
    nodes = [
        (
            n["metadata"]["name"],
            n["metadata"].get("labels"),
            n["spec"].get("taints"),
            n["status"].get("allocatable"),
        )
        for n in kube.get("/api/v1/nodes").json()["items"]
    ]
    events = [
        (e.get("reason"), (e.get("involvedObject") or {}).get("name"), e.get("message"))
        for e in kube.get(f"/api/v1/namespaces/{ns}/events").json()["items"]
    ]
    return f"pods: {shown}; nodes: {nodes}; events: {events}"


def test_prometheus_reads_the_platform_series(env: Env) -> None:
    kube, ns = env.kube, env.ns
    jobs = f"/apis/batch/v1/namespaces/{ns}/jobs"
    ok(kube.post(jobs, _gpu_job("fits", env.labels["fits"], parallelism=2)))
    ok(kube.post(jobs, _gpu_job("too-big", env.labels["big"], parallelism=4)))
    ok(kube.post(jobs, _gpu_job("held", env.labels["fits"], parallelism=8, suspend=True)))
    ok(kube.post(f"/apis/apps/v1/namespaces/{ns}/deployments", _deployment("web", env.labels["none"])))

    fits = "batch.kubernetes.io/job-name=fits"
    try:
        bound = wait(
            "the 2 pods of fits bound",
            lambda: (
                lambda got: got if len(got) == 2 and all(p["spec"].get("nodeName") for p in got) else None
            )(pods(kube, ns, fits)),
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}; {_state(kube, ns)}") from None
    _mark_running(env.client, ns, bound)
    big = "batch.kubernetes.io/job-name=too-big"
    seen: list[Any] = []

    def gang_held() -> list[dict[str, Any]] | None:
        got = pods(kube, ns, big)
        seen[:] = [(p["spec"].get("nodeName"), (p.get("status") or {}).get("conditions")) for p in got]
        return got if len(got) == 4 and all(map(_unschedulable, got)) else None

    try:
        held = wait("the gang of too-big held, Unschedulable", gang_held)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; its pods (node, conditions): {seen}") from None
    assert all(p["spec"]["schedulingGroup"]["podGroupName"] == "too-big-job" for p in held)
    wait(
        "the pod of web Unschedulable",
        lambda: (lambda got: len(got) == 1 and _unschedulable(got[0]))(pods(kube, ns, "app=web")),
    )

    where = f'namespace="{ns}"'
    expected_workloads = {
        ("batch", "Job", "Running"): 1.0,
        ("batch", "Job", "Initializing"): 1.0,
        ("batch", "Job", "Suspended"): 1.0,
        ("apps", "Deployment", "Initializing"): 1.0,  # no pod available yet
    }
    expected_gpus = {
        ("batch", "Job", "running"): 2.0,
        ("batch", "Job", "pending"): 4.0,
        ("apps", "Deployment", "running"): 0.0,
        ("apps", "Deployment", "pending"): 1.0,
    }
    expected_gang = {("batch", "Job"): 4.0, ("apps", "Deployment"): 0.0}
    p = env.prometheus
    last: dict[str, Any] = {}

    def scraped() -> bool:
        last["workloads"] = p.values(f"karta_workloads{{{where}}}", by=("group", "kind", "status"))
        last["gpus"] = p.values(f"karta_workload_gpus_requested{{{where}}}", by=("group", "kind", "phase"))
        last["gang"] = p.values(f"karta_gang_pods_pending{{{where}}}", by=("group", "kind"))
        got = (last["workloads"], last["gpus"], last["gang"])
        return got == (expected_workloads, expected_gpus, expected_gang)

    try:
        wait("Prometheus to scrape the expected platform series", scraped, timeout=120, interval=1.0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last read through /api/v1/query: {last}") from None
    # The scrape itself, as Prometheus saw it, and an aggregation a platform dashboard runs (the
    # GPUs asked for but not held, per namespace). Polled too: one scrape slower than the 1 s
    # interval marks the target down and its series stale until the next.
    wait(
        "Prometheus to report the scrape up",
        lambda: p.values('up{job="karta-controller"}', by=("job",)) == {("karta-controller",): 1.0},
        timeout=30,
        interval=1.0,
    )
    promql = f'sum by (namespace) (karta_workload_gpus_requested{{{where},phase="pending"}})'
    wait(
        "the pending GPUs per namespace",
        lambda: p.values(promql, by=("namespace",)) == {(ns,): 5.0},
        timeout=30,
        interval=1.0,
    )

    # A change reaches Prometheus: delete the gang that cannot fit; its series go down.
    kube.delete(f"{jobs}/too-big", params={"propagationPolicy": "Background"})
    expected_workloads.pop(("batch", "Job", "Initializing"))
    expected_gpus[("batch", "Job", "pending")] = 0.0
    expected_gang[("batch", "Job")] = 0.0
    try:
        wait("Prometheus to see the gang gone", scraped, timeout=120, interval=1.0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last read through /api/v1/query: {last}") from None
