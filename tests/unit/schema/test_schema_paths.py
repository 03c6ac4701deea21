"""karta.schema.paths: which object paths an expression reads and what it yields, statically."""

from __future__ import annotations

import pytest

from karta.jq import parse
from karta.jq.builtin_table import BUILTINS
from karta.schema.paths import MAX_VALUES, Arr, Lit, Loc, Unknown, analyse, path_text


def reads(expression: str) -> list[str]:
    return sorted(path_text(p) for p in analyse(parse(expression)).reads)


def outputs(expression: str) -> list[str]:
    out = []
    for value in analyse(parse(expression)).outputs:
        if isinstance(value, Loc):
            out.append(path_text(value.path))
        elif isinstance(value, Lit):
            out.append(f"<{value.type or '?'}>")
        else:
            out.append(type(value).__name__)
    return out


def unfollowed(expression: str) -> list[str]:
    return [reason for _, reason in analyse(parse(expression)).unfollowed]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (".spec.a.b", [".spec", ".spec.a", ".spec.a.b"]),
        ('.metadata.labels["a/b"]', [".metadata", ".metadata.labels", '.metadata.labels["a/b"]']),
        (".spec.list[0].x", [".spec", ".spec.list", ".spec.list[0]", ".spec.list[0].x"]),
        (".spec.tasks[]?.name", [".spec", ".spec.tasks", ".spec.tasks[]", ".spec.tasks[].name"]),
        (".spec.a // .spec.b", [".spec", ".spec.a", ".spec.b"]),
        ("if .spec.x then .spec.y else .spec.z end", [".spec", ".spec.x", ".spec.y", ".spec.z"]),
        (
            "[.spec.l[] | select(.on) | .n] | length",
            [".spec", ".spec.l", ".spec.l[]", ".spec.l[].n", ".spec.l[].on"],
        ),
        ("map(.r) | add", [".[]", ".[].r"]),
        ("any(.spec.l[]; .x == 1)", [".spec", ".spec.l", ".spec.l[]", ".spec.l[].x"]),
        ("all(.spec.m[]; .ok)", [".spec", ".spec.m", ".spec.m[]", ".spec.m[].ok"]),
        (
            "(.spec.m // {}) | to_entries[] | .value.replicas",
            [".spec", ".spec.m", ".spec.m | to_entries[].value", ".spec.m | to_entries[].value.replicas"],
        ),
        (
            ".spec.t as $t | $t.items[] | .name",
            [".spec", ".spec.t", ".spec.t.items", ".spec.t.items[]", ".spec.t.items[].name"],
        ),
        (". as {spec: {a: $a}} | $a.b", [".spec", ".spec.a", ".spec.a.b"]),
        ('(.status // {}) | has("replicas")', [".status", ".status.replicas"]),
        ("def f(g): g.x; f(.spec.y)", [".spec", ".spec.y", ".spec.y.x"]),
        ("def f($v): $v.k; f(.spec.y)", [".spec", ".spec.y", ".spec.y.k"]),
        ("{a: .spec.q} | .a.r", [".spec", ".spec.q", ".spec.q.r"]),
        ("[.spec.a, .spec.b] | max", [".spec", ".spec.a", ".spec.b"]),
        ("reduce .spec.l[] as $x (0; . + $x.n)", [".spec", ".spec.l", ".spec.l[]", ".spec.l[].n"]),
        ('"\\(.spec.name)-x"', [".spec", ".spec.name"]),
        ("1", []),
    ],
)
def test_reads(expression: str, expected: list[str]) -> None:
    assert reads(expression) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (".spec.a.b", [".spec.a.b"]),
        (".spec.x // 1", [".spec.x", "<number>"]),
        (".spec.x == 1", ["<boolean>"]),
        (".spec.x * 2", ["<number>"]),
        ("[.spec.l[] | .r] | add", [".spec.l[].r"]),
        ("(.spec.r // 1) as $r | $r", [".spec.r", "<number>"]),
        (".spec.a | tostring", ["<string>"]),
        ("[.spec.l[]]", ["Arr"]),
        ("null", ["<null>"]),
        ("empty", []),
        ("first(.spec.l[])", [".spec.l[]"]),
        ("(.spec.m // {}) | to_entries[] | .key", ["<string>"]),
    ],
)
def test_outputs(expression: str, expected: list[str]) -> None:
    assert outputs(expression) == expected


def test_a_built_array_keeps_its_elements() -> None:
    (value,) = analyse(parse("[.spec.a, 1]")).outputs
    assert isinstance(value, Arr)
    assert [path_text(v.path) if isinstance(v, Loc) else v for v in value.items] == [
        ".spec.a",
        Lit("number", 1, True),
    ]


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("..|.a", "recursive descent (..)"),
        ('getpath(["a"])', "getpath/1 is not followed"),
        ("$undefined_here", "variable $undefined_here"),
        ("def f: f; f", "calls nested more than 8 deep"),
    ],
)
def test_what_cannot_be_followed_is_said(expression: str, reason: str) -> None:
    assert reason in unfollowed(expression)
    assert any(isinstance(v, Unknown) for v in analyse(parse(expression)).outputs)


def test_too_many_alternatives_is_not_followed() -> None:
    expression = " , ".join(f".spec.f{i}" for i in range(MAX_VALUES + 1))
    assert any(isinstance(v, Unknown) for v in analyse(parse(expression)).outputs)


def test_the_analysis_is_bounded() -> None:
    # Every alternative doubles the work of a naive walk; the step budget ends it.
    expression = "|".join(["(.a // .b // .c)"] * 40)
    result = analyse(parse(expression))
    assert result.outputs  # it ended, and said so if it gave up
    if any(isinstance(v, Unknown) for v in result.outputs):
        assert result.unfollowed


def test_every_flow_record_names_arities_and_argument_kinds_the_analysis_knows() -> None:
    for builtin in BUILTINS.values():
        for arity, flow in builtin.flow.items():
            assert arity in builtin.arities, builtin.name
            assert len(flow.args) <= arity, builtin.name
            assert set(flow.args) <= set("iena"), builtin.name
            assert flow.type in ("", "boolean", "number", "string", "array", "object"), builtin.name
