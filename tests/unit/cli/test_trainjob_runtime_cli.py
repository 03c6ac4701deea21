"""Issue 26's done-when, offline: ``kli gang -f trainjob.yaml --ref runtime.yaml --backend
workload-api`` prints the gang the runtime implies (the catalog TrainJob reads its runtime through
extension E3), and ``kli describe`` the runtime's nodes and GPUs; the corpus TrainJob and its
ClusterTrainingRuntime, the runtime also with GPUs per node (a copy made here)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.unit.cli.conftest import Result

Kli = Callable[..., Result]
TRAINER = (
    Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "workloads" / "kubeflow-trainer-v2"
)
TRAINJOB = (
    TRAINER / "trainjob-multi-node.yaml"
)  # runtimeRef ClusterTrainingRuntime torch-distributed, numNodes 3
RUNTIME = TRAINER / "clustertrainingruntime-torch-distributed.yaml"

pytestmark = pytest.mark.skipif(not TRAINER.is_dir(), reason=f"shared corpus not found at {TRAINER}")


def _gpu_runtime(tmp_path: Path, gpus: int) -> Path:
    """The corpus runtime with ``gpus`` nvidia.com/gpu on its node container."""
    runtime: dict[str, Any] = copy.deepcopy(yaml.safe_load(RUNTIME.read_text()))
    (node,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    (container,) = node["template"]["spec"]["template"]["spec"]["containers"]
    container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    path = tmp_path / "runtime.yaml"
    path.write_text(yaml.safe_dump(runtime))
    return path


def test_gang_workload_api_is_the_runtime_nodes(kli: Kli) -> None:
    r = kli("gang", "-f", str(TRAINJOB), "--ref", str(RUNTIME), "--backend", "workload-api")
    assert r.code == 0, r.err
    objects = [o for o in yaml.safe_load_all(r.out) if o]
    assert [o["kind"] for o in objects] == ["Workload", "PodGroup"]
    workload, group = objects
    (template,) = workload["spec"]["podGroupTemplates"]
    assert template["schedulingPolicy"]["gang"]["minCount"] == 3
    assert group["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3
    assert "note:" not in r.err


def test_runtime_numnodes_when_the_trainjob_leaves_it(kli: Kli, tmp_path: Path) -> None:
    job = yaml.safe_load(TRAINJOB.read_text())
    del job["spec"]["trainer"]["numNodes"]
    runtime = yaml.safe_load(RUNTIME.read_text())
    runtime["spec"]["mlPolicy"]["numNodes"] = 5
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    (tmp_path / "rt.yaml").write_text(yaml.safe_dump(runtime))
    r = kli(
        "gang", "-f", str(tmp_path / "job.yaml"), "--ref", str(tmp_path / "rt.yaml"), "--backend", "volcano"
    )
    assert r.code == 0, r.err
    (group,) = [o for o in yaml.safe_load_all(r.out) if o]
    assert group["spec"]["minMember"] == 5
    # without the runtime the TrainJob says nothing of its nodes: no gang size guessed
    r = kli("inspect", "-f", str(tmp_path / "job.yaml"), "-o", "json")
    assert r.code == 0, r.err
    (node,) = [c for c in json.loads(r.out)["components"] if c["name"] == "node"]
    assert node["instances"][0]["scale"] == {"replicas": None, "minReplicas": None, "maxReplicas": None}
    assert "reference 'clusterRuntime'" in r.err and "bound as null" in r.err


def test_describe_counts_the_runtime_gpus(kli: Kli, tmp_path: Path) -> None:
    r = kli("describe", "-f", str(TRAINJOB), "--ref", str(_gpu_runtime(tmp_path, 8)), "-o", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["resources"] == {"gpus": 24, "cpuMillis": 0, "memoryBytes": 0, "pods": 3}


def test_without_the_runtime_describe_is_the_trainjob_alone_with_a_note(kli: Kli) -> None:
    r = kli("describe", "-f", str(TRAINJOB), "-o", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["resources"]["gpus"] == 0
    assert "no given object is a ClusterTrainingRuntime" in r.err and "torch-distributed" in r.err
