"""How much of the built-in catalog runs as generated code: every component's extraction function
(95 of 95 today) and every status definition's function (36 of 36). The test fails when the
share drops (an expression leaves the fast path, a generator starts declining) and names what is
not generated; the suite runs with ``KARTA_CODEGEN=strict``, so a generator bug raises instead.
"""

from __future__ import annotations

from typing import Any

import karta.catalog as catalog
from karta.extract.factory import _definitions_of
from karta.status import generated_status_fn

# Status definitions left to the general code (libjq). None today: RayJob's matchers, the last one,
# no longer use ``IN`` (jq's library ``def IN(s): any(s == .; .)``, outside the fast path).
NOT_GENERATED_STATUS: set[tuple[str, str]] = set()
# Component extractions left to the general code: the InferenceService predictor's fragment paths
# use ``explode`` (not on the fast path), with or without its runtimes bound.
NOT_GENERATED_EXTRACTION: set[tuple[str, str]] = {("serving-kserve-io-inferenceservice-v1beta1", "predictor")}


def _catalog() -> list[tuple[str, str, Any, Any]]:
    rows = []
    for slug, karta in zip(catalog.catalog_slugs(), catalog.catalog_definitions(), strict=True):
        by_name, _root = _definitions_of(karta)
        for name, (definition, plan) in by_name.items():
            rows.append((slug, name, definition, plan))
    return rows


def test_every_catalog_component_has_a_generated_extraction_function() -> None:
    rows = _catalog()
    assert len(rows) >= 95
    # Extension E3: a definition with references has no whole-definition extraction without them
    # for a component that reads a reference; its functions take the references as parameters
    # (the plan with their names: what a bound evaluator runs, E3.5 "Engines").
    referencing = {
        s: tuple(sorted(r.name for r in k.spec.structure_definition.references))
        for s, k in zip(catalog.catalog_slugs(), catalog.catalog_definitions(), strict=True)
        if k.spec.structure_definition.references
    }
    missing = {
        (slug, name)
        for slug, name, _, plan in rows
        if plan.with_names(referencing.get(slug, ())).extraction_fn() is None
    }
    assert missing == NOT_GENERATED_EXTRACTION


def test_every_catalog_status_definition_is_generated() -> None:
    status = [(slug, name, d.status_definition) for slug, name, d, _ in _catalog() if d.status_definition]
    assert len(status) >= 36
    missing = {(slug, name) for slug, name, definition in status if generated_status_fn(definition) is None}
    assert missing == NOT_GENERATED_STATUS
    assert len(status) - len(missing) >= 36


def _status_cases() -> list[tuple[str, Any, dict[str, Any]]]:
    """(definition slug, status definition, object): every lifecycle step, root and components."""
    from test_lifecycle import STEPS

    by_slug = dict(zip(catalog.catalog_slugs(), catalog.catalog_definitions(), strict=True))
    cases = []
    for step in STEPS:
        by_name, _root = _definitions_of(by_slug[step.file])
        for name, (definition, _plan) in by_name.items():
            if definition.status_definition is not None:
                cases.append((f"{step.id} ({name})", definition.status_definition, step.obj))
    return cases


def test_generated_status_functions_agree_with_the_general_code_on_every_lifecycle_step() -> None:
    # The state tables' matchers (bindings, any/2, first/last, ``?``) are emitted natively and
    # their bindings shared between matchers (karta.jq.codegen): the general code on libjq alone
    # (no fast path, so no generated expression either) is the reference.
    from catalog_view import evaluator

    from karta.jq import Evaluator
    from karta.status import extract_status

    ev = evaluator()
    libjq = Evaluator(trusted=True, fast_path=False)
    cases = _status_cases()
    assert len(cases) > 500
    declined = []
    for where, definition, obj in cases:
        fn = generated_status_fn(definition)
        assert fn is not None, where
        got = fn(obj, ev.max_results)
        want = extract_status(definition, obj, evaluator=libjq, generated=False)
        if got is None:
            declined.append(where)
            continue
        assert (got.to_dict(), got.diagnostics, got.stale) == (
            want.to_dict(),
            want.diagnostics,
            want.stale,
        ), where
    # A decline (the general code runs) is for hostile objects, not for the operators' own states.
    assert declined == []
