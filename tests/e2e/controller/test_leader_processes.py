"""Leader election between real ``python -m karta.controller --leader-elect`` processes on the
real API server: only the leader holds the Lease and reports leading; ``kill -9`` of the leader
hands over once the lease expires (not before: never two leaders); SIGTERM releases the Lease,
so the next candidate takes over at once, and the process exits 0 within its shutdown timeout."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from karta.kube import KubeClient
from tests.hang_guard import HANG_GUARD_S

from ..kubehttp import KubeHTTP
from .certs_support import Process, kube_client, lease_holder, unique, wait_for

__all__ = ["kube_client"]  # fixtures used by name

LEASE, RENEW, RETRY, SHUTDOWN = 8.0, 5.0, 0.5, 10.0
SLACK = 5.0  # a loaded machine: process scheduling, API latency


@pytest.fixture
def spawn(cluster: KubeHTTP, namespace: str, tmp_path: Path) -> Iterator[tuple[str, object]]:
    lease = unique("karta-test-lease")
    started: list[Process] = []

    def start(identity: str) -> Process:
        args = [
            "--kubeconfig",
            str(cluster.kubeconfig),
            "--leader-elect",
            "--leader-election-id",
            lease,
            "--leader-election-namespace",
            namespace,
            "--leader-elect-lease-duration",
            str(LEASE),
            "--leader-elect-renew-deadline",
            str(RENEW),
            "--leader-elect-retry-period",
            str(RETRY),
            "--shutdown-timeout",
            str(SHUTDOWN),
            "--health-probe-bind-address",
            "0",
            "--cluster-definitions",
            "false",
            "--log-format",
            "text",
        ]
        process = Process(identity, args, log=tmp_path / f"{identity}.log")
        started.append(process)
        return process

    try:
        yield lease, start
    finally:
        for process in started:
            process.stop()


def test_leader_processes_kill_and_sigterm(
    spawn: tuple[str, object], kube_client: KubeClient, namespace: str
) -> None:
    lease, start = spawn
    a = start("proc-a")  # type: ignore[operator]
    wait_for(lambda: lease_holder(kube_client, namespace, lease) == "proc-a", "proc-a to hold the lease")
    wait_for(lambda: a.leader_gauge() == 1.0, "proc-a to report leading")
    b = start("proc-b")  # type: ignore[operator]
    wait_for(lambda: b.leader_gauge() is not None, "proc-b's metrics endpoint")
    time.sleep(2 * RETRY)  # a few rounds of b's candidacy
    assert b.leader_gauge() == 0.0
    assert lease_holder(kube_client, namespace, lease) == "proc-a"

    # kill -9: no release; b waits until the record has not changed for the lease duration.
    a.signal(signal.SIGKILL)
    killed = time.monotonic()
    assert a.proc.wait(timeout=HANG_GUARD_S) == -signal.SIGKILL
    wait_for(
        lambda: lease_holder(kube_client, namespace, lease) == "proc-b", "proc-b to take over", poll=0.05
    )
    took = time.monotonic() - killed
    assert LEASE - 2 * RETRY - 0.5 <= took <= LEASE + RETRY + SLACK, took
    wait_for(lambda: b.leader_gauge() == 1.0, "proc-b to report leading")
    spec = kube_client.get("leases", lease, namespace=namespace)["spec"]
    assert spec["leaseTransitions"] == 1

    # SIGTERM: b stops its parts, releases the Lease and exits 0; c takes over at once.
    c = start("proc-c")  # type: ignore[operator]
    wait_for(lambda: c.leader_gauge() is not None, "proc-c's metrics endpoint")
    b.signal(signal.SIGTERM)
    try:
        code = b.proc.wait(timeout=SHUTDOWN + SLACK)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"proc-b did not exit within its shutdown timeout:\n{b.output()}") from None
    exited = time.monotonic()  # b released the Lease before it exited; its shutdown is not timed
    assert code == 0, b.output()
    assert "released the leader lease" in b.output()
    wait_for(
        lambda: lease_holder(kube_client, namespace, lease) == "proc-c", "proc-c to take over", poll=0.05
    )
    assert time.monotonic() - exited < LEASE - 2 * RETRY  # released: no waiting for expiry
    wait_for(lambda: c.leader_gauge() == 1.0, "proc-c to report leading")
    assert kube_client.get("leases", lease, namespace=namespace)["spec"]["leaseTransitions"] == 2
    c.signal(signal.SIGTERM)
    assert c.proc.wait(timeout=SHUTDOWN + SLACK) == 0, c.output()
    assert lease_holder(kube_client, namespace, lease) == ""
    kube_client.delete("leases", lease, namespace=namespace)
