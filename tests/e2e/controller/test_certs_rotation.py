"""Rotation in auto mode on the real API server, with validities of seconds: the serving
certificate and then the CA are replaced while the API server keeps calling the webhook, and not
one call fails during the swaps."""

from __future__ import annotations

import time
from pathlib import Path

from cryptography import x509

from karta.controller.main import build
from karta.controller.parts.certs import CertManager, Validity
from karta.errors import ApiError
from karta.kube import KubeClient

from .certs_support import (
    PROBE_PATH,
    Probe,
    WebhookProbe,
    base_options,
    kube_client,
    running,
    secret_data,
    served_certificate,
    wait_for,
    webhook_probe,
)
from .test_certs import _try_create

__all__ = ["kube_client", "webhook_probe"]  # fixtures used by name


def _admit_continuously(
    probe: WebhookProbe, kube: KubeClient, manager: CertManager, namespace: str, *, until: object
) -> tuple[int, list[str], set[int], set[str], int]:
    """Create ConfigMaps through the webhook until ``until()``: (admitted, failures, leaf serials
    and CA subjects seen in the Secret, the largest caBundle seen in certificates)."""
    admitted, failures = 0, []
    serials: set[int] = set()
    issuers: set[str] = set()
    widest = 0
    while not until():  # type: ignore[operator]
        try:
            probe.create_configmap(kube)
            admitted += 1
        except ApiError as exc:
            failures.append(str(exc))
        # The API server may keep its connection: a fresh handshake, verified against the
        # caBundle registered right now, shows what a new connection would get.
        try:
            served_certificate(probe.port, probe.ca_bundle())
        except OSError as exc:  # ssl.SSLError included
            failures.append(f"handshake: {exc}")
        data = secret_data(kube, namespace, manager.secret_name)
        leaf = x509.load_pem_x509_certificate(data["tls.crt"])
        serials.add(leaf.serial_number)
        issuers.add(leaf.issuer.rfc4514_string())
        widest = max(widest, len(x509.load_pem_x509_certificates(probe.ca_bundle())))
    return admitted, failures, serials, issuers, widest


def _start(kube: KubeClient, probe: WebhookProbe, namespace: str, tmp_path: Path, validity: Validity):  # type: ignore[no-untyped-def]
    options = base_options(
        namespace,
        tmp_path,
        webhook_port=probe.port,
        webhook_url=probe.url,
        validating_webhook_name=probe.name,
    )
    controller = build(options, kube)
    assert controller.webhooks is not None
    handler = Probe()
    controller.webhooks.register(PROBE_PATH, "probe", handler.handler)
    certs = controller.parts["certs"]
    assert isinstance(certs, CertManager)
    certs.validity = validity
    certs.interval = 0.2
    return controller, certs


def test_serving_certificate_rotation_drops_no_request(
    kube_client: KubeClient, webhook_probe: WebhookProbe, namespace: str, tmp_path: Path
) -> None:
    # Renewed when a third of 6 s is left: a new leaf about every 4 s, the same CA.
    controller, certs = _start(kube_client, webhook_probe, namespace, tmp_path, Validity(leaf=6.0))
    with running(controller):
        wait_for(lambda: controller.manager.ready()[1]["webhook"], "the webhook server")
        wait_for(lambda: _try_create(webhook_probe, kube_client), "the first admitted ConfigMap")
        first = secret_data(kube_client, namespace, certs.secret_name)
        serials_seen: set[int] = set()

        def three_leaves() -> bool:
            data = secret_data(kube_client, namespace, certs.secret_name)
            serials_seen.add(x509.load_pem_x509_certificate(data["tls.crt"]).serial_number)
            return len(serials_seen) >= 3

        deadline = time.monotonic() + 60  # hang guard: three leaves take about 8 s
        admitted, failures, serials, issuers, _ = _admit_continuously(
            webhook_probe,
            kube_client,
            certs,
            namespace,
            until=lambda: three_leaves() or time.monotonic() > deadline,
        )
        assert len(serials_seen) >= 3, "the serving certificate was not rotated twice"
        assert failures == []
        assert admitted > 0
        assert len(issuers) == 1
        assert secret_data(kube_client, namespace, certs.secret_name)["ca.crt"] == first["ca.crt"]
        assert len(serials) >= 2
        wait_for(
            lambda: (
                (tmp_path / "tls.crt").read_bytes()
                == secret_data(kube_client, namespace, certs.secret_name)["tls.crt"]
            ),
            "the files to follow the Secret",
        )
    kube_client.delete("secrets", certs.secret_name, namespace=namespace)


def test_ca_rotation_trusts_old_and_new_ca_during_the_swap(
    kube_client: KubeClient, webhook_probe: WebhookProbe, namespace: str, tmp_path: Path
) -> None:
    # The CA (and its leaf) live 15 s: at 10 s a new CA joins the bundle, 2 s later a leaf signed
    # by it is served, at 15 s the old CA leaves the bundle.
    validity = Validity(ca=15.0, leaf=15.0, ca_overlap=2.0)
    controller, certs = _start(kube_client, webhook_probe, namespace, tmp_path, validity)
    with running(controller):
        wait_for(lambda: controller.manager.ready()[1]["webhook"], "the webhook server")
        wait_for(lambda: _try_create(webhook_probe, kube_client), "the first admitted ConfigMap")
        first_ca = x509.load_pem_x509_certificates(
            secret_data(kube_client, namespace, certs.secret_name)["ca.crt"]
        )
        assert len(first_ca) == 1

        def old_ca_gone() -> bool:
            bundle = x509.load_pem_x509_certificates(webhook_probe.ca_bundle())
            return first_ca[0] not in bundle and len(bundle) == 1

        deadline = time.monotonic() + 90  # hang guard: the whole rotation takes about 16 s
        admitted, failures, _, issuers, widest = _admit_continuously(
            webhook_probe,
            kube_client,
            certs,
            namespace,
            until=lambda: old_ca_gone() or time.monotonic() > deadline,
        )
        assert old_ca_gone(), "the CA was not rotated"
        assert failures == []
        assert admitted > 0
        assert widest == 2  # old and new CA were both trusted during the swap
        assert len(issuers) == 2  # leaves of the old and then the new CA were served
    kube_client.delete("secrets", certs.secret_name, namespace=namespace)
