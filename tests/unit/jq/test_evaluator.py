"""The Evaluator: engine selection, limits, error classes, sessions and write-back (20.1)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from karta.errors import (
    JqCompileError,
    JqParseError,
    JqResultLimitError,
    JqRuntimeError,
    WriteBackError,
)
from karta.jq import DEFAULT_MAX_RESULTS, DEFAULT_TIMEOUT_MS, Evaluator, _libjq, setpath
from karta.jq.evaluator import plan_for


@pytest.fixture
def ev() -> Evaluator:
    return Evaluator(trusted=True)


def test_defaults() -> None:
    evaluator = Evaluator()
    assert (evaluator.max_results, evaluator.timeout_ms, evaluator.trusted) == (1000, 10_000, False)
    assert (DEFAULT_MAX_RESULTS, DEFAULT_TIMEOUT_MS) == (1000, 10_000)


@pytest.mark.parametrize(
    ("data", "expression", "expected"),
    [
        ({"metadata": {}}, ".metadata.nonexistent", [None]),  # J1
        ({"spec": {"items": [{"x": 1}]}}, ".spec.items[] | select(.x == 99)", []),  # J2
        ({"spec": {}}, '.spec.a // "d"', ["d"]),  # J3
        ({"spec": {}}, 'has("spec")', [True]),  # J3
        ({"s": {"b": {"n": 2}, "a": {"n": 1}}}, ".s | to_entries[] | .key", ["a", "b"]),  # J13
        ({"s": {"b": {"n": 2}, "a": {"n": 1}}}, ".s | .[] | .n", [1, 2]),  # J13
        ({"v": 3.0}, "(.v) | tostring", ["3"]),  # J14
    ],
)
def test_conformance_reads(ev: Evaluator, data: Any, expression: str, expected: list[Any]) -> None:
    assert ev.engine_of(expression) == "fast"
    assert ev.evaluate(expression, data) == expected


def test_j4_parse_error(ev: Evaluator) -> None:
    with pytest.raises(JqParseError, match=re.escape("failed to parse JQ expression '.status.phase =='")):
        ev.evaluate(".status.phase ==", {})


def test_compile_error(ev: Evaluator) -> None:
    with pytest.raises(JqCompileError, match="failed to compile JQ expression 'nosuchfn'"):
        ev.evaluate("nosuchfn", {})


@pytest.mark.parametrize("expression", [".a.b", '.a | ltrimstr("x") | test("y")'])
def test_runtime_error_prefix_on_both_engines(ev: Evaluator, expression: str) -> None:
    with pytest.raises(JqRuntimeError, match=re.escape(f"JQ execution error for expression '{expression}'")):
        ev.evaluate(expression, {"a": 5})


@pytest.mark.parametrize("expression", [".l[]", '.l[] | select(test("[0-9]"; "x") | not) // 0'])
def test_j5_j6_result_cap_on_both_engines(expression: str) -> None:
    ev = Evaluator(max_results=5, trusted=True)
    data5 = {"l": ["1", "2", "3", "4", "5"]}
    data6 = {"l": ["1", "2", "3", "4", "5", "6"]}
    if expression == ".l[]":
        assert ev.evaluate(expression, data5) == data5["l"]
        with pytest.raises(JqResultLimitError, match="query results exceed the allowed number 5"):
            ev.evaluate(expression, data6)
    else:
        assert ev.engine_of(expression) == "libjq"
        assert len(ev.evaluate('.l[] | select(test("[0-9]"))', data5)) == 5
        with pytest.raises(JqResultLimitError, match="query results exceed the allowed number 5"):
            ev.evaluate('.l[] | select(test("[0-9]"))', data6)


def test_integral_floats_come_back_as_ints(ev: Evaluator) -> None:
    (value,) = ev.evaluate(".v", {"v": 3.0})
    assert value == 3 and type(value) is int
    (value,) = ev.evaluate('.v | test("x") // .', {"v": "a"})  # libjq engine
    assert value == "a"
    copying = Evaluator(trusted=True, copy_results=True)
    data = {"v": {"n": 2.0}}
    (result,) = copying.evaluate(".v", data)
    assert result is not data["v"] and type(result["n"]) is int


def test_plans_are_cached_by_text() -> None:
    assert plan_for(".spec.replicas // 1") is plan_for(".spec.replicas // 1")
    assert plan_for(".spec.replicas // 1").engine == "fast"
    assert plan_for('.a | test("x")').engine == "libjq"


def test_session_serialises_the_object_once(ev: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = _libjq.to_json_text

    def counting(data: Any) -> str:
        calls.append(1)
        return original(data)

    monkeypatch.setattr(_libjq, "to_json_text", counting)
    obj = {"a": "xyz", "b": "q"}
    with ev.session(obj):
        assert ev.evaluate('.a | test("y")', obj) == [True]
        assert ev.evaluate('.b | test("y")', obj) == [False]
        assert ev.evaluate(".a", obj) == ["xyz"]  # fast path: no serialisation at all
    assert len(calls) == 1
    ev.evaluate('.a | test("y")', obj)
    assert len(calls) == 2


def test_j8_to_j12_write_back(ev: Evaluator) -> None:
    assert ev.assign(".a.b.c", {}, 1) == {"a": {"b": {"c": 1}}}
    assert ev.assign(".primary // .fallback", {"fallback": 1}, 5) == {"fallback": 5}
    assert ev.assign(".primary // .fallback", {"primary": 2, "fallback": 1}, 5) == {
        "primary": 5,
        "fallback": 1,
    }
    data = {"items": [{"v": 0}, {"v": 0}]}
    assert ev.assign_zip(".items[].v", data, [1, 2]) == {"items": [{"v": 1}, {"v": 2}]}
    assert data == {"items": [{"v": 0}, {"v": 0}]}
    with pytest.raises(WriteBackError, match="array length mismatch: expected 2 values but got 3"):
        ev.assign_zip(".items[].v", data, [1, 2, 3])


def test_j15_assign_through_a_non_path_fails(ev: Evaluator) -> None:
    with pytest.raises(JqRuntimeError, match=re.escape("JQ execution error for expression '{a: .x}'")):
        ev.assign("{a: .x}", {}, 1)


def test_paths_fall_back_to_libjq_outside_the_fast_path(ev: Evaluator) -> None:
    assert ev.paths(".[1:2]", [1, 2, 3]) == [[{"start": 1, "end": 2}]]
    assert ev.paths('.[] | select(test("b"))', ["a", "b"]) == [[1]]
    with pytest.raises(JqRuntimeError, match="Invalid path expression"):
        ev.paths('.a | test("b")', {"a": "b"})


def test_assigned_values_are_copies(ev: Evaluator) -> None:
    value = {"x": [1]}
    result = ev.assign(".a, .b", {}, value)
    result["a"]["x"].append(2)
    assert value == {"x": [1]} and result["b"] == {"x": [1]}


def test_setpath_creates_and_pads() -> None:
    assert setpath(None, ["a", 2], 1) == {"a": [None, None, 1]}
    with pytest.raises(WriteBackError):
        setpath({"a": 1}, ["a", "b"], 1)
