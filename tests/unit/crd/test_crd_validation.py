"""Offline: the generated CRD schema accepts what the model accepts and rejects each invalid kind.

The schema is checked with the small structural validator of ``crd_structural`` (no API server).
The e2e tests (``tests/e2e/crd``) send the same definitions to a real one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_cases import INVALID_CASES, InvalidCase, alpha_definition, valid_definition
from crd_structural import structural_errors
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from karta.catalog import CATALOG_DATA_DIR
from karta.crd import build_schema
from karta.model import Severity, karta_to_dict, load_karta, validate_karta

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((REPO / "examples" / "definitions").glob("*.yaml"))
CATALOG = sorted(CATALOG_DATA_DIR.glob("*.yaml"))
SCHEMA = build_schema()


def model_errors(data: Any) -> list[str]:
    """Error findings of the strict loader and the validator (what ``kli validate`` fails on)."""
    result = load_karta(data, strict=True)
    errors = [f.message for f in result.findings if f.severity is Severity.ERROR]
    if result.karta is not None:
        errors += [f.message for f in validate_karta(result.karta) if f.severity is Severity.ERROR]
    return errors


@pytest.mark.parametrize("path", EXAMPLES + CATALOG, ids=lambda p: p.name)
def test_bundled_definitions_validate_against_the_schema(path: Path) -> None:
    raw = yaml.safe_load(path.read_text())
    assert structural_errors(SCHEMA, raw) == []
    karta = load_karta(path).karta
    assert karta is not None
    assert structural_errors(SCHEMA, karta_to_dict(karta)) == []


@pytest.mark.parametrize("data", [valid_definition(), alpha_definition()], ids=["current", "alpha"])
def test_shared_valid_definitions_are_valid_for_both(data: dict[str, Any]) -> None:
    assert model_errors(data) == []
    assert structural_errors(SCHEMA, data) == []


@pytest.mark.parametrize("case", INVALID_CASES, ids=lambda c: c.id)
def test_each_invalid_kind_is_rejected_by_schema_and_model(case: InvalidCase) -> None:
    data = case.build("invalid")
    errors = structural_errors(SCHEMA, data)
    assert len(errors) == 1, errors
    assert case.path in errors[0] and case.message in errors[0], errors
    assert model_errors(data), "the model must reject what the CRD rejects"


# --- hypothesis: definitions the model accepts are accepted by the schema ---------------------------

_names = st.sampled_from(["app", "leader", "worker", "ps", "head", "decode", "prefill", "svc-a"])
_exprs = st.sampled_from(
    [".spec.replicas", ".status.phase", '.metadata.labels["role"]', ".spec.x // 1", "1", ".spec.items[].name"]
)
_words = st.sampled_from(["", "a", "Running", "True", "x.y/z", "0"])
_gvk = st.fixed_dictionaries(
    {
        "group": st.sampled_from(["", "apps", "example.com"]),
        "version": st.sampled_from(["v1", "v1beta1"]),
        "kind": st.sampled_from(["Pod", "App", "Job"]),
    }
)
_matcher = st.one_of(
    st.fixed_dictionaries({"byPhase": _words}),
    st.fixed_dictionaries(
        {
            "byConditions": st.lists(
                st.fixed_dictionaries({"type": _words}, optional={"status": _words}), max_size=2
            )
        }
    ),
    st.fixed_dictionaries(
        {"byExpression": st.fixed_dictionaries({"expression": _exprs, "expectedResult": _words})}
    ),
)
_status = st.fixed_dictionaries(
    {
        "statusMappings": st.fixed_dictionaries(
            {}, optional={k: st.lists(_matcher, max_size=2) for k in ("running", "failed", "suspended")}
        )
    },
    optional={
        "phaseDefinition": st.fixed_dictionaries({"path": _exprs}),
        "conditionsDefinition": st.fixed_dictionaries(
            {"path": _exprs}, optional={"typeFieldName": _words, "reasonFieldName": _words}
        ),
    },
)
_actions = st.lists(
    st.fixed_dictionaries({"path": st.just(".spec.suspend"), "value": st.just("true")}), max_size=2
)
_type_selector = st.fixed_dictionaries(
    {},
    optional={
        "keyPath": st.sampled_from(["", '.metadata.labels["role"]']),
        "value": _words,
        "matchLabels": st.dictionaries(
            st.sampled_from(["role", "a/b"]), st.sampled_from(["x", ""]), max_size=2
        ),
    },
)
_pod_selector = st.fixed_dictionaries(
    {},
    optional={
        "componentTypeSelector": _type_selector,
        "replicaSelector": st.fixed_dictionaries({"keyPath": _exprs}),
    },
)
_topology = st.fixed_dictionaries(
    {},
    optional={
        "topologyName": st.just("default"),
        "requiredTopologyLevel": st.just("rack"),
        "preferredTopologyLevel": st.just("host"),
    },
)


@st.composite
def _definitions(draw: st.DrawFn) -> dict[str, Any]:
    root: dict[str, Any] = {"name": "root", "kind": {**draw(_gvk), "group": "example.com"}}
    root["statusDefinition"] = draw(_status)
    if draw(st.booleans()):
        root["suspendDefinition"] = {"suspendActions": draw(_actions), "resumeActions": draw(_actions)}
    names = draw(st.lists(_names, max_size=3))
    children = []
    for i, name in enumerate(names):
        child: dict[str, Any] = {"name": name, "ownerRef": draw(st.sampled_from(["root", *names[:i]]))}
        if draw(st.booleans()):
            child["kind"] = draw(_gvk)
        if draw(st.booleans()):
            child["specDefinition"] = {"podTemplateSpecPath": draw(_exprs)}
            child["scaleDefinition"] = {"replicasPath": draw(_exprs)}
        if draw(st.booleans()):
            child["podSelector"] = draw(_pod_selector)
        children.append(child)
    structure: dict[str, Any] = {"rootComponent": root}
    if children or draw(st.booleans()):
        structure["childComponents"] = children
    if draw(st.booleans()):
        structure["additionalChildKinds"] = draw(st.lists(_gvk, max_size=3))
    gang: dict[str, Any] = {}
    if names and draw(st.booleans()):
        group: dict[str, Any] = {"name": draw(st.sampled_from(["g", "", "G!"]))}
        subs = draw(st.lists(st.sampled_from(names), max_size=3))
        group["subGroups"] = [
            {"componentName": s, **({"topology": draw(_topology)} if draw(st.booleans()) else {})}
            for s in subs
        ]
        if draw(st.booleans()):
            group["topology"] = draw(_topology)
        gang["podGroup"] = group
    elif names and draw(st.booleans()):
        members = [
            {
                "componentName": m,
                "groupByKeyPaths": draw(st.lists(_exprs, max_size=2)),
                "filters": draw(st.lists(_exprs, max_size=2)),
            }
            for m in draw(st.lists(st.sampled_from(names), min_size=1, max_size=2))
        ]
        gang["podGroups"] = [{"name": draw(st.sampled_from(["p", "q"])), "members": members}]
    spec: dict[str, Any] = {"structureDefinition": structure}
    if gang or draw(st.booleans()):
        spec["optimizationInstructions"] = {"gangScheduling": gang} if gang else {}
    return {"apiVersion": "run.ai/v1alpha1", "kind": "Karta", "metadata": {"name": "generated"}, "spec": spec}


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(_definitions())
def test_schema_accepts_every_definition_the_model_accepts(data: dict[str, Any]) -> None:
    assume(not model_errors(data))
    assert structural_errors(SCHEMA, data) == []
    karta = load_karta(data).karta
    assert karta is not None
    assert structural_errors(SCHEMA, karta_to_dict(karta)) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_definitions())
def test_whatever_the_schema_rejects_the_model_rejects(data: dict[str, Any]) -> None:
    if structural_errors(SCHEMA, data):
        assert model_errors(data)
