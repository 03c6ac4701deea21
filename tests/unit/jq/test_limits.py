"""Limits of the jq front end and engines: long chains parse without recursion and evaluate on both
engines, nesting and size have documented limits with a clear error, deep generated code declines
instead of failing (karta.jq.parser, karta._codegen, karta.jq.codegen, karta.jq.scope_check)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hang_guard import HANG_GUARD_S

from karta import _codegen
from karta.errors import JqParseError
from karta.jq import Evaluator
from karta.jq import syntax as A
from karta.jq.codegen import generate
from karta.jq.evaluator import plan_for
from karta.jq.parser import MAX_EXPRESSION_LENGTH, MAX_NESTING, parse
from karta.jq.scope_check import compile_check

FAST = Evaluator(trusted=True)
LIBJQ = Evaluator(trusted=True, fast_path=False)

# name -> (expression, input, expected outputs)
CHAINS: dict[str, tuple[str, Any, list[Any]]] = {
    "500-term +": (" + ".join(["1"] * 500), None, [500]),
    "500-term -": ("1000" + " - 1" * 500, None, [500]),
    "500-term *": (" * ".join(["1"] * 500), None, [1]),
    "500-term and": (" and ".join(["true"] * 500), None, [True]),
    "500-term or": (" or ".join(["false"] * 499 + ["true"]), None, [True]),
    "500-term ,": (", ".join(["1"] * 500), None, [1] * 500),
    "500-term //": (" // ".join(["null"] * 499 + ["7"]), None, [7]),
    "500-term |": (" | ".join(["."] * 499 + [".a"]), {"a": 3}, [3]),
    "500 ?": (".a" + "?" * 500, {"a": 3}, [3]),
    "500 suffixes": (".a" * 500, {}, [None]),
    "500 bindings": (" | ".join(f". as $v{i}" for i in range(500)) + " | $v499", 4, [4]),
    "500 defs": ("".join(f"def f{i}: {i}; " for i in range(500)) + "f499", None, [499]),
    "500 labels": ("".join(f"label $l{i} | " for i in range(500)) + "1", None, [1]),
    "500 minuses": ("-" * 500 + "1", None, [1]),
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_long_chains_parse_without_recursion(name: str) -> None:
    expression, _, _ = CHAINS[name]
    assert isinstance(parse(expression), A.Node)


@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("ev", [FAST, LIBJQ], ids=["fast", "libjq"])
def test_long_chains_evaluate_on_both_engines(name: str, ev: Evaluator) -> None:
    expression, data, expected = CHAINS[name]
    assert ev.evaluate(expression, data) == expected
    assert compile_check(parse(expression)) is None


def test_chains_of_ten_thousand_terms_parse_without_recursion_or_hanging() -> None:
    expression = " + ".join(["1"] * 10_000)
    start = time.perf_counter()
    node = parse(expression)
    assert time.perf_counter() - start < HANG_GUARD_S
    assert isinstance(node, A.Binary)
    assert LIBJQ.evaluate(expression, None) == [10_000]


def test_chains_build_the_trees_of_the_recursive_grammar() -> None:
    one, two, three = A.Literal(1), A.Literal(2), A.Literal(3)
    assert parse("1 - 2 - 3") == A.Binary("-", A.Binary("-", one, two), three)
    assert parse("1 // 2 // 3") == A.Binary("//", one, A.Binary("//", two, three))
    assert parse("1 | 2 | 3") == A.Pipe(one, A.Pipe(two, three))
    assert parse("1, 2 | 3") == A.Pipe(A.Comma(one, two), three)
    assert parse("-1 * 2 + 3") == A.Binary("+", A.Neg(A.Binary("*", one, two)), three)
    assert parse("1 * -2 * 3") == A.Binary("*", one, A.Neg(A.Binary("*", two, three)))
    assert parse("1, . as $x | $x, 2") == A.Comma(
        one, A.Bind(A.Identity(), (A.VarPattern("x"),), A.Comma(A.Var("x"), two))
    )
    bind = A.Bind(A.Identity(), (A.VarPattern("x"),), A.Var("x"))
    assert parse("1 + . as $x | $x") == A.Binary("+", one, bind)
    assert parse("1, def f: 2; f | 3") == A.Comma(one, A.FuncDef("f", (), two, A.Pipe(A.Call("f"), three)))


def _nested(depth: int) -> dict[str, str]:
    return {
        "parentheses": "(" * depth + "1" + ")" * depth,
        "arrays": "[" * depth + "]" * depth,
        "objects": "{a: " * depth + "1" + "}" * depth,
        "if": "if . then " * depth + "1" + " else 2 end" * depth,
        "calls": "first(" * depth + "1" + ")" * depth,
        "interpolation": '"\\(' * depth + "1" + ')"' * depth,
        "try": "try " * depth + "1",
        "reduce": "reduce " * depth + "." + " as $x (0; 1)" * depth,
        "patterns": ". as " + "[" * depth + "$x" + "]" * depth + " | $x",
        "def bodies": "def f: " * depth + "1" + "; f" * depth,
    }


@pytest.mark.parametrize("kind", sorted(_nested(1)))
def test_nesting_up_to_the_limit_parses(kind: str) -> None:
    expression = _nested(MAX_NESTING - 2)[kind]
    assert isinstance(parse(expression), A.Node)


@pytest.mark.parametrize("kind", sorted(_nested(1)))
@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 2000])
def test_nesting_beyond_the_limit_is_a_parse_error_that_says_so(kind: str, depth: int) -> None:
    with pytest.raises(JqParseError, match=f"nested too deeply \\(more than {MAX_NESTING} levels\\)"):
        parse(_nested(depth)[kind])


def test_an_expression_over_the_size_limit_is_refused_at_once() -> None:
    expression = ".a + " * 250_000 + "1"  # 1.25 MB
    assert len(expression) > MAX_EXPRESSION_LENGTH
    start = time.perf_counter()
    with pytest.raises(JqParseError) as info:
        parse(expression)
    assert time.perf_counter() - start < 0.1
    message = str(info.value)
    limit = f"the limit is {MAX_EXPRESSION_LENGTH}"
    assert f"expression too long: {len(expression)} characters ({limit})" in message
    assert len(message) < 300  # the expression is quoted by its start only
    assert info.value.expression == expression
    for ev in (FAST, LIBJQ):
        with pytest.raises(JqParseError, match="expression too long"):
            ev.evaluate(expression, None)


def test_an_expression_at_the_size_limit_parses_without_hanging() -> None:
    expression = (".a + " * MAX_EXPRESSION_LENGTH)[: MAX_EXPRESSION_LENGTH - 1] + "1"
    expression = expression[: expression.rindex("+") + 1] + " 1"
    assert len(expression) <= MAX_EXPRESSION_LENGTH
    start = time.perf_counter()
    parse(expression)
    assert time.perf_counter() - start < HANG_GUARD_S


def test_number_literals_beyond_the_int_string_limit_are_doubles() -> None:
    assert parse("1" + "0" * 5000) == A.Literal(float("inf"))
    assert parse("1e400") == A.Literal(float("inf"))
    assert FAST.evaluate("1" + "0" * 5000 + " | tostring", None) == ["1.7976931348623157e+308"]
    assert LIBJQ.evaluate("1" + "0" * 5000 + " | tostring", None) == ["1.7976931348623157e+308"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(["+", "-", "*", "and", "or", ",", "//", "|", "==", "<"]), min_size=1, max_size=300
    )
)
def test_any_chain_of_operators_parses_like_the_left_to_right_reading(ops: list[str]) -> None:
    # Non-associative operators may not repeat at the same level: those are parse errors.
    expression = " ".join(f"1 {op}" for op in ops) + " 1"
    try:
        node = parse(expression)
    except JqParseError as exc:
        assert "unexpected" in str(exc)
    else:
        assert isinstance(node, A.Node)


# --- generated code beyond Python's limits ---------------------------------------------------


DEEP_FOR_PYTHON = {
    "100 nested //": "(" * 100 + ".a" + " // 1)" * 100,
    "100 // in an if chain": "if .a then " * 50 + "(.b // .c // 1)" + " else 2 end" * 50,
    "100 nested if": "if . then " * 100 + "1" + " else 2 end" * 100,
    "100 // chain": " // ".join([".a"] * 100),
}


@pytest.mark.parametrize("name", sorted(DEEP_FOR_PYTHON))
def test_generated_code_beyond_pythons_limits_declines_and_the_closures_run(name: str) -> None:
    expression = DEEP_FOR_PYTHON[name]
    assert _codegen.MODE.strict  # the suite runs strict: a failure would raise here
    plan = plan_for(expression)
    assert plan.fast is not None and plan.node is not None
    generate(expression, plan.node)  # declined (None) or generated, never an exception
    data = {"a": None, "b": None, "c": 5}
    assert FAST.evaluate(expression, data) == LIBJQ.evaluate(expression, data)


def test_a_source_too_deep_for_python_is_a_decline_not_a_failure() -> None:
    blocks = "".join("    " * (i + 1) + "if x:\n" for i in range(101))
    source = "def f(x):\n" + blocks + "    " * 102 + "pass\n"
    with pytest.raises(_codegen.Declined, match="too many"):
        _codegen.compile_source(source, {}, what="test")
    _codegen.failed("test", _codegen.Declined("too deep"))  # strict, and yet it does not raise
    with pytest.raises(SyntaxError):
        _codegen.compile_source("def f(:\n", {}, what="a generator bug")  # not a limit: raises


def test_the_name_check_walks_deep_trees_iteratively() -> None:
    assert compile_check(parse(" | ".join(["."] * 5000) + " | f")) == "f/0 is not defined"
    assert compile_check(parse(" + ".join(["1"] * 5000) + " + $x")) == "$x is not defined"
