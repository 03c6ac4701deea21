"""Live ``kli describe`` rows and rendering (17.5 rules 6-10, 17.6, R7, R16) without a cluster:
workload trees built with pods, pod rows and pending reasons, ready/current counts, nodes,
``--pod-limit``, ``--component-limit``, the ``(unattributed)`` bucket and the header's age.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from karta.cli.errors import UsageError
from karta.cli.lookup import parse_target
from karta.cli.views.age import human_age
from karta.cli.views.describe import limit_pods, render_table
from karta.definitions import DefinitionStore
from karta.extract import ComponentFactory, build_tree
from karta.extract.requests import Requests
from karta.jq import Evaluator
from karta.report import PodRow, pod_row
from karta.report.rows import build_rows, describe_report

GPU = ("nvidia.com/gpu",)
NOW = dt.datetime(2025, 1, 1, 12, 12, tzinfo=dt.UTC)
CREATED = "2025-01-01T12:00:00Z"


@pytest.fixture(scope="module")
def store() -> DefinitionStore:
    return DefinitionStore.offline(user_directory=None, include_catalog=True)


def container(gpus: int = 0, cpu: str = "1", memory: str = "4Gi") -> dict[str, Any]:
    limits: dict[str, Any] = {"nvidia.com/gpu": gpus} if gpus else {}
    return {
        "name": "c",
        "image": "i",
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": limits},
    }


def pytorchjob(workers: int = 4) -> dict[str, Any]:
    def replica(count: int, gpus: int, cpu: str, memory: str) -> dict[str, Any]:
        return {
            "replicas": count,
            "template": {"spec": {"containers": [container(gpus, cpu, memory)]}},
        }

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "train-7", "namespace": "ml-team", "uid": "u-1", "creationTimestamp": CREATED},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": replica(1, 1, "4", "16Gi"),
                "Worker": replica(workers, 8, "16", "64Gi"),
            }
        },
        "status": {"conditions": [{"type": "Running", "status": "True"}]},
    }


def pod(
    name: str,
    *,
    labels: dict[str, str],
    node: str | None = "node-a",
    ready: bool = True,
    phase: str = "Running",
    gpus: int = 0,
    conditions: list[dict[str, Any]] | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if conditions is None:
        conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    status["conditions"] = conditions
    if reason:
        status["reason"] = reason
    spec: dict[str, Any] = {"containers": [container(gpus)]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": status,
    }


def pt_pod(role: str, index: int, **kw: Any) -> dict[str, Any]:
    labels = {"training.kubeflow.org/replica-type": role, "training.kubeflow.org/replica-index": str(index)}
    return pod(f"train-7-{role}-{index}", labels=labels, **kw)


UNSCHEDULABLE = [
    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
    {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
]


def describe(
    store: DefinitionStore, obj: dict[str, Any], pods: list[dict[str, Any]] | None, **kw: Any
) -> tuple[dict[str, Any], str]:
    matches = store.resolve(obj["apiVersion"], obj["kind"])
    chosen = matches[0]
    factory = ComponentFactory(chosen.karta, obj, evaluator=Evaluator(trusted=chosen.trusted))
    tree = build_tree(factory, pods).pruned()
    rows = build_rows(tree, gpu_resources=GPU)
    view = describe_report(
        obj=obj, definition=chosen.name, origin=chosen.origin, tree=tree, rows=rows, file_mode=False
    )
    return view, render_table(view, rows, now=NOW, **kw)


def spec_example_pods() -> list[dict[str, Any]]:
    return [
        pt_pod("master", 0, gpus=1, node="node-a"),
        pt_pod("worker", 0, gpus=8, node="node-b"),
        pt_pod("worker", 1, gpus=8, node="node-b"),
        pt_pod("worker", 2, gpus=8, node="node-c"),
        pt_pod("worker", 3, gpus=8, node=None, phase="Pending", conditions=UNSCHEDULABLE),
    ]


def test_the_spec_example(store: DefinitionStore) -> None:
    _, text = describe(store, pytorchjob(), spec_example_pods())
    assert text == (
        "PyTorchJob/train-7   namespace: ml-team   "
        "definition: kubeflow-org-pytorchjob-v1 (catalog)   age: 12m\n"
        "\n"
        "|-- master                  1/1 ready                  gpu: 1     node-a\n"
        "|   `-- train-7-master-0    Running                    gpu: 1     node-a\n"
        "`-- worker                  3/4 ready                  gpu: 32    node-b,node-c\n"
        "    |-- train-7-worker-0    Running                    gpu: 8     node-b\n"
        "    |-- train-7-worker-1    Running                    gpu: 8     node-b\n"
        "    |-- train-7-worker-2    Running                    gpu: 8     node-c\n"
        "    `-- train-7-worker-3    Pending (Unschedulable)    gpu: 8     <none>\n"
        "\n"
        "Phase: Running\n"
        "\n"
        "Resources:\n"
        "COMPONENT   REPLICAS   GPU   CPU   MEMORY\n"
        "master      1          1     4     16Gi\n"
        "worker      4          32    64    256Gi\n"
        "TOTAL       5          33    68    272Gi\n"
    )


def test_json_rows_carry_pods_nodes_and_counts(store: DefinitionStore) -> None:
    view, _ = describe(store, pytorchjob(), spec_example_pods())
    assert view["fileMode"] is False
    assert view["phases"] == ["Running"]
    master, worker = view["components"]
    assert master["replicas"] == {"desired": 1, "current": 1, "ready": 1}
    assert master["nodes"] == ["node-a"]
    assert worker["replicas"] == {"desired": 4, "current": 4, "ready": 3}
    assert worker["nodes"] == ["node-b", "node-c"]
    pending = worker["pods"][3]
    assert pending == {
        "name": "train-7-worker-3",
        "phase": "Pending",
        "ready": False,
        "node": None,
        "reason": "Unschedulable",
        "resources": {"gpus": 8, "cpuMillis": 1000, "memoryBytes": 4 * 2**30},
    }
    assert "reason" not in worker["pods"][0]


def test_missing_pods_count_as_not_current(store: DefinitionStore) -> None:
    view, text = describe(store, pytorchjob(), [pt_pod("master", 0, gpus=1)])
    worker = view["components"][1]
    assert worker["replicas"] == {"desired": 4, "current": 0, "ready": 0}
    assert worker["pods"] == []
    assert "nodes" not in worker
    assert "\n`-- worker                  0/4 ready    gpu: 32\n" in text


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        ({"phase": "Pending", "conditions": UNSCHEDULABLE, "reason": "X"}, "Unschedulable"),
        (
            {"phase": "Failed", "reason": "Evicted", "conditions": [{"type": "Ready", "status": "False"}]},
            "Evicted",
        ),
        (
            {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
            },
            "ContainersNotReady",
        ),
        ({"phase": "Pending"}, None),
        ({"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "reason": "X"}]}, None),
    ],
)
def test_pending_reasons(status: dict[str, Any], reason: str | None) -> None:
    row = pod_row({"metadata": {"name": "p"}, "spec": {}, "status": status}, gpu_resources=GPU)
    assert row.reason == reason


def test_pod_row_of_a_bare_object() -> None:
    row = pod_row({}, gpu_resources=GPU)
    assert (row.name, row.phase, row.ready, row.node, row.reason) == ("", "Unknown", False, None, None)
    assert row.unhealthy


def _rows(*spec: tuple[str, bool, str]) -> list[PodRow]:
    return [PodRow(name, phase, ready, None, None, Requests()) for name, ready, phase in spec]


def test_pod_limit_keeps_unhealthy_first_in_name_order() -> None:
    pods = _rows(
        ("w-0", True, "Running"),
        ("w-1", False, "Pending"),
        ("w-2", True, "Running"),
        ("w-10", False, "Succeeded"),
        ("w-3", False, "Failed"),
    )
    kept, note = limit_pods(pods, 3)
    assert [p.name for p in kept] == ["w-0", "w-1", "w-3"]
    assert note == "... and 2 more (2 unhealthy shown)"
    kept, note = limit_pods(pods, 1)
    assert [p.name for p in kept] == ["w-1"]
    assert note == "... and 4 more (1 of 2 unhealthy shown)"
    assert limit_pods(pods, 0) == (pods, None)
    assert limit_pods(pods, 5) == (pods, None)


def test_pod_limit_in_the_table(store: DefinitionStore) -> None:
    _, text = describe(store, pytorchjob(), spec_example_pods(), pod_limit=2)
    lines = text.splitlines()
    worker = lines.index(next(line for line in lines if line.startswith("`-- worker")))
    assert [line.split()[1] for line in lines[worker + 1 : worker + 3]] == [
        "train-7-worker-0",
        "train-7-worker-3",
    ]
    assert lines[worker + 3] == "    `-- ... and 2 more (1 unhealthy shown)"
    assert "TOTAL       5" in text  # the Resources table is never cut


def test_component_limit_keeps_unhealthy_then_missing(store: DefinitionStore) -> None:
    obj = pytorchjob(workers=2)
    healthy = [pt_pod("master", 0, gpus=1), pt_pod("worker", 0, gpus=8), pt_pod("worker", 1, gpus=8)]
    _, text = describe(store, obj, healthy, component_limit=1)
    assert "|-- master" in text
    assert "`-- ... and 1 more component(s) (1 of 2 not shown; --component-limit 0 shows all)" in text
    missing = [pt_pod("master", 0, gpus=1), pt_pod("worker", 0, gpus=8)]
    _, text = describe(store, obj, missing, component_limit=1)
    assert "|-- worker" in text and "|-- master" not in text
    sick = [pt_pod("master", 0, gpus=1, ready=False), pt_pod("worker", 0, gpus=8)]
    _, text = describe(store, obj, sick, component_limit=1)
    assert "|-- master" in text and "|-- worker" not in text
    _, text = describe(store, obj, [pt_pod("master", 0), pt_pod("worker", 0, ready=False)], component_limit=1)
    assert "(1 of 2 not shown, 0" not in text
    assert "|-- worker" in text


def test_unattributed_pods_are_shown(store: DefinitionStore) -> None:
    stray = pod("train-7-sidecar", labels={"app": "x"}, node="node-z")
    view, text = describe(store, pytorchjob(workers=1), [pt_pod("master", 0), pt_pod("worker", 0), stray])
    last = view["components"][-1]
    assert last["name"] == "(unattributed)"
    assert [p["name"] for p in last["pods"]] == ["train-7-sidecar"]
    assert last["replicas"] == {"desired": 0, "current": 1, "ready": 1}
    assert "`-- (unattributed)" in text
    assert "    `-- train-7-sidecar" in text
    assert "(unattributed)" not in text.split("Resources:")[1]


def lws(replicas: int = 2, size: int = 3) -> dict[str, Any]:
    template = {"spec": {"containers": [container(2, "1", "1Gi")]}}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "serve", "uid": "u-2", "creationTimestamp": CREATED},
        "spec": {"replicas": replicas, "leaderWorkerTemplate": {"size": size, "workerTemplate": template}},
    }


def lws_pod(group: int, index: int, **kw: Any) -> dict[str, Any]:
    labels = {
        "leaderworkerset.sigs.k8s.io/group-index": str(group),
        "leaderworkerset.sigs.k8s.io/worker-index": str(index),
    }
    name = f"vllm-{group}" + (f"-{index}" if index else "")
    return pod(name, labels=labels, gpus=2, **kw)


def test_replica_split_with_a_missing_replica(store: DefinitionStore) -> None:
    pods = [lws_pod(0, 0), lws_pod(0, 1), lws_pod(0, 2, ready=False, node=None, phase="Pending")]
    view, text = describe(store, lws(), pods)
    (group,) = view["components"]
    assert group["replicas"] == {"desired": 2, "current": 3, "ready": 2}
    assert [c["name"] for c in group["children"]] == ["group[0]"]
    leader, worker = group["children"][0]["children"]
    assert leader["replicas"] == {"desired": 1, "current": 1, "ready": 1}
    assert worker["replicas"] == {"desired": 2, "current": 2, "ready": 1}
    assert "`-- group                   2/6 ready    gpu: 12    node-a\n" in text
    assert "group[1]" not in text
    table = text.split("Resources:\n")[1]
    # the missing replica still counts in the Resources table, as in file mode
    assert table.splitlines()[1:] == [
        "leader      2          4     2     2Gi",
        "worker      4          8     4     4Gi",
        "TOTAL       6          12    6     6Gi",
    ]


def test_replica_split_with_every_replica(store: DefinitionStore) -> None:
    pods = [lws_pod(g, i) for g in (1, 0) for i in range(3)]
    view, _ = describe(store, lws(), pods)
    (group,) = view["components"]
    assert [c["name"] for c in group["children"]] == ["group[0]", "group[1]"]
    assert group["replicas"] == {"desired": 2, "current": 6, "ready": 6}
    assert view["resources"]["pods"] == 6


def test_deployment_pods_without_selector(store: DefinitionStore) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "d", "creationTimestamp": CREATED},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [container()]}}},
    }
    view, text = describe(
        store, deployment, [pod("web-1", labels={}), pod("web-2", labels={}, node="node-b")]
    )
    (row,) = view["components"]
    assert row["name"] == "deployment"
    assert row["replicas"] == {"desired": 2, "current": 2, "ready": 2}
    assert "`-- deployment    2/2 ready" in text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (119, "119s"),
        (125, "2m5s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600 + 60, "3h1m"),
        (8 * 3600, "8h"),
        (50 * 3600, "2d2h"),
        (9 * 86400, "9d"),
        (800 * 86400, "2y70d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_age(seconds: int, text: str) -> None:
    assert (
        human_age(CREATED, now=dt.datetime(2025, 1, 1, 12, tzinfo=dt.UTC) + dt.timedelta(seconds=seconds))
        == text
    )


def test_human_age_unknown() -> None:
    assert human_age(None) == "<unknown>"
    assert human_age("yesterday") == "<unknown>"
    assert human_age(CREATED, now=dt.datetime(2024, 1, 1, tzinfo=dt.UTC)) == "<invalid>"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("pytorchjob/train-7",), ("pytorchjob", "train-7")),
        (("pytorchjobs.kubeflow.org", "train-7"), ("pytorchjobs.kubeflow.org", "train-7")),
    ],
)
def test_parse_target(args: tuple[str, ...], expected: tuple[str, str]) -> None:
    assert parse_target(args, command="describe") == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("pytorchjob",), "needs a NAME"),
        (("pytorchjob/a/b",), "invalid TYPE/NAME"),
        (("pytorchjob/",), "invalid TYPE/NAME"),
        (("pytorchjob/a", "b"), "takes TYPE/NAME or TYPE NAME"),
        (("a", "b", "c"), "takes TYPE/NAME or TYPE NAME"),
    ],
)
def test_parse_target_usage_errors(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_target(args, command="describe")
