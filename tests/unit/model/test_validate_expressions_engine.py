"""The expression validation (karta.model.validate_expressions) reports what no engine can compile,
what gojq (so the original and KAI Scheduler) lacks, what depends on the evaluating process, and
expressions over the parser's limits, each as a finding with the field path and the expression."""

from __future__ import annotations

from typing import Any

import pytest
from model_data import minimal, root

from karta.jq.parser import MAX_EXPRESSION_LENGTH, MAX_NESTING
from karta.model import Finding, Severity, karta_from_dict, validate_karta

WHERE = "spec.structureDefinition.rootComponent.scaleDefinition.replicasPath"


def _findings(expression: str) -> list[Finding]:
    data: dict[str, Any] = minimal()
    root(data)["scaleDefinition"]["replicasPath"] = expression
    return [f for f in validate_karta(karta_from_dict(data)) if f.location == WHERE]


NEVER_COMPILE = [
    ("$__prog_args", "$__prog_args is not defined"),
    ("$x + 1", "$x is not defined"),
    ("nosuchfunction", "nosuchfunction/0 is not defined"),
    ("length(1)", "length/1 is not defined"),
    ("map(.a; .b)", "map/2 is not defined"),
    ("break $b", "$*label-b is not defined"),
    ("label $a | break $b", "$*label-b is not defined"),
    ("def f($x): $y; f(1)", "$y is not defined"),
    ("[.[] as $v | $v] | $v", "$v is not defined"),
]


@pytest.mark.parametrize(("expression", "detail"), NEVER_COMPILE, ids=[e for e, _ in NEVER_COMPILE])
def test_what_can_never_compile_is_an_error_with_the_field_and_the_expression(
    expression: str, detail: str
) -> None:
    findings = _findings(expression)
    compile_errors = [f for f in findings if "failed to compile" in f.message]
    assert compile_errors == [
        Finding(
            Severity.ERROR, f"failed to compile JQ expression '{expression}' at '{WHERE}': {detail}", WHERE
        )
    ]


@pytest.mark.parametrize(
    "expression",
    [
        "def f($x): $x; f(1)",
        "label $b | break $b",
        ". as [$a, {b: $c}] | $a + $c",
        "reduce .[] as $r (0; . + $r)",
    ],
)
def test_what_compiles_has_no_compile_finding(expression: str) -> None:
    assert not [f for f in _findings(expression) if "failed to compile" in f.message]


GOJQ_LACKS = [
    "keys_unsorted",
    "have_decnum",
    "have_literal_numbers",
    "lgamma_r",
    "@base32d",
    'format("base32")',
]


@pytest.mark.parametrize("expression", GOJQ_LACKS)
def test_what_gojq_lacks_is_an_error_naming_it(expression: str) -> None:
    (finding,) = _findings(f"[1] | {expression}")
    assert finding.severity is Severity.ERROR
    name = expression.split("(")[0].split('"')[0]
    assert name.lstrip("@") in finding.message or "base32" in finding.message
    assert "is not in gojq" in finding.message
    assert "the original implementation and KAI Scheduler would reject the definition" in finding.message
    assert f"at '{WHERE}'" in finding.message


def test_a_user_definition_of_a_name_gojq_lacks_is_what_gojq_calls() -> None:
    assert _findings("def keys_unsorted: keys; keys_unsorted | length") == []


@pytest.mark.parametrize("expression", ["def true: 1; true", "def f(null): null; f(1)", "def m::f: 1; 1"])
def test_function_names_gojq_refuses_are_errors(expression: str) -> None:
    (finding,) = _findings(expression)
    assert finding.severity is Severity.ERROR and "gojq does not accept" in finding.message


@pytest.mark.parametrize("expression", ["trim", "ltrim", "abs", "add(.[])", "toboolean", "@urid"])
def test_builtins_gojq_added_during_0_12_are_warnings(expression: str) -> None:
    (finding,) = _findings(expression)
    assert finding.severity is Severity.WARNING and "is in gojq only since 0.12." in finding.message


PROCESS = [
    "now",
    "now | todate",
    "localtime",
    'strflocaltime("%H")',
    "input_filename",
    "$__loc__",
    "get_search_list",
    "get_prog_origin",
    "get_jq_origin",
    "input_line_number",
    "builtins | length",
    "input",
    "debug",
]


@pytest.mark.parametrize("expression", PROCESS)
def test_process_dependent_builtins_are_errors(expression: str) -> None:
    findings = _findings(expression)
    assert findings and all(f.severity is Severity.ERROR for f in findings)
    assert any("is not allowed" in f.message for f in findings)


@pytest.mark.parametrize(
    "expression", ["[2020,0,1,0,0,0,3,0] | mktime", "0 | gmtime | todate", '"a,b" | [splits(",")]']
)
def test_time_conversions_and_splits_are_not_process_dependent(expression: str) -> None:
    assert _findings(expression) == []


def test_env_stays_a_warning() -> None:
    assert [f.severity for f in _findings("env.HOME // 1")] == [Severity.WARNING]
    assert [f.severity for f in _findings("$ENV.HOME // 1")] == [Severity.WARNING]


def test_an_expression_over_the_size_limit_is_one_short_finding() -> None:
    expression = ".a + " * 250_000 + "1"
    (finding,) = _findings(expression)
    assert finding.severity is Severity.ERROR
    assert finding.message.startswith("failed to parse JQ expression '.a + .a")
    assert f"expression too long: {len(expression)} characters (the limit is {MAX_EXPRESSION_LENGTH})" in (
        finding.message
    )
    assert len(finding.message) < 400


def test_an_expression_nested_over_the_limit_is_a_finding() -> None:
    (finding,) = _findings("(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1))
    assert finding.severity is Severity.ERROR
    assert f"nested too deeply (more than {MAX_NESTING} levels)" in finding.message


def test_long_chains_are_valid() -> None:
    assert _findings(" + ".join(["1"] * 2000)) == []
    assert _findings(" // ".join([".spec.a"] * 2000)) == []
