"""``kli get`` against a real API server of its own (docs/spec/format.md#kli-get): one type, one named
workload, ``--all-types -A`` with nested objects left out (owner references read directly, through an
uncovered owner, and an unreadable owner), ``--phase``, ``-l``, ``--chunk-size``, ``-w``, an
RBAC-limited user, a missing CRD, the missing Karta CRD and then a cluster Karta.

The control plane is private to this module (no other test's CRDs or Kartas), so that rows, the
definitions they resolve through and the warnings are exactly those of the goldens in
``golden/`` (ages and times normalised; KARTA_UPDATE_GOLDEN=1 rewrites them for review).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import CATALOG_DATA_DIR
from karta.kube import ConfigOverrides, KubeClient

from ..kube.conftest import wait_discovered
from ..kubehttp import REVIEWS, access_review, wait_allowed
from .conftest import Result
from .getsupport import (
    check_golden,
    corpus_object,
    create_in_one_second,
    normalise_data,
    normalise_table,
    private_control_plane,
)

CRDS = (
    "kubeflow.org_pytorchjobs.yaml",
    "jobset.x-k8s.io_jobsets.yaml",
    "batch.volcano.sh_jobs.yaml",
    "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
)
NS = "ml-team"
OTHER_NS = "research"


def _job(name: str, owner: dict[str, Any] | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if owner is not None:
        meta["ownerReferences"] = [{**owner, "controller": True}]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": 2}}}
                    ],
                }
            }
        },
    }


def _ref(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    }


@pytest.fixture(scope="module")
def get_cluster(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Iterator[Path]:
    """A control plane with four corpus CRDs and workloads in two namespaces; its kubeconfig."""
    with private_control_plane(tmp_path_factory, corpus, crds=CRDS, namespaces=(NS, OTHER_NS)) as (
        kubeconfig,
        client,
    ):
        done, done_status = corpus_object(
            corpus,
            "kubeflow-training-v1/pytorchjob-with-status.yaml",
            namespace=NS,
            name="mnist-done",
            labels={"team": "a"},
        )
        gpu, _ = corpus_object(
            corpus,
            "kubeflow-training-v1/pytorchjob-mnist-nccl-gpu.yaml",
            namespace=NS,
            name="mnist-gpu",
            labels={"team": "b"},
        )
        resnet, _ = corpus_object(corpus, "jobset/pytorch-resnet.yaml", namespace=NS, name="resnet")
        mpi, _ = corpus_object(corpus, "volcano/vcjob-mpi.yaml", namespace=NS, name="mpi")
        vllm, _ = corpus_object(corpus, "lws/lws-vllm-gpu.yaml", namespace=NS, name="vllm")
        create_in_one_second(client, [done, gpu, resnet, mpi, vllm])
        assert done_status is not None
        client.patch(
            "pytorchjobs.kubeflow.org",
            "mnist-done",
            {"status": done_status},
            namespace=NS,
            subresource="status",
        )
        # newer: Jobs nested under the JobSet (directly, and through an uncovered ConfigMap) and one
        # whose owner cannot be read; a PyTorchJob in another namespace
        owner = client.get("jobsets.jobset.x-k8s.io", "resnet", namespace=NS)
        middle = client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "middle",
                    "namespace": NS,
                    "ownerReferences": [{**_ref(owner), "controller": True}],
                },
            }
        )
        gone = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "gone",
            "uid": "00000000-0000-0000-0000-000000000000",
        }
        simple, _ = corpus_object(
            corpus, "kubeflow-training-v1/pytorchjob-simple.yaml", namespace=OTHER_NS, name="simple"
        )
        create_in_one_second(
            client,
            [
                _job("resnet-workers-0", _ref(owner)),
                _job("via-middle", _ref(middle)),
                _job("orphan", gone),
                _job("standalone", None),
                simple,
            ],
        )
        yield kubeconfig


@pytest.fixture
def get(kli: Callable[..., Result], get_cluster: Path) -> Callable[..., Result]:
    def run(*args: str) -> Result:
        return kli("get", "--kubeconfig", str(get_cluster), *args)

    return run


# ------------------------------------------------------------------------------------- one type


def test_one_type_table(get: Callable[..., Result]) -> None:
    result = get("pytorchjobs", "-n", NS)
    assert result.code == 0, result.err
    check_golden("get_pytorchjobs.txt", result.out, substitute=normalise_table)
    assert result.err == (
        "warning: the kartas.run.ai CRD is not installed; showing built-in definitions only\n"
    )
    assert all(len(line) <= 100 for line in result.out.splitlines())


def test_type_tokens_of_discovery_and_of_definitions(get: Callable[..., Result]) -> None:
    outs = {
        token: get(token, "-n", NS)
        for token in ("pytorchjob", "pytorchjobs.kubeflow.org", "PyTorchJob", "pytorchjobs.v1.kubeflow.org")
    }
    assert {r.code for r in outs.values()} == {0}
    assert len({normalise_table(r.out) for r in outs.values()}) == 1


def test_named_workload_json_and_yaml(get: Callable[..., Result]) -> None:
    as_json = get("pytorchjob/mnist-gpu", "-n", NS, "-o", "json")
    assert as_json.code == 0, as_json.err
    check_golden("get_pytorchjob_named.json", as_json.out, substitute=normalise_data)
    as_yaml = get("pytorchjob", "mnist-gpu", "-n", NS, "-o", "yaml")
    assert as_yaml.code == 0, as_yaml.err
    check_golden("get_pytorchjob_named.yaml", as_yaml.out, substitute=normalise_data)


def test_list_json_and_yaml_envelopes(get: Callable[..., Result]) -> None:
    result = get("jobs.batch", "-n", NS, "-o", "json")
    assert result.code == 0, result.err
    check_golden("get_jobs.json", result.out, substitute=normalise_data)
    result = get("pytorchjobs", "-A", "-o", "yaml")
    assert result.code == 0, result.err
    check_golden("get_pytorchjobs_A.yaml", result.out, substitute=normalise_data)


def test_not_found_and_empty_namespace(get: Callable[..., Result]) -> None:
    missing = get("pytorchjob", "nope", "-n", NS)
    assert missing.code == 3
    assert 'error: PyTorchJob "nope" not found in namespace "ml-team"' in missing.err
    empty = get("jobsets", "-n", OTHER_NS)
    assert (empty.code, empty.out) == (0, "")
    assert empty.err.startswith("No workloads found in namespace research.\n")


# ------------------------------------------------------------------------------------- all types


def test_all_types_all_namespaces(get: Callable[..., Result]) -> None:
    table = get("--all-types", "-A")
    assert table.code == 0, table.err
    check_golden("get_all_types_A.txt", table.out, substitute=normalise_table)
    check_golden("get_all_types_A.stderr", table.err)
    assert "resnet-workers-0" not in table.out and "via-middle" not in table.out  # nested
    assert all(len(line) <= 100 for line in table.out.splitlines())
    wide = get("--all-types", "-A", "-o", "wide")
    check_golden("get_all_types_A_wide.txt", wide.out, substitute=normalise_table)
    as_json = get("--all-types", "-A", "-o", "json")
    check_golden("get_all_types_A.json", as_json.out, substitute=normalise_data)
    as_yaml = get("--all-types", "-A", "-o", "yaml")
    check_golden("get_all_types_A.yaml", as_yaml.out, substitute=normalise_data)


def test_all_types_in_one_namespace(get: Callable[..., Result]) -> None:
    result = get("--all-types", "-n", OTHER_NS)
    assert result.code == 0, result.err
    check_golden("get_all_types_research.txt", result.out, substitute=normalise_table)


# ------------------------------------------------------------------------------------- filters


def test_phase_filter(get: Callable[..., Result]) -> None:
    completed = get("pytorchjobs", "-n", NS, "--phase", "Completed")
    assert completed.code == 0, completed.err
    assert [line.split()[0] for line in completed.out.splitlines()[1:]] == ["mnist-done"]
    either = get(
        "pytorchjobs", "-n", NS, "--phase", "failed,Completed", "--phase", "Initializing", "-o", "json"
    )
    assert [v["name"] for v in yaml.safe_load(either.out)["items"]] == ["mnist-done", "mnist-gpu"]
    none = get("pytorchjobs", "-n", NS, "--phase", "Running")
    assert (none.code, none.out) == (0, "")
    assert none.err.startswith("No workloads found in namespace ml-team.")


def test_label_selector(get: Callable[..., Result]) -> None:
    result = get("pytorchjobs", "-n", NS, "-l", "team=b", "-o", "json")
    assert result.code == 0, result.err
    assert [v["name"] for v in yaml.safe_load(result.out)["items"]] == ["mnist-gpu"]


def test_chunk_size_does_not_change_the_result(get: Callable[..., Result]) -> None:
    outs = [
        normalise_data(get("--all-types", "-A", "-o", "json", "--chunk-size", size).out)
        for size in ("1", "0", "500")
    ]
    assert outs[0] == outs[1] == outs[2]
    assert yaml.safe_load(outs[0])["count"] == 8


# ------------------------------------------------------------------------------------- watch


def test_watch_prints_a_row_per_change(get_cluster: Path, tmp_path: Path) -> None:
    env = {**os.environ, "KARTA_DEFINITIONS": str(tmp_path / "none"), "HOME": str(tmp_path)}
    env.pop("KARTA_OUTPUT", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "karta.cli.main",
            "get",
            "jobsets",
            "-n",
            NS,
            "-w",
            "--watch-timeout",
            "8",
            "--kubeconfig",
            str(get_cluster),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    header = proc.stdout.readline()
    first = proc.stdout.readline()
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(get_cluster)))
    client.patch(
        "jobsets.jobset.x-k8s.io", "resnet", {"metadata": {"labels": {"touched": "yes"}}}, namespace=NS
    )
    client.close()
    started = time.monotonic()
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert time.monotonic() - started < 20
    lines = [header, first, *rest.splitlines(keepends=True)]
    check_golden("get_watch.txt", "".join(lines), substitute=normalise_table)


# ------------------------------------------------------------------------------------- access


@pytest.fixture(scope="module")
def alice(get_cluster: Path) -> str:
    """User alice may read PyTorchJobs in ml-team, nothing else."""
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(get_cluster)))
    client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "pytorchjob-reader"},
            "rules": [
                {
                    "apiGroups": ["kubeflow.org"],
                    "resources": ["pytorchjobs"],
                    "verbs": ["get", "list", "watch"],
                }
            ],
        }
    )
    client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "alice-reads-pytorchjobs", "namespace": NS},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "pytorchjob-reader",
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
        }
    )
    review = access_review("alice", verb="list", group="kubeflow.org", resource="pytorchjobs", namespace=NS)
    wait_allowed(lambda body: client.request_json("POST", REVIEWS, body=body), review)
    client.close()
    return "alice"


def test_limited_user(get: Callable[..., Result], alice: str) -> None:
    allowed = get("pytorchjobs", "-n", NS, "--as", alice)
    assert allowed.code == 0, allowed.err
    check_golden("get_pytorchjobs.txt", allowed.out, substitute=normalise_table)
    check_golden("get_limited_user.stderr", allowed.err)
    denied = get("jobsets", "-n", NS, "--as", alice)
    assert denied.code == 1
    assert 'error: listing jobsets.jobset.x-k8s.io: user "alice" (impersonated) is not allowed' in denied.err
    every = get("--all-types", "-n", NS, "--as", alice)
    assert every.code == 0, every.err
    check_golden("get_limited_user_all_types.txt", every.out, substitute=normalise_table)
    check_golden("get_limited_user_all_types.stderr", every.err)


def test_credentials_rejected_and_server_unreachable(get_cluster: Path, kli: Callable[..., Result]) -> None:
    rejected = kli("get", "pods", "--kubeconfig", str(get_cluster), "--token", "not-a-token")
    assert rejected.code == 1
    assert "error: the cluster rejected the credentials of the bearer token" in rejected.err
    assert "401" in rejected.err
    unreachable = kli("get", "pods", "--kubeconfig", str(get_cluster), "--server", "https://127.0.0.1:9")
    assert unreachable.code == 1
    assert "error: cannot reach https://127.0.0.1:9" in unreachable.err


# ------------------------------------------------------------------------------------- types


def test_type_not_installed(get: Callable[..., Result]) -> None:
    listing = get("rayclusters", "-n", NS)
    assert (listing.code, listing.out) == (0, "")
    assert listing.err == (
        "No workloads found in namespace ml-team.\n"
        "warning: the kartas.run.ai CRD is not installed; showing built-in definitions only\n"
        "warning: RayCluster is not installed in this cluster\n"
    )
    named = get("raycluster/head", "-n", NS)
    assert named.code == 3
    assert "error: RayCluster is not installed in this cluster" in named.err


def test_no_definition_and_ambiguous_kind(get: Callable[..., Result]) -> None:
    uncovered = get("configmaps", "-n", NS)
    assert uncovered.code == 4
    assert "error: no Karta definition covers ConfigMap (v1)" in uncovered.err
    assert "kli definitions" in uncovered.err and "kli scaffold" in uncovered.err
    # discovery maps "job" to batch/v1 Job first, as kubectl does; "jobs.batch.volcano.sh" the other
    volcano = get("jobs.batch.volcano.sh", "-n", NS, "-o", "json")
    assert [v["name"] for v in yaml.safe_load(volcano.out)["items"]] == ["mpi"]


def test_cluster_karta_replaces_the_catalog_entry(get: Callable[..., Result], get_cluster: Path) -> None:
    """Last: installs the Karta CRD and one Karta (the JobSet definition under another name)."""
    from karta.crd import load_crd

    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(get_cluster)))
    crd = load_crd()
    client.create(crd)
    wait_discovered(client, crd)
    doc = yaml.safe_load((CATALOG_DATA_DIR / "jobset-x-k8s-io-jobset-v1alpha2.yaml").read_text())
    doc = copy.deepcopy(doc)
    doc["metadata"] = {"name": "team-jobset"}
    client.create(doc)
    client.close()
    result = get("jobsets", "-n", NS, "-o", "wide")
    assert result.code == 0, result.err
    check_golden("get_jobsets_cluster_karta.txt", result.out, substitute=normalise_table)
    assert result.err == ""
