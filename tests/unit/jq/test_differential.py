"""Differential tests: the fast path against libjq on generated expressions and objects.

The reference program given to libjq is rendered so that libjq computes gojq's semantics, which
the fast path implements (docs/spec/format.md#jq-dialect, R11):

* ``a // b`` suppresses errors of ``a`` in gojq but not in libjq 1.8, so it is rendered as
  "the truthy outputs of ``[a?]``, else ``b``";
* gojq keeps objects in sorted key order, libjq in insertion order, so every sub-result is passed
  through ``_s`` (a deep key sort) before it can be iterated or printed.

Results must be equal after normalising integral floats to ints (object key order irrelevant);
when one engine fails the other must fail too (messages may differ).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from karta.jq import _libjq
from karta.jq import syntax as A
from karta.jq._values import JqFail, dumps, normalise_output
from karta.jq.fastpath import Unsupported, compile_node

SORT_DEF = (
    'def _s: if type == "object" then to_entries | sort_by(.key) | map(.value |= _s) | from_entries '
    'elif type == "array" then map(_s) else . end; '
)

# --- rendering ------------------------------------------------------------------------------------


def render(node: A.Node, *, ref: bool) -> str:
    text = _render(node, ref)
    return SORT_DEF + text if ref else text


def _r(node: A.Node, ref: bool) -> str:
    inner = _render(node, ref)
    return f"({inner} | _s)" if ref else f"({inner})"


def _lit(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        return f"({dumps(value)})"
    return dumps(value)


def _render(node: A.Node, ref: bool) -> str:
    r = _r
    if isinstance(node, A.Identity):
        return "."
    if isinstance(node, A.Literal):
        return _lit(node.value)
    if isinstance(node, A.Var):
        return f"${node.name}"
    if isinstance(node, A.Index):
        if isinstance(node.index, A.Literal) and isinstance(node.index.value, str):
            key = node.index.value
            if key.isidentifier():
                return f"{r(node.target, ref)}.{key}"
            return f"{r(node.target, ref)}[{dumps(key)}]"
        return f"{r(node.target, ref)}[{_render(node.index, ref)}]"
    if isinstance(node, A.Slice):
        start = _render(node.start, ref) if node.start is not None else ""
        end = _render(node.end, ref) if node.end is not None else ""
        return f"{r(node.target, ref)}[{start}:{end}]"
    if isinstance(node, A.Iterate):
        return f"{r(node.target, ref)}[]"
    if isinstance(node, A.Pipe):
        return f"({r(node.left, ref)} | {r(node.right, ref)})"
    if isinstance(node, A.Comma):
        return f"({r(node.left, ref)}, {r(node.right, ref)})"
    if isinstance(node, A.Binary):
        if node.op == "//" and ref:
            left, right = r(node.left, ref), r(node.right, ref)
            return (
                f"(([{left}?] | map(select(. != null and . != false))) as $__alt "
                f"| if ($__alt | length) > 0 then $__alt[] else {right} end)"
            )
        return f"({r(node.left, ref)} {node.op} {r(node.right, ref)})"
    if isinstance(node, A.Neg):
        return f"(-{r(node.operand, ref)})"
    if isinstance(node, A.ArrayCons):
        return "[]" if node.body is None else f"[{_render(node.body, ref)}]"
    if isinstance(node, A.ObjectCons):
        entries = ", ".join(f"{_render(e.key, ref)}: {r(e.value, ref)}" for e in node.entries)
        return "{" + entries + "}"
    if isinstance(node, A.StringInterp):
        parts = []
        for p in node.parts:
            parts.append(p if isinstance(p, str) else "\\(" + _render(p, ref) + ")")
        text = '"' + "".join(parts) + '"'
        return f"(@{node.fmt} {text})" if node.fmt else text
    if isinstance(node, A.If):
        text = f"(if {r(node.cond, ref)} then {r(node.then, ref)}"
        for cond, then in node.elifs:
            text += f" elif {r(cond, ref)} then {r(then, ref)}"
        else_ = r(node.else_, ref) if node.else_ is not None else "."
        return text + f" else {else_} end)"
    if isinstance(node, A.Format):
        return f"@{node.name}"
    if isinstance(node, A.Try):
        if node.catch is None:
            return f"({r(node.body, ref)}?)"
        return f"(try {r(node.body, ref)} catch {r(node.catch, ref)})"
    if isinstance(node, A.Bind):
        pattern = _pattern(node.patterns[0], ref)
        return f"({r(node.source, ref)} as {pattern} | {r(node.body, ref)})"
    if isinstance(node, A.Reduce):
        return (
            f"(reduce {r(node.source, ref)} as {_pattern(node.pattern, ref)} "
            f"({_render(node.init, ref)}; {_render(node.update, ref)}))"
        )
    if isinstance(node, A.Foreach):
        extract = f"; {_render(node.extract, ref)}" if node.extract is not None else ""
        return (
            f"(foreach {r(node.source, ref)} as {_pattern(node.pattern, ref)} "
            f"({_render(node.init, ref)}; {_render(node.update, ref)}{extract}))"
        )
    if isinstance(node, A.Call):
        if not node.args:
            return node.name
        return f"{node.name}(" + "; ".join(_render(a, ref) for a in node.args) + ")"
    raise AssertionError(f"cannot render {node!r}")


def _pattern(pattern: A.Pattern, ref: bool) -> str:
    if isinstance(pattern, A.VarPattern):
        return f"${pattern.name}"
    if isinstance(pattern, A.ArrayPattern):
        return "[" + ", ".join(_pattern(p, ref) for p in pattern.elements) + "]"
    entries = []
    for e in pattern.entries:
        key = f"${e.key_var}" if e.key_var is not None else _render(e.key, ref) if e.key else ""
        entries.append(key + (f": {_pattern(e.pattern, ref)}" if e.pattern is not None else ""))
    return "{" + ", ".join(entries) + "}"


# --- comparison ----------------------------------------------------------------------------------


def outcome_fast(node: A.Node, data: Any) -> tuple[str, Any]:
    try:
        compiled = compile_node(node)
    except Unsupported as exc:  # pragma: no cover - the generator only builds the subset
        raise AssertionError(f"generated expression is unsupported: {exc}") from None
    try:
        return "ok", [dumps(normalise_output(x)) for x in compiled.many(data, {})]
    except JqFail as exc:
        return "error", exc.message


def outcome_libjq(text: str, data: Any) -> tuple[str, Any]:
    try:
        results = _libjq.run(text, data, max_results=100_000)
    except Exception as exc:  # any libjq failure counts as an error outcome
        return "error", str(exc)
    return "ok", [dumps(normalise_output(x)) for x in results]


def assert_same(node: A.Node, data: Any) -> None:
    fast = outcome_fast(node, data)
    ref_text = render(node, ref=True)
    ref = outcome_libjq(ref_text, data)
    if fast[0] == ref[0] == "error":
        return
    assert fast == ref, f"expression: {render(node, ref=False)}\ndata: {dumps(data)}\nreference: {ref_text}"


# --- generators ----------------------------------------------------------------------------------

KEYS = ["a", "b", "c", "x"]
STRINGS = ["", "a", "b", "ab", "ba", "A", "12", "1.5", "a-b"]
FLOATS = [0.5, 1.5, -2.25, 3.0, 100.0]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=5),
    st.sampled_from(FLOATS),
    st.sampled_from(STRINGS),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=3),
    ),
    max_leaves=10,
)

literals = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-2, max_value=4),
    st.just(1.5),
    st.sampled_from(STRINGS),
).map(A.Literal)

leaf = st.one_of(
    st.just(A.Identity()),
    literals,
    st.sampled_from(KEYS).map(lambda k: A.Index(A.Identity(), A.Literal(k))),
    st.integers(min_value=-2, max_value=2).map(lambda i: A.Index(A.Identity(), A.Literal(i))),
    st.just(A.Iterate(A.Identity())),
    st.sampled_from(
        [
            "length",
            "keys",
            "to_entries",
            "type",
            "tostring",
            "tojson",
            "not",
            "add",
            "any",
            "all",
            "first",
            "last",
            "values",
            "nulls",
            "strings",
            "numbers",
            "objects",
            "arrays",
            "booleans",
            "iterables",
            "scalars",
            "min",
            "max",
            "sort",
            "unique",
            "reverse",
            "flatten",
            "floor",
            "tonumber",
            "ascii_downcase",
            "ascii_upcase",
            "empty",
            "from_entries",
        ]
    ).map(lambda name: A.Call(name)),
)

BINARY_OPS = ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "//"]
CALLS_1 = [
    "select",
    "map",
    "has",
    "contains",
    "inside",
    "startswith",
    "endswith",
    "ltrimstr",
    "rtrimstr",
    "join",
    "split",
    "index",
    "sort_by",
    "group_by",
    "unique_by",
    "min_by",
    "max_by",
    "first",
    "last",
    "any",
    "all",
    "with_entries",
    "map_values",
    "in",
    "isempty",
    "getpath",
    "flatten",
    "indices",
    "add",
]


def _extend(children: st.SearchStrategy[A.Node]) -> st.SearchStrategy[A.Node]:
    return st.one_of(
        st.tuples(children, st.sampled_from(KEYS)).map(lambda t: A.Index(t[0], A.Literal(t[1]))),
        st.tuples(children, children).map(lambda t: A.Index(t[0], t[1])),
        st.tuples(children, st.sampled_from([None, -1, 0, 1]), st.sampled_from([-1, 1, 2]) | st.none()).map(
            lambda t: A.Slice(
                t[0],
                A.Literal(t[1]) if t[1] is not None else None,
                A.Literal(t[2] if t[2] is not None else 2) if t[2] is not None or t[1] is None else None,
            )
        ),
        children.map(A.Iterate),
        st.tuples(children, children).map(lambda t: A.Pipe(t[0], t[1])),
        st.tuples(children, children).map(lambda t: A.Comma(t[0], t[1])),
        st.tuples(st.sampled_from(BINARY_OPS), children, children).map(lambda t: A.Binary(*t)),
        children.map(A.Neg),
        st.one_of(st.none(), children).map(A.ArrayCons),
        st.lists(st.tuples(st.sampled_from(KEYS), children), min_size=1, max_size=2).map(
            lambda es: A.ObjectCons(tuple(A.ObjectEntry(A.Literal(k), v) for k, v in es))
        ),
        st.tuples(children, children).map(lambda t: A.StringInterp(("<", t[0], "|", t[1], ">"))),
        st.tuples(children, children, st.one_of(st.none(), children)).map(
            lambda t: A.If(t[0], t[1], (), t[2])
        ),
        children.map(lambda c: A.Try(c)),
        # The handler sees the error value; messages may differ between engines, so only its
        # type is inspected.
        st.tuples(children, children).map(lambda t: A.Try(t[0], A.Pipe(A.Call("type"), t[1]))),
        st.tuples(children, children).map(
            lambda t: A.Bind(t[0], (A.VarPattern("v"),), A.Binary("+", t[1], A.Var("v")))
        ),
        st.tuples(children, children).map(
            # An init with several outputs is left out: gojq reduces once per init value, libjq 1.8
            # then evaluates the source on the wrong input (`reduce .[] as $r (0,1; .)` fails).
            lambda t: A.Reduce(
                A.Iterate(t[0]),
                A.VarPattern("r"),
                A.Call("first", (t[1],)),
                A.Binary("+", A.Identity(), A.Var("r")),
            )
        ),
        st.tuples(st.sampled_from(CALLS_1), children).map(lambda t: A.Call(t[0], (t[1],))),
        st.tuples(st.sampled_from(["any", "all", "limit"]), children, children).map(
            lambda t: A.Call(t[0], (t[1], t[2]))
        ),
        children.map(lambda c: A.Call("error", (c,))),
    )


expressions = st.recursive(leaf, _extend, max_leaves=8)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(node=expressions, data=json_values)
def test_fast_path_agrees_with_libjq(node: A.Node, data: Any) -> None:
    assert_same(node, data)


# --- fixed table of tricky cases ----------------------------------------------------------------

TRICKY: list[tuple[str, Any]] = [
    # J1, J2, J3, J13, J14 of docs/spec/format.md#conformance
    (".metadata.nonexistent", {"metadata": {}}),
    (".spec.items[] | select(.x == 99)", {"spec": {"items": [{"x": 1}]}}),
    ('.spec.a // "d"', {"spec": {}}),
    ('has("spec")', {"spec": {}}),
    (".s | to_entries[] | .key", {"s": {"b": {"n": 2}, "a": {"n": 1}}}),
    (".s | .[] | .n", {"s": {"b": {"n": 2}, "a": {"n": 1}}}),
    ("(.v) | tostring", {"v": 3.0}),
    # // with false, null and errors
    ("(false, null, 1) // 42", None),
    ("(false, null) // 42", None),
    (".a // .b // .c", {"c": 3}),
    ("[.[] // 0]", [None, False, 1]),
    # ? and try on errors
    (".a?", "text"),
    ("[.[] | .a?]", [1, {"a": 2}, "s"]),
    (".[]?", 3),
    ("[.[]?]", {"b": 1, "a": 2}),
    ('try error("x") catch .', None),
    ('[.[] | try tonumber catch "bad"]', ["1", "x", "2.5"]),
    # comparisons across types
    ('[null, false, true, 0, "", [], {}] | [.[] < .[]]', None),
    ('[{"a":2} < {"b":1}, {"a":2} < {"a":1,"b":0}, [1,2] < [1,2,0], "B" < "a"]', None),
    ("[.[] | sort] ", [[3, "a", None, [1], {"x": 1}, True, False]]),
    # tostring of objects and floats
    ("tostring", {"b": [1, 2.5], "a": {"d": None, "c": True}}),
    ("[.[] | tostring]", [1.5, 3.0, -0.5, 100.0, 12]),
    ('"v=\\(.v) o=\\(.o)"', {"v": 2.0, "o": {"z": 1, "y": [3.0]}}),
    ("tojson", {"s": 'quote" back\\ \u007f é'}),
    # add of objects, to_entries order, keys of arrays
    ("add", [{"b": 1}, {"a": 2}, {"b": 3}]),
    ("add", {"y": [1], "x": [2]}),
    ("to_entries", {"b": 1, "a": 2, "c": 0}),
    ("keys", [5, 6, 7]),
    ("keys", {"b": 1, "a": 2}),
    # negative indices, slices of strings and arrays
    (".[-1], .[-4], .[1]", [1, 2, 3]),
    (".[1:], .[:-1], .[-2:], .[5:], .[:10]", [1, 2, 3]),
    (".[1:3], .[-2:]", "hello"),
    # has on arrays and objects
    ("has(0), has(2), has(-1)", [1, 2]),
    ('has("a"), has("z")', {"a": None}),
    # select generator semantics, and/or with several outputs
    ("[.[] | select((true, true))]", [1, 2]),
    ("[.[] | select(. > 1, . > 2)]", [1, 2, 3]),
    ("[(true, false) and (true, false)]", None),
    ("[(false, true) or (true, false)]", None),
    ("[(1, 2) + (10, 20)]", None),
    ('[{a: (1, 2), b: ("x", "y")}]', None),
    ("[.[] as $x | $x * 2]", [1, 2]),
    ("reduce .[] as $x (0; . + $x)", [1, 2, 3]),
    ("[limit(2; .[])], first(.[]), [first(empty)]", [4, 5, 6]),
    ("any(.[]; . > 2), all(.[]; . > 0)", [1, 2, 3]),
    ('map(select(.kind == "Pod") | .name)', [{"kind": "Pod", "name": "p"}, {"kind": "Svc"}]),
    ('with_entries(select(.key | startswith("nvidia")))', {"nvidia.com/gpu": 1, "cpu": 2}),
    ('.metadata.labels["app.kubernetes.io/name"] // "none"', {"metadata": {"labels": {}}}),
    ('(.status.conditions // [])[] | select(.type == "Ready") | .status', {"status": {}}),
    (".spec.replicas // 1 | tostring", {"spec": {"replicas": 3.0}}),
    ("ascii_downcase, ascii_upcase", "MiXed-ÄÖ"),
    ("[.[] | tonumber]", ["1", "1.50", "-3", "1e2"]),
    ("[.[] | length]", [None, -3, "héllo", [1], {"a": 1}]),
    ("unique_by(.a), group_by(.a), min_by(.a), max_by(.a)", [{"a": 1, "i": 0}, {"a": 0}, {"a": 1, "i": 1}]),
    ('"a,b,,c" | split(","), (split(",") | join("-"))', None),
    ('[.[] | ltrimstr("a"), rtrimstr("a")]', ["abca", "a", ""]),
    ('contains({"a": [1]}), inside({"a": [1, 2], "b": 3})', {"a": [1, 2]}),
    ('index("b"), indices("b")', "abcb"),
    ("flatten, flatten(1)", [1, [2, [3, [4]]]]),
    ("[.[] | floor, sqrt]", [4, 2.25]),
    ('@base64, @json, @text, @base64 "x\\(.)"', "hi"),
    ('getpath(["a", 0, "b"]), getpath(["z", "y"])', {"a": [{"b": 7}]}),
    ("[.[] | numbers, strings]", [1, "a", None, True]),
    ('if . then "t" elif . == false then "f" else "n" end', False),
    (". as [$a, $b] | {a: $a, b: $b}", [1, 2]),
    (". as {a: $x, $b} | [$x, $b]", {"a": 1, "b": 2}),
    ("[foreach .[] as $x (0; . + $x; [$x, .])]", [1, 2]),
    ("{} | .a.b.c", None),
    ("(1, 2) as $x | $x + 1", None),
    ('[.[] | tostring | . + "!"]', [None, True, {"b": 1, "a": 0}]),
]


@pytest.mark.parametrize(("expression", "data"), TRICKY, ids=[t[0] for t in TRICKY])
def test_tricky_cases_agree_with_libjq(expression: str, data: Any) -> None:
    from karta.jq.parser import parse

    node = parse(expression)
    fast = outcome_fast(node, data)
    ref = outcome_libjq(render(node, ref=True), data)
    assert fast == ref or fast[0] == ref[0] == "error", f"{fast} != {ref}"


def test_alternative_suppresses_errors_gojq_style() -> None:
    # libjq 1.8 propagates the error; gojq and the fast path treat it as "no value".
    node = A.Binary("//", A.Index(A.Literal("text"), A.Literal("a")), A.Literal(1))
    assert outcome_fast(node, None) == ("ok", ["1"])
    node = A.Binary("//", A.Comma(A.Literal(1), A.Call("error", (A.Literal("x"),))), A.Literal(2))
    assert outcome_fast(node, None) == ("ok", ["1"])
