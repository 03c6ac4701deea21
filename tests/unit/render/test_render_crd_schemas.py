"""Rendered PodGroups fit the OpenAPI schemas of the scheduler CRDs in the shared corpus (KAI,
Volcano, coscheduling): every field is declared, with the declared type, and required fields are
present. A structural check, not a full OpenAPI validator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from render_fixtures import definition, run, train_7_pods

CRDS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "crds"
pytestmark = pytest.mark.skipif(not CRDS.is_dir(), reason=f"shared corpus not found at {CRDS}")

SCHEMAS = {
    "kai": "scheduling.run.ai_podgroups.yaml",
    "volcano": "scheduling.volcano.sh_podgroups.yaml",
    "coscheduling": "scheduling.x-k8s.io_podgroups.yaml",
}
TYPES: dict[str, Any] = {"integer": int, "string": str, "object": dict, "array": list, "boolean": bool}


def _schema(file: str, api_version: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / file).read_text())
    version = api_version.rpartition("/")[2]
    (match,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    schema: dict[str, Any] = match["schema"]["openAPIV3Schema"]
    return schema


def _check(value: Any, schema: dict[str, Any], where: str) -> None:
    if schema.get("x-kubernetes-int-or-string"):
        assert isinstance(value, int | str), where
        return
    if schema.get("x-kubernetes-preserve-unknown-fields") and "properties" not in schema:
        return
    expected = schema.get("type")
    if expected is not None:
        assert isinstance(value, TYPES[expected]), f"{where}: {value!r} is not {expected}"
    if isinstance(value, dict):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        for key in schema.get("required", []):
            assert key in value, f"{where}: required {key} missing"
        for key, item in value.items():
            if properties is not None and key in properties:
                _check(item, properties[key], f"{where}.{key}")
            elif isinstance(additional, dict):
                _check(item, additional, f"{where}.{key}")
            else:
                assert properties is None and additional is not False, f"{where}: unknown field {key}"
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            _check(item, schema["items"], f"{where}[{index}]")


VARIANTS = {
    "sub-groups": {},
    "no sub-groups": {"podGroup": {"name": "job"}},
    "topology": {
        "podGroup": {
            "name": "job",
            "topology": {
                "topologyName": "dc",
                "requiredTopologyLevel": "rack",
                "preferredTopologyLevel": "host",
            },
            "subGroups": [
                {
                    "componentName": "master",
                    "topology": {"topologyName": "dc", "requiredTopologyLevel": "rack"},
                },
                {"componentName": "worker"},
            ],
        }
    },
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("backend", list(SCHEMAS))
def test_rendered_objects_fit_the_crd_schema(backend: str, variant: str) -> None:
    gang = VARIANTS[variant]
    karta = definition(**gang) if gang else definition()
    result = run(backend, karta, pods=train_7_pods(), min_resources=True, schedule_timeout_seconds=60)
    assert result.objects
    for obj in result.objects:
        schema = _schema(SCHEMAS[backend], obj["apiVersion"])
        _check(obj["spec"], schema["properties"]["spec"], "spec")
