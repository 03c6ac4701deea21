"""CRD names in the draft's jq are data, never code: any property name, parsed back by our parser
and evaluated (fast path and libjq) on an object holding that key, selects exactly that key."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from karta.jq import Evaluator, parse
from karta.jq import syntax as A
from karta.scaffold.jqtext import jq_field, jq_path, jq_scoped, jq_string
from karta.scaffold.schema import Segment

FAST = Evaluator(trusted=True)
LIBJQ = Evaluator(trusted=True, fast_path=False)

HOSTILE = [
    'w"] | $ENV.HOME | .["',
    "a\\(1)",
    "\\(env)",
    "\\",
    '"',
    "x\ny: 1",
    "nul\x00byte",
    "tab\there",
    "line\u2028sep",
    "nel\x85",
    "rtl\u200fmark\u202e",
    "bom\ufeff",
    "emoji \U0001f600",
    "tag\U000e0041",
    "unassigned\U000e0fff\uffff",
    "",
    " ",
    "if",
    "and",
    "end",
    "reduce",
    "__loc__",
    "$__loc__",
    "a.b",
    "a::b",
    "0abc",
    "]",
    "#comment",
]

# any Unicode but lone surrogates (a real object, UTF-8 JSON, cannot hold them)
names = st.text(st.characters(exclude_categories=("Cs",)), max_size=12) | st.sampled_from(HOSTILE)


def steps(node: A.Node) -> list[str | None]:
    """The keys (None: iterate) of a pure path; anything else in the tree fails the test."""
    out: list[str | None] = []
    while not isinstance(node, A.Identity):
        if isinstance(node, A.Index):
            assert isinstance(node.index, A.Literal) and isinstance(node.index.value, str), node
            out.append(node.index.value)
            node = node.target
        elif isinstance(node, A.Try) and node.catch is None and isinstance(node.body, A.Iterate):
            out.append(None)
            node = node.body.target
        else:
            raise AssertionError(f"not a plain path: {node!r}")
    return out[::-1]


def evaluate(expression: str, data: Any) -> list[Any]:
    fast, libjq = FAST.evaluate(expression, data), LIBJQ.evaluate(expression, data)
    assert fast == libjq
    return fast


@given(names)
@example('w"] | $ENV.HOME | .["')
@example("a\\(1)")
def test_a_string_literal_is_the_text_and_nothing_else(text: str) -> None:
    literal = jq_string(text)
    assert literal.isprintable()  # no control character or line break survives
    node = parse(literal)
    assert node == A.Literal(value=text) or node == A.StringInterp(parts=(text,))
    assert evaluate(literal, None) == [text]


@given(st.lists(names, min_size=1, max_size=4), st.data())
def test_a_path_selects_exactly_its_keys(keys: list[str], data: st.DataObject) -> None:
    iterate = [data.draw(st.sampled_from([None, "map"])) for _ in keys[:-1]] + [None]
    segments = tuple(Segment(k, it) for k, it in zip(keys, iterate, strict=True))  # type: ignore[arg-type]
    path = jq_path(segments)
    assert path.isprintable()
    expected: list[str | None] = []
    for seg in segments:
        expected.append(seg.name)
        if seg.iterate:
            expected.append(None)
    assert steps(parse(path)) == expected
    # an object holding exactly those keys, each map with two entries, plus decoys
    value: Any = "found"
    concrete: list[list[str]] = [[]]
    for seg in reversed(segments):
        if seg.iterate:
            value = {"e1": value, "e2": value}
            concrete = [["e1", *c] for c in concrete] + [["e2", *c] for c in concrete]
        value = {seg.name: value, seg.name + "x": "decoy", "": "empty"} if seg.name else {"": value, "x": 1}
        concrete = [[seg.name, *c] for c in concrete]
    assert evaluate(path, value) == ["found"] * len(concrete)
    assert sorted(FAST.paths(path, value)) == sorted(concrete)


@given(names)
def test_a_field_after_a_variable_is_data(name: str) -> None:
    text = jq_path((Segment(name),), base="$v")
    assert evaluate(f". as $v | {text}", {name: 7, "other": 8}) == [7]
    assert evaluate(f". as $v | {jq_scoped((Segment(name),), '1')}", {"other": 8}) == [1]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("replicas", ".replicas"),
        ("if", ".if"),  # keywords are fields after a dot, in our parser and in jq 1.8
        ("_x9", "._x9"),
        ("kubeflow.org/instance", '["kubeflow.org/instance"]'),
        ('w"] | $ENV.HOME | .["', '["w\\"] | $ENV.HOME | .[\\""]'),
        ("a\\(1)", '["a\\\\(1)"]'),
        ("x\ny\x00", '["x\\u000ay\\u0000"]'),
        ("rtl\u202e", '["rtl\\u202e"]'),
        ("tag\U000e0041", '["tag\\udb40\\udc41"]'),
        ("name\n", '["name\\u000a"]'),  # not ".name" followed by a line break
        ("é", '["é"]'),
    ],
)
def test_field_forms(name: str, text: str) -> None:
    assert jq_field(name) == text


def test_paths_start_with_a_dot() -> None:
    assert jq_path(()) == "."
    assert jq_path((Segment("a-b"),)) == '.["a-b"]'  # ["a-b"] alone would be an array
    assert jq_path((Segment("spec"), Segment("a-b", "map"), Segment("x"))) == '.spec["a-b"][]?.x'
    assert jq_scoped((Segment("g", "array"), Segment("a-b"))) == '.g[]? | .["a-b"]'
    assert jq_scoped((Segment("g", "array"), Segment("n")), "1") == ".g[]? | (.n // 1)"


@settings(max_examples=30)
@given(names)
def test_the_surrounding_draft_expressions_keep_names_as_data(name: str) -> None:
    """The instance label selector: a group with quotes or ``\\(`` stays the key it names."""
    label = jq_path((Segment("metadata"), Segment("labels"), Segment(f"{name}/instance")))
    obj = {"metadata": {"labels": {f"{name}/instance": "w-0", "x": "y"}}}
    assert evaluate(label, obj) == ["w-0"]
