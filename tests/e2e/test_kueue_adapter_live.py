"""karta.kueue driven by hand as karta's controller part will drive it, against the real Kueue of
the test cluster (``kueue_cluster``) and the training operator: PyTorchJobs suspended at creation
(the webhook's ``suspend``), their Workloads made by ``build_workload``, the admitted one started
through the write-back paths (``admission_infos`` + ``start``: the operator then creates pods with
the flavor's node selector), the second pending, the first deleted (its Workload's finalizer
dropped as the controller will) and the second admitted and started; a preempted one stopped with
its templates restored (docs/kueue.md)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from karta.catalog import catalog_definition
from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.kueue.admission import admission_infos
from karta.kueue.patches import is_suspended, start, stop, suspend
from karta.kueue.workload import build_workload, equivalent

from .kubehttp import KubeHTTP, load_manifests, ok, wait
from .test_kueue_live import KUEUE, QUEUE_LABEL, Queues, _admitted, _condition, _container
from .test_kueue_live import queues as queues  # the fixture

EVALUATOR = Evaluator(trusted=True)
PYTORCHJOBS = "/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs"


def _put(cluster: KubeHTTP, path: str, body: Any) -> Any:
    return cluster.request("PUT", path, body=body)


def _karta() -> Any:
    karta = catalog_definition("kubeflow-org-pytorchjob-v1")
    assert karta is not None
    return karta


def _create(cluster: KubeHTTP, q: Queues, name: str, *, priority_class: str | None = None) -> dict[str, Any]:
    """A PyTorchJob of two 4-GPU workers, suspended as karta's webhook leaves it at creation."""
    labels = {QUEUE_LABEL: q.lq}
    if priority_class:
        labels["kueue.x-k8s.io/priority-class"] = priority_class
    worker = {"replicas": 2, "template": {"spec": {"containers": [{**_container(4), "name": "pytorch"}]}}}
    body = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": q.ns, "labels": labels},
        "spec": {"pytorchReplicaSpecs": {"Worker": worker}},
    }
    held = suspend(ComponentFactory(_karta(), body, evaluator=EVALUATOR))
    return ok(cluster.post(PYTORCHJOBS.format(ns=q.ns), held))


def _job(cluster: KubeHTTP, q: Queues, name: str) -> dict[str, Any]:
    return ok(cluster.get(f"{PYTORCHJOBS.format(ns=q.ns)}/{name}"))


def _flavors(cluster: KubeHTTP) -> dict[str, dict[str, Any]]:
    return {f["metadata"]["name"]: f for f in ok(cluster.get(f"{KUEUE}/resourceflavors"))["items"]}


def _start_when_admitted(cluster: KubeHTTP, q: Queues, name: str, workload: str) -> dict[str, Any]:
    """The controller part's step on an admitted Workload: write the admission, resume."""
    admitted = wait(f"Workload {workload} to be admitted", lambda: _admitted(w := q.workload(workload)) and w)
    factory = ComponentFactory(_karta(), _job(cluster, q, name), evaluator=EVALUATOR)
    assert is_suspended(factory)
    running = start(factory, admitted, admission_infos(admitted, _flavors(cluster)))
    return ok(_put(cluster, f"{PYTORCHJOBS.format(ns=q.ns)}/{name}", running))


@pytest.fixture
def workloads(kueue_cluster: KubeHTTP, queues: Queues, corpus: Path) -> str:
    """The namespace's Workloads path, once the PyTorchJob CRD is there."""
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    kueue_cluster.ensure_crd(crd)
    return f"{KUEUE}/namespaces/{queues.ns}/workloads"


def test_two_pytorchjobs_share_8_gpus_through_karta_kueue(
    kueue_cluster: KubeHTTP, queues: Queues, workloads: str
) -> None:
    base = workloads
    names = {}
    for job in ("first", "second"):
        created = _create(kueue_cluster, queues, job)
        built = build_workload(ComponentFactory(_karta(), created, evaluator=EVALUATOR))
        names[job] = ok(kueue_cluster.post(base, built.obj))["metadata"]["name"]
        # the stored Workload (with the API server's defaults) still describes the job
        assert equivalent(queues.workload(names[job]), built, admitted=False)

    running = _start_when_admitted(kueue_cluster, queues, "first", names["first"])
    assert running["spec"]["runPolicy"]["suspend"] is False
    template = running["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    assert template["spec"]["nodeSelector"] == queues.node_labels
    assert queues.toleration in template["spec"]["tolerations"]
    assert template["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "worker"
    # the training operator creates the pods, with the admitted flavor's node selector
    selector = {"labelSelector": "training.kubeflow.org/job-name=first"}
    pods = wait(
        "the first job's pods",
        lambda: ok(kueue_cluster.get(f"/api/v1/namespaces/{queues.ns}/pods", params=selector))["items"],
    )
    assert pods[0]["spec"]["nodeSelector"] == queues.node_labels

    def pending() -> bool:
        return _condition(queues.workload(names["second"]), "QuotaReserved").get("reason") == "Pending"

    wait("the second Workload to be pending", pending)
    assert _job(kueue_cluster, queues, "second")["spec"]["runPolicy"]["suspend"] is True

    # the first job deleted: the garbage collector deletes its Workload, whose finalizer the
    # controller part drops (there is no job left to stop)
    ok(kueue_cluster.delete(f"{PYTORCHJOBS.format(ns=queues.ns)}/first"))
    wait(
        "the first Workload to be deleted by its owner",
        lambda: queues.workload(names["first"])["metadata"].get("deletionTimestamp"),
    )
    gone = queues.workload(names["first"])
    gone["metadata"]["finalizers"] = []
    ok(_put(kueue_cluster, f"{base}/{names['first']}", gone))
    running = _start_when_admitted(kueue_cluster, queues, "second", names["second"])
    assert running["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] == (
        queues.node_labels
    )


def test_a_preempted_job_is_stopped_with_its_templates_restored(
    kueue_cluster: KubeHTTP, queues: Queues, workloads: str
) -> None:
    cq = queues.get_cq()
    cq["spec"]["preemption"] = {"withinClusterQueue": "LowerPriority"}
    ok(_put(kueue_cluster, f"{KUEUE}/clusterqueues/{queues.cq}", cq))
    high = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass"}
    high |= {"metadata": {"name": f"{queues.ns}-high"}, "value": 1000}
    ok(kueue_cluster.post(f"{KUEUE}/workloadpriorityclasses", high))
    try:
        base = workloads
        low = _create(kueue_cluster, queues, "low")
        held = copy.deepcopy(low)
        low_name = ok(
            kueue_cluster.post(base, build_workload(ComponentFactory(_karta(), low, evaluator=EVALUATOR)).obj)
        )["metadata"]["name"]
        _start_when_admitted(kueue_cluster, queues, "low", low_name)
        urgent = _create(kueue_cluster, queues, "urgent", priority_class=f"{queues.ns}-high")
        built = build_workload(ComponentFactory(_karta(), urgent, evaluator=EVALUATOR), priority=1000)
        assert built.obj["spec"]["priorityClassRef"]["name"] == f"{queues.ns}-high"
        urgent_name = ok(kueue_cluster.post(base, built.obj))["metadata"]["name"]

        evicted = wait(
            "the low Workload to be evicted",
            lambda: _condition(w := queues.workload(low_name), "Evicted").get("status") == "True" and w,
        )
        assert _condition(evicted, "Evicted")["reason"] == "Preempted"
        factory = ComponentFactory(_karta(), _job(kueue_cluster, queues, "low"), evaluator=EVALUATOR)
        stopped = ok(_put(kueue_cluster, f"{PYTORCHJOBS.format(ns=queues.ns)}/low", stop(factory, evicted)))
        assert stopped["spec"]["runPolicy"]["suspend"] is True
        assert stopped["spec"]["pytorchReplicaSpecs"] == held["spec"]["pytorchReplicaSpecs"]
        assert "run.ai/karta-kueue-restore" not in (stopped["metadata"].get("annotations") or {})
        # Kueue keeps the evicted Workload's quota until its owner's controller releases it
        # (docs/kueue.md 5): once no pod of it is left, clear the reservation and requeue
        selector = {"labelSelector": "training.kubeflow.org/job-name=low"}
        wait(
            "the low job's pods to be gone",
            lambda: (
                not ok(kueue_cluster.get(f"/api/v1/namespaces/{queues.ns}/pods", params=selector))["items"]
            ),
        )
        released = queues.workload(low_name)
        now = _condition(released, "Evicted")["lastTransitionTime"]
        conditions = [
            c for c in released["status"]["conditions"] if c["type"] not in ("QuotaReserved", "Admitted")
        ]
        conditions += [
            {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "evicted",
             "lastTransitionTime": now},
            {"type": "Requeued", "status": "True", "reason": "Preempted", "message": "evicted",
             "lastTransitionTime": now},
        ]  # fmt: skip
        released["status"]["conditions"] = conditions
        released["status"].pop("admission", None)
        ok(_put(kueue_cluster, f"{base}/{low_name}/status", released))
        running = _start_when_admitted(kueue_cluster, queues, "urgent", urgent_name)
        assert running["spec"]["runPolicy"]["suspend"] is False
    finally:
        kueue_cluster.delete(f"{KUEUE}/workloadpriorityclasses/{queues.ns}-high")
