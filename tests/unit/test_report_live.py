"""karta.report.live, what ``kli describe`` adds to a live workload's tree: its conditions, why its
pods are pending (PodScheduled messages grouped), whose Events to read and the Events as rows
(newest last, identical ones of several pods merged, bounded); and rows whose pods could not all be
read (counts unknown, not zero), in the report and the text."""

from __future__ import annotations

import datetime as dt
from typing import Any

from karta.cli.views.describe import render_table
from karta.definitions import DefinitionStore
from karta.jq import Evaluator
from karta.report import (
    describe_report,
    event_rows,
    event_subjects,
    live_details,
    pending_groups,
    workload_conditions,
    workload_rows,
)

NOW = dt.datetime(2025, 1, 1, 12, 10, tzinfo=dt.UTC)
SCHEDULER = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available."


def pod(name: str, *, phase: str = "Pending", node: str | None = None, **condition: str) -> dict[str, Any]:
    conditions: list[dict[str, Any]] = []
    if condition:
        conditions.append({"type": "PodScheduled", **condition})
    if phase == "Running":
        conditions.append({"type": "Ready", "status": "True"})
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {"job-name": "train"}},
        "spec": spec,
        "status": {"phase": phase, "conditions": conditions},
    }


def unschedulable(name: str, message: str = SCHEDULER) -> dict[str, Any]:
    return pod(name, status="False", reason="Unschedulable", message=message)


def test_pending_pods_are_grouped_by_reason_and_message() -> None:
    pods = [
        unschedulable("train-10"),
        unschedulable("train-2"),
        pod("train-3", status="False", reason="SchedulingGated", message="Scheduling is blocked"),
        pod("train-4"),  # no scheduling decision yet
        pod("train-5", phase="Running", node="n", status="True"),
        pod("train-6", node="n", status="True"),  # scheduled, its containers are starting
    ]
    groups = pending_groups(pods)
    assert [(g.reason, g.message, g.pods) for g in groups] == [
        ("Unschedulable", SCHEDULER, ("train-2", "train-10")),
        ("", "", ("train-4",)),
        ("SchedulingGated", "Scheduling is blocked", ("train-3",)),
    ]
    assert groups[0].to_dict() == {
        "count": 2,
        "reason": "Unschedulable",
        "message": SCHEDULER,
        "pods": ["train-2", "train-10"],
    }
    assert pending_groups([]) == []


def test_conditions_in_the_objects_order() -> None:
    obj = {
        "status": {
            "conditions": [
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "NewReplicaSetAvailable",
                    "message": "done",
                    "lastTransitionTime": "2025-01-01T12:00:00Z",
                },
                {"type": "Available", "status": "False"},
                {"status": "True"},  # no type: skipped
                "garbage",
            ]
        }
    }
    rows = workload_conditions(obj)
    assert [(c.type, c.status, c.reason, c.message, c.last_transition) for c in rows] == [
        ("Progressing", "True", "NewReplicaSetAvailable", "done", "2025-01-01T12:00:00Z"),
        ("Available", "False", "", "", None),
    ]
    assert workload_conditions({"status": {"conditions": "no"}}) == []
    assert workload_conditions({}) == []


def test_event_subjects_are_the_workload_then_its_unhealthy_pods() -> None:
    obj = {"metadata": {"uid": "job-uid"}}
    pods = [unschedulable(f"p-{i}") for i in (3, 1, 2)] + [pod("ok", phase="Running", node="n")]
    assert event_subjects(obj, pods, pod_limit=2) == ["job-uid", "uid-p-1", "uid-p-2"]
    assert event_subjects({"metadata": {}}, []) == []


def event(
    kind: str, name: str, reason: str, message: str, *, last: str, first: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{name}.{reason}.{last}", "uid": f"{name}-{reason}-{last}"},
        "involvedObject": {"kind": kind, "name": name},
        "type": "Warning" if reason.startswith("Failed") else "Normal",
        "reason": reason,
        "message": message,
        "source": {"component": "job-controller" if kind == "Job" else ""},
        "firstTimestamp": first or last,
        "lastTimestamp": last,
        **extra,
    }


def scheduler_event(pod_name: str, at: str, count: int) -> dict[str, Any]:
    """As the scheduler writes it (events.k8s.io): eventTime, a series, reportingComponent."""
    return {
        "metadata": {"name": f"{pod_name}.x", "uid": f"{pod_name}-sched"},
        "involvedObject": {"kind": "Pod", "name": pod_name},
        "type": "Warning",
        "reason": "FailedScheduling",
        "message": SCHEDULER,
        "source": {},
        "reportingComponent": "default-scheduler",
        "eventTime": "2025-01-01T12:00:01.123456Z",
        "series": {"count": count, "lastObservedTime": at},
    }


def test_events_newest_last_identical_pod_events_merged() -> None:
    events = [
        scheduler_event("train-1", "2025-01-01T12:08:00.000000Z", 3),
        event("Job", "train", "SuccessfulCreate", "Created pod: train-1", last="2025-01-01T12:00:00Z"),
        scheduler_event("train-0", "2025-01-01T12:09:00.000000Z", 2),
        event("Job", "train", "SuccessfulCreate", "Created pod: train-0", last="2025-01-01T12:00:00Z"),
    ]
    rows, omitted = event_rows(events)
    assert omitted == 0
    assert [(r.reason, r.objects, r.count, r.source) for r in rows] == [
        ("SuccessfulCreate", ("Job/train",), 1, "job-controller"),
        ("SuccessfulCreate", ("Job/train",), 1, "job-controller"),
        ("FailedScheduling", ("Pod/train-0", "Pod/train-1"), 5, "default-scheduler"),
    ]
    assert [r.message for r in rows[:2]] == ["Created pod: train-0", "Created pod: train-1"]
    merged = rows[2]
    assert (merged.first_seen, merged.last_seen) == (
        "2025-01-01T12:00:01.123456Z",
        "2025-01-01T12:09:00.000000Z",
    )
    assert merged.to_dict()["from"] == "default-scheduler"


def test_events_are_bounded_to_the_newest() -> None:
    events = [
        event("Job", "train", "SuccessfulCreate", f"Created pod: train-{i}", last=f"2025-01-01T12:0{i}:00Z")
        for i in range(6)
    ]
    rows, omitted = event_rows(events, limit=4)
    assert omitted == 2
    assert [r.message for r in rows] == [f"Created pod: train-{i}" for i in range(2, 6)]
    assert event_rows(events, limit=0)[1] == 0


JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": "train",
        "namespace": "ml",
        "uid": "job-uid",
        "creationTimestamp": "2025-01-01T12:00:00Z",
    },
    "spec": {
        "parallelism": 2,
        "completions": 2,
        "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
    },
    "status": {"active": 2, "ready": 0, "startTime": "2025-01-01T12:00:00Z"},
}


def _describe(
    pods: list[dict[str, Any]], *, pods_complete: bool, events: list[dict[str, Any]], events_read: bool = True
) -> tuple[dict[str, Any], str]:
    chosen = DefinitionStore.offline(user_directory=None).by_name("batch-job-v1")
    assert chosen is not None
    built = workload_rows(
        chosen.karta,
        JOB,
        evaluator=Evaluator(trusted=True),
        gpu_resources=("nvidia.com/gpu",),
        pods=pods,
        pods_complete=pods_complete,
    )
    details = live_details(JOB, pods, events, warnings=["w"], events_read=events_read)
    view = describe_report(
        obj=JOB,
        definition=chosen.name,
        origin=chosen.origin,
        tree=built.tree,
        rows=built.rows,
        file_mode=False,
        live=details,
        pods_complete=built.pods_complete,
    )
    return dict(view), render_table(view, built.rows, now=NOW)


def test_the_describe_report_and_text_of_a_job_whose_pods_cannot_be_scheduled() -> None:
    pods = [unschedulable("train-0"), unschedulable("train-1")]
    events = [
        event("Job", "train", "SuccessfulCreate", "Created pod: train-0", last="2025-01-01T12:00:00Z"),
        scheduler_event("train-0", "2025-01-01T12:09:00.000000Z", 4),
        scheduler_event("train-1", "2025-01-01T12:09:30.000000Z", 4),
    ]
    view, text = _describe(pods, pods_complete=True, events=events)
    assert view["phases"] == ["Initializing"]
    assert view["podsComplete"] is True
    assert view["components"][0]["replicas"] == {"desired": 2, "current": 2, "ready": 0}
    assert view["pendingPods"] == [
        {"count": 2, "reason": "Unschedulable", "message": SCHEDULER, "pods": ["train-0", "train-1"]}
    ]
    assert view["conditions"] == []
    assert [e["reason"] for e in view["events"]] == ["SuccessfulCreate", "FailedScheduling"]
    assert view["warnings"] == ["w"]
    assert text.endswith(
        "Phase: Initializing\n"
        "\n"
        "Pending pods:\n"
        f"  2 pods Pending: Unschedulable: {SCHEDULER}\n"
        "\n"
        "Resources:\n"
        "COMPONENT   REPLICAS   GPU   CPU   MEMORY\n"
        "job         2          0     0     0\n"
        "TOTAL       2          0     0     0\n"
        "\n"
        "Events:\n"
        "TYPE      REASON             AGE                   FROM                OBJECT             MESSAGE\n"
        "Normal    SuccessfulCreate   10m                   job-controller      Job/train          "
        "Created pod: train-0\n"
        "Warning   FailedScheduling   30s (x8 over 9m58s)   default-scheduler   Pod/train-0 (+1)   "
        f"{SCHEDULER}\n"
    ), text


def test_counts_are_unknown_when_pods_could_not_all_be_read() -> None:
    view, text = _describe([], pods_complete=False, events=[], events_read=False)
    assert view["podsComplete"] is False
    assert view["components"][0]["replicas"] == {"desired": 2, "current": None, "ready": None}
    assert view["events"] is None
    assert "`-- job    ?/2 ready\n" in text
    assert "0/2 ready" not in text
    assert text.endswith("\nEvents: <unknown> (they could not be read)\n")
    # nothing to read events from is not the same as events not read
    assert _describe([], pods_complete=True, events=[])[1].endswith("\nEvents: <none>\n")
