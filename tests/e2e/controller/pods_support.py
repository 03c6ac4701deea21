"""Shared pieces of the pod-binding e2e tests: a serving certificate for 127.0.0.1 (made with
``cryptography``), the controller run in-process with its webhook on a free port, a
MutatingWebhookConfiguration pointing the API server at it, fake Nodes and bounded waits."""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from karta.controller.main import Controller, build
from karta.controller.options import Options
from karta.controller.parts.platform import PART as PLATFORM
from karta.controller.parts.platform import PlatformMetrics
from karta.controller.parts.pod_binding.admission import PATH, pod_webhook
from karta.gang.scope import namespace_selector
from karta.kube import ConfigOverrides, KubeClient

from ..kubehttp import KubeHTTP, ok, wait
from ..nodes import dedicated_node, pin
from .certs_support import write_test_certificates

WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
# How long a gang that does not fit is watched for a (wrong) partial binding. The scheduler tries a
# pod group within a second of its pods being queued; the wait covers several retries.
HOLD_S = 8.0


@contextmanager
def running_controller(
    kube: KubeHTTP,
    workdir: Path,
    *,
    backend: str,
    namespaces: tuple[str, ...] = (),
    metrics_bind_address: str = "0",
    gang_scope: str = "all",  # most of these tests predate the opt-in scope (issue 22): every namespace
    webhook_port: int = 0,
    ca: bytes | None = None,
    cluster_definitions: bool = False,
    as_user: str | None = None,
    **extra: Any,
) -> Iterator[tuple[Controller, bytes]]:
    """``karta-controller --backend BACKEND --enable-webhook`` in this process (webhook on
    ``webhook_port`` of 127.0.0.1, 0: a free one, no probe endpoint, metrics only at
    ``metrics_bind_address``; the platform metrics read the types every second); yields the
    controller and the caBundle. ``ca``: the caBundle of certificates already in ``workdir`` (a
    restarted controller serves the same ones), else new ones are written. ``as_user``: the
    controller impersonates that user (its RBAC is the test's)."""
    if ca is None:
        ca = write_test_certificates(workdir / "certs")
    (workdir / "definitions").mkdir(exist_ok=True)
    options = Options(
        backend=backend,
        gang_scope=gang_scope,
        enable_webhook=True,
        webhook_host="127.0.0.1",
        webhook_port=webhook_port,
        webhook_cert_mode="manual",
        webhook_cert_dir=workdir / "certs",
        metrics_bind_address=metrics_bind_address,
        health_probe_bind_address="0",
        cluster_definitions=cluster_definitions,
        definitions_dir=workdir / "definitions",
        namespaces=namespaces,
        shutdown_timeout=5.0,
        **extra,
    )
    # ``kubeconfig`` (in ``extra``): another identity than the cluster's admin
    client = KubeClient.from_config(
        ConfigOverrides(kubeconfig=str(options.kubeconfig or kube.kubeconfig), as_user=as_user)
    )
    controller = build(options, client)
    assert controller.webhooks is not None
    platform = controller.parts.get(PLATFORM)
    if isinstance(platform, PlatformMetrics):
        platform.types_interval = 1.0
    controller.manager.start()
    try:
        wait("the webhook server", controller.webhooks.serving.is_set, timeout=15)
        yield controller, ca
    finally:
        controller.manager.shutdown()
        admission = controller.parts.get("pod-admission")
        close = getattr(admission, "close", None)
        if close is not None:
            close()
        client.close()


def webhook_url(controller: Controller) -> str:
    assert controller.webhooks is not None
    return f"https://127.0.0.1:{controller.webhooks.bound_port}{PATH}"


@contextmanager
def registered_webhook(
    kube: KubeHTTP,
    *,
    url: str,
    ca: bytes,
    namespaces: tuple[str, ...],
    failure_policy: str = "Fail",
    scope: str | None = None,
) -> Iterator[str]:
    """A MutatingWebhookConfiguration calling ``url`` for the pods of ``namespaces`` only (and, with
    ``scope``, only those the ``--gang-scope`` namespaceSelector selects, as the controller registers
    it: :func:`karta.gang.scope.namespace_selector`)."""
    name = f"karta-e2e-pods-{uuid.uuid4().hex[:8]}"
    expressions = [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(namespaces)}]
    if scope is not None:
        expressions += namespace_selector(scope)["matchExpressions"]
    entry = pod_webhook(
        client_config={"url": url, "caBundle": base64.b64encode(ca).decode()},
        failure_policy=failure_policy,
        namespace_selector={"matchExpressions": expressions},
    )
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [entry],
    }
    ok(kube.post(WEBHOOKS, body))
    try:
        yield name
    finally:
        kube.delete(f"{WEBHOOKS}/{name}")


def webhook_requests(controller: Controller) -> float:
    total = 0.0
    for metric in controller.metrics.webhook_requests.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total") and sample.labels.get("webhook") == "pods":
                total += sample.value
    return total


def unbound(controller: Controller, reason: str) -> float:
    for metric in controller.metrics.unbound_pods.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total") and sample.labels.get("reason") == reason:
                return float(sample.value)
    return 0.0


def wait_webhook_active(kube: KubeHTTP, controller: Controller, namespace: str) -> None:
    """Until the API server calls the webhook (it picks configurations up asynchronously)."""
    wait_webhook_counted(kube, namespace, lambda: webhook_requests(controller))


def wait_webhook_counted(kube: KubeHTTP, namespace: str, requests: Callable[[], float]) -> None:
    """Dry-run pod creations in ``namespace`` until ``requests()`` (the pod webhook's request
    count, wherever it is read) grows: the API server calls the webhook."""
    before = requests()
    probe = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "webhook-probe-"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }

    def reached() -> bool:
        kube.post(f"/api/v1/namespaces/{namespace}/pods", probe, params={"dryRun": "All"})
        return requests() > before

    wait("the API server to call the webhook", reached, timeout=30, interval=0.5)


def namespace(kube: KubeHTTP, prefix: str, labels: dict[str, str] | None = None) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    metadata = {"name": name, **({"labels": labels} if labels else {})}
    ok(kube.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}))
    return name


def fake_node(kube: KubeHTTP, name: str, labels: dict[str, str], *, cpu: str) -> None:
    """A Node object without a kubelet: Ready, with ``cpu`` allocatable (the scheduler only binds);
    made by hack/fake_nodes.py, as the README shows, and kept for the pods of :func:`pod_template`
    with the same ``labels`` (tests/e2e/nodes.py)."""
    dedicated_node(kube, name, selector=labels, gpus=0, cpu=cpu, memory="16Gi")


def pod_template(
    node_labels: dict[str, str], *, cpu: str = "1", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels or {}},
        "spec": pin(
            {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 0,
                "containers": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                    }
                ],
            },
            node_labels,
        ),
    }


def batch_job(name: str, node_labels: dict[str, str], *, parallelism: int, **spec: Any) -> dict[str, Any]:
    """A batch/v1 Job of ``parallelism`` pods of :func:`pod_template` (``spec`` adds fields)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            **spec,
            "template": pod_template(node_labels),
        },
    }


def pods(kube: KubeHTTP, namespace: str, selector: str = "") -> list[dict[str, Any]]:
    params = {"labelSelector": selector} if selector else None
    items = kube.get(f"/api/v1/namespaces/{namespace}/pods", params=params).json()["items"]
    return sorted(items, key=lambda p: p["metadata"]["name"])


def bound(items: list[dict[str, Any]]) -> list[str]:
    return [p["metadata"]["name"] for p in items if p["spec"].get("nodeName")]


def events(kube: KubeHTTP, namespace: str, reason: str) -> list[dict[str, Any]]:
    items = kube.get(f"/api/v1/namespaces/{namespace}/events").json()["items"]
    return [e for e in items if e.get("reason") == reason]


def unschedulable(items: list[dict[str, Any]]) -> bool:
    """Every pod was tried by the scheduler and left unscheduled (PodScheduled False)."""

    def tried(pod: dict[str, Any]) -> bool:
        conditions = (pod.get("status") or {}).get("conditions") or []
        return any(c["type"] == "PodScheduled" and c["status"] == "False" for c in conditions)

    return bool(items) and all(tried(p) for p in items)


def hold_unbound(kube: KubeHTTP, namespace: str, count: int, selector: str = "") -> list[dict[str, Any]]:
    """Until the ``count`` pods exist (their controller may retry with back-off, up to a minute)
    and the scheduler has tried them, then for :data:`HOLD_S` seconds: none may be bound (a partial
    gang would be). The pods at the end."""
    wait(f"{count} pods in {namespace}", lambda: len(pods(kube, namespace, selector)) == count, timeout=120)
    wait("the scheduler to try the gang", lambda: unschedulable(pods(kube, namespace, selector)), timeout=60)
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        items = pods(kube, namespace, selector)
        assert bound(items) == [], f"part of the gang was bound: {bound(items)}"
        time.sleep(0.5)
    return pods(kube, namespace, selector)


def pod_group(kube: KubeHTTP, namespace: str, name: str) -> dict[str, Any] | None:
    """The Workload API PodGroup ``name`` (``scheduling.k8s.io/v1beta1``), None while there is none."""
    answer = kube.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{namespace}/podgroups/{name}")
    return answer.json() if answer.status == 200 else None


def gang_min_count(group: dict[str, Any]) -> int:
    return int(group["spec"]["schedulingPolicy"]["gang"]["minCount"])


def all_bound(kube: KubeHTTP, namespace: str, selector: str, count: int) -> list[dict[str, Any]] | None:
    """The pods of ``selector`` once exactly ``count`` exist and all are bound, else None."""
    items = pods(kube, namespace, selector)
    return items if len(items) == count and len(bound(items)) == count else None
