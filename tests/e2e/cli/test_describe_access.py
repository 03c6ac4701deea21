"""``kli describe`` and ``kli get`` never show wrong data silently (issue 12), on the real control
plane with kube-controller-manager and kube-scheduler (``controllers_cluster``):

- a ServiceAccount with the role the old ``kli rbac`` printed (the workload kinds, pods, Kartas; no
  ReplicaSets, no Events) describes a Deployment whose pods are behind its ReplicaSet: the pods
  are not shown, the ready count is unknown (``?/3``, not ``0/3``) and stderr says which read was
  refused; with the role ``kli rbac`` prints now, the true counts and no warning;
- ``kli get --all-types -A`` as an account that may list nothing exits 1 (with the warnings), as
  one that may list some types exits 0 (with warnings for the others);
- a Job whose two pods the scheduler cannot place (each asks for more GPUs than a node has):
  ``describe`` shows the scheduler's own PodScheduled message, grouped, and the real Events of the
  Job (job-controller) and of its pods (default-scheduler).

The tests play the kubelet (they write two pod statuses). Generated names, ages and the
scheduler's node counts (other tests' Nodes share the cluster) are normalised; goldens reviewed
by hand (regenerate with KARTA_UPDATE_GOLDEN=1).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta._ordering import natural_key

from ..kubehttp import REVIEWS, KubeHTTP, access_review, ok, wait, wait_allowed
from ..nodes import dedicated_node, toleration
from .conftest import Result, describe_ages, ensure_karta_crd, patch_status, scheduler_messages

pytestmark = pytest.mark.slow

SELECTOR = {"karta-e2e": "access"}  # the two nodes, where the Job's pods may go
WEB = {"karta-e2e-web": "yes"}  # access-node-a only: every web pod there, the goldens stay the same
NODES = ("access-node-a", "access-node-b")
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def _template(labels: dict[str, str], *, gpus: int, restart: str, nodes: dict[str, str]) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": gpus}
    return {
        "metadata": {"labels": labels},
        "spec": {
            "restartPolicy": restart,
            "nodeSelector": nodes,
            "tolerations": [toleration(SELECTOR)],  # both Nodes are tainted for this test's pods
            "containers": [{"name": "main", "image": "busybox", "resources": resources}],
        },
    }


@dataclass
class Access:
    kube: KubeHTTP
    namespace: str
    kubeconfigs: dict[str, Path]  # account name -> a kubeconfig with its token

    def kli(self, kli: Callable[..., Result], account: str, *args: str) -> Result:
        return kli(*args, "--kubeconfig", str(self.kubeconfigs[account]))


def _account(kube: KubeHTTP, namespace: str, name: str, directory: Path) -> Path:
    """A ServiceAccount, a bound token for it (TokenRequest) and a kubeconfig using the token."""
    accounts = f"/api/v1/namespaces/{namespace}/serviceaccounts"
    ok(kube.post(accounts, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}))
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    token = ok(kube.post(f"{accounts}/{name}/token", request))["status"]["token"]
    admin = yaml.safe_load(kube.kubeconfig.read_text())
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": admin["clusters"][0]["cluster"]}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": "c", "user": name, "namespace": namespace}}],
        "current-context": name,
    }
    path = directory / f"{name}.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def _bind(kube: KubeHTTP, role: dict[str, Any], *, namespace: str, account: str) -> None:
    ok(kube.post(f"{RBAC}/clusterroles", role))
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": role["metadata"]["name"]},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": role["metadata"]["name"],
        },
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }
    ok(kube.post(f"{RBAC}/clusterrolebindings", binding))


def _wait_allowed(kube: KubeHTTP, namespace: str, account: str, verb: str, group: str, resource: str) -> None:
    """Until the ServiceAccount ``account`` may ``verb`` ``resource`` in ``namespace``."""
    review = access_review(
        f"system:serviceaccount:{namespace}:{account}",
        groups=("system:serviceaccounts", "system:authenticated"),
        verb=verb,
        group=group,
        resource=resource,
        namespace=namespace,
    )
    wait_allowed(lambda body: ok(kube.post(REVIEWS, body)), review, timeout=90)


def _read_role(name: str) -> dict[str, Any]:
    """What the old ``kli rbac apps-deployment-v1 batch-job-v1`` printed: the workload kinds, pods
    and Kartas; not the ReplicaSets a Deployment's pods are owned through, nor Events."""
    read = ["get", "list", "watch"]
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": read},
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": read},
            {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": read},
            {"apiGroups": ["run.ai"], "resources": ["kartas"], "verbs": read},
        ],
    }


@pytest.fixture(scope="module")
def access(
    controllers_cluster: KubeHTTP, tmp_path_factory: pytest.TempPathFactory, kli_module: Callable[..., Result]
) -> Iterator[Access]:
    kube = controllers_cluster
    ensure_karta_crd(kube)
    ns = f"karta-access-{uuid.uuid4().hex[:6]}"
    ok(kube.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
    for node in NODES:
        labels = WEB if node == NODES[0] else {}
        dedicated_node(kube, node, selector=SELECTOR, labels=labels, gpus=1, cpu="8", memory="32Gi")

    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": _template({"app": "web"}, gpus=0, restart="Always", nodes=WEB),
        },
    }
    ok(kube.post(f"/apis/apps/v1/namespaces/{ns}/deployments", deployment))
    job = {  # two pods of 2 GPUs each; every node has 1
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "big"},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "template": _template({}, gpus=2, restart="Never", nodes=SELECTOR),
        },
    }
    ok(kube.post(f"/apis/batch/v1/namespaces/{ns}/jobs", job))

    pods_path = f"/api/v1/namespaces/{ns}/pods"

    def pods(selector: str) -> list[dict[str, Any]]:
        items = kube.get(pods_path, params={"labelSelector": selector}).json()["items"]
        return sorted(items, key=lambda p: natural_key(p["metadata"]["name"]))  # as the tree lists pods

    def bound(selector: str, count: int) -> list[dict[str, Any]] | None:
        found = pods(selector)
        return found if len(found) == count and all(p["spec"].get("nodeName") for p in found) else None

    web = wait("3 web pods bound", lambda: bound("app=web", 3))
    condition_sets = (
        [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}],
        [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}],
        [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
        ],
    )
    for pod, conditions in zip(web, condition_sets, strict=True):
        patch_status(
            kube, f"{pods_path}/{pod['metadata']['name']}", {"phase": "Running", "conditions": conditions}
        )

    def unschedulable() -> list[dict[str, Any]] | None:
        found = pods("job-name=big")
        scheduled = [
            c
            for p in found
            for c in (p.get("status") or {}).get("conditions") or []
            if c["type"] == "PodScheduled"
        ]
        return (
            found
            if len(found) == 2
            and len(scheduled) == 2
            and all(c.get("reason") == "Unschedulable" for c in scheduled)
            else None
        )

    big = wait("the big Job's pods to be unschedulable", unschedulable)

    def events_of(uid: str, reason: str) -> bool:
        for rv in (None, "0"):  # stored, and in the API server's cache kli reads
            params = {"fieldSelector": f"involvedObject.uid={uid}"}
            if rv is not None:
                params["resourceVersion"] = rv
            items = kube.get(f"/api/v1/namespaces/{ns}/events", params=params).json()["items"]
            if not any(e.get("reason") == reason for e in items):
                return False
        return True

    job_uid = kube.get(f"/apis/batch/v1/namespaces/{ns}/jobs/big").json()["metadata"]["uid"]
    wait("the Job's events", lambda: events_of(job_uid, "SuccessfulCreate"))
    for pod in big:
        wait(
            "the pods' FailedScheduling events",
            lambda pod=pod: events_of(pod["metadata"]["uid"], "FailedScheduling"),
        )

    def settled() -> bool:
        status = kube.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json().get("status") or {}
        job_status = kube.get(f"/apis/batch/v1/namespaces/{ns}/jobs/big").json().get("status") or {}
        listed = kube.get(pods_path, params={"resourceVersion": "0", "labelSelector": "app=web"}).json()[
            "items"
        ]
        ready = [
            p
            for p in listed
            if any(
                c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or []
            )
        ]
        return status.get("readyReplicas") == 2 and job_status.get("active") == 2 and len(ready) == 2

    wait("the controllers to report status", settled)

    directory = tmp_path_factory.mktemp("access")
    kubeconfigs = {name: _account(kube, ns, name, directory) for name in ("old-role", "kli-rbac", "nobody")}
    suffix = ns.rpartition("-")[2]
    _bind(kube, _read_role(f"karta-old-role-{suffix}"), namespace=ns, account="old-role")
    printed = kli_module(
        "rbac",
        "apps-deployment-v1",
        "batch-job-v1",
        "--name",
        f"karta-kli-rbac-{suffix}",
        "--service-account",
        f"{ns}/kli-rbac",
    )
    assert printed.code == 0, printed.err
    role, binding = (d for d in yaml.safe_load_all(printed.out) if d)
    ok(kube.post(f"{RBAC}/clusterroles", role))
    ok(kube.post(f"{RBAC}/clusterrolebindings", binding))
    _wait_allowed(kube, ns, "kli-rbac", "list", "", "events")  # the kli rbac role in force
    _wait_allowed(kube, ns, "old-role", "list", "apps", "deployments")  # the old role in force
    yield Access(kube, ns, kubeconfigs)
    kube.delete(f"/api/v1/namespaces/{ns}")
    for node in NODES:  # other tests of the session schedule onto whatever Nodes there are
        kube.delete(f"/api/v1/nodes/{node}")
    for name in (f"karta-old-role-{suffix}", f"karta-kli-rbac-{suffix}"):
        kube.delete(f"{RBAC}/clusterrolebindings/{name}")
        kube.delete(f"{RBAC}/clusterroles/{name}")


@pytest.fixture(scope="module")
def kli_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Result]]:
    """``kli`` for the module fixture (the function-scoped ``kli`` cannot serve it), isolated alike."""
    import contextlib
    import io

    from karta.cli.main import main

    home = tmp_path_factory.mktemp("kli-home")
    patch = pytest.MonkeyPatch()
    patch.setenv("KARTA_DEFINITIONS", str(home / "no-definitions"))
    patch.setenv("KUBECONFIG", str(home / "no-kubeconfig"))
    patch.setenv("HOME", str(home))
    for name in ("KARTA_OUTPUT", "KARTA_CONFIG", "KUBERNETES_SERVICE_HOST"):
        patch.delenv(name, raising=False)

    def run(*args: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return Result(code, out.getvalue(), err.getvalue())

    yield run
    patch.undo()


GENERATED = re.compile(r"\b(web-[a-z0-9]{6,10}|big)-[a-z0-9]{5}\b")
AGE = re.compile(r"age: \S+$", re.M)


def normalised(text: str) -> str:
    # pod name suffixes (the ReplicaSet's hash is the pod template's: the same every run)
    text = AGE.sub("age: <AGE>", GENERATED.sub(r"\1-xxxxx", text))
    return describe_ages(text)


# ------------------------------------------------------------------------- item 1: owners


def test_describe_says_what_it_could_not_read(
    access: Access, kli: Callable[..., Result], golden: Callable[[str, str], None]
) -> None:
    result = access.kli(kli, "old-role", "describe", "deployment/web")
    assert result.code == 0, result.err
    ns = access.namespace
    assert result.err == (
        f"warning: cannot get replicasets.apps in namespace {ns} (forbidden): 3 pods owned through them "
        "are not shown, and the ready counts of Deployment/web are unknown\n"
        f"warning: cannot list events in namespace {ns} (forbidden): events are not shown\n"
    )
    assert "?/3 ready" in result.out and "0/3 ready" not in result.out
    golden("describe-forbidden-owners.txt", normalised(result.out.replace(ns, "<NS>")))
    data = json.loads(access.kli(kli, "old-role", "describe", "deployment/web", "-o", "json").out)
    assert data["podsComplete"] is False
    assert data["components"][0]["replicas"] == {"desired": 3, "current": None, "ready": None}
    assert data["events"] is None
    assert len(data["warnings"]) == 2


def test_with_the_role_kli_rbac_prints_describe_shows_the_true_counts(
    access: Access, kli: Callable[..., Result], golden: Callable[[str, str], None]
) -> None:
    result = access.kli(kli, "kli-rbac", "describe", "deployment/web")
    assert result.code == 0, result.err
    assert result.err == ""
    assert "2/3 ready" in result.out
    golden("describe-kli-rbac-deployment.txt", normalised(result.out.replace(access.namespace, "<NS>")))
    data = json.loads(access.kli(kli, "kli-rbac", "describe", "deployment/web", "-o", "json").out)
    assert data["podsComplete"] is True
    assert data["components"][0]["replicas"] == {"desired": 3, "current": 3, "ready": 2}
    assert {c["type"] for c in data["conditions"]} == {"Available", "Progressing"}
    assert "warnings" not in data


# ------------------------------------------------------------------------- item 2: nothing listed


def test_get_all_types_when_nothing_can_be_listed_fails(access: Access, kli: Callable[..., Result]) -> None:
    result = access.kli(kli, "nobody", "get", "--all-types", "-A")
    assert result.code == 1
    assert result.out == ""
    assert "No workloads found" not in result.err
    lines = result.err.splitlines()
    assert any(
        line.startswith("warning: skipping deployments.apps: not allowed to list them") for line in lines
    )
    assert any(line.startswith("warning: skipping jobs.batch: not allowed to list them") for line in lines)
    error = [line for line in lines if line.startswith("error: ")]
    assert len(error) == 1 and error[0].startswith(
        "error: not allowed to list any workload type in any namespace ("
    )
    assert error[0].endswith(" types forbidden)")
    assert "hint: ask a cluster administrator for a role that can list them" in result.err
    as_json = access.kli(kli, "nobody", "get", "--all-types", "-n", access.namespace, "-o", "json")
    assert as_json.code == 1 and as_json.out == ""
    assert f"error: not allowed to list any workload type in namespace {access.namespace} (" in as_json.err


def test_get_all_types_when_some_types_can_be_listed_succeeds(
    access: Access, kli: Callable[..., Result]
) -> None:
    result = access.kli(kli, "old-role", "get", "--all-types", "-A")
    assert result.code == 0, result.err
    rows = [line.split()[:3] for line in result.out.splitlines()[1:]]
    assert [access.namespace in row for row in rows].count(True) == 2  # web and big
    assert "warning: skipping replicasets.apps: not allowed to list them" in result.err
    assert "error:" not in result.err


# ------------------------------------------------------------------------- item 3: why pending


def test_describe_shows_the_schedulers_message_and_events(
    access: Access, kli: Callable[..., Result], golden: Callable[[str, str], None]
) -> None:
    result = access.kli(kli, "kli-rbac", "describe", "job/big")
    assert result.code == 0, result.err
    assert result.err == ""
    pods = access.kube.get(
        f"/api/v1/namespaces/{access.namespace}/pods", params={"labelSelector": "job-name=big"}
    ).json()["items"]
    messages = {c["message"] for p in pods for c in p["status"]["conditions"] if c["type"] == "PodScheduled"}
    assert len(messages) == 1
    # the scheduler's own words, e.g. "0/4 nodes are available: 2 Insufficient nvidia.com/gpu, ..."
    (message,) = messages
    assert re.match(r"0/\d+ nodes are available: .*2 Insufficient nvidia\.com/gpu", message), message
    assert f"  2 pods Pending: Unschedulable: {message}\n" in result.out
    assert "Phase: Initializing\n" in result.out
    events = result.out.split("\nEvents:\n", 1)[1].splitlines()
    assert events[0].split() == ["TYPE", "REASON", "AGE", "FROM", "OBJECT", "MESSAGE"]
    assert [line.split()[:2] for line in events[1:]] == [
        ["Normal", "SuccessfulCreate"],
        ["Normal", "SuccessfulCreate"],
        ["Warning", "FailedScheduling"],
    ]
    assert "default-scheduler" in events[3] and "(+1)" in events[3]  # both pods' events, merged
    text = scheduler_messages(result.out)
    golden("describe-unschedulable-job.txt", normalised(text.replace(access.namespace, "<NS>")))

    data = json.loads(access.kli(kli, "kli-rbac", "describe", "job/big", "-o", "json").out)
    assert data["phases"] == ["Initializing"]
    assert data["pendingPods"] == [
        {
            "count": 2,
            "reason": "Unschedulable",
            "message": message,
            # in natural order (big-8b5px before big-26vkg), as describe lists names
            "pods": sorted((p["metadata"]["name"] for p in pods), key=natural_key),
        }
    ]
    assert data["conditions"] == []
    assert [(e["reason"], e["from"]) for e in data["events"]] == [
        ("SuccessfulCreate", "job-controller"),
        ("SuccessfulCreate", "job-controller"),
        ("FailedScheduling", "default-scheduler"),
    ]
    assert sorted(data["events"][2]["objects"]) == sorted(f"Pod/{p['metadata']['name']}" for p in pods)
