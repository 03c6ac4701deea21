"""The tables of ``kli top nodes`` and ``kli top gpus`` (:mod:`karta.report.capacity` records).

What could not be read is ``<unknown>`` (kubectl top's word), never 0. A requested amount shows
its share of the allocatable one as ``kubectl describe node`` does: ``6 (75%)``. Each column has
one unit, kubectl top's: CPU in millicores (``9200m/64000m``), memory in MiB (``3072Mi/524288Mi``),
so that rows compare at a glance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from karta.cli.views.table import render

if TYPE_CHECKING:
    from karta.report import GpuTotals, GpuUsage, NodeCapacity

__all__ = ["UNKNOWN", "gpu_lines", "gpu_total_line", "node_lines"]

UNKNOWN = "<unknown>"
NODE_HEADER = ("NAME", "GPU", "GPU REQUESTED", "GPU FREE", "PODS", "CPU REQUESTED", "MEMORY REQUESTED")
GPU_HEADER = ("NAMESPACE", "TYPE", "WORKLOADS", "PODS", "GPU REQUESTED", "GPU PENDING")


def _share(used: int, of: int) -> str:
    return f"{used} ({used * 100 // of}%)" if of > 0 else str(used)


def _cpu(millis: int) -> str:
    """kubectl top's CPU unit, whatever the amount: ``500m``, ``64000m``."""
    return f"{millis}m"


def _memory(size: int) -> str:
    """kubectl top's memory unit, whatever the amount (whole MiB, rounded down): ``3072Mi``."""
    return f"{size // 2**20}Mi"


def _known(value: int | None) -> str:
    return UNKNOWN if value is None else str(value)


def _node_row(node: NodeCapacity) -> tuple[str, ...]:
    alloc, req = node.allocatable, node.requested
    if req is None:
        requested = pods = cpu = memory = UNKNOWN
    else:
        requested = str(req.gpus) if alloc is None else _share(req.gpus, alloc.gpus)
        pods = str(node.pods) if node.allocatable_pods is None else f"{node.pods}/{node.allocatable_pods}"
        cpu, memory = _cpu(req.cpu_millis), _memory(req.memory_bytes)
        if alloc is not None:
            cpu += f"/{_cpu(alloc.cpu_millis)}"
            memory += f"/{_memory(alloc.memory_bytes)}"
    return (
        node.name,
        _known(None if alloc is None else alloc.gpus),
        requested,
        _known(node.free_gpus),
        pods,
        cpu,
        memory,
    )


def node_lines(nodes: Sequence[NodeCapacity], *, headers: bool = True) -> list[str]:
    rows = [_node_row(n) for n in nodes]
    return render([NODE_HEADER, *rows] if headers else rows)


def gpu_lines(usage: Sequence[GpuUsage], *, headers: bool = True) -> list[str]:
    rows = [
        (u.namespace, u.type, str(u.workloads), str(u.pods), str(u.requested), str(u.pending)) for u in usage
    ]
    return render([GPU_HEADER, *rows] if headers else rows)


def gpu_total_line(totals: GpuTotals, *, namespace: str | None) -> str:
    """``Cluster: 16 GPUs allocatable on 2 nodes; requested 6 (37%), free 10; pending 2``; with
    ``namespace``, the requests are that namespace's and no free count is claimed."""
    if totals.allocatable is None:
        nodes = f"GPUs allocatable {UNKNOWN} (nodes not readable)"
    else:
        plural = "s" if totals.nodes != 1 else ""
        nodes = f"{totals.allocatable} GPUs allocatable on {totals.nodes} node{plural}"
    if totals.requested is None or totals.pending is None:
        return f"Cluster: {nodes}; requested {UNKNOWN} (pods not readable)"
    if namespace is not None:
        return (
            f"Cluster: {nodes}; namespace {namespace}: requested {totals.requested}, pending {totals.pending}"
        )
    requested = (
        str(totals.requested) if totals.allocatable is None else _share(totals.requested, totals.allocatable)
    )
    free = "" if totals.free is None else f", free {totals.free}"
    return f"Cluster: {nodes}; requested {requested}{free}; pending {totals.pending}"
