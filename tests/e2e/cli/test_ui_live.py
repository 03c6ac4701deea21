"""``kli ui`` against the real API server, without a browser: the JSON API lists the workloads of
several kinds with their pods, statuses and gang state as ``kli get --all-types`` and ``kli
describe`` compute them, the workload page has the tree, the pending reason and the gang
renderings, and a status change in the cluster reaches the change stream (server-sent events)."""

from __future__ import annotations

import json
import signal
import threading
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.kube import ConfigOverrides, KubeClient

from ..controller.gangs_support import expected_objects
from ..kubehttp import KubeHTTP, load_manifests, ok
from ..ui.kliui import get_json, kli_ui, rows, wait_for
from .conftest import RUNNING, UNSCHEDULABLE, Result, ensure_karta_crd, make_pod, patch_status

HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


@pytest.fixture(scope="module")
def workloads(cluster: KubeHTTP, corpus: Path) -> Iterator[dict[str, Any]]:
    namespace = f"karta-ui-{uuid.uuid4().hex[:6]}"
    ok(
        cluster.post(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        )
    )
    ensure_karta_crd(cluster)
    for crd_file in ("kubeflow.org_pytorchjobs.yaml", "jobset.x-k8s.io_jobsets.yaml"):
        (crd,) = load_manifests(corpus / "crds" / crd_file)
        cluster.ensure_crd(crd)
    (pt,) = load_manifests(corpus / "workloads" / "kubeflow-training-v1" / "pytorchjob-mnist-nccl-gpu.yaml")
    base = f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs"
    pt = ok(cluster.post(base, pt))
    name = pt["metadata"]["name"]
    running = {"type": "Running", "status": "True", "reason": "PyTorchJobRunning", "message": HOSTILE}
    patch_status(cluster, f"{base}/{name}", {"conditions": [running]})
    specs = pt["spec"]["pytorchReplicaSpecs"]
    for role, index, node, status in (("master", 0, "n1", RUNNING), ("worker", 0, None, UNSCHEDULABLE)):
        labels = {
            "training.kubeflow.org/job-name": name,
            "training.kubeflow.org/replica-type": role,
            "training.kubeflow.org/replica-index": str(index),
        }
        make_pod(
            cluster,
            namespace,
            name=f"{name}-{role}-{index}",
            owner=pt,
            labels=labels,
            template=specs[role.capitalize()]["template"],
            node=node,
            status=status,
        )
    (js,) = load_manifests(corpus / "workloads" / "jobset" / "paralleljobs.yaml")
    ok(cluster.post(f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{namespace}/jobsets", js))
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "failed-job"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "busybox"}]}
            },
        },
    }
    ok(cluster.post(f"/apis/batch/v1/namespaces/{namespace}/jobs", job))
    gave_up = {"status": "True", "reason": "BackoffLimitExceeded", "message": "gave up"}
    failed = {
        "startTime": "2026-01-01T00:00:00Z",
        "conditions": [{"type": "FailureTarget", **gave_up}, {"type": "Failed", **gave_up}],
    }
    patch_status(cluster, f"/apis/batch/v1/namespaces/{namespace}/jobs/failed-job", failed)
    yield {"namespace": namespace, "pytorchjob": pt, "path": f"{base}/{name}"}
    cluster.delete(f"/api/v1/namespaces/{namespace}")


@pytest.fixture
def served(cluster: KubeHTTP, tmp_path: Path, workloads: dict[str, Any]) -> Iterator[str]:
    with kli_ui(cluster.kubeconfig, tmp_path, stop=signal.SIGTERM) as url:
        wait_for(
            "the view to list the workloads", lambda: len(rows(url, namespace=workloads["namespace"])) == 3
        )
        # rows are stored at every flush, before every watch (the pods' too) has listed: wait for
        # the flush that says all are synced, so the rows carry their pods
        wait_for("every watch to sync", lambda: get_json(f"{url}api/facets")["clusters"][0]["synced"])
        yield url


def test_the_rows_agree_with_kli_get(
    served: str, workloads: dict[str, Any], kli: Callable[..., Result], cluster: KubeHTTP
) -> None:
    namespace = workloads["namespace"]
    listed = {r["kind"]: r for r in rows(served, namespace=namespace)}
    assert set(listed) == {"PyTorchJob", "JobSet", "Job"}
    got = kli("get", "--all-types", "-n", namespace, "-o", "json", "--kubeconfig", str(cluster.kubeconfig))
    assert got.code == 0, got.err
    for item in json.loads(got.out)["items"]:
        row = listed[item["kind"]]
        assert (row["name"], row["phases"], row["gpus"]) == (item["name"], item["phases"], item["gpus"])
        assert row["components"] == item["components"]
    pt = listed["PyTorchJob"]
    assert pt["status"] == "Running" and pt["pods"]["ready"] == 1 and pt["pods"]["total"] == 2
    assert pt["gang"] is not None and pt["gang"]["groupObjects"] == 0 and not pt["gang"]["minimumMet"]
    assert listed["Job"]["status"] == "Failed"
    # filters and sorting on the server
    assert [r["kind"] for r in rows(served, namespace=namespace, status="Failed")] == ["Job"]
    assert [r["kind"] for r in rows(served, namespace=namespace, sort="kind", order="desc")] == [
        "PyTorchJob",
        "JobSet",
        "Job",
    ]
    facets = get_json(f"{served}api/facets")
    assert namespace in facets["namespaces"] and facets["clusters"][0]["synced"]


def test_the_workload_page_has_the_tree_the_pending_reason_and_the_gang_objects(
    served: str, workloads: dict[str, Any]
) -> None:
    (pt,) = rows(served, namespace=workloads["namespace"], kind="PyTorchJob")
    detail = get_json(f"{served}api/workload?id={urllib.request.quote(pt['id'], safe='')}")
    describe = detail["describe"]
    pods = [
        p["name"]
        for c in describe["components"]
        for i in [c, *c.get("children", [])]
        for p in i.get("pods", [])
    ]
    name = workloads["pytorchjob"]["metadata"]["name"]
    assert f"{name}-master-0" in pods and f"{name}-worker-0" in pods
    (pending,) = describe["pendingPods"]
    assert pending["reason"] == "Unschedulable" and "Insufficient nvidia.com/gpu" in pending["message"]
    assert describe["conditions"][0]["message"] == HOSTILE  # data, as the cluster wrote it
    assert set(detail["gang"]) == {"kai", "workload-api", "volcano", "coscheduling", "kueue"}
    assert any(r.get("objects") for r in detail["gang"].values())
    assert (
        detail["definition"]["name"] == pt["definition"] and detail["definition"]["spec"]["kind"] == "Karta"
    )


def test_a_status_change_reaches_the_stream(
    served: str, workloads: dict[str, Any], cluster: KubeHTTP
) -> None:
    (pt,) = rows(served, namespace=workloads["namespace"], kind="PyTorchJob")
    seq = get_json(f"{served}api/workloads?limit=1")["seq"]
    succeeded = {"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded"}
    timer = threading.Timer(
        0.5, lambda: patch_status(cluster, workloads["path"], {"conditions": [succeeded]})
    )
    timer.start()
    with urllib.request.urlopen(f"{served}api/stream?since={seq}", timeout=30) as stream:
        event = ""
        while True:
            line = stream.readline().decode()
            assert line, "the stream ended"
            if line.startswith("event: "):
                event = line[7:].strip()
            if line.startswith("data: ") and event == "change":
                change = json.loads(line[6:])
                mine = [r for r in change["upserts"] if r["id"] == pt["id"]]
                if mine and mine[0]["status"] == "Completed":
                    break
    timer.join()


def test_group_objects_of_several_types_listed_at_start_are_all_kept(
    cluster: KubeHTTP, workloads: dict[str, Any], tmp_path: Path
) -> None:
    """The Workload and the PodGroup the workload-api backend makes, there before ``kli ui``
    starts: each arrives in its own type's initial list, and one type's list must not replace
    the group objects of another (it did: the page showed whichever type was listed last)."""
    pt = ok(cluster.get(workloads["path"]))
    with KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig))) as client:
        made = expected_objects(client, pt, backend="workload-api")
    assert sorted(o["kind"] for o in made) == ["PodGroup", "Workload"]
    namespace = workloads["namespace"]
    paths = {
        o["kind"]: f"/apis/scheduling.k8s.io/v1beta1/namespaces/{namespace}/{o['kind'].lower()}s"
        for o in made
    }
    for obj in made:
        ok(cluster.post(paths[obj["kind"]], obj))
    try:
        with kli_ui(cluster.kubeconfig, tmp_path, stop=signal.SIGTERM) as url:
            wait_for("every watch to sync", lambda: get_json(f"{url}api/facets")["clusters"][0]["synced"])
            (row,) = rows(url, namespace=namespace, kind="PyTorchJob")
            detail = get_json(f"{url}api/workload?id={urllib.request.quote(row['id'], safe='')}")
            names = sorted(g.split(" ")[0] for g in detail["groupObjects"])
            assert names == sorted(f"{o['kind']}/{o['metadata']['name']}" for o in made)
            assert row["gang"]["groupObjects"] == 2
    finally:
        for obj in made:
            cluster.delete(f"{paths[obj['kind']]}/{obj['metadata']['name']}")
