"""hack/cluster/controlplane.py's Kueue wiring without Go: Kueue's webhook configurations and
conversion webhooks moved from its install's Service to ``clientConfig.url`` on the loopback port
with the test CA, the namespace limits its kustomization adds, its Configuration completed with
this process's ports and certificates, and ``kubectl -o json``'s stream of documents read."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.e2e.conftest import hack_module


def _module() -> ModuleType:
    return hack_module("cluster/controlplane.py")


def _plane(tmp_path: Path, kueue: dict[str, Any]) -> Any:
    cp_mod = _module()
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


def test_the_configuration_gets_this_processs_ports_and_certificates(tmp_path: Path) -> None:
    given = {"integrations": {"frameworks": ["batch/job"]}, "featureGates": {"TopologyAwareScheduling": True}}
    cp = _plane(tmp_path, given)
    (tmp_path / "cp" / "kueue").mkdir(parents=True)
    args = cp._kueue_args(1111, 2222)
    assert args == [f"--config={tmp_path / 'cp' / 'kueue' / 'config.yaml'}"]
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
        "featureGates": {"VisibilityOnDemand": False, "TopologyAwareScheduling": True},
    }
    # A second start (the first lost a port) moves the webhook server to a new port.
    cp._kueue_args(3333, 4444)
    assert cp.kueue_webhook_port != 12345
    config = json.loads((tmp_path / "cp" / "kueue" / "config.yaml").read_text())
    assert config["webhook"]["port"] == cp.kueue_webhook_port


def test_a_stream_of_json_documents() -> None:
    text = '{"kind": "A"}\n{\n  "kind": "B"\n}\n  '
    assert _module()._json_stream(text) == [{"kind": "A"}, {"kind": "B"}]
    assert _module()._json_stream("") == []
