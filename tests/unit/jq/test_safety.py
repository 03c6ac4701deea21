"""Safety validator, assignability, boundedness and the compile check over the whole syntax tree."""

from __future__ import annotations

import jq as libjq
import pytest

from karta.jq.builtin_table import BUILTIN_ARITIES, is_builtin
from karta.jq.parser import parse
from karta.jq.safety import (
    SafetyIssue,
    assignability_reason,
    check_safety,
    is_assignable,
    is_bounded,
    recursive_functions,
)
from karta.jq.scope_check import compile_check

DEL = "del function is not allowed"
DOTDOT = "recursive descent operator '..' is not allowed"


def reasons(expression: str) -> list[str]:
    return [i.reason for i in check_safety(parse(expression))]


def errors(expression: str) -> list[str]:
    return [i.reason for i in check_safety(parse(expression)) if i.severity == "error"]


def warnings(expression: str) -> list[str]:
    return [i.reason for i in check_safety(parse(expression)) if i.severity == "warning"]


# --- section 20.13 (C12) and 14.2 ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("del(.spec)", DEL),
        ("(.a | del(.b))", DEL),
        (".. | .spec?", DOTDOT),
        ("[.. | .spec?]", DOTDOT),
        (".spec.x |= 1", "modifying operator '|=' is not allowed"),
    ],
)
def test_conformance_c12(expression: str, reason: str) -> None:
    assert errors(expression) == [reason]


@pytest.mark.parametrize("name", ["range", "paths", "recurse", "walk", "repeat"])
@pytest.mark.parametrize("args", ["", "(.)", "(1; 2)", "(1; 2; 3)"])
def test_excessive_output_functions(name: str, args: str) -> None:
    assert errors(f"{name}{args}") == [f"function '{name}' may produce excessive output and is not allowed"]


@pytest.mark.parametrize("name", ["recurse_down", "leaf_paths", "tostream", "combinations"])
def test_functions_expanding_to_generators(name: str) -> None:
    assert errors(name) == [f"function '{name}' may produce excessive output and is not allowed"]


@pytest.mark.parametrize("op", ["=", "|=", "+=", "-=", "*=", "/=", "%=", "//="])
def test_modifying_operators(op: str) -> None:
    assert errors(f".a {op} 1") == [f"modifying operator '{op}' is not allowed"]


@pytest.mark.parametrize(
    "name",
    [
        "halt",
        "halt_error",
        "input_filename",
        "input_line_number",
        "debug",
        "stderr",
        "get_search_list",
        "get_prog_origin",
        "get_jq_origin",
        "modulemeta",
    ],
)
def test_process_functions(name: str) -> None:
    assert errors(name) == [
        f"function '{name}' is not allowed: definitions must not affect or read the evaluating process"
    ]


def test_process_function_with_arguments() -> None:
    assert errors("halt_error(1)") == [
        "function 'halt_error' is not allowed: definitions must not affect or read the evaluating process"
    ]
    assert errors('debug("x")') == [
        "function 'debug' is not allowed: definitions must not affect or read the evaluating process"
    ]


def test_loc_variable() -> None:
    assert errors("$__loc__") == ["variable '$__loc__' is not allowed"]
    assert errors("{$__loc__}") == ["variable '$__loc__' is not allowed"]


@pytest.mark.parametrize(
    "expression", ['import "a" as a; .', 'include "a"; .', "module {a: 1}; .", 'import "a" as $d; .']
)
def test_module_directives(expression: str) -> None:
    assert errors(expression) == ["import and include are not allowed"]


@pytest.mark.parametrize(
    ("expression", "names"),
    [
        ("def f: f; f", ["f"]),
        ("def f: 1 + f; f", ["f"]),
        ("def f(x): f(x); 1", ["f"]),
        ("def f: def g: f; g; f", ["f", "g"]),
        ("def f: 1; def g: h; def h: g; 1", []),  # h is not visible in g: a compile error, no recursion
        ("def g(x): x; def h: g(h); h", ["h"]),
        ("def f: 1; def f: f; f", ["f"]),  # a def is visible in its own body: 'f' is itself
    ],
)
def test_recursive_functions(expression: str, names: list[str]) -> None:
    found = [f.name for f in recursive_functions(parse(expression))]
    assert found == names
    assert errors(expression) == [f"recursive function '{n}' is not allowed" for n in names]


@pytest.mark.parametrize(
    "expression",
    [
        "def f: 1; f + f",
        "def f: def g: f; 1; f",  # g would recurse through f, but nothing calls g
        "def f(f): f; f(1)",  # the parameter shadows the function
        "def f: 1; def g: f; g",
        "def map(f): [.[] | f]; map(.a)",
    ],
)
def test_non_recursive_functions(expression: str) -> None:
    assert recursive_functions(parse(expression)) == []
    assert errors(expression) == []


def test_warnings() -> None:
    assert check_safety(parse("env.HOME")) == [
        SafetyIssue("warning", "'env' makes the result depend on the evaluating process")
    ]
    assert check_safety(parse("$ENV.HOME")) == [
        SafetyIssue("warning", "'$ENV' makes the result depend on the evaluating process")
    ]
    # issue 2: input/inputs are rejected, not only warned about
    assert warnings("input | .a") == []
    assert len(errors("input, inputs")) == 2
    assert warnings("until(. > 3; . + 1)") == ["function 'until' may not terminate"]
    assert warnings("[while(. < 3; . + 1)]") == ["function 'while' may not terminate"]
    assert errors("until(. > 3; . + 1)") == []


@pytest.mark.parametrize(
    "expression",
    [
        ".spec.replicas // 1",
        ".spec.template",
        '.metadata.labels["app.kubernetes.io/name"]',
        "[.spec.replicatedJobs[] | {name, replicas: (.replicas * .template.spec.parallelism)}]",
        '.x as $v | {a: $v} | setpath(["b"]; 1) | getpath(["a"])',
        "limit(2; .[])",
        "if .a then .b else .c end | tostring",
        "try .a catch null",
        "reduce .[] as $x (0; . + $x)",
        "label $out | .[] | if . then ., break $out else empty end",
        '"\\(.a)-\\(.b)" | ascii_downcase',
    ],
)
def test_clean_expressions(expression: str) -> None:
    assert check_safety(parse(expression)) == []


# Every construct, nesting a forbidden call somewhere the original validator did not look (R9).
NESTED = [
    "(X)",
    "[X]",
    "{a: X}",
    "{(X): 1}",
    '{"k\\(X)": 1}',
    '"s\\(X)"',
    '@base64 "s\\(X)"',
    "if X then 1 end",
    "if . then X end",
    "if . then 1 elif X then 2 end",
    "if . then 1 elif . then X end",
    "if . then 1 else X end",
    "reduce X as $x (0; .)",
    "reduce .[] as $x (X; .)",
    "reduce .[] as $x (0; X)",
    "foreach X as $x (0; .)",
    "foreach .[] as $x (X; .)",
    "foreach .[] as $x (0; X)",
    "foreach .[] as $x (0; .; X)",
    "try X",
    "try . catch X",
    "X?",
    "X as $x | .",
    ". as $x | X",
    ". as {(X): $v} | .",
    ". as [$a] ?// {(X): $a} | .",
    "def f: X; 1",
    "def f: 1; X",
    "label $l | X",
    ".[X]",
    ".a[X:]",
    ".a[:X]",
    "X[0]",
    "X.a",
    "X[]",
    "-X",
    "X + 1",
    "1 // X",
    "X, 1",
    ". | X",
    "select(X)",
    "limit(1; X)",
    "X and true",
    "X == 1",
]


@pytest.mark.parametrize("template", NESTED)
@pytest.mark.parametrize(
    ("forbidden", "reason"),
    [
        ("del(.b)", DEL),
        ("..", DOTDOT),
        ("(.a = 1)", "modifying operator '=' is not allowed"),
        ("range(3)", "function 'range' may produce excessive output and is not allowed"),
        (
            "input_filename",
            "function 'input_filename' is not allowed: definitions must not affect or read the "
            "evaluating process",
        ),
    ],
)
def test_forbidden_constructs_are_found_anywhere(template: str, forbidden: str, reason: str) -> None:
    expression = template.replace("X", forbidden)
    assert reason in errors(expression), expression


def test_order_is_tree_walk_order_without_duplicates() -> None:
    assert reasons("[.. , del(.a), range(1), del(.b), $ENV, (.a |= 1)]") == [
        DOTDOT,
        DEL,
        "function 'range' may produce excessive output and is not allowed",
        "'$ENV' makes the result depend on the evaluating process",
        "modifying operator '|=' is not allowed",
    ]


def test_shadowed_builtins_are_still_flagged() -> None:
    # documented choice: names are flagged regardless of user definitions
    assert errors("def del(f): 1; del(.a)") == [DEL]


# --- assignability (9.5, R6, J9, J10, J15) ---------------------------------------------------------

ASSIGNABLE = [
    ".",
    ".a.b.c",
    ".primary // .fallback",
    ".items[].v",
    '.["x"]',
    ".[0]",
    ".a[1:2]",
    ".a?",
    ".a[]?",
    ".a | .b",
    ".a, .b",
    "select(.x == 1) | .a",
    '.spec.containers[] | select(.name == "main")',
    "if .c then .a else .b end",
    "if .c then .a end",
    "if .c then .a elif .d then .b else .e end",
    "empty",
    "first(.a, .b)",
    "limit(1; .a[])",
    'getpath(["a", "b"])',
    "recurse",
    "..",
    ".[.k]",
    ". as $x | .a",
    "try .a",
    "try .a catch empty",
    "label $f | .a",
    "def f: .a; f | .b",
    "def f(g): g | .b; f(.a)",
    ".spec.template // .spec.jobTemplate.spec.template",
    "(.a // .b) | .c",
    "objects",
    "arrays | .[0]",
    "first",
    "last",
    "nth(1)",
]

NOT_ASSIGNABLE = [
    ("{a: .x}", "array or object construction is not a path"),
    ("{requests: .spec.resources}", "array or object construction is not a path"),
    ("[.a]", "array or object construction is not a path"),
    (".x // 1", "a literal is a value, not a path"),
    ('.x // "0"', "a literal is a value, not a path"),
    ("1", "a literal is a value, not a path"),
    ("null", "a literal is a value, not a path"),
    ("$x", "a variable is not a path of the input"),
    (". as $x | $x | .a", "a variable is not a path of the input"),
    (".a | tonumber", "'tonumber' computes a value, not a path"),
    (".a | tostring", "'tostring' computes a value, not a path"),
    (".a | length", "'length' computes a value, not a path"),
    ("keys", "'keys' computes a value, not a path"),
    (".a + 1", "the result of '+' is a computed value, not a path"),
    (".a * .b", "the result of '*' is a computed value, not a path"),
    (".a == 1", "the result of '==' is a computed value, not a path"),
    (".a and .b", "the result of 'and' is a computed value, not a path"),
    ("-.a", "arithmetic is a computed value, not a path"),
    ('"\\(.a)"', "a string is a value, not a path"),
    ("@base64", "a string is a value, not a path"),
    ("if .c then 1 else .a end", "a literal is a value, not a path"),
    ("try .a catch .b", "a catch handler's result is not a path"),
    ("reduce .[] as $x (.; .a)", "reduce and foreach results are not paths"),
    (". as [$a] | .b", "destructuring bindings cannot be used in a path"),
    (".a |= 1", "the result of '|=' is not a path"),
    ("def f($v): v; f(.a)", "'$v' is a value, not a path"),
    ("def f: f; f", "the expression is too deeply nested (or recursive) to check"),
    ("last(.a, .b)", "'last' computes a value, not a path"),
    ("$__loc__", "a variable is not a path of the input"),
]


@pytest.mark.parametrize("expression", ASSIGNABLE)
def test_assignable(expression: str) -> None:
    node = parse(expression)
    assert is_assignable(node)
    assert assignability_reason(node) is None


@pytest.mark.parametrize(("expression", "reason"), NOT_ASSIGNABLE)
def test_not_assignable(expression: str, reason: str) -> None:
    node = parse(expression)
    assert not is_assignable(node)
    assert assignability_reason(node) == reason


_SAMPLE = {"a": {"b": {"c": 1}}, "b": [1, 2], "c": True, "d": None, "e": "s", "k": "a", "x": 1}
_SAMPLE.update({"items": [{"v": 0}], "primary": 2, "fallback": 1, "spec": {"containers": [{"name": "main"}]}})


# (the sample is an object: leave out the expressions that index it by number)
@pytest.mark.parametrize(
    "expression",
    [e for e in ASSIGNABLE if e not in ("first", "last", "nth(1)", "arrays | .[0]", ".[0]", ".a[1:2]")],
)
def test_assignable_expressions_are_accepted_by_libjq_path(expression: str) -> None:
    libjq.compile(f"[path({expression})]").input_value(_SAMPLE).all()


@pytest.mark.parametrize(
    "expression",
    [
        "{a: .x}",
        "[.a]",
        "1",
        "$__loc__",
        ".a | tostring",
        ".a + 1",
        '"\\(.a)"',
        'try error("x") catch .b',
        "last(.a, .c)",
    ],
)
def test_not_assignable_expressions_are_refused_by_libjq_path(expression: str) -> None:
    with pytest.raises(ValueError, match="Invalid path expression"):
        libjq.compile(f"[path({expression})]").input_value({"a": 1, "c": 2, "e": 3}).all()


# --- boundedness ---------------------------------------------------------------------------------

BOUNDED = [
    ".spec.replicas // 1",
    ".a | to_entries[] | .key",
    "[.x[] | select(.y == 1)] | length",
    ".a * .b",
    "(.spec.replicas // 1) * (.spec.parallelism // 1)",
    "2 * 3",
    "{} * .a",
    "limit(3; .[])",
    "first(.[])",
    "reduce .[] as $x (0; . + $x)",
    "foreach .[] as $x (0; . + 1; [$x, .])",
    "def f: .a; f | f",
    "label $l | .[] | ., break $l",
    'getpath(["a"]) | setpath(["b"]; 1) | delpaths([["a"]])',
    "tojson | fromjson",
    "@base64d",
    'split(",")',
    "$__loc__",
    'try error("x") catch .',
    ".a |= . + 1",
    '[.[] | tostring] | join(",")',
]

UNBOUNDED = [
    "def f: f; f",
    "def f: 1 + f; f",
    "def f: def g: f; g; f",
    "last(range(1e12))",
    "[repeat(1)]",
    "limit(3; repeat(1))",
    "..",
    "[paths]",
    "walk(.)",
    "recurse(.[])",
    "until(. > 3; . + 1)",
    "[while(true; .)]",
    "env",
    "$ENV.PATH",
    "input",
    "[inputs]",
    "input_line_number",
    '"x" * 1000000000',
    '.n * "abc"',
    '"\\(.a)" * .n',
    'test("a+")',
    'match("(a+)+$")',
    'capture("(?<x>a)")',
    'scan("a")',
    'split(","; null)',
    'splits(",")',
    'sub("a"; "b")',
    'gsub("a"; "b")',
    "[combinations]",
    'import "a" as a; .',
    "{a: [range(3)]}",
]


@pytest.mark.parametrize("expression", BOUNDED)
def test_bounded(expression: str) -> None:
    assert is_bounded(parse(expression))


@pytest.mark.parametrize("expression", UNBOUNDED)
def test_unbounded(expression: str) -> None:
    assert not is_bounded(parse(expression))


# --- compile check -------------------------------------------------------------------------------

COMPILE = [
    ("foo", "foo/0 is not defined"),
    ("foo(1)", "foo/1 is not defined"),
    ("length(1)", "length/1 is not defined"),
    ("true(1)", "true/1 is not defined"),
    ("$x", "$x is not defined"),
    ("[.[] as $x | $x] | $x", "$x is not defined"),
    ("reduce .[] as $x ($x; .)", "$x is not defined"),
    ("foreach .[] as $x ($x; .)", "$x is not defined"),
    (". as {a: $x, ($x): $y} | 1", "$x is not defined"),
    ("def f: 1; f(2)", "f/1 is not defined"),
    ("def f(x): 1; f", "f/0 is not defined"),
    ("def f(a): $a; f(1)", "$a is not defined"),
    ("def f: $x; . as $x | f", "$x is not defined"),
    ("def f: 1; g", "g/0 is not defined"),
    ("(def f: 1; f) | f", "f/0 is not defined"),
    ("break $x", "$*label-x is not defined"),
    ("def g: break $f; label $f | g", "$*label-f is not defined"),
    ("leaf_paths", "leaf_paths/0 is not defined"),
    ("$__prog_args", "$__prog_args is not defined"),
    ("getpath", "getpath/0 is not defined"),
]

COMPILES = [
    ".a | length",
    ". as $x | $x",
    "def f($a): a + $a; f(1)",
    "def f(g): g | g; f(.a)",
    "def f: def g: 3; g; f",
    "def f: f; 1",
    "label $x | break $x",
    "label $f | def g: break $f; g",
    "label $x | label $y | break $x",
    "reduce .[] as [$a, {b: $c}] (0; . + $a + $c)",
    "foreach .[] as $x (0; . + $x; [$x, .])",
    ". as [$a, $b] ?// $c | [$a, $b, $c]",
    ". as {$a: [$b]} | $a, $b",
    ". as $x | def f: $x; f",
    "$ENV",
    "$__loc__",
    'splits("a")',
    'getpath(["a"])',
    "def empty: 1; empty",
    'ltrimstr("x") | ascii_downcase | test("a"; "x")',
    "[limit(1; .[])] | first, last, nth(0)",
    "@foo",
    'import "a" as a; a::f',
]


@pytest.mark.parametrize(("expression", "detail"), COMPILE)
def test_compile_check_finds_undefined_names(expression: str, detail: str) -> None:
    assert compile_check(parse(expression)) == detail
    with pytest.raises(ValueError, match=detail.replace("$", r"\$").replace("*", r"\*")):
        libjq.compile(expression)


@pytest.mark.parametrize("expression", COMPILES)
def test_compile_check_accepts_defined_names(expression: str) -> None:
    assert compile_check(parse(expression)) is None
    if not expression.startswith("import"):
        libjq.compile(expression)


def test_builtin_table() -> None:
    assert is_builtin("length", 0)
    assert is_builtin("range", 3)
    assert not is_builtin("range", 4)
    assert not is_builtin("leaf_paths", 0)
    reported = set(libjq.compile("builtins").input_value(None).first())
    ours = {f"{name}/{arity}" for name, arities in BUILTIN_ARITIES.items() for arity in arities}
    assert ours == reported
