"""The proof that pod binding works: kube-scheduler 1.37 gang-schedules the pods our webhook binds
to the Workload API (``scheduling.k8s.io/v1beta1``), all or nothing.

``controllers_cluster`` runs kube-controller-manager and kube-scheduler with GenericWorkload on
(its GangScheduling plugin included) and no kubelet: Nodes are fake objects, and what we check is
binding, ``spec.nodeName`` set by the scheduler. The controller runs in-process
(``karta-controller --backend workload-api --enable-webhook``) and the test registers the
MutatingWebhookConfiguration itself (``failurePolicy: Fail``, limited to the test's namespaces).

- a batch/v1 Job (parallelism 4, completions 4; catalog ``batch-job-v1``, gang ``job``) whose pods
  kube-controller-manager creates, on Nodes with room for 2 of them: after a wait no pod is bound;
  another Node: all 4 bind;
- the control experiment: the same Job in a namespace the webhook does not cover, on the same
  capacity: 2 of 4 bind (so the gang is what holds them back above);
- a PyTorchJob (CRD of the corpus; no training operator runs, so the test creates the pods as the
  operator would) with a master and 3 workers, on room for 3: none bound; one more Node: all 4;
- minimums follow scale (issue 22 item 5): a PyTorchJob of 1 master + 4 workers, all 5 bound, is
  scaled to 8 workers and the 4 new pods created at once, as the operator does, with room for 3
  more: each new pod is admitted only once the PodGroup's minimum is 9 (updated in place: minCount
  is mutable in v1beta1; the webhook reads the workload afresh, so it never writes the old
  minimum), and none binds (with the old minimum of 5, met by the bound pods, 3 would); room for
  one more: the 4 bind together.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from karta.controller.main import Controller

from ..kubehttp import KubeHTTP, load_manifests
from .pods_support import (
    HOLD_S,
    batch_job,
    bound,
    fake_node,
    hold_unbound,
    namespace,
    ok,
    pod_template,
    pods,
    registered_webhook,
    running_controller,
    wait,
    wait_webhook_active,
    webhook_url,
)

pytestmark = pytest.mark.slow


@dataclass
class Env:
    kube: KubeHTTP
    controller: Controller
    gang_ns: str
    pytorch_ns: str
    control_ns: str
    run: str
    nodes: list[str]

    def node(self, role: str, index: int, *, cpu: str) -> dict[str, str]:
        labels = {"karta-e2e-gang": f"{role}-{self.run}"}
        name = f"gang-{role}-{self.run}-{index}"
        fake_node(self.kube, name, labels, cpu=cpu)
        self.nodes.append(name)
        return labels


@pytest.fixture(scope="module")
def env(
    controllers_cluster: KubeHTTP, tmp_path_factory: pytest.TempPathFactory, corpus: Path
) -> Iterator[Env]:
    kube = controllers_cluster
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    kube.ensure_crd(crd)
    gang_ns, pytorch_ns, control_ns = (namespace(kube, p) for p in ("gang-job", "gang-pytorch", "no-gang"))
    workdir = tmp_path_factory.mktemp("gang-controller")
    with running_controller(kube, workdir, backend="workload-api", namespaces=(gang_ns, pytorch_ns)) as (
        controller,
        ca,
    ):
        # Discovery must know PyTorchJob before the first owner walk through it.
        wait(
            "PyTorchJob in discovery",
            lambda: (
                controller.client.discovery.invalidate()
                or controller.client.discovery.find("kubeflow.org", "v1", "PyTorchJob")
            ),
            timeout=60,
        )
        with registered_webhook(
            kube, url=webhook_url(controller), ca=ca, namespaces=(gang_ns, pytorch_ns), failure_policy="Fail"
        ):
            wait_webhook_active(kube, controller, gang_ns)
            wait_webhook_active(kube, controller, pytorch_ns)
            e = Env(kube, controller, gang_ns, pytorch_ns, control_ns, uuid.uuid4().hex[:6], [])
            try:
                yield e
            finally:
                for node in e.nodes:
                    kube.delete(f"/api/v1/nodes/{node}")
                for ns in (gang_ns, pytorch_ns, control_ns):
                    kube.delete(f"/api/v1/namespaces/{ns}")


def _all_bound(kube: KubeHTTP, ns: str, selector: str, count: int) -> tuple[list[dict[str, Any]], float]:
    started = time.monotonic()
    items = wait(
        f"all {count} pods bound",
        lambda: (lambda got: got if len(bound(got)) == count else None)(pods(kube, ns, selector)),
        timeout=90,
    )
    return items, time.monotonic() - started


def test_job_gang_is_all_or_nothing(env: Env) -> None:
    kube, ns = env.kube, env.gang_ns
    labels = env.node("job", 0, cpu="2")  # room for 2 of the 4 pods
    created = ok(
        kube.post(
            f"/apis/batch/v1/namespaces/{ns}/jobs", batch_job("train", labels, parallelism=4, backoffLimit=0)
        )
    )
    uid = created["metadata"]["uid"]

    held = hold_unbound(kube, ns, 4, "batch.kubernetes.io/job-name=train")
    # Every pod was created by kube-controller-manager and bound to the gang by the webhook.
    assert {p["spec"].get("schedulingGroup", {}).get("podGroupName") for p in held} == {"train-job"}
    workload = ok(kube.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/workloads/train"), 200)
    (template,) = workload["spec"]["podGroupTemplates"]
    assert (template["name"], template["schedulingPolicy"]) == ("job", {"gang": {"minCount": 4}})
    assert workload["metadata"]["ownerReferences"][0]["uid"] == uid
    group = ok(kube.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups/train-job"), 200)
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    assert group["spec"]["workloadRef"] == {"workloadName": "train", "templateName": "job"}
    assert group["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "karta"

    env.node("job", 1, cpu="2")  # now the whole gang fits
    items, took = _all_bound(kube, ns, "batch.kubernetes.io/job-name=train", 4)
    assert sorted({p["spec"]["nodeName"] for p in items}) == [
        f"gang-job-{env.run}-0",
        f"gang-job-{env.run}-1",
    ]
    print(f"\nJob gang: 0/4 bound for {HOLD_S:g}s on room for 2; 4/4 bound {took:.1f}s after the second Node")


def test_without_the_gang_the_same_capacity_binds_a_partial_set(env: Env) -> None:
    """The control experiment: no webhook in this namespace, so no gang; 2 of 4 pods fit and bind."""
    kube, ns = env.kube, env.control_ns
    labels = env.node("control", 0, cpu="2")
    ok(
        kube.post(
            f"/apis/batch/v1/namespaces/{ns}/jobs", batch_job("train", labels, parallelism=4, backoffLimit=0)
        )
    )
    selector = "batch.kubernetes.io/job-name=train"
    wait("4 pods", lambda: len(pods(kube, ns, selector)) == 4)
    items = wait(
        "2 pods bound", lambda: (lambda got: got if len(bound(got)) == 2 else None)(pods(kube, ns, selector))
    )
    assert all("schedulingGroup" not in p["spec"] for p in items)
    time.sleep(2.0)
    assert len(bound(pods(kube, ns, selector))) == 2  # and no more: the other two do not fit
    print("\ncontrol (no gang): 2/4 bound on room for 2")


def _pytorchjob(name: str, node_labels: dict[str, str], workers: int = 3) -> dict[str, Any]:
    def replicas(count: int) -> dict[str, Any]:
        template = pod_template(node_labels)
        template["spec"]["containers"][0]["name"] = "pytorch"
        return {"replicas": count, "restartPolicy": "Never", "template": template}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name},
        "spec": {"pytorchReplicaSpecs": {"Master": replicas(1), "Worker": replicas(workers)}},
    }


def _operator_pod(job: dict[str, Any], replica_type: str, index: int) -> dict[str, Any]:
    """A pod as the training operator creates it: its labels and the controller reference."""
    name = job["metadata"]["name"]
    spec = job["spec"]["pytorchReplicaSpecs"][replica_type.capitalize()]["template"]["spec"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-{replica_type}-{index}",
            "labels": {
                "training.kubeflow.org/job-name": name,
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-type": replica_type,
                "training.kubeflow.org/replica-index": str(index),
                **({"training.kubeflow.org/job-role": "master"} if replica_type == "master" else {}),
            },
            "ownerReferences": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "PyTorchJob",
                    "name": name,
                    "uid": job["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }


def test_pytorchjob_gang_is_all_or_nothing(env: Env) -> None:
    kube, ns = env.kube, env.pytorch_ns
    labels = env.node("pytorch", 0, cpu="3")  # room for 3 of the 4 pods
    job = ok(kube.post(f"/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs", _pytorchjob("ddp", labels)))
    for replica_type, index in (("master", 0), ("worker", 0), ("worker", 1), ("worker", 2)):
        created = ok(kube.post(f"/api/v1/namespaces/{ns}/pods", _operator_pod(job, replica_type, index)))
        assert created["spec"]["schedulingGroup"] == {"podGroupName": "ddp-pytorchjob"}

    selector = "training.kubeflow.org/job-name=ddp"
    hold_unbound(kube, ns, 4, selector)
    group = ok(kube.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups/ddp-pytorchjob"), 200)
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    assert group["metadata"]["ownerReferences"][0]["kind"] == "PyTorchJob"

    env.node("pytorch", 1, cpu="1")
    items, took = _all_bound(kube, ns, selector, 4)
    assert len(items) == 4
    print(
        f"\nPyTorchJob gang: 0/4 bound for {HOLD_S:g}s on room for 3; "
        f"4/4 bound {took:.1f}s after the last Node"
    )


def _min_count(kube: KubeHTTP, ns: str, name: str) -> int | None:
    answer = kube.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups/{name}")
    if answer.status != 200:
        return None
    return int(answer.json()["spec"]["schedulingPolicy"]["gang"]["minCount"])


def _template_min(kube: KubeHTTP, ns: str, name: str) -> int:
    workload = ok(kube.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/workloads/{name}"))
    return int(workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"])


def _bound_count(kube: KubeHTTP, ns: str, selector: str, count: int) -> list[dict[str, Any]] | None:
    items = pods(kube, ns, selector)
    return items if len(bound(items)) == count else None


def test_a_scaled_pytorchjob_gets_its_new_minimum_before_its_new_pods_bind(env: Env) -> None:
    kube, ns, name = env.kube, env.pytorch_ns, "scale"
    selector = f"training.kubeflow.org/job-name={name}"
    labels = env.node("scale", 0, cpu="5")  # room for the master and 4 workers
    job = ok(kube.post(f"/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs", _pytorchjob(name, labels, 4)))
    first = [("master", 0)] + [("worker", i) for i in range(4)]
    for replica_type, index in first:
        ok(kube.post(f"/api/v1/namespaces/{ns}/pods", _operator_pod(job, replica_type, index)))
    wait("5 of 5 bound", lambda: _bound_count(kube, ns, selector, 5), timeout=90)
    assert _min_count(kube, ns, f"{name}-pytorchjob") == 5

    env.node("scale", 1, cpu="3")  # room for 3 of the 4 new workers
    scaled = ok(
        kube.request(
            "PATCH",
            f"/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs/{name}",
            body={"spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 8}}}},
            content_type="application/merge-patch+json",
        )
    )
    started = time.monotonic()
    for index in range(4, 8):  # as the operator creates them once it sees the new replicas
        created = ok(kube.post(f"/api/v1/namespaces/{ns}/pods", _operator_pod(scaled, "worker", index)))
        assert created["spec"]["schedulingGroup"] == {"podGroupName": f"{name}-pytorchjob"}
        # The webhook wrote the new minimum before it answered: it holds when the pod exists, whether
        # or not the reconciler has seen the scale change yet.
        assert _min_count(kube, ns, f"{name}-pytorchjob") == 9, f"{name}-worker-{index} admitted first"
    took = time.monotonic() - started
    # The Workload's template follows too (the reconciler's write: admission only creates a Workload).
    wait("the Workload's template minCount 9", lambda: _template_min(kube, ns, name) == 9, timeout=30)

    # The scheduler tries the new pods; none may bind while 5 + 3 < 9 (a stale minimum of 5 would
    # let 3 of them bind one by one).
    new = [f"{name}-worker-{i}" for i in range(4, 8)]

    def tried() -> bool:
        items = [p for p in pods(kube, ns, selector) if p["metadata"]["name"] in new]
        return len(items) == 4 and all(
            any(
                c["type"] == "PodScheduled" and c["status"] == "False"
                for c in p["status"].get("conditions") or ()
            )
            for p in items
        )

    wait("the scheduler to try the new pods", tried, timeout=60)
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        assert [n for n in bound(pods(kube, ns, selector)) if n in new] == [], "part of the scale-up bound"
        time.sleep(0.5)
    assert len(bound(pods(kube, ns, selector))) == 5

    env.node("scale", 2, cpu="1")  # now the 4 new pods fit: together
    started_bind = time.monotonic()
    wait("9 of 9 bound", lambda: _bound_count(kube, ns, selector, 9), timeout=90)
    print(
        f"\nPyTorchJob 4 -> 8 workers: minCount 9 before each new pod was admitted ({took:.2f}s for 4); "
        f"0/4 new pods bound for {HOLD_S:g}s on room for 3; 4/4 bound "
        f"{time.monotonic() - started_bind:.1f}s after the last Node"
    )
