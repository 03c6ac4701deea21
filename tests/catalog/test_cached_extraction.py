"""Every catalog component's generated extraction function goes into the definition cache of
karta._codegen (every constant has a recipe) and, read back without generating, returns on every
lifecycle step and every corpus document of its kind exactly what the freshly generated function
returns (which tests/unit/extract/test_generated_extraction.py compares with the general code)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import karta.catalog as catalog
from karta import _codegen
from karta.extract import compiled
from karta.extract.factory import _build_plan, _definitions_of
from karta.jq import Evaluator


def _objects() -> dict[str, list[Any]]:
    """Objects by catalog slug: every lifecycle step, then every corpus document of the kind."""
    from catalog_view import corpus_files
    from test_lifecycle import STEPS

    by_slug: dict[str, list[Any]] = {}
    for step in STEPS:
        by_slug.setdefault(step.file, []).append(step.obj)
    slugs = {entry.gvk: entry.slug for entry in catalog.catalog_index()}
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in corpus_files():
        with path.open("rb") as handle:
            for doc in yaml.load_all(handle, Loader=loader):
                if isinstance(doc, dict):
                    group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
                    slug = slugs.get((group, version, str(doc.get("kind", ""))))
                    if slug is not None:
                        by_slug.setdefault(slug, []).append(doc)
    return by_slug


def test_cached_extraction_functions_agree_with_generated_ones_on_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _codegen.use_disk_cache(True)
    try:
        objects = _objects()
        definitions = dict(zip(catalog.catalog_slugs(), catalog.catalog_definitions(), strict=True))
        fresh: list[tuple[str, Any, Any]] = []
        keys: set[str] = set()
        for slug, karta in definitions.items():
            if karta.spec.structure_definition.references:
                continue  # extension E3: no whole-definition extraction function (E3.5, "Engines")
            by_name, _root = _definitions_of(karta)
            for name, (definition, _plan) in by_name.items():
                plan = _build_plan(definition)
                # eager (the suite): generated, then kept (components of the same content share one)
                assert plan.extraction_fn() is not None and plan.cache_key is not None, (slug, name)
                keys.add(plan.cache_key)
                whole, fragments = plan._parts()
                fn = compiled.compile_extraction(
                    id_path=plan.id_path, whole=whole, fragments=fragments, scale_paths=plan.scale_paths
                )  # generated afresh, not kept: the reference
                fresh.append((f"{slug}/{name}", definition, fn))
        assert len(fresh) >= 95
        directory = _codegen.cache_directory()
        assert directory is not None
        assert keys <= {path.stem for path in directory.glob("*.def")}  # every component kept

        def refuse(*_: Any, **__: Any) -> Any:
            raise AssertionError("generated although the definition cache holds the function")

        monkeypatch.setattr(compiled._Generator, "build", refuse)
        limit = Evaluator(trusted=True).max_results
        compared = 0
        for where, definition, generated in fresh:
            loaded = _build_plan(definition).extraction_fn()
            assert loaded is not None and loaded is not generated, where
            for obj in objects.get(where.split("/")[0], []):
                assert loaded(obj, limit) == generated(obj, limit), where
                compared += 1
        assert compared > 1000
    finally:
        _codegen.use_disk_cache(True)
        _codegen._disk_cache = None
