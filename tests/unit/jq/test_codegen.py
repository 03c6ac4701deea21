"""Generated code (karta.jq.codegen) against the fast-path closures and libjq.

The contract: a generated function returns exactly the closures' outputs, or raises JqFail /
RecursionError (the caller then re-runs the closures). It must never return a value where the
closures fail. On the common shapes it must not decline at all.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from test_differential import TRICKY, expressions, json_values, render

from karta.errors import JqRuntimeError
from karta.jq import Evaluator
from karta.jq import syntax as A
from karta.jq._values import JqFail
from karta.jq.codegen import generate, is_single, split_iteration
from karta.jq.fastpath import Unsupported, compile_node
from karta.jq.parser import parse

FAST = Evaluator(trusted=True)
LIBJQ = Evaluator(trusted=True, fast_path=False)


def closures(node: A.Node, data: Any) -> tuple[str, Any]:
    try:
        return "ok", compile_node(node).many(data, {})
    except (JqFail, RecursionError):
        return "error", None


def generated(key: str, node: A.Node, data: Any) -> tuple[str, Any]:
    fn = generate(key, node)
    assert fn is not None, f"not generated: {key}"
    try:
        return "ok", fn(data)
    except (JqFail, RecursionError):
        return "declined", None


def assert_agrees(key: str, node: A.Node, data: Any) -> str:
    expected = closures(node, data)
    got = generated(key, node, data)
    if got[0] == "declined":
        return "declined"
    assert expected[0] == "ok", f"{key}: generated code produced {got[1]!r} where the closures fail"
    # repr: same values, same types (int vs float, bool vs int), same key order.
    assert repr(got[1]) == repr(expected[1]), key
    return "ok"


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(node=expressions, data=json_values)
def test_generated_code_agrees_with_the_closures(node: A.Node, data: Any) -> None:
    try:
        compile_node(node)
    except Unsupported:  # pragma: no cover - the strategy builds the subset
        return
    assert_agrees("hypothesis:" + render(node, ref=False), node, data)


@pytest.mark.parametrize(("expression", "data"), TRICKY, ids=[t[0] for t in TRICKY])
def test_tricky_cases(expression: str, data: Any) -> None:
    assert_agrees("tricky:" + expression, parse(expression), data)


OBJ = {
    "metadata": {"name": "w", "labels": {"a.b/c": "x"}},
    "spec": {
        "replicas": 3,
        "jobs": [
            {"name": "a", "replicas": 2, "template": {"spec": {"parallelism": 4}}},
            {"name": "b", "template": {"spec": {}}},
        ],
        "services": {"b": {"replicas": 1, "labels": {"k": "v"}}, "a": {"replicas": 2}},
    },
    "status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "Failed", "status": "False"}],
        "jobs": [{"active": 0}, {"active": 2}],
    },
}

# Common shapes of definitions: generated natively and never declining on well-formed data.
COMMON = [
    ".spec.replicas",
    ".spec.jobs[].name",
    ".spec.jobs[] | .name",
    ".spec.jobs | .[] | .template.spec",
    ".spec.jobs[] | (.replicas // 1) * (.template.spec.parallelism // 1)",
    ".spec.services | to_entries[] | .key",
    ".spec.services | .[] | .replicas",
    ".spec.services[] | .labels // {}",
    '.metadata.labels["a.b/c"]',
    '.metadata.labels["missing"] // "0"',
    ".spec.missing.deeper",
    ".spec.jobs[0].name, .spec.jobs[-1].name",
    ".status.jobs // [] | any(.active > 0)",
    ".status.jobs // [] | all(.active >= 0)",
    '.status.conditions[] | select(.type == "Ready") | .status',
    '[.status.conditions[] | select(.status != "True")] | length',
    '.status.phase == "Running" and (.spec.replicas > 1)',
    ".status.phase == null or .spec.replicas < 2",
    '(.status.phase == "Running") | tostring',
    ".spec.jobs | length",
    "{name: .metadata.name, n: .spec.replicas}",
    "[.spec.jobs[].name]",
    'if .spec.replicas > 1 then "many" else "one" end',
    ".spec.replicas | not",
    'true, false, null, 1, "s"',
    # The state tables' shapes (issue 23): bindings, any/all with a generator, first/last, ``?``,
    # value functions with an argument, closures embedded under a binding.
    ".status.conditions[]? | .type",
    ".spec.missing[]?",
    ".spec.replicas[]?",
    '[.status.conditions[]?] as $cs | any($cs[]; .type == "Ready" and .status == "True")',
    'all(.status.conditions[]; .status == "True")',
    '([.status.conditions[] | select(.type == "Ready")] | last | .status // "") as $r | $r == "True"',
    "first(.spec.jobs[].name), last(.spec.jobs[].name)",
    ".spec.jobs | first | .name",
    '.metadata.name | contains("w"), startswith("x")',
    ".spec.replicas as $n | .spec.jobs[] | .replicas // $n",
    ".spec.jobs[] | .name as $x | [$x, (.replicas // 0)]",
    ".spec.replicas as $n | .spec.jobs | map(.replicas // $n)",
    ".spec.replicas as $n | .spec.replicas as $n | $n + 1",
    '(.status.phase == "Running" or .spec.replicas > 5) as $up | if $up then "up" else "down" end',
]


@pytest.mark.parametrize("expression", COMMON)
def test_common_shapes_are_generated_and_agree_with_libjq(expression: str) -> None:
    node = parse(expression)
    assert assert_agrees("common:" + expression, node, OBJ) == "ok"
    assert FAST.evaluate(expression, OBJ) == LIBJQ.evaluate(expression, OBJ)


def test_generation_embeds_closures_for_the_rest_and_refuses_what_the_fast_path_refuses() -> None:
    node = parse('[.spec.jobs[] | .name] | join(",")')
    assert assert_agrees("embedded", node, OBJ) == "ok"
    assert generate("free variable", parse("$x | .a")) is None


@pytest.mark.parametrize(
    ("expression", "data", "want"),
    [
        ("first(1, error)", None, [1]),  # the closures stop at the first output
        ("any((true, error); .)", None, [True]),
        ("all((false, error); .)", None, [False]),
        ("[.[]?]", 3, [[]]),
        ("[.a[]?]", {"a": {"y": 2, "x": 1}}, [[1, 2]]),
        ("last(empty)", None, []),
        ("(.a as $x | $x) as $y | [$y, $y]", {"a": 1}, [[1, 1]]),
    ],
)
def test_short_circuits_and_try_agree_with_the_closures(expression: str, data: Any, want: Any) -> None:
    node = parse(expression)
    assert closures(node, data) == ("ok", want)
    assert generated("short:" + expression, node, data) == ("ok", want)


def test_errors_come_from_the_closures() -> None:
    # The generated code may decline; the evaluator's error is the closures' own.
    with pytest.raises(JqRuntimeError, match=r'Cannot index number with string \("a"\)'):
        FAST.evaluate(".spec.replicas.a", OBJ)
    assert FAST.evaluate('.spec.replicas.a // "d"', OBJ) == ["d"]


def test_shape_helpers() -> None:
    assert is_single(parse(".a.b // 1"))
    assert not is_single(parse(".a[]"))
    assert not is_single(parse(".a, .b"))
    assert is_single(parse('.a as $x | $x | contains("b")'))
    assert not is_single(parse('contains("a", "b")'))
    split = split_iteration(parse(".spec.jobs[] | .name"))
    assert split is not None and split[0] == parse(".spec.jobs[]") and split[1] == parse(".name")
    assert split_iteration(parse(".spec.jobs")) is None


@pytest.mark.parametrize("value", [True, False, 1, 0, 1.0, None, "true", [], {}])
def test_equality_with_a_boolean_literal_is_identity_to_it(value: Any) -> None:
    # Inlined as ``is True`` / ``is not False``: Python's 1 == True is not jq's.
    expression = ".a == true, .a != true, .a == false, .a != false"
    assert assert_agrees("bool-literal", parse(expression), {"a": value}) == "ok"
    fn = generate("bool-literal-source", parse(expression))
    assert fn is not None
    assert fn({"a": value}) == [value is True, value is not True, value is False, value is not False]


@pytest.mark.parametrize("value", ["abcWorkloadReady", "", "ab", "é-ab", 1, None, True, ["ab"], {"a": 1}])
@pytest.mark.parametrize(
    "expression",
    ['endswith("WorkloadReady")', 'startswith("ab")', 'endswith("")', "not", '(. == "ab") | not'],
)
def test_string_tests_and_not_inline_agree_with_the_closures(expression: str, value: Any) -> None:
    # startswith/endswith of a literal are Python's test on a string; anything else raises in the
    # builtin, as the closures do (the generated code then declines).
    assert assert_agrees("inline-tests:" + expression, parse(expression), value) in ("ok", "declined")
    if isinstance(value, str) or expression in ("not", '(. == "ab") | not'):
        assert assert_agrees("inline-tests:" + expression, parse(expression), value) == "ok"


# ``IN`` is jq's library ``def IN(s): any(s == .; .)`` / ``def IN(src; s): any(src == s; .)``: the
# fast path and the generator compile that body (karta.jq.syntax.library_call), so a status matcher
# using it is generated (and kept in the definition cache) instead of running on libjq.
IN_CASES = [
    ('.status.phase | IN("Failed", "Error")', {"status": {"phase": "Error"}}),
    ('.status.phase | IN("Failed", "Error")', {"status": {"phase": "Running"}}),
    ('.status.phase | IN("Failed", "Error")', {"status": {}}),
    ("IN(.spec.jobs[].name; .spec.wanted[])", {"spec": {"jobs": [{"name": "a"}], "wanted": ["b", "a"]}}),
    ("IN(.spec.jobs[].name; .spec.wanted[])", {"spec": {"jobs": [{"name": "a"}], "wanted": ["b"]}}),
    ("IN(.spec.jobs[].name; .spec.wanted[])", {"spec": {"jobs": [], "wanted": ["b"]}}),
    (
        '[.status.conditions[]? | .type | IN("Ready", "Done")] | any',
        {"status": {"conditions": [{"type": 1}]}},
    ),
    ("IN(1, error)", 1),  # any stops at the first match: the error is never reached
    ('IN(.a[]; "x")', {"a": 3}),  # an error before the first match: the closures' error
    (".a as $w | .b | IN($w[])", {"a": [1, 2], "b": 2}),
]


@pytest.mark.parametrize(("expression", "data"), IN_CASES)
def test_in_runs_on_the_fast_path_and_agrees_with_libjq(expression: str, data: Any) -> None:
    node = parse(expression)
    assert compile_node(node) is not None  # no Unsupported: on the fast path
    assert assert_agrees("IN:" + expression, node, data) in ("ok", "declined")
    try:
        want: Any = LIBJQ.evaluate(expression, data)
    except JqRuntimeError:
        with pytest.raises(JqRuntimeError):
            FAST.evaluate(expression, data)
    else:
        assert FAST.evaluate(expression, data) == want
    assert A.library_call(parse("IN(1; 2; 3)")) is None


def test_in_is_emitted_natively_not_embedded() -> None:
    fn = generate("IN-source", parse('.status.phase | IN("Failed", "Error")'))
    assert fn is not None
    source = fn.__globals__["__source__"]
    assert "_Stop" in source and "'Failed'" in source  # any(...) inlined: literals compared in place
    assert is_single(parse('IN("a")')) and is_single(parse("IN(.a[])"))  # any: one output
