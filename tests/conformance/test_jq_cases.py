"""Conformance runner for the expression evaluator: kinds ``expression``, ``assign``, ``assign_zip``
(docs/spec/format.md#conformance, R9, R11)."""

from __future__ import annotations

import copy

import pytest

from tests.conformance._cases import Case, assert_json_equal, evaluator, expect_error, params


@pytest.mark.parametrize("case", params("expression"))
def test_expression(case: Case) -> None:
    ev = evaluator(case)
    data = copy.deepcopy(case["input"])
    if "error" in case:
        with expect_error(case["error"]):
            ev.evaluate(case["expr"], data)
        return
    result = ev.evaluate(case["expr"], data)
    if "expect_len" in case:
        assert len(result) == case["expect_len"]
    else:
        assert_json_equal(result, case["expect"])
    assert_json_equal(data, case["input"], "input after evaluation (must be unchanged)")


@pytest.mark.parametrize("case", params("assign"))
def test_assign(case: Case) -> None:
    ev = evaluator(case)
    data = copy.deepcopy(case["input"])
    if "error" in case:
        with expect_error(case["error"]):
            ev.assign(case["expr"], data, case["value"])
        return
    result = ev.assign(case["expr"], data, case["value"])
    assert_json_equal(result, case["expect"])
    assert_json_equal(data, case["input"], "input after assign (a modified copy is returned)")


@pytest.mark.parametrize("case", params("assign_zip"))
def test_assign_zip(case: Case) -> None:
    ev = evaluator(case)
    data = copy.deepcopy(case["input"])
    if "error" in case:
        with expect_error(case["error"]):
            ev.assign_zip(case["expr"], data, case["values"])
        return
    result = ev.assign_zip(case["expr"], data, case["values"])
    assert_json_equal(result, case["expect"])
    assert_json_equal(data, case["input"], "input after assign_zip (a modified copy is returned)")
