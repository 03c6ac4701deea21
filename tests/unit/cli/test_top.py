"""``kli top`` without a cluster: the group's help, kubectl's spellings, the usage errors, and the
tables' rendering of what could not be read (``<unknown>``, never 0)."""

from __future__ import annotations

import pytest

from karta.cli.main import main
from karta.cli.views.top import gpu_total_line, node_lines
from karta.extract.requests import Requests
from karta.report import GpuTotals, NodeCapacity


def test_bare_top_prints_its_help_and_aliases_resolve(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["top"]) == 0
    out = capsys.readouterr().out
    assert "metrics-server" in out and "nodes" in out and "gpus" in out
    for alias in ("node", "no", "nodes"):
        assert main(["top", alias, "--help"]) == 0
        assert "One row per Node" in capsys.readouterr().out
    assert main(["top", "gpu", "--help"]) == 0
    assert "GPUs requested per namespace and workload type" in capsys.readouterr().out


def test_all_namespaces_and_a_namespace_together_are_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["top", "gpus", "-A", "-n", "ml"]) == 2
    assert "error: -A lists every namespace: it cannot be combined with -n" in capsys.readouterr().err


def test_unknown_values_are_shown_as_unknown() -> None:
    known = NodeCapacity("a", Requests(8, 64000, 2**39), 110, Requests(3, 1500, 3 * 2**30), 3)
    no_pods = NodeCapacity("b", Requests(4, 64000, 2**39), 110, None, None)
    no_node = NodeCapacity("c", None, None, Requests(1, 500, 2**30), 1)
    lines = [line.split() for line in node_lines([known, no_pods, no_node])]
    # issue 28: one unit per column, kubectl top's (not 1500m/64 next to 8/64)
    assert lines[1] == ["a", "8", "3", "(37%)", "5", "3/110", "1500m/64000m", "3072Mi/524288Mi"]
    assert lines[2] == ["b", "4", "<unknown>", "<unknown>", "<unknown>", "<unknown>", "<unknown>"]
    assert lines[3] == ["c", "<unknown>", "1", "<unknown>", "1", "500m", "1024Mi"]
    assert len(node_lines([known], headers=False)) == 1
    assert gpu_total_line(GpuTotals(12, 2, 6, 3), namespace=None) == (
        "Cluster: 12 GPUs allocatable on 2 nodes; requested 6 (50%), free 6; pending 3"
    )
    assert gpu_total_line(GpuTotals(12, 2, 6, 3), namespace="ml") == (
        "Cluster: 12 GPUs allocatable on 2 nodes; namespace ml: requested 6, pending 3"
    )
    assert gpu_total_line(GpuTotals(None, None, 6, 0), namespace=None) == (
        "Cluster: GPUs allocatable <unknown> (nodes not readable); requested 6; pending 0"
    )
    assert gpu_total_line(GpuTotals(4, 1, None, None), namespace=None) == (
        "Cluster: 4 GPUs allocatable on 1 node; requested <unknown> (pods not readable)"
    )
