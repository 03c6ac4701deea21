"""Fixtures and helpers of the controller's TLS, registration and leader-election e2e tests.

Owns: ``kube_client`` (a :class:`KubeClient` on the session cluster), ``webhook_probe`` (a
ValidatingWebhookConfiguration of our own that sends the API server's admission of labelled
ConfigMaps in the test namespace to ``https://127.0.0.1:<port>/test-validate``, and a handler for
it), running controllers in-process (:func:`running`) and as processes (:class:`Process`).
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from karta.controller.main import Controller
from karta.controller.options import Options
from karta.controller.parts.certs import new_ca, new_leaf
from karta.controller.runtime.webhook.review import Answer, allow, deny
from karta.errors import ApiError
from karta.kube import ConfigOverrides, KubeClient
from tests.hang_guard import HANG_GUARD_S

from ..conftest import hack_module
from ..kubehttp import KubeHTTP

VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
PROBE_PATH = "/test-validate"


def wait_for(check: Callable[[], Any], what: str, *, timeout: float = HANG_GUARD_S, poll: float = 0.1) -> Any:
    """``check()``'s first truthy value; a hang guard, not a speed target."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(poll)


def free_port() -> int:
    """A free port below the ephemeral range (hack/cluster/controlplane.py says why)."""
    port: int = hack_module("cluster/controlplane.py").free_port()
    return port


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def kube_client(cluster: KubeHTTP) -> Iterator[KubeClient]:
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig)))
    yield client
    client.close()


def base_options(namespace: str, cert_dir: Path, **changes: Any) -> Options:
    """A webhook-serving controller on 127.0.0.1 with no endpoints and no cluster definitions."""
    values: dict[str, Any] = {
        "metrics_bind_address": "0",
        "health_probe_bind_address": "0",
        "cluster_definitions": False,
        "enable_webhook": True,
        "webhook_host": "127.0.0.1",
        "webhook_namespace": namespace,
        "webhook_cert_dir": cert_dir,
        "webhook_cert_secret": unique("webhook-cert"),
        "mutating_webhook_name": unique("karta-test-absent"),
        "validating_webhook_name": unique("karta-test-absent"),
        "shutdown_timeout": 10.0,
    }
    values.update(changes)
    return Options(**values)


@contextlib.contextmanager
def running(controller: Controller) -> Iterator[Controller]:
    controller.manager.start()
    try:
        yield controller
    finally:
        controller.manager.shutdown()


@dataclass
class Probe:
    """What the API server sent to the test webhook."""

    calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handler(self, request: Mapping[str, Any]) -> Answer:
        with self.lock:
            self.calls += 1
        data = (request.get("object") or {}).get("data") or {}
        return deny("the test webhook denies this") if "deny" in data else allow()


@dataclass
class WebhookProbe:
    name: str
    port: int
    label: str
    namespace: str
    cluster: KubeHTTP

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def ca_bundle(self) -> bytes:
        webhook = self.cluster.get(f"{VWC}/{self.name}").json()["webhooks"][0]
        return base64.b64decode(webhook["clientConfig"].get("caBundle") or "")

    def create_configmap(self, kube: KubeClient, data: dict[str, str] | None = None) -> dict[str, Any]:
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"generateName": "probe-", "labels": {"karta-certs-test": self.label}},
            "data": data or {"k": "v"},
        }
        return kube.create(body, namespace=self.namespace)


@pytest.fixture
def webhook_probe(cluster: KubeHTTP, namespace: str) -> Iterator[WebhookProbe]:
    """A ValidatingWebhookConfiguration (failurePolicy Fail, no caBundle yet) for labelled
    ConfigMaps of the test namespace, deleted afterwards."""
    probe = WebhookProbe(unique("karta-test-certs"), free_port(), uuid.uuid4().hex[:8], namespace, cluster)
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": probe.name},
        "webhooks": [
            {
                "name": "probe.certs.karta.run.ai",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": probe.url + PROBE_PATH},
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "timeoutSeconds": 5,
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["configmaps"],
                    }
                ],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                "objectSelector": {"matchLabels": {"karta-certs-test": probe.label}},
            }
        ],
    }
    created = cluster.post(VWC, body)
    assert created.status == 201, created.body
    try:
        yield probe
    finally:
        cluster.delete(f"{VWC}/{probe.name}")


def served_certificate(port: int, ca: bytes) -> bytes:
    """The DER certificate the server on ``port`` presents, verified against ``ca``."""
    context = ssl.create_default_context(cadata=ca.decode())
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def secret_data(kube: KubeClient, namespace: str, name: str) -> dict[str, bytes]:
    secret = kube.get("secrets", name, namespace=namespace)
    assert secret["type"] == "kubernetes.io/tls"
    return {k: base64.b64decode(v) for k, v in secret["data"].items()}


def lease_holder(kube: KubeClient, namespace: str, name: str) -> str | None:
    """The Lease's holderIdentity ("" when released), None when there is no Lease."""
    try:
        lease = kube.get("leases", name, namespace=namespace)
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise
    return str((lease.get("spec") or {}).get("holderIdentity") or "")


class Process:
    """``python -m karta.controller`` as a real process (identity = POD_NAME)."""

    def __init__(self, identity: str, args: list[str], *, log: Path) -> None:
        self.identity = identity
        self.log = log
        self.metrics_port = free_port()
        env = {**os.environ, "POD_NAME": identity}
        self._out = log.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "karta.controller",
                *args,
                "--metrics-bind-address",
                f"127.0.0.1:{self.metrics_port}",
            ],
            env=env,
            stdout=self._out,
            stderr=subprocess.STDOUT,
        )

    def leader_gauge(self) -> float | None:
        """leader_election_master_status of /metrics (None while the endpoint is not up)."""
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
                text = r.read().decode()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith("leader_election_master_status{"):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def signal(self, signum: signal.Signals) -> None:
        self.proc.send_signal(signum)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=HANG_GUARD_S)
        self._out.close()


def write_test_certificates(directory: Path, host: str = "127.0.0.1") -> bytes:
    """``tls.crt``/``tls.key`` for ``host`` in ``directory``, signed by a fresh CA made with the
    controller's own :func:`~karta.controller.parts.certs.new_ca` and
    :func:`~karta.controller.parts.certs.new_leaf`
    (valid for a day); the CA's PEM, the webhooks' caBundle."""
    now = datetime.datetime.now(datetime.UTC)
    ca = new_ca(now=now, validity=86400, name="karta-e2e-webhook-ca")
    leaf = new_leaf(ca, [host], now=now, validity=86400)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tls.crt").write_bytes(leaf.cert)
    (directory / "tls.key").write_bytes(leaf.key)
    return ca.cert
