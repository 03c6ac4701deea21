"""Bindings that cannot fail are computed where first used (issue 23): a matcher's
``E as $x | .status.phase == "Running" and ... $x ...`` costs nothing beyond the phase test when
the phase differs, while a binding that can fail is still computed where bound, so its error is
still the matcher's diagnostic (R3) whatever the rest of the matcher reads."""

from __future__ import annotations

from typing import Any

import pytest

from karta.jq import Evaluator
from karta.jq.codegen import cannot_fail
from karta.jq.parser import parse
from karta.model.types import ResourceStatus, StatusDefinition
from karta.status import extract_status
from karta.status.extract import generated_status_fn

EV = Evaluator(trusted=True)
R = ResourceStatus


@pytest.mark.parametrize(
    ("expression", "total"),
    [
        ("[.status.xs[]? | .n // 0] | add // 0", True),
        ("[.status.xs[]? | .state.running.startedAt // empty] | max", True),
        ("[.status.conditions[]?]", True),
        ("(.spec.components // {})", True),
        ('[.a[]?] | any(. == "x")', True),
        ('.a? | any(. == "x")', False),  # any(f) of a non-array fails
        ('{"a": .b?, "c": 1}', True),
        ("{(.k): 1}", False),
        ('[.a[]?] | any(.[]?; . == "x")', True),
        ('select(. == "x")', True),
        ("not", True),
        (".a", False),
        ('[.status.conditions[]? | select(.type == "Ready")] | last', False),  # .type of a string
        ("max", False),  # on a non-array
        ("[.a[]?] | add", False),
        ('(.a // "") | ascii_downcase', False),
        (".a?", True),
        ("1 + 1", False),
        ("try .a catch .", False),
    ],
)
def test_cannot_fail(expression: str, total: bool) -> None:
    assert cannot_fail(parse(expression)) is total


LAZY = '([.status.xs[]? | .n // 0] | add // 0) as $n | .status.phase == "Running" and $n > 0'
# ascii_downcase fails on a number: never lazy, so the error is reported on every object.
EAGER = '(.spec.s | ascii_downcase) as $s | .status.phase == "Running" and $s == "a"'


def _definition(expression: str) -> StatusDefinition:
    return StatusDefinition.model_validate(
        {
            "phaseDefinition": {"path": ".status.phase"},
            "statusMappings": {
                "degraded": [{"byExpression": {"expression": expression, "expectedResult": "true"}}],
                "running": [{"byPhase": "Running"}],
                "initializing": [{"byPhase": "Pending"}],
            },
        }
    )


def _source(definition: StatusDefinition) -> str:
    for _ in range(2):  # built from the second use (KARTA_CODEGEN=on) or the first (eager)
        fn = generated_status_fn(definition)
    assert fn is not None
    source: str = fn.__globals__["__source__"]
    return source


def test_a_binding_that_cannot_fail_is_computed_after_the_test_that_guards_it() -> None:
    lines = _source(_definition(LAZY)).splitlines()
    phase_test = next(i for i, line in enumerate(lines) if "'Running'" in line and "==" in line)
    computed = next(i for i, line in enumerate(lines) if "is _UNSET:" in line)
    assert phase_test < computed


@pytest.mark.parametrize(
    ("obj", "matched"),
    [
        ({"status": {"phase": "Pending", "xs": [{"n": 1}]}}, [R.INITIALIZING]),
        ({"status": {"phase": "Running", "xs": [{"n": 1}, {"n": 2}]}}, [R.RUNNING, R.DEGRADED]),
        ({"status": {"phase": "Running", "xs": [{"n": 0}, "x", None]}}, [R.RUNNING]),
        ({"status": {"phase": "Running", "xs": [{"n": "a"}, {"n": 1}]}}, [R.RUNNING]),  # add fails: 0
        ({"status": {"phase": "Running", "xs": 3}}, [R.RUNNING]),
    ],
)
def test_lazy_binding_results_are_the_general_codes(obj: dict[str, Any], matched: list[R]) -> None:
    definition = _definition(LAZY)
    generated = extract_status(definition, obj, evaluator=EV)
    general = extract_status(definition, obj, evaluator=Evaluator(trusted=False))
    assert generated.matched == general.matched == matched
    assert generated.diagnostics == general.diagnostics == []


@pytest.mark.parametrize("phase", ["Pending", "Running"])
def test_a_binding_that_can_fail_is_still_reported_when_the_matcher_does_not_need_it(phase: str) -> None:
    definition = _definition(EAGER)
    result = extract_status(definition, {"status": {"phase": phase}, "spec": {"s": 1}}, evaluator=EV)
    assert [d.location for d in result.diagnostics] == ["statusMappings.degraded[0]"]


def _mappings(*expressions: str) -> StatusDefinition:
    return StatusDefinition.model_validate(
        {
            "statusMappings": {
                status: [{"byExpression": {"expression": expression, "expectedResult": "true"}}]
                for status, expression in zip(("running", "failed", "degraded"), expressions, strict=False)
            },
        }
    )


def test_a_source_bound_under_different_enclosing_bindings_is_computed_once() -> None:
    # $n reads neither $a nor $b: the three bindings of (.spec.xs | length) share one variable.
    definition = _mappings(
        "(.spec.a | length) as $a | (.spec.xs | length) as $n | $n > 1",
        "(.spec.b | length) as $b | (.spec.xs | length) as $n | $n > 2 and $b > 0",
        "(.spec.xs | length) as $n | $n > 3",
    )
    source = _source(definition)
    assert source.count("= _UNSET") == 3  # $a, $b and $n
    obj = {"spec": {"a": "x", "b": "yy", "xs": [1, 2, 3, 4]}}
    general = extract_status(definition, obj, evaluator=Evaluator(trusted=False))
    assert extract_status(definition, obj, evaluator=EV) == general
    assert general.matched == [R.RUNNING, R.FAILED, R.DEGRADED]


def test_a_binding_inside_a_loop_that_does_not_read_the_loop_variable_is_shared() -> None:
    definition = _mappings(
        "[.spec.items[]? as $i | (.spec.xs | length) as $n | $i + $n] | any(. > 4)",
        "(.spec.xs | length) as $n | $n == 2",
    )
    for obj in ({"spec": {"items": [1, 3], "xs": [0, 0]}}, {"spec": {"items": [1], "xs": [0]}}):
        general = extract_status(definition, obj, evaluator=Evaluator(trusted=False))
        assert extract_status(definition, obj, evaluator=EV) == general
    assert _source(definition).count("= _UNSET") == 3  # $n, the collection and the collection | any
