"""Status extraction: C3 (matcher matrix), C4 (byExpression stringification), C10, errors, R3."""

from __future__ import annotations

from typing import Any

import pytest

from karta.errors import StatusError
from karta.jq import Evaluator
from karta.model.findings import Severity
from karta.model.types import ConditionsDefinition, ResourceStatus, StatusDefinition
from karta.status import Condition, StatusResult, extract_status, primary_status

EV = Evaluator(trusted=True)
R = ResourceStatus


def status_def(mappings: dict[str, Any], *, phase: bool = True, conditions: bool = True) -> StatusDefinition:
    data: dict[str, Any] = {"statusMappings": mappings}
    if phase:
        data["phaseDefinition"] = {"path": ".status.phase"}
    if conditions:
        data["conditionsDefinition"] = {"path": ".status.conditions"}
    return StatusDefinition.model_validate(data)


def obj(phase: str | None = None, **conds: str | tuple[str, str]) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if phase is not None:
        status["phase"] = phase
    items = []
    for ctype, value in conds.items():
        if isinstance(value, tuple):
            items.append({"type": ctype, "status": value[0], "reason": value[1]})
        else:
            items.append({"type": ctype, "status": value})
    status["conditions"] = items
    return {"status": status}


def run(mappings: dict[str, Any], o: dict[str, Any], **kw: Any) -> StatusResult:
    return extract_status(status_def(mappings, **kw), o, evaluator=EV)


# --- C3 -----------------------------------------------------------------------------------------

C3 = [
    ({"running": [{"byPhase": "running"}]}, obj("running"), [R.RUNNING]),
    ({"running": [{"byPhase": "running"}]}, obj("unknown"), [R.UNDEFINED]),
    (
        {
            "running": [{"byPhase": "running"}],
            "initializing": [{"byConditions": [{"type": "Ready", "status": "True"}]}],
        },
        obj("running", Ready="True"),
        [R.RUNNING, R.INITIALIZING],
    ),
    (
        {"running": [{"byPhase": "running", "byConditions": [{"type": "Ready", "status": "True"}]}]},
        obj("running", Ready="False"),
        [R.UNDEFINED],
    ),
    (
        {
            "running": [
                {
                    "byPhase": "running",
                    "byConditions": [{"type": "Ready", "status": "True"}, {"type": "Synced"}],
                }
            ]
        },
        obj("running", Ready="True"),
        [R.UNDEFINED],
    ),
    (
        {"failed": [{"byConditions": [{"type": "Failed", "status": "True", "reason": "OOMKilled"}]}]},
        obj(Failed=("True", "OOMKilled")),
        [R.FAILED],
    ),
    (
        {"failed": [{"byConditions": [{"type": "Failed", "status": "True", "reason": "OOMKilled"}]}]},
        obj(Failed=("True", "CrashLoopBackOff")),
        [R.UNDEFINED],
    ),
    (
        {"failed": [{"byConditions": [{"type": "Failed", "status": "True", "reason": "OOMKilled"}]}]},
        obj(Failed="True"),
        [R.UNDEFINED],
    ),
    (
        {"failed": [{"byConditions": [{"type": "Failed", "status": "True"}]}]},
        obj(Failed=("True", "OOMKilled")),
        [R.FAILED],
    ),
    (
        {
            "failed": [
                {"byConditions": [{"type": "Ready", "status": "False"}]},
                {"byConditions": [{"type": "Failed", "reason": "OOMKilled"}]},
            ]
        },
        obj(Ready="True", Failed=("True", "OOMKilled")),
        [R.FAILED],
    ),
    ({"running": [{}]}, obj("whatever"), [R.RUNNING]),
]


@pytest.mark.parametrize(("mappings", "o", "expected"), C3)
def test_c3_matcher_matrix(mappings: dict[str, Any], o: dict[str, Any], expected: list[R]) -> None:
    result = run(mappings, o)
    assert result.matched == expected
    assert result.diagnostics == []


def test_c3_primary_running_over_initializing() -> None:
    result = run(C3[2][0], C3[2][1])
    assert result.primary is R.RUNNING


def test_c3_by_conditions_without_conditions_definition_never_matches() -> None:
    result = run({"running": [{"byConditions": [{"type": "Ready"}]}]}, obj(Ready="True"), conditions=False)
    assert result.matched == [R.UNDEFINED]
    assert result.conditions == []


# --- C4 -----------------------------------------------------------------------------------------

C4_OBJ = {"status": {"phase": "running", "conditions": [{"type": "Ready", "status": "True"}]}}
C4_EXTRA = {"status": {**C4_OBJ["status"], "obj": {"b": 2, "a": 1}, "num": 3.0}}


@pytest.mark.parametrize(
    ("expression", "expected_result", "hit"),
    [
        (".status.phase", "running", True),
        ('.status.phase == "running"', "true", True),
        ('.status.phase == "failed"', "false", True),
        (".status.conditions | length", "1", True),
        (".status.phase", "stopped", False),
        (".status.phase", 'running "now"', False),
        (".status.nonExistentField", "true", False),
        (".status.nonExistentField", "null", True),
        (".status.obj", '{"a":1,"b":2}', True),
        (".status.num", "3", True),
        ("empty", "", False),
        (".status.phase # comment", "running", True),
    ],
)
def test_c4_by_expression(expression: str, expected_result: str, hit: bool) -> None:
    mappings = {"running": [{"byExpression": {"expression": expression, "expectedResult": expected_result}}]}
    result = run(mappings, C4_EXTRA)
    assert result.matched == ([R.RUNNING] if hit else [R.UNDEFINED])
    assert result.diagnostics == []


def test_c4_failing_expression_is_a_diagnostic() -> None:
    mappings = {
        "running": [
            {"byExpression": {"expression": ".status.phase ==", "expectedResult": "true"}},
            {"byPhase": "running"},
        ],
        "failed": [{"byExpression": {"expression": 'error("boom")', "expectedResult": "x"}}],
    }
    result = run(mappings, C4_OBJ)
    assert result.matched == [R.RUNNING]
    assert [d.location for d in result.diagnostics] == [
        "statusMappings.running[0]",
        "statusMappings.failed[0]",
    ]
    for diag in result.diagnostics:
        assert "failed to match status" in diag.message
        assert diag.severity is Severity.WARNING


def test_c4_failing_expression_diagnostic_names_key_and_index() -> None:
    mappings = {"running": [{"byExpression": {"expression": ".status.phase ==", "expectedResult": "true"}}]}
    result = run(mappings, C4_OBJ)
    assert result.matched == [R.UNDEFINED]
    (diag,) = result.diagnostics
    assert diag.location == "statusMappings.running[0]"
    assert "failed to match status" in diag.message
    assert "running" in diag.message and "0" in diag.message


def test_c4_strict_raises() -> None:
    definition = status_def(
        {"running": [{"byExpression": {"expression": ".status.phase ==", "expectedResult": "true"}}]}
    )
    with pytest.raises(StatusError, match="failed to match status"):
        extract_status(definition, C4_OBJ, evaluator=EV, strict=True)


# --- C10 ----------------------------------------------------------------------------------------

C10_MAPPINGS = {
    "initializing": [
        {"byConditions": [{"type": "Progressing", "status": "True", "reason": "NewReplicaSetCreated"}]},
        {"byConditions": [{"type": "Available", "status": "False"}]},
    ],
    "running": [
        {"byConditions": [{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}
    ],
}


@pytest.mark.parametrize(
    ("conds", "expected", "primary"),
    [
        ({"Progressing": ("True", "NewReplicaSetCreated")}, [R.INITIALIZING], R.INITIALIZING),
        (
            {"Progressing": ("True", "NewReplicaSetCreated"), "Available": ("False", "")},
            [R.INITIALIZING],
            R.INITIALIZING,
        ),
        (
            {"Progressing": ("True", "NewReplicaSetAvailable"), "Available": ("True", "")},
            [R.RUNNING],
            R.RUNNING,
        ),
        (
            {"Progressing": ("True", "NewReplicaSetAvailable"), "Available": ("False", "")},
            [R.RUNNING, R.INITIALIZING],
            R.RUNNING,
        ),
        (
            {"Progressing": ("True", "NewReplicaSetAvailable"), "Available": ("True", "")},
            [R.RUNNING],
            R.RUNNING,
        ),
    ],
)
def test_c10_deployment_scale_up(conds: dict[str, tuple[str, str]], expected: list[R], primary: R) -> None:
    result = run(C10_MAPPINGS, obj(**conds), phase=False)
    assert result.matched == expected
    assert result.primary is primary


# --- phase and conditions -------------------------------------------------------------------------


def test_phase_null_is_empty_string_and_missing_definition_is_none() -> None:
    assert run({}, {"status": {}}).phase == ""
    assert run({}, {"status": {"phase": "x"}}, phase=False).phase is None


def test_phase_no_results_is_none() -> None:
    definition = StatusDefinition.model_validate(
        {"phaseDefinition": {"path": "empty"}, "statusMappings": {"running": [{"byPhase": ""}]}}
    )
    result = extract_status(definition, {}, evaluator=EV)
    assert result.phase is None
    assert result.matched == [R.RUNNING]  # empty byPhase is not a part: the matcher has no parts


def test_phase_first_result_wins() -> None:
    definition = StatusDefinition.model_validate(
        {"phaseDefinition": {"path": '"a", "b"'}, "statusMappings": {"running": [{"byPhase": "a"}]}}
    )
    assert extract_status(definition, {}, evaluator=EV).matched == [R.RUNNING]


@pytest.mark.parametrize("value", [1, True, {"a": 1}, ["x"]])
def test_phase_non_string_fails(value: Any) -> None:
    with pytest.raises(StatusError, match="failed to extract phase"):
        run({}, {"status": {"phase": value}})


def test_phase_path_error_fails() -> None:
    definition = StatusDefinition.model_validate({"phaseDefinition": {"path": '.a | error("x")'}})
    with pytest.raises(StatusError, match="failed to extract phase"):
        extract_status(definition, {}, evaluator=EV)


@pytest.mark.parametrize("value", ["x", 1, {"type": "Ready"}, ["x"], [1]])
def test_conditions_wrong_type_fails(value: Any) -> None:
    with pytest.raises(StatusError, match="failed to extract conditions"):
        run({}, {"status": {"conditions": value}})


def test_conditions_null_and_concatenation() -> None:
    assert run({}, {"status": {"conditions": None}}).conditions == []
    definition = StatusDefinition.model_validate(
        {"conditionsDefinition": {"path": ".a, .b, .c"}, "statusMappings": {}}
    )
    result = extract_status(
        definition, {"a": [{"type": "A", "status": "True"}], "b": None, "c": [{"type": "C"}]}, evaluator=EV
    )
    assert result.conditions == [Condition("A", "True"), Condition("C", "")]


def test_conditions_field_names_non_strings_and_last_duplicate_wins() -> None:
    definition = StatusDefinition.model_validate(
        {
            "conditionsDefinition": {
                "path": ".conds",
                "typeFieldName": "kind",
                "statusFieldName": "state",
                "reasonFieldName": "why",
                "messageFieldName": "text",
            },
            "statusMappings": {"running": [{"byConditions": [{"type": "Ready", "status": "yes"}]}]},
        }
    )
    o = {
        "conds": [
            {"kind": "Ready", "state": "yes", "why": 3, "text": "hello"},
            {"kind": "Ready", "state": "no", "why": "late", "text": None},
        ]
    }
    result = extract_status(definition, o, evaluator=EV)
    assert result.conditions == [Condition("Ready", "yes", "", "hello"), Condition("Ready", "no", "late", "")]
    assert result.matched == [R.UNDEFINED]  # the later duplicate (state "no") wins


def test_conditions_without_message_and_reason_field_names() -> None:
    # Loading defaults empty names (R1); a definition built in code without them reads no reasons.
    definition = StatusDefinition.model_validate(
        {"statusMappings": {"failed": [{"byConditions": [{"type": "F", "reason": "R"}]}]}}
    ).model_copy(
        update={
            "conditions_definition": ConditionsDefinition.model_construct(
                path=".c",
                type_field_name="type",
                status_field_name="status",
                message_field_name="",
                reason_field_name="",
            )
        }
    )
    result = extract_status(definition, {"c": [{"type": "F", "reason": "R", "message": "m"}]}, evaluator=EV)
    assert result.conditions == [Condition("F", "", "", "")]
    assert result.matched == [R.UNDEFINED]


def test_fixed_order_of_all_statuses() -> None:
    every = {
        key: [{}]
        for key in (
            "initializing",
            "running",
            "completed",
            "failed",
            "degraded",
            "suspended",
            "suspending",
            "resuming",
        )
    }
    result = run(every, {})
    assert result.matched == [
        R.RESUMING,
        R.SUSPENDING,
        R.SUSPENDED,
        R.RUNNING,
        R.FAILED,
        R.COMPLETED,
        R.INITIALIZING,
        R.DEGRADED,
    ]
    assert result.primary is R.FAILED


@pytest.mark.parametrize(
    ("matched", "primary"),
    [
        ([], R.UNDEFINED),
        ([R.UNDEFINED], R.UNDEFINED),
        ([R.RUNNING, R.DEGRADED], R.DEGRADED),
        ([R.RESUMING, R.SUSPENDED], R.RESUMING),
        ([R.SUSPENDING, R.RESUMING], R.SUSPENDING),
        ([R.RUNNING, R.COMPLETED], R.COMPLETED),
        ([R.INITIALIZING], R.INITIALIZING),
    ],
)
def test_primary_precedence(matched: list[R], primary: R) -> None:
    assert primary_status(matched) is primary


def test_to_dict() -> None:
    result = run({"running": [{"byPhase": "running"}]}, obj("running", Ready=("True", "Ok")))
    assert result.to_dict() == {
        "phase": "running",
        "conditions": [{"type": "Ready", "status": "True", "reason": "Ok", "message": ""}],
        "matched": ["Running"],
        "primary": "Running",
    }
