"""karta.report.queue: where a workload stands in Kueue, from the Kueue Workloads Kueue writes
(conditions and admission as Kueue v0.17.0's scheduler and workload controller set them:
pkg/workload/workload.go SetQuotaReservation / UnsetQuotaReservationWithCondition, Status)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from karta.cli.views.describe import _queue
from karta.report.queue import (
    PendingQuery,
    QueueDetail,
    QueuePosition,
    pending_query,
    queue_cell,
    queue_detail,
    queue_name,
)

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


# -- the position (Kueue's visibility API: PendingWorkloadsSummary items, positions from 0) -----


@dataclass(frozen=True)
class Pending:
    """A pending list as :func:`karta.kube.kueue_pending` returns it."""

    items: list[Any] = field(default_factory=list)
    complete: bool = True
    cluster_queue: str | None = "gpus"
    unread: str = ""


def pending_item(name: str, in_cq: Any, in_lq: Any, *, namespace: str | None = "ml") -> dict[str, Any]:
    """An item of ``localqueues/<lq>/pendingworkloads`` as Kueue v0.17.0 writes it
    (pkg/visibility/storage/utils.go newPendingWorkload)."""
    meta: dict[str, Any] = {"name": name, "creationTimestamp": "2026-12-06T09:59:58Z"}
    if namespace is not None:
        meta["namespace"] = namespace
    return {
        "metadata": meta,
        "priority": 0,
        "localQueueName": "team-a",
        "positionInClusterQueue": in_cq,
        "positionInLocalQueue": in_lq,
    }


PENDING_WL = workload(condition("QuotaReserved", "False", "Pending", PENDING_MESSAGE))


def test_the_pending_list_is_read_only_for_a_pending_workload() -> None:
    query = pending_query(job(), queue_detail(job(), [PENDING_WL]))
    assert query == PendingQuery(namespace="ml", local_queue="team-a", workload="pytorchjob-train-3b1c2")
    admitted = workload(
        condition("Admitted", "True"), condition("QuotaReserved", "True"), admission=ADMISSION
    )
    assert pending_query(job(), queue_detail(job(), [admitted])) is None
    assert pending_query(job(), queue_detail(job(), [])) is None  # no Workload yet
    assert pending_query(job(), queue_detail(job(), [workload(active=False)])) is None  # Inactive
    assert pending_query(job(), None) is None
    no_namespace = job()
    del no_namespace["metadata"]["namespace"]
    assert pending_query(no_namespace, queue_detail(no_namespace, [PENDING_WL])) is None


def test_kueues_positions_from_zero_are_shown_from_one() -> None:
    listed = Pending(
        [pending_item("other", 0, 0), pending_item("pytorchjob-train-3b1c2", 2, 1), pending_item("x", 3, 2)]
    )
    detail = queue_detail(job(), [PENDING_WL], listed)
    assert detail is not None
    assert detail.position == QueuePosition(
        cluster_queue=3, local_queue=2, local_queue_name="team-a", cluster_queue_name="gpus"
    )
    assert detail.position_note == ""
    text = "position 3 in ClusterQueue gpus, 2 in LocalQueue team-a"
    assert detail.to_dict()["position"] == {
        "clusterQueue": 3,
        "localQueue": 2,
        "clusterQueueName": "gpus",
        "localQueueName": "team-a",
        "text": text,
    }
    assert _queue(detail.to_dict()) == [
        f"Queue: team-a: Pending, {text} (Pending: {PENDING_MESSAGE})   workload: pytorchjob-train-3b1c2"
    ]
    assert queue_cell(detail.to_dict()) == "team-a:Pending#3"
    unnamed = queue_detail(job(), [PENDING_WL], Pending(listed.items, cluster_queue=None))
    assert unnamed is not None and unnamed.position is not None
    assert unnamed.position.text == "position 3 in its ClusterQueue, 2 in LocalQueue team-a"


def test_an_admitted_workload_gets_no_position_even_if_listed() -> None:
    admitted = workload(
        condition("Admitted", "True"), condition("QuotaReserved", "True"), admission=ADMISSION
    )
    detail = queue_detail(job(), [admitted], Pending([pending_item("pytorchjob-train-3b1c2", 0, 0)]))
    assert detail is not None and detail.position is None and detail.position_note == ""
    assert "position" not in detail.to_dict() and queue_cell(detail.to_dict()) == "team-a:Admitted"


def test_a_list_that_could_not_be_read_gives_the_reason_on_one_line() -> None:
    why = "cannot get localqueues/pendingworkloads.visibility.kueue.x-k8s.io in namespace ml (forbidden)"
    detail = queue_detail(job(), [PENDING_WL], Pending(unread=why))
    assert detail is not None and detail.position is None
    assert detail.position_note == f"position not shown: {why}"
    assert detail.to_dict()["positionNote"] == detail.position_note
    lines = _queue(detail.to_dict())
    assert lines[1] == f"  position not shown: {why}"
    assert queue_cell(detail.to_dict()) == "team-a:Pending"


@pytest.mark.parametrize(
    "bad",
    [
        {"positionInLocalQueue": 0},  # positionInClusterQueue missing
        {"positionInClusterQueue": True, "positionInLocalQueue": 0},  # a bool is not a position
        {"positionInClusterQueue": -1, "positionInLocalQueue": 0},
        {"positionInClusterQueue": "2", "positionInLocalQueue": 0},
        {"positionInClusterQueue": 2.0, "positionInLocalQueue": 0},
        {"positionInClusterQueue": 1 << 40, "positionInLocalQueue": 0},
        {"positionInClusterQueue": 0, "positionInLocalQueue": None},
    ],
)
def test_a_listed_workload_without_valid_positions_is_never_given_a_number(bad: dict[str, Any]) -> None:
    item = {"metadata": {"name": "pytorchjob-train-3b1c2", "namespace": "ml"}, **bad}
    detail = queue_detail(job(), [PENDING_WL], Pending([item]))
    assert detail is not None and detail.position is None
    assert detail.position_note == (
        "position not shown: Kueue's pending list of LocalQueue team-a gives no valid "
        "positionInClusterQueue/positionInLocalQueue for it"
    )


def test_hostile_items_are_skipped_and_a_workload_not_listed_says_how_much_was_read() -> None:
    items: list[Any] = [
        None,
        "pytorchjob-train-3b1c2",
        {"metadata": "pytorchjob-train-3b1c2"},
        {"positionInClusterQueue": 0, "positionInLocalQueue": 0},  # no metadata
        pending_item("pytorchjob-train-3b1c2", 0, 0, namespace="other"),  # another namespace's
    ]
    complete = queue_detail(job(), [PENDING_WL], Pending(items))
    assert complete is not None and complete.position is None
    assert complete.position_note == (
        "position not shown: Kueue's pending list of LocalQueue team-a does not hold it yet (5 listed)"
    )
    bounded = queue_detail(
        job(), [PENDING_WL], Pending([pending_item(f"w{i}", i, i) for i in range(1000)], False)
    )
    assert bounded is not None and bounded.position is None
    assert bounded.position_note == (
        "position not shown: not among the first 1000 pending Workloads of LocalQueue team-a read"
    )
    no_namespace = queue_detail(
        job(), [PENDING_WL], Pending([pending_item("pytorchjob-train-3b1c2", 4, 0, namespace=None)])
    )
    assert no_namespace is not None and no_namespace.position is not None
    assert no_namespace.position.cluster_queue == 5
