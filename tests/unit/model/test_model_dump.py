"""Serialisation: wire shape and order, omitted fields, YAML, and the load(dump(k)) == k round trip."""

from __future__ import annotations

import typing
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model_data import fuller, minimal, root

from karta.model import (
    ConditionsDefinition,
    Karta,
    KartaStatus,
    ObjectMeta,
    karta_from_dict,
    karta_to_dict,
    karta_to_yaml,
    load_karta,
)
from karta.model.base import Model as BaseModel
from karta.model.schema import wire_fields


def test_wire_shape_and_order() -> None:
    karta = karta_from_dict(fuller())
    out = karta_to_dict(karta)
    assert list(out) == ["apiVersion", "kind", "metadata", "spec"]
    assert list(out["spec"]) == ["structureDefinition", "optimizationInstructions"]
    assert list(out["spec"]["structureDefinition"]) == ["rootComponent", "childComponents"]
    worker = out["spec"]["structureDefinition"]["childComponents"][1]
    assert list(worker) == ["name", "kind", "ownerRef", "specDefinition", "scaleDefinition", "podSelector"]
    assert worker["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert out["metadata"] == {"name": "kubeflow-org-pytorchjob-v1"}


def test_condition_field_names_are_written_and_empty_parts_omitted() -> None:
    out = karta_to_dict(karta_from_dict(fuller()))
    status = out["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    assert status["conditionsDefinition"] == {
        "path": ".status.conditions",
        "typeFieldName": "type",
        "statusFieldName": "status",
        "messageFieldName": "message",
        "reasonFieldName": "reason",
    }
    assert list(status["statusMappings"]) == ["initializing", "running", "completed", "failed", "suspended"]
    assert status["statusMappings"]["running"] == [{"byConditions": [{"type": "Running", "status": "True"}]}]


def test_optimization_instructions_kept_when_empty_and_empty_status_omitted() -> None:
    data = minimal()
    data["status"] = {"conditions": []}
    out = karta_to_dict(karta_from_dict(data))
    assert out["spec"]["optimizationInstructions"] == {}
    assert "status" not in out
    data["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    assert karta_to_dict(karta_from_dict(data))["status"] == {
        "conditions": [{"type": "Ready", "status": "True"}]
    }


def test_set_optional_empty_values_are_kept() -> None:
    data = minimal()
    root(data)["podSelector"] = {"componentTypeSelector": {"keyPath": ".x", "value": "", "matchLabels": {}}}
    out = karta_to_dict(karta_from_dict(data))
    assert out["spec"]["structureDefinition"]["rootComponent"]["podSelector"] == {
        "componentTypeSelector": {"keyPath": ".x", "value": "", "matchLabels": {}}
    }


def test_metadata_extras_survive() -> None:
    data = minimal()
    data["metadata"].update(labels={"a": "b"}, uid="u-1", managedFields=[{"manager": "m"}], generation=2)
    meta = karta_to_dict(karta_from_dict(data))["metadata"]
    assert meta == {
        "name": "example-org-batchrun-v1",
        "labels": {"a": "b"},
        "uid": "u-1",
        "generation": 2,
        "managedFields": [{"manager": "m"}],
    }


def test_yaml_begins_with_identity_and_round_trips() -> None:
    karta = karta_from_dict(fuller())
    text = karta_to_yaml(karta)
    assert text.startswith("apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n")
    assert yaml.safe_load(text) == karta_to_dict(karta)
    assert load_karta(text).karta == karta


def test_multi_line_expressions_are_literal_blocks() -> None:
    data = minimal()
    root(data)["scaleDefinition"]["replicasPath"] = ".spec.workers\n| . // 1"
    text = karta_to_yaml(karta_from_dict(data))
    assert "replicasPath: |-\n" in text
    assert load_karta(text).karta == karta_from_dict(data)


# --- hypothesis: any definition built from the schema round-trips ---------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)


def _leaf(annotation: Any) -> st.SearchStrategy[Any]:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, __import__("types").UnionType):
        annotation = args[0]
    origin = typing.get_origin(annotation)
    if origin is tuple:
        return st.lists(_text, max_size=2)
    if origin is dict:
        return st.dictionaries(_text, _text, max_size=2)
    if annotation is int:
        return st.integers(0, 10)
    return _text


def _model(model: type[BaseModel], depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    if model is ObjectMeta:
        return st.fixed_dictionaries(
            {"name": _text}, optional={"labels": st.dictionaries(_text, _text, max_size=2)}
        )
    if model is KartaStatus:
        return st.fixed_dictionaries(
            {}, optional={"conditions": st.lists(st.just({"type": "Ready"}), max_size=1)}
        )
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for alias, wf in wire_fields(model).items():
        if model is Karta and alias in ("apiVersion", "kind"):
            continue
        if wf.model is not None and wf.is_list:
            optional[alias] = st.lists(
                st.deferred(lambda m=wf.model: _model(m, depth + 1)), max_size=2 if depth < 4 else 0
            )
        elif wf.model is not None:
            optional[alias] = st.deferred(lambda m=wf.model: _model(m, depth + 1))
        else:
            optional[alias] = _leaf(model.model_fields[wf.name].annotation)
    return st.fixed_dictionaries({}, optional=optional)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(_model(Karta))
def test_round_trip_of_generated_definitions(data: dict[str, Any]) -> None:
    result = load_karta({"apiVersion": "run.ai/v1alpha1", "kind": "Karta", **data}, strict=False)
    karta = result.karta
    assert karta is not None, result.findings
    dumped = karta_to_dict(karta)
    again = load_karta(dumped, strict=False)
    assert again.karta == karta
    assert not [f for f in again.findings if f.message.startswith("unknown field")]
    assert load_karta(karta_to_yaml(karta), strict=False).karta == karta


def test_r1_defaults_survive_the_round_trip() -> None:
    c = ConditionsDefinition(path=".s", type_field_name="", status_field_name="phase")
    assert (c.type_field_name, c.status_field_name) == ("type", "phase")
