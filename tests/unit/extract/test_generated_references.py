"""Generated extraction and status functions of a definition WITH references (extension E3): the
references are parameters of the generated function (``$<name>`` a Python variable,
:meth:`karta.jq.codegen.Emitter.bind_parameters`), so a bound evaluation runs on the same fast path
as an unbound one. Every result and every error must be exactly the general code's (every
expression rewritten and evaluated through the bound evaluator, :mod:`karta.jq.bound`): on the
catalog's TrainJobs with the trainer's runtimes, and on randomly damaged objects and referenced
objects of a definition that reads its references in every part. The functions are kept in the
definition cache under a key naming the references, apart from the unbound ones."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_generated_extraction import CORPUS, VALUES, _damage, _locations, view
from tests.engines import GENERAL, GENERATED
from tests.unit import test_codegen_cache

from karta import _codegen
from karta.catalog import catalog_by_gvk
from karta.extract import ComponentFactory
from karta.extract.factory import _definitions_of
from karta.jq import Evaluator
from karta.jq._values import as_input
from karta.jq.bound import BoundEvaluator
from karta.model import Karta, load_karta
from karta.references import resolve
from karta.status import generated as status_generated

cache = test_codegen_cache.cache  # the fixture: a fresh code cache under XDG_CACHE_HOME

DECODED = Evaluator(trusted=True, decoded=True)

DEFINITION = """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: references}
spec:
  structureDefinition:
    references:
    - name: rt
      gvk: {group: g, version: v1, kind: Runtime}
      lookup: {nameExpression: .spec.runtime}
    - name: parts
      gvk: {group: g, version: v1, kind: Part}
      list: {matchLabels: {app: x}}
    rootComponent:
      name: root
      kind: {group: g, version: v1, kind: Root}
      statusDefinition:
        phaseDefinition: {path: '.status.phase // $rt.status.phase'}
        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          running:
          - {byPhase: Running}
          - byExpression:
              expression: '$rt.spec.ready == true and .status.phase == "Starting"'
              expectedResult: "true"
          failed: [{byConditions: [{type: Failed, status: "True"}]}]
          degraded:
          - byExpression: {expression: '[$parts[]? | .status.broken] | any', expectedResult: "true"}
          - byExpression: {expression: '$rt.status.bad.x', expectedResult: "1"}
          initializing:
          - byExpression:
              expression: '($rt.status.phase // "") | IN("Pending", "Init")'
              expectedResult: "true"
      scaleDefinition: {replicasPath: '.spec.replicas // $rt.spec.replicas'}
      specDefinition:
        podSpecPath: '.spec.podSpec // $rt.spec.podSpec'
        metadataPath: .spec.meta
    childComponents:
    - name: job
      ownerRef: root
      instanceIdPath: '($rt.spec.jobs // [])[].name'
      specDefinition: {podTemplateSpecPath: '($rt.spec.jobs // [])[] | .template'}
      scaleDefinition:
        replicasPath: '($rt.spec.jobs // [])[] | (.replicas // 1) * ([$parts[]?] | length)'
        minReplicasPath: '($rt.spec.jobs // [])[] | .min'
    - name: single
      ownerRef: root
      specDefinition: {podTemplateSpecPath: '. as $o | $rt.spec.single // $o.spec.single'}
      scaleDefinition: {replicasPath: .spec.singleReplicas}
  optimizationInstructions:
    gangScheduling:
      podGroup:
        name: all
        subGroups: [{componentName: job}, {componentName: single}]
"""

KARTA = load_karta(yaml.safe_load(DEFINITION)).karta

OBJ: dict[str, Any] = {
    "apiVersion": "g/v1",
    "kind": "Root",
    "metadata": {"name": "r", "namespace": "n"},
    "spec": {"runtime": "rt", "meta": {"labels": {"k": "v"}}, "singleReplicas": 1},
    "status": {"phase": "Starting", "conditions": [{"type": "Failed", "status": "False"}]},
}
RUNTIME: dict[str, Any] = {
    "apiVersion": "g/v1",
    "kind": "Runtime",
    "metadata": {"name": "rt", "namespace": "n"},
    "spec": {
        "ready": True,
        "replicas": 2,
        "podSpec": {"containers": [{"name": "x"}]},
        "jobs": [
            {"name": "a", "replicas": 2, "min": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
            {"name": "b", "template": {"metadata": {"labels": {"a": "b"}}, "spec": {}}},
        ],
        "single": {"spec": {}},
    },
    "status": {"phase": "Pending", "bad": {"x": 1}},
}
PARTS: list[dict[str, Any]] = [
    {"apiVersion": "g/v1", "kind": "Part", "metadata": {"name": f"p{i}", "labels": {"app": "x"}}, "status": s}
    for i, s in enumerate([{"broken": False}, {}])
]


def _bound(base: Evaluator, bindings: dict[str, Any]) -> BoundEvaluator:
    return BoundEvaluator(base, bindings)


def assert_same(karta: Karta, obj: Any, bindings: dict[str, Any]) -> None:
    """The generated functions with the bindings as parameters agree with the general code, and
    so do they on decoded objects (kli, the controller, the web view)."""
    for order in (0, 1):
        general = view(karta, obj, _bound(GENERAL, bindings), order=order)
        generated = view(karta, copy.deepcopy(obj), _bound(GENERATED, copy.deepcopy(bindings)), order=order)
        assert generated == general
        decoded = {k: as_input(copy.deepcopy(v)) for k, v in bindings.items()}
        assert view(karta, as_input(copy.deepcopy(obj)), _bound(DECODED, decoded), order=order) == general


def _generated_everywhere(karta: Karta, obj: Any, bindings: dict[str, Any]) -> None:
    """Every component's whole extraction ran as the generated function taking the references."""
    factory = ComponentFactory(karta, obj, evaluator=_bound(GENERATED, bindings))
    for definition in karta.components:
        component = factory.component(definition.name)
        component.extracted_instances()
        component.status()
        plan = component._plan
        assert plan.names == tuple(sorted(bindings))
        assert callable(plan.generated), definition.name
        if definition.status_definition is not None:
            assert plan.status_generated is not None, definition.name
    assert factory._w.results is None  # no expression went through the evaluator


def _bindings() -> dict[str, Any]:
    return {"rt": copy.deepcopy(RUNTIME), "parts": copy.deepcopy(PARTS)}


def test_a_definition_with_references_takes_the_generated_path() -> None:
    assert_same(KARTA, OBJ, _bindings())
    _generated_everywhere(KARTA, OBJ, _bindings())
    # missing references: null and [] bound, the same path
    assert_same(KARTA, OBJ, {"rt": None, "parts": []})
    _generated_everywhere(KARTA, OBJ, {"rt": None, "parts": []})


def test_the_plain_evaluator_never_runs_the_bound_functions() -> None:
    # without the bindings, the definition's components that read them decline (as before), and
    # the plan of the bound evaluator is another one than the plain evaluator's
    plain = ComponentFactory(KARTA, OBJ, evaluator=GENERATED).component("job")
    bound = ComponentFactory(KARTA, OBJ, evaluator=_bound(GENERATED, _bindings())).component("job")
    assert plain._plan is not bound._plan and plain._plan.names == ()
    assert bound._plan.extraction_fn() is not None
    assert plain._plan.extraction_fn() is None


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_damaged_objects_and_references_generated_equals_general(data: st.DataObject) -> None:
    obj: Any = OBJ
    bindings: dict[str, Any] = _bindings()
    for _ in range(data.draw(st.integers(min_value=0, max_value=3))):
        which = data.draw(st.sampled_from(["obj", "rt", "parts"]))
        target = obj if which == "obj" else bindings[which]
        location = data.draw(st.sampled_from(_locations(target)))
        damaged = _damage(target, location, data.draw(VALUES), data.draw(st.booleans()))
        if which == "obj":
            obj = damaged
        else:
            bindings[which] = damaged
    assert_same(KARTA, obj, bindings)


# --- the catalog: TrainJobs with the trainer's runtimes ------------------------------------------

TRAINER = CORPUS / "kubeflow-trainer-v2"


def _trainer() -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    docs = [
        (path.name, doc)
        for path in sorted(TRAINER.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict)
    ]
    runtimes = [d for _, d in docs if d["kind"] in ("TrainingRuntime", "ClusterTrainingRuntime")]
    return [(name, d, runtimes) for name, d in docs if d["kind"] == "TrainJob"]


@pytest.mark.skipif(not TRAINER.is_dir(), reason="shared corpus not found")
@pytest.mark.parametrize("with_runtimes", [True, False])
def test_catalog_trainjobs_with_their_runtimes_generated_equals_general(with_runtimes: bool) -> None:
    cases = _trainer()
    assert len(cases) >= 3
    for name, job, runtimes in cases:
        karta = catalog_by_gvk("trainer.kubeflow.org", "v1alpha1", "TrainJob")
        assert karta is not None
        bindings = resolve(karta, job, GENERATED, runtimes if with_runtimes else []).bindings
        assert with_runtimes == any(v is not None for v in bindings.values()), name
        assert_same(karta, job, bindings)
        _generated_everywhere(karta, job, bindings)


# --- the definition cache --------------------------------------------------------------------------


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.def")) if directory.is_dir() else []


def test_the_bound_functions_are_kept_apart_and_read_back_without_generating(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    karta = load_karta(yaml.safe_load(DEFINITION)).karta  # a new definition object: new plans
    bindings = _bindings()
    first = ComponentFactory(karta, OBJ, evaluator=_bound(GENERATED, bindings))
    for definition in karta.components:
        first.component(definition.name).extracted_instances()
    first.root().status()
    kept = _entries(cache)
    assert len(kept) == len(karta.components) + 1  # one extraction each, one status

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("generated although the definition cache holds the function")

    monkeypatch.setattr(status_generated, "_build", refuse)
    monkeypatch.setattr("karta.extract.compiled._Generator.build", refuse)
    monkeypatch.setattr(_codegen, "MODE", _codegen.parse_mode(""))  # not eager: first use is cached only
    again = load_karta(yaml.safe_load(DEFINITION)).karta
    assert _definitions_of(again) is not _definitions_of(karta)
    factory = ComponentFactory(again, OBJ, evaluator=_bound(GENERATED, bindings))
    for definition in again.components:
        component = factory.component(definition.name)
        component.extracted_instances()
        assert callable(component._plan.generated)
    assert factory.root().status() is not None and factory.root()._plan.status_generated is not None
    assert view(again, OBJ, _bound(GENERATED, bindings)) == view(again, OBJ, _bound(GENERAL, bindings))
    assert _entries(cache) == kept
