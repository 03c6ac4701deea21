"""The definition cache of karta._codegen for a component's generated extraction function
(karta.extract.cached): kept whole (code, source, a recipe per constant) under a key made of the
component's paths and targets and the generator's fingerprint, read back without generating from
the first use; a changed component or generator is another key, and an unsound entry (truncated,
corrupt, foreign-owned, or whose recipes do not resolve) is a miss and is written again. The same
results with and without it on the whole catalog: tests/catalog/test_cached_extraction.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import test_codegen_cache

from karta import _codegen, _fingerprint
from karta.catalog import catalog_by_gvk
from karta.extract import cached, compiled
from karta.extract import factory as extract_factory
from karta.extract.factory import _build_plan, _definitions_of
from karta.extract.fragments import FIELDS

cache = test_codegen_cache.cache  # the fixture: a fresh code cache under XDG_CACHE_HOME

JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "j", "namespace": "n"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}},
            },
            "Worker": {"replicas": 3, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}},
        }
    },
}


def _definition(name: str = "worker") -> Any:
    karta = catalog_by_gvk("kubeflow.org", "v1", "PyTorchJob")
    assert karta is not None
    by_name, _root = _definitions_of(karta)
    return by_name[name][0]


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.def")) if directory.is_dir() else []


def _refuse_generating(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("generated although the definition cache holds the function")

    monkeypatch.setattr(compiled._Generator, "build", refuse)


def _kept() -> tuple[Any, str, Any]:
    """A component generated once (eager, the suite's mode): its definition, key and function."""
    definition = _definition()
    plan = _build_plan(definition)
    fn = plan.extraction_fn()
    assert fn is not None and plan.cache_key is not None
    assert _codegen.load_definition(plan.cache_key) is not None
    return definition, plan.cache_key, fn


def test_an_extraction_function_is_kept_and_read_back_without_generating(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    definition, key, generated = _kept()
    (entry,) = _entries(cache)
    assert entry.stem == key and entry.stat().st_mode & 0o777 == 0o600
    _refuse_generating(monkeypatch)
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))  # not eager: the first use reads it
    plan = _build_plan(definition)
    loaded = plan.extraction_fn()
    assert loaded is not None and loaded is not generated
    assert loaded.__code__.co_filename.startswith("<karta-generated-")
    assert loaded(JOB, 100) == generated(JOB, 100) is not None


def test_without_an_entry_the_first_use_generates_and_keeps_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writable cache keeps what is generated, so the first use generates (the next process reads
    it: karta._codegen.due_for_cache)."""
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))
    plan = _build_plan(_definition())
    assert plan.extraction_fn() is not None and plan.cache_key is not None
    assert [e.stem for e in _entries(cache)] == [plan.cache_key]


def test_a_cache_that_cannot_keep_it_generates_from_the_second_use(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))
    monkeypatch.setattr(_codegen, "_writable", False)  # a write failed earlier in this process
    plan = _build_plan(_definition())
    assert plan.extraction_fn() is None and plan.cache_key is not None
    assert plan.extraction_fn() is not None
    assert _entries(cache) == []


def test_the_key_names_the_paths_the_targets_and_the_generator(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _kept_definition, key, _fn = _kept()
    plan = _build_plan(_definition())
    whole, fragments = plan._parts()
    content = cached.content(plan.id_path, whole, fragments, plan.scale_paths)
    assert _codegen.definition_key("extraction", content) == key
    assert _codegen.definition_key("status", content) != key  # another generator's entry
    assert plan.scale_paths is not None and plan.scale_paths[0] is not None
    replicas = f"{plan.scale_paths[0]} | . + 1"
    changed = cached.content(plan.id_path, whole, fragments, (replicas, *plan.scale_paths[1:]))
    assert _codegen.definition_key("extraction", changed) != key
    other_target = [None if w is None else (w[0], FIELDS[0].target) for w in whole]
    assert (
        _codegen.definition_key("extraction", cached.content(plan.id_path, other_target, fragments, None))
        != key
    )
    monkeypatch.setattr(_fingerprint, "GENERATOR", "another generator")
    assert _codegen.definition_key("extraction", content) != key


def _truncate(entry: Path) -> None:
    entry.write_bytes(entry.read_bytes()[:-3])


def _corrupt(entry: Path) -> None:
    data = entry.read_bytes()
    entry.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))


@pytest.mark.parametrize("damage", [_truncate, _corrupt], ids=["truncated", "corrupt payload"])
def test_an_unsound_entry_is_a_miss_and_is_rewritten(cache: Path, damage: Any) -> None:
    definition, key, generated = _kept()
    sound = _codegen.load_definition(key)
    assert sound is not None
    (entry,) = _entries(cache)
    damage(entry)
    assert _codegen.load_definition(key) is None
    fn = _build_plan(definition).extraction_fn()  # generated again (eager), the entry rewritten
    assert fn is not None and fn(JOB, 100) == generated(JOB, 100)
    rewritten = _codegen.load_definition(key)
    assert rewritten is not None and rewritten[1:] == sound[1:]  # recipes and source


def test_an_entry_of_another_user_is_a_miss(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    definition, key, generated = _kept()
    other = os.getuid() + 1
    monkeypatch.setattr(_codegen.os, "getuid", lambda: other)  # the entry is now foreign
    assert _codegen.load_definition(key) is None
    fn = _build_plan(definition).extraction_fn()
    assert fn is not None and fn(JOB, 100) == generated(JOB, 100)


@pytest.mark.parametrize(
    "recipe",
    [
        ("target", "NoSuchTarget", "check"),
        ("target", "PodTemplateSpec", "__class__"),
        ("classes", {"a": "set"}),
        ("implicit", 1),
        ("pickle", b"..."),
    ],
)
def test_an_entry_whose_recipes_do_not_resolve_is_a_miss(cache: Path, recipe: Any) -> None:
    definition, key, generated = _kept()
    entry = _codegen.load_definition(key)
    assert entry is not None
    code, recipes, source = entry
    _codegen.store_definition(key, code, {**recipes, "K999": recipe}, source)
    plan = _build_plan(definition)
    whole, fragments = plan._parts()
    targets = cached.targets_of(whole, fragments)
    assert targets is not None and cached.load(key, targets, "test") is None
    fn = plan.extraction_fn()  # generated again, the entry rewritten
    assert fn is not None and fn(JOB, 100) == generated(JOB, 100)
    assert (_codegen.load_definition(key) or (None, None, None))[1] == recipes


def test_nocache_writes_no_extraction_entry(cache: Path) -> None:
    _codegen.use_disk_cache(False)
    plan = _build_plan(_definition())
    assert plan.extraction_fn() is not None and plan.cache_key is None
    assert _entries(cache) == []


def test_the_factory_uses_the_kept_function(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    karta = catalog_by_gvk("kubeflow.org", "v1", "PyTorchJob")
    assert karta is not None
    want = extract_factory.ComponentFactory(karta, JOB).component("worker").extracted_instances()
    _refuse_generating(monkeypatch)
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))
    again = catalog_by_gvk("kubeflow.org", "v1", "PyTorchJob")  # a copy: plans built afresh
    assert again is not None and again is not karta
    got = extract_factory.ComponentFactory(again, JOB).component("worker").extracted_instances()
    assert got == want
