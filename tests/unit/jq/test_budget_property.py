"""Properties of untrusted evaluation: random expressions, bombs mixed in, either give results or
raise a KartaError within the budget (in a child process whose address space is capped, so a
budget that does not hold cannot take the test runner down); and the metered fast path computes
exactly what the unmetered one does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.unit.jq.test_differential import _extend, expressions, json_values, leaf, render

from karta.errors import KartaError
from karta.jq import Budget, Evaluator
from karta.jq import syntax as A
from karta.jq._values import JqFail, dumps, normalise_output
from karta.jq.budget import Exceeded, Meter, install
from karta.jq.fastpath import compile_node

BUDGET = Budget(time_ms=300, memory_bytes=32 << 20, output_bytes=1 << 20, steps=300_000)
SLACK_S = 1.5
ROOT = Path(__file__).resolve().parents[3]


def _bombs(children: st.SearchStrategy[A.Node]) -> st.SearchStrategy[A.Node]:
    """Growth: doubling, fan-out, rendering of what was doubled."""
    return st.one_of(
        _extend(children),
        children.map(lambda c: A.ArrayCons(A.Comma(c, c))),  # [f, f]
        children.map(lambda c: A.Pipe(c, A.Binary("+", A.Identity(), A.Identity()))),  # f | . + .
        children.map(
            lambda c: A.Pipe(c, A.ArrayCons(A.Comma(A.Iterate(A.Identity()), A.Iterate(A.Identity()))))
        ),
        children.map(lambda c: A.Pipe(c, A.Call("tojson"))),
        st.tuples(children, children).map(
            lambda t: A.Bind(
                A.Iterate(t[0]), (A.VarPattern("v"),), A.Bind(A.Iterate(t[0]), (A.VarPattern("w"),), t[1])
            )
        ),
        children.map(lambda c: A.Binary("*", A.Literal("ab"), A.Pipe(c, A.Call("length")))),
    )


GROWTH = [
    "[., .]",
    ". + .",
    "[.[]?, .[]?]",
    "tojson",
    "{a: ., b: .}",
    '"\\(.)\\(.)"',
    "(., .)",
    ". as $x | [$x, $x, $x]",
    "to_entries?",
    "[.[]?] + [.[]?]",
    ".[]? as $x | .",
    "map(.)?",
    '"ab" * (tojson | length)',
]
TAILS = [
    "tojson",
    "length",
    "sort?",
    ". == .",
    "flatten?",
    "contains(.)?",
    "add?",
    "unique?",
    ".",
    "tostring",
    "[.[]?]",
]

# A tower of growth steps between a random start and a random end (the random expressions alone
# rarely grow: they mostly fail early).
_random = expressions.map(lambda n: render(n, ref=False))
_growth = st.sampled_from(GROWTH)
towers = st.tuples(
    st.one_of(st.sampled_from([".", ".a", ".c", "[.[]?]"]), _random),
    st.one_of(
        st.lists(_growth, min_size=10, max_size=40),  # pure growth: the bombs
        st.lists(st.one_of(_growth, _random), min_size=3, max_size=20),
    ),
    st.sampled_from(TAILS),
).map(lambda t: " | ".join([f"({t[0]})", *(f"({g})" for g in t[1]), t[2]]))

bomb_expressions = st.one_of(
    towers,
    towers.map(lambda e: f"def f: .; {e} | f"),  # the same in the sandbox worker (libjq)
    st.recursive(leaf, _bombs, max_leaves=14).map(lambda n: render(n, ref=False)),
)
bomb_inputs = st.one_of(json_values, st.just({"a": list(range(20)), "b": "xy" * 50, "c": {"x": [1, 2, 3]}}))


@settings(
    max_examples=int(os.environ.get("KARTA_BUDGET_EXAMPLES", "150")),
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=list(HealthCheck),
)
@given(expression=bomb_expressions, data=bomb_inputs)
def within_budget(expression: str, data: Any) -> None:
    """One case (run by the child): results or a KartaError, within the budget."""
    ev = Evaluator(budget=BUDGET)
    started = time.monotonic()
    try:
        with ev.session(data):
            ev.evaluate(expression, data)
    except KartaError:
        pass
    elapsed = time.monotonic() - started
    assert elapsed < BUDGET.time_ms / 1000 + SLACK_S, (expression, elapsed)


_CHILD = textwrap.dedent(
    """
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from tests.unit.jq.test_budget_property import within_budget
    within_budget()
    print("ok")
    """
)


def test_random_untrusted_expressions_stay_within_budget() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD], cwd=ROOT, capture_output=True, text=True, timeout=900, check=False
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-4000:]


def _outcome(node: A.Node, data: Any, *, metered: bool) -> tuple[str, Any]:
    compiled = compile_node(node, metered=metered)
    previous = install(Meter() if metered else None)
    try:
        return "ok", [dumps(normalise_output(x)) for x in compiled.many(data, {})]
    except JqFail as exc:
        return "error", exc.message
    finally:
        install(previous)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node=expressions, data=json_values)
def test_the_metered_fast_path_computes_what_the_unmetered_one_does(node: A.Node, data: Any) -> None:
    try:
        metered = _outcome(node, data, metered=True)
    except Exceeded:  # pragma: no cover - the default budget is far above these
        return
    assert metered == _outcome(node, data, metered=False), render(node, ref=False)
