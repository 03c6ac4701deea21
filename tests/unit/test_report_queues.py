"""The Kueue facts of lists: ``kli get``'s QUEUE cell and the web view's queue column
(:func:`karta.report.queue_cell`, :func:`karta.report.unknown_queue`), the Workloads of a
namespace grouped by job uid (:func:`karta.kube.kueue_workloads_in`, bounded pages), the queues
read for the queue page (:func:`karta.kube.kueue_queues`) and the queue page's rows
(:func:`karta.report.queue_rows`), as Kueue v0.17.0 writes ClusterQueue and LocalQueue status."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator
from typing import Any

import pytest

from karta.cli.views.get import Table
from karta.errors import ApiError
from karta.kube import kueue as kueue_mod
from karta.kube.client import ObjectList
from karta.kube.kueue import kueue_queues, kueue_workloads_in
from karta.kube.resources import ResourceType
from karta.report import queue_cell, queue_detail, queue_rows, unknown_queue

NOW = _dt.datetime(2026, 1, 2, 12, 0, tzinfo=_dt.UTC)
WORKLOAD = ResourceType("kueue.x-k8s.io", "v1beta2", "Workload", "workloads", verbs=("list", "watch"))
CQ = ResourceType("kueue.x-k8s.io", "v1beta2", "ClusterQueue", "clusterqueues", namespaced=False)
LQ = ResourceType("kueue.x-k8s.io", "v1beta2", "LocalQueue", "localqueues")


def _job(uid: str, queue: str | None = "team") -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    return {"kind": "PyTorchJob", "metadata": {"name": uid, "namespace": "ml", "uid": uid, "labels": labels}}


def _workload(uid: str, *conditions: tuple[str, str]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"pytorchjob-{uid}",
            "namespace": "ml",
            "labels": {"kueue.x-k8s.io/job-uid": uid},
            "ownerReferences": [{"uid": uid, "controller": True, "kind": "PyTorchJob", "name": uid}],
        },
        "spec": {"queueName": "team"},
        "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]},
    }


class _Discovery:
    def __init__(self, served: dict[str, ResourceType]) -> None:
        self.served = served

    def preferred(self, group: str, kind: str) -> ResourceType | None:
        return self.served.get(kind)


class _Client:
    """Pages per resource plural; an ApiError raised instead when the plural is refused."""

    def __init__(
        self,
        pages: dict[str, list[ObjectList]],
        *,
        refused: dict[str, int] | None = None,
        served: tuple[ResourceType, ...] = (WORKLOAD, CQ, LQ),
    ) -> None:
        self.discovery = _Discovery({r.kind: r for r in served})
        self.pages = pages
        self.refused = refused or {}
        self.calls: list[dict[str, Any]] = []

    def iter_pages(self, resource: ResourceType, **query: Any) -> Iterator[ObjectList]:
        self.calls.append({"plural": resource.plural, **query})
        if resource.plural in self.refused:
            raise ApiError("no", status=self.refused[resource.plural], reason="Forbidden")
        yield from self.pages.get(resource.plural, [])


def test_the_cell_is_queue_and_state_and_a_question_mark_when_unread() -> None:
    admitted = queue_detail(_job("a"), [_workload("a", ("QuotaReserved", "True"), ("Admitted", "True"))])
    assert admitted is not None
    assert queue_cell(admitted.to_dict()) == "team:Admitted"
    assert queue_cell(queue_detail(_job("b"), [_workload("b")]).to_dict()) == "team:Pending"  # type: ignore[union-attr]
    assert queue_cell(queue_detail(_job("c"), []).to_dict()) == "team:NoWorkload"  # type: ignore[union-attr]
    unknown = unknown_queue(_job("d"), "cannot list workloads.kueue.x-k8s.io in namespace ml (forbidden)")
    assert unknown.to_dict()["state"] == "Unknown" and unknown.to_dict()["queue"] == "team"
    assert queue_cell(unknown.to_dict()) == "team:?"
    assert queue_cell(None) == "<none>"


def test_one_list_per_namespace_by_the_label_grouped_by_job_uid() -> None:
    items = [_workload("a"), _workload("b"), {"metadata": {"name": "unlabelled"}}]
    client = _Client(
        {"workloads": [ObjectList(items[:2], "5", continue_token="x"), ObjectList(items[2:], "5")]}
    )
    read = kueue_workloads_in(client, "ml")  # type: ignore[arg-type]
    assert read.failure is None and read.served
    assert client.calls == [
        {
            "plural": "workloads",
            "namespace": "ml",
            "label_selector": "kueue.x-k8s.io/job-uid",
            "chunk_size": kueue_mod.LIST_PAGE,
            "resource_version": "0",
        }
    ]
    assert sorted(read.by_job_uid()) == ["a", "b"]


def test_a_restarted_list_replaces_the_pages_before() -> None:
    client = _Client(
        {
            "workloads": [
                ObjectList([_workload("a")], "5", continue_token="x"),
                ObjectList([_workload("b")], "6", restarted=True),
            ]
        }
    )
    assert sorted(kueue_workloads_in(client, None).by_job_uid()) == ["b"]  # type: ignore[arg-type]


def test_a_list_longer_than_the_bound_is_a_failure_not_a_partial_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kueue_mod, "MAX_PAGES", 2)
    client = _Client(
        {"workloads": [ObjectList([_workload(str(i))], "5", continue_token="x") for i in range(3)]}
    )
    read = kueue_workloads_in(client, "ml")  # type: ignore[arg-type]
    assert read.failure is not None and read.workloads == []
    assert read.warnings == [
        f"cannot list workloads.kueue.x-k8s.io in namespace ml (more than {2 * kueue_mod.LIST_PAGE} "
        "Workloads): the Kueue queue state is not shown"
    ]


def test_a_refused_list_is_recorded_and_kueue_not_installed_is_not_a_failure() -> None:
    refused = kueue_workloads_in(_Client({}, refused={"workloads": 403}), "ml")  # type: ignore[arg-type]
    assert refused.failure is not None and refused.failure.reason == "forbidden"
    assert "cannot list workloads.kueue.x-k8s.io in namespace ml (forbidden)" in refused.warnings[0]
    absent = kueue_workloads_in(_Client({}, served=()), "ml")  # type: ignore[arg-type]
    assert absent.failure is None and not absent.served


def test_the_table_has_a_queue_column_only_when_asked() -> None:
    row = {
        "name": "first",
        "namespace": "ml",
        "kind": "PyTorchJob",
        "createdAt": "2026-01-02T11:59:00Z",
        "phases": ["Suspended"],
        "gpus": 8,
        "components": [],
        "queue": {"queue": "team", "state": "Pending"},
    }
    plain = {**row, "name": "plain"}
    del plain["queue"]
    lines = Table(show_type=False, wide=False, show_queue=True, now=lambda: NOW).render([row, plain])
    assert lines.splitlines() == [
        "NAME    PHASE       GPU   COMPONENTS   QUEUE          AGE",
        "first   Suspended   8     <none>       team:Pending   60s",
        "plain   Suspended   8     <none>       <none>         60s",
    ]
    assert "QUEUE" not in Table(show_type=False, wide=False, now=lambda: NOW).render([row])


CLUSTER_QUEUE = {
    "metadata": {"name": "gpus"},
    "spec": {
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "default",
                        "resources": [
                            {"name": "cpu", "nominalQuota": "64"},
                            {"name": "nvidia.com/gpu", "nominalQuota": "8"},
                        ],
                    }
                ],
            }
        ]
    },
    "status": {
        "admittedWorkloads": 1,
        "reservingWorkloads": 1,
        "pendingWorkloads": 1,
        "flavorsUsage": [
            {
                "name": "default",
                "resources": [
                    {"name": "nvidia.com/gpu", "total": "8", "borrowed": "0"},
                    {"name": "cpu", "total": "16500m"},
                ],
            }
        ],
        "flavorsReservation": [{"name": "default", "resources": [{"name": "nvidia.com/gpu", "total": "8"}]}],
    },
}


def _local(name: str, cq: str, pending: int = 0) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"clusterQueue": cq},
        "status": {"admittedWorkloads": 1, "reservingWorkloads": 1, "pendingWorkloads": pending},
    }


def test_queue_rows_used_against_nominal_per_flavor_and_resource() -> None:
    (row, orphan) = queue_rows([CLUSTER_QUEUE], [_local("team", "gpus", 1), _local("lost", "absent")])
    assert row == {
        "name": "gpus",
        "missing": False,
        "admitted": 1,
        "reserving": 1,
        "pending": 1,
        "resources": [
            {
                "flavor": "default",
                "resource": "cpu",
                "nominal": "64",
                "used": "16500m",
                "reserved": "0",
                "borrowed": "0",
                "fraction": 16.5 / 64,
            },
            {
                "flavor": "default",
                "resource": "nvidia.com/gpu",
                "nominal": "8",
                "used": "8",
                "reserved": "8",
                "borrowed": "0",
                "fraction": 1.0,
            },
        ],
        "localQueues": [{"namespace": "ml", "name": "team", "admitted": 1, "reserving": 1, "pending": 1}],
    }
    assert orphan["name"] == "absent" and orphan["missing"] and orphan["localQueues"][0]["name"] == "lost"


def test_queue_rows_of_hostile_objects_never_guess() -> None:
    hostile = {
        "metadata": {"name": "odd"},
        "spec": {
            "resourceGroups": [
                {"flavors": [{"name": "f", "resources": [{"name": "gpu", "nominalQuota": "lots"}]}]},
                "x",
            ]
        },
        "status": {"pendingWorkloads": "3", "flavorsUsage": "nope"},
    }
    (row,) = queue_rows([hostile, "junk"], ["junk"])  # type: ignore[list-item]
    assert row["pending"] is None
    assert row["resources"] == [
        {
            "flavor": "f",
            "resource": "gpu",
            "nominal": "lots",
            "used": "0",
            "reserved": "0",
            "borrowed": "0",
            "fraction": None,
        }
    ]
    assert queue_rows([], []) == []


def test_the_queues_are_read_with_kueue_absent_or_refused_said() -> None:
    client = _Client({"clusterqueues": [ObjectList([CLUSTER_QUEUE], "1")]}, refused={"localqueues": 403})
    read = kueue_queues(client)  # type: ignore[arg-type]
    assert read.served and read.cluster_queues == [CLUSTER_QUEUE] and read.local_queues == []
    assert read.warnings == ["cannot list localqueues.kueue.x-k8s.io (forbidden)"]
    assert not kueue_queues(_Client({}, served=())).served  # type: ignore[arg-type]


def _run(client: _Client, *, all_namespaces: bool = False) -> Any:
    from karta.cli.commands.get import Request, Run
    from karta.kube import ConfigOverrides

    run = Run(
        request=Request((("pytorchjob", ()),)),
        phases=frozenset(),
        selector=None,
        chunk_size=500,
        all_namespaces=all_namespaces,
        fmt="table",
        gpu_resources=("nvidia.com/gpu",),
        overrides=ConfigOverrides(),
    )
    run.client = client  # type: ignore[assignment]
    return run


def test_kli_get_reads_the_workloads_once_per_namespace_and_says_unknown_when_refused() -> None:
    client = _Client(
        {"workloads": [ObjectList([_workload("a", ("QuotaReserved", "True"), ("Admitted", "True"))], "1")]}
    )
    run = _run(client)
    views: list[dict[str, Any]] = [{"name": n, "namespace": "ml"} for n in ("a", "b")]
    run.queue_pending = [(views[0], _job("a")), (views[1], _job("b"))]
    run._read_queues()
    assert len(client.calls) == 1 and client.calls[0]["namespace"] == "ml"
    assert [queue_cell(v["queue"]) for v in views] == ["team:Admitted", "team:NoWorkload"]
    assert run.warnings == []

    refused = _run(_Client({}, refused={"workloads": 403}), all_namespaces=True)
    view: dict[str, Any] = {"name": "a", "namespace": "ml"}
    refused.queue_pending = [(view, _job("a"))]
    refused._read_queues()
    assert refused.client.calls[0]["namespace"] is None  # -A: one list of every namespace
    assert queue_cell(view["queue"]) == "team:?" and view["queue"]["state"] == "Unknown"
    assert view["queue"]["message"] == "cannot list workloads.kueue.x-k8s.io (forbidden)"
    assert refused.warnings == [
        "cannot list workloads.kueue.x-k8s.io (forbidden): the Kueue queue state is not shown"
    ]


def test_kli_get_under_watch_reads_no_queue_and_says_why() -> None:
    run = _run(_Client({}))
    run.watching = True
    run.queue_skipped = 2
    run._read_queues()
    assert run.client.calls == []
    assert run.warnings == [
        "2 workloads carry a Kueue queue label: no QUEUE column with -w (Workload changes are not "
        "watched); 'kli get' without -w or 'kli describe' shows the queue state"
    ]
