"""The catalog benchmark's object discovery (``bench/catalog.py``), without timing anything.

The benchmark reads the catalog's YAML and the corpus itself (it must serve older checkouts too),
so these tests hold its reading against the library's: every definition is found, each corpus
manifest goes to the definition ``catalog_by_gvk`` resolves it to, and a definition without corpus
objects is measured on its lifecycle fixture.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from karta.catalog import catalog_by_gvk, catalog_slugs

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT.parent / "shared" / "corpus"

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("karta_bench_catalog", ROOT / "bench" / "catalog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
DEFINITIONS = bench.discover(CORPUS) if CORPUS.is_dir() else []


def test_every_catalog_definition_is_listed_with_its_root_gvk() -> None:
    assert [d.slug for d in DEFINITIONS] == sorted(catalog_slugs())
    for definition in DEFINITIONS:
        karta = catalog_by_gvk(*definition.key.split("|"))
        assert karta is not None and karta.name == definition.slug


def test_corpus_manifests_go_to_the_definition_the_library_resolves() -> None:
    expected: dict[str, list[str]] = {}
    for where, doc in bench.corpus_documents(CORPUS):
        key = bench.object_key(doc)
        karta = catalog_by_gvk(*key.split("|")) if key else None
        if karta is not None:
            expected.setdefault(karta.name, []).append(where)
    found = {d.slug: d.files for d in DEFINITIONS if d.source == "corpus"}
    assert found == expected
    # the corpus covers most of the catalog, and every workload document of the corpus tests
    assert len(found) >= 20
    assert sum(len(files) for files in found.values()) >= 80


def test_definitions_without_corpus_objects_use_their_lifecycle_fixture() -> None:
    others = [d for d in DEFINITIONS if d.source != "corpus"]
    assert others, "the corpus covers every definition: nothing falls back to a fixture"
    for definition in others:
        assert definition.source == "fixture", f"{definition.slug}: no corpus object and no fixture"
        assert 1 <= len(definition.objects) <= bench.FIXTURE_OBJECTS
        assert {bench.object_key(o) for o in definition.objects} == {definition.key}
        assert "status" not in definition.objects[0]
        assert any("status" in o for o in definition.objects[1:]), definition.slug


def test_objects_are_json_as_the_api_server_sends_them() -> None:
    """Timestamps stay strings (the probe receives the objects as JSON)."""
    work = bench.work_document(DEFINITIONS)
    assert json.loads(json.dumps(work)) == work


def test_the_mix_cycles_over_corpus_objects_only() -> None:
    work = bench.work_document(DEFINITIONS)
    per_definition = Counter(key for key, _ in work["mix"])
    corpus = {d.key: len(d.objects) for d in DEFINITIONS if d.source == "corpus"}
    assert dict(per_definition) == corpus
    assert all(0 <= index < len(work["objects"][key]) for key, index in work["mix"])


def test_the_probes_collect_garbage_as_kli_does_unless_asked_not_to() -> None:
    # karta.cli.entry's value, read from its source: importing it would set this process's threshold
    source = (ROOT / "src" / "karta" / "cli" / "entry.py").read_text()
    (line,) = [line for line in source.splitlines() if line.startswith("GC_THRESHOLD = ")]
    gc_threshold = int(line.split("=")[1].replace("_", ""))
    assert gc_threshold == bench.KLI_GC_THRESHOLD
    assert bench.work_document(DEFINITIONS)["gc_threshold"] is None
    assert bench.work_document(DEFINITIONS, gc_threshold)["gc_threshold"] == gc_threshold


def test_fixture_merge_follows_the_lifecycle_rules() -> None:
    merged = bench._merge({"a": {"b": 1, "c": [1, 2]}, "d": 1}, {"a": {"c": [3]}, "d": None, "e": 2})
    assert merged == {"a": {"b": 1, "c": [3]}, "e": 2}
