"""Hostile CRDs through ``kli scaffold`` (issue 9, item 6): property names that would be code in a
jq path, control characters, thousands of properties; the draft must load and validate."""

from __future__ import annotations

from typing import Any

import yaml

from tests.hostile.bombs import ESC
from tests.hostile.harness import CANARY_NAME, Case, assert_all_fine, run_cases

NAMES = [
    f'w"] | $ENV.{CANARY_NAME} | .["',
    "a\\(env)b",
    "line\nbreak",
    f"esc{ESC}",
    "nul\x00",
    "rtl\u202eoverride",
    "replicas",
]


def crd(properties: dict[str, Any], kind: str = "Bomb") -> dict[str, Any]:
    spec = {
        "type": "object",
        "properties": {
            **properties,
            "replicas": {"type": "integer"},
        },
    }
    schema = {"type": "object", "properties": {"spec": spec, "status": {"type": "object"}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.lower()}s.hostile.karta.test"},
        "spec": {
            "group": "hostile.karta.test",
            "names": {"kind": kind, "plural": f"{kind.lower()}s", "singular": kind.lower()},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
            ],
        },
    }


CONTAINERS = {
    "type": "array",
    "items": {"type": "object", "properties": {"name": {"type": "string"}, "image": {"type": "string"}}},
}


def _hostile_properties() -> dict[str, Any]:
    """Each hostile name holds a PodTemplateSpec-shaped field, with a replica count beside it."""
    pod_spec = {"type": "object", "properties": {"containers": CONTAINERS}}
    template = {"type": "object", "properties": {"metadata": {"type": "object"}, "spec": pod_spec}}
    out: dict[str, Any] = {}
    for name in NAMES:
        out[name] = {
            "type": "object",
            "description": f"desc {ESC}\nsecond line",
            "properties": {"template": template, "replicas": {"type": "integer"}},
        }
    return out


def test_hostile_property_names_scaffold_to_drafts_that_validate() -> None:
    files = {"crd.yaml": yaml.safe_dump(crd(_hostile_properties()))}
    cases = [
        Case("scaffold/yaml", ["scaffold", "--crd", "crd.yaml"], files=files, codes=(0,)),
        Case("scaffold/json", ["scaffold", "--crd", "crd.yaml", "-o", "json"], files=files, codes=(0,)),
    ]
    outcomes = run_cases(cases)
    assert_all_fine(outcomes)
    draft = outcomes[0].out
    check = run_cases(
        [Case("scaffold/validate", ["validate", "draft.yaml"], files={"draft.yaml": draft}, codes=(0,))]
    )
    assert_all_fine(check)


def test_thousands_of_properties_scaffold_quickly() -> None:
    properties = {f"p{i}": {"type": "string"} for i in range(5000)}
    files = {"crd.yaml": yaml.safe_dump(crd(properties))}
    assert_all_fine(
        run_cases([Case("scaffold/5000", ["scaffold", "--crd", "crd.yaml"], files=files, seconds=10.0)])
    )
