"""The webhooks in a child process (issue 21 item 6), with a real ``python -m karta.controller
--backend volcano --enable-webhook`` on the real API server (kube-controller-manager creates the
Jobs' pods, the API server calls the webhook): the controller spawns its admission child, which
binds the pods; the parent's ``/metrics`` shows the child's webhook counters; ``kill -9`` of the
child → the parent restarts it (log line, ``karta_child_process_restarts_total``) and admission
works again; SIGTERM stops both (idle: within 2 s); ``kill -9`` of the parent takes the
child with it."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from karta.controller.parts.pod_binding.admission import PATH
from tests.hang_guard import HANG_GUARD_S

from ..kubehttp import KubeHTTP, load_manifests
from .certs_support import Process, free_port, wait_for, write_test_certificates
from .pods_support import batch_job, namespace, ok, pods, registered_webhook, wait_webhook_counted

pytestmark = pytest.mark.slow

SHUTDOWN = 10.0
NODE_LABELS = {"karta-e2e-admission-process": "none"}  # no such Node: the pods stay Pending
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"  # Volcano's binding of a pod to its PodGroup


def _get(port: int, path: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        resp = connection.getresponse()
        return resp.status, resp.read().decode()
    except OSError:
        return 0, ""
    finally:
        connection.close()


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _samples(text: str, name: str) -> dict[str, float]:
    """``name``'s samples in an exposition, by their label text."""
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            labels, value = line.rsplit(" ", 1)
            out[labels[len(name) :]] = float(value)
    return out


class Controller:
    """The controller process and the ports it was given."""

    def __init__(self, kube: KubeHTTP, workdir: Path, ns: str, identity: str) -> None:
        self.probe, self.webhook = free_port(), free_port()
        (workdir / "definitions").mkdir(exist_ok=True)
        args = [
            f"--kubeconfig={kube.kubeconfig}",
            "--backend=volcano",
            "--gang-scope=all",  # predates the opt-in scope (issue 22)
            f"--namespace={ns}",
            "--enable-webhook",
            "--webhook-host=127.0.0.1",
            f"--webhook-port={self.webhook}",
            "--webhook-cert-mode=manual",
            f"--webhook-cert-dir={workdir / 'certs'}",
            "--cluster-definitions=false",
            f"--definitions-dir={workdir / 'definitions'}",
            f"--health-probe-bind-address=127.0.0.1:{self.probe}",
            f"--shutdown-timeout={SHUTDOWN}",
            "--log-format=text",
        ]
        self.process = Process(identity, args, log=workdir / f"{identity}.log")

    @property
    def pid(self) -> int:
        return self.process.proc.pid

    def ready(self) -> bool:
        return _get(self.probe, "/readyz")[0] == 200

    def metrics(self) -> str:
        status, text = _get(self.process.metrics_port, "/metrics")
        assert status == 200, status
        return text

    def webhook_requests(self) -> float:
        return sum(
            v
            for k, v in _samples(self.metrics(), "karta_webhook_requests_total").items()
            if 'webhook="pods"' in k
        )

    def child(self) -> int | None:
        found = _children(self.pid)
        return found[0] if len(found) == 1 else None


@pytest.fixture
def controller(
    controllers_cluster: KubeHTTP, corpus: Path, tmp_path: Path
) -> Iterator[tuple[Controller, str]]:
    kube = controllers_cluster
    (crd,) = load_manifests(corpus / "crds" / "scheduling.volcano.sh_podgroups.yaml")
    kube.ensure_crd(crd)
    ns = namespace(kube, "admission-process")
    ca = write_test_certificates(tmp_path / "certs")
    started = Controller(kube, tmp_path, ns, "admission-parent")
    try:
        with registered_webhook(
            kube, url=f"https://127.0.0.1:{started.webhook}{PATH}", ca=ca, namespaces=(ns,)
        ):
            yield started, ns
    finally:
        child = started.child() if started.process.proc.poll() is None else None
        started.process.stop()
        if child is not None:
            wait_for(lambda: not _alive(child), "the child to die with its parent")
        kube.delete(f"/api/v1/namespaces/{ns}")


def _job_is_bound(kube: KubeHTTP, ns: str, name: str) -> None:
    """A Job of two pods: both are admitted with the binding to the Job's PodGroup."""
    ok(kube.post(f"/apis/batch/v1/namespaces/{ns}/jobs", batch_job(name, NODE_LABELS, parallelism=2)))
    items = wait_for(
        lambda: (lambda got: got if len(got) == 2 else None)(pods(kube, ns, f"job-name={name}")),
        f"the pods of {name}",
    )
    for pod in items:
        assert pod["metadata"].get("annotations", {}).get(GROUP_ANNOTATION) == f"{name}-job", pod["metadata"]
        assert pod["spec"]["schedulerName"] == "volcano"


def test_the_webhooks_run_in_a_supervised_child(
    controller: tuple[Controller, str], controllers_cluster: KubeHTTP
) -> None:
    kube = controllers_cluster
    proc, ns = controller
    wait_for(proc.ready, "the controller to be ready (the child serves)")
    child = wait_for(proc.child, "the admission child")
    with open(f"/proc/{child}/cmdline", "rb") as f:
        assert b"--role=admission" in f.read().split(b"\0")
    wait_webhook_counted(kube, ns, proc.webhook_requests)
    _job_is_bound(kube, ns, "first")

    # The parent's /metrics: its own families and the child's webhook counters, one TYPE line each.
    text = proc.metrics()
    assert 'karta_webhook_requests_total{outcome="patched",webhook="pods"}' in text
    assert _samples(text, "karta_webhook_latency_seconds_count")
    assert "leader_election_master_status" in text
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    assert len(types) == len(set(types))
    assert not _samples(text, "karta_child_process_restarts_total")

    # kill -9 of the child: restarted, ready again, admission works again.
    os.kill(child, signal.SIGKILL)
    wait_for(lambda: (proc.child() or child) != child, "a new admission child")
    wait_for(proc.ready, "the controller to be ready again")
    restarts = _samples(proc.metrics(), "karta_child_process_restarts_total")
    assert restarts == {'{name="admission"}': 1.0}
    assert "child process exited; restarting" in proc.process.output()
    _job_is_bound(kube, ns, "second")

    # SIGTERM, idle: the parent stops the child and exits 0 within 2 s (issue 21 item 8).
    child = proc.child()
    assert child is not None
    time.sleep(1.0)  # idle: every part in its wait
    began = time.monotonic()
    proc.process.signal(signal.SIGTERM)
    try:
        code = proc.process.proc.wait(timeout=SHUTDOWN + 5)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"no exit within the shutdown timeout:\n{proc.process.output()}") from None
    took = time.monotonic() - began
    assert code == 0, proc.process.output()
    assert not _alive(child)
    assert took < 2.0, f"shutdown took {took:.1f}s"


def test_the_child_dies_with_its_parent(controller: tuple[Controller, str]) -> None:
    proc, _ = controller
    wait_for(proc.ready, "the controller to be ready (the child serves)")
    child = wait_for(proc.child, "the admission child")
    proc.process.signal(signal.SIGKILL)
    assert proc.process.proc.wait(timeout=HANG_GUARD_S) == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child)
