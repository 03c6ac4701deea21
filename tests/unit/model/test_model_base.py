"""The model base (karta.model.base): validation like pydantic's lax mode, value semantics, copies."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from karta.model import (
    ComponentDefinition,
    ComponentTypeSelector,
    ConditionsDefinition,
    GroupVersionKind,
    Karta,
    KartaStatus,
    ObjectMeta,
    PodGroupMember,
    StatusDefinition,
    StatusMatcher,
)
from karta.model.base import ModelValidationError


def _errors(cls: Any, data: Any) -> list[tuple[str, tuple[Any, ...]]]:
    with pytest.raises(ModelValidationError) as info:
        cls.model_validate(data)
    return [(e["type"], e["loc"]) for e in info.value.errors()]


def test_fields_by_alias_or_by_name_alias_first() -> None:
    assert ComponentDefinition.model_validate({"ownerRef": "a"}).owner_ref == "a"
    assert ComponentDefinition.model_validate({"owner_ref": "a"}).owner_ref == "a"
    assert ComponentDefinition.model_validate({"ownerRef": "a", "owner_ref": "b"}).owner_ref == "a"
    assert ComponentDefinition(owner_ref="x").owner_ref == "x"


def test_nested_models_tuples_and_defaults() -> None:
    comp = ComponentDefinition.model_validate(
        {"name": "c", "kind": {"group": "g", "version": "v1", "kind": "K"}, "statusDefinition": {}}
    )
    assert comp.kind == GroupVersionKind(group="g", version="v1", kind="K")
    assert comp.status_definition is not None
    assert comp.status_definition.status_mappings.running == ()
    matcher = StatusMatcher.model_validate({"byConditions": [{"type": "Ready"}]})
    assert isinstance(matcher.by_conditions, tuple) and matcher.by_conditions[0].type == "Ready"


def test_every_error_is_reported_in_field_order_with_alias_paths() -> None:
    data = {"componentName": 3, "groupByKeyPaths": ["a", 1, None], "filters": "x"}
    assert _errors(PodGroupMember, data) == [
        ("string_type", ("componentName",)),
        ("string_type", ("groupByKeyPaths", 1)),
        ("string_type", ("groupByKeyPaths", 2)),
        ("tuple_type", ("filters",)),
    ]


_KEY = ("podSelector", "componentTypeSelector", "matchLabels", 1, "[key]")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"kind": "Pod"}, [("model_type", ("kind",))]),
        ({"name": ["x"]}, [("string_type", ("name",))]),
        ({"podSelector": {"componentTypeSelector": {"matchLabels": {1: "v"}}}}, [("string_type", _KEY)]),
    ],
)
def test_type_errors(data: dict[str, Any], expected: list[tuple[str, tuple[Any, ...]]]) -> None:
    assert _errors(ComponentDefinition, data) == expected


def test_dict_values_and_keys() -> None:
    assert _errors(ComponentTypeSelector, {"matchLabels": {"a": 1}}) == [
        ("string_type", ("matchLabels", "a"))
    ]
    assert _errors(ComponentTypeSelector, {"matchLabels": ["a"]}) == [("dict_type", ("matchLabels",))]
    assert _errors(KartaStatus, {"conditions": [1]}) == [("dict_type", ("conditions", 0))]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3), (True, 1), (2.0, 2), (" 12 ", 12), ("1_000", 1000), ("4.00", 4), (b"5", 5)],
)
def test_lax_integers(value: Any, expected: int) -> None:
    assert ObjectMeta.model_validate({"generation": value}).generation == expected


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (1.5, "int_from_float"),
        (float("inf"), "finite_number"),
        ("1e3", "int_parsing"),
        ("x", "int_parsing"),
        ([1], "int_type"),
    ],
)
def test_bad_integers(value: Any, kind: str) -> None:
    assert _errors(ObjectMeta, {"generation": value}) == [(kind, ("generation",))]


def test_strings_accept_bytes_and_str_subclasses_only() -> None:
    assert GroupVersionKind.model_validate({"group": b"abc"}).group == "abc"
    assert _errors(GroupVersionKind, {"group": b"\xff"}) == [("string_unicode", ("group",))]
    assert _errors(GroupVersionKind, {"group": 1}) == [("string_type", ("group",))]


def test_non_mapping_input() -> None:
    assert _errors(Karta, [1]) == [("model_type", ())]
    assert GroupVersionKind.model_validate(GroupVersionKind(kind="K")).kind == "K"


def test_constructor_validates_too() -> None:
    with pytest.raises(ModelValidationError, match="validation error for GroupVersionKind"):
        GroupVersionKind(group=1)  # type: ignore[arg-type]


def test_extra_allow_keeps_unknown_keys() -> None:
    meta = ObjectMeta.model_validate({"name": "x", "managedFields": [1]})
    assert meta.model_extra == {"managedFields": [1]}
    assert meta.managedFields == [1]
    assert GroupVersionKind.model_validate({"colour": "red"}).model_extra is None
    assert _errors(ObjectMeta, {0: "x"}) == [("invalid_key", (0,))]


def test_before_hook_and_after_hook() -> None:
    c = ConditionsDefinition.model_validate({"path": ".s", "typeFieldName": None, "reasonFieldName": ""})
    assert (c.type_field_name, c.reason_field_name) == ("type", "reason")
    assert Karta.model_validate({"status": {"conditions": []}}).status is None
    assert Karta.model_validate({"status": {"conditions": [{"a": 1}]}}).status is not None


def test_immutable_equal_and_hashable() -> None:
    gvk = GroupVersionKind(group="g", version="v", kind="K")
    with pytest.raises(AttributeError):
        gvk.kind = "X"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del gvk.kind  # type: ignore[misc]
    assert gvk == GroupVersionKind.model_validate({"group": "g", "version": "v", "kind": "K"})
    assert gvk != GroupVersionKind(group="g", version="v", kind="X")
    assert gvk != ("g", "v", "K")
    assert len({gvk, GroupVersionKind(group="g", version="v", kind="K")}) == 1
    assert repr(gvk) == "GroupVersionKind(group='g', version='v', kind='K')"


def test_copies() -> None:
    karta = Karta.model_validate({"metadata": {"name": "k", "labels": {"a": "b"}, "x": {"y": 1}}})
    deep = karta.model_copy(deep=True)
    assert deep == karta and deep.metadata is not karta.metadata
    deep.metadata.labels["c"] = "d"
    deep.metadata.model_extra["x"]["y"] = 2  # type: ignore[index]
    assert karta.metadata.labels == {"a": "b"} and karta.metadata.model_extra == {"x": {"y": 1}}
    assert copy.deepcopy(karta) == karta
    shallow = karta.model_copy(update={"kind": "Other"})
    assert shallow.kind == "Other" and shallow.metadata is karta.metadata and karta.kind == "Karta"
    assert pickle.loads(pickle.dumps(karta)) == karta


def test_model_construct_skips_validation_and_fills_defaults() -> None:
    c = ConditionsDefinition.model_construct(path=".s", type_field_name="")
    assert c.type_field_name == "" and c.status_field_name == "status"
    status = StatusDefinition.model_construct()
    assert status.status_mappings.running == ()


def test_model_fields_describe_the_schema() -> None:
    info = ComponentDefinition.model_fields["owner_ref"]
    assert info.alias == "ownerRef"
    assert info.annotation == (str | None)
    assert StatusDefinition.model_fields["status_mappings"].get_default(call_default_factory=True) == (
        StatusDefinition().status_mappings
    )
    assert list(GroupVersionKind.model_fields) == ["group", "version", "kind"]
