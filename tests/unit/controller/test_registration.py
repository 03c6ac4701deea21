"""karta.controller.registration: the webhook configuration objects (pure)."""

from __future__ import annotations

import base64
from typing import Any

from karta.controller.options import Options, parse
from karta.controller.registration import webhook_configurations


def test_karta_webhooks_on_the_service_by_default() -> None:
    mutating, validating = webhook_configurations(Options(), namespace="karta-system")
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    assert mutating["metadata"]["name"] == "karta-operator-mutating"
    assert validating["metadata"]["name"] == "karta-operator-validating"
    (m,) = mutating["webhooks"]
    (v,) = validating["webhooks"]
    assert m["name"] == "mkarta.run.ai" and v["name"] == "vkarta.run.ai"
    assert m["clientConfig"] == {
        "service": {
            "name": "karta-operator-webhook",
            "namespace": "karta-system",
            "path": "/mutate-run-ai-v1alpha1-karta",
            "port": 443,
        }
    }
    assert v["clientConfig"]["service"]["path"] == "/validate-run-ai-v1alpha1-karta"
    assert m["failurePolicy"] == v["failurePolicy"] == "Fail"
    assert m["rules"][0]["operations"] == ["CREATE"]
    assert v["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert m["rules"][0]["resources"] == ["kartas"] and m["rules"][0]["apiGroups"] == ["run.ai"]
    assert "caBundle" not in m["clientConfig"]


def test_url_client_config_and_ca_bundle() -> None:
    options = Options(webhook_url="https://127.0.0.1:9443/")
    mutating, validating = webhook_configurations(options, namespace="ns", ca_bundle=b"PEM")
    config = validating["webhooks"][0]["clientConfig"]
    assert config == {
        "url": "https://127.0.0.1:9443/validate-run-ai-v1alpha1-karta",
        "caBundle": base64.b64encode(b"PEM").decode(),
    }
    assert mutating["webhooks"][0]["clientConfig"]["url"].endswith("/mutate-run-ai-v1alpha1-karta")


def test_pod_webhook_only_with_a_backend() -> None:
    (mutating, _) = webhook_configurations(Options(backend="none"), namespace="ns")
    assert [w["name"] for w in mutating["webhooks"]] == ["mkarta.run.ai"]
    (mutating, _) = webhook_configurations(Options(backend="volcano"), namespace="karta-system")
    pods = mutating["webhooks"][1]
    assert pods["name"] == "pods.karta.run.ai"
    assert pods["clientConfig"]["service"]["path"] == "/mutate--v1-pod"
    assert pods["rules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["pods"],
            "scope": "Namespaced",
        }
    ]
    assert pods["failurePolicy"] == "Fail"  # issue 22: never a pod of a gang placed without it
    assert pods["timeoutSeconds"] == 5
    assert pods["sideEffects"] == "NoneOnDryRun"
    assert pods["reinvocationPolicy"] == "Never"
    assert pods["namespaceSelector"] == {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["karta-system", "kube-system"],
            },
            {"key": "karta.run.ai/gang-scheduling", "operator": "In", "values": ["enabled", "opt-in"]},
        ]
    }


def test_pod_failure_policy_flag_and_register_flag() -> None:
    options, _ = parse(["--backend", "kai", "--pod-webhook-failure-policy", "Fail", "--register-webhooks"])
    assert options.register_webhooks is True
    (mutating, _) = webhook_configurations(options, namespace="kube-system")
    assert mutating["webhooks"][1]["failurePolicy"] == "Fail"
    assert mutating["webhooks"][1]["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system"]
    assert parse([])[0].register_webhooks is False
    assert parse(["--register-webhooks=false"])[0].register_webhooks is False


def test_pod_webhook_selector_follows_the_scope_and_the_exclusions() -> None:
    options, _ = parse(["--backend", "volcano", "--gang-scope", "all", "--exclude-namespace", "infra"])
    (mutating, _) = webhook_configurations(options, namespace="default", excluded=("infra",))
    assert mutating["webhooks"][1]["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["infra", "kube-system"]},
            {"key": "karta.run.ai/gang-scheduling", "operator": "NotIn", "values": ["disabled"]},
        ]
    }


def test_own_namespace_excluded_only_in_a_cluster() -> None:
    from types import SimpleNamespace

    from karta.controller.runtime.scope import excluded_namespaces

    def client(source: str, namespace: str) -> Any:
        return SimpleNamespace(config=SimpleNamespace(source=source), namespace=namespace)

    kubeconfig = client("kubeconfig /home/me/.kube/config", "default")
    assert excluded_namespaces((), client=kubeconfig, environ={}) == ()  # never the kubeconfig's
    assert excluded_namespaces(("x",), client=kubeconfig, environ={}) == ("x",)
    assert excluded_namespaces((), client=kubeconfig, environ={"POD_NAMESPACE": "karta"}) == ("karta",)
    in_cluster = client("in-cluster", "karta-system")
    assert excluded_namespaces(("x",), client=in_cluster, environ={}) == ("karta-system", "x")
