"""Issue 26 item 3 (second half) on the real API server: the catalog InferenceService definition
reads its serving runtime (extension E3) live, with KServe's real CRDs installed (no KServe operator
runs: the objects are what a user applies).

KServe's own ClusterServingRuntime ``kserve-huggingfaceserver`` (a copy with a unique name, a
priority above the stock one and 2 GPUs on its kserve-container) and the corpus's huggingface
InferenceService without resources of its own:

- ``kli describe inferenceservice/NAME`` reads the runtime through the API (a list of every
  runtime: KServe's automatic selection): its GPUs per predictor pod; a ServingRuntime of the
  namespace named by the predictor comes before the cluster's;
- the controller (in-process, coscheduling, with its web view) renders the gang (minReplicas, the
  runtime changes no count) and reads the runtime from its shared cache: the web view's row shows
  the runtime's GPUs; editing the runtime re-reads it (the row follows), deleting it leaves what
  the InferenceService alone says, and the gang stays.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.errors import ApiError
from karta.kube import KubeClient
from karta.ui import UiServer

from ..kubehttp import KubeHTTP, load_manifests
from .gangs_support import (
    client_for,
    describe_live,
    eventually,
    group_objects,
    running_controller,
    wait_served,
)

GROUP = "serving.kserve.io"
VENDORED = Path(__file__).resolve().parents[2] / "corpus"
RUNTIME_FILE = VENDORED / "workloads" / "kserve-runtimes" / "kserve-huggingfaceserver.yaml"
GPU = "nvidia.com/gpu"


@pytest.fixture(scope="module")
def kube(cluster: KubeHTTP, corpus: Path) -> Iterator[KubeClient]:
    for path in (
        corpus / "crds" / "serving.kserve.io_inferenceservices.yaml",
        VENDORED / "crds" / "serving.kserve.io_servingruntimes.yaml",
        VENDORED / "crds" / "serving.kserve.io_clusterservingruntimes.yaml",
        corpus / "crds" / "scheduling.x-k8s.io_podgroups.yaml",
    ):
        (crd,) = load_manifests(path)
        cluster.ensure_crd(crd)
    client = client_for(cluster)
    wait_served(
        client,
        [
            (GROUP, "v1beta1", "InferenceService"),
            (GROUP, "v1alpha1", "ServingRuntime"),
            (GROUP, "v1alpha1", "ClusterServingRuntime"),
            ("scheduling.x-k8s.io", "v1alpha1", "PodGroup"),
        ],
    )
    yield client
    client.close()


def _runtime(name: str, gpus: int, kind: str = "ClusterServingRuntime") -> dict[str, Any]:
    """KServe's huggingface runtime named ``name``: priority 9 (above the stock runtime's, should the
    cluster have it), ``gpus`` GPUs on its kserve-container."""
    (runtime,) = load_manifests(RUNTIME_FILE)
    runtime = copy.deepcopy(runtime)
    runtime["kind"] = kind
    runtime["metadata"] = {"name": name}
    runtime["spec"]["supportedModelFormats"][0]["priority"] = 9
    (container,) = runtime["spec"]["containers"]
    container["resources"]["limits"][GPU] = str(gpus)
    container["resources"]["requests"][GPU] = str(gpus)
    return runtime


def _isvc(corpus: Path, name: str, *, runtime: str | None = None, replicas: int = 2) -> dict[str, Any]:
    """The corpus huggingface InferenceService without resources of its own (the runtime's apply)."""
    (isvc,) = load_manifests(corpus / "workloads" / "kserve" / "isvc-huggingface-llama2-gpu.yaml")
    isvc = copy.deepcopy(isvc)
    isvc["metadata"] = {"name": name}
    model = isvc["spec"]["predictor"]["model"]
    del model["resources"]
    if runtime is not None:
        model["runtime"] = runtime
    isvc["spec"]["predictor"]["minReplicas"] = replicas
    return isvc


def _cluster_runtimes(kube: KubeClient) -> Any:
    return kube.discovery.for_gvk(GROUP, "v1alpha1", "ClusterServingRuntime")


@pytest.fixture
def runtime(kube: KubeClient) -> Iterator[str]:
    """A fresh ClusterServingRuntime (cluster-scoped: a unique name), removed afterwards."""
    name = f"hf-gpu-{uuid.uuid4().hex[:6]}"
    kube.create(_runtime(name, 2))
    yield name
    with contextlib.suppress(ApiError):  # the test deleted it
        kube.delete(_cluster_runtimes(kube), name)


def _describe(cluster: KubeHTTP, ns: str, name: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return describe_live(cluster, ns, f"inferenceservice/{name}", capsys)


def test_kli_describe_reads_the_serving_runtime(
    cluster: KubeHTTP,
    kube: KubeClient,
    ns: str,
    runtime: str,
    corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    kube.create(_isvc(corpus, "auto"), namespace=ns)
    auto = _describe(cluster, ns, "auto", capsys)
    assert auto["resources"]["gpus"] == 4 and auto["resources"]["pods"] == 2, auto  # 2 x the runtime's 2
    # Named: the namespace's ServingRuntime of that name before the ClusterServingRuntime.
    kube.create(_isvc(corpus, "named", runtime=runtime, replicas=1), namespace=ns)
    assert _describe(cluster, ns, "named", capsys)["resources"]["gpus"] == 2
    kube.create(_runtime(runtime, 8, kind="ServingRuntime"), namespace=ns)
    assert _describe(cluster, ns, "named", capsys)["resources"]["gpus"] == 8
    # the namespace's runtimes come first in the automatic selection too
    assert _describe(cluster, ns, "auto", capsys)["resources"]["gpus"] == 16
    # The namespace's deleted, the cluster's disabled: no runtime serves either (KServe:
    # NoSupportingRuntime / RuntimeDisabled), the InferenceService alone (no resources of its own).
    kube.delete(kube.discovery.for_gvk(GROUP, "v1alpha1", "ServingRuntime"), runtime, namespace=ns)
    kube.patch(_cluster_runtimes(kube), runtime, {"spec": {"disabled": True}})
    for name in ("auto", "named"):
        alone = _describe(cluster, ns, name, capsys)
        assert alone["resources"]["gpus"] == 0, alone


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


def test_controller_reads_the_runtime_from_its_cache_and_follows_edits(
    cluster: KubeHTTP, kube: KubeClient, ns: str, runtime: str, corpus: Path, tmp_path: Path
) -> None:
    with running_controller(
        cluster,
        backend="coscheduling",
        namespace=ns,
        definitions_dir=tmp_path,
        ui=True,
        ui_bind_address="127.0.0.1:0",
    ) as controller:
        server = controller.parts["ui-server"]
        assert isinstance(server, UiServer)
        isvc = kube.create(_isvc(corpus, "served"), namespace=ns)

        def minimums() -> dict[str, int]:
            return {
                o["metadata"]["ownerReferences"][0]["name"]: o["spec"]["minMember"]
                for o in group_objects(kube, "coscheduling", ns)
            }

        def gpus(expected: int) -> bool:
            items = _get(f"{server.url}api/workloads?namespace={ns}")["items"]
            rows = [r for r in items if r["uid"] == isvc["metadata"]["uid"]]
            return bool(rows) and rows[0]["gpus"] == expected

        started = time.monotonic()
        eventually(lambda: minimums() == {"served": 2}, what="the InferenceService's gang")
        eventually(lambda: gpus(4), what="the row with the runtime's GPUs (2 pods x 2)")
        print(f"\nInferenceService -> gang and runtime GPUs in {time.monotonic() - started:.2f}s")
        started = time.monotonic()
        kube.patch(
            _cluster_runtimes(kube),
            runtime,
            {"spec": {"containers": [{**_runtime(runtime, 4)["spec"]["containers"][0]}]}},
        )
        eventually(lambda: gpus(8), what="the row after the runtime's edit (2 pods x 4)")
        print(f"runtime GPUs 2 -> 4: re-read in {time.monotonic() - started:.2f}s")
        started = time.monotonic()
        kube.delete(_cluster_runtimes(kube), runtime)
        eventually(lambda: gpus(0), what="the row after the runtime's deletion (the InferenceService alone)")
        print(f"runtime deleted: re-read in {time.monotonic() - started:.2f}s")
        assert minimums() == {"served": 2}  # the gang is minReplicas: no runtime changes it
