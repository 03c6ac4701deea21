"""Extension E2 on the built-in Milvus definition (docs/format-extensions.md): the in-cluster
etcd/MinIO/Kafka Helm releases' pods, selected by labels, are listed with their readiness by
``kli describe -f --pods`` and the library's report, and never reach the gang plan, the gang
state, the replica counts or a Kueue pod set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta import report
from karta.definitions import DefinitionStore, evaluator_for
from karta.errors import ExtractionError
from karta.extract import ComponentFactory
from karta.extract.external import external_selectors
from karta.gang import compute_gang_plan
from karta.model import load_karta
from karta.render import render
from karta.report.gang_state import read_gang

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "workloads" / "milvus"
STORE = DefinitionStore.offline(user_directory=None)
MILVUS = STORE.by_name("milvus-io-milvus-v1beta1")


def _pod(name: str, labels: dict[str, str], *, ready: bool = True) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    if not ready:
        status = {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"nodeName": "n1" if ready else None, "containers": [{"name": "c", "image": "i"}]},
        "status": status,
    }


def _demo() -> dict[str, Any]:
    obj = yaml.safe_load((CORPUS / "milvus-cluster-demo.yaml").read_text())
    obj["metadata"]["namespace"] = "default"
    return obj


PODS = [
    _pod("my-release-etcd-0", {"app.kubernetes.io/instance": "my-release-etcd"}),
    _pod("my-release-minio-0", {"release": "my-release-minio"}, ready=False),
    _pod("my-release-kafka-0", {"app.kubernetes.io/instance": "my-release-kafka"}),
    _pod("other-etcd-0", {"app.kubernetes.io/instance": "other-etcd"}),  # another release: nobody's
    _pod(
        "my-release-milvus-proxy-0",
        {"app.kubernetes.io/instance": "my-release", "app.kubernetes.io/component": "proxy"},
    ),
]


def _components(described: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in described["components"]}


def test_selectors_follow_the_dependencies() -> None:
    obj = _demo()  # kafka, etcd and storage in-cluster
    evaluator = evaluator_for(MILVUS)
    selectors = external_selectors(ComponentFactory(MILVUS.karta, obj, evaluator=evaluator))
    assert selectors == {
        "etcd": {"app.kubernetes.io/instance": "my-release-etcd"},
        "minio": {"release": "my-release-minio"},
        "kafka": {"app.kubernetes.io/instance": "my-release-kafka"},
    }
    obj["spec"]["dependencies"] = {"etcd": {"external": True}, "storage": {"external": True}}
    assert external_selectors(ComponentFactory(MILVUS.karta, obj, evaluator=evaluator)) == {
        "pulsar": {"release": "my-release-pulsar"}  # cluster mode's default message stream
    }
    obj["spec"]["mode"] = "standalone"
    assert external_selectors(ComponentFactory(MILVUS.karta, obj, evaluator=evaluator)) == {}


def test_describe_file_with_pods_lists_the_dependencies(kli, tmp_path: Path) -> None:
    workload = tmp_path / "milvus.yaml"
    workload.write_text(yaml.safe_dump(_demo()))
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump_all(PODS))
    r = kli("describe", "-f", str(workload), "--pods", str(pods))
    assert r.code == 0, r.err
    for line in (
        "-- etcd",
        "my-release-etcd-0",
        "-- minio",
        "my-release-minio-0",
        "-- kafka",
        "my-release-kafka-0",
    ):
        assert line in r.out
    assert "Pending (Unschedulable)" in r.out
    assert "pulsar" not in r.out and "other-etcd-0" in r.out  # another release's pod: unattributed
    # the Resources table and the gang count the workload's own pods only
    assert "TOTAL           5" in r.out
    as_json = json.loads(kli("describe", "-f", str(workload), "--pods", str(pods), "-o", "json").out)
    components = _components(as_json)
    assert components["etcd"]["replicas"] == {"desired": 1, "current": 1, "ready": 1}
    assert components["minio"]["replicas"] == {"desired": 1, "current": 1, "ready": 0}
    assert [p["name"] for p in components["kafka"]["pods"]] == ["my-release-kafka-0"]
    assert as_json["resources"]["pods"] == 5
    assert as_json["gang"]["pods"] == 2  # the proxy's and the other release's pod, never etcd/minio/kafka
    # without --pods the dependencies are not shown (nothing found)
    plain = kli("describe", "-f", str(workload))
    assert "etcd" not in plain.out


def test_pods_needs_file_and_one_workload(kli, tmp_path: Path) -> None:
    r = kli("describe", "milvus", "x", "--pods", "p.yaml")
    assert r.code != 0 and "--pods goes with -f FILE" in r.err


def test_never_in_gangs_counts_or_kueue_pod_sets() -> None:
    obj = _demo()
    evaluator = evaluator_for(MILVUS)
    described = report.describe_live(
        MILVUS,
        obj,
        PODS[4:],
        [],
        events_read=True,
        warnings=[],
        gpu_resources=["nvidia.com/gpu"],
        external_pods=PODS[:4],
    )
    view = described.report
    assert _components(view)["etcd"]["replicas"]["ready"] == 1
    summary = report.summarize(
        MILVUS, obj, gpu_resources=["nvidia.com/gpu"], pods=PODS[4:], external_pods=PODS[:3]
    )
    assert summary.pods == {"ready": 1, "total": 1, "desired": 5}
    assert [c["name"] for c in summary.components] == [
        "proxy",
        "mixcoord",
        "datanode",
        "querynode",
        "streamingnode",
    ]
    assert described.gang is not None and described.gang.pods == 1 and described.gang.minimum == 5
    # the gang state of a pod list holding the dependencies' pods too: they are left out
    state, error = read_gang(MILVUS.karta, obj, [PODS[0], PODS[4]], evaluator=evaluator)
    assert error is None and state is not None and state.pods == 1
    factory = ComponentFactory(MILVUS.karta, obj, evaluator=evaluator)
    plan = compute_gang_plan(factory, PODS[4:], evaluator=evaluator)
    assert [g.min_member for g in plan.gangs] == [5]
    kueue = render("kueue", factory, plan=plan)
    pod_sets = [
        ps["name"] for o in kueue.objects if o.get("kind") == "Workload" for ps in o["spec"]["podSets"]
    ]
    assert not {"etcd", "minio", "pulsar", "kafka"} & set(pod_sets)
    assert pod_sets


def test_a_bad_label_map_is_one_clear_error() -> None:
    doc = yaml.safe_load(Path(str(MILVUS.source)).read_text())
    doc["spec"]["structureDefinition"]["childComponents"][-1]["podSelector"]["externalPods"][
        "matchLabelsExpression"
    ] = '{"a": 1}'
    karta = load_karta(doc, strict=True).karta
    assert karta is not None
    with pytest.raises(
        ExtractionError,
        match=r"component 'kafka' .* must yield an object of string label values, got map\[a:1\]",
    ):
        external_selectors(ComponentFactory(karta, _demo()))


def test_gang_plan_and_inspect_leave_the_dependencies_out(kli, tmp_path: Path) -> None:
    obj = _demo()
    evaluator = evaluator_for(MILVUS)
    factory = ComponentFactory(MILVUS.karta, obj, evaluator=evaluator)
    plan = compute_gang_plan(factory, PODS, evaluator=evaluator)  # etcd, MinIO, Kafka pods given too
    assert [sorted(g.members) for g in plan.gangs] == [["my-release-milvus-proxy-0", "other-etcd-0"]]
    workload = tmp_path / "milvus.yaml"
    workload.write_text(yaml.safe_dump(obj))
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump_all(PODS[:3] + PODS[4:]))
    r = kli("inspect", "-f", str(workload), "--pods", str(pods), "-o", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    placed = {p["name"]: p for p in data["pods"]}
    assert (
        placed["my-release-etcd-0"]["component"] == "etcd" and placed["my-release-etcd-0"].get("gang") is None
    )
    assert placed["my-release-milvus-proxy-0"]["gang"] == "milvus"
    assert data["diagnostics"] == []
