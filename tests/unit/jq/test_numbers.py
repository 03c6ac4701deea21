"""Fast-path arithmetic on huge and infinite numbers follows libjq 1.8 (issue 9, item 6): jq
computes with doubles, so integers beyond 2**53 lose precision, overflow is infinite (printed as
+-1.7976931348623157e+308), ``%`` goes through a saturating conversion to 64-bit integers; or it
is jq's own error. Never a Python ``OverflowError``, ``ValueError`` or ``MemoryError``.

Every case is differential: the trusted fast path (generated code and closures), the untrusted
metered fast path and libjq (the reference) must agree, results or error.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from karta.errors import JqError, JqRuntimeError
from karta.jq import Evaluator

INF = "(1e308 * 10)"  # the fast path computes it; a literal infinity would be folded by the parser
NAN = f"({INF} - {INF})"

TRUSTED = Evaluator(trusted=True)
UNTRUSTED = Evaluator()
REFERENCE = Evaluator(trusted=True, fast_path=False)


def _outcome(ev: Evaluator, expression: str, data: Any) -> tuple[str, Any]:
    try:
        return "ok", ev.evaluate(expression, data)
    except JqRuntimeError:
        return "error", None


def _agree(expression: str, data: Any = None) -> tuple[str, Any]:
    assert TRUSTED.engine_of(expression) == "fast" and UNTRUSTED.engine_of(expression) == "fast"
    reference = _outcome(REFERENCE, expression, data)
    for ev in (TRUSTED, UNTRUSTED):
        assert _outcome(ev, expression, data) == reference, (expression, data)
    return reference


CASES: list[tuple[str, Any, Any]] = [
    # %: both sides through jq's dtoi (saturating at the int64 range), x % -1 is 0.
    (f"{INF} % 3", None, [1]),
    (f"(-{INF}) % 3", None, [-2]),
    (f"5 % {INF}", None, [5]),
    ("1e19 % 7", None, [0]),
    ("(-1e19) % 7", None, [-1]),
    ("9.9e18 % 10", None, [7]),
    ("(-9.9e18) % 10", None, [-8]),
    ("5 % -1", None, [0]),
    ("(-9223372036854775808) % -1", None, [0]),
    ("5.5 % 2", None, [1]),
    ("-5 % 3", None, [-2]),
    ("5 % -3", None, [2]),
    ("5 % 0.5", None, "error"),
    (f"{NAN} % 3", None, [None]),
    (f"3 % {NAN}", None, [None]),
    # Overflow is infinite.
    (f"{INF}", None, [1.7976931348623157e308]),
    ("1e308 + 1e308", None, [1.7976931348623157e308]),
    (f"{INF} * 0", None, [None]),
    (f"{INF} / 0", None, "error"),
    ("1e300 / 1e-300", None, [1.7976931348623157e308]),
    (f"{INF} | floor", None, [1.7976931348623157e308]),
    (f"-{INF} | ceil", None, [-1.7976931348623157e308]),
    (f"{NAN} | floor", None, [None]),
    (f"{INF} | sqrt", None, [1.7976931348623157e308]),
    (f"{INF} | length", None, [1.7976931348623157e308]),
    (f"{INF} | abs", None, [1.7976931348623157e308]),
    (f"{INF} | tostring", None, ["1.7976931348623157e+308"]),
    (f"[{INF}, -{INF}] | tojson", None, ["[1.7976931348623157e+308,-1.7976931348623157e+308]"]),
    (f"{NAN} < 1", None, [True]),  # NaN compares as null: below every number, itself included
    (f"{NAN} < {NAN}", None, [True]),
    (f"{NAN} > {NAN}", None, [False]),
    (f"{NAN} == {NAN}", None, [False]),
    (f"1 < {NAN}", None, [False]),
    (f"[1, {NAN}] | min", None, [None]),
    (f"[1, {NAN}] | max", None, [1]),
    (f"[1, 2] | .[{INF}]", None, [None]),
    ("[1, 2, 3] | .[1e300:]", None, [[]]),
    ("[1, 2, 3] | .[:1e300]", None, [[1, 2, 3]]),
    ("[1, 2, 3] | .[-1e300:]", None, [[1, 2, 3]]),
    ('"abc" | .[1e300:]', None, [""]),
    ("[[1]] | flatten(1e300)", None, [[1]]),
    ('"abc" * 1e300', None, "error"),  # Repeat string result too long
    # Integers beyond 2**53 (literals and input) are doubles; an input integer beyond the double
    # range is the largest double (docs/spec/format.md#jq-dialect: the original reads its input as doubles).
    ("9007199254740993 + 0", None, [9007199254740992]),
    ("100000000000000000000000000001 + 1", None, [1e29]),
    (". + 1", 10**400, [1.7976931348623157e308]),
    (". * 2", -(10**400), [-1.7976931348623157e308]),
    (". - 1", 10**30, [1e30]),
    ("-(.)", 10**400, [-1.7976931348623157e308]),
    (". / 3", 10**400, [5.992310449541053e307]),
    (". * 1.5", 10**400, [1.7976931348623157e308]),
    (". % 7", 10**400, [0]),
    ("sqrt", 10**400, [1.3407807929942596e154]),
    ("floor", 10**400, [1.7976931348623157e308]),
    ("abs", -(10**400), [1.7976931348623157e308]),
    ("length", -(10**400), [1.7976931348623157e308]),
    (". + .", 2**62, [2**63]),
    ("[.[] * 10] | .[0]", [1e308], [1.7976931348623157e308]),
    ('"0000000000000000000000000000000000000000000000000000000000007" | tonumber', None, [7]),
    ('"1e1000" | tonumber', None, [1.7976931348623157e308]),
]


@pytest.mark.parametrize(("expression", "data", "expected"), CASES, ids=[c[0] for c in CASES])
def test_numbers_agree_with_libjq(expression: str, data: Any, expected: Any) -> None:
    kind, results = _agree(expression, data)
    assert (kind if expected == "error" else results) == expected


NUMBERS = [
    "0",
    "1",
    "-1",
    "0.5",
    "-2.5",
    "9007199254740993",
    "9223372036854775807",
    "1e308",
    "-1e308",
    "1e-320",
    INF,
    NAN,
]
UNARY = [
    "floor",
    "ceil",
    "sqrt",
    "abs",
    "length",
    "tostring",
    "tojson",
    "-(.)",
    "[.] | add",
    "[., .] | sort | .[0]",
]
BINARY = ["+", "-", "*", "/", "%", "<", "==", ">="]


def _number_expressions(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return st.sampled_from(NUMBERS)
    inner = _number_expressions(depth - 1)
    return st.one_of(
        inner,
        st.tuples(inner, st.sampled_from(BINARY), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(inner, st.sampled_from(UNARY)).map(lambda t: f"({t[0]} | {t[1]})"),
    )


number_expressions = _number_expressions(3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expression=number_expressions, data=st.sampled_from([None, 10**400, -(10**30), 2**53 + 1, 1e308]))
def test_arithmetic_on_extreme_numbers_raises_only_jq_errors(expression: str, data: Any) -> None:
    expression = f"{expression} | [., (. as $x | $x + .)]" if data is None else f"(. + {expression}) | [.]"
    for ev in (TRUSTED, UNTRUSTED):
        with contextlib.suppress(JqError):  # anything else (OverflowError, ValueError, ...) fails
            ev.evaluate(expression, data)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2**53 - 1, 2**53 - 1),
        (2**53, 2**53),  # refused by orjson's 53-bit check, exact all the same
        (-(2**53), -(2**53)),
        (2**53 + 1, 2**53),
        (-(2**53) - 1, -(2**53)),
        (2**63 + 7, 2**63),
        (10**30, 1e30),
    ],
)
def test_input_integers_near_two_to_the_53_read_as_doubles_at_any_depth(value: int, expected: float) -> None:
    from karta.jq._values import as_input

    obj = {"spec": {"items": [{"n": value}, "x" * 20]}, "k": True}
    seen = as_input(obj)
    assert seen["spec"]["items"][0]["n"] == expected
    assert (seen is obj) == (value == expected)  # the object itself unless a number changed
    assert as_input([[value]])[0][0] == expected
