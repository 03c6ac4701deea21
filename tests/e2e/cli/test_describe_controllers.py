"""``kli describe`` on workloads whose pods kube-controller-manager creates and kube-scheduler binds
to fake Nodes (``controllers_cluster``): an Indexed Job (one pod Running and ready, one Running but
not ready), a Job whose pod cannot be scheduled (Pending, Unschedulable), and a Deployment (pods two
owners away, through its ReplicaSet). The tests play the kubelet: they write the pods' statuses.
Generated name suffixes, AGE and the creation time are normalised; goldens reviewed by hand."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..kubehttp import KubeHTTP, ok, wait
from ..nodes import dedicated_node, pin
from .conftest import describe_ages, ensure_karta_crd, patch_status, scheduler_messages

NS = "karta-describe"
NODE = "describe-node-a"
SELECTOR = {"karta-e2e": "describe"}
pytestmark = pytest.mark.slow


def _container(cpu: str, gpus: int) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": "256Mi"}}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": gpus}
    return {"name": "main", "image": "busybox", "resources": resources}


def _template(
    cpu: str, gpus: int, labels: dict[str, str] | None = None, restart: str = "Never"
) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels or {}},
        "spec": pin({"restartPolicy": restart, "containers": [_container(cpu, gpus)]}, SELECTOR),
    }


def _pods(kube: KubeHTTP, selector: str) -> list[dict[str, Any]]:
    items = kube.get(f"/api/v1/namespaces/{NS}/pods", params={"labelSelector": selector}).json()["items"]
    return sorted(items, key=lambda p: p["metadata"]["name"])


READY = [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}]
NOT_READY = [
    {"type": "PodScheduled", "status": "True"},
    {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
]


@pytest.fixture(scope="module")
def kube(controllers_cluster: KubeHTTP) -> Iterator[KubeHTTP]:
    kube = controllers_cluster
    ensure_karta_crd(kube)
    ok(kube.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
    dedicated_node(kube, NODE, selector=SELECTOR, gpus=4, cpu="4", memory="16Gi")

    jobs = f"/apis/batch/v1/namespaces/{NS}/jobs"
    train = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 2,
            "parallelism": 2,
            "template": _template("1", 1),
        },
    }
    ok(kube.post(jobs, train))
    stuck = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "stuck"},
        "spec": {"template": _template("100", 0)},
    }
    ok(kube.post(jobs, stuck))
    web = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": _template("250m", 0, {"app": "web"}, "Always"),
        },
    }
    ok(kube.post(f"/apis/apps/v1/namespaces/{NS}/deployments", web))

    def scheduled(selector: str, count: int) -> list[dict[str, Any]] | None:
        pods = _pods(kube, selector)
        return pods if len(pods) == count and all(p["spec"].get("nodeName") for p in pods) else None

    train_pods = wait("train pods", lambda: scheduled("job-name=train", 2))
    for pod, conditions in zip(train_pods, (READY, NOT_READY), strict=True):
        patch_status(
            kube,
            f"/api/v1/namespaces/{NS}/pods/{pod['metadata']['name']}",
            {"phase": "Running", "conditions": conditions},
        )
    for pod in wait("web pods", lambda: scheduled("app=web", 2)):
        patch_status(
            kube,
            f"/api/v1/namespaces/{NS}/pods/{pod['metadata']['name']}",
            {"phase": "Running", "conditions": READY},
        )

    def unschedulable() -> bool:
        pods = _pods(kube, "job-name=stuck")
        conditions = [c for p in pods for c in (p.get("status") or {}).get("conditions") or []]
        return any(c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable" for c in conditions)

    wait("the stuck pod to be unschedulable", unschedulable)

    def settled() -> bool:
        train = kube.get(f"{jobs}/train").json().get("status") or {}
        stuck = kube.get(f"{jobs}/stuck").json().get("status") or {}
        web = kube.get(f"/apis/apps/v1/namespaces/{NS}/deployments/web").json().get("status") or {}
        progressing = [c for c in web.get("conditions") or [] if c["type"] == "Progressing"]
        return (
            train.get("active") == 2
            and train.get("ready") == 1
            and stuck.get("active") == 1
            and web.get("availableReplicas") == 2
            and bool(progressing)
            and progressing[0].get("reason") == "NewReplicaSetAvailable"
        )

    wait("the controllers to report status", settled)

    def cached() -> bool:  # kli lists pods from the API server's cache (resourceVersion "0")
        listed = kube.get(f"/api/v1/namespaces/{NS}/pods", params={"resourceVersion": "0"}).json()["items"]
        phases = [(p.get("status") or {}).get("phase") for p in listed]
        return len(listed) == 5 and phases.count("Running") == 4

    wait("the API server's cache to hold the pod statuses", cached)

    def reasons(path: str) -> list[str]:  # the Events of one object, from the cache kli reads
        uid = kube.get(path).json()["metadata"]["uid"]
        params = {"fieldSelector": f"involvedObject.uid={uid}", "resourceVersion": "0"}
        return [
            e.get("reason")
            for e in kube.get(f"/api/v1/namespaces/{NS}/events", params=params).json()["items"]
        ]

    # the Events the goldens show are written by the controllers and the scheduler on their own time
    pods = f"/api/v1/namespaces/{NS}/pods"
    (stuck,) = _pods(kube, "job-name=stuck")
    expected = {
        f"{jobs}/train": ["SuccessfulCreate", "SuccessfulCreate"],
        f"{pods}/{train_pods[1]['metadata']['name']}": ["Scheduled"],  # the unhealthy pod's
        f"{jobs}/stuck": ["SuccessfulCreate"],
        f"{pods}/{stuck['metadata']['name']}": ["FailedScheduling"],
        f"/apis/apps/v1/namespaces/{NS}/deployments/web": ["ScalingReplicaSet"],
    }
    for path, wanted in expected.items():
        wait(f"the Events of {path}", lambda path=path, wanted=wanted: sorted(reasons(path)) == wanted)
    yield kube
    kube.delete(f"/api/v1/namespaces/{NS}")
    kube.delete(f"/api/v1/nodes/{NODE}")


GENERATED = re.compile(r"\b(train-[01]|stuck|web-[a-z0-9]{6,10})-[a-z0-9]{5}\b")
AGE = re.compile(r"age: \S+$", re.M)


def normalised(text: str) -> str:
    text = AGE.sub("age: <AGE>", GENERATED.sub(r"\1-xxxxx", text))
    text = describe_ages(scheduler_messages(re.sub(r"web-[a-z0-9]{6,10}-xxxxx", "web-<hash>-xxxxx", text)))
    return _events_sorted(text)


def _events_sorted(text: str) -> str:
    """The Events rows sorted as text. The job controller stamps "Created pod" in whole seconds
    after its create call returns, the scheduler its first FailedScheduling in microseconds: when
    a second begins between the two, the scheduler's is the older and comes first. That race is
    the cluster's; the order rule itself is pinned by tests/unit/report (event_rows)."""
    lines = text.split("\n")
    if "Events:" not in lines:
        return text
    first = lines.index("Events:") + 2  # after the header
    last = next((i for i in range(first, len(lines)) if not lines[i]), len(lines))
    lines[first:last] = sorted(lines[first:last], key=lambda line: line.split()[1:])
    return "\n".join(lines)


def run(kli: Callable[..., Any], kube: KubeHTTP, *args: str) -> Any:
    r = kli("describe", *args, "-n", NS, "--kubeconfig", str(kube.kubeconfig))
    assert r.code == 0, r.err
    assert r.err == ""
    return r


@pytest.mark.parametrize("name", ["job/train", "job/stuck", "deployment/web"])
def test_describe_table(
    kli: Callable[..., Any], golden: Callable[[str, str], None], kube: KubeHTTP, name: str
) -> None:
    text = run(kli, kube, name).out
    if name == "job/stuck":  # the scheduler's own message, before it is normalised
        assert re.search(r"Pending: Unschedulable: 0/\d+ nodes are available: .*Insufficient cpu", text)
    out = normalised(text)
    golden(f"describe-{name.replace('/', '-')}.txt", out)


def test_describe_json(kli: Callable[..., Any], golden: Callable[[str, str], None], kube: KubeHTTP) -> None:
    data = json.loads(run(kli, kube, "job", "train", "-o", "json").out)
    assert data["createdAt"].endswith("Z")
    data["createdAt"] = "<CREATED>"
    for event in data["events"]:
        event["firstSeen"] = event["lastSeen"] = "<TIME>"
    # by reason and object, as _events_sorted does for the table: which of two Events in one
    # second is the older depends on the cluster's timing (see there)
    data["events"].sort(key=lambda e: (e["reason"], e["objects"], e["message"]))
    golden("describe-job-train.json", normalised(json.dumps(data, indent=2) + "\n"))


def test_pod_limit(kli: Callable[..., Any], kube: KubeHTTP) -> None:
    out = normalised(run(kli, kube, "job/train", "--pod-limit", "1").out).partition("\nPhase:")[0]
    assert "    |-- train-1-xxxxx    Running (ContainersNotReady)" in out
    assert "    `-- ... and 1 more (1 unhealthy shown)" in out
    assert "train-0-xxxxx" not in out
