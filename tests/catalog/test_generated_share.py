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
    assert [(slug, name) for slug, name, _, plan in rows if plan.extraction_fn() is None] == []


def test_every_catalog_status_definition_is_generated() -> None:
    status = [(slug, name, d.status_definition) for slug, name, d, _ in _catalog() if d.status_definition]
    assert len(status) >= 36
    missing = {(slug, name) for slug, name, definition in status if generated_status_fn(definition) is None}
    assert missing == NOT_GENERATED_STATUS
    assert len(status) - len(missing) >= 36
