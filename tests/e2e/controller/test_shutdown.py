"""Graceful shutdown in-process on the real API server: the watches stop, the reconcile in
flight finishes (within the shutdown timeout), and only then is the Lease released, so the next
leader never overlaps a draining one."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from karta.controller.main import build
from karta.controller.runtime.workqueue import WorkQueue, run_workers
from karta.kube import KubeClient
from karta.kube.informer import Informer, object_key

from .certs_support import base_options, kube_client, lease_holder, unique, wait_for

__all__ = ["kube_client"]  # fixtures used by name


class SlowReconciler:
    """Leader-only: reconciles ConfigMap keys slowly, noting who held the Lease when it finished."""

    name = "slow-reconciler"

    def __init__(self, kube: KubeClient, namespace: str, lease: str, queue: WorkQueue[str]) -> None:
        self.kube, self.namespace, self.lease, self.queue = kube, namespace, lease, queue
        self.started = threading.Event()
        self.finished: list[tuple[str, str | None]] = []

    def reconcile(self, key: str) -> float | None:
        self.started.set()
        time.sleep(1.5)
        self.finished.append((key, lease_holder(self.kube, self.namespace, self.lease)))
        return None

    def run(self, stop: threading.Event) -> None:
        run_workers(self.queue, self.reconcile, workers=1, stop=stop, controller="slow", drain_timeout=10.0)


def test_shutdown_drains_then_releases_the_lease(
    kube_client: KubeClient, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lease, label = unique("karta-test-lease"), unique("drain")
    monkeypatch.setenv("POD_NAME", "draining-replica")
    options = base_options(
        namespace,
        tmp_path,
        enable_webhook=False,
        leader_elect=True,
        leader_election_id=lease,
        leader_election_namespace=namespace,
        lease_duration=6.0,
        renew_deadline=4.0,
        retry_period=0.3,
        shutdown_timeout=10.0,
    )
    controller = build(options, kube_client)
    queue: WorkQueue[str] = WorkQueue("slow")
    informer = Informer(
        kube_client, kube_client.resource("configmaps"), namespace=namespace, label_selector=f"drain={label}"
    )
    informer.add_handler(lambda _type, obj, _old: queue.add(object_key(obj)))
    reconciler = SlowReconciler(kube_client, namespace, lease, queue)
    controller.manager.add(informer, leader_only=True)
    controller.manager.add(reconciler, leader_only=True)
    controller.manager.start()
    try:
        wait_for(informer.synced.is_set, "the informer to sync (only once leading)")
        assert lease_holder(kube_client, namespace, lease) == "draining-replica"
        kube_client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": label, "labels": {"drain": label}},
            },
            namespace=namespace,
        )
        wait_for(reconciler.started.is_set, "the reconcile to start")
        began = time.monotonic()
        controller.manager.shutdown()
        took = time.monotonic() - began
    finally:
        controller.manager.shutdown()
    assert reconciler.finished == [(f"{namespace}/{label}", "draining-replica")]  # drained, still leading
    assert lease_holder(kube_client, namespace, lease) == ""  # then released
    assert took < options.shutdown_timeout
    assert not [t.name for t in threading.enumerate() if t.name in (informer.name, reconciler.name)]
    assert controller.manager.exit_code == 0
    kube_client.delete("leases", lease, namespace=namespace)
    kube_client.delete("configmaps", label, namespace=namespace)


def test_an_idle_controller_with_every_part_stops_within_two_seconds(
    kube_client: KubeClient, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21 item 8: SIGTERM's path (``Manager.shutdown``) on an idle leader running the gang
    reconciler, the platform metrics, the webhooks, the web view and leader election: every part
    is back within 2 s and the Lease is released (it took ~20 s: the gang reconciler slept until
    its next types read)."""
    lease = unique("karta-test-lease")
    monkeypatch.setenv("POD_NAME", "idle-replica")
    options = base_options(
        namespace,
        tmp_path,
        backend="workload-api",
        leader_elect=True,
        leader_election_id=lease,
        leader_election_namespace=namespace,
        lease_duration=6.0,
        renew_deadline=4.0,
        retry_period=0.3,
        ui=True,
        ui_bind_address="127.0.0.1:0",
    )
    controller = build(options, kube_client)
    controller.manager.start()
    try:
        wait_for(lambda: controller.manager.ready()[0], "every readiness check to pass")
        assert lease_holder(kube_client, namespace, lease) == "idle-replica"
        time.sleep(1.0)  # idle: every part in its wait
        began = time.monotonic()
        controller.manager.shutdown()
        took = time.monotonic() - began
    finally:
        controller.manager.shutdown()
    assert took < 2.0, f"shutdown took {took:.1f}s"
    assert lease_holder(kube_client, namespace, lease) == ""
    parts = {part.name for part, _ in controller.manager._parts}
    assert "ui-server" in parts and "gangs" in parts
    assert not [t.name for t in threading.enumerate() if t.name in parts]
    assert controller.manager.exit_code == 0
    kube_client.delete("leases", lease, namespace=namespace)
