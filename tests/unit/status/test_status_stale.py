"""The stale-status rule: ``status.observedGeneration`` below ``metadata.generation``.

The matched set stays what the mappings say; the result carries ``stale``; the primary status
ignores Degraded, Completed and Failed (Initializing when only those matched). The generated status
functions and the general code agree; the flag reaches ``kli inspect`` and ``kli describe``.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.engines import GENERAL, GENERATED

from karta.cli.views.describe import render_table
from karta.cli.views.inspect import render_table as render_inspect
from karta.extract import ComponentFactory, build_tree
from karta.model import load_karta
from karta.model.types import ResourceStatus, StatusDefinition
from karta.report import inspect_report
from karta.report.rows import build_rows, describe_report
from karta.status import extract_status, generated_status_fn, primary_status
from karta.status.result import is_stale, staleness

R = ResourceStatus


MAPPINGS = {
    "running": [{"byExpression": {"expression": ".status.ready > 0", "expectedResult": "true"}}],
    "failed": [{"byConditions": [{"type": "Failed", "status": "True"}]}],
    "completed": [{"byConditions": [{"type": "Complete", "status": "True"}]}],
    "degraded": [
        {"byExpression": {"expression": ".status.ready < .spec.replicas", "expectedResult": "true"}}
    ],
    "suspended": [{"byConditions": [{"type": "Suspended", "status": "True"}]}],
}
DEFINITION = StatusDefinition.model_validate(
    {"conditionsDefinition": {"path": ".status.conditions"}, "statusMappings": MAPPINGS}
)


def workload(generation: Any, observed: Any, *, ready: int = 1, **conditions: str) -> dict[str, Any]:
    status: dict[str, Any] = {
        "ready": ready,
        "conditions": [{"type": t, "status": s} for t, s in conditions.items()],
    }
    if observed is not ...:
        status["observedGeneration"] = observed
    meta: dict[str, Any] = {"name": "w", "namespace": "ns"}
    if generation is not ...:
        meta["generation"] = generation
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": meta,
        "spec": {"replicas": 2},
        "status": status,
    }


def both(obj: dict[str, Any]) -> Any:
    general = extract_status(DEFINITION, obj, evaluator=GENERAL)
    generated = extract_status(DEFINITION, obj, evaluator=GENERATED)
    assert generated_status_fn(DEFINITION) is not None, "the generated path must exist for this test"
    assert generated.to_dict() == general.to_dict()
    assert generated.stale == general.stale
    return general


# --- staleness ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("generation", "observed", "expected"),
    [
        (2, 1, (1, 2)),
        (2, 2, None),
        (2, 3, None),  # ahead: no claim of staleness
        (5, 0, (0, 5)),
        (2, ..., None),  # the operator does not write the field
        (..., 1, None),  # no generation
        (2, None, None),
        (2, True, None),  # a bool is not an integer
        (True, 0, None),
        (2, 1.0, None),
        (2, "1", None),
        ("2", 1, None),
    ],
)
def test_staleness(generation: Any, observed: Any, expected: Any) -> None:
    obj = workload(generation, observed)
    assert staleness(obj) == expected
    assert is_stale(obj) is (expected is not None)


@pytest.mark.parametrize("obj", [None, [], "x", {}, {"status": None}, {"status": [], "metadata": {}}])
def test_staleness_of_odd_objects(obj: Any) -> None:
    assert staleness(obj) is None


# --- the primary rule ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matched", "fresh", "stale"),
    [
        ([R.RUNNING, R.DEGRADED], R.DEGRADED, R.RUNNING),
        ([R.FAILED], R.FAILED, R.INITIALIZING),
        ([R.COMPLETED], R.COMPLETED, R.INITIALIZING),
        ([R.FAILED, R.COMPLETED, R.DEGRADED], R.FAILED, R.INITIALIZING),
        ([R.SUSPENDED, R.FAILED], R.FAILED, R.SUSPENDED),
        ([R.RUNNING, R.FAILED, R.INITIALIZING], R.FAILED, R.RUNNING),
        ([R.INITIALIZING, R.DEGRADED], R.DEGRADED, R.INITIALIZING),
        ([R.SUSPENDING], R.SUSPENDING, R.SUSPENDING),
        ([R.UNDEFINED], R.UNDEFINED, R.UNDEFINED),  # nothing matched: a mapping gap stays visible
        ([], R.UNDEFINED, R.UNDEFINED),
    ],
)
def test_primary_status_when_stale(
    matched: list[ResourceStatus], fresh: ResourceStatus, stale: ResourceStatus
) -> None:
    assert primary_status(matched) == fresh
    assert primary_status(matched, stale=True) == stale


# --- extraction, both paths -------------------------------------------------------------------------


def test_a_current_status_is_unchanged() -> None:
    result = both(workload(3, 3, Failed="True"))
    assert result.stale is False
    assert result.matched == [R.RUNNING, R.FAILED, R.DEGRADED]
    assert result.primary == R.FAILED
    assert "stale" not in result.to_dict()


def test_a_stale_failure_is_not_the_primary() -> None:
    result = both(workload(3, 2, Failed="True"))
    assert result.stale is True
    assert result.matched == [R.RUNNING, R.FAILED, R.DEGRADED], "the matched set is what the mappings say"
    assert result.primary == R.RUNNING
    assert result.to_dict()["stale"] is True


def test_a_stale_completion_alone_reads_as_initializing() -> None:
    result = both(workload(3, 2, ready=0, Complete="True"))
    assert result.matched == [R.COMPLETED, R.DEGRADED]
    assert result.primary == R.INITIALIZING


def test_a_stale_suspension_stays_suspended() -> None:
    result = both(workload(3, 2, ready=2, Suspended="True", Failed="True"))
    assert result.matched == [R.SUSPENDED, R.RUNNING, R.FAILED]
    assert result.primary == R.SUSPENDED


def test_one_matched_status_takes_the_stale_rule_too() -> None:
    # The general code and the generated function both short-cut a single match: not when stale.
    result = both(workload(2, 1, ready=2, Failed="True") | {"spec": {"replicas": 2}})
    assert result.matched == [R.RUNNING, R.FAILED]
    only_failed = both({**workload(2, 1, ready=0, Failed="True"), "spec": {"replicas": 0}})
    assert only_failed.matched == [R.FAILED]
    assert only_failed.primary == R.INITIALIZING


# --- reports ---------------------------------------------------------------------------------------------

_LOADED = load_karta(
    {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "things"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "thing",
                    "kind": {"group": "example.com", "version": "v1", "kind": "Thing"},
                    "statusDefinition": {
                        "conditionsDefinition": {"path": ".status.conditions"},
                        "statusMappings": MAPPINGS,
                    },
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "scaleDefinition": {"replicasPath": ".spec.replicas"},
                }
            }
        },
    }
)
assert _LOADED.karta is not None
KARTA = _LOADED.karta


def _with_template(obj: dict[str, Any]) -> dict[str, Any]:
    obj["spec"]["template"] = {"spec": {"containers": [{"name": "c", "image": "i"}]}}
    return obj


def test_inspect_json_and_table_carry_the_flag() -> None:
    stale = inspect_report(KARTA, _with_template(workload(3, 2, Failed="True")), evaluator=GENERATED)
    assert stale["status"] is not None
    assert stale["status"]["stale"] is True
    assert stale["status"]["primary"] == "Running"
    assert "(stale: status.observedGeneration < metadata.generation)" in render_inspect(stale)
    current = inspect_report(KARTA, _with_template(workload(2, 2, Failed="True")), evaluator=GENERATED)
    assert current["status"] is not None
    assert "stale" not in current["status"]
    assert "stale" not in render_inspect(current)


def _describe(obj: dict[str, Any]) -> tuple[dict[str, Any], str]:
    factory = ComponentFactory(KARTA, obj, evaluator=GENERATED)
    tree = build_tree(factory, []).pruned()
    rows = build_rows(tree, gpu_resources=("nvidia.com/gpu",))
    view = describe_report(obj=obj, definition="things", origin="user", tree=tree, rows=rows, file_mode=False)
    text = render_table(dict(view), rows, staleness=staleness(obj) if view.get("stale") else None)
    return dict(view), text


def test_describe_json_and_phase_line_carry_the_flag() -> None:
    view, text = _describe(_with_template(workload(3, 2, Failed="True")))
    assert view["stale"] is True
    assert list(view).index("stale") == list(view).index("fileMode") + 1
    assert "Phase: Running,Failed,Degraded (stale: observedGeneration 2 < generation 3)\n" in text
    tree = build_tree(ComponentFactory(KARTA, _with_template(workload(3, 2)), evaluator=GENERATED), None)
    assert tree.to_dict()["status"]["stale"] is True
    current = _with_template(workload(3, 3, Failed="True"))
    view, text = _describe(current)
    assert "stale" not in view
    assert "stale" not in text
    tree = build_tree(ComponentFactory(KARTA, current, evaluator=GENERATED), None)
    assert "stale" not in tree.to_dict()["status"]
