"""Hostile CRDs and expressions through ``kli validate --crd`` (issue 12 item 6): property names
that would be code or break lines, thousands of properties, schema parts of the wrong type, and an
expression whose alternatives multiply; every run ends in time with a clear outcome."""

from __future__ import annotations

from typing import Any

import yaml

from tests.hostile.bombs import ESC
from tests.hostile.harness import Case, assert_all_fine, run_cases
from tests.hostile.test_scaffold_bombs import NAMES, crd


def _definition(replicas: str, phase: str = ".status.phase") -> str:
    karta = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "hostile-karta-test-bomb-v1"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "bomb",
                    "kind": {"group": "hostile.karta.test", "version": "v1", "kind": "Bomb"},
                    "scaleDefinition": {"replicasPath": replicas},
                    "statusDefinition": {
                        "phaseDefinition": {"path": phase},
                        "statusMappings": {"running": [{"byPhase": "Running"}]},
                    },
                }
            }
        },
    }
    return yaml.safe_dump(karta)


def _case(name: str, the_crd: dict[str, Any], definition: str, *, codes: tuple[int, ...] = (0, 1)) -> Case:
    files = {"crd.yaml": yaml.safe_dump(the_crd), "def.yaml": definition}
    argv = ["validate", "--crd", "crd.yaml", "def.yaml"]
    return Case(f"validate-crd/{name}", argv, files=files, codes=codes, seconds=10.0)


def test_hostile_names_thousands_of_properties_and_wrong_types() -> None:
    hostile = {name: {"type": "object", "properties": {"replicas": {"type": "integer"}}} for name in NAMES}
    many = {f"p{i}": {"type": "string"} for i in range(5000)}
    wrong = crd({})
    schema = wrong["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"] = {"replicas": "nope", "x": {"type": ["integer"], "items": 3}}
    schema["properties"]["status"] = {"type": f"bogus{ESC}\n" * 50, "properties": []}
    reads = " // ".join(f".spec[{name!r}].replicas".replace("'", '"') for name in NAMES if "\x00" not in name)
    cases = [
        _case("names", crd(hostile), _definition(reads)),
        _case("names-typo", crd(hostile), _definition('.spec["line\\nbrake"].replicas'), codes=(1,)),
        _case("many", crd(many), _definition(".spec.p4999x // .spec.replicas"), codes=(1,)),
        _case("wrong-types", wrong, _definition(".spec.replicas // .spec.x[0] // .spec.x.y")),
    ]
    outcomes = run_cases(cases)
    assert_all_fine(outcomes)
    assert "did you mean 'p4999'?" in outcomes[2].out
    assert "did you mean 'line\\nbreak'?" in outcomes[1].out


def test_alternatives_that_multiply_end_in_time() -> None:
    expression = " | ".join(["(.spec.replicas // .spec.a // .spec.b // .spec.c)"] * 60)
    outcomes = run_cases([_case("multiply", crd({}), _definition(expression))])
    assert_all_fine(outcomes)
