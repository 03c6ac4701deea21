"""The web view's row model, list query and row store, offline: real catalog definitions applied
to hand-written objects and pods (no cluster)."""

from __future__ import annotations

from typing import Any

import pytest

from karta.definitions import DefinitionStore
from karta.jq import Evaluator
from karta.ui import QueryError, RowQuery, RowStore, select_rows, workload_row
from karta.ui.rows import components_cell, gang_cell

STORE = DefinitionStore.offline(user_directory=None)
JOB = STORE.by_name("batch-job-v1")


def _job(
    name: str, *, parallelism: int = 2, gpus: int = 1, status: dict[str, Any] | None = None
) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "uid": f"uid-{name}",
            "creationTimestamp": "2026-01-02T03:04:05Z",
        },
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "template": {"spec": {"containers": [container]}},
        },
        "status": status or {},
    }


def _pod(owner: dict[str, Any], name: str, *, ready: bool, node: str | None) -> dict[str, Any]:
    conditions = [{"type": "PodScheduled", "status": "True" if node else "False"}]
    if ready:
        conditions.append({"type": "Ready", "status": "True"})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "uid": f"uid-{name}",
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": node,
            "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
        },
        "status": {"phase": "Running" if node else "Pending", "conditions": conditions},
    }


def _row(obj: dict[str, Any], pods: list[dict[str, Any]] | None = None, **kw: Any) -> dict[str, Any]:
    return workload_row(
        obj,
        JOB,
        cluster="c1",
        pods=pods or [],
        evaluator=Evaluator(trusted=True),
        gpu_resources=("nvidia.com/gpu",),
        **kw,
    )


def test_a_job_row_counts_pods_gpus_and_components() -> None:
    job = _job("train", parallelism=2, status={"active": 2})
    pods = [_pod(job, "train-0", ready=True, node="n1"), _pod(job, "train-1", ready=False, node=None)]
    row = _row(job, pods)
    assert row["id"] == "c1/uid-train" and row["cluster"] == "c1"
    assert (row["kind"], row["group"], row["namespace"], row["name"]) == ("Job", "batch", "team-a", "train")
    assert row["status"] == row["phases"][0] and row["status"] != "Undefined"
    assert row["pods"] == {"ready": 1, "total": 2, "desired": 2}
    assert row["gpus"] == 2
    assert row["components"] and row["components"][0]["replicas"] == 2
    assert row["gang"] is not None and row["gang"]["minMember"] == 2
    assert row["createdAt"] == "2026-01-02T03:04:05Z"
    assert "error" not in row


def test_gang_state_comes_from_the_plan_and_the_group_objects() -> None:
    job = _job("g", parallelism=3)
    pods = [_pod(job, f"g-{i}", ready=True, node="n1") for i in range(2)]
    row = _row(job, pods, group_objects=1)
    assert row["gang"] == {
        "gangs": 1,
        "minMember": 3,
        "scheduled": 2,
        "groupObjects": 1,
        "minimumMet": False,
        "text": "2/2 bound, min 3 not met",
    }
    pods.append(_pod(job, "g-2", ready=False, node="n2"))
    row = _row(job, pods)
    assert row["gang"] == {
        "gangs": 1,
        "minMember": 3,
        "scheduled": 3,
        "groupObjects": 0,
        "minimumMet": True,
        "text": "3/3 bound, min 3 met",
    }


def test_the_list_cells_are_short_texts_with_the_whole_sentence_in_the_title() -> None:
    """The Gang and Components cells fit the list: the pods bound against the minimum (``not
    met`` in red once pods exist, amber before any), the components' names or their count; what
    they leave out is in the title (issue 28)."""
    job = _job("g", parallelism=3)
    pods = [_pod(job, f"g-{i}", ready=True, node="n1") for i in range(2)]
    cell = _row(job, pods, group_objects=1)["cells"]["gang"]
    assert cell == {
        "text": "2/3 bound · not met",
        "title": "2/2 bound, min 3 not met; 1 gang; 1 scheduler group object in the cluster",
        "tone": "bad",
        "meter": True,
    }
    pods.append(_pod(job, "g-2", ready=False, node="n2"))
    cell = _row(job, pods)["cells"]["gang"]
    assert (cell["text"], cell["tone"]) == ("3/3 bound", "good")
    assert cell["title"].endswith("; no scheduler group objects in the cluster")
    waiting = _row(_job("w", parallelism=5))["cells"]["gang"]  # no pod yet: waiting, not failing
    assert (waiting["text"], waiting["tone"]) == ("0/5 bound · not met", "warn")
    assert waiting["title"].endswith("; no pod created yet")
    components = _row(job, pods)["cells"]["components"]
    assert components == {"text": "job", "title": "job: 3 replicas"}


def test_no_gang_and_an_unknown_gang_are_said_in_neutral_words() -> None:
    assert gang_cell(None) == {
        "text": "no gang",
        "title": "no gang: its definition has no gang instructions",
        "tone": "muted",
        "meter": False,
    }
    unknown = gang_cell(None, error="some of its pods could not be read")
    assert (unknown["text"], unknown["tone"], unknown["meter"]) == ("unknown", "muted", False)
    assert unknown["title"] == "gang state unknown: some of its pods could not be read"


def test_many_components_are_counted_with_their_names_in_the_title() -> None:
    short = components_cell([{"name": "master", "replicas": 1}, {"name": "worker", "replicas": 3}])
    assert short == {"text": "master, worker", "title": "master: 1 replica, worker: 3 replicas"}
    names = ("driver", "workers", "parameter-server", "evaluator")
    many = components_cell([{"name": n, "replicas": 2} for n in names])
    assert many["text"] == "4 components"
    assert many["title"] == ", ".join(f"{n}: 2 replicas" for n in names)
    assert components_cell([]) == {"text": "", "title": ""}


def test_an_object_the_definition_cannot_read_is_a_row_with_an_error() -> None:
    job = _job("bad")
    job["spec"]["parallelism"] = "many"  # not a number
    row = _row(job)
    assert row["name"] == "bad" and row["id"] == "c1/uid-bad"
    assert row["status"] in ("Undefined", row["phases"][0])


ROWS = [
    {
        "id": f"c/{i}",
        "name": f"w{i:02d}",
        "namespace": "a" if i % 2 else "b",
        "kind": "Job" if i < 5 else "JobSet",
        "status": "Running" if i % 3 else "Failed",
        "phases": ["Running"] if i % 3 else ["Failed", "Degraded"],
        "definition": "d",
        "pods": {"ready": i, "total": 10, "desired": 10},
        "gpus": i % 4,
        "gang": None,
        "createdAt": f"2026-01-{i + 1:02d}T00:00:00Z",
    }
    for i in range(10)
]


def test_filters_sort_and_paging() -> None:
    page, total = select_rows(ROWS, RowQuery(namespace="a", sort="name"))
    assert total == 5 and [r["name"] for r in page] == ["w01", "w03", "w05", "w07", "w09"]
    page, total = select_rows(ROWS, RowQuery(status="Degraded"))
    assert {r["name"] for r in page} == {"w00", "w03", "w06", "w09"}  # any matched status counts
    page, _ = select_rows(ROWS, RowQuery(sort="age"))
    assert page[0]["name"] == "w09"  # newest first
    page, _ = select_rows(ROWS, RowQuery(sort="gpus", descending=True, limit=3))
    assert [r["gpus"] for r in page] == [3, 3, 2]
    page, total = select_rows(ROWS, RowQuery(text="W0", kind="JobSet", offset=2, limit=2, sort="name"))
    assert total == 5 and [r["name"] for r in page] == ["w07", "w08"]


def test_query_parameters_are_checked_and_bounded() -> None:
    query = RowQuery.parse(
        {"namespace": ["a"], "q": ["  Train "], "sort": ["gpus"], "order": ["desc"], "limit": ["50"]}
    )
    assert (query.namespace, query.text, query.sort, query.descending, query.limit) == (
        "a",
        "train",
        "gpus",
        True,
        50,
    )
    for params, word in (
        ({"sort": ["<script>"]}, "sort"),
        ({"order": ["up"]}, "order"),
        ({"limit": ["100000"]}, "limit"),
        ({"offset": ["-1"]}, "offset"),
        ({"q": ["x" * 1000]}, "q"),
    ):
        with pytest.raises(QueryError, match=word):
            RowQuery.parse(params)


def test_the_store_logs_changes_and_tells_a_late_client_to_reload() -> None:
    store = RowStore(log_length=5)
    store.put({"id": "c/1", "cluster": "c", "v": 1})
    seq = store.seq
    store.put({"id": "c/1", "cluster": "c", "v": 1})  # identical: no change
    assert store.seq == seq
    store.put({"id": "c/2", "cluster": "c", "v": 1})
    store.put({"id": "c/1", "cluster": "c", "v": 2})
    store.remove("c/2")
    changes = store.changes_since(seq)
    assert changes is not None and changes.seq == store.seq
    assert [r["v"] for r in changes.upserts] == [2] and changes.deletes == ["c/2"]
    assert store.changes_since(store.seq) == type(changes)(store.seq, [], [])
    for v in range(10):
        store.put({"id": "c/1", "cluster": "c", "v": 10 + v})
    assert store.changes_since(seq) is None  # older than the log: reload
    assert store.changes_since(store.seq + 1) is None  # from another store (a restarted server)
    store.replace_cluster("c", {"c/9": {"id": "c/9", "cluster": "c"}})
    assert len(store) == 1 and store.get("c/9") is not None
    assert not store.wait(store.seq, 0.01)


def test_changes_are_paged_by_row() -> None:
    store = RowStore()
    for i in range(10):
        store.put({"id": f"c/{i}", "cluster": "c"})
    first = store.changes_since(0, limit=4)
    assert first is not None and len(first.upserts) == 4
    rest = store.changes_since(first.seq)
    assert rest is not None and len(rest.upserts) == 6 and rest.seq == store.seq


def test_facets_list_what_the_rows_hold() -> None:
    store = RowStore()
    for row in ROWS:
        store.put({**row, "cluster": "c"})
    store.set_state("c", synced=True, warnings=["w"])
    facets = store.facets()
    assert facets["namespaces"] == ["a", "b"] and facets["kinds"] == ["Job", "JobSet"]
    assert facets["statuses"] == ["Degraded", "Failed", "Running"]
    assert facets["clusters"] == [{"name": "c", "synced": True, "warnings": ["w"]}]


def test_a_row_carries_the_queue_state_with_kli_gets_cell() -> None:
    job = _job("q")
    assert _row(job)["queue"] is None
    queue = {
        "queue": "team",
        "workload": "job-q",
        "state": "Pending",
        "clusterQueue": None,
        "reason": "Pending",
        "message": "8 more needed",
    }
    row = _row(job, queue=queue)
    assert row["queue"] == {**queue, "text": "team:Pending"}
    unknown = _row(job, queue={"queue": "team", "workload": None, "state": "Unknown", "message": "forbidden"})
    assert unknown["queue"]["text"] == "team:?"
    rows = [
        _row(_job(n), queue={"queue": "team", "state": s}) for n, s in (("a", "Pending"), ("b", "Admitted"))
    ]
    page, _ = select_rows(rows, RowQuery(sort="queue"))
    assert [r["name"] for r in page] == ["b", "a"]


DEPLOYMENT = STORE.by_name("apps-deployment-v1")
PYTORCH = STORE.by_name("kubeflow-org-pytorchjob-v1")


def _deployment(gpus: int) -> dict[str, Any]:
    limits = {"nvidia.com/gpu": gpus} if gpus else {}
    container = {"name": "web", "image": "nginx", "resources": {"limits": limits}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"web-{gpus}", "namespace": "team-a", "uid": f"uid-web-{gpus}"},
        "spec": {"replicas": 1, "selector": {}, "template": {"spec": {"containers": [container]}}},
    }


def test_a_row_says_whether_it_is_an_ai_workload() -> None:
    """Issue 28 item 3: the page lists AI workloads by default; the library decides which rows
    those are: a kind of the catalog's AI part, GPUs requested, or a gang of more than one pod."""

    def row(obj: dict[str, Any], definition: Any) -> dict[str, Any]:
        return workload_row(
            obj,
            definition,
            cluster="c1",
            pods=[],
            evaluator=Evaluator(trusted=True),
            gpu_resources=("nvidia.com/gpu",),
        )

    assert row(_deployment(0), DEPLOYMENT)["ai"] is False  # a general-purpose kind asking for no GPU
    assert row(_deployment(2), DEPLOYMENT)["ai"] is True  # ... asking for GPUs
    assert _row(_job("cpu", parallelism=1, gpus=0))["ai"] is False
    gang = _row(_job("gang", parallelism=4, gpus=0))
    assert gang["gang"]["minMember"] == 4 and gang["ai"] is True  # a gang of several pods
    pytorch = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "p", "namespace": "team-a", "uid": "uid-p"},
        "spec": {"pytorchReplicaSpecs": {}},
    }
    assert row(pytorch, PYTORCH)["ai"] is True  # the catalog's AI part, whatever it asks for


def test_the_list_query_filters_ai_gpus_and_gangs() -> None:
    rows = [
        {
            "id": "a",
            "name": "a",
            "namespace": "n",
            "kind": "Deployment",
            "ai": False,
            "gpus": 0,
            "gang": None,
        },
        {"id": "b", "name": "b", "namespace": "n", "kind": "Job", "ai": True, "gpus": 2, "gang": None},
        {
            "id": "c",
            "name": "c",
            "namespace": "n",
            "kind": "X",
            "ai": True,
            "gpus": 0,
            "gang": {"minimumMet": True},
        },
        {
            "id": "d",
            "name": "d",
            "namespace": "n",
            "kind": "X",
            "ai": True,
            "gpus": 8,
            "gang": {"minimumMet": False},
        },
    ]

    def names(**params: str) -> list[str]:
        query = RowQuery.parse({k: [v] for k, v in {"sort": "name", **params}.items()})
        return [str(r["name"]) for r in select_rows(rows, query)[0]]

    assert names() == ["a", "b", "c", "d"]  # the API lists every row unless asked
    assert names(scope="ai") == ["b", "c", "d"]
    assert names(gpu="yes") == ["b", "d"] and names(gpu="no") == ["a", "c"]
    assert names(gang="yes") == ["c", "d"] and names(gang="no") == ["a", "b"]
    assert names(gang="met") == ["c"] and names(gang="unmet") == ["d"]
    for name, value in (("scope", "generic"), ("gpu", "1"), ("gang", "maybe")):
        with pytest.raises(QueryError, match=f"^{name}: one of"):
            RowQuery.parse({name: [value]})
