"""The chart's RBAC is exactly enough: ``karta-controller`` runs with the identity of the
ServiceAccount ``helm install`` created (a TokenRequest token in a kubeconfig), with the flags of
the chart's Deployment (parsed by the controller's own parser; only the addresses change to run
outside the cluster), through the controller's own scenarios: operator conditions, labels and
events, the gang objects of a Job and of a PyTorchJob, a pod bound by the pod webhook, the leader
Lease and the certificate Secret with the caBundle it patches into the chart's webhook
configurations, and the web view (``ui.enabled``) listing and watching every covered type, pods,
group objects and owners, and listing the Nodes (its GPU capacity page). The API server never
answers 403 to it. Then least privilege: SubjectAccessReviews say no to other Secrets, to writing
workloads and to kinds no definition names, and the rules the API server reports for the identity
(SelfSubjectRulesReview) are exactly the library's (karta.controller.rbac) plus what every account
has.

The API server cannot reach the chart's webhook Service (no kube-proxy, no pods): the test points
the two configurations the chart created at the in-process server's URL, as the Service would."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import catalog_definitions, catalog_slugs
from karta.controller.main import Controller, build, identity
from karta.controller.parts.catalog_install import CatalogInstaller
from karta.controller.parts.gangs import GangReconciler
from karta.controller.rbac import controller_rbac
from karta.crd import load_crd
from karta.gang import SCOPE_LABEL
from karta.kube import ConfigOverrides, KubeClient

from ..controller.gangs_support import (
    covers,
    expected_objects,
    group_objects,
    install_crds,
    pytorchjob,
    wait_served,
)
from ..controller.operator_support import karta_body, wait_condition, widget_crd
from ..controller.pods_support import batch_job, wait_webhook_active
from ..kubehttp import KubeHTTP
from .helm_support import (
    ADM,
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

RELEASE = "karta"
WIDGETS = "helm-rbac.example.com"  # the group of a user definition's kind, granted by rbac.extraRules


@dataclass
class Forbidden:
    """Every 403 the API server sent to any karta client while the controller ran."""

    seen: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Setup:
    release_ns: str
    work_ns: str
    account: str
    controller: Controller
    client: KubeClient  # the controller's: the ServiceAccount's token
    admin: KubeClient
    manifest: list[dict[str, Any]]
    forbidden: Forbidden
    extra_rules: list[dict[str, Any]]


def _namespace(cluster: KubeHTTP, prefix: str, labels: dict[str, str] | None = None) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    meta = {"name": name, "labels": labels or {}}
    created = cluster.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
    assert created.status == 201, created.body
    return name


@pytest.fixture(scope="module")
def setup(
    cluster_helm: Helm, cluster: KubeHTTP, corpus: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Setup]:
    workdir = tmp_path_factory.mktemp("chart-rbac")
    cluster.ensure_crd(load_crd())
    install_crds(cluster, corpus, ("kubeflow.org_pytorchjobs.yaml",))
    admin = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig)))
    wait_served(admin, [("kubeflow.org", "v1", "PyTorchJob"), ("scheduling.k8s.io", "v1beta1", "Workload")])
    release_ns = f"karta-rbac-{uuid.uuid4().hex[:6]}"
    # the chart's gang scope is opt-in (issue 22): the workloads' namespace opts in, as documented
    work_ns = _namespace(cluster, "karta-rbac-work", {SCOPE_LABEL: "enabled"})
    # A user's definition for a kind of its own (the Widget below) needs its rule: rbac.extraRules.
    extra = [{"apiGroups": [WIDGETS], "resources": ["widgets"], "verbs": ["get", "list", "watch"]}]
    values_file = workdir / "values.yaml"
    values_file.write_text(
        yaml.safe_dump(
            {
                "backend": "workload-api",
                "crds": {"install": False},  # another release may keep it (test_chart_install.py)
                "watchNamespaces": [work_ns],
                "definitions": {"installCatalog": True},
                "rbac": {"extraRules": extra},
                "ui": {"enabled": True},  # the web view runs too: its reads must be allowed
            }
        )
    )
    values = ("--values", str(values_file))
    forbidden = Forbidden()
    listed = _wait(
        "Kartas served", lambda: (r := cluster.get("/apis/run.ai/v1alpha1/kartas")).status == 200 and r
    )
    kartas_before = {k["metadata"]["name"] for k in listed.json()["items"]}
    controller: Controller | None = None
    client: KubeClient | None = None
    with pytest.MonkeyPatch.context() as patch:
        try:
            cluster_helm.run(
                "install", RELEASE, str(CHART), "--namespace", release_ns, "--create-namespace", *values
            )
            manifest = documents(cluster_helm.run("get", "manifest", RELEASE, "--namespace", release_ns).out)
            chart_options = controller_options(manifest)
            (account,) = {o["metadata"]["name"] for o in by_kind(manifest, "ServiceAccount")}
            kubeconfig = token_kubeconfig(cluster, release_ns, account, workdir / "sa.kubeconfig")
            # The chart's flags; only where to listen and to write files change outside a cluster.
            options = outside_the_cluster(chart_options, kubeconfig, workdir, ui_bind_address="127.0.0.1:0")
            record_forbidden(patch, forbidden.seen, forbidden.lock)
            client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(kubeconfig)))
            controller = build(options, client)
            gangs = controller.parts["gangs"]
            assert isinstance(gangs, GangReconciler)
            gangs.types_interval = 1.0
            controller.manager.start()
            assert controller.webhooks is not None
            _wait(
                "the webhook server (after the certificate Secret and caBundle)",
                controller.webhooks.serving.is_set,
            )
            point_webhooks_at(cluster, manifest, f"https://127.0.0.1:{controller.webhooks.bound_port}")
            _wait("controller ready", lambda: controller is not None and controller.manager.ready()[0])
            source = controller.parts["ui-source"]
            _wait("the web view's first sync", source.synced.is_set)
            yield Setup(release_ns, work_ns, account, controller, client, admin, manifest, forbidden, extra)
        finally:
            if controller is not None:
                controller.manager.shutdown()
                installer = controller.parts.get("catalog-installer")
                for name in getattr(getattr(installer, "result", None), "applied", []):
                    if name not in kartas_before:  # leave the session's cluster as other tests expect it
                        cluster.delete(f"/apis/run.ai/v1alpha1/kartas/{name}")
                close = getattr(controller.parts.get("pod-admission"), "close", None)
                if close is not None:
                    close()
            if client is not None:
                client.close()
            cluster_helm.run(
                "uninstall", RELEASE, "--namespace", release_ns, "--ignore-not-found", check=False
            )
            cluster.delete(f"/api/v1/namespaces/{release_ns}")
            cluster.delete(f"/api/v1/namespaces/{work_ns}")
            admin.close()


def _wait(what: str, probe: Any, timeout: float = 60.0) -> Any:
    from ..controller.gangs_support import eventually

    return eventually(probe, what=what, timeout=timeout)


# -- everything works --------------------------------------------------------------------------------


def test_the_operator_writes_conditions_labels_and_events(setup: Setup, cluster: KubeHTTP) -> None:
    group = WIDGETS
    cluster.ensure_crd(widget_crd(group, "Widget"))
    served = f"helm-rbac-{uuid.uuid4().hex[:6]}"
    missing = f"helm-rbac-missing-{uuid.uuid4().hex[:6]}"
    try:
        created = cluster.post(
            "/apis/run.ai/v1alpha1/kartas", karta_body(served, group=group, version="v1", kind="Widget")
        )
        assert created.status == 201, created.body
        # The mutating Karta webhook (our server, through the chart's configuration) stamped the labels.
        assert created.json()["metadata"]["labels"]["run.ai/karta-kind"] == "Widget"
        ready = wait_condition(cluster, served, "Ready", "True", "Ready")
        assert ready["metadata"]["labels"]["run.ai/karta-group"] == group
        body = karta_body(missing, group=group, version="v1", kind="Gadget")
        assert cluster.post("/apis/run.ai/v1alpha1/kartas", body).status == 201
        wait_condition(cluster, missing, "CRDExists", "False", "CRDNotFound")

        def event() -> bool:
            items = cluster.get("/api/v1/namespaces/default/events").json()["items"]
            return any(e["involvedObject"]["name"] == missing and e["reason"] == "CRDNotFound" for e in items)

        _wait("the CRDNotFound event", event)
        # The validating webhook refuses a second Karta for the same root GVK.
        second = cluster.post(
            "/apis/run.ai/v1alpha1/kartas",
            karta_body(served + "-again", group=group, version="v1", kind="Widget"),
        )
        assert second.status == 403 and "already exists" in str(second.body), second.body
    finally:
        cluster.delete(f"/apis/run.ai/v1alpha1/kartas/{served}")
        cluster.delete(f"/apis/run.ai/v1alpha1/kartas/{missing}")
        cluster.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")


def _has_plan(admin: KubeClient, namespace: str, expected: list[dict[str, Any]]) -> bool:
    """Each expected group object is live with the expected metadata and spec (the namespace also
    holds the other tests' workloads' objects)."""
    live = {(o["kind"], o["metadata"]["name"]): o for o in group_objects(admin, "workload-api", namespace)}
    for want in expected:
        got = live.get((want["kind"], want["metadata"]["name"]))
        if got is None or not covers(got.get("spec"), want.get("spec")):
            return False
        if not all(
            covers(got["metadata"].get(p), want["metadata"].get(p)) for p in ("labels", "ownerReferences")
        ):
            return False
    return True


def test_the_catalog_is_installed_as_karta_objects(setup: Setup, cluster: KubeHTTP) -> None:
    """definitions.installCatalog (mode A for KAI): server-side apply creates the Kartas."""
    installer = setup.controller.parts["catalog-installer"]
    assert isinstance(installer, CatalogInstaller)
    _wait("the catalog installed", installer.done.is_set)
    assert installer.result is not None and installer.result.applied
    assert sorted([*installer.result.applied, *installer.result.skipped]) == sorted(catalog_slugs())
    pytorch = wait_condition(cluster, "kubeflow-org-pytorchjob-v1", "Ready", "True", "Ready")
    assert pytorch["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "karta"


@pytest.mark.parametrize("kind", ["Job", "PyTorchJob"])
def test_gang_objects_are_written_for_a_job_and_a_crd_workload(setup: Setup, kind: str) -> None:
    body = batch_job("train-job", {}, parallelism=3) if kind == "Job" else pytorchjob("train-ddp", workers=3)
    workload = setup.admin.create(body, namespace=setup.work_ns)
    expected = expected_objects(setup.admin, workload, backend="workload-api")
    assert {o["kind"] for o in expected} == {"Workload", "PodGroup"}
    _wait(f"the Workload API objects of the {kind}", lambda: _has_plan(setup.admin, setup.work_ns, expected))


def test_the_pod_webhook_binds_a_new_pod_to_its_gang(setup: Setup, cluster: KubeHTTP) -> None:
    wait_webhook_active(cluster, setup.controller, setup.work_ns)
    job = setup.admin.create(pytorchjob("bind-ddp", workers=1), namespace=setup.work_ns)
    meta = job["metadata"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "bind-ddp-worker-0",
            "labels": {
                "training.kubeflow.org/job-name": "bind-ddp",
                "training.kubeflow.org/replica-type": "worker",
                "training.kubeflow.org/replica-index": "0",
            },
            "ownerReferences": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "PyTorchJob",
                    "name": "bind-ddp",
                    "uid": meta["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "pytorch", "image": "registry.example/train:1.0"}]},
    }
    created = cluster.post(f"/api/v1/namespaces/{setup.work_ns}/pods", pod)
    assert created.status == 201, created.body
    group = created.json()["spec"].get("schedulingGroup") or {}
    assert group.get("podGroupName", "").startswith("bind-ddp-"), created.json()["spec"]


def test_the_leader_lease_and_the_certificate_secret(setup: Setup, cluster: KubeHTTP) -> None:
    options = setup.controller.options
    lease = cluster.get(
        f"/apis/coordination.k8s.io/v1/namespaces/{setup.release_ns}/leases/{options.leader_election_id}"
    ).json()
    assert lease["spec"]["holderIdentity"] == identity()
    secret = cluster.get(
        f"/api/v1/namespaces/{setup.release_ns}/secrets/{options.webhook_cert_secret}"
    ).json()
    assert secret["type"] == "kubernetes.io/tls"
    assert set(secret["data"]) == {"tls.crt", "tls.key", "ca.crt", "ca.key"}
    for plural, name in (
        ("mutatingwebhookconfigurations", options.mutating_webhook_name),
        ("validatingwebhookconfigurations", options.validating_webhook_name),
    ):
        config = cluster.get(f"{ADM}/{plural}/{name}").json()
        assert [w["clientConfig"]["caBundle"] for w in config["webhooks"]] == [
            secret["data"]["ca.crt"]
        ] * len(config["webhooks"])


# -- and nothing more --------------------------------------------------------------------------------


def _review(cluster: KubeHTTP, setup: Setup, attributes: dict[str, Any]) -> bool:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": f"system:serviceaccount:{setup.release_ns}:{setup.account}",
            "groups": [
                "system:serviceaccounts",
                f"system:serviceaccounts:{setup.release_ns}",
                "system:authenticated",
            ],
            "resourceAttributes": attributes,
        },
    }
    answer = cluster.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
    assert answer.status == 201, answer.body
    return bool(answer.json()["status"].get("allowed"))


WRITES = ("create", "update", "patch", "delete", "deletecollection")


def test_least_privilege(setup: Setup, cluster: KubeHTTP) -> None:
    rel, work = setup.release_ns, setup.work_ns
    options = setup.controller.options
    denied: list[dict[str, Any]] = []
    # Secrets: only the certificate Secret, by name, in the release namespace (and create there).
    for ns in (work, "default", "kube-system"):
        denied += [
            {"namespace": ns, "resource": "secrets", "verb": v} for v in ("get", "list", "watch", "create")
        ]
    denied += [
        {"namespace": rel, "resource": "secrets", "verb": v} for v in ("list", "watch", "delete", "patch")
    ]
    denied.append({"namespace": rel, "resource": "secrets", "verb": "get", "name": "someone-elses"})
    # Workloads are read, never written (the Workload API backend patches nothing of theirs).
    for group, resource in (
        ("batch", "jobs"),
        ("kubeflow.org", "pytorchjobs"),
        ("apps", "deployments"),
        ("", "pods"),
    ):
        denied += [{"namespace": work, "group": group, "resource": resource, "verb": v} for v in WRITES]
    # Kinds no definition names, and everything around RBAC and the cluster.
    denied += [
        {"namespace": work, "resource": "configmaps", "verb": "get"},
        {"namespace": work, "resource": "services", "verb": "list"},
        {"namespace": work, "resource": "serviceaccounts", "subresource": "token", "verb": "create"},
        {"namespace": work, "group": "acme.ai", "resource": "finetunes", "verb": "get"},
        {"resource": "nodes", "verb": "watch"},  # the web view lists them (allowed below) once a minute
        {"resource": "nodes", "verb": "patch"},
        {"resource": "namespaces", "verb": "delete"},
        {"group": "rbac.authorization.k8s.io", "resource": "clusterroles", "verb": "escalate"},
        {"group": "rbac.authorization.k8s.io", "resource": "clusterrolebindings", "verb": "create"},
        {"group": "apiextensions.k8s.io", "resource": "customresourcedefinitions", "verb": "get"},
        {"group": "apiextensions.k8s.io", "resource": "customresourcedefinitions", "verb": "delete"},
        {"group": "run.ai", "resource": "kartas", "verb": "delete"},
        {
            "group": "admissionregistration.k8s.io",
            "resource": "mutatingwebhookconfigurations",
            "verb": "patch",
            "name": "other",
        },
        {
            "group": "admissionregistration.k8s.io",
            "resource": "validatingwebhookconfigurations",
            "verb": "create",
        },
        {
            "namespace": rel,
            "group": "coordination.k8s.io",
            "resource": "leases",
            "verb": "update",
            "name": "other",
        },
        {"namespace": work, "group": "coordination.k8s.io", "resource": "leases", "verb": "create"},
    ]
    allowed = [
        {"namespace": rel, "resource": "secrets", "verb": "get", "name": options.webhook_cert_secret},
        {"namespace": rel, "resource": "secrets", "verb": "update", "name": options.webhook_cert_secret},
        {
            "namespace": rel,
            "group": "coordination.k8s.io",
            "resource": "leases",
            "verb": "update",
            "name": options.leader_election_id,
        },
        {"namespace": work, "resource": "pods", "verb": "watch"},
        {"resource": "nodes", "verb": "list"},  # ui.enabled: the web view's GPU capacity page
        {"namespace": work, "group": "kubeflow.org", "resource": "pytorchjobs", "verb": "list"},
        {"namespace": work, "group": "scheduling.k8s.io", "resource": "podgroups", "verb": "create"},
        {"namespace": work, "group": "scheduling.k8s.io", "resource": "workloads", "verb": "delete"},
        {"namespace": work, "resource": "events", "verb": "create"},
        {"group": "run.ai", "resource": "kartas", "subresource": "status", "verb": "patch"},
        {"group": "run.ai", "resource": "kartas", "verb": "create"},  # definitions.installCatalog
        {
            "group": "admissionregistration.k8s.io",
            "resource": "mutatingwebhookconfigurations",
            "verb": "patch",
            "name": options.mutating_webhook_name,
        },
    ]
    wrongly_allowed = [a for a in denied if _review(cluster, setup, a)]
    wrongly_denied = [a for a in allowed if not _review(cluster, setup, a)]
    assert not wrongly_allowed and not wrongly_denied, (wrongly_allowed, wrongly_denied)


def _rules_review(kubeconfig: Path, namespace: str) -> set[tuple[str, str, str, str]]:
    """(group, resource, verb, name) the API server says the kubeconfig's identity may do there."""
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(kubeconfig)))
    try:
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": namespace},
        }
        answer = client.request_json(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body=body
        )
    finally:
        client.close()
    assert not answer["status"].get("incomplete"), answer["status"]
    return _expand(answer["status"]["resourceRules"])


def _expand(rules: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    return {
        (group, resource, verb, name)
        for rule in rules
        for group in rule.get("apiGroups", [])
        for resource in rule.get("resources", [])
        for verb in rule.get("verbs", [])
        for name in rule.get("resourceNames") or ["*"]
    }


def test_the_identitys_rules_are_exactly_the_librarys(
    setup: Setup, cluster: KubeHTTP, tmp_path: Path
) -> None:
    """SelfSubjectRulesReview (what `kubectl auth can-i --list` shows) for the chart's account, in the
    release namespace and in a workload namespace: the rules of karta.controller.rbac, plus those an
    account with no binding at all has (a second ServiceAccount, ``nobody``, measured the same way)."""
    created = cluster.post(
        f"/api/v1/namespaces/{setup.release_ns}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody"}},
    )
    assert created.status == 201, created.body
    nobody = token_kubeconfig(cluster, setup.release_ns, "nobody", tmp_path / "nobody.kubeconfig")
    mine = Path(str(setup.controller.options.kubeconfig))
    rbac = controller_rbac(setup.controller.options, catalog_definitions(), extra_rules=setup.extra_rules)
    for namespace, rules in (
        (setup.release_ns, [*rbac.cluster_rules, *rbac.namespace_rules]),
        (setup.work_ns, rbac.cluster_rules),
    ):
        baseline = _rules_review(nobody, namespace)
        assert _rules_review(mine, namespace) == _expand(rules) | baseline, namespace


def test_the_api_server_never_refused_the_controller(setup: Setup) -> None:
    """Every request of the scenarios above (watches, writes, webhook reads) was allowed."""
    assert setup.controller.manager.ready()[0]
    with setup.forbidden.lock:
        assert setup.forbidden.seen == [], json.dumps(setup.forbidden.seen, indent=1)
