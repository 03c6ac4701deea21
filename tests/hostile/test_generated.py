"""Generated hostile inputs (hypothesis): random jq expressions from a grammar that reaches the
dangerous constructs (iteration, bindings, doubling, allocation, loops, the environment, regexes,
string formatting) as status matchers and pod-template paths, and random objects (deep nesting,
huge numbers, control characters), through ``kli`` and the library API in a child under a memory
limit. Every run must end as harness.Outcome.problems() describes."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile import bombs
from tests.hostile.harness import CANARY_NAME, Case, assert_all_fine, run_cases

ATOMS = [
    ".",
    ".spec",
    ".spec.a",
    ".spec.a[]",
    ".spec.s",
    ".spec.replicas",
    ".status.phase",
    ".metadata",
    "1",
    "0",
    "-1",
    "1e308",
    "9999999999999999999999",
    '"x"',
    '"\\u001b]0;t\\u0007"',
    "null",
    "true",
    "[]",
    "{}",
    f"$ENV.{CANARY_NAME}",
    f"env.{CANARY_NAME}",
    "$__loc__",
    "now",
    "input_filename",
]
UNARY = [
    "length",
    "keys",
    "tojson",
    "tostring",
    "tonumber",
    "add",
    "flatten",
    "sort",
    "unique",
    "to_entries",
    "from_entries",
    "reverse",
    "ascii_downcase",
    "explode",
    "implode",
    "type",
    "not",
    "paths",
    "floor",
    "sqrt",
    "@base64",
    "@json",
    "@html",
    "keys_unsorted",
]
BINARY = [" + ", " - ", " * ", " / ", " % ", " == ", " < ", " and ", " or ", " // ", " | ", ", "]


def _expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(BINARY), inner).map(lambda t: f"({t[0]}{t[1]}{t[2]})"),
            st.tuples(inner, st.sampled_from(UNARY)).map(lambda t: f"({t[0]} | {t[1]})"),
            inner.map(lambda e: f"[{e}]"),
            st.tuples(inner, inner).map(lambda t: f"{{a: {t[0]}, ({t[1]} | tostring): 1}}"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]} as $v | {t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"[.spec.a[] as $x | {t[0]} | {t[1]}]"),
            inner.map(lambda e: f"map({e})"),
            inner.map(lambda e: f"select({e})"),
            inner.map(lambda e: f"[range({e})]"),
            inner.map(lambda e: f"[limit(100000000; repeat({e}))]"),
            inner.map(lambda e: f"until(false; {e})"),
            inner.map(lambda e: f"[recurse({e})]"),
            st.tuples(inner, inner).map(lambda t: f"setpath([{t[0]}]; {t[1]})"),
            st.tuples(inner, inner, inner).map(lambda t: f"(if {t[0]} then {t[1]} else {t[2]} end)"),
            st.tuples(inner, inner).map(lambda t: f"(try {t[0]} catch {t[1]})"),
            inner.map(lambda e: f"({e})?"),
            st.tuples(inner, inner).map(lambda t: f"reduce .spec.a[] as $i ({t[0]}; {t[1]})"),
            inner.map(lambda e: f"(def f: {e}; f | f | f)"),
            inner.map(lambda e: f'"\\({e})"'),
            inner.map(lambda e: f'({e} | tostring | test("a+"))'),
            inner.map(lambda e: f"({e} | tostring | . * 1000000)"),
        )

    return st.recursive(st.sampled_from(ATOMS), extend, max_leaves=12)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from([bombs.ESC, "\x00", "\u202e", "9" * 50]),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=25,
)


def _object(extra: Any, depth: int) -> str:
    obj = copy.deepcopy(bombs.OBJECT)
    obj["spec"]["extra"] = extra
    return bombs.with_spec_field("deep", bombs.deep_text(depth), obj)


def _cases(expression: str, obj: str) -> list[Case]:
    template = f"{{metadata: {{labels: {{x: ({expression} | tostring)}}}}, spec: .spec.template.spec}}"
    karta = bombs.definition(matchers=[expression], template=template)
    cases = bombs.cases_for("generated", karta, obj, backends=("volcano", "kueue"))
    return [c for c in cases if c.id != "generated/inspect-table"]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(expression=_expressions(), extra=_json, depth=st.sampled_from([1, 50, 300]))
def test_generated_definitions_and_objects(expression: str, extra: Any, depth: int) -> None:
    assert_all_fine(run_cases(_cases(expression, _object(extra, depth))))
