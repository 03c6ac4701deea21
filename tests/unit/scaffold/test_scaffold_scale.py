"""Scaffolding is linear in the schema's size (issue 9: 5,000 properties took 17 s).

The schema packs every former quadratic case into one object: thousands of sibling pod templates
(each once re-read all its siblings for replica counts), names without letters (all numbered
``pod-N``, each once searched from ``pod-2``), thousands of replica-like integers (each TODO once
listed them all) and one comment per component (each key once looked at every comment). Four times
the schema must cost about four times the work: the output's size with a tight margin (it is
counted, not timed), the CPU time (the best of three runs, so that a loaded machine only adds
noise) with a generous one: linear code gives 4, the quadratic code gave 14 for both.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.unit.scaffold.test_scaffold_schema import TEMPLATE, case_variants, crd

from karta.scaffold import scaffold_crd

pytestmark = pytest.mark.slow


def schema(pods: int) -> dict[str, Any]:
    spec: dict[str, Any] = {chr(0x4E00 + i): TEMPLATE for i in range(pods)}  # kebab-cased to nothing
    spec.update({name: {"type": "integer"} for name in case_variants("workerreplicas", pods)})
    status = {f"s{i}Phase": {"type": "string", "enum": ["Running", f"v{i}"]} for i in range(pods)}
    return crd(spec, status)


def cost(pods: int) -> tuple[float, int]:
    """The best CPU time of three drafts (analysis, draft and YAML) and the YAML's length."""
    doc = schema(pods)
    best = float("inf")
    size = 0
    for _ in range(3):
        start = time.process_time()
        text = scaffold_crd([doc]).to_yaml()
        best = min(best, time.process_time() - start)
        size = len(text)
    return best, size


def test_four_times_the_schema_costs_about_four_times_the_work() -> None:
    small_time, small_size = cost(300)
    large_time, large_size = cost(1200)
    assert large_size < 4.2 * small_size
    assert large_time < 8 * small_time, f"{small_time:.3f}s for 300 pod fields, {large_time:.3f}s for 1200"
