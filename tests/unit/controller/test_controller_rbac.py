"""karta.controller.rbac: the controller's rules follow its options exactly (what each part calls),
and the owner kinds are those between a pod and its workload."""

from __future__ import annotations

from typing import Any

import pytest

from karta.catalog import catalog_by_gvk, catalog_definitions
from karta.controller.options import Options
from karta.controller.rbac import controller_rbac, workload_rules
from karta.controller.runtime.owners import owner_kinds


def _allows(
    rules: list[dict[str, Any]], group: str, resource: str, verb: str, name: str | None = None
) -> bool:
    return any(
        group in r["apiGroups"]
        and resource in r["resources"]
        and verb in r["verbs"]
        and (not r.get("resourceNames") or name in r["resourceNames"])
        for r in rules
    )


def test_mode_a_reads_no_workload_and_no_pod() -> None:
    rbac = controller_rbac(Options(), catalog_definitions())
    assert not _allows(rbac.cluster_rules, "", "pods", "list")
    assert not _allows(rbac.cluster_rules, "batch", "jobs", "get")
    assert _allows(rbac.cluster_rules, "run.ai", "kartas", "watch")
    assert _allows(rbac.cluster_rules, "run.ai", "kartas/status", "patch")
    assert not _allows(rbac.cluster_rules, "run.ai", "kartas", "create")
    assert _allows(rbac.cluster_rules, "apiextensions.k8s.io", "customresourcedefinitions", "watch")
    assert not _allows(rbac.cluster_rules, "apiextensions.k8s.io", "customresourcedefinitions", "get")
    assert rbac.namespace_rules == []


def test_install_catalog_adds_create_on_kartas() -> None:
    rbac = controller_rbac(Options(install_catalog=True), catalog_definitions())
    assert _allows(rbac.cluster_rules, "run.ai", "kartas", "create")


def test_auto_certificates_need_their_secret_and_the_two_configurations_by_name() -> None:
    options = Options(
        enable_webhook=True, webhook_cert_secret="s", mutating_webhook_name="m", validating_webhook_name="v"
    )
    rbac = controller_rbac(options, [])
    adm = "admissionregistration.k8s.io"
    assert _allows(rbac.cluster_rules, adm, "mutatingwebhookconfigurations", "patch", "m")
    assert not _allows(rbac.cluster_rules, adm, "mutatingwebhookconfigurations", "patch", "other")
    assert _allows(rbac.cluster_rules, adm, "validatingwebhookconfigurations", "get", "v")
    assert not _allows(rbac.cluster_rules, adm, "validatingwebhookconfigurations", "create")
    assert _allows(rbac.namespace_rules, "", "secrets", "get", "s")
    assert not _allows(rbac.namespace_rules, "", "secrets", "get", "other")
    assert not _allows(rbac.namespace_rules, "", "secrets", "list")
    manual = controller_rbac(Options(enable_webhook=True, webhook_cert_mode="manual"), [])
    assert manual.namespace_rules == []
    assert not _allows(
        manual.cluster_rules, adm, "mutatingwebhookconfigurations", "get", "karta-operator-mutating"
    )


def test_register_webhooks_may_create_the_configurations() -> None:
    rbac = controller_rbac(
        Options(enable_webhook=True, register_webhooks=True, webhook_cert_mode="manual"), []
    )
    adm = "admissionregistration.k8s.io"
    assert _allows(rbac.cluster_rules, adm, "mutatingwebhookconfigurations", "create")
    assert _allows(
        rbac.cluster_rules, adm, "validatingwebhookconfigurations", "patch", "karta-operator-validating"
    )


def test_leader_election_needs_its_lease_by_name() -> None:
    rbac = controller_rbac(Options(leader_elect=True, leader_election_id="l"), [])
    assert _allows(rbac.namespace_rules, "coordination.k8s.io", "leases", "create")
    assert _allows(rbac.namespace_rules, "coordination.k8s.io", "leases", "update", "l")
    assert not _allows(rbac.namespace_rules, "coordination.k8s.io", "leases", "update", "other")


@pytest.mark.parametrize("backend", ["workload-api", "volcano", "coscheduling", "kai"])
def test_a_backend_reads_the_workloads_and_pods_and_writes_only_its_group_objects(backend: str) -> None:
    rules, _notes = workload_rules(catalog_definitions(), backend=backend)
    assert _allows(rules, "", "pods", "watch")
    assert _allows(rules, "kubeflow.org", "pytorchjobs", "list")
    assert _allows(rules, "batch", "jobs", "watch")
    for verb in ("create", "update", "delete"):
        assert not _allows(rules, "kubeflow.org", "pytorchjobs", verb)
        assert not _allows(rules, "batch", "jobs", verb)
        assert not _allows(rules, "", "pods", verb)
    assert _allows(rules, "kubeflow.org", "pytorchjobs", "patch") == (backend == "kai")
    assert not _allows(rules, "", "pods", "patch")
    # the kinds the workloads' references read (E3: runtimes) are read, never written
    for group, runtime in [
        ("trainer.kubeflow.org", "clustertrainingruntimes"),
        ("serving.kserve.io", "servingruntimes"),
        ("serving.kserve.io", "clusterservingruntimes"),
    ]:
        assert _allows(rules, group, runtime, "watch")
        assert not _allows(rules, group, runtime, "patch")
    assert _allows(rules, "serving.kserve.io", "inferenceservices", "patch") == (backend == "kai")
    written = {
        (g, r)
        for rule in rules
        if "delete" in rule["verbs"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }
    group = {"workload-api": "scheduling.k8s.io", "volcano": "scheduling.volcano.sh"}.get(backend)
    assert all(g.startswith("scheduling.") for g, _ in written) and written
    if group:
        assert {g for g, _ in written} == {group}


def test_owner_kinds_are_the_kinds_between_a_pod_and_its_root() -> None:
    deployment = catalog_by_gvk("apps", "v1", "Deployment")
    assert deployment is not None
    assert owner_kinds([deployment]) == {("apps", "ReplicaSet")}
    knative = catalog_by_gvk("serving.knative.dev", "v1", "Service")
    assert knative is not None
    # Revision is a component on the way to the pods; Configuration, Route and Deployment are
    # additional child kinds (the chain is Service > Configuration > Revision > Deployment > ReplicaSet).
    assert {("serving.knative.dev", "Revision"), ("serving.knative.dev", "Configuration")} <= owner_kinds(
        [knative]
    )
    assert all(group for group, _ in owner_kinds(catalog_definitions()))
    rules, _ = workload_rules([knative], backend="volcano")
    assert _allows(rules, "serving.knative.dev", "configurations", "get")
    assert not _allows(rules, "serving.knative.dev", "configurations", "list")


def test_extra_rules_are_added_as_given() -> None:
    extra = {"apiGroups": ["acme.ai"], "resources": ["finetunes"], "verbs": ["get", "list", "watch"]}
    rbac = controller_rbac(Options(backend="volcano"), [], extra_rules=[extra])
    assert extra in rbac.cluster_rules


def test_every_rule_a_part_declares_is_granted() -> None:
    """controller_rbac composes what the parts and the runtime declare (their *_rules functions):
    with every option on, each verb each of them asks for is granted, by name where named."""
    from karta.controller.parts.catalog_install import catalog_install_rules
    from karta.controller.parts.certs import cert_rules
    from karta.controller.parts.kartas.operator import operator_rules
    from karta.controller.registration import registration_rules
    from karta.controller.runtime.crds import crd_rules
    from karta.controller.runtime.definitions import definitions_rules
    from karta.controller.runtime.events import event_rules
    from karta.controller.runtime.leader import lease_rules

    options = Options(
        backend="volcano",
        install_catalog=True,
        enable_webhook=True,
        register_webhooks=True,
        leader_elect=True,
        leader_election_id="l",
        webhook_cert_secret="s",
        mutating_webhook_name="m",
        validating_webhook_name="v",
    )
    rbac = controller_rbac(options, catalog_definitions())
    configurations = (("mutatingwebhookconfigurations", "m"), ("validatingwebhookconfigurations", "v"))
    certs_cluster, certs_namespaced = cert_rules(secret="s", configurations=configurations)
    declared = {
        "cluster": [
            *definitions_rules(),
            *operator_rules(),
            *catalog_install_rules(),
            *crd_rules(),
            *event_rules(),
            *certs_cluster,
            *registration_rules(configurations),
        ],
        "namespace": [*certs_namespaced, *lease_rules("l")],
    }
    granted = {"cluster": rbac.cluster_rules, "namespace": rbac.namespace_rules}
    for scope, rules in declared.items():
        for rule in rules:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    for name in rule.get("resourceNames") or [None]:
                        assert _allows(granted[scope], rule["apiGroups"][0], resource, verb, name), (
                            scope,
                            rule,
                        )
