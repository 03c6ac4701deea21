"""The definition cache of karta._codegen: a status definition's generated function kept whole
(code, source and a recipe per constant) under a key made of the definition's content and the
generator's fingerprint, and read back without generating, from the first use; an entry that does
not resolve is a miss, and the fingerprint module is current (``python -m karta._fingerprint_build
--check``). The same results with and without it: tests/catalog/test_cached_status.py."""

from __future__ import annotations

import enum
import gc
import inspect
import linecache
import marshal
import shutil
from pathlib import Path
from typing import Any

import pytest
import test_codegen_cache

from karta import _codegen, _fingerprint, _fingerprint_build
from karta.catalog import catalog_by_gvk
from karta.extract.factory import _definitions_of
from karta.jq import Evaluator
from karta.jq.generated_runtime import restore
from karta.jq.operations import BINARY_OPS
from karta.model.types import ResourceStatus, StatusDefinition
from karta.status import extract as status_extract
from karta.status import generated as status_generated

cache = test_codegen_cache.cache  # the fixture: a fresh code cache under XDG_CACHE_HOME


def _status_definition() -> Any:
    karta = catalog_by_gvk("kubeflow.org", "v1", "PyTorchJob")
    assert karta is not None
    _plans, root = _definitions_of(karta)
    assert root.status_definition is not None
    return root.status_definition


JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "j", "namespace": "n"},
    "spec": {},
    "status": {"conditions": [{"type": "Running", "status": "True"}]},
}


def _refuse_generating(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("generated although the definition cache holds the function")

    monkeypatch.setattr(status_generated, "_build", refuse)


def _kept() -> tuple[Any, str, tuple[Any, Any, str]]:
    """A status definition generated once (eager): it, its key and its entry."""
    definition = _status_definition()
    first = status_extract._CompiledStatus(definition)
    first.status_fn()
    assert first.key is not None
    entry = _codegen.load_definition(first.key)
    assert entry is not None
    return definition, first.key, entry


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.def")) if directory.is_dir() else []


def test_the_fingerprint_module_is_current() -> None:
    assert _fingerprint_build.main(["--check"]) == 0, "run `python -m karta._fingerprint_build`"
    assert _fingerprint_build.fingerprint() == _fingerprint.GENERATOR


def test_the_fingerprint_covers_the_generator_sources(tmp_path: Path) -> None:
    package = tmp_path / "karta"
    for name in _fingerprint_build.SOURCES:
        source = _fingerprint_build.PACKAGE / name
        if source.is_dir():
            shutil.copytree(source, package / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (package / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, package / name)
    before = _fingerprint_build.fingerprint(package)
    assert before == _fingerprint.GENERATOR
    # the status and jq generators, the extraction generator and what its code reads
    for changed in ("jq/codegen.py", "extract/compiled.py", "extract/types.py"):
        generator = package / changed
        text = generator.read_text()
        generator.write_text(text + "\n# a changed generator\n")
        assert _fingerprint_build.fingerprint(package) != before, changed
        generator.write_text(text)
    assert _fingerprint_build.fingerprint(package) == before
    assert _fingerprint_build.main(["--check", "extra"]) == 2


def test_a_status_function_is_kept_and_read_back_without_generating(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    definition = _status_definition()
    first = status_extract._CompiledStatus(definition)  # eager (the suite): generated on first use
    generated = first.status_fn()
    assert generated is not None and first.key is not None
    (entry,) = _entries(cache)
    assert entry.stem == first.key and entry.stat().st_mode & 0o777 == 0o600
    _refuse_generating(monkeypatch)
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))  # not eager: first use is cached only
    second = status_extract._CompiledStatus(definition)
    loaded = second.status_fn()
    assert loaded is not None and loaded is not generated
    assert loaded.__code__.co_filename.startswith("<karta-generated-")
    assert loaded(JOB, 10).to_dict() == generated(JOB, 10).to_dict()


def test_a_loaded_function_keeps_the_name_it_was_stored_with_and_its_lines(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    definition, key, _entry = _kept()
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))
    loads = [status_extract._CompiledStatus(definition).status_fn() for _ in range(2)]
    first, second = loads
    assert first is not None and second is not None
    filename = first.__code__.co_filename
    assert filename == second.__code__.co_filename  # named once, when stored: nothing is renamed
    assert filename.startswith(f"<karta-generated-{key[:16]}: status")
    assert "def status(" in inspect.getsource(first)
    gc.collect()  # what earlier tests left to the collector goes first
    live = _codegen._registered[filename]  # these two, and any an earlier test keeps alive
    del loads, first
    gc.collect()
    # the other namespace of that name still lives: its lines stay
    assert _codegen._registered[filename] == live - 1
    assert linecache.getline(filename, 1) == second.__globals__["__source__"].splitlines(keepends=True)[0]
    del second
    gc.collect()
    assert (filename in linecache.cache) == (live > 2)


def test_without_an_entry_the_first_use_generates_and_keeps_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writable cache keeps what is generated, so the first use generates (the next process reads
    it: karta._codegen.due_for_cache)."""
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))
    compiled = status_extract._CompiledStatus(_status_definition())
    assert compiled.status_fn() is not None
    assert len(_entries(cache)) == 1


def test_a_cache_that_cannot_keep_it_generates_from_the_second_use(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))
    monkeypatch.setattr(_codegen, "_writable", False)  # a write failed earlier in this process
    compiled = status_extract._CompiledStatus(_status_definition())
    assert compiled.status_fn() is None and compiled.generated is status_extract._UNSET
    assert compiled.status_fn() is not None
    assert _entries(cache) == []


def test_the_key_names_the_content_and_the_generator(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    definition = _status_definition()
    compiled = status_extract._CompiledStatus(definition)
    compiled.status_fn()
    key = compiled.key
    from karta.status import cached

    content = cached.content(compiled.phase, compiled.conditions, compiled.mappings, compiled.uses_conditions)
    assert _codegen.definition_key("status", content) == key
    other = {**content, "uses_conditions": not content["uses_conditions"]}
    assert _codegen.definition_key("status", other) != key
    monkeypatch.setattr(_fingerprint, "GENERATOR", "another generator")
    assert _codegen.definition_key("status", content) != key


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[:-3], id="truncated"),
        pytest.param(lambda data: data[:-1] + bytes([data[-1] ^ 0xFF]), id="corrupt payload"),
    ],
)
def test_an_unsound_entry_is_a_miss_and_is_rewritten(cache: Path, damage: Any) -> None:
    definition, key, sound = _kept()
    (entry,) = _entries(cache)
    entry.write_bytes(damage(entry.read_bytes()))
    assert _codegen.load_definition(key) is None
    again = status_extract._CompiledStatus(definition)
    fn = again.status_fn()  # generated again (eager), the entry rewritten
    assert fn is not None and fn(JOB, 10) is not None
    rewritten = _codegen.load_definition(key)
    assert rewritten is not None and rewritten[1:] == sound[1:]  # recipes and source


def test_an_entry_whose_recipes_do_not_resolve_is_a_miss(cache: Path) -> None:
    definition, key, (code, recipes, source) = _kept()
    _codegen.store_definition(key, code, {**recipes, "K999": ("enum", "os", "environ", "x")}, source)
    assert status_extract._CompiledStatus(definition).status_fn() is not None  # generated again
    _code, rewritten, _source = _codegen.load_definition(key) or (None, None, None)
    assert rewritten == recipes


def test_nocache_writes_no_definition_entry(cache: Path) -> None:
    _codegen.use_disk_cache(False)
    compiled = status_extract._CompiledStatus(_status_definition())
    assert compiled.status_fn() is not None and compiled.key is None
    assert _entries(cache) == []


class _Foreign(enum.Enum):
    A = 1


@pytest.mark.parametrize(
    "recipe",
    [
        ("pickle", b"..."),
        ("value",),
        ("enum", "os", "environ", "x"),
        ("binary", "no such operator"),
        ("builtin", "no_such_builtin", 0),
        ("builtin", "select", 1),  # a builtin that is not a value function
        ("closure", ".a", (), "__class__"),
        ("closure", ".a | $x", (), "one"),  # a free variable
        ["value", 1],
    ],
)
def test_restore_accepts_only_its_recipes(recipe: Any) -> None:
    with pytest.raises(Exception):  # noqa: B017 - ValueError, or the parser's or compiler's error
        restore({"K1": recipe})


def test_restore_makes_the_constants_again() -> None:
    made = restore(
        {
            "K1": ("value", {"a": [1, 2.5, None, "x"]}),
            "K2": ("enum", "karta.model.types", "ResourceStatus", "RUNNING"),
            "K3": ("binary", "+"),
            "K4": ("builtin", "length", 0),
            "K5": ("closure", ".a.b", (), "many"),
        }
    )
    assert made["K1"] == {"a": [1, 2.5, None, "x"]}
    assert made["K2"] is ResourceStatus.RUNNING
    assert made["K3"] is BINARY_OPS["+"]
    assert made["K4"]([1, 2]) == 2
    assert list(made["K5"]({"a": {"b": 3}}, {})) == [3]
    assert marshal.loads(marshal.dumps(("value", {"a": [1]}))) == ("value", {"a": [1]})
    from karta.jq.generated_runtime import plain_recipe

    assert plain_recipe(_Foreign.A) == ("enum", __name__, "_Foreign", "A")  # restore refuses it (not karta)
    assert plain_recipe(object()) is None


KEPT_EXPRESSION = ".kept_test | [.a[]?, (.b // 1), (.c | tostring)] | map(select(. != null))"


def test_a_jq_expression_function_is_kept_and_read_back_on_its_second_use(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from karta.jq import codegen as jq_codegen
    from karta.jq import evaluator as evaluator_module
    from karta.jq.evaluator import Evaluator
    from karta.jq.generated_runtime import expression_key, load_function
    from karta.jq.parser import parse

    data = {"kept_test": {"a": [1, 2], "c": {"x": 1}}}
    monkeypatch.setattr(jq_codegen, "generated_cache", {})
    generated = jq_codegen.generate(KEPT_EXPRESSION, parse(KEPT_EXPRESSION))
    key = expression_key(KEPT_EXPRESSION)
    assert generated is not None and key is not None
    assert [e.stem for e in _entries(cache)] == [key]
    real_emitter = jq_codegen.Emitter

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("generated although the definition cache holds the function")

    monkeypatch.setattr(jq_codegen, "Emitter", refuse)
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))  # not eager
    monkeypatch.setattr(jq_codegen, "generated_cache", {})  # a fresh process
    monkeypatch.setattr(evaluator_module, "generated_cache", {})
    monkeypatch.setattr(evaluator_module, "_used_once", set())
    evaluator = Evaluator(trusted=True)
    out = evaluator.evaluate(KEPT_EXPRESSION, data)  # the first use: the closures
    assert KEPT_EXPRESSION not in evaluator_module.generated_cache
    assert evaluator.evaluate(KEPT_EXPRESSION, data) == out == [[1, 2, 1, '{"x":1}']]  # read, not generated
    loaded = evaluator_module.generated_cache[KEPT_EXPRESSION]
    assert loaded is not None and loaded is not generated and loaded(data) == generated(data) == out
    # an unsound entry is a miss: the function is generated again and the entry rewritten
    (entry,) = _entries(cache)
    entry.write_bytes(entry.read_bytes()[:-2])
    assert load_function(key, {}, "run", "test") is None
    monkeypatch.setattr(jq_codegen, "Emitter", real_emitter)
    monkeypatch.setattr(jq_codegen, "generated_cache", {})
    again = jq_codegen.generate(KEPT_EXPRESSION, parse(KEPT_EXPRESSION))
    assert again is not None and again(data) == out
    rewritten = load_function(key, {}, "run", "test")
    assert rewritten is not None and rewritten(data) == out


def test_a_status_definition_using_in_is_generated_and_kept(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``IN(...)`` (jq's library ``any(s == .; .)``) is on the fast path: the matcher's definition
    gets its generated function, the cache keeps it, and a later process reads it back."""
    definition = StatusDefinition.model_validate(
        {
            "phaseDefinition": {"path": ".status.phase"},
            "statusMappings": {
                "failed": [
                    {
                        "byExpression": {
                            "expression": '.status.phase | IN("Failed", "Error")',
                            "expectedResult": "true",
                        }
                    }
                ],
                "running": [{"byPhase": "Running"}],
            },
        }
    )
    generated = status_extract._CompiledStatus(definition).status_fn()
    assert generated is not None
    assert len(_entries(cache)) == 1
    _refuse_generating(monkeypatch)
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))
    loaded = status_extract._CompiledStatus(definition).status_fn()
    assert loaded is not None and loaded is not generated
    for phase, want in (("Error", ResourceStatus.FAILED), ("Running", ResourceStatus.RUNNING)):
        obj = {"status": {"phase": phase}}
        assert loaded(obj, 10).to_dict() == generated(obj, 10).to_dict()
        assert (
            loaded(obj, 10).matched
            == status_extract.extract_status(
                definition, obj, evaluator=Evaluator(trusted=True, fast_path=False), generated=False
            ).matched
            == [want]
        )
