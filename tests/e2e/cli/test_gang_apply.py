"""``kli gang`` output applied to the real API server, with each scheduler's CRD installed (KAI,
Volcano and coscheduling from the corpus; Kueue's Workload from ``tests/e2e/crds``), for a workload
whose name has dots (``llama-3.1-8b-instruct-fp8-l4-model``, valid as an object name and as a label
value): every backend's objects are accepted under strict field validation, ``--name`` names the
group object, a Kueue sub-group with several pod templates asks for what the pods request, and the
printed pod patches are accepted by real pods (what they leave out, the API server refuses)."""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..kubehttp import KubeHTTP, load_manifests
from .conftest import RUNNING, _wait_served, make_pod

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
DEFINITION = EXAMPLES / "definitions" / "kubeflow-org-pytorchjob-v1.yaml"
ONE_COMPONENT = Path(__file__).resolve().parents[2] / "definitions" / "pytorchjob-one-component.yaml"
KUEUE_CRD = Path(__file__).resolve().parents[1] / "crds" / "kueue.x-k8s.io_workloads.yaml"
DOTTED = "llama-3.1-8b-instruct-fp8-l4-model"
CORPUS_CRDS = (
    "kubeflow.org_pytorchjobs.yaml",
    "scheduling.run.ai_podgroups.yaml",
    "scheduling.volcano.sh_podgroups.yaml",
    "scheduling.x-k8s.io_podgroups.yaml",
)
PLURALS = {"PodGroup": "podgroups", "Workload": "workloads", "CompositePodGroup": "compositepodgroups"}


@dataclass
class Job:
    cluster: KubeHTTP
    namespace: str
    obj: dict[str, Any]
    pods: list[str]

    @property
    def kubeconfig(self) -> str:
        return str(self.cluster.kubeconfig)


@pytest.fixture(scope="module")
def job(cluster: KubeHTTP, corpus: Path) -> Iterator[Job]:
    """The running example (1 master with 1 GPU, 4 workers with 8) named with dots, with its pods
    as the training operator creates them, in a fresh namespace."""
    crds = [crd for name in CORPUS_CRDS for crd in load_manifests(corpus / "crds" / name)]
    crds += load_manifests(KUEUE_CRD)
    for crd in crds:
        cluster.ensure_crd(crd)
    for crd in crds:
        served = [v["name"] for v in crd["spec"]["versions"] if v.get("served")]
        _wait_served(cluster, f"/apis/{crd['spec']['group']}/{served[-1]}")
    namespace = f"karta-gang-{uuid.uuid4().hex[:6]}"
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    assert cluster.post("/api/v1/namespaces", ns).status == 201
    (obj,) = load_manifests(EXAMPLES / "workloads" / "pytorchjob-train-7.yaml")
    obj["metadata"] = {"name": DOTTED, "labels": {"kueue.x-k8s.io/queue-name": "team-a"}}
    created = cluster.post(f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs", obj)
    assert created.status == 201, created.body
    obj = created.json()
    pods = []
    for role, count in (("master", 1), ("worker", 4)):
        template = obj["spec"]["pytorchReplicaSpecs"][role.capitalize()]["template"]
        for index in range(count):
            labels = {
                "training.kubeflow.org/job-name": DOTTED,
                "training.kubeflow.org/replica-type": role,
                "training.kubeflow.org/replica-index": str(index),
            }
            name = f"{DOTTED}-{role}-{index}"
            make_pod(
                cluster,
                namespace,
                name=name,
                owner=obj,
                labels=labels,
                template=template,
                node=None,
                status=RUNNING,
            )
            pods.append(name)
    yield Job(cluster=cluster, namespace=namespace, obj=obj, pods=pods)
    cluster.delete(f"/api/v1/namespaces/{namespace}")


def _gang(kli: Callable[..., Any], job: Job, *args: str) -> Any:
    return kli("gang", f"pytorchjob/{DOTTED}", "-n", job.namespace, "--kubeconfig", job.kubeconfig, *args)


@pytest.fixture
def apply_all(job: Job) -> Iterator[Callable[[str], list[dict[str, Any]]]]:
    """``apply_all(text)``: create every document of ``text`` with strict field validation (an
    unknown or misspelt field is an error, not silently dropped) and return what the API server
    stored; the objects are deleted after the test (one Workload API Workload per workload)."""
    created: list[str] = []

    def apply(text: str) -> list[dict[str, Any]]:
        stored = []
        for doc in yaml.safe_load_all(text):
            group_version, kind = doc["apiVersion"], doc["kind"]
            path = f"/apis/{group_version}/namespaces/{job.namespace}/{PLURALS[kind]}"
            answer = job.cluster.post(path, doc, params={"fieldValidation": "Strict"})
            assert answer.status == 201, (
                f"{kind} {doc['metadata']['name']}: HTTP {answer.status} {answer.body}"
            )
            created.append(f"{path}/{doc['metadata']['name']}")
            stored.append(answer.json())
        return stored

    yield apply
    for path in reversed(created):
        job.cluster.delete(path)


@pytest.mark.parametrize(
    ("backend", "names"),
    [
        ("kai", ["pg-{uid}-job"]),
        ("workload-api", [DOTTED, f"{DOTTED}-job"]),
        ("volcano", [f"{DOTTED}-job"]),
        ("coscheduling", [f"{DOTTED}-job"]),
        ("kueue", [f"pytorchjob-{DOTTED}"]),
    ],
)
def test_every_backend_renders_and_the_api_server_accepts_a_dotted_name(
    kli: Callable[..., Any], job: Job, apply_all: Callable[[str], Any], backend: str, names: list[str]
) -> None:
    r = _gang(kli, job, "--backend", backend, "--definition", str(DEFINITION))
    assert r.code == 0, r.err
    stored = apply_all(r.out)
    uid = job.obj["metadata"]["uid"]
    assert [o["metadata"]["name"] for o in stored] == [n.format(uid=uid) for n in names]
    if backend == "coscheduling":  # the name is also the pods' label value: valid as one
        patches = _gang(kli, job, "--backend", backend, "--pod-patches", "--definition", str(DEFINITION))
        assert f'"scheduling.x-k8s.io/pod-group":"{DOTTED}-job"' in patches.out


@pytest.mark.parametrize(
    ("backend", "extra"),
    [
        ("kai", ["--kai-managed"]),
        ("workload-api", []),
        ("volcano", []),
        ("coscheduling", []),
        ("kueue", []),
    ],
)
def test_name_names_the_group_object(
    kli: Callable[..., Any], job: Job, apply_all: Callable[[str], Any], backend: str, extra: list[str]
) -> None:
    name = f"{DOTTED}.{backend}.{len(extra)}"
    r = _gang(kli, job, "--backend", backend, *extra, "--name", name)
    assert r.code == 0, r.err
    stored = apply_all(r.out)
    grouping = [o for o in stored if o["kind"] != "Workload" or backend == "kueue"]
    assert [o["metadata"]["name"] for o in grouping] == [name]
    assert grouping[0]["metadata"]["ownerReferences"][0]["uid"] == job.obj["metadata"]["uid"]


def test_an_invalid_name_is_refused_before_anything_is_printed(kli: Callable[..., Any], job: Job) -> None:
    r = _gang(kli, job, "--backend", "coscheduling", "--name", f"{DOTTED}-{'x' * 40}")
    assert (r.code, r.out) == (2, "")
    assert "at most 63 (it is also written as a pod label value)" in r.err


def test_kueue_sub_group_with_several_templates_asks_for_what_the_pods_request(
    kli: Callable[..., Any], job: Job, apply_all: Callable[[str], Any]
) -> None:
    """One component for master and workers (an instance per replica type), one sub-group over it:
    one PodSet per template, 1 x 1 GPU + 4 x 8 GPUs, not the master's template 5 times."""
    r = _gang(kli, job, "--backend", "kueue", "--definition", str(ONE_COMPONENT), "--name", f"{DOTTED}.split")
    assert r.code == 0, r.err
    (workload,) = apply_all(r.out)
    pod_sets = workload["spec"]["podSets"]
    assert [(p["name"], p["count"]) for p in pod_sets] == [("replica-0", 1), ("replica-1", 4)]
    gpus = sum(
        p["count"] * int(c["resources"]["limits"]["nvidia.com/gpu"])
        for p in pod_sets
        for c in p["template"]["spec"]["containers"]
    )
    assert gpus == 1 * 1 + 4 * 8


def _patched(job: Job, pod: str) -> dict[str, Any]:
    answer = job.cluster.get(f"/api/v1/namespaces/{job.namespace}/pods/{pod}")
    assert answer.status == 200, answer.body
    metadata: dict[str, Any] = answer.json()["metadata"]
    return metadata


@pytest.mark.parametrize("backend", ["kai", "volcano", "coscheduling"])
def test_printed_kubectl_patch_commands_are_accepted_by_real_pods(
    kli: Callable[..., Any], job: Job, backend: str
) -> None:
    r = _gang(kli, job, "--backend", backend, "--definition", str(DEFINITION), "--pod-patches")
    assert r.code == 0, r.err
    assert "spec.schedulerName" in r.err and "left out of the patches" in r.err
    lines = r.out.splitlines()
    assert len(lines) == len(job.pods)
    for line in lines:
        # exactly `kubectl patch pod NAME -n NS --type=merge -p JSON`, which kubectl sends as one
        # PATCH of the pod with Content-Type application/merge-patch+json and that body
        words = shlex.split(line)
        assert words[:3] == ["kubectl", "patch", "pod"] and words[4:8] == [
            "-n",
            job.namespace,
            "--type=merge",
            "-p",
        ]
        assert len(words) == 9
        pod, body = words[3], json.loads(words[8])
        assert set(body) == {"metadata"}
        answer = job.cluster.request(
            "PATCH",
            f"/api/v1/namespaces/{job.namespace}/pods/{pod}",
            body=body,
            content_type="application/merge-patch+json",
        )
        assert answer.status == 200, f"{pod}: HTTP {answer.status} {answer.body}"
        metadata = _patched(job, pod)
        for key, value in body["metadata"].get("labels", {}).items():
            assert metadata["labels"][key] == value
        for key, value in body["metadata"].get("annotations", {}).items():
            assert metadata["annotations"][key] == value


def test_the_partial_pod_list_applies_server_side(kli: Callable[..., Any], job: Job) -> None:
    """``-o yaml``: a List of partial Pods; `kubectl apply --server-side --force-conflicts -f -`
    sends each item as an apply patch, which the API server merges into the existing pod (forced:
    the earlier test's patches own these annotations, as a scheduler's own binder may)."""
    r = _gang(
        kli, job, "--backend", "kai", "--kai-managed", "--name", "llama.kai", "--pod-patches", "-o", "yaml"
    )
    assert r.code == 0, r.err
    items = yaml.safe_load(r.out)["items"]
    assert [i["metadata"]["name"] for i in items] == job.pods
    for item in items:
        answer = job.cluster.request(
            "PATCH",
            f"/api/v1/namespaces/{job.namespace}/pods/{item['metadata']['name']}",
            body=item,
            content_type="application/apply-patch+yaml",
            params={"fieldManager": "kubectl", "fieldValidation": "Strict", "force": "true"},
        )
        assert answer.status == 200, answer.body
        assert _patched(job, item["metadata"]["name"])["annotations"]["pod-group-name"] == "llama.kai"


@pytest.mark.parametrize(
    ("backend", "field"),
    [
        ("kai", {"schedulerName": "kai-scheduler"}),
        ("workload-api", {"schedulingGroup": {"podGroupName": f"{DOTTED}-job"}}),
    ],
)
def test_what_the_patches_leave_out_the_api_server_refuses(
    kli: Callable[..., Any], job: Job, backend: str, field: dict[str, Any]
) -> None:
    r = _gang(kli, job, "--backend", backend, "--definition", str(DEFINITION), "--pod-patches")
    assert r.code == 0, r.err
    (key,) = field
    assert f"spec.{key}: {json.dumps(field[key])} is left out of the patches" in r.err
    if backend == "workload-api":
        assert r.out == ""  # its whole binding is immutable: nothing an existing pod accepts
    answer = job.cluster.request(
        "PATCH",
        f"/api/v1/namespaces/{job.namespace}/pods/{job.pods[0]}",
        body={"spec": field},
        content_type="application/merge-patch+json",
    )
    assert answer.status == 422, answer.body
    assert "pod updates may not change fields other than" in answer.json()["message"]
