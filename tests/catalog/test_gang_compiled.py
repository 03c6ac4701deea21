"""The compiled gang plan (karta.gang.compiled, and karta.gang.split's compiled split) against the
general code it stands in for: on every corpus workload of a catalog definition (no pods) and every
step of the gang lifecycles (with the operator's pods and without), the same plan or the same error.
"""

from __future__ import annotations

from typing import Any

import pytest
from catalog_view import CORPUS, definition_for, evaluator, workload_documents
from test_gang_lifecycle import COVERED, STEPS, GangStep
from test_lifecycle import _definitions

from karta.errors import KartaError
from karta.extract import ComponentFactory
from karta.gang import compute_gang_plan
from karta.gang.compiled import compiled_gang
from karta.gang.plan import general_gang_plan
from karta.model import Karta

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


def _outcome(plan: Any, karta: Karta, obj: dict[str, Any], pods: tuple[dict[str, Any], ...]) -> Any:
    # A fresh factory per side: nothing one side extracts is memoised for the other.
    factory = ComponentFactory(karta, obj, evaluator=evaluator())
    try:
        return plan(factory, pods, evaluator=evaluator())
    except KartaError as exc:
        return type(exc), str(exc)


def _same(karta: Karta, obj: dict[str, Any], pods: tuple[dict[str, Any], ...], where: str) -> None:
    compiled = _outcome(compute_gang_plan, karta, obj, pods)
    general = _outcome(general_gang_plan, karta, obj, pods)
    assert compiled == general, where
    if not isinstance(compiled, tuple):
        assert compiled.to_dict() == general.to_dict(), where


WORKLOADS = [(path, index, doc) for path, index, doc in workload_documents() if definition_for(doc)]


@needs_corpus
@pytest.mark.parametrize(
    "item", WORKLOADS, ids=[f"{path.parent.name}/{path.name}#{index}" for path, index, _ in WORKLOADS]
)
def test_corpus_workload_plans_as_the_general_code(item: tuple[Any, int, dict[str, Any]]) -> None:
    path, index, doc = item
    karta = definition_for(doc)
    assert karta is not None
    _same(karta, doc, (), f"{path}#{index}")


@needs_corpus
@pytest.mark.parametrize("step", STEPS, ids=[s.id for s in STEPS])
def test_gang_lifecycle_step_plans_as_the_general_code(step: GangStep) -> None:
    karta = _definitions()[step.file]
    _same(karta, step.obj, step.pods, f"{step.id} (with its pods)")
    _same(karta, step.obj, (), f"{step.id} (without pods)")


@pytest.mark.parametrize("name", sorted(COVERED))
def test_catalog_splits_are_compiled(name: str) -> None:
    """Every catalog definition with a gang lifecycle splits, from its compiled shape (the equivalence
    above then covers the compiled split, not only the general one)."""
    karta = _definitions()[name]
    assert karta.gang is not None and karta.gang.pod_group is not None
    assert karta.gang.pod_group.split is not None
    compiled = compiled_gang(karta)
    assert compiled is not None and compiled.split is not None and compiled.split.compiled
