"""Shared iteration (``Evaluator.evaluate_shared``) and the fast-path shapes the extraction hot path
relies on: every result and every error must be exactly what ``evaluate`` and libjq give."""

from __future__ import annotations

from typing import Any

import pytest

from karta.errors import JqError
from karta.jq import Evaluator
from karta.jq.evaluator import iteration_split

FAST = Evaluator(trusted=True)
LIBJQ = Evaluator(trusted=True, fast_path=False)


def outcome(evaluator: Evaluator, expression: str, data: Any, shared: dict[int, Any] | None = None) -> Any:
    try:
        if shared is None:
            return ("ok", evaluator.evaluate(expression, data))
        return ("ok", evaluator.evaluate_shared(expression, data, shared))
    except JqError as exc:
        return ("error", type(exc).__name__, str(exc))


@pytest.mark.parametrize(
    ("expression", "split"),
    [
        (".spec.services | .[] | .labels", True),
        (".spec.services | (.[] | .labels)", True),
        ("(.spec.services | .[]) | .labels", True),
        (".spec.jobs[] | (.replicas // 1) * (.template.parallelism // 1)", True),
        (".spec.jobs[].template.spec.template", True),
        (".spec.jobs[] | .a, .b", False),  # two outputs per item
        (".spec.jobs[] | .[]", False),
        (".spec.jobs[] | $x", False),
        (".spec.jobs", False),
        (".spec.jobs[0].name", False),
    ],
)
def test_split_shapes(expression: str, split: bool) -> None:
    if "$x" in expression:
        with pytest.raises(JqError):
            iteration_split(expression)
        return
    assert (iteration_split(expression) is not None) == split


def test_equal_prefixes_share_one_key() -> None:
    a = iteration_split(".spec.services | .[] | .labels")
    b = iteration_split(".spec.services[] | .replicas")
    c = iteration_split(".spec.other[].replicas")
    assert a is not None and b is not None and c is not None
    assert a.key == b.key != c.key


EXPRESSIONS = [
    ".spec.services | .[] | .labels",
    ".spec.services | .[] | .replicas",
    ".spec.services[] | .replicas * 2",
    ".spec.services[].a.b",
    ".spec.services | .[] | (.replicas // 1)",
    ".spec.services | to_entries[] | .key",
    ".spec.services[] | .replicas > 1",
]
DATA = [
    {"spec": {"services": {"b": {"replicas": 2, "labels": {"x": "1"}}, "a": {"replicas": 1.0}}}},
    {"spec": {"services": [{"replicas": 3.5}, {"replicas": None}, None]}},
    {"spec": {"services": [{"replicas": "x"}, {"a": {"b": 1}}]}},  # "x" * 2 is an error
    {"spec": {"services": [1, 2]}},  # cannot index number
    {"spec": {"services": "text"}},  # cannot iterate
    {"spec": {"services": None}},
    {"spec": {}},
    {"spec": {"services": {}}},
    [1],
]


@pytest.mark.parametrize("data", DATA)
def test_shared_matches_evaluate_and_libjq(data: Any) -> None:
    shared: dict[int, Any] = {}
    for expression in EXPRESSIONS:
        fast = outcome(FAST, expression, data)
        assert outcome(FAST, expression, data, shared) == fast, expression
        if "//" in expression:
            continue  # a // b suppresses errors of a as gojq does; libjq 1.8 does not (fast path doc)
        reference = outcome(LIBJQ, expression, data)
        if fast[0] == "ok" or reference[0] == "ok":
            assert fast == reference, expression


def test_shared_respects_the_result_limit() -> None:
    data = {"spec": {"services": [{"r": 1}, {"r": 2}, {"r": 3}]}}
    assert Evaluator(trusted=True, max_results=3).evaluate_shared(".spec.services[] | .r", data, {}) == [
        1,
        2,
        3,
    ]
    with pytest.raises(JqError, match="exceed the allowed number 2"):
        Evaluator(trusted=True, max_results=2).evaluate_shared(".spec.services[] | .r", data, {})


def test_shared_normalises_integral_floats() -> None:
    data = {"spec": {"services": [{"r": 2.0}, {"r": 2.5}]}}
    assert FAST.evaluate_shared(".spec.services[] | .r", data, {}) == [2, 2.5]
    assert [type(x) for x in FAST.evaluate_shared(".spec.services[] | .r", data, {})] == [int, float]


def test_shared_is_not_used_for_libjq_or_copies() -> None:
    data = {"spec": {"services": [{"r": {"deep": 1}}]}}
    copying = Evaluator(trusted=True, copy_results=True)
    out = copying.evaluate_shared(".spec.services[] | .r", data, {})
    assert out == [{"deep": 1}] and out[0] is not data["spec"]["services"][0]["r"]
    shared: dict[int, Any] = {}
    assert LIBJQ.evaluate_shared(".spec.services[] | .r", data, shared) == [{"deep": 1}]
    assert shared == {}


@pytest.mark.parametrize(
    "expression",
    [
        "[.[] | .a > 1]",
        "[.[] | .a < 1]",
        "[.[] | .a >= 1]",
        "[.[] | .a <= 1]",
        "any(.a > 1)",
        "all(.a > 0)",
        "[.[] | (.a // 7) * (.b // 2)]",
    ],
)
@pytest.mark.parametrize(
    "data",
    [
        [{"a": 1}, {"a": 2}, {"a": "x"}, {"a": None}, {"a": 1.5}, {"a": [1]}, {"a": {"k": 1}}, {"a": True}],
        [{"a": "b"}, {"a": "a"}, {"a": "é"}, {"a": "z", "b": 3}],
        [{"a": 0, "b": 0}, {"a": False}, {"b": 2.5}],
    ],
)
def test_single_valued_shapes_agree_with_libjq(expression: str, data: Any) -> None:
    fast = outcome(FAST, expression, data)
    reference = outcome(LIBJQ, expression, data)
    if fast[0] == "ok" or reference[0] == "ok":
        assert fast == reference
