"""Small builders of Karta definitions for gang tests (camelCase dicts → model)."""

from __future__ import annotations

from typing import Any

from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.model.types import Karta

ROOT_STATUS = {
    "phaseDefinition": {"path": ".status.phase"},
    "statusMappings": {"running": [{"byPhase": "Running"}]},
}
POD_KIND = {"group": "", "version": "v1", "kind": "Pod"}


def pts(path: str) -> dict[str, Any]:
    return {"podTemplateSpecPath": path}


def component(name: str, owner: str | None = None, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name, **fields}
    if owner is not None:
        data["ownerRef"] = owner
    return data


def karta(root: dict[str, Any], *children: dict[str, Any], gang: dict[str, Any] | None = None) -> Karta:
    root = {
        "kind": {"group": "example.org", "version": "v1", "kind": "Thing"},
        "statusDefinition": ROOT_STATUS,
        **root,
    }
    spec: dict[str, Any] = {"structureDefinition": {"rootComponent": root, "childComponents": list(children)}}
    if gang is not None:
        spec["optimizationInstructions"] = {"gangScheduling": gang}
    return Karta.model_validate({"metadata": {"name": "test"}, "spec": spec})


def selector(key_path: str, value: str | None = None) -> dict[str, Any]:
    sel: dict[str, Any] = {"keyPath": key_path}
    if value is not None:
        sel["value"] = value
    return {"componentTypeSelector": sel}


def pod(name: str, labels: dict[str, str] | None = None, **metadata: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "labels": labels or {}, **metadata}, "spec": {}}


EVALUATOR = Evaluator(trusted=True)


def make_factory(definition: Karta, obj: dict[str, Any]) -> ComponentFactory:
    return ComponentFactory(definition, obj, evaluator=EVALUATOR)
