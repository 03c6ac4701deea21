"""What the Karta CRD says beyond the shapes of the model (docs/spec/format.md#field-tree and #crd-rules).

Owns the API-server-only keywords of the schema, keyed by model and wire name: list types and
list-map keys, ``minItems``/``minLength``/``minProperties``, the defaults of the condition field
names, and the CEL rules of the component type selector. :mod:`karta.crd.schema` merges them into
the shapes it derives from :mod:`karta.model`; every list field of the model must have a list type
here (the generator refuses to emit a list without one).
"""

from __future__ import annotations

from typing import Any

from karta.model import types as t
from karta.model.schema import ALWAYS_WRITTEN, wire_fields
from karta.model.types import SPLIT_BY, SPLIT_INDEXES

__all__ = [
    "CEL_KEYPATH_OR_LABELS",
    "CEL_VALUE_REQUIRES_KEYPATH",
    "FIELD_RULES",
    "OBJECT_RULES",
    "condition_field_defaults",
]

CEL_KEYPATH_OR_LABELS = "at least one of keyPath or matchLabels must be set"
CEL_VALUE_REQUIRES_KEYPATH = "value requires keyPath"

_ATOMIC: dict[str, Any] = {"x-kubernetes-list-type": "atomic"}
_SET: dict[str, Any] = {"x-kubernetes-list-type": "set"}


def _map(*keys: str) -> dict[str, Any]:
    return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": list(keys)}


def condition_field_defaults() -> dict[str, str]:
    """The CRD defaults of ``conditionsDefinition`` (section 2.3), taken from the model's own defaults."""
    wire = wire_fields(t.ConditionsDefinition)
    out: dict[str, str] = {}
    for alias in ALWAYS_WRITTEN[t.ConditionsDefinition]:
        default = t.ConditionsDefinition.model_fields[wire[alias].name].default
        assert isinstance(default, str) and default
        out[alias] = default
    return out


def _field_rules() -> dict[tuple[Any, str], dict[str, Any]]:
    rules: dict[tuple[Any, str], dict[str, Any]] = {
        (t.StructureDefinition, "childComponents"): _map("name"),
        (t.StructureDefinition, "additionalChildKinds"): _map("kind"),
        (t.StructureDefinition, "references"): _map("name"),  # extension E3
        (t.ListReference, "matchExpressions"): _ATOMIC,
        (t.ReferenceRequirement, "values"): _ATOMIC,
        (t.ReferenceRequirement, "operator"): {"enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
        (t.PodGroup, "subGroups"): _map("componentName"),
        (t.GangSplit, "by"): {"enum": list(SPLIT_BY)},
        (t.GangSplit, "indexes"): {"enum": list(SPLIT_INDEXES)},
        (t.GangSplit, "groupByKeyPaths"): _ATOMIC,  # ordered: the instance id, then the replica index
        (t.GangScheduling, "podGroups"): _map("name"),
        (t.AlphaPodGroup, "members"): _map("componentName"),
        (t.PodGroupMember, "groupByKeyPaths"): _SET,
        (t.PodGroupMember, "filters"): _SET,
        (t.StatusMatcher, "byConditions"): _ATOMIC,
        (t.SuspendDefinition, "suspendActions"): {**_ATOMIC, "minItems": 1},
        (t.SuspendDefinition, "resumeActions"): {**_ATOMIC, "minItems": 1},
        (t.ComponentTypeSelector, "keyPath"): {"minLength": 1},
        (t.ComponentTypeSelector, "matchLabels"): {"minProperties": 1},
        (t.KartaStatus, "conditions"): _map("type"),
    }
    for alias in wire_fields(t.StatusMappings):
        rules[(t.StatusMappings, alias)] = _ATOMIC
    for alias, default in condition_field_defaults().items():
        rules[(t.ConditionsDefinition, alias)] = {"default": default}
    return rules


FIELD_RULES: dict[tuple[Any, str], dict[str, Any]] = _field_rules()

OBJECT_RULES: dict[Any, dict[str, Any]] = {
    t.ComponentTypeSelector: {
        "x-kubernetes-validations": [
            {"rule": "has(self.keyPath) || has(self.matchLabels)", "message": CEL_KEYPATH_OR_LABELS},
            {"rule": "!has(self.value) || has(self.keyPath)", "message": CEL_VALUE_REQUIRES_KEYPATH},
        ]
    },
}
