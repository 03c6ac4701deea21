"""The chart with ``kueue.enabled=true`` on the real Kueue (``kueue_cluster``): ``helm install``
renders the controller with ``--kueue``, the suspend webhook (its rules the catalog's managed kinds,
scoped by the queue label, ``Fail``) and the RBAC of the Kueue part; ``karta-controller`` runs with
the identity of the chart's ServiceAccount (a TokenRequest token) and the flags of the chart's
Deployment (only where it listens changes: there is no kubelet, so no pod runs it; as
test_chart_rbac.py does), and a labelled PyTorchJob is suspended at creation by the chart's webhook,
gets its Kueue Workload, is admitted and resumed with the flavor's node selector. The API server
never answers 403 to the controller, the identity's rules are exactly the library's
(karta.controller.rbac), and they cover what ``kli rbac --backend kueue`` reads."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import catalog_definitions
from karta.controller.main import Controller, build
from karta.controller.parts.kueue.reconciler import KueueReconciler
from karta.controller.parts.kueue.webhook import WEBHOOK_NAME, webhook_rules
from karta.controller.rbac import controller_rbac
from karta.controller.registration import webhook_configurations
from karta.crd import load_crd
from karta.kube import ConfigOverrides, KubeClient
from karta.rbac import build_rbac

from ..controller.kueue_support import PYTORCHJOBS, admitted, job, pods, pytorchjob, suspended, workload_of
from ..kubehttp import KubeHTTP, load_manifests, ok, wait
from ..test_kueue_live import Queues
from .helm_support import (
    CHART,
    Helm,
    by_kind,
    controller_options,
    documents,
    outside_the_cluster,
    point_webhooks_at,
    record_forbidden,
    token_kubeconfig,
)
from .test_chart_rbac import _expand, _review, _rules_review

RELEASE = "karta-kueue"


@dataclass
class Setup:
    release_ns: str
    queues: Queues
    controller: Controller
    manifest: list[dict[str, Any]]
    kubeconfig: Path
    forbidden: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture(scope="module")
def setup(
    helm_binary: Path, kueue_cluster: KubeHTTP, corpus: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Setup]:
    kube = kueue_cluster
    workdir = tmp_path_factory.mktemp("chart-kueue")
    helm = Helm(helm_binary, workdir / "helm-home", kubeconfig=kube.kubeconfig)
    kube.ensure_crd(load_crd())
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    kube.ensure_crd(crd)
    q = Queues(kube)
    release_ns = f"karta-kueue-{uuid.uuid4().hex[:6]}"
    values = {
        "kueue": {"enabled": True},
        "crds": {"install": False},  # the session's Karta CRD, as test_chart_rbac.py
        "watchNamespaces": [q.ns],
    }
    (workdir / "values.yaml").write_text(yaml.safe_dump(values))
    forbidden: list[str] = []
    lock = threading.Lock()

    controller: Controller | None = None
    client: KubeClient | None = None
    with pytest.MonkeyPatch.context() as patch:
        try:
            helm.run(
                "install", RELEASE, str(CHART), "--namespace", release_ns, "--create-namespace",
                "--values", str(workdir / "values.yaml"),
            )  # fmt: skip
            manifest = documents(helm.run("get", "manifest", RELEASE, "--namespace", release_ns).out)
            (account,) = {o["metadata"]["name"] for o in by_kind(manifest, "ServiceAccount")}
            kubeconfig = token_kubeconfig(kube, release_ns, account, workdir / "sa.kubeconfig")
            options = outside_the_cluster(controller_options(manifest), kubeconfig, workdir)
            assert options.kueue, "kueue.enabled renders --kueue"
            record_forbidden(patch, forbidden, lock)
            client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(kubeconfig)))
            controller = build(options, client)
            reconciler = controller.parts["kueue"]
            assert isinstance(reconciler, KueueReconciler)
            reconciler.types_interval = 1.0
            controller.manager.start()
            assert controller.webhooks is not None
            wait("the webhook server", controller.webhooks.serving.is_set, timeout=60)
            point_webhooks_at(kube, manifest, f"https://127.0.0.1:{controller.webhooks.bound_port}")
            wait(
                "controller ready",
                lambda: controller is not None and controller.manager.ready()[0],
                timeout=60,
            )
            wait(
                "the Kueue part to follow PyTorchJobs",
                lambda: any(g.kind == "PyTorchJob" for g in reconciler.watched_types().values()),
                timeout=60,
            )

            def webhook_called() -> bool:
                probe = pytorchjob(q, f"probe-{uuid.uuid4().hex[:4]}")
                return suspended(ok(kube.post(PYTORCHJOBS.format(ns=q.ns), probe, params={"dryRun": "All"})))

            wait("the API server to call the chart's suspend webhook", webhook_called, timeout=60)
            yield Setup(release_ns, q, controller, manifest, kubeconfig, forbidden, lock)
        finally:
            if controller is not None:
                controller.manager.shutdown()
            if client is not None:
                client.close()
            helm.run("uninstall", RELEASE, "--namespace", release_ns, "--ignore-not-found", check=False)
            kube.delete(f"/api/v1/namespaces/{release_ns}")
            q.close()


def test_the_chart_renders_the_suspend_webhook_scoped_by_the_queue_label(setup: Setup) -> None:
    (config,) = by_kind(setup.manifest, "MutatingWebhookConfiguration")
    (entry,) = [w for w in config["webhooks"] if w["name"] == WEBHOOK_NAME]
    assert entry["failurePolicy"] == "Fail"
    assert entry["objectSelector"] == {
        "matchExpressions": [{"key": "kueue.x-k8s.io/queue-name", "operator": "Exists"}]
    }
    rules = webhook_rules(catalog_definitions())
    assert entry["rules"] == rules
    # what the controller itself registers for the chart's flags (its caBundle is patched in)
    mutating, _ = webhook_configurations(
        setup.controller.options, namespace=setup.release_ns, kueue_rules=rules
    )
    (want,) = [w for w in mutating["webhooks"] if w["name"] == WEBHOOK_NAME]
    assert {**entry, "clientConfig": want["clientConfig"]} == want
    # watchNamespaces: only there (a workload suspended elsewhere would never be resumed)
    assert entry["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [setup.queues.ns]}
        ]
    }
    covered = {(r["apiGroups"][0], r["resources"][0]) for r in entry["rules"]}
    assert ("kubeflow.org", "pytorchjobs") in covered and ("jobset.x-k8s.io", "jobsets") in covered
    assert ("apps", "deployments") not in covered  # no suspend actions: never queued
    assert all(r["operations"] == ["CREATE"] for r in entry["rules"])


def test_a_labelled_pytorchjob_is_suspended_admitted_and_resumed(
    setup: Setup, kueue_cluster: KubeHTTP
) -> None:
    kube, q = kueue_cluster, setup.queues
    created = ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "charted")))
    assert suspended(created), "the chart's webhook suspends a queued workload at creation"
    wl = wait("its Workload to be admitted", lambda: admitted(q, "charted"))
    assert wl["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    assert wl["spec"]["queueName"] == q.lq
    running = wait("the job to be resumed", lambda: not suspended(j := job(kube, q, "charted")) and j)
    spec = running["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert spec["nodeSelector"] == q.node_labels
    assert q.toleration in spec["tolerations"]
    made = wait("its pods", lambda: pods(kube, q, "charted"))
    assert all(p["spec"]["nodeSelector"] == q.node_labels for p in made)

    ok(kube.delete(f"{PYTORCHJOBS.format(ns=q.ns)}/charted"))
    wait("its Workload to be gone with it", lambda: workload_of(q, "charted") is None)


def test_the_rbac_lets_the_kueue_part_write_workloads_and_patch_the_covered_kinds(
    setup: Setup, kueue_cluster: KubeHTTP
) -> None:
    ns = setup.queues.ns
    allowed = [
        {"namespace": ns, "group": "kueue.x-k8s.io", "resource": "workloads", "verb": v}
        for v in ("create", "update", "patch", "delete", "watch")
    ]
    allowed += [
        {"namespace": ns, "group": "kueue.x-k8s.io", "resource": "workloads", "subresource": "status",
         "verb": "patch"},
        {"group": "kueue.x-k8s.io", "resource": "resourceflavors", "verb": "list"},
        {"group": "kueue.x-k8s.io", "resource": "workloadpriorityclasses", "verb": "get"},
    ]  # fmt: skip
    for group, resource in (
        ("kubeflow.org", "pytorchjobs"),
        ("jobset.x-k8s.io", "jobsets"),
        ("ray.io", "rayjobs"),
    ):
        allowed += [
            {"namespace": ns, "group": group, "resource": resource, "verb": v} for v in ("update", "patch")
        ]
    denied = [
        {"namespace": ns, "group": "kubeflow.org", "resource": "pytorchjobs", "verb": "delete"},
        {"namespace": ns, "group": "kubeflow.org", "resource": "pytorchjobs", "verb": "create"},
        {"namespace": ns, "group": "apps", "resource": "deployments", "verb": "update"},
        {"group": "kueue.x-k8s.io", "resource": "clusterqueues", "verb": "update"},
        {"group": "kueue.x-k8s.io", "resource": "resourceflavors", "verb": "update"},
        {"namespace": ns, "group": "kueue.x-k8s.io", "resource": "localqueues", "verb": "delete"},
    ]
    account = _account(setup)
    wrongly_denied = [a for a in allowed if not _review(kueue_cluster, account, a)]
    wrongly_allowed = [a for a in denied if _review(kueue_cluster, account, a)]
    assert not wrongly_denied and not wrongly_allowed, (wrongly_denied, wrongly_allowed)


def test_the_identitys_rules_are_the_librarys_and_cover_kli_rbac(
    setup: Setup, kueue_cluster: KubeHTTP, tmp_path: Path
) -> None:
    """SelfSubjectRulesReview of the chart's account in the workloads' namespace: exactly the
    cluster rules of karta.controller.rbac for the chart's flags (``--kueue`` among them) plus what
    an account with no binding has, and they include every right ``kli rbac --backend kueue``
    gives on Workloads (kli's reader of the catalog's definitions)."""
    ok(kueue_cluster.post(
        f"/api/v1/namespaces/{setup.release_ns}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody"}},
    ))  # fmt: skip
    nobody = token_kubeconfig(kueue_cluster, setup.release_ns, "nobody", tmp_path / "nobody.kubeconfig")
    granted = _rules_review(setup.kubeconfig, setup.queues.ns)
    library = controller_rbac(setup.controller.options, catalog_definitions())
    assert granted == _expand(library.cluster_rules) | _rules_review(nobody, setup.queues.ns)
    objects, _notes = build_rbac(catalog_definitions(), name="reader", backends=("kueue",))
    reads = _expand(objects[0]["rules"])
    workloads = {r for r in reads if r[:2] == ("kueue.x-k8s.io", "workloads")}
    assert {verb for _g, _r, verb, _n in workloads} >= {"get", "list", "watch", "create", "update"}
    assert workloads <= granted
    # kli's reader also reads ClusterQueues and LocalQueues (kli get shows the queue); the
    # controller reads them only for the web view (--ui), which these values leave off.
    assert not {r for r in granted if r[1] in ("clusterqueues", "localqueues")}


def test_the_api_server_never_refused_the_controller(setup: Setup) -> None:
    assert setup.controller.manager.ready()[0]
    with setup.lock:
        assert setup.forbidden == []


@dataclass
class _Account:
    """What test_chart_rbac's ``_review`` reads of its Setup."""

    release_ns: str
    account: str


def _account(setup: Setup) -> Any:
    (name,) = {o["metadata"]["name"] for o in by_kind(setup.manifest, "ServiceAccount")}
    return _Account(setup.release_ns, name)
