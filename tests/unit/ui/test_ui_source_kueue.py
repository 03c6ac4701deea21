"""The web view's source and Kueue: a row's queue state follows the Kueue Workloads it watches
(by the Workload's controller owner), the workload page's ``describe.queue`` is built from them,
and a refused watch makes the state Unknown (``team:?``), never the last one seen. The events are
applied as the source's thread applies them (:meth:`ClusterSource._apply`)."""

from __future__ import annotations

from typing import Any, cast

from karta.definitions import DefinitionStore
from karta.kube.client import KubeClient
from karta.kube.resources import ResourceType
from karta.ui import ClusterSource, RowStore
from karta.ui.source import _Watched, kueue_workload_resource

STORE = DefinitionStore.offline(user_directory=None)
JOB = STORE.by_name("batch-job-v1")
WORKLOADS = ResourceType("kueue.x-k8s.io", "v1beta2", "Workload", "workloads", verbs=("list", "watch"))


def _job(queue: str | None = "team") -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-train", "labels": labels},
        "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}},
    }


def _workload(admitted: bool) -> dict[str, Any]:
    status = "True" if admitted else "False"
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": "job-train",
            "namespace": "ml",
            "uid": "uid-wl",
            "labels": {"kueue.x-k8s.io/job-uid": "uid-train"},
            "ownerReferences": [{"kind": "Job", "name": "train", "uid": "uid-train", "controller": True}],
        },
        "spec": {"queueName": "team"},
        "status": {
            "conditions": [
                {"type": "QuotaReserved", "status": status},
                {"type": "Admitted", "status": status},
            ]
        },
    }


def _source() -> ClusterSource:
    source = ClusterSource(cast(KubeClient, object()), lambda: STORE, store=RowStore())  # never called
    source._watched = [_Watched("kueue", WORKLOADS)]
    source._workloads["uid-train"] = (_job(), JOB)
    return source


def _queue(source: ClusterSource) -> Any:
    return source.row("uid-train", *source._workloads["uid-train"])["queue"]


def test_the_queue_state_follows_the_watched_workloads() -> None:
    source = _source()
    assert _queue(source)["text"] == "team:NoWorkload"
    source._apply([(0, 0, "ADDED", _workload(admitted=False))])
    assert "uid-train" in source._dirty
    assert _queue(source)["text"] == "team:Pending"
    source._apply([(0, 0, "MODIFIED", _workload(admitted=True))])
    assert _queue(source)["text"] == "team:Admitted"
    assert source.kueue_workloads_of("uid-train") == [_workload(admitted=True)]
    source._apply([(0, 0, "DELETED", _workload(admitted=True))])
    assert _queue(source)["text"] == "team:NoWorkload"


def test_a_refused_watch_is_unknown_never_the_last_state() -> None:
    source = _source()
    source._apply([(0, 0, "ADDED", _workload(admitted=True))])
    source._dirty.clear()
    source._apply([(0, 0, "ERROR", "workloads.kueue.x-k8s.io is forbidden")])
    assert "uid-train" in source._dirty
    queue = _queue(source)
    assert queue["state"] == "Unknown" and queue["text"] == "team:?"
    assert "forbidden" in queue["message"]
    assert source.kueue_workloads_of("uid-train") is None


def test_a_workload_without_the_label_or_a_workload_has_no_queue() -> None:
    source = _source()
    source._workloads["uid-train"] = (_job(queue=None), JOB)
    assert _queue(source) is None


def test_the_workload_resource_is_kueues_watchable_one() -> None:
    other = ResourceType("scheduling.k8s.io", "v1alpha1", "Workload", "workloads", verbs=("list", "watch"))
    assert kueue_workload_resource([other, WORKLOADS]) is WORKLOADS
    assert kueue_workload_resource([other]) is None
