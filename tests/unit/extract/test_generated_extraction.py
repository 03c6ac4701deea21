"""Generated extraction and status functions against the general code.

Every result and every error of a factory whose evaluator runs generated code must be exactly what
the general code gives (an evaluator that forbids generated code): on every catalog definition with
every corpus document, and on randomly damaged objects of definitions that use every part (ids,
pod templates, pod specs, metadata, fragments, scale, phase, conditions, matchers).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.engines import GENERAL, GENERATED

from karta.catalog import catalog_by_gvk
from karta.errors import KartaError
from karta.extract import ComponentFactory, Scale
from karta.gang import compute_gang_plan
from karta.jq import Evaluator
from karta.jq._values import as_input
from karta.model import Karta, load_karta

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO.parent / "shared" / "corpus" / "workloads"


def _outcome(fn: Any) -> Any:
    try:
        value = fn()
    except KartaError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("ok", repr(value))


def view(karta: Karta, obj: Any, evaluator: Evaluator, *, order: int = 0) -> list[Any]:
    """Everything the factory extracts, each part asked in its own factory and all together."""
    out: list[Any] = []
    for component in karta.components:
        name = component.name
        calls = {
            "instances": lambda f, n=name: f.component(n).extracted_instances(),
            "ids": lambda f, n=name: f.component(n).instance_ids(),
            "templates": lambda f, n=name: f.component(n).pod_template_specs(),
            "specs": lambda f, n=name: f.component(n).pod_specs(),
            "metadata": lambda f, n=name: f.component(n).pod_metadata(),
            "fragments": lambda f, n=name: f.component(n).fragmented_pod_specs(),
            "scales": lambda f, n=name: f.component(n).scales(),
            "status": lambda f, n=name: _status(f.component(n).status()),
            "strict": lambda f, n=name: _status(f.component(n).status(strict=True)),
        }
        items = list(calls.items())
        if order:
            items.reverse()
        shared = ComponentFactory(karta, obj, evaluator=evaluator)
        for key, call in items:
            own = ComponentFactory(karta, obj, evaluator=evaluator)
            out.append((name, key, _outcome(lambda c=call, f=own: c(f))))
            out.append((name, key, "shared", _outcome(lambda c=call, f=shared: c(f))))
    factory = ComponentFactory(karta, obj, evaluator=evaluator)
    out.append(("gang", _outcome(lambda: compute_gang_plan(factory, (), evaluator=evaluator).to_dict())))
    return out


def _status(result: Any) -> Any:
    if result is None:
        return None
    return (result.to_dict(), [d.to_dict() for d in result.diagnostics])


# kli's, the controller's and the web view's: objects come from a decoder, which converted their
# integers beyond 2**53 (karta.jq._values.decoded_input); object-side expressions of a gang plan
# (split.when, replicaSizePath) are evaluated without a session (ComponentFactory.query)
DECODED = Evaluator(trusted=True, decoded=True)


def assert_same(karta: Karta, obj: Any) -> None:
    for order in (0, 1):
        general = view(karta, obj, GENERAL, order=order)
        generated = view(karta, copy.deepcopy(obj), GENERATED, order=order)
        assert generated == general
        assert view(karta, as_input(copy.deepcopy(obj)), DECODED, order=order) == general


# --- the catalog on the corpus -----------------------------------------------------------------------


def _corpus() -> list[tuple[str, Karta, dict[str, Any]]]:
    out = []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in sorted(CORPUS.glob("*/*.yaml")):
        with path.open("rb") as handle:
            for index, doc in enumerate(yaml.load_all(handle, Loader=loader)):
                if not isinstance(doc, dict):
                    continue
                group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
                karta = catalog_by_gvk(group, version, str(doc.get("kind", "")))
                if karta is not None:
                    out.append((f"{path.parent.name}/{path.name}#{index}", karta, doc))
    return out


CORPUS_CASES = _corpus() if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS_CASES, reason="shared corpus not found")
def test_catalog_on_corpus_generated_equals_general() -> None:
    for label, karta, doc in CORPUS_CASES:
        general = view(karta, doc, GENERAL)
        generated = view(karta, doc, GENERATED)
        assert generated == general, label
        assert view(karta, as_input(doc), DECODED) == general, label


# --- damaged objects -------------------------------------------------------------------------------

DEFINITIONS = [
    """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: jobs}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: g, version: v1, kind: Root}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          running:
          - {byPhase: Running}
          - {byExpression: {expression: '.status.jobs // [] | any(.active > 0)', expectedResult: "true"}}
          failed: [{byConditions: [{type: Failed, status: "True"}]}]
          completed: [{byPhase: Done, byConditions: [{type: Complete, status: "True", reason: Ok}]}]
          degraded: [{byExpression: {expression: '.status.bad.x', expectedResult: "1"}}]
      scaleDefinition: {replicasPath: .spec.replicas}
      specDefinition:
        podSpecPath: .spec.podSpec
        metadataPath: .spec.meta
    childComponents:
    - name: job
      ownerRef: root
      instanceIdPath: .spec.jobs[].name
      specDefinition: {podTemplateSpecPath: '.spec.jobs[].template'}
      scaleDefinition:
        replicasPath: .spec.jobs[] | (.replicas // 1) * (.parallelism // 1)
        minReplicasPath: .spec.jobs[].min
    - name: single
      ownerRef: root
      specDefinition: {podTemplateSpecPath: .spec.single}
      scaleDefinition: {replicasPath: .spec.singleReplicas, maxReplicasPath: '.spec.jobs[0].max'}
  optimizationInstructions:
    gangScheduling:
      podGroup:
        name: all
        subGroups: [{componentName: job}, {componentName: single}]
""",
    """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: services}
spec:
  structureDefinition:
    rootComponent:
      name: graph
      kind: {group: g, version: v1, kind: Graph}
      statusDefinition:
        phaseDefinition: {path: .status.state}
        statusMappings:
          running: [{byPhase: ok}]
          initializing: [{}]
    childComponents:
    - name: service
      ownerRef: graph
      instanceIdPath: .spec.services | to_entries[] | .key
      specDefinition:
        fragmentedPodSpecDefinition:
          schedulerNamePath: .spec.services[].scheduler
          labelsPath: .spec.services | .[] | .labels
          resourcesPath: .spec.services | .[] | .resources
          containerPath: .spec.services | .[] | .main
          containersPath: .spec.services[] | .containers
          imagePath: .spec.services | .[] | .main.image
      scaleDefinition:
        replicasPath: .spec.services | .[] | .replicas
        minReplicasPath: .spec.services | .[] | .autoscaling.minReplicas
  optimizationInstructions:
    gangScheduling:
      podGroup: {name: graph}
""",
]

KARTAS = [load_karta(yaml.safe_load(text)).karta for text in DEFINITIONS]


def _job(name: str, replicas: Any) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "parallelism": 2,
        "min": 1,
        "max": 9,
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}},
    }


BASE = [
    {
        "apiVersion": "g/v1",
        "kind": "Root",
        "metadata": {"name": "r", "generation": 3},  # with observedGeneration 2: a stale status
        "spec": {
            "replicas": 1,
            "podSpec": {"containers": [{"name": "x"}]},
            "meta": {"labels": {"k": "v"}},
            "jobs": [_job("a", 2), _job("b", 3)],
            "single": {"spec": {}},
            "singleReplicas": 1,
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Failed", "status": "True"}],
            "jobs": [{"active": 1}],
            "bad": {"x": 1},
            "observedGeneration": 2,
        },
    },
    {
        "apiVersion": "g/v1",
        "kind": "Graph",
        "metadata": {"name": "g"},
        "spec": {
            "services": {
                "b": {
                    "replicas": 2,
                    "labels": {"t": "b"},
                    "resources": {"limits": {"gpu": "1"}},
                    "main": {"name": "m", "image": "i"},
                    "containers": [{"name": "x"}],
                    "scheduler": "s",
                    "autoscaling": {"minReplicas": 1},
                },
                "a": {"replicas": 1, "labels": {}},
            }
        },
        "status": {"state": "ok"},
    },
]

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, 1, 2, -1, 2**31, 1.0, 1.5, "", "a", "3", "x y"]),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=2),
    st.dictionaries(st.sampled_from(["name", "a", "replicas", "image", "labels"]), SCALARS, max_size=2),
)


def _locations(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key in sorted(value):
            out += _locations(value[key], (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _locations(item, (*path, index))
    return out


def _damage(obj: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    obj = copy.deepcopy(obj)
    if not path:
        return value
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return obj


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_damaged_objects_generated_equals_general(data: st.DataObject) -> None:
    which = data.draw(st.sampled_from([0, 1]))
    obj = BASE[which]
    for _ in range(data.draw(st.integers(min_value=0, max_value=2))):
        location = data.draw(st.sampled_from(_locations(obj)))
        obj = _damage(obj, location, data.draw(VALUES), data.draw(st.booleans()))
    assert_same(KARTAS[which], obj)


def test_undamaged_objects_take_the_generated_path() -> None:
    for karta, obj in zip(KARTAS, BASE, strict=True):
        assert_same(karta, obj)
        factory = ComponentFactory(karta, obj, evaluator=GENERATED)
        for component in karta.components:
            extracted = factory.component(component.name)
            extracted.extracted_instances()
            assert "instances" in extracted._memo


def test_a_gang_plan_reads_ids_and_scales_without_the_whole_extraction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    karta = catalog_by_gvk("jobset.x-k8s.io", "v1alpha2", "JobSet")
    assert karta is not None
    job = {
        "replicas": 2,
        "template": {"spec": {"parallelism": 4, "completions": 3, "template": {"spec": {}}}},
    }
    obj = {"metadata": {"name": "j"}, "spec": {"replicatedJobs": [{"name": "workers", **job}]}}
    plan = ComponentFactory(karta, obj, evaluator=DECODED).component("replicatedjob")._plan
    assert plan.counting_fn() is not None

    def whole(*_: Any) -> Any:
        raise AssertionError("the whole extraction function ran for ids and scales")

    monkeypatch.setattr(plan, "generated", whole)
    factory = ComponentFactory(karta, obj, evaluator=DECODED)
    assert compute_gang_plan(factory, (), evaluator=DECODED).to_dict() == (
        compute_gang_plan(ComponentFactory(karta, obj, evaluator=GENERAL), (), evaluator=GENERAL).to_dict()
    )
    component = factory.component("replicatedjob")
    assert component.instance_ids() == ["workers"] and component.scales() == {"workers": Scale(6)}
    monkeypatch.undo()
    assert component.pod_template_specs() == {"workers": {"spec": {}}}  # the whole function, once asked
