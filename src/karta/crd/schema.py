"""The CustomResourceDefinition ``kartas.run.ai``, generated from the Python model.

Owns :func:`build_crd`: it walks the models of :mod:`karta.model.types` along their wire
names (:func:`karta.model.schema.wire_fields`), marks the properties of
:data:`karta.model.schema.REQUIRED` required, and merges the API-server-only keywords of
:mod:`karta.crd.rules`. The result is a structural OpenAPI v3 schema, so the CRD and the loader can
never disagree about which fields exist or are required. Identity, scope, subresources and printer
columns follow docs/spec/format.md#crd.
"""

from __future__ import annotations

import copy
import types as _pytypes
import typing
from typing import Any

from karta.crd.rules import FIELD_RULES, OBJECT_RULES
from karta.model import types as t
from karta.model.schema import REQUIRED, wire_fields

__all__ = [
    "CRD_NAME",
    "LIST_KIND",
    "PLURAL",
    "PRINTER_COLUMNS",
    "SHORT_NAMES",
    "SINGULAR",
    "VERSION",
    "build_crd",
    "build_schema",
]

VERSION = t.API_VERSION.split("/", 1)[1]
PLURAL = "kartas"
SINGULAR = "karta"
LIST_KIND = "KartaList"
SHORT_NAMES = ("krt",)
CRD_NAME = f"{PLURAL}.{t.API_GROUP}"

PRINTER_COLUMNS: tuple[dict[str, str], ...] = (
    {"name": "Framework", "type": "string", "jsonPath": ".spec.structureDefinition.rootComponent.kind.kind"},
    {"name": "Root Component", "type": "string", "jsonPath": ".spec.structureDefinition.rootComponent.name"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
)

# metav1.Condition as every Kubernetes API (and controller-gen) publishes it.
_CONDITION: dict[str, Any] = {
    "type": "object",
    "description": "A standard Kubernetes condition (metav1.Condition).",
    "properties": {
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "message": {"type": "string", "maxLength": 32768},
        "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
        "reason": {
            "type": "string",
            "maxLength": 1024,
            "minLength": 1,
            "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "type": {
            "type": "string",
            "maxLength": 316,
            "pattern": (
                r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
            ),
        },
    },
    "required": ["lastTransitionTime", "message", "reason", "status", "type"],
}

_DESCRIPTIONS: dict[Any, str] = {
    t.Karta: "Karta describes one Kubernetes workload type (its components, pods, scale, status "
    "and gang structure) with jq expressions.",
    t.KartaSpec: "The definition: the component tree and optional optimization instructions.",
    t.KartaStatus: "Managed by the operator.",
}


def _strip_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, _pytypes.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _scalar(annotation: Any, where: str) -> dict[str, Any]:
    annotation = _strip_optional(annotation)
    origin = typing.get_origin(annotation)
    if annotation is str:
        return {"type": "string"}
    if annotation is int:
        return {"type": "integer"}
    if origin is dict and typing.get_args(annotation) == (str, str):
        return {"type": "object", "additionalProperties": {"type": "string"}}
    if origin is tuple:
        item = typing.get_args(annotation)[0]
        if item is str:
            return {"type": "array", "items": {"type": "string"}}
        if typing.get_origin(item) is dict:  # KartaStatus.conditions: free dicts in the model
            return {"type": "array", "items": copy.deepcopy(_CONDITION)}
    raise TypeError(f"no CRD schema for {where}: {annotation!r}")


def _object(model: Any) -> dict[str, Any]:
    """The schema of one pydantic model class (typed ``Any``: the pydantic plugin's class types do not
    unify with ``type[BaseModel]``)."""
    if model is t.ObjectMeta:
        return {"type": "object"}  # the API server owns ObjectMeta
    out: dict[str, Any] = {}
    if model in _DESCRIPTIONS:
        out["description"] = _DESCRIPTIONS[model]
    out["type"] = "object"
    properties: dict[str, Any] = {}
    for alias, wf in wire_fields(model).items():
        where = f"{model.__name__}.{alias}"
        if wf.model is not None:
            sub = _object(wf.model)
            prop = {"type": "array", "items": sub} if wf.is_list else sub
        else:
            prop = _scalar(model.model_fields[wf.name].annotation, where)
        prop.update(copy.deepcopy(FIELD_RULES.get((model, alias), {})))
        if prop["type"] == "array" and "x-kubernetes-list-type" not in prop:
            raise TypeError(f"no list type for {where}: add one to karta.crd.rules.FIELD_RULES")
        properties[alias] = prop
    out["properties"] = properties
    required = REQUIRED.get(model, ())
    if required:
        out["required"] = list(required)
    out.update(copy.deepcopy(OBJECT_RULES.get(model, {})))
    return out


def build_schema() -> dict[str, Any]:
    """The ``openAPIV3Schema`` of ``run.ai/v1alpha1`` ``Karta``."""
    return _object(t.Karta)


def build_crd() -> dict[str, Any]:
    """The complete CustomResourceDefinition manifest (a fresh dict on every call)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": t.API_GROUP,
            "names": {
                "kind": t.KIND,
                "listKind": LIST_KIND,
                "plural": PLURAL,
                "singular": SINGULAR,
                "shortNames": list(SHORT_NAMES),
            },
            "scope": "Cluster",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "additionalPrinterColumns": [dict(c) for c in PRINTER_COLUMNS],
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": build_schema()},
                }
            ],
        },
    }
