"""The generated functions of every catalog definition's pod-side expressions
(karta.extract.pods.pod_functions: generated together, kept in the definition cache) against the
general code, on the pods of the gang lifecycle fixtures, the operator-labelled pods of
test_catalog_pods.py, the examples' pods, and hostile variants of them (labels missing, not a map,
holding numbers, booleans, null, maps or lists; metadata that is not a map; no metadata at all).

For every expression and pod: a generated function that returns gives exactly the outputs of the
fast-path closures (the generator's contract); and a querier with the functions answers every
expression exactly as one without them (the evaluator alone, today's path): the same results, and
the same errors with the same messages, through every PodQuerier method a placement uses. Placing
the lifecycle pods gives the same placements with and without the definition cache."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from catalog_view import CORPUS
from test_catalog_pods import CASES
from test_gang_lifecycle import STEPS

from karta import _codegen
from karta.catalog import catalog_definitions
from karta.errors import JqError, KartaError
from karta.extract import ComponentFactory
from karta.extract import pods as pod_module
from karta.extract.pods import PodQuerier, pod_expressions, pod_functions
from karta.gang import compute_gang_plan
from karta.jq import Evaluator
from karta.jq.codegen import generate_table
from karta.jq.evaluator import plan_for
from karta.jq.fastpath import EMPTY_ENV
from karta.report.placement import place_pods

EXAMPLE_PODS = Path(__file__).resolve().parents[2] / "examples" / "pods"

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


def _labelled(labels: dict[str, Any], name: str = "p") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "labels": labels},
        "spec": {"containers": []},
    }


def _hostile(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """Variants of a labelled pod that the pod-side expressions must survive alike."""
    labels = dict((pod.get("metadata") or {}).get("labels") or {})
    out: list[dict[str, Any]] = []
    for value in (7, 2.5, 3.0, True, False, None, {"a": "b"}, ["x", "y"], "", 1e300, 2**60):
        out.append(_labelled({k: value for k in labels}))
    for key in list(labels)[:3]:  # each label missing in turn
        out.append(_labelled({k: v for k, v in labels.items() if k != key}))
    out.append(_labelled({}))
    for bad_labels in (None, ["a"], "labels", 5):
        hostile = copy.deepcopy(pod)
        hostile["metadata"]["labels"] = bad_labels
        out.append(hostile)
    for bad_metadata in (None, [], "m", 1):
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": bad_metadata})
    out.append({})
    return out


def _pods() -> list[dict[str, Any]]:
    seen: set[str] = set()
    pods: list[dict[str, Any]] = []
    base = [pod for step in STEPS for pod in step.pods]
    base += [_labelled(dict(labels)) for _file, _index, labels, _component, _instance in CASES]
    for path in sorted(EXAMPLE_PODS.glob("*.yaml")):
        base += [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]
    for pod in base:
        for candidate in [pod, *_hostile(pod)]:
            key = repr(candidate)
            if key not in seen:
                seen.add(key)
                pods.append(candidate)
    return pods


def _same(a: Any, b: Any) -> bool:
    """Equal JSON values of the same classes (1, 1.0 and True are told apart)."""
    if a.__class__ is not b.__class__:
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _answer(run: Any) -> tuple[str, Any]:
    try:
        return "ok", run()
    except (JqError, KartaError) as exc:
        return type(exc).__name__, str(exc)


def _answers(querier: PodQuerier, karta: Any, expressions: tuple[str, ...]) -> list[tuple[str, Any]]:
    """What the querier says for every expression and every selector method of every component."""
    out = [_answer(lambda e=e: querier.query(e)) for e in expressions]
    for component in karta.components:
        out.append(_answer(lambda c=component: querier.matches_component_type(c)))
        out.append(_answer(lambda c=component: querier.extract_instance_id(c)))
        out.append(_answer(lambda c=component: querier.extract_replica_key(c)))
    gang = karta.gang
    for group in gang.pod_groups if gang is not None else ():
        for member in group.members:
            out.append(_answer(lambda m=member: querier.extract_group_keys(m)))
            out.append(_answer(lambda m=member: querier.passes_filters(m)))
    return out


def _strict_equal(a: list[tuple[str, Any]], b: list[tuple[str, Any]]) -> bool:
    return len(a) == len(b) and all(x[0] == y[0] and _same(x[1], y[1]) for x, y in zip(a, b, strict=True))


@needs_corpus
def test_generated_pod_functions_agree_with_the_general_code_on_every_catalog_definition() -> None:
    pods = _pods()
    assert len(pods) > 300
    evaluator = Evaluator(trusted=True)
    covered = ran = declined = 0
    for karta in catalog_definitions():
        expressions = pod_expressions(karta)
        if not expressions:
            continue
        table = generate_table(expressions, key=None, what=f"pods of {karta.name}")
        covered += len(table)
        for text, fn in table.items():
            closures = plan_for(text).fast
            assert closures is not None, text
            for pod in pods:
                try:
                    got = fn(pod)
                except Exception:
                    declined += 1  # a decline: the querier asks the evaluator (compared below)
                    continue
                ran += 1
                want = closures.many(pod, EMPTY_ENV)
                assert _same(got, want), (karta.name, text, pod, got, want)
        for pod in pods:
            with_functions = PodQuerier(pod, evaluator=evaluator, functions=table)
            general = PodQuerier(pod, evaluator=evaluator)
            got_answers = _answers(with_functions, karta, expressions)
            want_answers = _answers(general, karta, expressions)
            assert _strict_equal(got_answers, want_answers), (karta.name, pod, got_answers, want_answers)
    assert covered >= 40 and ran > 2 * declined, (covered, ran, declined)  # hostile pods decline often


def _placements(karta: Any, obj: dict[str, Any], pods: list[dict[str, Any]]) -> tuple[Any, ...]:
    """The gang plan of the object and its pods, where each pod goes, and the workload tree (what
    kli describe shows of live pods)."""
    from karta.extract.tree import build_tree

    evaluator = Evaluator(trusted=True)
    factory = ComponentFactory(karta, obj, evaluator=evaluator)
    tree = _answer(lambda: build_tree(ComponentFactory(karta, obj, evaluator=evaluator), pods))
    try:
        plan = compute_gang_plan(factory, pods, evaluator=evaluator)
    except KartaError as exc:
        return (str(exc), place_pods(karta, factory, pods, evaluator=evaluator, plan=None), tree)
    return (plan.to_dict(), place_pods(karta, factory, pods, evaluator=evaluator, plan=plan), tree)


@needs_corpus
def test_placements_are_the_same_from_the_definition_cache_and_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from karta.catalog import catalog_definition
    from karta.extract import tree
    from karta.gang import plan as gang_plan
    from karta.jq import codegen
    from karta.report import placement

    def fresh_tables() -> None:
        monkeypatch.setattr(pod_module, "_tables", type(pod_module._tables)(pod_module._PodTable, size=8))

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("generated although the definition cache holds the functions")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _codegen.use_disk_cache(True)
    try:
        steps = [s for s in STEPS if s.pods][::3]
        assert len(steps) >= 10
        for step in steps:
            karta = catalog_definition(step.file)
            assert karta is not None
            pods = [*step.pods, *_hostile(step.pods[0])]
            with monkeypatch.context() as general:
                general.setattr(placement, "pod_functions", lambda *_: None)
                general.setattr(gang_plan, "pod_functions", lambda *_: None)
                general.setattr(tree, "pod_functions", lambda *_: None)
                without = _placements(karta, step.obj, pods)
            fresh_tables()
            assert _placements(karta, step.obj, pods) == without, step.id  # generated, then kept
            fresh_tables()
            with monkeypatch.context() as cached:
                cached.setattr(codegen, "generate_table", refuse)
                assert pod_functions(karta, Evaluator(trusted=True))  # read from the definition cache
                assert _placements(karta, step.obj, pods) == without, step.id
    finally:
        _codegen.use_disk_cache(True)
        _codegen._disk_cache = None


@needs_corpus
def test_every_expression_a_placement_evaluates_on_a_pod_is_among_the_definitions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pod_expressions misses nothing the gang plan, the placements and the workload tree ask for,
    so a command served by the definition cache parses none (tests/unit/test_startup_imports.py)."""
    from karta.catalog import catalog_definition
    from karta.extract.tree import build_tree

    asked: dict[str, set[str]] = {}
    query = PodQuerier.query
    current = [""]

    def recording(self: PodQuerier, expression: str) -> list[Any]:
        asked.setdefault(current[0], set()).add(expression)
        return query(self, expression)

    monkeypatch.setattr(PodQuerier, "query", recording)
    for step in STEPS:
        karta = catalog_definition(step.file)
        assert karta is not None
        current[0] = step.file
        _placements(karta, step.obj, list(step.pods))
        evaluator = Evaluator(trusted=True)
        build_tree(ComponentFactory(karta, step.obj, evaluator=evaluator), list(step.pods))
    assert len(asked) >= 8
    for name, expressions in asked.items():
        karta = catalog_definition(name)
        assert karta is not None
        assert expressions <= set(pod_expressions(karta)), (name, expressions - set(pod_expressions(karta)))
