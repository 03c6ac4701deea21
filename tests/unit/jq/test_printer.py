"""The printer (karta.jq.printer): every tree prints as jq text that parses back to the same tree,
the gojq program compiles in libjq, long chains print flat and deep trees print without recursion."""

from __future__ import annotations

import jq as libjq
import pytest
from hypothesis import given, settings
from test_differential import TRICKY, expressions
from test_parser import SHAPES, _expressions

from karta.errors import JqCompileError
from karta.jq import Evaluator
from karta.jq import syntax as A
from karta.jq.parser import parse
from karta.jq.printer import HELPERS, gojq_program, to_jq
from karta.jq.safety import _walk

PRINTABLE = [(e, t) for e, t in SHAPES if not isinstance(t, A.ModuleDirective)]


@pytest.mark.parametrize(("expression", "tree"), PRINTABLE, ids=[e for e, _ in PRINTABLE])
def test_every_shape_of_the_parser_prints_back_to_itself(expression: str, tree: A.Node) -> None:
    assert parse(to_jq(tree)) == tree
    assert parse(gojq_program(tree)[len(HELPERS) :]) is not None


@pytest.mark.parametrize("expression", [t[0] for t in TRICKY])
def test_tricky_expressions_round_trip_and_compile(expression: str) -> None:
    node = parse(expression)
    assert parse(to_jq(node)) == node
    libjq.compile(gojq_program(node))


@settings(max_examples=300, deadline=None)
@given(_expressions())
def test_generated_texts_round_trip(expression: str) -> None:
    node = parse(expression)
    assert parse(to_jq(node)) == node
    libjq.compile(gojq_program(node))


@settings(max_examples=300, deadline=None)
@given(expressions)
def test_generated_trees_round_trip(node: A.Node) -> None:
    text = to_jq(node)
    negative = any(
        isinstance(n, A.Literal)
        and isinstance(n.value, int | float)
        and not isinstance(n.value, bool)
        and n.value < 0
        for n in _walk(node)
    )
    if negative:  # the parser reads -1 as Neg(1), which no tree built by hand has to match
        assert to_jq(parse(text)) == text
    else:
        assert parse(text) == node, text


def test_chains_print_flat() -> None:
    for expression in (
        " + ".join(["1"] * 5000),
        " | ".join(["."] * 5000),
        ".a" * 5000,
        ", ".join(["1"] * 5000),
    ):
        text = to_jq(parse(expression))
        assert "(" not in text
        assert to_jq(parse(text)) == text  # (comparing the trees would recurse)
    libjq.compile(gojq_program(parse(" // ".join([".a"] * 500))))  # flat: within libjq's parser stack


def test_what_libjq_cannot_compile_is_a_compile_error() -> None:
    # libjq limits the size of a compiled function: a 5000-term // chain is beyond it
    with pytest.raises(JqCompileError, match="too long"):
        Evaluator(trusted=True, fast_path=False).evaluate(" // ".join([".a"] * 5000), {})


def test_names_of_the_helpers_cannot_be_shadowed() -> None:
    program = gojq_program(parse("def _karta_sorted: 1; {b: 1, a: 2} | _karta_sorted, keys_unsorted"))
    assert "def _karta_user_karta_sorted: 1;" in program
    assert libjq.compile(program).input_text("null").all() == [1, ["a", "b"]]
    program = gojq_program(parse(". as $_karta_in | (.a // 2) + $_karta_in"))
    assert libjq.compile(program).input_text("1").all() == [3]


def test_module_directives_are_not_printed() -> None:
    with pytest.raises(TypeError, match="module directives"):
        to_jq(parse('import "a" as a; .'))
