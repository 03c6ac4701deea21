"""Fixtures for the ``kli`` tests against a real API server (tests/e2e/cli).

Owns: ``kli`` (run the CLI in-process and capture exit code, stdout and stderr, isolated from the
developer's definitions, config and kubeconfig: pass ``--kubeconfig`` explicitly), ``golden``
(compare with, or regenerate, a file under ``golden/``) and ``training`` (a corpus PyTorchJob and
JobSet with pods written by the test as their operators, the scheduler and kubelets would).
"""

from __future__ import annotations

import copy
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from karta.cli.main import main

from ..kubehttp import KubeHTTP, controller_ref


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def kli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Callable[..., Result]:
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "no-definitions"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("KARTA_OUTPUT", "KARTA_CONFIG", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(name, raising=False)

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


# -- goldens ---------------------------------------------------------------------------------------

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture
def golden() -> Callable[[str, str], None]:
    """``golden(file_name, text)``: ``text`` must equal ``golden/<file_name>``;
    ``KARTA_UPDATE_GOLDEN=1`` (or ``KARTA_REGEN_GOLDEN=1``) rewrites the file instead (review the
    diff by hand)."""
    import os

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if os.environ.get("KARTA_UPDATE_GOLDEN") or os.environ.get("KARTA_REGEN_GOLDEN"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        assert path.is_file(), f"missing golden {path} (KARTA_UPDATE_GOLDEN=1 writes it)"
        assert text == path.read_text(), f"output differs from {path}"

    return check


SCHEDULER_MESSAGE = re.compile(r"0/\d+ nodes are available: [^\n]*?(?=\s{2,}|$)", re.M)


def scheduler_messages(text: str) -> str:
    """kube-scheduler's ``0/N nodes are available: ...`` messages as ``<scheduler message>``: they
    count every Node of the cluster, and other tests add Nodes to the shared control plane."""
    return SCHEDULER_MESSAGE.sub("0/<N> nodes are available: <scheduler message>", text)


def describe_ages(text: str) -> str:
    """``kli describe`` text with the AGE cells of its Conditions and Events tables as ``<age>``
    (the tables re-aligned): they depend on when the test ran."""
    return _table_ages(_table_ages(text, "Conditions"), "Events")


def _table_ages(text: str, section: str) -> str:
    """The AGE cells of the table under ``section:`` become ``<age>``, the table re-aligned (the
    cells are cut at the header's column starts, then joined as kli joins them)."""
    lines = text.split("\n")
    if f"{section}:" not in lines:
        return text
    first = lines.index(f"{section}:") + 1
    last = next((i for i in range(first, len(lines)) if not lines[i]), len(lines))
    header = lines[first]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    age = header.split().index("AGE")
    rows = []
    for line in lines[first:last]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        if line is not header:
            cells[age] = "<age>"
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(starts))]
    lines[first:last] = [
        "   ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    return "\n".join(lines)


# -- training workloads on the API server (pods written by the test, as their operators would) ------


@dataclass
class Training:
    """A PyTorchJob and a JobSet from the corpus with their pods, in ``namespace`` of ``cluster``."""

    cluster: KubeHTTP
    namespace: str
    pytorchjob: dict[str, Any]
    jobset: dict[str, Any]

    @property
    def kubeconfig(self) -> str:
        return str(self.cluster.kubeconfig)


def _created(kube: KubeHTTP, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = kube.post(path, body)
    assert answer.status == 201, f"{path}: HTTP {answer.status} {answer.body}"
    return answer.json()


def patch_status(kube: KubeHTTP, path: str, status: dict[str, Any]) -> None:
    answer = kube.request(
        "PATCH", f"{path}/status", body={"status": status}, content_type="application/merge-patch+json"
    )
    assert answer.status == 200, f"{path}/status: HTTP {answer.status} {answer.body}"


RUNNING = {
    "phase": "Running",
    "conditions": [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "True"},
    ],
}
UNSCHEDULABLE = {
    "phase": "Pending",
    "conditions": [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
        }
    ],
}
SUCCEEDED = {
    "phase": "Succeeded",
    "conditions": [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "False", "reason": "PodCompleted"},
    ],
}


def make_pod(
    kube: KubeHTTP,
    namespace: str,
    *,
    name: str,
    owner: dict[str, Any] | None,
    labels: dict[str, str],
    template: dict[str, Any],
    node: str | None,
    status: dict[str, Any] | None,
) -> dict[str, Any]:
    """A Pod as an operator would create it from ``template`` (a pod template spec), bound to
    ``node`` and given ``status`` as a kubelet (or the scheduler) would report it."""
    spec = copy.deepcopy(template.get("spec") or {})
    if node:
        spec["nodeName"] = node
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if owner is not None:
        metadata["ownerReferences"] = [controller_ref(owner)]
    path = f"/api/v1/namespaces/{namespace}/pods"
    pod = _created(kube, path, {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
    if status is not None:
        patch_status(kube, f"{path}/{name}", status)
    return pod


def _ensure_node(kube: KubeHTTP, name: str, gpus: int) -> None:
    """A fake GPU Node (hack/fake_nodes.py): Ready, 64 CPUs, 512Gi, ``gpus`` x nvidia.com/gpu."""
    from karta.kube import ConfigOverrides, KubeClient

    from ..conftest import hack_module

    with KubeClient.from_config(ConfigOverrides(kubeconfig=str(kube.kubeconfig))) as client:
        hack_module("fake_nodes.py").ensure_fake_node(client, name, gpus=gpus)


def _wait_served(kube: KubeHTTP, path: str, *, timeout: float = 60.0) -> None:
    """Wait until the API server serves ``path`` (discovery lags ``Established`` a little)."""
    import time

    deadline = time.monotonic() + timeout
    while kube.get(path).status != 200:
        assert time.monotonic() < deadline, f"{path} not served after {timeout}s"
        time.sleep(0.2)


def new_namespace(kube: KubeHTTP, prefix: str) -> str:
    """A fresh namespace ``<prefix>-<6 hex>``, created, with our Karta CRD installed and served."""
    namespace = f"{prefix}-{uuid.uuid4().hex[:6]}"
    _created(
        kube,
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
    )
    ensure_karta_crd(kube)
    return namespace


def ensure_karta_crd(kube: KubeHTTP) -> None:
    """Our ``kartas.run.ai`` CRD, installed and served (other tests may have installed it)."""
    from karta.crd import load_crd

    kube.ensure_crd(load_crd())
    _wait_served(kube, "/apis/run.ai/v1alpha1")


@pytest.fixture(scope="session")
def training(cluster: KubeHTTP, corpus: Path) -> Iterator[Training]:
    """In a fresh namespace: the corpus PyTorchJob ``pytorch-dist-mnist-nccl`` with 3 workers
    (master and two workers Running on gpu-node-a/-b, worker 2 Pending: Unschedulable) and the
    corpus JobSet ``paralleljobs`` (Jobs and pods as the JobSet and Job controllers would make
    them: workers 0-2 Running, worker 3 missing, the driver Succeeded, one pod of the JobSet
    without the replicated-job label, and one unrelated pod)."""
    from ..kubehttp import load_manifests

    namespace = new_namespace(cluster, "karta-cli")
    for crd_file in ("kubeflow.org_pytorchjobs.yaml", "jobset.x-k8s.io_jobsets.yaml"):
        (crd,) = load_manifests(corpus / "crds" / crd_file)
        cluster.ensure_crd(crd)
        _wait_served(cluster, f"/apis/{crd['spec']['group']}/{crd['spec']['versions'][0]['name']}")
    for node, gpus in (("gpu-node-a", 8), ("gpu-node-b", 8)):
        _ensure_node(cluster, node, gpus)

    (pt,) = load_manifests(corpus / "workloads" / "kubeflow-training-v1" / "pytorchjob-mnist-nccl-gpu.yaml")
    pt["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 3
    pt["metadata"]["labels"] = {"kai.scheduler/queue": "team-a"}
    base = f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs"
    pt = _created(cluster, base, pt)
    running = {"type": "Running", "status": "True", "reason": "PyTorchJobRunning"}
    patch_status(cluster, f"{base}/{pt['metadata']['name']}", {"conditions": [running]})
    specs = pt["spec"]["pytorchReplicaSpecs"]
    name = pt["metadata"]["name"]
    layout: list[tuple[str, int, str | None, dict[str, Any]]] = [
        ("master", 0, "gpu-node-a", RUNNING),
        ("worker", 0, "gpu-node-a", RUNNING),
        ("worker", 1, "gpu-node-b", RUNNING),
        ("worker", 2, None, UNSCHEDULABLE),
    ]
    for role, index, pod_node, status in layout:
        labels = {
            "training.kubeflow.org/job-name": name,
            "training.kubeflow.org/operator-name": "pytorchjob-controller",
            "training.kubeflow.org/replica-type": role,
            "training.kubeflow.org/replica-index": str(index),
        }
        template = specs[role.capitalize()]["template"]
        make_pod(
            cluster,
            namespace,
            name=f"{name}-{role}-{index}",
            owner=pt,
            labels=labels,
            template=template,
            node=pod_node,
            status=status,
        )

    (js,) = load_manifests(corpus / "workloads" / "jobset" / "paralleljobs.yaml")
    base = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{namespace}/jobsets"
    js = _created(cluster, base, js)
    zero = {"active": 0, "ready": 0, "succeeded": 0, "failed": 0, "suspended": 0}
    active = [
        {**zero, "name": "workers", "active": 1, "ready": 1},
        {**zero, "name": "driver", "succeeded": 1},
    ]
    patch_status(cluster, f"{base}/paralleljobs", {"replicatedJobsStatus": active})
    for rjob in js["spec"]["replicatedJobs"]:
        job_name = f"paralleljobs-{rjob['name']}-0"
        labels = {
            "jobset.sigs.k8s.io/jobset-name": "paralleljobs",
            "jobset.sigs.k8s.io/replicatedjob-name": rjob["name"],
            "jobset.sigs.k8s.io/job-index": "0",
        }
        job_spec = copy.deepcopy(rjob["template"]["spec"])
        job_spec["template"].setdefault("metadata", {})["labels"] = labels
        job_spec["template"]["spec"]["restartPolicy"] = "Never"
        job_spec["suspend"] = True
        job = _created(
            cluster,
            f"/apis/batch/v1/namespaces/{namespace}/jobs",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": job_name, "labels": labels, "ownerReferences": [controller_ref(js)]},
                "spec": job_spec,
            },
        )
        count = 3 if rjob["name"] == "workers" else 1
        for index in range(count):
            status = SUCCEEDED if rjob["name"] == "driver" else RUNNING
            node = "gpu-node-a" if index % 2 == 0 else "gpu-node-b"
            make_pod(
                cluster,
                namespace,
                name=f"{job_name}-{index}",
                owner=job,
                labels={**labels, "batch.kubernetes.io/job-completion-index": str(index)},
                template=job_spec["template"],
                node=node,
                status=status,
            )
    template = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    make_pod(
        cluster,
        namespace,
        name="paralleljobs-debug",
        owner=js,
        labels={},
        template=template,
        node="gpu-node-b",
        status=RUNNING,
    )
    make_pod(
        cluster,
        namespace,
        name="unrelated",
        owner=None,
        labels={},
        template=template,
        node="gpu-node-b",
        status=RUNNING,
    )
    yield Training(cluster=cluster, namespace=namespace, pytorchjob=pt, jobset=js)
    cluster.delete(f"/api/v1/namespaces/{namespace}")
