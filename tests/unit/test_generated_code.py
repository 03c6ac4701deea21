"""Generated code is debuggable and controllable (karta._codegen): every source is compiled under a
unique file name that linecache knows, ``KARTA_CODEGEN`` turns generation off (same results),
dumps it, or makes a failed generation raise (as the whole test suite runs)."""

from __future__ import annotations

import gc
import inspect
import json
import linecache
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import pytest

from karta import _codegen
from karta.extract import convert
from karta.extract.compiled import compile_extraction
from karta.jq import syntax
from karta.jq._values import JqFail
from karta.jq.codegen import generate
from karta.jq.parser import parse

REPO = Path(__file__).resolve().parents[2]


def test_the_suite_runs_strict_and_eager() -> None:
    assert _codegen.MODE.strict and "strict" in os.environ["KARTA_CODEGEN"]
    assert _codegen.MODE.eager and _codegen.due(0)


def test_mode_words() -> None:
    assert _codegen.parse_mode("") == _codegen.Mode(generate=True, dump=False, strict=False, unknown=())
    assert _codegen.parse_mode(" Off , dump") == _codegen.Mode(False, True, False, ())
    assert _codegen.parse_mode("on,strict,bogus") == _codegen.Mode(True, False, True, ("bogus",))
    assert _codegen.parse_mode("eager") == _codegen.Mode(True, False, False, (), eager=True)


def test_generation_waits_for_the_second_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``eager`` an expression, a status definition, a component's extraction and a shape
    checker run the general code on their first use and the generated code from the second on,
    with the same results (a one-shot ``kli inspect -f`` compiles nothing it runs once). Without
    the definition cache: a status function it holds runs from the first use
    (tests/unit/test_definition_cache.py)."""
    from karta.catalog import catalog_by_gvk
    from karta.extract import ComponentFactory
    from karta.extract import factory as factory_module
    from karta.jq import Evaluator
    from karta.jq.codegen import generated_cache
    from karta.status.extract import _UNSET, _compiled_status

    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))
    monkeypatch.setattr(_codegen, "_disk_cache", False)
    monkeypatch.setattr(_codegen, "_directory", None)
    assert not _codegen.due(0) and _codegen.due(1)
    evaluator = Evaluator(trusted=True)
    expression = ".second_use_test.a"
    data = {"second_use_test": {"a": [1]}}
    assert evaluator.evaluate(expression, data) == [[1]]
    assert expression not in generated_cache
    assert evaluator.evaluate(expression, data) == [[1]]
    assert generated_cache[expression] is not None

    karta = catalog_by_gvk("kubeflow.org", "v1", "PyTorchJob")  # a fresh object: fresh plans
    assert karta is not None
    job = _codegen_job()
    (plans, root) = factory_module._definitions_of(karta)
    assert root.status_definition is not None
    compiled = _compiled_status(root.status_definition)
    views = []
    for _ in range(3):
        factory = ComponentFactory(karta, job, evaluator=evaluator)
        status = factory.root().status()
        assert status is not None
        views.append((status.to_dict(), factory.component("worker").extracted_instances()))
        if len(views) == 1:
            assert compiled.generated is _UNSET
            assert plans["worker"][1].generated is factory_module._UNSET
    assert compiled.generated is not _UNSET and compiled.generated is not None
    assert plans["worker"][1].generated is not None
    assert views[0] == views[1] == views[2]

    target = convert.TargetType("test PodSpec", convert.POD_SPEC, dict)
    first = target._check
    assert target.convert({"containers": []}, 0) == {"containers": []}
    assert target._check is first  # the composed checker ran
    with pytest.raises(Exception, match="expected array"):
        target.convert({"containers": {}}, 0)
    assert target._check is not first and "def check(v):" in inspect.getsource(target._check)


def _codegen_job() -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "j", "namespace": "n"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": template},
                "Worker": {"replicas": 2, "template": template},
            }
        },
        "status": {"conditions": [{"type": "Running", "status": "True"}]},
    }


def test_generated_source_is_in_linecache_for_tracebacks_and_inspect() -> None:
    fn = generate("test: .a.b", parse(".a.b"))
    assert fn is not None
    filename = fn.__code__.co_filename
    assert filename.startswith("<karta-generated-") and "jq test: .a.b" in filename
    assert "def run(v):" in inspect.getsource(fn)
    assert linecache.getline(filename, 1).startswith("def run(v):")
    with pytest.raises(JqFail) as info:
        fn(None.__class__)  # not JSON: fails inside the generated lines
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(f.filename == filename and f.line for f in frames)


def test_every_generator_registers_its_source() -> None:
    checker = convert._generated_checker(convert.POD_SPEC)
    assert "def check(v):" in inspect.getsource(checker)
    init = syntax.If.__init__
    assert init.__code__.co_filename.startswith("<karta-generated-")
    assert "_set(self, 'cond', cond)" in inspect.getsource(init)
    extract = compile_extraction(
        id_path=".spec.jobs[].name", whole=[None, None, None], fragments=None, scale_paths=None
    )
    assert extract is not None and "def extract(v, limit):" in inspect.getsource(extract)


def test_the_linecache_entry_goes_with_the_generated_code() -> None:
    namespace: dict[str, Any] = {}
    _codegen.compile_source("def f():\n    return 1\n", namespace, what="a test")
    filename = namespace["f"].__code__.co_filename
    assert filename in linecache.cache
    del namespace
    gc.collect()
    assert filename not in linecache.cache


def test_the_lines_are_split_on_the_first_read_of_the_entry() -> None:
    namespace: dict[str, Any] = {}
    _codegen.compile_source("def f():\n    return 1\n", namespace, what="lazy lines")
    filename = namespace["f"].__code__.co_filename
    linecache.checkcache()  # unpacks every entry: the lines are made, the entry stays
    assert linecache.cache[filename][2] == ["def f():\n", "    return 1\n"]
    assert linecache.getline(filename, 2) == "    return 1\n"
    namespace.clear()
    _codegen.compile_source("def g():\n    return 2\n", namespace, what="lazy lines")
    other = namespace["g"].__code__.co_filename
    assert linecache.getlines(other) == ["def g():\n", "    return 2\n"]
    assert type(linecache.cache[other]) is tuple  # the plain entry took its place


def test_a_failed_generation_raises_under_strict(monkeypatch: pytest.MonkeyPatch) -> None:
    boom = RuntimeError("generator bug")
    with pytest.raises(RuntimeError, match="generator bug"):
        _codegen.failed("a test", boom)
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))
    _codegen.failed("a test", boom)  # production: the caller falls back


def test_dump_shows_sources_failures_and_declines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode("dump"))
    assert generate("test dump: .x", parse(".x")) is not None
    assert generate("test dump: $v", parse("$v")) is None
    try:
        raise RuntimeError("generator bug")
    except RuntimeError as exc:
        _codegen.failed("a test", exc)
    err = capsys.readouterr().err
    assert "# --- <karta-generated-" in err and "def run(v):" in err
    assert "jq test dump: $v: declined" in err
    assert "a test: failed, falling back" in err and "RuntimeError: generator bug" in err


_VIEW = """
import json, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_generated_extraction import CORPUS_CASES, KARTAS, BASE, GENERATED, view
from karta import _codegen
from karta.jq import syntax
out = {{"mode": _codegen.MODE.generate, "init": syntax.If.__init__.__code__.co_filename}}
cases = [(label, karta, doc) for label, karta, doc in CORPUS_CASES[::7]]
cases += [("base", k, d) for k, d in zip(KARTAS, BASE)]
out["views"] = [repr(view(karta, doc, GENERATED)) for label, karta, doc in cases]
print(json.dumps(out))
"""


def _run(mode: str) -> dict[str, Any]:
    env = dict(os.environ, KARTA_CODEGEN=mode)
    script = _VIEW.format(tests=str(REPO / "tests" / "unit" / "extract"))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_codegen_off_gives_the_same_results() -> None:
    on, eager, off = _run("strict"), _run("eager,strict"), _run("off,strict")
    assert on["mode"] and eager["mode"] and not off["mode"]
    assert on["init"].startswith("<karta-generated-") and not off["init"].startswith("<karta-generated-")
    assert len(on["views"]) > 5
    assert off["views"] == on["views"] == eager["views"]


def test_unknown_words_are_named_once() -> None:
    env = dict(os.environ, KARTA_CODEGEN="dupm")
    done = subprocess.run(
        [sys.executable, "-c", "import karta.jq.syntax"], env=env, capture_output=True, text=True, check=True
    )
    assert done.stderr.count("KARTA_CODEGEN: ignoring 'dupm'") == 1
