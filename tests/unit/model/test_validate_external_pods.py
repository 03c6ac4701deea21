"""Extension E2 (docs/format-extensions.md, podSelector.externalPods): where the field is refused,
with a clear message, the note that marks every use, and the expression's compile check."""

from __future__ import annotations

from typing import Any

import pytest

from karta.model import load_karta, validate_karta
from karta.model.findings import Severity
from karta.model.validate_external import EXTERNAL_NOTE

EXPR = '{"release": (.metadata.name + "-dep")}'


def _karta(dep: dict[str, Any], *, gang: dict[str, Any] | None = None, root_external: bool = False) -> Any:
    root: dict[str, Any] = {
        "name": "app",
        "kind": {"group": "example.com", "version": "v1", "kind": "App"},
        "statusDefinition": {"phaseDefinition": {"path": ".status.phase"}},
    }
    if root_external:
        root["podSelector"] = {"externalPods": {"matchLabelsExpression": EXPR}}
    spec: dict[str, Any] = {
        "structureDefinition": {
            "rootComponent": root,
            "childComponents": [
                {
                    "name": "server",
                    "ownerRef": "app",
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "scaleDefinition": {"replicasPath": ".spec.replicas"},
                },
                {"name": "dep", "ownerRef": "app", **dep},
            ],
        }
    }
    if gang is not None:
        spec["optimizationInstructions"] = {"gangScheduling": gang}
    doc = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "example-com-app-v1"},
        "spec": spec,
    }
    result = load_karta(doc, strict=True)
    assert result.karta is not None, result.findings
    return result.karta


def _errors(karta: Any) -> list[str]:
    return [f.message for f in validate_karta(karta) if f.severity == Severity.ERROR]


EXTERNAL = {"podSelector": {"externalPods": {"matchLabelsExpression": EXPR}}}


def test_a_valid_use_is_one_note() -> None:
    findings = [f for f in validate_karta(_karta(EXTERNAL)) if "externalPods" in f.location]
    assert [f.severity for f in findings] == [Severity.NOTE]
    assert findings[0].message == EXTERNAL_NOTE
    assert findings[0].location == "spec.structureDefinition.childComponents[1].podSelector.externalPods"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"specDefinition": {"podSpecPath": ".spec.pod"}}, "cannot have a pod specification"),
        ({"scaleDefinition": {"replicasPath": ".spec.n"}}, "cannot have a scaleDefinition"),
        (
            {
                "podSelector": {
                    "externalPods": {"matchLabelsExpression": EXPR},
                    "replicaSelector": {"keyPath": ".x"},
                }
            },
            "cannot have a componentTypeSelector or replicaSelector",
        ),
        ({"podSelector": {"externalPods": {"matchLabelsExpression": " "}}}, "matchLabelsExpression is empty"),
    ],
)
def test_refused_where_it_makes_no_sense(extra: dict[str, Any], message: str) -> None:
    errors = [e for e in _errors(_karta({**EXTERNAL, **extra})) if e.startswith("component 'dep'")]
    assert len(errors) == 1
    assert errors[0].startswith(
        "component 'dep' has podSelector.externalPods (its pods are not the workload's own)"
    )
    assert message in errors[0]


def test_refused_on_the_root() -> None:
    errors = _errors(_karta({}, root_external=True))
    assert any("the root component is the workload itself" in e for e in errors)


@pytest.mark.parametrize(
    "gang",
    [
        {"podGroup": {"name": "app", "subGroups": [{"componentName": "dep"}]}},
        {"podGroup": {"name": "app", "split": {"componentName": "dep", "by": "instance"}}},
        {"podGroups": [{"name": "app", "members": [{"componentName": "dep"}]}]},
    ],
)
def test_no_gang_instruction_may_name_it(gang: dict[str, Any]) -> None:
    errors = _errors(_karta(EXTERNAL, gang=gang))
    assert any("cannot name it: it is never part of the workload's gangs" in e for e in errors), errors


def test_the_expression_must_compile() -> None:
    bad = {"podSelector": {"externalPods": {"matchLabelsExpression": '{"a": (.x'}}}
    findings = [f for f in validate_karta(_karta(bad)) if f.severity == Severity.ERROR]
    assert [f.location for f in findings] == [
        "spec.structureDefinition.childComponents[1].podSelector.externalPods.matchLabelsExpression"
    ]
