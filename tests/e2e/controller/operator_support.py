"""Helpers for the operator and Karta webhook tests against the real API server.

Owns: Karta bodies (from the catalog's Job definition, re-targeted at any root GVK), a throwaway
CRD, a CA and a serving certificate for 127.0.0.1 (``cryptography``), the in-process controller
(:func:`start_controller`: ``build`` + ``manager.start``), admission webhook configurations
pointing at it, and polling with a deadline for what the controller does eventually.
"""

from __future__ import annotations

import base64
import copy
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import yaml

from karta.catalog import CATALOG_DATA_DIR
from karta.controller.main import Controller, build
from karta.controller.options import Options
from karta.crd import load_crd
from karta.kube import ConfigOverrides, KubeClient

from ..kubehttp import KubeHTTP

KARTAS = "/apis/run.ai/v1alpha1/kartas"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
EVENTS = "/api/v1/namespaces/default/events"
DEADLINE_S = 30.0
T = TypeVar("T")


def eventually(probe: Callable[[], T | None], *, what: str, timeout: float = DEADLINE_S) -> T:
    """Poll ``probe`` until it returns something other than None/False; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while True:
        last = probe()
        if last is not None and last is not False:
            return last
        assert time.monotonic() < deadline, f"{what}: not within {timeout}s"
        time.sleep(0.1)


def install_karta_crd(cluster: KubeHTTP) -> None:
    cluster.ensure_crd(load_crd())


def karta_body(
    name: str, *, group: str, version: str, kind: str, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    doc = copy.deepcopy(yaml.safe_load((CATALOG_DATA_DIR / "batch-job-v1.yaml").read_text()))
    doc["metadata"] = {"name": name, **({"labels": labels} if labels else {})}
    doc["spec"]["structureDefinition"]["rootComponent"]["kind"] = {
        "group": group,
        "version": version,
        "kind": kind,
    }
    return dict(doc)


def widget_crd(group: str, kind: str, *, versions: tuple[str, ...] = ("v1",)) -> dict[str, Any]:
    plural = kind.lower() + "s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": i == 0,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
                for i, v in enumerate(versions)
            ],
        },
    }


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return dict(c)
    return None


def get_karta(cluster: KubeHTTP, name: str) -> dict[str, Any]:
    return cluster.get(f"{KARTAS}/{name}").json()


def wait_condition(cluster: KubeHTTP, name: str, type_: str, status: str, reason: str) -> dict[str, Any]:
    """The Karta once its ``type_`` condition has ``status`` and ``reason``."""

    def probe() -> dict[str, Any] | None:
        obj = get_karta(cluster, name)
        c = condition(obj, type_)
        return obj if c is not None and (c["status"], c["reason"]) == (status, reason) else None

    return eventually(probe, what=f"{name}: {type_}={status} ({reason})")


def events_for(cluster: KubeHTTP, name: str, reason: str) -> list[dict[str, Any]]:
    items = cluster.get(EVENTS, params={"fieldSelector": f"involvedObject.name={name}"}).json()["items"]
    return [e for e in items if e.get("reason") == reason]


# ------------------------------------------------------------------------------- certificates


# ------------------------------------------------------------------------------- the controller


@contextmanager
def start_controller(
    cluster: KubeHTTP, *, as_user: str | None = None, **options: Any
) -> Iterator[Controller]:
    """The controller built as ``main`` builds it, running in this process until the block ends
    (as the session's admin, or impersonating ``as_user``)."""
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig), as_user=as_user))
    opts = Options(
        kubeconfig=str(cluster.kubeconfig),
        metrics_bind_address="0",
        health_probe_bind_address="0",
        shutdown_timeout=15.0,
        **options,
    )
    controller = build(opts, client)
    controller.manager.start()
    try:
        eventually(lambda: controller.manager.ready()[0], what="controller ready")
        yield controller
    finally:
        controller.manager.shutdown()
        client.close()


def manual_webhooks(cert_dir: Path) -> dict[str, Any]:
    """The :func:`start_controller` options for webhooks on a free port of 127.0.0.1 serving the
    certificate in ``cert_dir`` (``--webhook-cert-mode manual``)."""
    return {
        "enable_webhook": True,
        "webhook_host": "127.0.0.1",
        "webhook_port": 0,
        "webhook_cert_dir": cert_dir,
        "webhook_cert_mode": "manual",
    }


def wait_webhooks_active(
    cluster: KubeHTTP, *, name: str, group: str, kind: str, labels: dict[str, str]
) -> None:
    """The API server picks webhook configurations up asynchronously: probe with a Karta the
    validating webhook rejects (an invalid one, named ``name``, carrying ``labels`` for the
    configurations' selector) until it does."""
    probe = karta_body(name, group=group, version="v1", kind=kind, labels=labels)
    probe["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {"replicasPath": "[..]"}

    def rejected() -> bool:
        answer = cluster.post(KARTAS, probe)
        if answer.status == 201:
            cluster.delete(f"{KARTAS}/{name}")
            return False
        return "denied the request" in str(answer.body)

    eventually(rejected, what="webhooks active")


def webhook_configurations(
    *, name: str, port: int, ca: bytes, selector: dict[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The mutating and validating configurations of 15.3, at ``https://127.0.0.1:<port>``, for
    the Kartas carrying ``selector`` only (the session's other tests are not intercepted)."""
    common = {
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "failurePolicy": "Fail",
        "timeoutSeconds": 10,
        "objectSelector": {"matchLabels": selector},
    }
    bundle = base64.b64encode(ca).decode()

    def rule(operations: list[str]) -> dict[str, Any]:
        return {
            "apiGroups": ["run.ai"],
            "apiVersions": ["v1alpha1"],
            "resources": ["kartas"],
            "operations": operations,
            "scope": "Cluster",
        }

    mutating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": f"{name}-mutating"},
        "webhooks": [
            {
                "name": "mkarta.run.ai",
                "clientConfig": {
                    "url": f"https://127.0.0.1:{port}/mutate-run-ai-v1alpha1-karta",
                    "caBundle": bundle,
                },
                "rules": [rule(["CREATE"])],
                "reinvocationPolicy": "Never",
                **common,
            }
        ],
    }
    validating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": f"{name}-validating"},
        "webhooks": [
            {
                "name": "vkarta.run.ai",
                "clientConfig": {
                    "url": f"https://127.0.0.1:{port}/validate-run-ai-v1alpha1-karta",
                    "caBundle": bundle,
                },
                "rules": [rule(["CREATE", "UPDATE"])],
                **common,
            }
        ],
    }
    return mutating, validating
