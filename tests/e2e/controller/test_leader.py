"""Leader election in-process on the real API server: one of two controllers holds the Lease and
runs the leader-only parts; shutting the leader down releases the Lease and the other takes over
at once (without waiting for the lease to expire)."""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from pathlib import Path

import pytest

from karta.controller.main import Controller, build
from karta.controller.runtime.leader import LeaseElector
from karta.kube import KubeClient

from .certs_support import base_options, kube_client, lease_holder, unique, wait_for

__all__ = ["kube_client"]  # fixtures used by name

LEASE, RENEW, RETRY = 6.0, 4.0, 0.3


class LeaderOnly:
    """A leader-only part that notes when it runs."""

    name = "leader-only-probe"

    def __init__(self) -> None:
        self.running = threading.Event()
        self.runs = 0

    def run(self, stop: threading.Event) -> None:
        self.runs += 1
        self.running.set()
        stop.wait()
        self.running.clear()


def _controller(
    kube: KubeClient,
    namespace: str,
    lease: str,
    identity: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lease_duration: float = LEASE,
) -> tuple[Controller, LeaderOnly]:
    monkeypatch.setenv("POD_NAME", identity)
    options = base_options(
        namespace,
        tmp_path,
        enable_webhook=False,
        leader_elect=True,
        leader_election_id=lease,
        leader_election_namespace=namespace,
        lease_duration=lease_duration,
        renew_deadline=RENEW,
        retry_period=RETRY,
    )
    controller = build(options, kube)
    part = LeaderOnly()
    controller.manager.add(part, leader_only=True)
    return controller, part


def test_one_leader_runs_the_leader_only_parts_and_release_hands_over_at_once(
    kube_client: KubeClient, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lease = unique("karta-test-lease")
    a, part_a = _controller(kube_client, namespace, lease, "replica-a", tmp_path, monkeypatch)
    b, part_b = _controller(kube_client, namespace, lease, "replica-b", tmp_path, monkeypatch)
    assert isinstance(a.manager.elector, LeaseElector) and a.manager.elector.identity == "replica-a"
    a.manager.start()
    try:
        wait_for(part_a.running.is_set, "replica-a to lead")
        b.manager.start()
        # b is a candidate: the Lease is a's and is renewed, so b never runs its leader-only part.
        spec = kube_client.get("leases", lease, namespace=namespace)["spec"]
        assert spec["holderIdentity"] == "replica-a"
        assert spec["leaseDurationSeconds"] == 6
        assert spec["leaseTransitions"] == 0
        renewed = wait_for(
            lambda: (
                kube_client.get("leases", lease, namespace=namespace)["spec"]["renewTime"]
                != spec["renewTime"]
            ),
            "a renewal",
        )
        assert renewed
        assert not part_b.running.is_set() and not b.manager.leading
        assert a.manager.leading
        # a shuts down: its parts stop, then it releases; b takes over well before the lease expires.
        a.manager.shutdown()
        released_at = time.monotonic()
        assert not part_a.running.is_set()
        assert lease_holder(kube_client, namespace, lease) in ("", "replica-b")
        wait_for(part_b.running.is_set, "replica-b to take over")
        assert time.monotonic() - released_at < LEASE  # released: no waiting for expiry
        spec = kube_client.get("leases", lease, namespace=namespace)["spec"]
        assert spec["holderIdentity"] == "replica-b"
        assert spec["leaseTransitions"] == 1
        assert part_a.runs == 1 and part_b.runs == 1
        assert a.manager.exit_code == 0
    finally:
        a.manager.shutdown()
        b.manager.shutdown()
    assert lease_holder(kube_client, namespace, lease) == ""
    assert b.manager.exit_code == 0
    kube_client.delete("leases", lease, namespace=namespace)


def test_a_lost_lease_stops_the_process_with_exit_code_1(
    kube_client: KubeClient, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lease = unique("karta-test-lease")
    a, part = _controller(kube_client, namespace, lease, "replica-a", tmp_path, monkeypatch)
    a.manager.start()
    try:
        wait_for(part.running.is_set, "replica-a to lead")
        # Another holder overwrites the Lease (as after a partition): a cannot renew, gives up.
        # A merge patch carries no resourceVersion: a renewal between a read and a write cannot
        # make it a 409 Conflict.
        kube_client.patch("leases", lease, {"spec": {"holderIdentity": "usurper"}}, namespace=namespace)
        wait_for(a.manager.stop.is_set, "replica-a to stop")
        assert a.manager.exit_code == 1
        wait_for(lambda: not part.running.is_set(), "the leader-only part to stop")
    finally:
        a.manager.shutdown()
    assert lease_holder(kube_client, namespace, lease) == "usurper"  # never released: not ours
    kube_client.delete("leases", lease, namespace=namespace)


def test_a_hung_renewal_gives_leadership_up_by_the_renew_deadline(
    kube_client: KubeClient, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lease = unique("karta-test-lease")
    a, part = _controller(
        kube_client, namespace, lease, "replica-a", tmp_path, monkeypatch, lease_duration=12.0
    )
    elector = a.manager.elector
    assert isinstance(elector, LeaseElector)
    assert elector.client.config.timeout == RENEW  # the kubeconfig sets none: the elector bounds its own
    with socket.socket() as black_hole:
        black_hole.bind(("127.0.0.1", 0))
        black_hole.listen(64)  # connections are queued, never accepted: every request hangs
        a.manager.start()
        try:
            wait_for(part.running.is_set, "replica-a to lead")
            renewed = kube_client.get("leases", lease, namespace=namespace)["spec"]["renewTime"]
            unreachable = dataclasses.replace(
                elector.client.config, server=f"https://127.0.0.1:{black_hole.getsockname()[1]}", timeout=None
            )
            elector.client = KubeClient(unreachable)
            swapped = time.monotonic()
            wait_for(a.manager.stop.is_set, "replica-a to give up")
            # Before anybody else may take the lease over (12 s after the last renewal).
            assert time.monotonic() - swapped < 12.0
            assert a.manager.exit_code == 1
        finally:
            a.manager.shutdown()
    spec = kube_client.get("leases", lease, namespace=namespace)["spec"]
    assert spec["holderIdentity"] == "replica-a"  # could not be released: it expires instead
    assert spec["renewTime"] >= renewed
    kube_client.delete("leases", lease, namespace=namespace)
