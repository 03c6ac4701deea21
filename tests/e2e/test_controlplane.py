"""The test control plane is a real Kubernetes API server: version, core objects, CRDs, a corpus object."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import pytest

from .kubehttp import KubeHTTP, load_manifests
from .nodes import dedicated_node, pin


def test_version_is_the_pinned_release(cluster: KubeHTTP) -> None:
    info = cluster.get("/version").json()
    if cluster.expected_version is not None:
        assert info["gitVersion"] == cluster.expected_version
        major, minor = cluster.expected_version.removeprefix("v").split(".")[:2]
        assert (info["major"], info["minor"]) == (major, minor)
    else:  # an existing cluster (KARTA_TEST_KUBECONFIG): any release, but a real one
        assert re.fullmatch(r"v1\.\d+\.\d+.*", info["gitVersion"]), info


def test_readyz_and_openapi_discovery(cluster: KubeHTTP) -> None:
    assert cluster.get("/readyz").status == 200
    groups = {g["name"] for g in cluster.get("/apis").json()["groups"]}
    assert {"apps", "batch", "apiextensions.k8s.io"} <= groups


def test_generic_workload_api_is_served(cluster: KubeHTTP) -> None:
    if cluster.expected_version is None:
        pytest.skip("an existing cluster (KARTA_TEST_KUBECONFIG) decides its own feature gates")
    resources = cluster.get("/apis/scheduling.k8s.io/v1beta1").json()["resources"]
    assert {"workloads", "podgroups"} <= {r["name"] for r in resources}


def test_create_and_read_namespace_and_configmap(cluster: KubeHTTP, namespace: str) -> None:
    ns = cluster.get(f"/api/v1/namespaces/{namespace}").json()
    assert ns["status"]["phase"] == "Active"

    name = f"cm-{uuid.uuid4().hex[:6]}"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}
    created = cluster.post(f"/api/v1/namespaces/{namespace}/configmaps", body)
    assert created.status == 201, created.body
    got = cluster.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}").json()
    assert got["data"] == {"k": "v"}
    assert got["metadata"]["uid"] == created.json()["metadata"]["uid"]

    listed = cluster.get(f"/api/v1/namespaces/{namespace}/configmaps").json()
    assert name in {item["metadata"]["name"] for item in listed["items"]}


def test_corpus_crd_and_workload(cluster: KubeHTTP, namespace: str, corpus: Path) -> None:
    (crd,) = load_manifests(corpus / "crds" / "jobset.x-k8s.io_jobsets.yaml")
    cluster.ensure_crd(crd)
    (jobset,) = load_manifests(corpus / "workloads" / "jobset" / "paralleljobs.yaml")
    group, version = jobset["apiVersion"].split("/")
    collection = f"/apis/{group}/{version}/namespaces/{namespace}/jobsets"

    # Strict server-side field validation: an unknown field is an error, not silently dropped.
    created = cluster.post(collection, jobset, params={"fieldValidation": "Strict"})
    assert created.status == 201, created.body
    got = cluster.get(f"{collection}/{jobset['metadata']['name']}").json()
    assert got["kind"] == "JobSet"
    jobs = got["spec"]["replicatedJobs"]
    assert [j["name"] for j in jobs] == ["workers", "driver"]
    assert jobs[0]["template"]["spec"]["parallelism"] == 4

    bad = {**jobset, "metadata": {"name": "bad"}, "spec": {**jobset["spec"], "notAField": 1}}
    rejected = cluster.post(collection, bad, params={"fieldValidation": "Strict"})
    assert rejected.status == 400
    assert "notAField" in rejected.json()["message"]


@pytest.mark.slow
def test_controllers_run_jobs_onto_fake_nodes(controllers_cluster: KubeHTTP) -> None:
    kube = controllers_cluster
    # the Job's pods go to this Node only, and only they: other tests of the session leave Nodes
    # and pods behind
    selector = {"karta-e2e-controlplane": "yes"}
    dedicated_node(kube, "fake-node-1", selector=selector, gpus=0, cpu="8", memory="32Gi")
    template = {
        "spec": pin({"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}, selector)
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "two-pods"},
        "spec": {"parallelism": 2, "completions": 2, "template": template},
    }
    created = kube.post("/apis/batch/v1/namespaces/default/jobs", job)
    assert created.status == 201, created.body
    job_uid = created.json()["metadata"]["uid"]

    # The Job controller creates the pods and the scheduler binds them (bounded wait, not a timing).
    deadline = time.monotonic() + 60
    while True:
        pods = kube.get("/api/v1/namespaces/default/pods", params={"labelSelector": "job-name=two-pods"})
        items = pods.json()["items"]
        if len(items) == 2 and all(p["spec"].get("nodeName") for p in items):
            break
        assert time.monotonic() < deadline, [p.get("status") for p in items]
        time.sleep(0.2)
    assert {p["spec"]["nodeName"] for p in items} == {"fake-node-1"}
    assert {p["metadata"]["ownerReferences"][0]["uid"] for p in items} == {job_uid}
    kube.delete("/apis/batch/v1/namespaces/default/jobs/two-pods", params={"propagationPolicy": "Background"})
    kube.delete("/api/v1/nodes/fake-node-1")


@pytest.mark.slow
def test_up_and_down_scripts_keep_the_logs(tmp_path: Path) -> None:
    """hack/cluster/up.sh then down.sh, as the docs run them: the work directory goes, the
    components' logs stay in <dir>-logs (where down.sh says they are)."""
    import os
    import subprocess

    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        pytest.skip("starts a control plane of its own, which an existing cluster does not need")
    from .conftest import REPO

    workdir = tmp_path / "cp"

    def script(name: str) -> subprocess.CompletedProcess[str]:
        command = ["bash", str(REPO / "hack" / "cluster" / name), "--dir", str(workdir)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        return done

    up = script("up.sh")
    assert f"export KUBECONFIG={workdir / 'kubeconfig'}" in up.stdout
    kept = tmp_path / "cp-logs"
    assert f"down.sh moves them to {kept}" in up.stderr
    down = script("down.sh")
    assert not workdir.exists()
    assert f"its logs are kept in {kept}" in down.stderr
    assert {p.name for p in kept.iterdir()} >= {"etcd.log", "kube-apiserver.log"}
    assert (kept / "kube-apiserver.log").stat().st_size > 0
