"""Parser: AST shapes for every construct, precedence, positions, errors, agreement with libjq."""

from __future__ import annotations

import dataclasses

import jq as libjq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karta.errors import JqParseError
from karta.jq import syntax
from karta.jq.parser import parse, parse_cached
from karta.jq.syntax import (
    ArrayCons,
    ArrayPattern,
    Assign,
    Binary,
    Bind,
    Break,
    Call,
    Comma,
    Foreach,
    Format,
    FuncDef,
    If,
    Index,
    Iterate,
    Label,
    Literal,
    ModuleDirective,
    Neg,
    ObjectCons,
    ObjectEntry,
    ObjectPattern,
    ObjectPatternEntry,
    Pipe,
    RecurseAll,
    Reduce,
    Slice,
    StringInterp,
    Try,
    Var,
    VarPattern,
)

DOT = syntax.Identity()


def lit(value: syntax.JSONScalar) -> Literal:
    return Literal(value)


def fld(name: str, target: syntax.Node = DOT) -> Index:
    return Index(target, Literal(name))


def call(name: str, *args: syntax.Node) -> Call:
    return Call(name, tuple(args))


A, B, C = fld("a"), fld("b"), fld("c")

SHAPES: list[tuple[str, syntax.Node]] = [
    # paths and suffixes
    (".", DOT),
    ("..", RecurseAll()),
    (".a", A),
    (".a.b", fld("b", A)),
    ('."a"', A),
    ('.["a"]', A),
    ('.a."b"', fld("b", A)),
    ('.a["b"]', fld("b", A)),
    (".a.[0]", Index(A, lit(0))),
    (".[0]", Index(DOT, lit(0))),
    (".[-1]", Index(DOT, Neg(lit(1)))),
    (".[.a]", Index(DOT, A)),
    (".[1,2]", Index(DOT, Comma(lit(1), lit(2)))),
    (".[]", Iterate(DOT)),
    (".a[]", Iterate(A)),
    (".a.[]", Iterate(A)),
    (".[]?", Try(Iterate(DOT))),
    (".a?", Try(A)),
    (".a?.b", fld("b", Try(A))),
    (".a??", Try(Try(A))),
    (".a[1:2]", Slice(A, lit(1), lit(2))),
    (".a[1:]", Slice(A, lit(1), None)),
    (".a[:2]", Slice(A, None, lit(2))),
    (".[1:]?", Try(Slice(DOT, lit(1), None))),
    (".a .b", fld("b", A)),
    (". [0]", Index(DOT, lit(0))),
    (".. .a", fld("a", RecurseAll())),
    ("..[0]", Index(RecurseAll(), lit(0))),
    ("$x.a", fld("a", Var("x"))),
    ("$x[0]", Index(Var("x"), lit(0))),
    ("$__loc__", Var("__loc__")),
    ("$ENV.HOME", fld("HOME", Var("ENV"))),
    ("(.a).b", fld("b", A)),
    ("(1)?", Try(lit(1))),
    ('"abc"[1:]', Slice(lit("abc"), lit(1), None)),
    ('.@base64 "x"', Index(DOT, lit("x"))),
    # literals
    ("1", lit(1)),
    ("1.5", lit(1.5)),
    ("1e12", lit(1e12)),
    (".5", lit(0.5)),
    ("true", lit(True)),
    ("false", lit(False)),
    ("null", lit(None)),
    ('"a\\u00e9\\n"', lit("aé\n")),
    ("-1", Neg(lit(1))),
    ("--1", Neg(Neg(lit(1)))),
    ("-.a", Neg(A)),
    # strings and formats
    ('"a\\(.b)c"', StringInterp(("a", B, "c"))),
    ('"\\(.a)\\(.b)"', StringInterp((A, B))),
    ('"\\(1, 2)"', StringInterp((Comma(lit(1), lit(2)),))),
    ('@base64 "x\\(.)"', StringInterp(("x", DOT), "base64")),
    ('@json "plain"', lit("plain")),
    ("@base64", Format("base64")),
    ("@base64d", Format("base64d")),
    ('"x\\("y\\(1)")"', StringInterp(("x", StringInterp(("y", lit(1)))))),
    # calls
    ("length", call("length")),
    ("not", call("not")),
    ("empty", call("empty")),
    ("select(.a == 1)", call("select", Binary("==", A, lit(1)))),
    ("limit(3; .[])", call("limit", lit(3), Iterate(DOT))),
    ('sub("a"; "b"; "g")', call("sub", lit("a"), lit("b"), lit("g"))),
    ("f(.a | .b; .c)", call("f", Pipe(A, B), C)),
    ("true(1)", call("true", lit(1))),
    ("mod::f", call("mod::f")),
    # constructors
    ("[]", ArrayCons(None)),
    ("[.a, .b]", ArrayCons(Comma(A, B))),
    ("[.[] | .a]", ArrayCons(Pipe(Iterate(DOT), A))),
    ("{}", ObjectCons(())),
    ("{a: 1}", ObjectCons((ObjectEntry(lit("a"), lit(1)),))),
    ("{a}", ObjectCons((ObjectEntry(lit("a"), A),))),
    ('{"a"}', ObjectCons((ObjectEntry(lit("a"), A),))),
    ("{$x}", ObjectCons((ObjectEntry(lit("x"), Var("x")),))),
    ("{$x: 1}", ObjectCons((ObjectEntry(Var("x"), lit(1)),))),
    ("{$__loc__}", ObjectCons((ObjectEntry(lit("__loc__"), Var("__loc__")),))),
    ('{"a b": 1}', ObjectCons((ObjectEntry(lit("a b"), lit(1)),))),
    ("{(.k): .v}", ObjectCons((ObjectEntry(fld("k"), fld("v")),))),
    ('{"k\\(.x)": 1}', ObjectCons((ObjectEntry(StringInterp(("k", fld("x"))), lit(1)),))),
    (
        '{"k\\(.x)"}',
        ObjectCons((ObjectEntry(StringInterp(("k", fld("x"))), Index(DOT, StringInterp(("k", fld("x"))))),)),
    ),
    ('{@base64 "k": 1}', ObjectCons((ObjectEntry(lit("k"), lit(1)),))),
    ("{if: 1, and}", ObjectCons((ObjectEntry(lit("if"), lit(1)), ObjectEntry(lit("and"), fld("and"))))),
    ("{a: 1,}", ObjectCons((ObjectEntry(lit("a"), lit(1)),))),
    ("{a: .b, c: .d}", ObjectCons((ObjectEntry(lit("a"), B), ObjectEntry(lit("c"), fld("d"))))),
    ("{a: .b | length}", ObjectCons((ObjectEntry(lit("a"), Pipe(B, call("length"))),))),
    (
        "{a: .b // 1, c}",
        ObjectCons((ObjectEntry(lit("a"), Binary("//", B, lit(1))), ObjectEntry(lit("c"), C))),
    ),
    ("{a: 1 + 2}", ObjectCons((ObjectEntry(lit("a"), Binary("+", lit(1), lit(2))),))),
    ("{a: -1}", ObjectCons((ObjectEntry(lit("a"), Neg(lit(1))),))),
    ("{a: (1, 2)}", ObjectCons((ObjectEntry(lit("a"), Comma(lit(1), lit(2))),))),
    ("{a: 1}.a", fld("a", ObjectCons((ObjectEntry(lit("a"), lit(1)),)))),
    # control flow
    ("if .a then .b end", If(A, B)),
    ("if .a then .b else .c end", If(A, B, (), C)),
    ("if .a then 1 elif .b then 2 else 3 end", If(A, lit(1), ((B, lit(2)),), lit(3))),
    ("if .a then 1 elif .b then 2 end", If(A, lit(1), ((B, lit(2)),))),
    ("if . then 1 end.a", fld("a", If(DOT, lit(1)))),
    ("try .a", Try(A)),
    ("try .a catch .b", Try(A, B)),
    ("try error catch .", Try(call("error"), DOT)),
    ("try .a + 1", Binary("+", Try(A), lit(1))),
    ("try -1 catch 2", Try(Neg(lit(1)), lit(2))),
    ("try try 1 catch 2 catch 3", Try(Try(lit(1), lit(2)), lit(3))),
    ("try 1 catch 2 | 3", Pipe(Try(lit(1), lit(2)), lit(3))),
    (
        "reduce .[] as $x (0; . + $x)",
        Reduce(Iterate(DOT), VarPattern("x"), lit(0), Binary("+", DOT, Var("x"))),
    ),
    (
        "reduce .[] as [$a, $b] (0; .)",
        Reduce(Iterate(DOT), ArrayPattern((VarPattern("a"), VarPattern("b"))), lit(0), DOT),
    ),
    ("reduce .[] as $x (0; .)[0]", Index(Reduce(Iterate(DOT), VarPattern("x"), lit(0), DOT), lit(0))),
    (
        "foreach .[] as $x (0; . + 1)",
        Foreach(Iterate(DOT), VarPattern("x"), lit(0), Binary("+", DOT, lit(1))),
    ),
    (
        "foreach .[] as $x (0; . + 1; [$x, .])",
        Foreach(
            Iterate(DOT), VarPattern("x"), lit(0), Binary("+", DOT, lit(1)), ArrayCons(Comma(Var("x"), DOT))
        ),
    ),
    ("label $out | 1, break $out", Label("out", Comma(lit(1), Break("out")))),
    # bindings and destructuring
    (". as $x | $x", Bind(DOT, (VarPattern("x"),), Var("x"))),
    (". as $x | $x | .a", Bind(DOT, (VarPattern("x"),), Pipe(Var("x"), A))),
    (".a as $x | .b as $y | $x", Bind(A, (VarPattern("x"),), Bind(B, (VarPattern("y"),), Var("x")))),
    ("1 + . as $x | $x", Binary("+", lit(1), Bind(DOT, (VarPattern("x"),), Var("x")))),
    ("1, . as $x | $x, 2", Comma(lit(1), Bind(DOT, (VarPattern("x"),), Comma(Var("x"), lit(2))))),
    ("-1 as $x | $x", Neg(Bind(lit(1), (VarPattern("x"),), Var("x")))),
    ("try 1 as $x | $x", Bind(Try(lit(1)), (VarPattern("x"),), Var("x"))),
    (
        ". as [$a, {b: $c}] ?// $a | $a",
        Bind(
            DOT,
            (
                ArrayPattern(
                    (VarPattern("a"), ObjectPattern((ObjectPatternEntry(lit("b"), None, VarPattern("c")),)))
                ),
                VarPattern("a"),
            ),
            Var("a"),
        ),
    ),
    (
        '. as {$a, $b: [$c], "d": $d, (.k): $e, if: $f} | 1',
        Bind(
            DOT,
            (
                ObjectPattern(
                    (
                        ObjectPatternEntry(None, "a", None),
                        ObjectPatternEntry(None, "b", ArrayPattern((VarPattern("c"),))),
                        ObjectPatternEntry(lit("d"), None, VarPattern("d")),
                        ObjectPatternEntry(fld("k"), None, VarPattern("e")),
                        ObjectPatternEntry(lit("if"), None, VarPattern("f")),
                    )
                ),
            ),
            lit(1),
        ),
    ),
    (
        '. as {"k\\(1)": $x} | $x',
        Bind(
            DOT,
            (ObjectPattern((ObjectPatternEntry(StringInterp(("k", lit(1))), None, VarPattern("x")),)),),
            Var("x"),
        ),
    ),
    (". as $end | $end", Bind(DOT, (VarPattern("end"),), Var("end"))),
    # functions
    ("def f: .a; f", FuncDef("f", (), A, call("f"))),
    ("def f(g): g; f(.a)", FuncDef("f", ("g",), call("g"), call("f", A))),
    (
        "def f($a; b): $a + b; f(1; 2)",
        FuncDef("f", ("$a", "b"), Binary("+", Var("a"), call("b")), call("f", lit(1), lit(2))),
    ),
    (
        "def f: 1; def g: 2; f + g",
        FuncDef("f", (), lit(1), FuncDef("g", (), lit(2), Binary("+", call("f"), call("g")))),
    ),
    ("def f: def g: 3; g; f", FuncDef("f", (), FuncDef("g", (), lit(3), call("g")), call("f"))),
    ("def f: 1; f | .a", FuncDef("f", (), lit(1), Pipe(call("f"), A))),
    ("1, def f: 1; f", Comma(lit(1), FuncDef("f", (), lit(1), call("f")))),
    ("(def f: 1; f) + 1", Binary("+", FuncDef("f", (), lit(1), call("f")), lit(1))),
    # modules
    ('import "a" as a; .', ModuleDirective("import", "a", DOT)),
    ('import "a" as $a; .', ModuleDirective("import", "a", DOT)),
    ('include "b" {search: "."}; .', ModuleDirective("include", "b", DOT)),
    ('module {x: 1}; import "a" as a; .', ModuleDirective("module", "", ModuleDirective("import", "a", DOT))),
    # comments and whitespace
    (".a # the a field\n| .b", Pipe(A, B)),
    ("\n  .a\n", A),
]


@pytest.mark.parametrize(("expression", "expected"), SHAPES, ids=[e for e, _ in SHAPES])
def test_shapes(expression: str, expected: syntax.Node) -> None:
    assert parse(expression) == expected


PRECEDENCE: list[tuple[str, syntax.Node]] = [
    (".a | .b | .c", Pipe(A, Pipe(B, C))),
    (".a, .b | .c", Pipe(Comma(A, B), C)),
    (".a | .b, .c", Pipe(A, Comma(B, C))),
    (".a, .b, .c", Comma(Comma(A, B), C)),
    (".a // .b // .c", Binary("//", A, Binary("//", B, C))),
    (".a // .b, .c", Comma(Binary("//", A, B), C)),
    (".a = .b // .c", Binary("//", Assign("=", A, B), C)),  # as jq: '//' binds looser than '='
    (".a // .b = .c", Binary("//", A, Assign("=", B, C))),
    (".a |= . + 1", Assign("|=", A, Binary("+", DOT, lit(1)))),
    (".a = 1 | .b", Pipe(Assign("=", A, lit(1)), B)),
    (".a or .b and .c", Binary("or", A, Binary("and", B, C))),
    (".a and .b or .c", Binary("or", Binary("and", A, B), C)),
    (".a == 1 and .b", Binary("and", Binary("==", A, lit(1)), B)),
    ("1 + 2 == 3", Binary("==", Binary("+", lit(1), lit(2)), lit(3))),
    ("1 + 2 * 3", Binary("+", lit(1), Binary("*", lit(2), lit(3)))),
    ("1 * 2 + 3", Binary("+", Binary("*", lit(1), lit(2)), lit(3))),
    ("1 - 2 - 3", Binary("-", Binary("-", lit(1), lit(2)), lit(3))),
    ("8 / 4 / 2", Binary("/", Binary("/", lit(8), lit(4)), lit(2))),
    ("7 % 3 * 2", Binary("*", Binary("%", lit(7), lit(3)), lit(2))),
    ("-1 + 2", Binary("+", Neg(lit(1)), lit(2))),
    ("-1 * 2", Neg(Binary("*", lit(1), lit(2)))),
    ("1 * -2", Binary("*", lit(1), Neg(lit(2)))),
    (".a-1", Binary("-", A, lit(1))),
    (".a -1", Binary("-", A, lit(1))),
    ("1 + .a?", Binary("+", lit(1), Try(A))),
    (".a // 1 | tostring", Pipe(Binary("//", A, lit(1)), call("tostring"))),
    (
        "(.spec.replicas // 1) * (.spec.parallelism // 1)",
        Binary(
            "*",
            Binary("//", fld("replicas", fld("spec")), lit(1)),
            Binary("//", fld("parallelism", fld("spec")), lit(1)),
        ),
    ),
    (".a < .b", Binary("<", A, B)),
    (".a != .b", Binary("!=", A, B)),
    (".a >= .b", Binary(">=", A, B)),
    (".a <= .b", Binary("<=", A, B)),
    (".a > .b", Binary(">", A, B)),
    (".a //= 1", Assign("//=", A, lit(1))),
    (".a += 1", Assign("+=", A, lit(1))),
    (".a -= 1", Assign("-=", A, lit(1))),
    (".a *= 1", Assign("*=", A, lit(1))),
    (".a /= 1", Assign("/=", A, lit(1))),
    (".a %= 1", Assign("%=", A, lit(1))),
]


@pytest.mark.parametrize(("expression", "expected"), PRECEDENCE, ids=[e for e, _ in PRECEDENCE])
def test_precedence(expression: str, expected: syntax.Node) -> None:
    assert parse(expression) == expected


def _positions(node: object, out: list[tuple[str, int]]) -> None:
    if isinstance(node, syntax.Node):
        out.append((type(node).__name__, node.pos))
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            _positions(getattr(node, f.name), out)
    elif isinstance(node, tuple):
        for item in node:
            _positions(item, out)


def test_positions_point_at_the_first_token() -> None:
    expr = '.a | [$x, "s\\(.b)"] // f(1; -2)'
    out: list[tuple[str, int]] = []
    _positions(parse(expr), out)
    assert out == [
        ("Pipe", 0),
        ("Index", 0),
        ("Identity", 0),
        ("Literal", 0),
        ("Binary", 5),
        ("ArrayCons", 5),
        ("Comma", 6),
        ("Var", 6),
        ("StringInterp", 10),
        ("Index", 14),
        ("Identity", 14),
        ("Literal", 14),
        ("Call", 23),
        ("Literal", 25),
        ("Neg", 28),
        ("Literal", 29),
    ]


def test_every_node_has_a_position_inside_the_text() -> None:
    expr = (
        'def f($a; g): reduce .[] as [$x] ($a; . + g); . as {$k, "m": $m} ?// $k '
        "| label $out | if .a then try f(1; .b) catch empty "
        "elif .c then .d[1:] else {k: $k, (.e): [.f[]?]} end"
    )
    out: list[tuple[str, int]] = []
    _positions(parse(expr), out)
    assert len(out) > 30
    assert all(0 <= pos < len(expr) for _, pos in out)


ERRORS: list[tuple[str, int, int, str]] = [
    (".status.phase ==", 1, 17, "unexpected end of expression"),
    (".a |", 1, 5, "unexpected end of expression"),
    (".a | | .b", 1, 6, "unexpected '|'"),
    ("1 < 2 < 3", 1, 7, "unexpected '<'"),
    (".a = .b = 1", 1, 9, "unexpected '='"),
    (".a == .b == .c", 1, 10, "unexpected '=='"),
    ("[1,]", 1, 4, "unexpected ']'"),
    ("{a: 1 b: 2}", 1, 7, "expected ',' or '}'"),
    ("{1: 2}", 1, 2, "expected an object key"),
    ("{a: 1, 2}", 1, 8, "expected an object key"),
    ("{a: . as $x | $x}", 1, 7, "unexpected 'as'"),
    ("{a: def f: 1; f}", 1, 5, "unexpected 'def'"),
    ("f()", 1, 3, "unexpected ')'"),
    ("if . then 1", 1, 12, "expected 'elif', 'else' or 'end'"),
    ("if . 1 end", 1, 6, "expected 'then'"),
    ("reduce . as $x (0)", 1, 18, "expected ';'"),
    ("foreach .[] as $x (0;1;2;3)", 1, 25, "expected ')'"),
    (". as [] | 1", 1, 7, "expected a pattern"),
    (". as {} | 1", 1, 7, "expected an object pattern key"),
    (". as $x", 1, 8, "expected '|'"),
    (". as $__loc__ | 1", 1, 6, "expected a pattern"),
    ("def f: 1;", 1, 10, "top-level program not given"),
    ("def if: 1; 1", 1, 5, "expected a function name"),
    ("def f(): 1; 2", 1, 7, "expected a parameter name"),
    ("try .a + 1 catch 2", 1, 12, "unexpected 'catch'"),
    ("1 + def f: 1; f", 1, 5, "unexpected 'def'"),
    ("..a", 1, 3, "unexpected 'a'"),
    (".[]. a", 1, 6, "expected a field name, a string or '['"),
    (".[1:2:3]", 1, 6, "expected ']'"),
    (".[:]", 1, 4, "unexpected ']'"),
    (".a.[1:]", 1, 6, "expected ']'"),
    ("break", 1, 6, "expected a label name"),
    ("and", 1, 1, "unexpected 'and'"),
    (".a?//1", 1, 3, "unexpected '?//'"),
    ('"\\(1;2)"', 1, 5, "unexpected ';'"),
    ('"abc', 1, 1, "unterminated string"),
    ('"\\q"', 1, 2, "invalid escape"),
    ("", 1, 1, "empty expression"),
    ("   # nothing", 1, 13, "empty expression"),
    (".a\n| .b\n| ==", 3, 3, "unexpected '=='"),
    ('import "a"; .', 1, 11, "expected 'as'"),
    (". as [$a] ?// [$b] | 1 | reduce . as $a ?// $b (0; .)", 1, 38, "'?//' alternatives are not supported"),
]


@pytest.mark.parametrize(("expression", "line", "column", "detail"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(expression: str, line: int, column: int, detail: str) -> None:
    with pytest.raises(JqParseError) as info:
        parse(expression)
    err = info.value
    assert str(err).startswith(f"failed to parse JQ expression '{expression}': ")
    assert detail in str(err)
    assert str(err).endswith(f"(line {line}, column {column})")
    assert (err.line, err.column) == (line, column)
    assert err.expression == expression


def test_deep_nesting_is_a_parse_error_not_a_crash() -> None:
    with pytest.raises(JqParseError, match="nested too deeply"):
        parse("[" * 5000 + "]" * 5000)


def test_parse_cached_returns_the_same_tree() -> None:
    first = parse_cached(".spec.replicas // 1")
    assert parse_cached(".spec.replicas // 1") is first
    assert first == parse(".spec.replicas // 1")


# --- agreement with libjq ------------------------------------------------------------------------

# Every expression libjq compiles (only defined names are used, so compile and parse agree).
ACCEPTED = [
    ".end",
    "{if:1}",
    "$__loc__",
    ". as $end|1",
    "try 1 catch 2 + 3",
    "(1)?.a",
    ".a.[0]",
    "if . then 1 end",
    "reduce .[] as $x (0;.)|.",
    '{"a\\(1)"}',
    "..[0]",
    "..?",
    ".[]?",
    "1.",
    "{a: 1 + 2}",
    "{a: .b|.c}",
    "{a: -1}",
    "{(1,2):3}",
    '.a."b"',
    "label $f | 1",
    "[.[]|{a}]",
    '@base64 "x\\(.)"',
    ".a[1:]",
    ".a[:2]",
    "-1?",
    "1 + . as $x | $x",
    "if . then 1 elif 2 then 3 end",
    "try try 1 catch 2 catch 3",
    "{$__loc__}",
    "{a:1,}",
    ".[1,2]",
    ". as [$a, {b: $c}] ?// $a | 1",
    "foreach .[] as $x (0; .+1)",
    ".foo?.bar",
    '"\\ud83d\\ude00"',
    ".a and .b or not",
    ". as {$a: [$b]} | 1",
    ".. == 1",
    ".[-1]",
    ".a -1",
    ".e1",
    "$ENV.PATH",
    "@base64d",
    '{"a":1 | 2}',
    "{a: 1, b: 2 , c}",
    "{a: .b = 1}",
    "try (1) catch 2 | 3",
    "try 1 catch 2 as $x | $x",
    "try -1 catch 2",
    "1 + try 2",
    ".a? //1",
    "if . then 1 end.a",
    "reduce .[] as $x (0;.)[0]",
    "--1",
    '. as {"a\\(1)": $x} | 1',
    ". as {if: $x} | 1",
    ". as {$if} | 1",
    "module {a: 1}; .",
    '"\\("\\(1)")"',
    ".. .a",
    "1 // 2 = 3",
    "1,2|3,4",
    "{and}",
    "1, def f: 1; f",
    "1, label $x | 1",
    ". as $x | def f: 1; f",
    "if def f: 1; f then 1 end",
    '{@base64 "x": 1}',
    '. as {@base64 "x": $a} | 1',
    ".?",
    ".a??",
    ".[]??",
    "def f($a; b): $a + b; f(1;2)",
    "label $out | foreach .[] as $x (0; .+1; if . > 3 then ., break $out else . end)",
    "1 as $x | 2 as [$y] ?// $y | 1",
    ".a |= . + 1, 2",
    "1 or 2 and 3",
    '. "a"',
    ".a .b",
    ".[]. [0]",
    "try .a catch .b.c",
    "[limit(3; .[])]",
    "first(.[]), last(.[])",
    '@json "x\\(.)y"',
    '.metadata.labels["app.kubernetes.io/name"]',
    '{"a b": 1}."a b"',
    '. @sh "a\\(.)"',
    '.spec.template.spec.containers[] | select(.name == "main") | .image',
    "(.spec.replicas // 1) * (.spec.parallelism // 1)",
    "[.spec.replicatedJobs[] | {name, replicas: .replicas}]",
]

# Every expression libjq rejects with a syntax error.
REJECTED = [
    ".a?//1",
    "$ __loc__",
    "$ x",
    "def f: 1;",
    "{@base64: 1}",
    "..a",
    "f()",
    "1 < 2 < 3",
    ".a = .b = 1",
    "{1:2}",
    '"\\q"',
    ".[:]",
    "[1,]",
    ".a | try . as $x | $x catch 1",
    '"\\(1;2)"',
    "{a: . as $x | $x}",
    "{a: 1, 2}",
    "{a: def f: 1; f}",
    "try 1 + 2 catch 3",
    "try def f: 1; f",
    "try label $x | 1",
    ". as [] | 1",
    ". as {} | 1",
    "{$__loc__: 1}",
    "def if: 1; 1",
    ".[]. a",
    ".[1:2:3]",
    "not not",
    ".a == .b == .c",
    ".x += 1 = 2",
    "and",
    ". as $__loc__ | 1",
    "1 + def f: 1; f",
    "1 + label $x | 1",
    "-def f: 1; f",
    ".a = def f: 1; f",
    "{a: 1 | . as $x | $x}",
    "{a: label $x | 1}",
    ".[]?//1",
    "foreach .[] as $x (0;1;2;3)",
    "{a: 1 b: 2}",
    "{,}",
    "{a:1,,}",
    '@base64 "a" "b"',
    "def f(): 1; 2",
    "def f(a;): 1; 2",
    "?",
    "1 ?? 2",
    "break",
    ".a , break",
    "try break",
    ". . [1:]",
    ".a.[1:2]",
    '"abc',
    '"\\(1',
    ".a[",
    "(1",
    "{a:1",
    "[1",
    "if . then 1",
    "reduce . as $x (0)",
    ".a,",
    ",.a",
    "1 +",
    "%",
    ".a ..",
    "$",
    "@",
    "",
    "# only a comment",
]


def _libjq_accepts(expression: str) -> bool:
    try:
        libjq.compile(expression)
    except ValueError:
        return False
    return True


def _we_accept(expression: str) -> bool:
    try:
        parse(expression)
    except JqParseError:
        return False
    return True


@pytest.mark.parametrize("expression", ACCEPTED)
def test_accepted_like_libjq(expression: str) -> None:
    assert _libjq_accepts(expression)
    assert _we_accept(expression)


@pytest.mark.parametrize("expression", REJECTED)
def test_rejected_like_libjq(expression: str) -> None:
    assert not _libjq_accepts(expression)
    assert not _we_accept(expression)


def test_lone_high_surrogate_follows_gojq() -> None:
    # libjq rejects "\ud83d"; gojq (the original's engine) decodes it as U+FFFD, and so do we.
    assert parse('"\\ud83d"') == lit("\ufffd")


# --- property tests -------------------------------------------------------------------------------

_TOKENS = [
    ".",
    ".a",
    "..",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    "|",
    ",",
    "//",
    "?",
    "?//",
    "=",
    "|=",
    "+",
    "-",
    "*",
    "==",
    "<",
    "and",
    "or",
    "1",
    '"s"',
    '"x\\(.)y"',
    "$x",
    "as",
    "if",
    "then",
    "else",
    "elif",
    "end",
    "try",
    "catch",
    "reduce",
    "foreach",
    "def",
    "f",
    ":",
    ";",
    "label",
    "break",
    "length",
    "@base64",
    "$__loc__",
    "true",
    ".[]",
    '.["k"]',
    "[0]",
    "[1:]",
    "#c\n",
    '"\\',
    "\\(",
    "é",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=0, max_size=12), st.sampled_from(["", " "]))
def test_token_soup_only_raises_parse_errors(tokens: list[str], sep: str) -> None:
    expression = sep.join(tokens)
    try:
        node = parse(expression)
    except JqParseError as exc:
        assert exc.line >= 1
        assert exc.column >= 1
    else:
        assert isinstance(node, syntax.Node)


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.sampled_from(
        [".", ".a", ".b.c", ".[0]", ".[]?", "1", '"s"', "null", "$__loc__", "length", "empty"]
    )

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(
            inner, st.sampled_from(["|", ",", "//", "+", "-", "*", "==", "<", "and", "or"]), inner
        )
        return st.one_of(
            binary.map(lambda t: f"{t[0]} {t[1]} {t[2]}" if t[1] in "|,//" else f"({t[0]}) {t[1]} ({t[2]})"),
            inner.map(lambda e: f"({e})"),
            inner.map(lambda e: f"[{e}]"),
            inner.map(lambda e: f"{{k: ({e})}}"),
            inner.map(lambda e: f"({e})?"),
            inner.map(lambda e: f'"\\({e})"'),
            inner.map(lambda e: f"select({e})"),
            inner.map(lambda e: f"-({e})"),
            st.tuples(inner, inner).map(lambda t: f"if {t[0]} then {t[1]} end"),
            st.tuples(inner, inner).map(lambda t: f"try ({t[0]}) catch ({t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"(({t[0]}) as $v | {t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"reduce ({t[0]}) as $v (0; {t[1]})"),
            inner.map(lambda e: f"(def g: {e}; g)"),
        )

    return st.recursive(leaves, extend, max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(_expressions())
def test_generated_valid_expressions_parse_like_libjq(expression: str) -> None:
    assert _libjq_accepts(expression), expression
    assert isinstance(parse(expression), syntax.Node)
