"""The on-disk code cache of generated sources (karta._codegen): a hit loads what compiling would
make, a miss compiles and writes an entry atomically, and nothing unsound is ever used (a corrupt,
truncated, foreign, shared or linked entry, a directory that is not the user's alone); a read-only
or missing directory only means compiling. Results are the same with and without the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

from karta import _codegen

REPO = Path(__file__).resolve().parents[2]
SOURCE = "def f(x):\n    def g(y):\n        return y * 2\n    return g(x) + 1\n"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache under ``$XDG_CACHE_HOME`` = ``tmp_path/xdg``; the directory of its entries."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _codegen.use_disk_cache(True)
    directory = _codegen.cache_directory()
    assert directory is not None
    yield directory
    _codegen.use_disk_cache(True)
    _codegen._disk_cache = None  # back to the mode's decision for the rest of the suite


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.code")) if directory.is_dir() else []


def _run(source: str = SOURCE) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    _codegen.compile_source(source, namespace, what="cache test")
    return namespace


def _no_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> CodeType:
        raise AssertionError("compiled although the cache holds the entry")

    monkeypatch.setattr(_codegen, "_compile", refuse)


def test_the_cache_lives_under_xdg_cache_home_and_a_relative_value_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    directory = _codegen.cache_directory()
    assert directory is not None and directory.parent == tmp_path / "xdg" / "karta" / "codegen"
    assert sys.implementation.cache_tag in directory.name
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _codegen.cache_directory() == Path(tmp_path, "home", ".cache", "karta", "codegen", directory.name)
    monkeypatch.setenv("HOME", "")  # no home at all: no cache, and compiling still works
    assert _codegen.cache_directory() is None
    _codegen.use_disk_cache(True)
    try:
        assert _run()["f"](3) == 7
    finally:
        _codegen._disk_cache = None


def test_a_miss_compiles_and_writes_a_private_entry_and_a_hit_loads_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _run()
    assert first["f"](3) == 7
    (entry,) = _entries(cache)
    assert entry.stat().st_mode & 0o777 == 0o600 and cache.stat().st_mode & 0o777 == 0o700
    assert not list(cache.glob(".tmp-*"))  # written to a temporary file, renamed into place
    _no_compiling(monkeypatch)
    second = _run()
    assert second["f"](3) == 7
    # the loaded code (and the nested function's) carries this compilation's own file name
    code = second["f"].__code__
    assert code.co_filename != first["f"].__code__.co_filename
    assert code.co_filename.startswith("<karta-generated-") and "cache test" in code.co_filename
    nested = [c for c in code.co_consts if isinstance(c, CodeType)]
    assert nested and all(c.co_filename == code.co_filename for c in nested)


def test_another_source_is_another_entry(cache: Path) -> None:
    _run()
    _run(SOURCE.replace("+ 1", "+ 2"))  # what a changed generator or definition produces
    assert len(_entries(cache)) == 2


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[:-5], id="truncated"),
        pytest.param(lambda data: data[:-1] + bytes([data[-1] ^ 0xFF]), id="corrupt payload"),
        pytest.param(lambda data: b"something else" + data[14:], id="foreign magic"),
        pytest.param(lambda data: b"", id="empty"),
    ],
)
def test_an_unsound_entry_is_a_miss_and_is_rewritten(cache: Path, damage: Any) -> None:
    _run()
    (entry,) = _entries(cache)
    entry.write_bytes(damage(entry.read_bytes()))
    assert _codegen._read_entry(entry) is None
    assert _run()["f"](3) == 7  # compiled again
    rewritten = _codegen._read_entry(entry)
    assert rewritten is not None and entry.read_bytes().startswith(_codegen._ENTRY_MAGIC)


def test_an_entry_of_other_code_with_a_valid_checksum_is_still_only_what_its_key_names(cache: Path) -> None:
    """The key is the hash of the source: an entry is found only for the source it was made of."""
    _run()
    (entry,) = _entries(cache)
    assert entry.stem == _codegen._key(SOURCE)


def test_a_shared_or_linked_entry_is_not_used(cache: Path, tmp_path: Path) -> None:
    _run()
    (entry,) = _entries(cache)
    entry.chmod(0o666)  # writable by others: not trusted
    assert _codegen._read_entry(entry) is None
    entry.chmod(0o600)
    target = tmp_path / "elsewhere.code"
    target.write_bytes(entry.read_bytes())
    target.chmod(0o600)
    entry.unlink()
    entry.symlink_to(target)  # not followed
    assert _codegen._read_entry(entry) is None


def test_a_directory_others_may_write_is_not_used(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.mkdir(parents=True)
    cache.chmod(0o777)
    assert _run()["f"](3) == 7
    assert not _entries(cache)


def test_a_directory_that_cannot_be_created_means_compiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    _codegen.use_disk_cache(True)
    try:
        assert _run()["f"](3) == 7
        assert _codegen._usable_directory() is None
    finally:
        _codegen._disk_cache = None


def test_a_read_only_directory_is_read_and_not_written(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run()

    def read_only(*_: Any, **__: Any) -> Any:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(_codegen, "_create_temporary", read_only)
    _run(SOURCE.replace("+ 1", "+ 3"))  # a miss: compiled, the write fails quietly
    assert len(_entries(cache)) == 1
    _no_compiling(monkeypatch)
    assert _run()["f"](3) == 7  # the entry that is there is still read


def test_nocache_and_the_controller_switch_turn_it_off(cache: Path) -> None:
    assert not _codegen.parse_mode("on,nocache").cache and _codegen.parse_mode("on").cache
    _codegen.use_disk_cache(False)
    _run()
    assert not _entries(cache)


def test_declines_and_generator_bugs_write_nothing(cache: Path) -> None:
    with pytest.raises(SyntaxError):
        _codegen.compile_source("def f(:\n", {}, what="a generator bug")
    assert not _entries(cache)


_WRITER = """
import sys
from karta import _codegen
_codegen.use_disk_cache(True)
namespace = {}
_codegen.compile_source(sys.argv[1], namespace, what="concurrent")
print(namespace["f"](3))
"""


def test_concurrent_writers_leave_one_sound_entry(cache: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, SOURCE], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    assert [p.communicate()[0].strip() for p in procs] == ["7"] * 6
    (entry,) = _entries(cache)
    assert _codegen._read_entry(entry) is not None
    assert not list(cache.glob(".tmp-*"))


_EQUIVALENCE = """
import json, sys
from pathlib import Path
import yaml
from karta.catalog import catalog_by_gvk
from karta.definitions.evaluators import evaluator_for
from karta.extract import ComponentFactory
from karta.gang import compute_gang_plan
out = []
for path in sorted(Path(sys.argv[1]).rglob("*.yaml")):
    try:
        docs = list(yaml.safe_load_all(path.read_text()))
    except yaml.YAMLError:
        continue
    for doc in docs:
        if not isinstance(doc, dict) or not isinstance(doc.get("apiVersion"), str) or "kind" not in doc:
            continue
        group, _, version = doc["apiVersion"].rpartition("/")
        karta = catalog_by_gvk(group, version, doc["kind"])
        if karta is None:
            continue
        evaluator = evaluator_for(trusted=True)
        for _ in range(2):  # the second pass runs what the first one generated
            factory = ComponentFactory(karta, doc, evaluator=evaluator)
            try:
                parts = {c.name: factory.component(c.name).extracted_instances() for c in karta.components}
                plan = compute_gang_plan(factory, (), evaluator=evaluator)
                result = repr((parts, factory.root().status(), plan))
            except Exception as exc:
                result = f"{type(exc).__name__}: {exc}"
            out.append((str(path), doc["kind"], result))
print(json.dumps(out))
"""


@pytest.mark.skipif(not (REPO.parent / "shared" / "corpus").is_dir(), reason="corpus missing")
def test_results_are_identical_without_the_cache_with_a_cold_one_and_a_warm_one(tmp_path: Path) -> None:
    """Every catalog definition on every corpus object of its kind: full extraction, status and
    gang plan, generated from the first use (the suite's ``eager``)."""
    corpus = str(REPO.parent / "shared" / "corpus" / "workloads")

    def results(codegen: str) -> list[Any]:
        env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "KARTA_CODEGEN": codegen}
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(_EQUIVALENCE), corpus],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        found: list[Any] = json.loads(done.stdout)
        return found

    without = results("eager,strict,nocache")
    assert len({kind for _, kind, _ in without}) >= 20
    cold = results("eager,strict")
    entries = list((tmp_path / "xdg" / "karta" / "codegen").rglob("*.code"))
    assert len(entries) > 50  # the catalog's status and extraction functions, shape checkers, records
    warm = results("eager,strict")
    assert without == cold == warm
