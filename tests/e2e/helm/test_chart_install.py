"""The chart on the real API server: ``helm install`` (the CRD established, every object accepted),
``helm upgrade`` to a chart whose CRD changed, ``helm uninstall`` leaving only the kept CRD, a
reinstall adopting it, a CRD applied before adopted with ``--take-ownership``, a wrong value
refused at install time, and the non-default value set with cert-manager and Prometheus Operator
kinds (stand-in CRDs: no cert-manager runs here).

There is no kubelet (nor kube-controller-manager) in the test cluster: the Deployment is stored
and never gets a pod. That is all these tests need; the controller itself runs in
test_chart_rbac.py, outside the cluster, with the chart's ServiceAccount.

On our own control plane the first test deletes the Karta CRD other tests created (so that the
install creates it); every test leaves the packaged CRD behind.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.crd import load_crd
from karta.errors import ApiError
from karta.kube import ConfigOverrides, KubeClient

from ..controller.operator_support import karta_body, widget_crd
from ..controller.pods_support import wait
from ..kubehttp import KubeHTTP
from .helm_support import CHART, VALUE_SETS, Helm, by_kind, copy_chart, documents, one

CRD_NAME = "kartas.run.ai"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture(scope="module")
def client(cluster: KubeHTTP) -> Iterator[KubeClient]:
    kube = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig)))
    yield kube
    kube.close()


def _namespace() -> str:
    return f"karta-helm-{uuid.uuid4().hex[:8]}"


def _live(client: KubeClient, obj: dict[str, Any]) -> dict[str, Any] | None:
    """The object as the API server holds it, or None when it is not there."""
    client.discovery.invalidate()
    rtype = client.discovery.for_api_version(obj["apiVersion"], obj["kind"])
    meta = obj["metadata"]
    try:
        return dict(
            client.get(rtype, meta["name"], namespace=meta.get("namespace") if rtype.namespaced else None)
        )
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise


def _established(cluster: KubeHTTP) -> dict[str, Any] | None:
    got = cluster.get(f"{CRDS}/{CRD_NAME}")
    if got.status != 200:
        return None
    conditions = (got.json().get("status") or {}).get("conditions") or []
    ok = any(c["type"] == "Established" and c["status"] == "True" for c in conditions)
    return got.json() if ok else None


def _start_without_helms_crd(cluster: KubeHTTP) -> tuple[str, ...]:
    """The install's extra flags. On our own control plane the Karta CRD that other tests created
    is deleted, so that the install creates it. On a cluster of yours (KARTA_TEST_KUBECONFIG) it is
    never deleted, since that would delete your Kartas: the install adopts it (--take-ownership)."""
    if cluster.get(f"{CRDS}/{CRD_NAME}").status == 404:
        return ()
    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        return ("--take-ownership",)
    cluster.delete(f"{CRDS}/{CRD_NAME}")
    wait("the Karta CRD gone", lambda: cluster.get(f"{CRDS}/{CRD_NAME}").status == 404)
    return ()


def _restore_packaged_crd(cluster: KubeHTTP) -> None:
    """Leave the packaged CRD, without Helm's labels and the upgrade's column, for later tests."""
    live = cluster.get(f"{CRDS}/{CRD_NAME}")
    if live.status == 404:
        cluster.ensure_crd(load_crd())
        return
    body = load_crd()
    body["metadata"]["resourceVersion"] = live.json()["metadata"]["resourceVersion"]
    replaced = cluster.request("PUT", f"{CRDS}/{CRD_NAME}", body=body)
    assert replaced.status == 200, replaced.body


def _karta(name: str) -> dict[str, Any]:
    return karta_body(name, group="helm.example.com", version="v1", kind="Widget")


def _manifest(helm: Helm, release: str, namespace: str) -> list[dict[str, Any]]:
    return documents(helm.run("get", "manifest", release, "--namespace", namespace).out)


def test_install_upgrade_uninstall_and_reinstall(
    cluster_helm: Helm, cluster: KubeHTTP, client: KubeClient, tmp_path: Path
) -> None:
    namespace = _namespace()
    adopt = _start_without_helms_crd(cluster)
    try:
        installed = cluster_helm.run(
            "install", "karta", str(CHART), "--namespace", namespace, "--create-namespace", *adopt
        )
        assert "kubectl -n " + namespace + " rollout status deployment/karta" in installed.out  # NOTES.txt
        objects = _manifest(cluster_helm, "karta", namespace)
        kinds = sorted(o["kind"] for o in objects)
        assert kinds == sorted(
            [
                "ClusterRole",
                "ClusterRoleBinding",
                "CustomResourceDefinition",
                "Deployment",
                "MutatingWebhookConfiguration",
                "PodDisruptionBudget",
                "Role",
                "RoleBinding",
                "Service",
                "Service",
                "ServiceAccount",
                "ValidatingWebhookConfiguration",
            ]
        )
        crd = wait("the Karta CRD established", lambda: _established(cluster))
        assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        for obj in objects:
            live = _live(client, obj)
            assert live is not None, f"{obj['kind']} {obj['metadata']['name']} was not stored"
            assert live["metadata"]["labels"]["app.kubernetes.io/instance"] == "karta"
        # No kubelet: the Deployment is accepted, its pods never run.
        deployment = _live(client, one(objects, "Deployment"))
        assert deployment is not None and not (deployment.get("status") or {}).get("readyReplicas")
        status = yaml.safe_load(
            cluster_helm.run("status", "karta", "--namespace", namespace, "-o", "yaml").out
        )
        assert status["info"]["status"] == "deployed" and status["version"] == 1
        # The Karta webhooks are registered with failurePolicy Fail, and no controller answers.
        refused = cluster.post("/apis/run.ai/v1alpha1/kartas", _karta("helm-refused"))
        assert refused.status >= 400 and "karta-webhook" in str(refused.body), refused.body

        # Upgrade to a chart whose CRD has one more printer column, and a changed value.
        nxt = copy_chart(tmp_path)
        crd_file = nxt / "files" / "kartas.run.ai.yaml"
        doc = yaml.safe_load(crd_file.read_text())
        column = {
            "name": "Ready",
            "type": "string",
            "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
        }
        doc["spec"]["versions"][0]["additionalPrinterColumns"].append(column)
        crd_file.write_text(yaml.safe_dump(doc, sort_keys=False))
        chart_yaml = nxt / "Chart.yaml"
        chart_yaml.write_text(chart_yaml.read_text().replace("version: 0.1.0", "version: 0.1.1"))
        cluster_helm.run("upgrade", "karta", str(nxt), "--namespace", namespace, "--set", "logLevel=debug")

        def upgraded() -> bool:
            got = _established(cluster)
            return bool(got) and column in got["spec"]["versions"][0]["additionalPrinterColumns"]

        wait("the CRD's new printer column", upgraded)
        deployment = _live(client, one(objects, "Deployment"))
        assert deployment is not None
        args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        assert "--log-level=debug" in args
        assert deployment["metadata"]["labels"]["helm.sh/chart"] == "karta-0.1.1"
        status = yaml.safe_load(
            cluster_helm.run("status", "karta", "--namespace", namespace, "-o", "yaml").out
        )
        assert status["version"] == 2

        # Uninstall: everything goes but the CRD (resource policy keep), which stays established.
        removed = cluster_helm.run("uninstall", "karta", "--namespace", namespace)
        assert "kept due to the resource policy" in removed.out and CRD_NAME in removed.out
        for obj in objects:
            if obj["kind"] == "CustomResourceDefinition":
                continue
            wait(
                f"{obj['kind']} {obj['metadata']['name']} deleted", lambda obj=obj: _live(client, obj) is None
            )
        assert _established(cluster)
        assert cluster_helm.run("list", "--namespace", namespace, "-q").out.strip() == ""
        secrets = client.list("secrets", namespace=namespace).items
        assert not [s for s in secrets if s["metadata"]["name"].startswith("sh.helm.release")]
        # Kartas can be written again (no webhook), and outlive the next install and uninstall.
        created = cluster.post("/apis/run.ai/v1alpha1/kartas", _karta("helm-kept"))
        assert created.status == 201, created.body

        # A reinstall under the same name adopts the kept CRD (its ownership annotations match).
        cluster_helm.run(
            "install", "karta", str(nxt), "--namespace", namespace, "--set", "webhook.enabled=false"
        )
        assert cluster.get("/apis/run.ai/v1alpha1/kartas/helm-kept").status == 200
        cluster_helm.run("uninstall", "karta", "--namespace", namespace)
        assert cluster.get("/apis/run.ai/v1alpha1/kartas/helm-kept").status == 200
        assert _established(cluster)
    finally:
        cluster_helm.run("uninstall", "karta", "--namespace", namespace, "--ignore-not-found", check=False)
        cluster.delete("/apis/run.ai/v1alpha1/kartas/helm-kept")
        cluster.delete(f"/api/v1/namespaces/{namespace}")
        _restore_packaged_crd(cluster)


def test_a_crd_applied_before_is_adopted_with_take_ownership(cluster_helm: Helm, cluster: KubeHTTP) -> None:
    """The CRD applied by kubectl (here: the packaged one, as `kli crd | kubectl apply -f -` would)
    is not Helm's: a plain install refuses it, --take-ownership adopts it, uninstall keeps it."""
    namespace = _namespace()
    _restore_packaged_crd(cluster)
    args = ("--namespace", namespace, "--create-namespace", "--set", "webhook.enabled=false")
    try:
        refused = cluster_helm.run("install", "karta", str(CHART), *args, check=False)
        assert refused.code == 1 and "invalid ownership metadata" in refused.err, refused.err
        cluster_helm.run("uninstall", "karta", "--namespace", namespace, "--ignore-not-found", check=False)
        cluster_helm.run("install", "karta", str(CHART), *args, "--take-ownership")
        crd = wait("the adopted CRD", lambda: _established(cluster))
        assert crd["metadata"]["annotations"]["meta.helm.sh/release-name"] == "karta"
        assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        cluster_helm.run("uninstall", "karta", "--namespace", namespace)
        assert _established(cluster)
    finally:
        cluster_helm.run("uninstall", "karta", "--namespace", namespace, "--ignore-not-found", check=False)
        cluster.delete(f"/api/v1/namespaces/{namespace}")
        _restore_packaged_crd(cluster)


def test_a_wrong_value_fails_the_install_and_creates_nothing(cluster_helm: Helm, cluster: KubeHTTP) -> None:
    namespace = _namespace()
    result = cluster_helm.run(
        "install",
        "bad",
        str(CHART),
        "--namespace",
        namespace,
        "--create-namespace",
        "--set",
        "backend=slurm",
        check=False,
    )
    assert result.code == 1
    assert "values don't meet the specifications of the schema" in result.err
    assert "at '/backend': value must be one of" in result.err
    assert cluster.get(f"/api/v1/namespaces/{namespace}").status == 404  # refused before anything was sent
    assert cluster.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/bad-karta").status == 404


# Schema-less CRDs for the kinds whose operators are not in the test cluster (cert-manager,
# Prometheus Operator): the API server stores the objects, it does not validate their fields.
STAND_INS = (
    ("cert-manager.io", "Certificate", "certificates"),
    ("cert-manager.io", "Issuer", "issuers"),
    ("monitoring.coreos.com", "ServiceMonitor", "servicemonitors"),
)


def test_mode_b_with_cert_manager_and_a_service_monitor_installs(
    cluster_helm: Helm, cluster: KubeHTTP, client: KubeClient
) -> None:
    namespace = _namespace()
    for group, kind, _plural in STAND_INS:
        cluster.ensure_crd(widget_crd(group, kind))
    # crds.install=false: the Karta CRD may be kept by another release (test above).
    args = (*VALUE_SETS["mode-b-cert-manager"], "--set", "crds.install=false")
    try:
        cluster_helm.run(
            "install", "gangs", str(CHART), "--namespace", namespace, "--create-namespace", *args
        )
        objects = _manifest(cluster_helm, "gangs", namespace)
        for kind in ("Certificate", "Issuer", "ServiceMonitor", "Deployment", "MutatingWebhookConfiguration"):
            assert by_kind(objects, kind), kind
        for obj in objects:
            assert _live(client, obj) is not None, f"{obj['kind']} {obj['metadata']['name']} was not stored"
        mutating = _live(client, one(objects, "MutatingWebhookConfiguration"))
        assert mutating is not None
        assert (
            mutating["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
            == f"{namespace}/gangs-karta-webhook"
        )
        assert [w["name"] for w in mutating["webhooks"]] == ["mkarta.run.ai", "pods.karta.run.ai"]
    finally:
        # Its pod webhook has failurePolicy Fail: remove it before anything else creates pods.
        cluster_helm.run("uninstall", "gangs", "--namespace", namespace, "--ignore-not-found", check=False)
        cluster.delete(f"/api/v1/namespaces/{namespace}")
        for group, _kind, plural in STAND_INS:
            cluster.delete(f"{CRDS}/{plural}.{group}")
    assert (
        cluster.get(
            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/gangs-karta-mutating"
        ).status
        == 404
    )
