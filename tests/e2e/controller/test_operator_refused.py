"""The operator when the API server refuses the index labels (here: RBAC without ``patch`` on
``kartas``; in production also a validating webhook denying an invalid definition made before
it was installed): the conditions are still written, and nothing spins."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from karta.controller.parts.kartas.operator import KartaOperator

from ..kubehttp import KubeHTTP
from .operator_support import (
    KARTAS,
    condition,
    events_for,
    eventually,
    install_karta_crd,
    karta_body,
    start_controller,
    wait_condition,
)

RBAC = "/apis/rbac.authorization.k8s.io/v1"
RULES: list[dict[str, Any]] = [
    {"apiGroups": ["run.ai"], "resources": ["kartas"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["run.ai"], "resources": ["kartas/status"], "verbs": ["get", "patch", "update"]},
    {
        "apiGroups": ["apiextensions.k8s.io"],
        "resources": ["customresourcedefinitions"],
        "verbs": ["list", "watch"],
    },
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
]


@pytest.fixture(scope="module")
def limited_user(cluster: KubeHTTP) -> Iterator[str]:
    install_karta_crd(cluster)
    tag = uuid.uuid4().hex[:6]
    user, role = f"karta-operator-{tag}", f"karta-operator-limited-{tag}"
    created = cluster.post(f"{RBAC}/clusterroles", {"metadata": {"name": role}, "rules": RULES})
    assert created.status == 201, created.body
    binding = {
        "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    created = cluster.post(f"{RBAC}/clusterrolebindings", binding)
    assert created.status == 201, created.body
    yield user
    cluster.delete(f"{RBAC}/clusterrolebindings/{role}")
    cluster.delete(f"{RBAC}/clusterroles/{role}")


def test_refused_labels_do_not_stop_the_conditions(cluster: KubeHTTP, limited_user: str) -> None:
    name = f"op-refused-{uuid.uuid4().hex[:6]}"
    body = karta_body(name, group="batch", version="v1", kind="Job")
    body["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {"replicasPath": "[..]"}
    created = cluster.post(KARTAS, body)
    assert created.status == 201, created.body
    try:
        with start_controller(cluster, as_user=limited_user) as controller:
            obj = wait_condition(cluster, name, "Validated", "False", "ValidationFailed")
            assert "run.ai/karta-kind" not in (obj["metadata"].get("labels") or {})
            crd = condition(obj, "CRDExists")
            assert crd is not None and crd["status"] == "True"
            eventually(lambda: events_for(cluster, name, "ValidationFailed"), what="ValidationFailed event")
            # the refusal is retried later, not as a failure with back-off
            operator = controller.parts["karta-operator"]
            assert isinstance(operator, KartaOperator)
            eventually(lambda: operator.queue.failures(name) == 0, what="no failures pending")
    finally:
        cluster.delete(f"{KARTAS}/{name}")
