"""The catalog definitions that read related objects (extension E3) evaluated on the corpus with
their referenced objects: the TrainJobs with the trainer's runtimes (the gang of the trainer nodes,
GPUs per node from the runtime, the TrainJob's overrides as kubeflow/trainer v2.0.0 applies them)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from catalog_view import CORPUS, WORKLOADS, definition_for, documents, extract_view

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
