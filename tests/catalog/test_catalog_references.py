"""The catalog definitions that read related objects (extension E3) evaluated on the corpus with
their referenced objects: the TrainJobs with the trainer's runtimes (the gang of the trainer nodes,
GPUs per node from the runtime, the TrainJob's overrides as kubeflow/trainer v2.0.0 applies them),
and the InferenceServices with KServe's own serving runtimes (the runtime KServe selects, its
container merged with the model's as MergeRuntimeContainers does)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from catalog_view import (
    CORPUS,
    VENDORED_WORKLOADS,
    WORKLOADS,
    bound_evaluator,
    definition_for,
    documents,
    extract_view,
)

from karta.extract import ComponentFactory

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")

TRAINER = WORKLOADS / "kubeflow-trainer-v2"
GPU = "nvidia.com/gpu"


def _one(name: str, kind: str) -> dict[str, Any]:
    (doc,) = [d for d in documents(TRAINER / name) if d["kind"] == kind]
    return copy.deepcopy(doc)


def _runtimes() -> list[dict[str, Any]]:
    return [
        _one("clustertrainingruntime-torch-distributed.yaml", "ClusterTrainingRuntime"),
        _one("clustertrainingruntime-deepspeed-distributed.yaml", "ClusterTrainingRuntime"),
        _one("trainingruntime-and-trainjob-multi-step.yaml", "TrainingRuntime"),
    ]


def _view(job: dict[str, Any], refs: list[dict[str, Any]]) -> dict[str, Any]:
    karta = definition_for(job)
    assert karta is not None
    return extract_view(karta, job, refs)


def _node(view: dict[str, Any]) -> dict[str, Any]:
    (node,) = [c for c in view["components"] if c["name"] == "node"]
    (instance,) = node["instances"]
    return dict(instance)


@pytest.mark.parametrize(
    ("name", "runtime", "nodes"),
    [
        ("trainjob-multi-node.yaml", "ClusterTrainingRuntime/torch-distributed", 3),
        ("trainjob-runtime-patches.yaml", "ClusterTrainingRuntime/torch-distributed", 2),
        ("trainingruntime-and-trainjob-multi-step.yaml", "TrainingRuntime/torch-with-dataset-init", 2),
    ],
)
def test_corpus_trainjob_gang_is_its_trainer_nodes(name: str, runtime: str, nodes: int) -> None:
    view = _view(_one(name, "TrainJob"), _runtimes())
    bound = [v for v in view["references"].values() if v is not None]
    assert bound == [runtime]  # the runtimeRef's kind picks the reference, the other stays null
    assert _node(view)["desired"] == nodes
    assert [g["minMember"] for g in view["gang"]["gangs"]] == [nodes]


def test_gpus_per_node_come_from_the_runtime_and_resources_per_node_replace_them() -> None:
    runtimes = _runtimes()
    node = runtimes[0]["spec"]["template"]["spec"]["replicatedJobs"][0]
    node["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {GPU: 4}}
    job = _one("trainjob-multi-node.yaml", "TrainJob")
    view = _view(job, runtimes)
    assert _node(view)["gpusPerPod"] == 4 and view["gpus"] == 12
    # spec.trainer.resourcesPerNode replaces the node container's resources (trainer's Builder.Trainer)
    job["spec"]["trainer"]["resourcesPerNode"] = {"limits": {GPU: 2}}
    view = _view(job, runtimes)
    assert _node(view)["gpusPerPod"] == 2 and view["gpus"] == 6


def test_runtime_numnodes_unless_the_trainjob_sets_it() -> None:
    runtimes = _runtimes()
    runtimes[0]["spec"]["mlPolicy"]["numNodes"] = 4
    job = _one("trainjob-multi-node.yaml", "TrainJob")
    del job["spec"]["trainer"]["numNodes"]
    assert _node(_view(job, runtimes))["desired"] == 4
    # the runtimeRef's kind defaults to ClusterTrainingRuntime, its apiGroup to trainer.kubeflow.org
    job["spec"]["runtimeRef"] = {"name": "torch-distributed"}
    assert _node(_view(job, runtimes))["desired"] == 4
    # another apiGroup: no runtime is read
    job["spec"]["runtimeRef"]["apiGroup"] = "example.com"
    assert _view(job, runtimes)["references"] == {"runtime": None, "clusterRuntime": None}


def test_mpi_runtime_launcher_as_node_takes_one_node() -> None:
    job = _one("trainjob-multi-node.yaml", "TrainJob")
    job["spec"]["runtimeRef"]["name"] = "deepspeed-distributed"  # mpi, runLauncherAsNode: true
    assert _node(_view(job, _runtimes()))["desired"] == 2  # trainer mpi.go: numNodes - 1
    job["spec"]["trainer"]["numNodes"] = 1
    assert _node(_view(job, _runtimes()))["desired"] == 1  # at least 1
    del job["spec"]["trainer"]["numNodes"]
    assert _node(_view(job, _runtimes()))["desired"] == 1  # the Job's parallelism, unset: 1


def test_without_the_runtime_only_what_the_trainjob_says() -> None:
    job = _one("trainjob-runtime-patches.yaml", "TrainJob")
    node = _node(_view(job, []))
    assert node["desired"] == 2  # spec.trainer.numNodes
    assert node["gpusPerPod"] == 0
    del job["spec"]["trainer"]["numNodes"]
    assert "scale" in _node(_view(job, [])) and _node(_view(job, []))["scale"]["replicas"] is None


# --- KServe InferenceService through its serving runtime ----------------------------------------------

KSERVE = WORKLOADS / "kserve"
RUNTIMES = VENDORED_WORKLOADS / "kserve-runtimes"


def _kserve_runtimes() -> list[dict[str, Any]]:
    return [copy.deepcopy(d) for f in sorted(RUNTIMES.glob("*.yaml")) for d in documents(f)]


def _isvc(name: str) -> dict[str, Any]:
    (doc,) = documents(KSERVE / name)
    return copy.deepcopy(doc)


def _predictor(job: dict[str, Any], refs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The predictor's instance view and its fragmented pod spec."""
    karta = definition_for(job)
    assert karta is not None
    view = extract_view(karta, job, refs)
    (predictor,) = [c for c in view["components"] if c["name"] == "predictor"]
    evaluator, _ = bound_evaluator(karta, job, refs)
    fragment = ComponentFactory(karta, job, evaluator=evaluator).component("predictor").fragmented_pod_specs()
    assert fragment is not None
    return predictor["instances"][0], fragment[""]


def test_corpus_huggingface_isvc_is_served_by_kserves_huggingface_runtime() -> None:
    """KServe's automatic selection: the multi-node runtime (priority 2) needs a workerSpec, so the
    single-node kserve-huggingfaceserver serves it; the model's args follow the runtime's."""
    job = _isvc("isvc-huggingface-llama2-gpu.yaml")
    instance, fragment = _predictor(job, _kserve_runtimes())
    container = fragment["container"]
    assert container["image"] == "huggingfaceserver:replace" and container["name"] == "kserve-container"
    assert container["args"] == [
        "--model_name={{.Name}}",
        "--model_name=llama2",
        "--model_dir=/mnt/models",
        "--backend=huggingface",
    ]
    # resources merged per key: the model's limits (cpu 6, 1 GPU) over the runtime's (cpu 1)
    assert container["resources"]["limits"] == {"cpu": "6", "memory": "24Gi", "nvidia.com/gpu": "1"}
    assert instance["gpusPerPod"] == 1
    assert fragment["annotations"] == {
        "prometheus.kserve.io/port": "8080",
        "prometheus.kserve.io/path": "/metrics",
    }


def test_gpus_of_the_runtime_reach_the_pod_and_the_gang() -> None:
    job = _isvc("isvc-huggingface-llama2-gpu.yaml")
    del job["spec"]["predictor"]["model"]["resources"]
    job["spec"]["predictor"]["minReplicas"] = 2
    runtimes = _kserve_runtimes()
    (hf,) = [r for r in runtimes if r["metadata"]["name"] == "kserve-huggingfaceserver"]
    hf["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "2"
    karta = definition_for(job)
    assert karta is not None
    view = extract_view(karta, job, runtimes)
    assert view["gpus"] == 4 and [g["minMember"] for g in view["gang"]["gangs"]] == [2]


def test_named_runtime_namespace_first_then_cluster() -> None:
    job = _isvc("isvc-huggingface-llama2-gpu.yaml")
    job["metadata"]["namespace"] = "team"
    job["spec"]["predictor"]["model"]["runtime"] = "kserve-huggingfaceserver"
    runtimes = _kserve_runtimes()
    own = copy.deepcopy(next(r for r in runtimes if r["metadata"]["name"] == "kserve-huggingfaceserver"))
    own["kind"] = "ServingRuntime"
    own["metadata"]["namespace"] = "team"
    own["spec"]["containers"][0]["image"] = "team/hf:1"
    assert _predictor(job, [*runtimes, own])[1]["container"]["image"] == "team/hf:1"
    assert _predictor(job, runtimes)[1]["container"]["image"] == "huggingfaceserver:replace"
    # another namespace's ServingRuntime is not this one's
    own["metadata"]["namespace"] = "other"
    assert _predictor(job, [*runtimes, own])[1]["container"]["image"] == "huggingfaceserver:replace"


def test_autoselect_priority_protocol_and_disabled() -> None:
    job = _isvc("isvc-huggingface-llama2-gpu.yaml")
    job["spec"]["predictor"]["model"]["modelFormat"] = {"name": "sklearn"}
    runtimes = _kserve_runtimes()
    image = lambda refs: _predictor(job, refs)[1]["container"].get("image")  # noqa: E731
    assert image(runtimes) == "kserve-sklearnserver:replace"  # predictiveserver: autoSelect false
    (pred,) = [r for r in runtimes if r["metadata"]["name"] == "kserve-predictiveserver"]
    pred["spec"]["supportedModelFormats"][0]["autoSelect"] = True  # priority 3 > 1
    assert image(runtimes) == "kserve-predictiveserver:replace"
    pred["spec"]["disabled"] = True
    assert image(runtimes) == "kserve-sklearnserver:replace"
    job["spec"]["predictor"]["model"]["protocolVersion"] = "grpc-v2"  # neither supports it
    assert image(runtimes) is None  # KServe: NoSupportingRuntime; the model's own container only
    # a namespaced runtime comes before every cluster runtime, whatever their priority
    job["spec"]["predictor"]["model"]["protocolVersion"] = "v1"
    pred["spec"]["disabled"] = False
    mine = copy.deepcopy(next(r for r in runtimes if r["metadata"]["name"] == "kserve-sklearnserver"))
    mine["kind"] = "ServingRuntime"
    mine["metadata"] = {"name": "mine", "namespace": "default"}
    mine["spec"]["supportedModelFormats"][0]["priority"] = 0
    mine["spec"]["containers"][0]["image"] = "mine:1"
    job["metadata"]["namespace"] = "default"
    assert image([*runtimes, mine]) == "mine:1"


def test_without_the_runtime_only_what_the_isvc_says() -> None:
    job = _isvc("isvc-huggingface-llama2-gpu.yaml")
    instance, fragment = _predictor(job, [])
    assert "image" not in fragment["container"] and instance["gpusPerPod"] == 1
    # a predictor with its own containers never reads a runtime
    custom = _isvc("isvc-custom-container.yaml")
    assert _predictor(custom, _kserve_runtimes())[1] == _predictor(custom, [])[1]
