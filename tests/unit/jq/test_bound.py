"""``karta.jq.BoundEvaluator`` (extension E3's ``$<name>``): the same results on every engine
(the fast-path closures, the generated code, libjq in-process, the metered fast path, the
sandbox), null for a missing reference, write-back kept inside the object, errors naming the
expression as written, and expressions that read no binding handed over untouched."""

from __future__ import annotations

from typing import Any

import pytest

from karta.errors import JqRuntimeError
from karta.jq import BoundEvaluator, Evaluator
from karta.jq.bound import bound_names, rewrite

RUNTIME = {"spec": {"nodes": 3, "template": {"spec": {"containers": [{"name": "t"}]}}}}
OBJ: dict[str, Any] = {"metadata": {"name": "w"}, "spec": {"extra": 1, "replicas": [1, 2]}}

ENGINES = {
    "trusted": Evaluator(trusted=True),
    "trusted-libjq": Evaluator(trusted=True, fast_path=False),
    "untrusted-metered": Evaluator(),
    "untrusted-sandbox": Evaluator(fast_path=False),
}

CASES = [
    ("$runtime.spec.nodes + .spec.extra", [4]),
    ("$runtime.spec.template.spec.containers[].name", ["t"]),
    ("[$configs[].metadata.name]", [["a", "b"]]),
    ("$missing.spec.nodes // 1", [1]),
    ("$missing.spec.nodes", [None]),
    ("[.spec.replicas[] | . * $runtime.spec.nodes]", [[3, 6]]),
    ("def n: $runtime.spec.nodes; [n, (.spec.extra as $runtime | $runtime)]", [[3, 1]]),
    (".spec.extra # a comment at the end", [1]),
    ("$runtime.spec.nodes # a comment at the end", [3]),
]
BINDINGS = {
    "runtime": RUNTIME,
    "configs": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}],
    "missing": None,
}


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize(("expression", "expected"), CASES)
def test_every_engine(engine: str, expression: str, expected: list[Any]) -> None:
    bound = BoundEvaluator(ENGINES[engine], BINDINGS)
    with bound.session(OBJ):
        assert bound.evaluate(expression, OBJ) == expected
        assert bound.evaluate(expression, OBJ) == expected  # the second use runs generated code


def test_expressions_without_bindings_are_not_rewritten() -> None:
    assert bound_names(".spec.extra", frozenset({"runtime"})) == ()
    assert bound_names(". as $runtime | $runtime", frozenset({"runtime"})) == ()
    assert bound_names("$runtime.a + $b", frozenset({"runtime", "b", "c"})) == ("b", "runtime")
    assert rewrite("$b", ("b",)) == ".[1] as $b | .[0] | ($b\n)"


def test_never_inlined_so_definition_code_takes_the_bindings() -> None:
    assert Evaluator(trusted=True).inlinable
    assert not BoundEvaluator(Evaluator(trusted=True), BINDINGS).inlinable


@pytest.mark.parametrize("engine", ["trusted", "untrusted-metered"])
def test_write_back_stays_in_the_object(engine: str) -> None:
    bound = BoundEvaluator(ENGINES[engine], BINDINGS)
    assert bound.paths(".spec.extra | select($runtime.spec.nodes > 1)", OBJ) == [["spec", "extra"]]
    assert bound.assign(".spec.extra | select($runtime != null)", OBJ, 5)["spec"]["extra"] == 5
    with pytest.raises(JqRuntimeError) as caught:
        bound.paths("$runtime.spec", OBJ)
    assert "expression '$runtime.spec'" in str(caught.value)
    assert caught.value.expression == "$runtime.spec"


def test_errors_name_the_expression_as_written() -> None:
    bound = BoundEvaluator(Evaluator(), BINDINGS)
    with pytest.raises(JqRuntimeError) as caught:
        bound.evaluate('$runtime.spec.nodes | error("bad")', OBJ)
    assert (
        str(caught.value) == "JQ execution error for expression '$runtime.spec.nodes | error(\"bad\")': bad"
    )
