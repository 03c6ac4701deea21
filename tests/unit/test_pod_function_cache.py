"""The generated functions of a definition's pod-side expressions (karta.extract.pods.pod_functions):
generated together into one source (karta.jq.codegen.generate_table), kept in karta._codegen's
definition cache under the expressions and the generator's fingerprint, read back by a later
process without parsing or generating (karta.jq.generated_runtime.load_table); with the cache off
(and not eager) there are none, and the evaluator runs every expression as before. A querier with
them gives every result and every error exactly as one without them. The catalog-wide equivalence:
tests/catalog/test_pod_functions.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_codegen_cache

from karta import _codegen
from karta.errors import JqError, KartaError
from karta.extract import pods as pod_module
from karta.extract.pods import PodQuerier, pod_expressions, pod_functions, type_expression
from karta.jq import Evaluator
from karta.jq import codegen as jq_codegen
from karta.jq.codegen import generate_table
from karta.jq.generated_runtime import load_table
from karta.model.types import ComponentTypeSelector, Karta

cache = test_codegen_cache.cache  # the fixture: a fresh code cache under XDG_CACHE_HOME

TRUSTED = Evaluator(trusted=True)


def _karta() -> Karta:
    """A definition with every kind of pod-side expression, some of several outputs, one on libjq
    only (``test``), one our parser rejects."""
    pod_bearing = {"podTemplateSpecPath": ".spec.template"}
    return Karta.model_validate(
        {
            "metadata": {"name": "pods-test"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "root",
                        "kind": {"group": "example.dev", "version": "v1", "kind": "Thing"},
                    },
                    "childComponents": [
                        {
                            "name": "a",
                            "ownerRef": "root",
                            "specDefinition": pod_bearing,
                            "instanceIdPath": ".spec.ids[]",
                            "podSelector": {
                                "componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": 'a"1'},
                                "componentInstanceSelector": {"idPath": ".metadata.labels.id"},
                                "replicaSelector": {"keyPath": ".metadata.labels[]"},
                            },
                        },
                        {
                            "name": "b",
                            "ownerRef": "root",
                            "specDefinition": pod_bearing,
                            "podSelector": {
                                "componentTypeSelector": {"keyPath": ".metadata.labels.kind"},
                                "replicaSelector": {"keyPath": '.metadata.labels.role | test("b")'},
                            },
                        },
                    ],
                },
                "optimizationInstructions": {
                    "gangScheduling": {
                        "podGroups": [
                            {
                                "name": "g",
                                "members": [
                                    {
                                        "componentName": "a",
                                        "groupByKeyPaths": [
                                            ".spec.containers[].name",
                                            ".metadata.labels.idx",
                                        ],
                                        "filters": ['.metadata.labels.on == "yes"', ".["],
                                    }
                                ],
                            }
                        ]
                    }
                },
            },
        }
    )


PODS: list[dict[str, Any]] = [
    {"metadata": {"name": "p", "labels": {"role": 'a"1', "id": "x", "idx": "0", "on": "yes", "kind": "k"}}},
    {"metadata": {"name": "q", "labels": {"role": "b", "id": 3, "idx": 2.0, "on": True}}},
    {"metadata": {"name": "r", "labels": {"role": None, "id": 2.5, "idx": 1e300, "on": "no", "kind": None}}},
    {"metadata": {"name": "s", "labels": {"id": "", "idx": [1, 2], "kind": {"a": 1}}}},
    {"metadata": {"name": "t", "labels": {"id": True, "idx": 2**60}}},
    {"metadata": {"name": "u", "labels": ["a", "b"]}},
    {"metadata": {"name": "v", "labels": "role=a"}},
    {"metadata": {"name": "w"}, "spec": {"containers": [{"name": "c1"}, {"name": "c2"}]}},
    {"metadata": {"name": "x"}, "spec": {"containers": [{"name": 1}]}},
    {"metadata": {"name": "y"}, "spec": {"containers": "none"}},
    {"metadata": []},
    {"metadata": "m"},
    {},
]


def _answer(run: Any) -> tuple[str, Any]:
    try:
        value = run()
    except (JqError, KartaError) as exc:
        return type(exc).__name__, str(exc)
    return "ok", [(v.__class__.__name__, v) for v in value] if isinstance(value, list) else value


def _answers(querier: PodQuerier, karta: Karta) -> list[tuple[str, Any]]:
    out = [_answer(lambda e=e: querier.query(e)) for e in pod_expressions(karta)]
    for component in karta.components:
        out.append(_answer(lambda c=component: querier.matches_component_type(c)))
        out.append(_answer(lambda c=component: querier.extract_instance_id(c)))
        out.append(_answer(lambda c=component: querier.extract_replica_key(c)))
        out.append(_answer(lambda c=component: querier.matching_instance_id(c, ["x", "3"])))
    assert karta.gang is not None
    for member in karta.gang.pod_groups[0].members:
        out.append(_answer(lambda m=member: querier.extract_group_keys(m)))
        out.append(_answer(lambda m=member: querier.passes_filters(m)))
    return out


def test_every_pod_side_expression_once_sorted_and_the_type_comparison_built_textually() -> None:
    karta = _karta()
    assert pod_expressions(karta) == tuple(
        sorted(
            {
                '.metadata.labels.role == "a\\"1"',
                ".metadata.labels.id",
                ".metadata.labels[]",
                ".metadata.labels.kind",
                '.metadata.labels.role | test("b")',
                ".spec.containers[].name",
                ".metadata.labels.idx",
                '.metadata.labels.on == "yes"',
                ".[",
            }
        )
    )
    assert type_expression(ComponentTypeSelector(key_path=".a")) == ".a"
    assert type_expression(ComponentTypeSelector(match_labels={"a": "b"})) is None


def test_the_table_holds_the_fast_path_expressions_only() -> None:
    karta = _karta()
    table = generate_table(pod_expressions(karta), key=None, what="test")
    # libjq's (test/1) and the one our parser rejects have none: the evaluator runs them
    assert set(table) == set(pod_expressions(karta)) - {'.metadata.labels.role | test("b")', ".["}
    assert table[".metadata.labels[]"](PODS[0]) == ["x", "0", "k", "yes", 'a"1']  # sorted keys' values
    assert generate_table(["input", "$__loc__"], key=None, what="refused") == {}  # refused by the checks


def test_a_querier_with_the_functions_answers_as_the_evaluator_alone() -> None:
    karta = _karta()
    table = generate_table(pod_expressions(karta), key=None, what="test")
    for pod in PODS:
        assert _answers(PodQuerier(pod, evaluator=TRUSTED, functions=table), karta) == _answers(
            PodQuerier(pod, evaluator=TRUSTED), karta
        ), pod


def test_a_declining_function_and_the_result_limit_leave_it_to_the_evaluator() -> None:
    def declines(_: Any) -> list[Any]:
        raise RecursionError

    pod = {"metadata": {"labels": {"a": "1", "b": "2", "c": "3"}}}
    limited = Evaluator(trusted=True, max_results=2)
    table = {
        ".metadata.labels.a": declines,
        ".metadata.labels[]": lambda v: list(v["metadata"]["labels"].values()),
    }
    with_functions = PodQuerier(pod, evaluator=limited, functions=table)
    general = PodQuerier(pod, evaluator=limited)
    assert with_functions.query(".metadata.labels.a") == general.query(".metadata.labels.a") == ["1"]
    for querier in (with_functions, general):
        with pytest.raises(JqError, match="query results exceed the allowed number 2"):
            querier.query(".metadata.labels[]")


def test_integral_floats_come_back_as_the_evaluator_returns_them() -> None:
    table = {".n": lambda v: [v["n"], 2.5]}
    out = PodQuerier({"n": 3.0}, evaluator=TRUSTED, functions=table).query(".n")
    assert [(x.__class__, x) for x in out] == [(int, 3), (float, 2.5)]


def test_untrusted_and_copying_evaluators_never_run_them(cache: Path) -> None:
    karta = _karta()
    for evaluator in (
        Evaluator(),
        Evaluator(trusted=True, copy_results=True),
        Evaluator(trusted=True, fast_path=False),
    ):
        assert pod_functions(karta, evaluator) is None
        querier = PodQuerier(
            PODS[0], evaluator=evaluator, functions={".metadata.labels.id": lambda _: ["wrong"]}
        )
        assert querier.query(".metadata.labels.id") == ["x"]


def _fresh_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pod_module, "_tables", type(pod_module._tables)(pod_module._PodTable, size=8))


def _refuse_generating(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("generated although the definition cache holds the functions")

    monkeypatch.setattr(jq_codegen, "generate_table", refuse)


def test_generated_once_kept_and_read_back_without_generating(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    karta = _karta()
    _fresh_tables(monkeypatch)
    first = pod_functions(karta, TRUSTED)
    assert first is not None and len(first) == 7
    entries = sorted(cache.glob("*.def"))
    assert len(entries) == 1
    _fresh_tables(monkeypatch)
    with monkeypatch.context() as m:
        _refuse_generating(m)
        again = pod_functions(karta, TRUSTED)
    assert again is not None and set(again) == set(first)
    assert all(again[e] is not first[e] for e in first)
    for pod in PODS:
        assert _answers(PodQuerier(pod, evaluator=TRUSTED, functions=again), karta) == _answers(
            PodQuerier(pod, evaluator=TRUSTED), karta
        )
    # an unsound entry is a miss: generated and written again
    entries[0].write_bytes(entries[0].read_bytes()[:-5])
    _fresh_tables(monkeypatch)
    assert load_table(entries[0].stem, "test") is None
    assert pod_functions(karta, TRUSTED) is not None
    assert load_table(entries[0].stem, "test") is not None


def test_without_the_cache_nothing_is_generated_unless_eager(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    karta = _karta()
    _codegen.use_disk_cache(False)
    monkeypatch.setattr(_codegen, "MODE", _codegen.MODE._replace(eager=False))
    _fresh_tables(monkeypatch)
    with monkeypatch.context() as m:
        _refuse_generating(m)
        assert pod_functions(karta, TRUSTED) is None  # the evaluator runs every expression, as before
    monkeypatch.setattr(_codegen, "MODE", _codegen.MODE._replace(eager=True))
    _fresh_tables(monkeypatch)
    assert pod_functions(karta, TRUSTED)  # eager (the test suite): generated, not kept
    assert not list(cache.glob("*.def"))
    monkeypatch.setattr(_codegen, "MODE", _codegen.MODE._replace(generate=False))
    _fresh_tables(monkeypatch)
    assert pod_functions(karta, TRUSTED) is None  # KARTA_CODEGEN=off


def test_a_read_only_cache_is_read_and_nothing_is_generated_unless_eager(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    karta = _karta()
    monkeypatch.setattr(_codegen, "MODE", _codegen.MODE._replace(eager=False))
    monkeypatch.setattr(_codegen, "_writable", False)
    _fresh_tables(monkeypatch)
    with monkeypatch.context() as m:
        _refuse_generating(m)
        assert pod_functions(karta, TRUSTED) is None


def test_an_expression_beyond_the_compilers_limits_leaves_the_others_generated() -> None:
    deep = ".a // " * 120 + ".b"  # 120 nested blocks: Python's compiler refuses the source
    table = generate_table([".x", deep, ".y"], key=None, what="deep")
    assert set(table) == {".x", ".y"}
    pod = {"b": 1, "x": 2}
    assert PodQuerier(pod, evaluator=TRUSTED, functions=table).query(deep) == [1]
    assert table[".x"](pod) == [2]
