"""karta.report.queue: where a workload stands in Kueue, from the Kueue Workloads Kueue writes
(conditions and admission as Kueue v0.17.0's scheduler and workload controller set them:
pkg/workload/workload.go SetQuotaReservation / UnsetQuotaReservationWithCondition, Status)."""

from __future__ import annotations

from typing import Any

from karta.cli.views.describe import _queue
from karta.report.queue import QueueDetail, queue_detail, queue_name

UID = "4f1c2a8e-0000-4000-8000-000000000001"
PENDING_MESSAGE = (
    "couldn't assign flavors to pod set master: insufficient unused quota for nvidia.com/gpu in "
    "flavor gpu, 8 more needed"
)


def job(*, queue: str | None = "team-a", uid: str = UID) -> dict[str, Any]:
    labels = {} if queue is None else {"kueue.x-k8s.io/queue-name": queue}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": uid, "labels": labels},
    }


def condition(kind: str, status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-12-06T10:00:00Z",
    }


def workload(
    *conditions: dict[str, Any],
    name: str = "pytorchjob-train-3b1c2",
    owner: str = UID,
    controller: bool = True,
    created: str = "2026-12-06T09:59:58Z",
    admission: dict[str, Any] | None = None,
    active: bool | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "ml",
        "creationTimestamp": created,
        "labels": {"kueue.x-k8s.io/job-uid": owner},
        "ownerReferences": [
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": "PyTorchJob",
                "name": "train",
                "uid": owner,
                "controller": controller,
            }
        ],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-12-06T10:01:00Z"
    spec: dict[str, Any] = {"queueName": "team-a", "podSets": []}
    if active is not None:
        spec["active"] = active
    status: dict[str, Any] = {"conditions": list(conditions)}
    if admission is not None:
        status["admission"] = admission
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


ADMISSION = {
    "clusterQueue": "gpus",
    "podSetAssignments": [{"name": "master", "flavors": {"nvidia.com/gpu": "gpu"}}],
}


def test_a_workload_without_queue_label_or_kueue_workload_has_no_queue() -> None:
    assert queue_detail(job(queue=None), []) is None
    assert queue_name(job(queue=None)) is None
    assert queue_name(job()) == "team-a"


def test_a_queue_label_without_a_workload_says_so_and_is_not_pending() -> None:
    detail = queue_detail(job(), [])
    assert detail is not None
    assert (detail.state, detail.workload, detail.queue) == ("NoWorkload", None, "team-a")
    assert "no Kueue Workload" in detail.message


def test_pending_shows_kueues_reason_and_message() -> None:
    wl = workload(condition("QuotaReserved", "False", "Pending", PENDING_MESSAGE))
    detail = queue_detail(job(), [wl])
    assert detail == QueueDetail(
        queue="team-a",
        workload="pytorchjob-train-3b1c2",
        state="Pending",
        cluster_queue=None,
        reason="Pending",
        message=PENDING_MESSAGE,
    )
    assert _queue(detail.to_dict()) == [
        f"Queue: team-a: Pending (Pending: {PENDING_MESSAGE})   workload: pytorchjob-train-3b1c2"
    ]


def test_a_new_workload_without_conditions_is_pending() -> None:
    detail = queue_detail(job(), [workload()])
    assert detail is not None and (detail.state, detail.reason, detail.message) == ("Pending", "", "")


def test_admitted_names_the_cluster_queue() -> None:
    wl = workload(
        condition("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue gpus"),
        condition("Admitted", "True", "Admitted", "The workload is admitted"),
        admission=ADMISSION,
    )
    detail = queue_detail(job(), [wl])
    assert detail is not None
    assert (detail.state, detail.cluster_queue, detail.reason) == ("Admitted", "gpus", "")
    assert _queue(detail.to_dict())[0].startswith("Queue: team-a (ClusterQueue gpus): Admitted")


def test_quota_reserved_waits_for_admission_checks() -> None:
    wl = workload(
        condition("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue gpus"),
        condition("Admitted", "False", "UnsatisfiedAdmissionChecks", "The workload has not all checks ready"),
        admission=ADMISSION,
    )
    detail = queue_detail(job(), [wl])
    assert detail is not None
    assert (detail.state, detail.reason) == ("QuotaReserved", "UnsatisfiedAdmissionChecks")


def test_finished_wins_and_preemption_is_a_note() -> None:
    finished = workload(
        condition("QuotaReserved", "True", "QuotaReserved"),
        condition("Admitted", "True", "Admitted"),
        condition("Finished", "True", "Succeeded", "PyTorchJob train successfully completed."),
        admission=ADMISSION,
    )
    detail = queue_detail(job(), [finished])
    assert detail is not None and (detail.state, detail.reason) == ("Finished", "Succeeded")

    preempted = workload(
        condition("QuotaReserved", "False", "Pending", PENDING_MESSAGE),
        condition(
            "Evicted",
            "True",
            "Preempted",
            "Preempted to accommodate a workload (UID: x) due to prioritization",
        ),
        condition("Preempted", "True", "InClusterQueue", "Preempted to accommodate a workload (UID: x)"),
    )
    detail = queue_detail(job(), [preempted])
    assert detail is not None and detail.state == "Pending"
    assert detail.notes == (
        "evicted: Preempted: Preempted to accommodate a workload (UID: x) due to prioritization",
        "preempted: InClusterQueue: Preempted to accommodate a workload (UID: x)",
    )


def test_an_admitted_workload_being_evicted_is_evicting() -> None:
    wl = workload(
        condition("QuotaReserved", "True", "QuotaReserved"),
        condition("Admitted", "True", "Admitted"),
        condition("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout ml/train"),
        admission=ADMISSION,
    )
    detail = queue_detail(job(), [wl])
    assert detail is not None
    assert (detail.state, detail.reason, detail.notes) == ("Evicting", "PodsReadyTimeout", ())


def test_a_deactivated_workload_is_inactive() -> None:
    wl = workload(condition("Evicted", "True", "Deactivated", "The workload is deactivated"), active=False)
    detail = queue_detail(job(), [wl])
    assert detail is not None and (detail.state, detail.reason) == ("Inactive", "Deactivated")


def test_only_workloads_the_object_controls_count_and_the_newest_live_one_is_shown() -> None:
    other = workload(name="someone-else", owner="another-uid")
    not_controller = workload(name="not-controller", controller=False)
    assert queue_detail(job(), [other, not_controller]).state == "NoWorkload"  # type: ignore[union-attr]

    old = workload(name="old", created="2026-12-06T09:00:00Z")
    replacement = workload(name="new", created="2026-12-06T10:00:00Z")
    deleting = workload(name="newest-deleting", created="2026-12-06T11:00:00Z", deleting=True)
    detail = queue_detail(job(), [old, replacement, deleting])
    assert detail is not None and detail.workload == "new"
    assert detail.notes == (
        "3 Kueue Workloads are owned by it; shown: the newest, others: newest-deleting, old",
    )


def test_hostile_shapes_are_read_as_absent() -> None:
    broken: list[Any] = [
        {"metadata": "x"},
        {"metadata": {"ownerReferences": "x"}},
        {"metadata": {"ownerReferences": [{"uid": UID, "controller": True}]}, "status": {"conditions": "x"}},
        {
            "metadata": {"ownerReferences": [{"uid": UID, "controller": True}]},
            "status": {"conditions": [1, {"type": 2}]},
            "spec": 3,
        },
    ]
    detail = queue_detail(job(), broken)
    assert detail is not None and detail.state == "Pending"
    assert queue_detail({"metadata": None}, broken) is None
