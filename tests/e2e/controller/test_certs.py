"""Webhook TLS against the real API server: auto mode's Secret, files and caBundle, a second
replica reusing the Secret, the API server calling the webhook over TLS with that caBundle, the
registration of the webhook configurations, and manual mode's file reload."""

from __future__ import annotations

import base64
import datetime as dt
import threading
from pathlib import Path
from typing import Any

from cryptography import x509

from karta.controller.main import build
from karta.controller.parts.certs import CertManager, new_ca, new_leaf, write_atomically
from karta.controller.registration import apply as apply_configurations
from karta.controller.registration import webhook_configurations
from karta.controller.runtime.webhook.server import CertFiles
from karta.errors import ApiError
from karta.kube import KubeClient

from ..kubehttp import KubeHTTP
from .certs_support import (
    MWC,
    PROBE_PATH,
    VWC,
    Probe,
    WebhookProbe,
    base_options,
    free_port,
    kube_client,
    running,
    secret_data,
    served_certificate,
    unique,
    wait_for,
    webhook_probe,
)

__all__ = ["kube_client", "webhook_probe"]  # fixtures used by name


def _denied(probe: WebhookProbe, kube: KubeClient) -> ApiError:
    try:
        probe.create_configmap(kube, {"deny": "yes"})
    except ApiError as exc:
        return exc
    raise AssertionError("the webhook should have denied the ConfigMap")


def test_auto_mode_creates_secret_files_and_ca_bundle_and_the_api_server_calls_over_tls(
    kube_client: KubeClient, webhook_probe: WebhookProbe, namespace: str, tmp_path: Path
) -> None:
    options = base_options(
        namespace,
        tmp_path / "a",
        webhook_port=webhook_probe.port,
        webhook_url=webhook_probe.url,
        validating_webhook_name=webhook_probe.name,
    )
    controller = build(options, kube_client)
    assert controller.webhooks is not None
    probe = Probe()
    controller.webhooks.register(PROBE_PATH, "probe", probe.handler)
    with running(controller):
        wait_for(lambda: controller.manager.ready()[1]["webhook"], "the webhook server to be ready")
        data = secret_data(kube_client, namespace, options.webhook_cert_secret)
        assert set(data) == {"tls.crt", "tls.key", "ca.crt", "ca.key"}
        assert (tmp_path / "a" / "tls.crt").read_bytes() == data["tls.crt"]
        assert (tmp_path / "a" / "tls.key").read_bytes() == data["tls.key"]
        leaf = x509.load_pem_x509_certificate(data["tls.crt"])
        sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert [str(n.value) for n in sans] == [
            f"karta-operator-webhook.{namespace}.svc",
            f"karta-operator-webhook.{namespace}.svc.cluster.local",
            "127.0.0.1",
        ]
        wait_for(lambda: webhook_probe.ca_bundle() == data["ca.crt"], "the caBundle to be patched")
        # The API server verifies our certificate with that bundle and calls the handler.
        created = wait_for(lambda: _try_create(webhook_probe, kube_client), "an admitted ConfigMap")
        assert created["metadata"]["name"].startswith("probe-")
        assert probe.calls >= 1
        denied = _denied(webhook_probe, kube_client)
        assert "the test webhook denies this" in str(denied)
        assert served_certificate(webhook_probe.port, data["ca.crt"]) == leaf.public_bytes(_der_encoding())

        assert controller.manager.ready()[1]["webhook-certs"] is True
        # A second replica (another directory, another port) reuses the Secret as it is, and
        # replaces what an earlier run left in its directory.
        stale_ca = new_ca(now=dt.datetime.now(dt.UTC), name="stale")
        stale = new_leaf(stale_ca, ["127.0.0.1"], now=dt.datetime.now(dt.UTC))
        (tmp_path / "b").mkdir()
        write_atomically(tmp_path / "b" / "tls.key", stale.key)
        write_atomically(tmp_path / "b" / "tls.crt", stale.cert)
        second_port = free_port()
        version = kube_client.get("secrets", options.webhook_cert_secret, namespace=namespace)["metadata"][
            "resourceVersion"
        ]
        second = build(
            base_options(
                namespace,
                tmp_path / "b",
                webhook_port=second_port,
                webhook_url=webhook_probe.url,
                webhook_cert_secret=options.webhook_cert_secret,
                validating_webhook_name=webhook_probe.name,
            ),
            kube_client,
        )
        with running(second):
            wait_for(
                lambda: all(second.manager.ready()[1][c] for c in ("webhook", "webhook-certs")),
                "the second replica to serve",
            )
            assert (tmp_path / "b" / "tls.crt").read_bytes() == data["tls.crt"]
            assert served_certificate(second_port, data["ca.crt"]) == leaf.public_bytes(_der_encoding())
            again = kube_client.get("secrets", options.webhook_cert_secret, namespace=namespace)
            assert again["metadata"]["resourceVersion"] == version
    kube_client.delete("secrets", options.webhook_cert_secret, namespace=namespace)


def _der_encoding() -> Any:
    from cryptography.hazmat.primitives.serialization import Encoding

    return Encoding.DER


def _try_create(probe: WebhookProbe, kube: KubeClient) -> dict[str, Any] | None:
    """A ConfigMap through the webhook; None while the API server cannot call it yet (its
    webhook configuration cache lags the caBundle patch a little)."""
    try:
        return probe.create_configmap(kube)
    except ApiError as exc:
        if exc.status == 500 and "failed calling webhook" in str(exc):
            return None
        raise


def test_replicas_racing_for_the_secret_end_up_with_one(
    kube_client: KubeClient, namespace: str, tmp_path: Path
) -> None:
    secret = unique("webhook-cert")
    managers = [
        CertManager(
            kube_client,
            CertFiles(tmp_path / str(i)),
            namespace=namespace,
            secret=secret,
            hosts=["svc.ns.svc"],
        )
        for i in range(3)
    ]
    threads = [threading.Thread(target=m.sync) for m in managers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    data = secret_data(kube_client, namespace, secret)
    for i in range(3):
        assert (tmp_path / str(i) / "tls.crt").read_bytes() == data["tls.crt"]
    kube_client.delete("secrets", secret, namespace=namespace)


def test_register_webhooks_applies_both_configurations_with_the_ca_bundle(
    kube_client: KubeClient, cluster: KubeHTTP, namespace: str, tmp_path: Path
) -> None:
    port = free_port()
    options = base_options(
        namespace,
        tmp_path,
        webhook_port=port,
        webhook_url=f"https://127.0.0.1:{port}",
        register_webhooks=True,
        mutating_webhook_name=unique("karta-test-mutating"),
        validating_webhook_name=unique("karta-test-validating"),
    )
    controller = build(options, kube_client)
    try:
        with running(controller):
            registration = controller.parts["registration"]
            wait_for(registration.registered.is_set, "the webhooks to be registered")  # type: ignore[attr-defined]
            bundle = secret_data(kube_client, namespace, options.webhook_cert_secret)["ca.crt"]
            mutating = cluster.get(f"{MWC}/{options.mutating_webhook_name}").json()
            validating = cluster.get(f"{VWC}/{options.validating_webhook_name}").json()
            expected = webhook_configurations(options, namespace=namespace, ca_bundle=bundle)
            for live, want in zip((mutating, validating), expected, strict=True):
                assert [w["name"] for w in live["webhooks"]] == [w["name"] for w in want["webhooks"]]
                for got, wanted in zip(live["webhooks"], want["webhooks"], strict=True):
                    assert got["clientConfig"] == wanted["clientConfig"]
                    assert got["failurePolicy"] == "Fail"
                    assert got["rules"][0]["operations"] == wanted["rules"][0]["operations"]
                assert "karta" in {m["manager"] for m in live["metadata"]["managedFields"]}
            assert base64.b64decode(mutating["webhooks"][0]["clientConfig"]["caBundle"]) == bundle
        # The API server also accepts the pod webhook a gang backend adds (then it is removed).
        with_pods = webhook_configurations(
            base_options(
                namespace,
                tmp_path,
                backend="volcano",
                webhook_url=f"https://127.0.0.1:{port}",
                mutating_webhook_name=options.mutating_webhook_name,
                validating_webhook_name=options.validating_webhook_name,
            ),
            namespace=namespace,
        )
        apply_configurations(kube_client, with_pods)
        live = cluster.get(f"{MWC}/{options.mutating_webhook_name}").json()
        pods = live["webhooks"][1]
        assert pods["name"] == "pods.karta.run.ai"
        assert pods["failurePolicy"] == "Fail" and pods["timeoutSeconds"] == 5
        assert pods["sideEffects"] == "NoneOnDryRun" and pods["reinvocationPolicy"] == "Never"
        assert pods["clientConfig"]["url"] == f"https://127.0.0.1:{port}/mutate--v1-pod"
    finally:
        cluster.delete(f"{MWC}/{options.mutating_webhook_name}")
        cluster.delete(f"{VWC}/{options.validating_webhook_name}")
        kube_client.delete("secrets", options.webhook_cert_secret, namespace=namespace)


def test_manual_mode_serves_mounted_files_and_reloads_them(
    kube_client: KubeClient, webhook_probe: WebhookProbe, cluster: KubeHTTP, namespace: str, tmp_path: Path
) -> None:
    now = dt.datetime.now(dt.UTC)
    ca_a, ca_b = new_ca(now=now, name="ca-a"), new_ca(now=now, name="ca-b")
    leaf_a, leaf_b = new_leaf(ca_a, ["127.0.0.1"], now=now), new_leaf(ca_b, ["127.0.0.1"], now=now)
    patch = [
        {
            "op": "add",
            "path": "/webhooks/0/clientConfig/caBundle",
            "value": base64.b64encode(ca_a.cert + ca_b.cert).decode(),
        }
    ]
    patched = cluster.request(
        "PATCH", f"{VWC}/{webhook_probe.name}", body=patch, content_type="application/json-patch+json"
    )
    assert patched.status == 200, patched.body
    options = base_options(namespace, tmp_path, webhook_cert_mode="manual", webhook_port=webhook_probe.port)
    controller = build(options, kube_client)
    assert controller.webhooks is not None
    probe = Probe()
    controller.webhooks.register(PROBE_PATH, "probe", probe.handler)
    with running(controller):
        assert controller.manager.ready()[1]["webhook"] is False  # no certificate: not ready
        write_atomically(tmp_path / "tls.key", leaf_a.key)
        write_atomically(tmp_path / "tls.crt", leaf_a.cert)
        wait_for(lambda: controller.manager.ready()[1]["webhook"], "ready once the files exist")
        wait_for(lambda: _try_create(webhook_probe, kube_client), "an admitted ConfigMap")
        der_a = x509.load_pem_x509_certificate(leaf_a.cert).public_bytes(_der_encoding())
        assert served_certificate(webhook_probe.port, ca_a.cert) == der_a
        # cert-manager (or an operator) replaces the mounted pair: served from the next connection on.
        write_atomically(tmp_path / "tls.key", leaf_b.key)
        write_atomically(tmp_path / "tls.crt", leaf_b.cert)
        der_b = x509.load_pem_x509_certificate(leaf_b.cert).public_bytes(_der_encoding())
        assert served_certificate(webhook_probe.port, ca_b.cert) == der_b
        before = probe.calls
        webhook_probe.create_configmap(kube_client)
        assert probe.calls > before
        assert not (tmp_path / "ca.crt").exists()
    try:
        kube_client.get("secrets", options.webhook_cert_secret, namespace=namespace)
    except ApiError as exc:
        assert exc.status == 404  # manual mode never writes a Secret
    else:
        raise AssertionError("manual mode created the certificate Secret")


def test_registered_webhooks_are_called_by_the_api_server_with_the_auto_ca(
    kube_client: KubeClient, cluster: KubeHTTP, namespace: str, tmp_path: Path
) -> None:
    """--register-webhooks + auto mode end to end: the API server sends a Karta's creation to
    the operator's webhooks at --webhook-url, trusting the CA the controller generated."""
    from .operator_support import install_karta_crd, karta_body

    install_karta_crd(cluster)
    port, tag = free_port(), unique("reg").replace("-", "")
    options = base_options(
        namespace,
        tmp_path,
        webhook_port=port,
        webhook_url=f"https://127.0.0.1:{port}",
        register_webhooks=True,
        mutating_webhook_name=unique("karta-test-mutating"),
        validating_webhook_name=unique("karta-test-validating"),
    )
    name = f"certs-{tag}"
    body = karta_body(name, group="certs.e2e.karta.run.ai", version="v1", kind=f"Reg{tag}")

    def create() -> dict[str, Any] | None:
        answer = cluster.post("/apis/run.ai/v1alpha1/kartas", body)
        if answer.status == 500 and "failed calling webhook" in str(answer.body):
            return None  # the API server's webhook cache lags the registration a little
        assert answer.status == 201, answer.body
        return answer.json()

    controller = build(options, kube_client)
    try:
        with running(controller):
            wait_for(controller.parts["registration"].registered.is_set, "the registration")  # type: ignore[attr-defined]
            created = wait_for(create, "a Karta admitted through the registered webhooks")
            # Stamped by the mutating webhook (mkarta.run.ai) in the answer to the create itself.
            assert created["metadata"]["labels"]["run.ai/karta-kind"] == f"Reg{tag}"
    finally:
        cluster.delete(f"{MWC}/{options.mutating_webhook_name}")
        cluster.delete(f"{VWC}/{options.validating_webhook_name}")
        cluster.delete(f"/apis/run.ai/v1alpha1/kartas/{name}")
        kube_client.delete("secrets", options.webhook_cert_secret, namespace=namespace)


def test_a_ca_bundle_wiped_by_a_chart_upgrade_is_patched_again(
    kube_client: KubeClient, webhook_probe: WebhookProbe, cluster: KubeHTTP, namespace: str, tmp_path: Path
) -> None:
    options = base_options(
        namespace,
        tmp_path,
        webhook_port=webhook_probe.port,
        webhook_url=webhook_probe.url,
        validating_webhook_name=webhook_probe.name,
    )
    controller = build(options, kube_client)
    certs = controller.parts["certs"]
    assert isinstance(certs, CertManager)
    certs.interval = 0.3
    with running(controller):
        bundle = wait_for(lambda: webhook_probe.ca_bundle(), "the caBundle to be patched")
        wiped = cluster.request(
            "PATCH",
            f"{VWC}/{webhook_probe.name}",
            body=[{"op": "remove", "path": "/webhooks/0/clientConfig/caBundle"}],
            content_type="application/json-patch+json",
        )
        assert wiped.status == 200, wiped.body
        wait_for(lambda: webhook_probe.ca_bundle() == bundle, "the caBundle to be restored")
    kube_client.delete("secrets", options.webhook_cert_secret, namespace=namespace)
