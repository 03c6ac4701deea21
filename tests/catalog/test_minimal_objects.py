"""Every built-in definition extracts without error on the smallest object its kind admits.

The minimal objects are generated from the CRDs of the corpus (tests/catalog/minimal_objects.py:
only required properties, each with its smallest valid value), then varied one optional list or map
at a time (absent, empty, null, and present with one minimal element). Each variant runs through
the full extraction the corpus goldens pin (catalog_view.extract_view: components, instances, pod
templates and specs, scale, strict status, gang plan) plus every component's extracted instances;
any exception is a failure. Kinds whose CRD is not in the corpus use hand-written minimal objects
(minimal_objects.HANDWRITTEN, each with its reason).
"""

from __future__ import annotations

from typing import Any

import pytest
from catalog_view import bound_evaluator, extract_view
from minimal_objects import (
    CRDS,
    HANDWRITTEN,
    crd_schema,
    jq_names,
    minimal_object,
    schema_variants,
    variants_for,
)

from karta.catalog import catalog_definitions
from karta.extract import ComponentFactory
from karta.model import Karta

pytestmark = pytest.mark.skipif(not CRDS.is_dir(), reason=f"corpus CRDs not found at {CRDS}")

DEFINITIONS = {karta.name: karta for karta in catalog_definitions()}

# Catalog definitions without a CRD in the corpus (/work/shared/corpus/crds): the seven built-in
# kinds, and six CRDs the corpus does not hold (agent-sandbox, the kubeflow/trainer v1.9 JAX,
# Paddle and XGBoost jobs, and both Notebook versions). Each has a hand-written minimal object and
# variant list in minimal_objects.HANDWRITTEN, whose third field gives the reason.
NOT_IN_CORPUS = frozenset(
    {
        "core-pod-v1",
        "apps-deployment-v1",
        "apps-replicaset-v1",
        "apps-statefulset-v1",
        "apps-daemonset-v1",
        "batch-job-v1",
        "batch-cronjob-v1",
        "agents-x-k8s-io-sandbox-v1beta1",
        "kubeflow-org-jaxjob-v1",
        "kubeflow-org-paddlejob-v1",
        "kubeflow-org-xgboostjob-v1",
        "kubeflow-org-notebook-v1",
        "kubeflow-org-notebook-v1beta1",
    }
)

CASES: list[tuple[str, str, dict[str, Any]]] = (
    [(name, v.name, v.obj) for name, karta in DEFINITIONS.items() for v in variants_for(karta)]
    if CRDS.is_dir()
    else []
)


def _root(karta: Karta) -> tuple[str, str, str]:
    assert karta.root_gvk is not None
    return karta.root_gvk.group, karta.root_gvk.kind, karta.root_gvk.version


def test_every_definition_has_a_crd_or_a_hand_written_object() -> None:
    missing = {name for name, karta in DEFINITIONS.items() if crd_schema(*_root(karta)) is None}
    assert missing == NOT_IN_CORPUS == set(HANDWRITTEN), "a CRD appeared or went: update HANDWRITTEN"


def test_every_definition_has_variants() -> None:
    names = {name for name, _, _ in CASES}
    assert names == set(DEFINITIONS)
    assert len(CASES) >= 3 * len(DEFINITIONS)


def test_generated_minimal_ray_job_is_the_smallest_object() -> None:
    schema = crd_schema("ray.io", "RayJob", "v1")
    assert schema is not None
    assert minimal_object(schema, "ray.io/v1", "RayJob") == {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "minimal", "namespace": "default"},
    }


def test_head_only_ray_job_is_a_variant() -> None:
    """A RayJob whose cluster has a head group and no worker groups (valid for KubeRay)."""
    head_only = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "minimal", "namespace": "default"},
        "spec": {
            "rayClusterSpec": {
                "headGroupSpec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}
            }
        },
    }
    found = [variant for name, variant, obj in CASES if name == "ray-io-rayjob-v1" and obj == head_only]
    assert found, "no head-only RayJob variant"
    view = extract_view(DEFINITIONS["ray-io-rayjob-v1"], head_only)
    instances = {c["name"]: [i["id"] for i in c["instances"]] for c in view["components"]}
    assert instances["worker"] == []
    assert view["desiredPods"] == 1


def test_volcano_task_without_a_name_gets_the_webhook_default() -> None:
    """Volcano's admission webhook names an unnamed task ``default<index>`` (mutate_job.go)."""
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "minimal", "namespace": "default"},
        "spec": {"tasks": [{"name": "ps", "replicas": 1}, {"replicas": 2}, {"name": "", "replicas": 1}]},
    }
    view = extract_view(DEFINITIONS["batch-volcano-sh-job-v1alpha1"], job)
    task = next(c for c in view["components"] if c["name"] == "task")
    assert [i["id"] for i in task["instances"]] == ["ps", "default1", "default2"]


@pytest.mark.parametrize(("name", "variant", "obj"), CASES, ids=[f"{n}:{v}" for n, v, _ in CASES])
def test_minimal_object_extracts(name: str, variant: str, obj: dict[str, Any]) -> None:
    karta = DEFINITIONS[name]
    view = extract_view(karta, obj)
    assert view["definition"] == name
    factory = ComponentFactory(karta, obj, evaluator=bound_evaluator(karta, obj)[0])
    for definition in karta.components:
        factory.component(definition.name).extracted_instances()


# The InferenceService through its serving runtime (extension E3): every variant of the smallest
# ServingRuntime and ClusterServingRuntime (vendored CRDs), as it is and made to serve the model
# (format "a", autoSelect, a kserve-container), named by the predictor and selected automatically,
# extracts without error under odd shapes of both sides.
ISVC = "serving-kserve-io-inferenceservice-v1beta1"
_PREDICTORS: list[dict[str, Any]] = [
    {"model": {"modelFormat": {"name": "a"}}},
    {
        "model": {
            "modelFormat": {"name": "a", "version": "1"},
            "args": ["x"],
            "env": [{"name": "E", "value": "1"}],
            "resources": {"limits": {"nvidia.com/gpu": "1"}},
        },
        "containers": [{"name": "transformer-container", "image": "t"}, {"name": "side", "image": "s"}],
    },
]


def _serving(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` made to serve format "a": its supported formats and first container replaced."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return obj
    containers = spec.get("containers")
    first = containers[0] if isinstance(containers, list) and containers else {}
    first = {**first, "name": "kserve-container"} if isinstance(first, dict) else first
    rest = containers[1:] if isinstance(containers, list) else []
    formats = [{"name": "a", "version": "1", "autoSelect": True, "priority": 1}]
    return {**obj, "spec": {**spec, "supportedModelFormats": formats, "containers": [first, *rest]}}


def _runtime_cases() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for kind in ("ServingRuntime", "ClusterServingRuntime"):
        schema = crd_schema("serving.kserve.io", kind, "v1alpha1")
        if schema is None:
            continue
        base = minimal_object(schema, "serving.kserve.io/v1alpha1", kind)
        for variant in schema_variants(schema, base, jq_names(DEFINITIONS[ISVC])):
            out.append((f"{kind}:{variant.name}", variant.obj))
            out.append((f"{kind}:{variant.name}:serving", _serving(variant.obj)))
    return out


RUNTIME_CASES = _runtime_cases() if CRDS.is_dir() else []


def test_runtime_variants_come_from_the_vendored_crds() -> None:
    assert len(RUNTIME_CASES) >= 100
    assert {name.split(":")[0] for name, _ in RUNTIME_CASES} == {"ServingRuntime", "ClusterServingRuntime"}


@pytest.mark.parametrize(("variant", "runtime"), RUNTIME_CASES, ids=[n for n, _ in RUNTIME_CASES])
def test_minimal_runtime_extracts(variant: str, runtime: dict[str, Any]) -> None:
    karta = DEFINITIONS[ISVC]
    for predictor in _PREDICTORS:
        for named in (False, True):
            model = {**predictor["model"], **({"runtime": "minimal"} if named else {})}
            isvc = {
                "apiVersion": "serving.kserve.io/v1beta1",
                "kind": "InferenceService",
                "metadata": {"name": "minimal", "namespace": "default"},
                "spec": {"predictor": {**predictor, "model": model}},
            }
            view = extract_view(karta, isvc, [runtime])
            assert view["definition"] == ISVC, variant
            evaluator = bound_evaluator(karta, isvc, [runtime])[0]
            factory = ComponentFactory(karta, isvc, evaluator=evaluator)
            for definition in karta.components:
                factory.component(definition.name).extracted_instances()


@pytest.mark.parametrize("kind", ["ServingRuntime", "ClusterServingRuntime"])
def test_a_serving_minimal_runtime_is_the_one_merged(kind: str) -> None:
    (runtime,) = [r for n, r in RUNTIME_CASES if n == f"{kind}:spec=minimal:serving"]
    karta = DEFINITIONS[ISVC]
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "minimal", "namespace": "default"},
        "spec": {"predictor": _PREDICTORS[1]},
    }
    factory = ComponentFactory(karta, isvc, evaluator=bound_evaluator(karta, isvc, [runtime])[0])
    fragments = factory.component("predictor").fragmented_pod_specs()
    assert fragments is not None
    container = fragments[""]["container"]
    assert container["name"] == "kserve-container" and container["env"] == [{"name": "E", "value": "1"}]
    assert [c["name"] for c in fragments[""]["containers"]] == ["transformer-container", "side"]
