"""The fast-path compiler: subset coverage, specialisation, gojq semantics and path mode."""

from __future__ import annotations

from typing import Any

import pytest

from karta.jq import parse
from karta.jq import syntax as A
from karta.jq._values import JqFail
from karta.jq.fastpath import Unsupported, compile_node, run_paths


def run(expression: str, data: Any) -> list[Any]:
    return compile_node(parse(expression)).many(data, {})


def test_hand_built_field_chain_is_a_single_output_closure() -> None:
    node = A.Index(A.Index(A.Identity(), A.Literal("spec")), A.Literal("replicas"))
    compiled = compile_node(node)
    assert compiled.one is not None
    assert compiled.one({"spec": {"replicas": 3}}, {}) == 3
    assert compiled.many({"spec": None}, {}) == [None]
    assert compiled.many({}, {}) == [None]


def test_chain_on_wrong_type_is_a_jq_error() -> None:
    with pytest.raises(JqFail, match='Cannot index string with string \\("b"\\)'):
        run(".a.b", {"a": "text"})
    with pytest.raises(JqFail, match="Cannot iterate over null"):
        run(".a[]", {})


def test_results_share_structure_with_the_input() -> None:
    template = {"spec": {"containers": []}}
    data = {"spec": {"template": template}}
    assert run(".spec.template", data)[0] is template


@pytest.mark.parametrize(
    "expression",
    ["..", "def f: 1; f", 'test("a")', "range(3)", ".a = 1", "$ENV", "input", "label $x | 1", "@csv"],
)
def test_outside_the_subset_is_unsupported(expression: str) -> None:
    with pytest.raises(Unsupported):
        compile_node(parse(expression))


def test_unbound_variable_is_unsupported_so_libjq_reports_it() -> None:
    with pytest.raises(Unsupported):
        compile_node(parse("$nope"))


@pytest.mark.parametrize(
    ("expression", "data", "expected"),
    [
        ('.spec.a // "d"', {"spec": {}}, ["d"]),
        (".a // .b", {"a": False, "b": 2}, [2]),
        ("(1, null, 2) // 3", None, [1, 2]),
        ('.a.b // "fallback"', {"a": "text"}, ["fallback"]),  # gojq: errors of the left are suppressed
        ('(1, error("x")) // 2', None, [1]),
        ('[.[] | (1, error("x"))?]', [0], [[1]]),
        ('try (1, error("x")) catch "caught"', None, [1, "caught"]),
        ('first(1, error("x"))', None, [1]),
        ('[limit(2; 1, 2, error("x"))]', None, [[1, 2]]),
        ('any(true, error("x"); .)', None, [True]),
        ('[error("x") + empty]', None, [[]]),
        ("(.v) | tostring", {"v": 3.0}, ["3"]),
        ("tojson", {"b": 1.0, "a": [0.5, "é"]}, ['{"a":[0.5,"é"],"b":1}']),
        (".[]", {"b": 1, "a": 2}, [2, 1]),
        ("keys, (to_entries | map(.key))", {"b": 1, "a": 2}, [["a", "b"], ["a", "b"]]),
        ('"\\(1, 2)-\\("a", "b")"', None, ["1-a", "2-a", "1-b", "2-b"]),
        ("{a: (1, 2), b: (3, 4)} | [.a, .b]", None, [[1, 3], [1, 4], [2, 3], [2, 4]]),
        ("[(1, 2) + (10, 20)]", None, [[11, 12, 21, 22]]),
        ("1 / 2, 4 / 2, 1.5 + 1.5", None, [0.5, 2, 3]),
        ('[null, false, true, 0, "", [], {}] | sort == .', None, [True]),
        ('{"a": {"b": 1}} * {"a": {"c": 2}}', None, [{"a": {"b": 1, "c": 2}}]),
        ('"ab" * 2, ("x" * 0)', None, ["abab", ""]),
        (". as [$a, {b: $c}] | $a + $c", [1, {"b": 2}], [3]),
        ("reduce .[] as $x (0; . + $x)", [1, 2, 3], [6]),
    ],
)
def test_semantics(expression: str, data: Any, expected: list[Any]) -> None:
    assert run(expression, data) == expected


def test_string_repetition_is_capped() -> None:
    with pytest.raises(JqFail, match="too long"):
        run('"x" * 100000000', None)


@pytest.mark.parametrize(
    ("expression", "data", "expected"),
    [
        (".a // .b", {"b": 1}, [["b"]]),
        (".primary // .fallback", {"primary": 2, "fallback": 1}, [["primary"]]),
        (".a.b", {}, [["a", "b"]]),
        (".items[].v", {"items": [{"v": 0}, {"v": 0}]}, [["items", 0, "v"], ["items", 1, "v"]]),
        ('.[] | select(.name == "b") | .image', [{"name": "a"}, {"name": "b"}], [[1, "image"]]),
        ("if .a then .b else .c end", {"a": 1}, [["b"]]),
        ("first(.[]), last", [1, 2], [[0], [-1]]),
        ('getpath(["a", "b"])', {}, [["a", "b"]]),
        (".a | values", {"a": 1}, [["a"]]),
        (". as $x | .a", {}, [["a"]]),
        ("null", None, [[]]),
        ("1 | empty", None, []),
        (".s[]", {"s": {"b": 1, "a": 2}}, [["s", "a"], ["s", "b"]]),
    ],
)
def test_paths(expression: str, data: Any, expected: list[list[Any]]) -> None:
    assert run_paths(compile_node(parse(expression)), data) == expected


@pytest.mark.parametrize("expression", ["1", ".a // 1", "{a: .x}", ".a | tostring", "$__loc__ | .a"])
def test_non_paths_fail_like_jq(expression: str) -> None:
    try:
        compiled = compile_node(parse(expression))
    except Unsupported:
        return
    with pytest.raises(JqFail, match="Invalid path expression"):
        run_paths(compiled, {})


def test_path_mode_of_slices_defers_to_libjq() -> None:
    with pytest.raises(Unsupported):
        run_paths(compile_node(parse(".[1:2]")), [1, 2, 3])
