"""The cluster-scale benchmark's pure parts (``bench/cluster_scale.py``): its arguments, the
workloads it creates, the metric sums it converges on and its summary table; nothing is timed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "karta_bench_cluster_scale", ROOT / "bench" / "cluster_scale.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


scale = _load()


def test_defaults_are_the_issue_sizes() -> None:
    args = scale.parse_args([])
    assert (args.nodes, args.sizes, args.rounds) == (1000, [1000, 5000], 3)


def test_sizes_parse_and_must_increase() -> None:
    assert scale.parse_args(["--sizes", "1000,2000,5000"]).sizes == [1000, 2000, 5000]
    for bad, words in (
        ("1000,abc", "numbers"),
        ("2000,1000", "increase"),
        ("3", "at least 5"),
        (",", "at least one"),
    ):
        with pytest.raises(SystemExit):
            scale.parse_args(["--sizes", bad])
        with pytest.raises(Exception, match=words):
            scale.parse_sizes(bad)


def test_pods_must_fit_on_the_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        scale.parse_args(["--nodes", "10", "--sizes", "100"])
    assert "do not fit on 10 Nodes" in capsys.readouterr().err


def test_workloads_cycle_kinds_and_namespaces_with_one_gpu_pod_each() -> None:
    objs = list(scale.workloads(0, 10))
    assert [o["kind"] for o in objs[:5]] == list(scale.KINDS)
    assert [o["metadata"]["namespace"] for o in objs] == [f"scale-{i}" for i in range(10)]
    assert len({o["metadata"]["name"] for o in objs}) == 10
    for obj in objs:
        text = repr(obj)
        assert text.count("'nvidia.com/gpu': 1") == 1, obj["kind"]
    assert objs[3]["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] == 1
    assert "workerGroupSpecs" not in objs[4]["spec"]


def test_metric_sum_counts_only_the_bench_namespaces() -> None:
    text = "\n".join(
        [
            "# HELP karta_workloads x",
            'karta_workloads{group="batch",kind="Job",namespace="scale-0",status="Running"} 3.0',
            'karta_workloads{group="batch",kind="Job",namespace="scale-1",status="Pending"} 2.0',
            'karta_workloads{group="batch",kind="Job",namespace="kube-system",status="Running"} 7.0',
            'karta_workloads_other{namespace="scale-0"} 100.0',
        ]
    )
    assert scale.metric_sum(text, "karta_workloads", "scale-") == 5.0


def _result(workloads: int, k: float) -> object:
    timings = {scale.BASELINE: [1.0 * k, 2.0 * k, 3.0 * k]}
    timings.update({name: [4.0 * k] * 3 for name in scale.COMMANDS})
    return scale.SizeResult(workloads, workloads, 1.0, 2.0, 10.0 * k, True, 2, 5.0 * k, 100.0 * k, timings)


def test_table_has_a_row_per_size_and_the_growth() -> None:
    lines = scale.format_table([_result(1000, 1.0), _result(5000, 2.0)])
    assert len(lines) == 5
    assert lines[0].startswith("| workloads | pods | controller converge | API floor |")
    assert lines[2] == (
        "| 1,000 | 1,000 | 10.0 s | 5.0 s | 2.0x | 100 MB | 2.00 s | 4.00 s (2.0x) | 4.00 s (2.0x) "
        "| 4.00 s (2.0x) |"
    )
    assert lines[4] == "| growth 5k/1k | 5.0x | 2.0x | 2.0x |  | 2.00x | 2.0x | 2.0x | 2.0x | 2.0x |"
    assert len(scale.format_table([_result(1000, 1.0)])) == 3


def test_a_workload_is_covered_once_it_owns_a_workload_and_a_podgroup() -> None:
    def obj(kind: str, owner: str) -> dict[str, object]:
        return {"_type": kind, "metadata": {"ownerReferences": [{"uid": owner}]}}

    def owners(objs: list[dict[str, Any]]) -> set[str]:
        return {ref["uid"] for o in objs for ref in o["metadata"]["ownerReferences"]}

    found = [obj("Workload", "a"), obj("PodGroup", "a"), obj("Workload", "b"), obj("PodGroup", "c")]
    assert scale.covered(found, owners) == 1


def test_three_kinds_in_five_have_gangs() -> None:
    assert scale.gang_workloads(1000) == 600
    assert scale.gang_workloads(7) == 4  # Job, PyTorchJob, RayCluster, then Deployment and Job
