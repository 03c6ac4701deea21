"""hack/cluster/controlplane.py's Kueue wiring without Go: Kueue's webhook configurations and
conversion webhooks moved from its install's Service to ``clientConfig.url`` on the loopback port
with the test CA, the namespace limits its kustomization adds, its Configuration completed with
this process's ports and certificates, and ``kubectl -o json``'s stream of documents read; the
aggregation layer's API server flags and Kueue's visibility API behind it (its server on the host's
non-loopback address with a Service, an EndpointSlice and the APIServices; without such an address
on 127.0.0.1 behind an ExternalName Service, the aggregator routing to Services)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.e2e.conftest import hack_module


def _module() -> ModuleType:
    return hack_module("cluster/controlplane.py")


def _plane(tmp_path: Path, kueue: dict[str, Any], monkeypatch: pytest.MonkeyPatch | None = None) -> Any:
    """A control plane not started; with ``monkeypatch``, ports counted from 20000 (the address
    of KARTA_CLUSTER_HOST_ADDRESS need not be this machine's)."""
    cp_mod = _module()
    if monkeypatch is not None:
        ports = iter(range(20000, 20100))
        monkeypatch.setattr(cp_mod, "free_port", lambda host="127.0.0.1": next(ports))
    config = cp_mod.ControlPlaneConfig(bin_dir=tmp_path / "bin", kueue=kueue)
    cp = cp_mod.ControlPlane(config=config, workdir=tmp_path / "cp")
    cp.pki.mkdir(parents=True)
    (cp.pki / "ca.crt").write_bytes(b"test CA")
    cp.kueue_webhook_port = 12345
    return cp


def _webhook(name: str, path: str) -> dict[str, Any]:
    return {
        "name": name,
        "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": path}},
        "rules": [],
    }


def test_webhooks_and_conversion_point_at_the_loopback_server(tmp_path: Path) -> None:
    cp = _plane(tmp_path, {"namespace": "queues"})
    mutating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "mutating-webhook-configuration"},
        "webhooks": [
            _webhook("mpod.kb.io", "/mutate--v1-pod"),
            _webhook("mjob.kb.io", "/mutate-batch-v1-job"),
        ],
    }
    converted = {
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "workloads.kueue.x-k8s.io"},
        "spec": {"conversion": {"strategy": "Webhook"}},
    }
    plain = {
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "topologies.kueue.x-k8s.io"},
        "spec": {},
    }
    objects = [mutating, converted, plain]
    out = cp._kueue_webhooks(objects)
    assert objects[0]["webhooks"][0]["clientConfig"]["service"]  # the input is left as it was
    ca = base64.b64encode(b"test CA").decode()
    hook, crd, untouched = out
    assert hook["metadata"]["name"] == "kueue-mutating-webhook-configuration"
    pod, job = hook["webhooks"]
    assert pod["clientConfig"] == {"url": "https://127.0.0.1:12345/mutate--v1-pod", "caBundle": ca}
    assert job["clientConfig"] == {"url": "https://127.0.0.1:12345/mutate-batch-v1-job", "caBundle": ca}
    assert pod["namespaceSelector"]["matchExpressions"] == [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "queues"]}
    ]
    assert "namespaceSelector" not in job
    assert crd["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"url": "https://127.0.0.1:12345/convert", "caBundle": ca},
            "conversionReviewVersions": ["v1"],
        },
    }
    assert untouched == plain


def test_the_configuration_gets_this_processs_ports_and_certificates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KARTA_CLUSTER_HOST_ADDRESS", "192.0.2.7")
    given = {"integrations": {"frameworks": ["batch/job"]}, "featureGates": {"TopologyAwareScheduling": True}}
    cp = _plane(tmp_path, given, monkeypatch)
    (tmp_path / "cp" / "kueue").mkdir(parents=True)
    args = cp._kueue_args(1111, 2222)
    port = cp.kueue_visibility_port
    assert port > 0
    assert args == [
        f"--config={tmp_path / 'cp' / 'kueue' / 'config.yaml'}",
        f"--kubeconfig={tmp_path / 'cp' / 'kubeconfig'}",  # the visibility server's delegated auth
        f"--visibility-server-port={port}",
    ]
    config = json.loads((tmp_path / "cp" / "kueue" / "config.yaml").read_text())
    assert config == {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "integrations": {"frameworks": ["batch/job"]},
        "health": {"healthProbeBindAddress": "127.0.0.1:1111"},
        "metrics": {"bindAddress": "127.0.0.1:2222"},
        "webhook": {"host": "127.0.0.1", "port": 12345, "certDir": str(tmp_path / "cp" / "kueue" / "certs")},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "visibilityServer": {"bindAddress": "192.0.2.7", "bindPort": port},
        "featureGates": {"TopologyAwareScheduling": True},
    }
    # A second start (the first lost a port) moves the webhook server to a new port.
    cp._kueue_args(3333, 4444)
    assert cp.kueue_webhook_port != 12345
    config = json.loads((tmp_path / "cp" / "kueue" / "config.yaml").read_text())
    assert config["webhook"]["port"] == cp.kueue_webhook_port


def test_without_a_routable_address_the_visibility_server_is_behind_an_external_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KARTA_CLUSTER_HOST_ADDRESS", "none")
    cp = _plane(tmp_path, {"namespace": "queues"}, monkeypatch)
    assert "--enable-aggregator-routing=false" in cp._apiserver_args()
    (tmp_path / "cp" / "kueue").mkdir(parents=True)
    cp._kueue_args(1111, 2222)
    port = cp.kueue_visibility_port
    config = json.loads((tmp_path / "cp" / "kueue" / "config.yaml").read_text())
    assert config["visibilityServer"] == {"bindAddress": "127.0.0.1", "bindPort": port}
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(cp, "_kubectl", lambda kubectl, *args: calls.append(args) or "")
    cp._register_kueue_visibility(Path("kubectl"))
    service, *apis = json.loads((tmp_path / "cp" / "kueue" / "visibility.json").read_text())["items"]
    assert service["spec"] == {
        "type": "ExternalName",
        "externalName": "127.0.0.1",
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }
    assert [a["kind"] for a in apis] == ["APIService", "APIService"]  # no EndpointSlice
    assert apis[0]["spec"]["service"] == {
        "name": "kueue-visibility-server",
        "namespace": "queues",
        "port": port,
    }


def test_visibility_off_in_the_configuration_registers_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cp = _plane(tmp_path, {"featureGates": {"VisibilityOnDemand": False}}, monkeypatch)
    (tmp_path / "cp" / "kueue").mkdir(parents=True)
    assert cp._kueue_args(1111, 2222) == [f"--config={tmp_path / 'cp' / 'kueue' / 'config.yaml'}"]
    config = json.loads((tmp_path / "cp" / "kueue" / "config.yaml").read_text())
    assert config["featureGates"] == {"VisibilityOnDemand": False}
    assert "visibilityServer" not in config and cp.kueue_visibility_port == 0
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(cp, "_kubectl", lambda kubectl, *args: calls.append(args) or "")
    cp._register_kueue_visibility(Path("kubectl"))
    assert calls == []


def test_the_visibility_api_behind_the_aggregation_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KARTA_CLUSTER_HOST_ADDRESS", "192.0.2.7")
    cp = _plane(tmp_path, {"namespace": "queues"}, monkeypatch)
    (tmp_path / "cp" / "kueue").mkdir(parents=True)
    cp._kueue_args(1111, 2222)
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(cp, "_kubectl", lambda kubectl, *args: calls.append(args) or "")
    cp._register_kueue_visibility(Path("kubectl"))
    apply, wait = calls
    assert apply[:3] == ("apply", "--server-side", "--force-conflicts")
    objects = json.loads((tmp_path / "cp" / "kueue" / "visibility.json").read_text())["items"]
    service, slice_, *apis = objects
    assert service["metadata"] == {"name": "kueue-visibility-server", "namespace": "queues"}
    assert "selector" not in service["spec"]  # its EndpointSlice is ours
    assert slice_["metadata"]["labels"]["kubernetes.io/service-name"] == "kueue-visibility-server"
    assert slice_["endpoints"] == [{"addresses": ["192.0.2.7"], "conditions": {"ready": True}}]
    assert slice_["ports"] == [{"name": "https", "port": cp.kueue_visibility_port, "protocol": "TCP"}]
    assert [a["metadata"]["name"] for a in apis] == [
        "v1beta2.visibility.kueue.x-k8s.io",
        "v1beta1.visibility.kueue.x-k8s.io",
    ]
    assert apis[0]["spec"]["service"] == {
        "name": "kueue-visibility-server",
        "namespace": "queues",
        "port": 443,
    }
    assert wait == (
        "wait",
        "--for=condition=Available",
        "--timeout=60s",
        "apiservice/v1beta2.visibility.kueue.x-k8s.io",
        "apiservice/v1beta1.visibility.kueue.x-k8s.io",
    )


def test_the_host_address_is_never_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    cp_mod = _module()
    monkeypatch.setenv("KARTA_CLUSTER_HOST_ADDRESS", "none")
    assert cp_mod.host_address() is None
    for bad in ("127.0.0.1", "169.254.1.1", "0.0.0.0", "::1", "fe80::1", "not-an-ip"):
        assert not cp_mod._routable(bad)
        monkeypatch.setenv("KARTA_CLUSTER_HOST_ADDRESS", bad)
        with pytest.raises(cp_mod.ControlPlaneError, match="not a non-loopback IPv4 address"):
            cp_mod.host_address()
    monkeypatch.setenv("KARTA_CLUSTER_HOST_ADDRESS", "10.1.2.3")
    assert cp_mod.host_address() == "10.1.2.3"
    monkeypatch.delenv("KARTA_CLUSTER_HOST_ADDRESS")
    found = cp_mod.host_address()
    assert found is None or cp_mod._routable(found)


def test_the_api_server_runs_the_aggregation_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KARTA_CLUSTER_HOST_ADDRESS", "192.0.2.7")
    cp = _plane(tmp_path, {})
    args = cp._apiserver_args()
    pki = tmp_path / "cp" / "pki"
    for flag in (
        f"--requestheader-client-ca-file={pki / 'front-proxy-ca.crt'}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={pki / 'front-proxy-client.crt'}",
        f"--proxy-client-key-file={pki / 'front-proxy-client.key'}",
        "--enable-aggregator-routing=true",
    ):
        assert flag in args


def test_a_stream_of_json_documents() -> None:
    text = '{"kind": "A"}\n{\n  "kind": "B"\n}\n  '
    assert _module()._json_stream(text) == [{"kind": "A"}, {"kind": "B"}]
    assert _module()._json_stream("") == []
