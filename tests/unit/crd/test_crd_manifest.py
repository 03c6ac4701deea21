"""The shipped Karta CRD: identity (section 1), freshness, structural rules, and field-by-field
agreement with the Python model in both directions (section 2.1, 14.3)."""

from __future__ import annotations

import functools
import importlib.resources
from typing import Any

import pytest

from karta.crd import CRD_FILE, build_crd, load_crd, render_crd_yaml
from karta.crd.__main__ import main as crd_main
from karta.model import types as t
from karta.model.base import Model as BaseModel
from karta.model.schema import REQUIRED, wire_fields

Schema = dict[str, Any]


@functools.cache
def _schema() -> Schema:
    schema: Schema = load_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _at(schema: Schema, dotted: str) -> Schema:
    """The sub-schema of a dotted wire path; ``[]`` steps into array items."""
    node = schema
    for step in dotted.split("."):
        node = node["items"] if step == "[]" else node["properties"][step]
    return node


def test_shipped_manifest_is_the_generated_one() -> None:
    assert CRD_FILE.read_text(encoding="utf-8") == render_crd_yaml()
    assert load_crd() == build_crd()
    assert crd_main(["--check"]) == 0


def test_manifest_ships_as_package_data() -> None:
    resource = importlib.resources.files("karta.crd") / "kartas.run.ai.yaml"
    assert resource.is_file()


def test_stale_file_is_reported(tmp_path: Any) -> None:
    target = tmp_path / "crd.yaml"
    target.write_text("stale\n")
    assert crd_main(["--check", str(target)]) == 1
    assert crd_main([str(target)]) == 0
    assert crd_main(["--check", str(target)]) == 0
    assert crd_main(["--bogus"]) == 2


def test_identity_of_section_1() -> None:
    crd = load_crd()
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"]["name"] == "kartas.run.ai"
    spec = crd["spec"]
    assert spec["group"] == "run.ai"
    assert spec["scope"] == "Cluster"
    assert spec["names"] == {
        "kind": "Karta",
        "listKind": "KartaList",
        "plural": "kartas",
        "singular": "karta",
        "shortNames": ["krt"],
    }
    [version] = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    assert version["additionalPrinterColumns"] == [
        {
            "name": "Framework",
            "type": "string",
            "jsonPath": ".spec.structureDefinition.rootComponent.kind.kind",
        },
        {
            "name": "Root Component",
            "type": "string",
            "jsonPath": ".spec.structureDefinition.rootComponent.name",
        },
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]


def _walk(schema: Schema, path: str = "") -> list[tuple[str, Schema]]:
    out = [(path, schema)]
    for key, sub in schema.get("properties", {}).items():
        out.extend(_walk(sub, f"{path}.{key}" if path else key))
    if "items" in schema:
        out.extend(_walk(schema["items"], f"{path}[]"))
    if isinstance(schema.get("additionalProperties"), dict):
        out.extend(_walk(schema["additionalProperties"], f"{path}{{}}"))
    return out


def test_schema_is_structural() -> None:
    """Every node has a type, every array a list type, and list-map keys are required in the items."""
    for path, node in _walk(_schema()):
        assert "type" in node, path
        assert "$ref" not in node and "anyOf" not in node and "oneOf" not in node, path
        if node["type"] == "array":
            kind = node.get("x-kubernetes-list-type")
            assert kind in ("atomic", "set", "map"), path
            if kind == "map":
                keys = node["x-kubernetes-list-map-keys"]
                assert set(keys) <= set(node["items"].get("required", ())), path
            if kind == "set":
                assert node["items"]["type"] == "string", path


def _agree(model: type[BaseModel], schema: Schema, path: str) -> None:
    """Model and schema have the same fields, nesting, lists and required properties at ``path``."""
    if model is t.ObjectMeta:
        assert schema == {"type": "object"}, path
        return
    fields = wire_fields(model)
    assert schema["type"] == "object", path
    assert list(schema["properties"]) == list(fields), path  # both directions, in wire order
    assert schema.get("required", []) == list(REQUIRED.get(model, ())), path
    for alias, wf in fields.items():
        sub = schema["properties"][alias]
        here = f"{path}.{alias}"
        if wf.is_list:
            assert sub["type"] == "array", here
            sub = sub["items"]
        else:
            assert sub["type"] != "array", here
        if wf.model is not None:
            _agree(wf.model, sub, here)
        else:
            assert "properties" not in sub or model is t.KartaStatus, here


def test_schema_and_model_agree_field_by_field() -> None:
    _agree(t.Karta, _schema(), "")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("spec.structureDefinition.childComponents", {"x-kubernetes-list-map-keys": ["name"]}),
        ("spec.structureDefinition.additionalChildKinds", {"x-kubernetes-list-map-keys": ["kind"]}),
        (
            "spec.optimizationInstructions.gangScheduling.podGroup.subGroups",
            {"x-kubernetes-list-map-keys": ["componentName"]},
        ),
        ("spec.optimizationInstructions.gangScheduling.podGroups", {"x-kubernetes-list-map-keys": ["name"]}),
        (
            "spec.optimizationInstructions.gangScheduling.podGroups.[].members",
            {"x-kubernetes-list-map-keys": ["componentName"]},
        ),
        ("status.conditions", {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}),
        (
            "spec.optimizationInstructions.gangScheduling.podGroups.[].members.[].groupByKeyPaths",
            {"x-kubernetes-list-type": "set"},
        ),
        (
            "spec.optimizationInstructions.gangScheduling.podGroups.[].members.[].filters",
            {"x-kubernetes-list-type": "set"},
        ),
        (
            "spec.structureDefinition.rootComponent.suspendDefinition.suspendActions",
            {"x-kubernetes-list-type": "atomic", "minItems": 1},
        ),
        (
            "spec.structureDefinition.childComponents.[].suspendDefinition.resumeActions",
            {"x-kubernetes-list-type": "atomic", "minItems": 1},
        ),
        (
            "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.degraded",
            {"x-kubernetes-list-type": "atomic"},
        ),
        (
            "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.running.[].byConditions",
            {"x-kubernetes-list-type": "atomic"},
        ),
        (
            "spec.structureDefinition.childComponents.[].podSelector.componentTypeSelector.keyPath",
            {"type": "string", "minLength": 1},
        ),
        (
            "spec.structureDefinition.childComponents.[].podSelector.componentTypeSelector.matchLabels",
            {"minProperties": 1, "additionalProperties": {"type": "string"}},
        ),
        (
            "spec.optimizationInstructions.gangScheduling.podGroup.topology",
            {"required": ["topologyName", "requiredTopologyLevel", "preferredTopologyLevel"]},
        ),
        (
            "spec.optimizationInstructions.gangScheduling.podGroup.subGroups.[].topology",
            {"required": ["topologyName", "requiredTopologyLevel", "preferredTopologyLevel"]},
        ),
    ],
)
def test_list_types_and_limits_of_section_2_1(path: str, expected: Schema) -> None:
    node = _at(_schema(), path)
    for key, value in expected.items():
        assert node[key] == value, (path, key)


def test_every_status_mapping_list_is_atomic() -> None:
    mappings = _at(_schema(), "spec.structureDefinition.rootComponent.statusDefinition.statusMappings")
    assert list(mappings["properties"]) == [
        "initializing",
        "running",
        "completed",
        "failed",
        "degraded",
        "suspended",
        "suspending",
        "resuming",
    ]
    assert all(p["x-kubernetes-list-type"] == "atomic" for p in mappings["properties"].values())


def test_condition_field_name_defaults() -> None:
    for component in ("rootComponent", "childComponents.[]"):
        node = _at(_schema(), f"spec.structureDefinition.{component}.statusDefinition.conditionsDefinition")
        defaults = {k: v.get("default") for k, v in node["properties"].items()}
        assert defaults == {
            "path": None,
            "typeFieldName": "type",
            "statusFieldName": "status",
            "messageFieldName": "message",
            "reasonFieldName": "reason",
        }
        assert node["required"] == ["path"]


def test_cel_rules_of_section_14_3() -> None:
    for component in ("rootComponent", "childComponents.[]"):
        node = _at(_schema(), f"spec.structureDefinition.{component}.podSelector.componentTypeSelector")
        assert node["x-kubernetes-validations"] == [
            {
                "rule": "has(self.keyPath) || has(self.matchLabels)",
                "message": "at least one of keyPath or matchLabels must be set",
            },
            {"rule": "!has(self.value) || has(self.keyPath)", "message": "value requires keyPath"},
        ]
    # No other CEL rule anywhere: the rest of section 14 is the validator's (and the webhook's) job.
    with_rules = [path for path, node in _walk(_schema()) if "x-kubernetes-validations" in node]
    assert with_rules == [
        "spec.structureDefinition.rootComponent.podSelector.componentTypeSelector",
        "spec.structureDefinition.childComponents[].podSelector.componentTypeSelector",
    ]


def test_status_conditions_are_metav1_conditions() -> None:
    item = _at(_schema(), "status.conditions.[]")
    assert item["required"] == ["lastTransitionTime", "message", "reason", "status", "type"]
    assert item["properties"]["status"]["enum"] == ["True", "False", "Unknown"]
