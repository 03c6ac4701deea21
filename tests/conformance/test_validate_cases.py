"""Conformance runner for the validator: kind ``validate`` (docs/spec/format.md#conformance, #validator,
#expression-safety; R2, R6, R9, R10, R17). Findings are those of ``load_karta`` (unknown fields, R17) plus
``validate_karta``."""

from __future__ import annotations

import pytest

from tests.conformance._cases import Case, check_findings, definition_mapping, params


@pytest.mark.parametrize("case", params("validate"))
def test_validate(case: Case) -> None:
    from karta.model import load_karta, validate_karta

    result = load_karta(definition_mapping(case), strict=bool(case.get("strict", True)), source_name=case.id)
    findings = list(result.findings)
    if result.karta is not None:
        findings.extend(validate_karta(result.karta))
    check_findings(findings, case["expect"])
