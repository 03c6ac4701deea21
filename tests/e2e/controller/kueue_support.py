"""Shared pieces of the Kueue part's e2e tests: karta-controller ``--kueue`` in this process with
its suspend webhook (and, with a gang backend, its pod-binding webhook) registered for a test
namespace, PyTorchJobs of two 4-GPU workers (or a gang of a master and workers pinned to the
flavor's kwok Nodes), and reads of the Workloads the controller makes."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from karta.controller.main import Controller
from karta.controller.parts.kueue.reconciler import KueueReconciler
from karta.controller.parts.kueue.webhook import PATH, kueue_webhook

from ..kubehttp import KubeHTTP, load_manifests, ok, wait
from ..nodes import dedicated_node, pin
from ..test_kueue_live import QUEUE_LABEL, Queues, _condition, _container
from .pods_support import (
    WEBHOOKS,
    all_bound,
    registered_webhook,
    running_controller,
    wait_webhook_active,
    webhook_url,
)

PYTORCHJOBS = "/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs"
NATIVE = ("batch/job",)  # as the kueue_cluster's Kueue (hack/cluster/controlplane.py KUEUE_NATIVE)


def pytorchjob(
    q: Queues,
    name: str,
    *,
    priority_class: str | None = None,
    workers: int = 2,
    gpus: int = 4,
    master: bool = False,
    pinned: bool = False,
) -> dict[str, Any]:
    """A PyTorchJob of ``workers`` workers (and, with ``master``, a master) of ``gpus`` GPUs each
    in the queue, created running (the webhook suspends it). ``pinned``: its pods select and
    tolerate the Nodes of :func:`flavor_node` only (tests/e2e/nodes.py), so they can be bound."""
    labels = {QUEUE_LABEL: q.lq}
    if priority_class:
        labels["kueue.x-k8s.io/priority-class"] = priority_class

    def replicas(count: int) -> dict[str, Any]:
        spec: dict[str, Any] = {"containers": [{**_container(gpus), "name": "pytorch"}]}
        if pinned:
            spec = {**pin(spec, q.node_labels), "terminationGracePeriodSeconds": 0}
        return {"replicas": count, "template": {"spec": spec}}

    replica_specs = {"Worker": replicas(workers)} if workers else {}
    if master:
        replica_specs = {"Master": replicas(1), **replica_specs}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": q.ns, "labels": labels},
        "spec": {"pytorchReplicaSpecs": replica_specs},
    }


def pytorchjob_crd(kube: KubeHTTP, corpus: Path) -> None:
    """The corpus's PyTorchJob CRD installed (the training operator serves it)."""
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    kube.ensure_crd(crd)


def flavor_node(kube: KubeHTTP, q: Queues, index: int, *, gpus: int) -> str:
    """A kwok Node of ``gpus`` GPUs with the labels of the test's ResourceFlavor (the node
    selector Kueue's admission writes) and the taint only ``pinned`` pods tolerate; its name."""
    name = f"{q.flavor}-{index}"
    dedicated_node(kube, name, selector=q.node_labels, gpus=gpus, kwok=True)
    return name


def change_cq(kube: KubeHTTP, q: Queues, change: Callable[[dict[str, Any]], None]) -> None:
    """Read, ``change`` and write the test's ClusterQueue, again on a conflict (Kueue writes it too)."""

    def attempt() -> bool:
        cq = q.get_cq()
        change(cq)
        written = kube.request("PUT", f"/apis/kueue.x-k8s.io/v1beta2/clusterqueues/{q.cq}", body=cq)
        return written.status != 409 and bool(ok(written))

    wait("the ClusterQueue to be updated", attempt, timeout=30)


def job(kube: KubeHTTP, q: Queues, name: str) -> dict[str, Any]:
    return ok(kube.get(f"{PYTORCHJOBS.format(ns=q.ns)}/{name}"))


def suspended(obj: dict[str, Any]) -> bool:
    return bool(obj["spec"].get("runPolicy", {}).get("suspend"))


def workload_of(q: Queues, name: str) -> dict[str, Any] | None:
    """The Workload whose controller is the PyTorchJob ``name`` (None while there is none)."""
    for wl in q.workloads():
        refs = wl["metadata"].get("ownerReferences") or []
        if any(r.get("controller") and r["kind"] == "PyTorchJob" and r["name"] == name for r in refs):
            return wl
    return None


def admitted(q: Queues, name: str) -> dict[str, Any] | None:
    wl = workload_of(q, name)
    return wl if wl is not None and _condition(wl, "Admitted").get("status") == "True" else None


def pending(q: Queues, name: str) -> bool:
    wl = workload_of(q, name)
    return wl is not None and _condition(wl, "QuotaReserved").get("reason") == "Pending"


def pods(kube: KubeHTTP, q: Queues, name: str) -> list[dict[str, Any]]:
    selector = {"labelSelector": job_selector(name)}
    items: list[dict[str, Any]] = ok(kube.get(f"/api/v1/namespaces/{q.ns}/pods", params=selector))["items"]
    return items


@contextmanager
def kueue_controller(
    kube: KubeHTTP,
    workdir: Path,
    q: Queues,
    *,
    kind: tuple[str, str, str] = ("kubeflow.org", "v1", "pytorchjobs"),
    probe: dict[str, Any] | None = None,
    paused: Callable[[dict[str, Any]], bool] | None = None,
    backend: str = "none",
    **extra: Any,
) -> Iterator[Controller]:
    """``karta-controller --kueue --kueue-native batch/job --enable-webhook`` in this process, its
    suspend webhook registered for ``kind`` (group, version, plural: PyTorchJobs by default) in
    the test namespace; yields once the reconciler follows the kind and the API server calls the
    webhook (a dry-run creation of ``probe`` comes back ``paused``). With a gang ``backend``
    (``--backend workload-api``) the pod-binding webhook is registered for the test namespace too
    (fail-closed, as test_gang_scheduling.py) and called before it yields."""
    with (
        running_controller(
            kube, workdir, backend=backend, kueue=True, kueue_native=NATIVE, resync_period=30.0, **extra
        ) as (controller, ca),
        _pod_binding(kube, controller, ca, q.ns, backend),
    ):
        assert controller.webhooks is not None
        url = f"https://127.0.0.1:{controller.webhooks.bound_port}{PATH}"
        group, version, plural = kind
        rules = [{"apiGroups": [group], "apiVersions": [version], "operations": ["CREATE"],
                  "resources": [plural], "scope": "Namespaced"}]  # fmt: skip
        entry = kueue_webhook(
            client_config={"url": url, "caBundle": base64.b64encode(ca).decode()}, rules=rules
        )
        entry["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": q.ns}}
        name = f"karta-e2e-kueue-{uuid.uuid4().hex[:8]}"
        body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                "metadata": {"name": name}, "webhooks": [entry]}  # fmt: skip
        ok(kube.post(WEBHOOKS, body))
        try:
            reconciler = controller.parts["kueue"]
            assert isinstance(reconciler, KueueReconciler)

            def following() -> bool:
                return reconciler.ready() and any(
                    gvk.group == group for gvk in reconciler.watched_types().values()
                )

            wait(f"the Kueue part to follow {plural}", following, timeout=60)
            body = probe or pytorchjob(q, "probe")
            collection = f"/apis/{group}/{version}/namespaces/{q.ns}/{plural}"

            def webhook_called() -> bool:
                created = ok(kube.post(collection, body, params={"dryRun": "All"}))
                return (paused or suspended)(created)

            wait("the API server to call the suspend webhook", webhook_called, timeout=30)
            yield controller
        finally:
            kube.delete(f"{WEBHOOKS}/{name}")


@contextmanager
def _pod_binding(
    kube: KubeHTTP, controller: Controller, ca: bytes, namespace: str, backend: str
) -> Iterator[None]:
    """The pod-binding webhook registered for ``namespace`` and called (nothing without a backend)."""
    if backend == "none":
        yield
        return
    with registered_webhook(kube, url=webhook_url(controller), ca=ca, namespaces=(namespace,)):
        wait_webhook_active(kube, controller, namespace)
        yield


# -- a gang job: Kueue admits it, kube-scheduler binds it all or nothing (test_kueue_gang*.py) --

GANG_SIZE = 4  # a master and 3 workers
GANG_GPUS = 2  # each; 8 in all, the ClusterQueue's quota


def gang_job(q: Queues, name: str, **extra: Any) -> dict[str, Any]:
    """A PyTorchJob of a master and 3 workers of 2 GPUs each, pinned to the :func:`flavor_node` Nodes."""
    return pytorchjob(q, name, master=True, workers=GANG_SIZE - 1, gpus=GANG_GPUS, pinned=True, **extra)


def job_selector(name: str) -> str:
    return f"training.kubeflow.org/job-name={name}"


def pods_ready_of(q: Queues, name: str) -> tuple[str, str] | None:
    """The (status, reason) of the PodsReady condition the Kueue part writes on the job's Workload."""
    wl = workload_of(q, name)
    condition = _condition(wl, "PodsReady") if wl is not None else {}
    return (condition["status"], condition["reason"]) if condition else None


def bound_together(kube: KubeHTTP, q: Queues, name: str) -> list[dict[str, Any]]:
    """Until the job's pods are all bound (each to its gang by the pod webhook); the pods."""
    items: list[dict[str, Any]] = wait(
        f"the {GANG_SIZE} pods of {name} bound",
        lambda: all_bound(kube, q.ns, job_selector(name), GANG_SIZE),
        timeout=90,
    )
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in items} == {f"{name}-pytorchjob"}
    return items
