"""R3 holds whatever the cause (issue 9): an error inside one status matcher, whether a jq error, a
``RecursionError`` on a deeply nested object, an ``OverflowError`` or ``TypeError`` on huge
integers, a ``MemoryError``, a ``ValueError`` or any KartaError, is a diagnostic of that matcher;
other matchers still run. Only :class:`JqBudgetError` (the object's budget) ends the extraction.
The same through the generated status function and through the factory, which calls it directly."""

from __future__ import annotations

from typing import Any

import pytest

from karta.errors import ConversionError, JqBudgetError, JqTimeoutError, StatusError
from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.model.types import Karta, ResourceStatus, StatusDefinition

R = ResourceStatus


def deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


def _status_dict(expression: str) -> dict[str, Any]:
    return {
        "phaseDefinition": {"path": ".status.phase"},
        "statusMappings": {
            "running": [
                {"byExpression": {"expression": expression, "expectedResult": "x"}},
                {"byPhase": "Running"},
            ],
            "failed": [{"byPhase": "Failed"}],
        },
    }


def definition(expression: str) -> StatusDefinition:
    return StatusDefinition.model_validate(_status_dict(expression))


HOSTILE = {
    "status": {"phase": "Running"},
    "spec": {"n": 2**64, "big": 10**400, "s": "x", "deep": deep(100_000)},
}

# (expression, what it raises inside the evaluator today on HOSTILE)
CASES = [
    ("[.spec.deep] | implode", "RecursionError"),  # libjq path: the input is serialised recursively
    (".spec.deep | tostream | tostring", "RecursionError"),
    # (".spec.big / 3" and ".spec.big | floor" raised OverflowError before the fast path computed
    # like jq on huge numbers; they now evaluate, and the Raising evaluator below still pins R3 for
    # an OverflowError)
    ('.spec.s | test("x")', "TypeError"),  # libjq: orjson cannot write 2**64
    ("[.spec.n] | implode", "TypeError"),
]


@pytest.mark.parametrize(("expression", "cause"), CASES)
@pytest.mark.parametrize("trusted", [True, False])
def test_a_hostile_object_keeps_the_error_in_its_matcher(expression: str, cause: str, trusted: bool) -> None:
    from karta.status import extract_status

    result = extract_status(definition(expression), HOSTILE, evaluator=Evaluator(trusted=trusted))
    assert result.matched == [R.RUNNING]  # the next matcher of the same status still ran
    (diagnostic,) = result.diagnostics
    assert diagnostic.message.startswith("failed to match status running (matcher 0): ")
    assert diagnostic.location == "statusMappings.running[0]"
    with pytest.raises(StatusError, match=r"failed to match status running \(matcher 0\)"):
        extract_status(definition(expression), HOSTILE, evaluator=Evaluator(trusted=trusted), strict=True)


def _karta(expression: str) -> Karta:
    root = {
        "name": "root",
        "kind": {"group": "a.io", "version": "v1", "kind": "K"},
        "statusDefinition": _status_dict(expression),
    }
    return Karta.model_validate(
        {"metadata": {"name": "k"}, "spec": {"structureDefinition": {"rootComponent": root}}}
    )


@pytest.mark.parametrize(("expression", "cause"), CASES)
def test_through_the_factory_and_its_generated_status_function(expression: str, cause: str) -> None:
    factory = ComponentFactory(_karta(expression), HOSTILE, evaluator=Evaluator(trusted=True))
    status = factory.root().status()
    assert status is not None and status.matched == [R.RUNNING]
    assert len(status.diagnostics) == 1


class Raising(Evaluator):
    """An evaluator whose matcher expression raises what it is told to (the general path runs,
    since ``evaluate`` is overridden)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(trusted=True)
        self.error = error

    def evaluate(self, expression: str, data: Any) -> list[Any]:
        if "MARK" in expression:
            raise self.error
        return super().evaluate(expression, data)


@pytest.mark.parametrize(
    "error",
    [
        RecursionError("maximum recursion depth exceeded"),
        OverflowError("int too large to convert to float"),
        ValueError("Exceeds the limit (4300 digits) for integer string conversion"),
        TypeError("Integer exceeds 64-bit range"),
        MemoryError(),
        ConversionError("not a string"),
        KeyError("x"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_every_cause_stays_in_its_matcher(error: BaseException) -> None:
    from karta.status import extract_status

    result = extract_status(definition('"MARK"'), HOSTILE, evaluator=Raising(error))
    assert result.matched == [R.RUNNING]
    (diagnostic,) = result.diagnostics
    assert "failed to match status running (matcher 0)" in diagnostic.message
    assert type(error).__name__ in diagnostic.message or str(error) in diagnostic.message


@pytest.mark.parametrize(
    "error", [JqBudgetError("over", expression="e", budget="memory"), JqTimeoutError("late", expression="e")]
)
def test_a_budget_breach_ends_the_extraction(error: JqBudgetError) -> None:
    from karta.status import extract_status

    with pytest.raises(type(error)):
        extract_status(definition('"MARK"'), HOSTILE, evaluator=Raising(error))


def test_a_phase_path_that_fails_on_a_hostile_object_is_a_status_error() -> None:
    from karta.status import extract_status

    status = StatusDefinition.model_validate(
        {
            "phaseDefinition": {"path": "[.spec.deep] | implode"},
            "statusMappings": {"running": [{"byPhase": "x"}]},
        }
    )
    with pytest.raises(StatusError, match="failed to extract phase from path"):
        extract_status(status, HOSTILE, evaluator=Evaluator(trusted=True))
