"""Extension E3 (docs/format-extensions.md E3.4, structureDefinition.references): every refusal
with its message and field, the warning for an unused reference, undeclared ``$names``, the note,
and that the CRD carries the field."""

from __future__ import annotations

from typing import Any

import pytest

from karta.crd import build_crd
from karta.model import load_karta, validate_karta
from karta.model.findings import Finding, Severity
from karta.model.validate_references import REFERENCES_NOTE, is_literal

RUNTIME: dict[str, Any] = {
    "name": "runtime",
    "gvk": {"group": "example.com", "version": "v1", "kind": "RunTemplate"},
    "lookup": {"nameExpression": ".spec.templateRef.name"},
}
CONFIGS: dict[str, Any] = {
    "name": "configs",
    "gvk": {"group": "", "version": "v1", "kind": "ConfigMap"},
    "list": {"matchLabels": {"run": ".metadata.name", "tier": "trainer"}},
}


def _findings(
    refs: list[dict[str, Any]], *, replicas: str = "$runtime.spec.nodes // ($configs | length)"
) -> list[Finding]:
    doc = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "t"},
        "spec": {
            "structureDefinition": {
                "references": refs,
                "rootComponent": {
                    "name": "app",
                    "kind": {"group": "example.com", "version": "v1", "kind": "App"},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "statusMappings": {"running": [{"byPhase": "Running"}]},
                    },
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "scaleDefinition": {"replicasPath": replicas},
                },
            }
        },
    }
    result = load_karta(doc, strict=True)
    assert result.karta is not None, result.findings
    return validate_karta(result.karta)


def _errors(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.message, f.location) for f in findings if f.severity is Severity.ERROR]


def test_a_valid_lookup_and_list_is_one_note() -> None:
    findings = _findings([RUNTIME, CONFIGS])
    assert [(f.severity, f.message) for f in findings] == [(Severity.NOTE, REFERENCES_NOTE)]


def test_a_definition_without_references_has_no_note() -> None:
    assert _findings([], replicas=".spec.replicas") == []


WHERE = "spec.structureDefinition.references[0]"


@pytest.mark.parametrize(
    ("change", "message", "location"),
    [
        ({"name": "run-time"}, "reference name 'run-time' is not a jq variable name", f"{WHERE}.name"),
        ({"name": "ENV"}, "reference name 'ENV' shadows jq's own $ENV", f"{WHERE}.name"),
        (
            {"gvk": {"group": "Example_com", "version": "v1", "kind": "T"}},
            "is not an API group",
            f"{WHERE}.gvk.group",
        ),
        (
            {"gvk": {"group": "example.com", "version": "1", "kind": "T"}},
            "is not an API version",
            f"{WHERE}.gvk.version",
        ),
        (
            {"gvk": {"group": "example.com", "version": "v1", "kind": "t"}},
            "is not a Kind",
            f"{WHERE}.gvk.kind",
        ),
        ({"list": {"matchLabels": {"a": "b"}}}, "must have exactly one of lookup or list", WHERE),
        ({"lookup": None}, "must have exactly one of lookup or list", WHERE),
        (
            {"lookup": {"nameExpression": " "}},
            "lookup.nameExpression is empty",
            f"{WHERE}.lookup.nameExpression",
        ),
        (
            {"lookup": {"nameExpression": "$configs[0].metadata.name"}},
            "a reference's expressions see only the workload",
            f"{WHERE}.lookup.nameExpression",
        ),
    ],
)
def test_what_is_refused(change: dict[str, Any], message: str, location: str) -> None:
    ref = {k: v for k, v in {**RUNTIME, **change}.items() if v is not None}
    errors = _errors(_findings([ref, CONFIGS]))
    assert any(message in m and loc == location for m, loc in errors), errors


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ({"matchLabels": {"a": ".metadata.name |"}}, "failed to parse JQ expression '.metadata.name |'"),
        ({"matchLabels": {"a": "$configs[0]"}}, "a reference's expressions see only the workload"),
        ({"matchExpressions": [{"key": "a", "operator": "Near"}]}, "unknown operator 'Near'"),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "operator In needs values"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "takes no values"),
    ],
)
def test_list_selectors(selector: dict[str, Any], message: str) -> None:
    configs = {**CONFIGS, "list": selector}
    errors = _errors(_findings([RUNTIME, configs]))
    assert any(message in m for m, _ in errors), errors


def test_duplicate_names() -> None:
    errors = _errors(_findings([RUNTIME, CONFIGS, {**CONFIGS}]))
    assert ("duplicate reference name 'configs'", "spec.structureDefinition.references[2].name") in errors


def test_too_many_references() -> None:
    refs = [{**CONFIGS, "name": f"c{i}"} for i in range(17)]
    errors = _errors(_findings([RUNTIME, *refs]))
    assert (
        "the definition has 18 references; at most 16 are allowed",
        "spec.structureDefinition.references",
    ) in errors


def test_unused_reference_is_a_warning() -> None:
    findings = _findings([RUNTIME, CONFIGS], replicas="$runtime.spec.nodes")
    warnings = [(f.message, f.location) for f in findings if f.severity is Severity.WARNING]
    assert warnings == [
        (
            "reference 'configs' is never used: no expression reads $configs",
            "spec.structureDefinition.references[1]",
        )
    ]


def test_undeclared_name_is_an_error_naming_the_expression() -> None:
    errors = _errors(_findings([RUNTIME, CONFIGS], replicas="$runtim.spec.nodes + ($configs | length)"))
    where = "spec.structureDefinition.rootComponent.scaleDefinition.replicasPath"
    assert (
        f"failed to compile JQ expression '$runtim.spec.nodes + ($configs | length)' at '{where}': "
        "$runtim is not defined (declare it in spec.structureDefinition.references to read a related object)",
        where,
    ) in errors


def test_a_reference_expression_is_safety_checked() -> None:
    ref = {**RUNTIME, "lookup": {"nameExpression": "def f: f; f"}}
    errors = _errors(_findings([ref, CONFIGS]))
    assert any("lookup.nameExpression" in loc and "failed validation" in m for m, loc in errors), errors


def test_the_crd_carries_the_field() -> None:
    schema = build_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    structure = schema["properties"]["spec"]["properties"]["structureDefinition"]
    refs = structure["properties"]["references"]
    assert refs["x-kubernetes-list-map-keys"] == ["name"]
    item = refs["items"]
    assert item["required"] == ["name", "gvk"]
    assert set(item["properties"]) == {"name", "gvk", "namespaceExpression", "lookup", "list"}
    assert item["properties"]["lookup"]["required"] == ["nameExpression"]
    labels = item["properties"]["list"]["properties"]["matchLabels"]
    assert labels["additionalProperties"] == {"type": "string"}


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ("trainer", True),
        ("", True),
        ("a.b-c_d", True),
        ("x" * 63, True),
        ("x" * 64, False),
        (".metadata.name", False),
        ("$x", False),
        ("(true)", False),
        ("-a", False),
        ("a b", False),
    ],
)
def test_literal_or_expression(value: str, literal: bool) -> None:
    assert is_literal(value) is literal


def test_a_list_without_a_selector_reads_every_object_of_its_kind() -> None:
    """``list: {}`` is Kubernetes' empty selector (a KServe runtime has no label to select it by):
    valid, bounded by the objects-per-list limit when read (E3.3.6)."""
    configs = {**CONFIGS, "list": {}}
    assert _errors(_findings([RUNTIME, configs])) == []
