"""The shipped Karta CRD on a real API server (docs/spec/format.md#crd, #field-tree, #defaults and
#crd-rules).

The server takes the CRD as a structural schema, serves ``kartas`` cluster-scoped with the short
name and printer columns of section 1, accepts every bundled and built-in definition and gives the
same spec back, rejects each kind of invalid definition with the expected message, and applies the
condition field-name defaults.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import CATALOG_DATA_DIR
from karta.crd import build_schema
from karta.model import karta_from_dict, karta_to_dict, load_karta
from tests.unit.crd.crd_cases import INVALID_CASES, InvalidCase, alpha_definition, valid_definition

from ..kubehttp import KubeHTTP, Response
from .conftest import KARTAS

REPO = Path(__file__).resolve().parents[3]
DEFINITIONS = {
    f"examples-{p.stem}": p for p in sorted((REPO / "examples" / "definitions").glob("*.yaml"))
} | {f"catalog-{p.stem}": p for p in sorted(CATALOG_DATA_DIR.glob("*.yaml"))}
STRICT = {"fieldValidation": "Strict"}
Namer = Callable[[str], str]


def _create(cluster: KubeHTTP, body: dict[str, Any]) -> Response:
    return cluster.post(KARTAS, body, params=STRICT)


def _named(data: dict[str, Any], name: str) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out["metadata"] = {**out.get("metadata", {}), "name": name}
    return out


def _message(resp: Response) -> str:
    body = resp.body
    if isinstance(body, dict):
        causes = body.get("details", {}).get("causes", [])
        return "\n".join(
            [str(body.get("message", "")), *(f"{c.get('field')}: {c.get('message')}" for c in causes)]
        )
    return str(body)


# --- the CRD itself -------------------------------------------------------------------------------


def test_crd_is_structural_established_and_unchanged(karta_crd: dict[str, Any]) -> None:
    conditions = {c["type"]: c["status"] for c in karta_crd["status"]["conditions"]}
    assert conditions.get("Established") == "True"
    assert conditions.get("NamesAccepted") == "True"
    assert "NonStructuralSchema" not in conditions
    assert karta_crd["status"]["acceptedNames"]["shortNames"] == ["krt"]
    [version] = karta_crd["spec"]["versions"]
    assert version["schema"]["openAPIV3Schema"] == build_schema()  # nothing pruned or rewritten


def test_discovery_cluster_scope_short_name_and_status_subresource(cluster: KubeHTTP, karta_crd: Any) -> None:
    resources = {r["name"]: r for r in cluster.get("/apis/run.ai/v1alpha1").json()["resources"]}
    kartas = resources["kartas"]
    assert kartas["kind"] == "Karta"
    assert kartas["namespaced"] is False
    assert kartas["shortNames"] == ["krt"]
    assert kartas["singularName"] == "karta"
    assert "kartas/status" in resources


def test_namespaced_path_does_not_exist(cluster: KubeHTTP, karta_name: Namer) -> None:
    body = _named(valid_definition(), karta_name("namespaced"))
    resp = cluster.post("/apis/run.ai/v1alpha1/namespaces/default/kartas", body, params=STRICT)
    assert resp.status == 404, resp.body


# --- valid definitions ----------------------------------------------------------------------------


@pytest.mark.parametrize("label", DEFINITIONS)
def test_bundled_definition_is_accepted_and_reads_back_equal(
    cluster: KubeHTTP, karta_name: Namer, label: str
) -> None:
    path = DEFINITIONS[label]
    raw = yaml.safe_load(path.read_text())
    karta = load_karta(path).karta
    assert karta is not None
    expected = karta_to_dict(karta)["spec"]

    # As the file is written (what `kubectl apply -f` sends).
    name = karta_name(label)
    created = _create(cluster, _named(raw, name))
    assert created.status == 201, _message(created)
    got = cluster.get(f"{KARTAS}/{name}").json()
    assert karta_to_dict(karta_from_dict(got))["spec"] == expected

    # As karta writes it: the server stores exactly that, byte for byte.
    name = karta_name(f"{label}-w")
    created = _create(cluster, _named(karta_to_dict(karta), name))
    assert created.status == 201, _message(created)
    assert created.json()["spec"] == expected
    assert cluster.get(f"{KARTAS}/{name}").json()["spec"] == expected


@pytest.mark.parametrize("build", [valid_definition, alpha_definition], ids=["current", "alpha"])
def test_every_list_kind_is_accepted(cluster: KubeHTTP, karta_name: Namer, build: Callable[..., Any]) -> None:
    data = build(karta_name(build.__name__.replace("_", "-")))
    created = _create(cluster, data)
    assert created.status == 201, _message(created)
    assert (
        karta_to_dict(karta_from_dict(created.json()))["spec"] == karta_to_dict(karta_from_dict(data))["spec"]
    )


def test_server_applies_condition_field_name_defaults(cluster: KubeHTTP, karta_name: Namer) -> None:
    data = valid_definition(karta_name("defaults"))
    status = data["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    status["conditionsDefinition"] = {"path": ".status.conditions", "typeFieldName": "kind"}
    created = _create(cluster, data)
    assert created.status == 201, _message(created)
    stored = created.json()["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    assert stored["conditionsDefinition"] == {
        "path": ".status.conditions",
        "typeFieldName": "kind",
        "statusFieldName": "status",
        "messageFieldName": "message",
        "reasonFieldName": "reason",
    }
    # The loader's defaults (R1) give the same model as the server's.
    assert karta_from_dict(created.json()).spec == karta_from_dict(data).spec


def test_nulls_are_pruned_like_the_loader_does(cluster: KubeHTTP, karta_name: Namer) -> None:
    data = valid_definition(karta_name("nulls"))
    data["spec"]["structureDefinition"]["childComponents"][0]["instanceIdPath"] = None
    data["spec"]["optimizationInstructions"]["gangScheduling"]["podGroups"] = None
    created = _create(cluster, data)
    assert created.status == 201, _message(created)
    child = created.json()["spec"]["structureDefinition"]["childComponents"][0]
    assert "instanceIdPath" not in child
    assert karta_from_dict(created.json()).spec == karta_from_dict(data).spec


# --- invalid definitions --------------------------------------------------------------------------


@pytest.mark.parametrize("case", INVALID_CASES, ids=lambda c: c.id)
def test_invalid_definition_is_rejected_with_the_expected_message(
    cluster: KubeHTTP, karta_name: Namer, case: InvalidCase
) -> None:
    resp = _create(cluster, case.build(karta_name(f"invalid-{case.id}".lower())))
    message = _message(resp)
    assert resp.status in (400, 422), message
    assert case.path in message, message
    assert case.message in message, message


# --- status subresource and printer columns -------------------------------------------------------


def test_status_is_a_subresource_with_metav1_conditions(cluster: KubeHTTP, karta_name: Namer) -> None:
    name = karta_name("status")
    data = valid_definition(name)
    condition = {
        "type": "Ready",
        "status": "True",
        "reason": "Indexed",
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    data["status"] = {"conditions": [condition]}
    created = _create(cluster, data)
    assert created.status == 201, _message(created)
    assert "status" not in created.json() or not created.json()["status"].get("conditions")

    obj = created.json()
    obj["status"] = {"conditions": [condition]}
    updated = cluster.request("PUT", f"{KARTAS}/{name}/status", body=obj, params=STRICT)
    assert updated.status == 200, _message(updated)
    assert cluster.get(f"{KARTAS}/{name}").json()["status"]["conditions"] == [condition]

    obj = updated.json()
    obj["status"] = {"conditions": [{**condition, "status": "Maybe"}]}
    rejected = cluster.request("PUT", f"{KARTAS}/{name}/status", body=obj, params=STRICT)
    assert rejected.status == 422, _message(rejected)
    assert "status.conditions[0].status" in _message(rejected)


def test_printer_columns_framework_root_component_age(cluster: KubeHTTP, karta_name: Namer) -> None:
    name = karta_name("columns")
    assert _create(cluster, valid_definition(name)).status == 201
    as_table = dataclasses.replace(
        cluster, headers={**cluster.headers, "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    )
    table = as_table.get(f"{KARTAS}/{name}").json()
    columns = [c["name"] for c in table["columnDefinitions"]]
    assert columns == ["Name", "Framework", "Root Component", "Age"]
    [row] = table["rows"]
    assert row["cells"][:3] == [name, "App", "app"]
