"""Issue 26 item 4, on the real API server: the catalog TrainJob definition reads its
ClusterTrainingRuntime (extension E3) live, with the trainer's real CRDs installed.

The corpus ClusterTrainingRuntime ``torch-distributed`` (a copy with a unique name and 8 GPUs per
node added here) and TrainJobs naming it:

- ``kli describe trainjob/NAME`` reads the runtime through the API: its node count and GPUs;
- the controller (in-process, coscheduling) renders each gang from the runtime, ``minMember`` =
  the trainer's node count (the TrainJob's numNodes, else the runtime's mlPolicy.numNodes);
  editing the runtime's mlPolicy.numNodes re-renders every TrainJob that leaves numNodes to it;
- deleting the runtime: a ``ReferenceNotFound`` event and no stale gang. Without the runtime the
  definition gives what the TrainJob alone says: its own numNodes when set (that gang stays), else
  no replicas and no pod template, so no gang at all (the runtime's size is never guessed).
"""

from __future__ import annotations

import contextlib
import copy
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.cli.main import main
from karta.errors import ApiError
from karta.kube import KubeClient

from ..kubehttp import KubeHTTP, load_manifests
from .gangs_support import (
    client_for,
    covers,
    describe_live,
    events_for,
    eventually,
    group_objects,
    install_crds,
    running_controller,
    wait_served,
)

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
TRAINER = Path("workloads") / "kubeflow-trainer-v2"
CRD_FILES = (
    "trainer.kubeflow.org_trainjobs.yaml",
    "trainer.kubeflow.org_clustertrainingruntimes.yaml",
    "scheduling.x-k8s.io_podgroups.yaml",
)


def _runtime(corpus: Path, name: str, num_nodes: int = 1) -> dict[str, Any]:
    """The corpus torch-distributed runtime named ``name`` (its mlPolicy.numNodes 1), 8 nvidia.com/gpu
    on its node container."""
    (runtime,) = load_manifests(corpus / TRAINER / "clustertrainingruntime-torch-distributed.yaml")
    runtime = copy.deepcopy(runtime)
    runtime["metadata"] = {"name": name}
    (node,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    (container,) = node["template"]["spec"]["template"]["spec"]["containers"]
    container["resources"] = {"limits": {"nvidia.com/gpu": "8"}}
    runtime["spec"]["mlPolicy"]["numNodes"] = num_nodes
    return runtime


def _trainjob(corpus: Path, name: str, runtime: str, num_nodes: int | None) -> dict[str, Any]:
    """The corpus multi-node TrainJob naming ``runtime``; ``num_nodes`` None: left to the runtime."""
    (job,) = load_manifests(corpus / TRAINER / "trainjob-multi-node.yaml")
    job = copy.deepcopy(job)
    job["metadata"] = {"name": name}
    job["spec"]["runtimeRef"]["name"] = runtime
    if num_nodes is None:
        del job["spec"]["trainer"]["numNodes"]
    else:
        job["spec"]["trainer"]["numNodes"] = num_nodes
    return job


@pytest.fixture(scope="module")
def kube(cluster: KubeHTTP, corpus: Path) -> Iterator[KubeClient]:
    install_crds(cluster, corpus, CRD_FILES)
    client = client_for(cluster)
    wait_served(
        client,
        [
            (GROUP, VERSION, "TrainJob"),
            (GROUP, VERSION, "ClusterTrainingRuntime"),
            ("scheduling.x-k8s.io", "v1alpha1", "PodGroup"),
        ],
    )
    yield client
    client.close()


@pytest.fixture
def runtime(kube: KubeClient, corpus: Path) -> Iterator[str]:
    """A fresh ClusterTrainingRuntime (cluster-scoped: a unique name), removed afterwards."""
    name = f"torch-distributed-{uuid.uuid4().hex[:6]}"
    kube.create(_runtime(corpus, name))
    yield name
    with contextlib.suppress(ApiError):  # the test deleted it
        kube.delete(kube.discovery.for_gvk(GROUP, VERSION, "ClusterTrainingRuntime"), name)


def _minimums(kube: KubeClient, ns: str) -> dict[str, int]:
    return {
        o["metadata"]["ownerReferences"][0]["name"]: o["spec"]["minMember"]
        for o in group_objects(kube, "coscheduling", ns)
    }


def _describe(cluster: KubeHTTP, ns: str, name: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return describe_live(cluster, ns, f"trainjob/{name}", capsys)


def _nodes(doc: dict[str, Any]) -> Any:
    (node,) = [c for c in doc["components"] if c["name"] == "node"]
    return node["replicas"]["desired"]


def test_kli_describe_reads_the_cluster_training_runtime(
    cluster: KubeHTTP,
    kube: KubeClient,
    ns: str,
    runtime: str,
    corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kube.create(_trainjob(corpus, "own", runtime, 3), namespace=ns)
    kube.create(_trainjob(corpus, "left", runtime, None), namespace=ns)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    own = _describe(cluster, ns, "own", capsys)
    assert own["resources"]["gpus"] == 24 and own["resources"]["pods"] == 3, own  # 3 nodes x 8, runtime GPUs
    assert _nodes(own) == 3, own
    left = _describe(cluster, ns, "left", capsys)
    assert left["resources"]["gpus"] == 8 and _nodes(left) == 1, left  # the runtime's mlPolicy.numNodes 1
    # The runtime gone: the TrainJob alone (no nodes, no GPUs guessed), the missing runtime said.
    kube.delete(kube.discovery.for_gvk(GROUP, VERSION, "ClusterTrainingRuntime"), runtime)
    capsys.readouterr()
    code = main(
        ["describe", "trainjob/left", "-n", ns, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"ClusterTrainingRuntime/{runtime} not found" in err, err
    alone = yaml.safe_load(out)
    # no replicas: describe's desired is the format's default 1 (docs/spec/format.md#workload-tree step 7), no
    # pod template
    assert alone["resources"]["gpus"] == 0 and _nodes(alone) == 1, out


def test_controller_renders_the_gang_from_the_cluster_training_runtime(
    cluster: KubeHTTP, kube: KubeClient, ns: str, runtime: str, corpus: Path, tmp_path: Path
) -> None:
    with running_controller(cluster, backend="coscheduling", namespace=ns, definitions_dir=tmp_path):
        kube.create(_trainjob(corpus, "a", runtime, None), namespace=ns)
        kube.create(_trainjob(corpus, "b", runtime, None), namespace=ns)
        kube.create(_trainjob(corpus, "c", runtime, 3), namespace=ns)
        started = time.monotonic()
        eventually(lambda: _minimums(kube, ns) == {"a": 1, "b": 1, "c": 3}, what="gangs from the runtime")
        print(f"\nthree TrainJobs -> gangs in {time.monotonic() - started:.2f}s")
        # Editing mlPolicy.numNodes re-renders every TrainJob that leaves numNodes to the runtime.
        rtype = kube.discovery.for_gvk(GROUP, VERSION, "ClusterTrainingRuntime")
        started = time.monotonic()
        kube.patch(rtype, runtime, {"spec": {"mlPolicy": {"numNodes": 4}}})
        eventually(lambda: _minimums(kube, ns) == {"a": 4, "b": 4, "c": 3}, what="gangs after the edit")
        print(f"runtime numNodes 1 -> 4: both gangs re-rendered in {time.monotonic() - started:.2f}s")
        # Deleting the runtime: the event, and the gang of what the TrainJob alone says.
        started = time.monotonic()
        kube.delete(rtype, runtime)
        eventually(lambda: _minimums(kube, ns) == {"c": 3}, what="gangs after the deletion")
        print(f"runtime deleted -> stale gangs removed in {time.monotonic() - started:.2f}s")
        for name in ("a", "b", "c"):
            eventually(lambda n=name: events_for(kube, ns, n, "ReferenceNotFound"), what=f"{name}'s event")
        (event, *_) = events_for(kube, ns, "a", "ReferenceNotFound")
        assert f"ClusterTrainingRuntime/{runtime} not found" in event["message"], event["message"]
        # The runtime back (2 nodes now): the gangs with it.
        kube.create(_runtime(corpus, runtime, 2))
        eventually(lambda: _minimums(kube, ns) == {"a": 2, "b": 2, "c": 3}, what="gangs after re-creation")


def test_the_controller_gives_the_gang_kli_prints_offline(
    cluster: KubeHTTP,
    kube: KubeClient,
    ns: str,
    runtime: str,
    corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 26's done-when: ``kli gang -f trainjob.yaml --ref runtime.yaml --backend workload-api``
    prints the gang the runtime implies, and the same TrainJob in the cluster gets that gang from
    the controller (workload-api backend)."""
    job = _trainjob(corpus, "multi-node", runtime, 3)
    (tmp_path / "trainjob.yaml").write_text(yaml.safe_dump(job))
    (tmp_path / "runtime.yaml").write_text(yaml.safe_dump(_runtime(corpus, runtime)))
    capsys.readouterr()
    code = main(
        [
            "gang",
            "-f",
            str(tmp_path / "trainjob.yaml"),
            "--ref",
            str(tmp_path / "runtime.yaml"),
            "--backend",
            "workload-api",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    printed = {o["kind"]: o for o in yaml.safe_load_all(out) if o}
    assert sorted(printed) == ["PodGroup", "Workload"], out
    (template,) = printed["Workload"]["spec"]["podGroupTemplates"]
    assert template["schedulingPolicy"]["gang"]["minCount"] == 3, out
    directory = tmp_path / "defs"
    directory.mkdir()
    with running_controller(cluster, backend="workload-api", namespace=ns, definitions_dir=directory):
        kube.create(job, namespace=ns)

        def live() -> dict[str, dict[str, Any]] | None:
            objects = {o["kind"]: o for o in group_objects(kube, "workload-api", ns)}
            return objects if sorted(objects) == ["PodGroup", "Workload"] else None

        objects = eventually(live, what="the TrainJob's Workload and PodGroup")
        for kind, desired in printed.items():
            assert covers(objects[kind]["spec"], desired["spec"]), (
                kind,
                objects[kind]["spec"],
                desired["spec"],
            )
            assert objects[kind]["metadata"]["name"] == desired["metadata"]["name"], kind
