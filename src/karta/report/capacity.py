"""Cluster capacity from Nodes and Pods (``kli top nodes``, ``kli top gpus``): what the Nodes can
allocate against what the pods request. Requests, not usage: ``kubectl top`` reads metrics-server,
this reads ``spec`` (docs/spec/format.md#workload-tree step 8, :func:`karta.extract.requests.pod_requests`).

A pod counts while it is not terminal (its phase is neither Succeeded nor Failed, as ``kubectl
describe node`` counts "Allocated resources"); it is *bound* once ``spec.nodeName`` is set and
*pending* before. A Node's allocatable is ``status.allocatable`` read with the same rounded rule
(GPUs are the configured extended resources, summed). Pure: objects in, records out; ``None`` where
something could not be read, never a made-up zero.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karta.extract.requests import Requests, container_requests, pod_requests

__all__ = [
    "GpuTotals",
    "GpuUsage",
    "NodeCapacity",
    "TopOwner",
    "active_pods",
    "gpu_pods",
    "gpu_totals",
    "gpu_usage",
    "node_capacity",
]

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
POD_TYPE = "Pod"  # the TYPE of a pod no controller owns


@dataclass(frozen=True, slots=True)
class TopOwner:
    """The top of a pod's controller-owner chain: ``group`` is empty for the core API."""

    kind: str
    group: str
    name: str

    @property
    def type(self) -> str:
        """``Job.batch``, ``PyTorchJob.kubeflow.org``; the Kind alone for the core API group."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _node_of(pod: Mapping[str, Any]) -> str:
    return str(_spec(pod).get("nodeName") or "")


def active_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The pods that hold (or wait for) resources: neither Succeeded nor Failed."""
    out = []
    for pod in pods:
        status = pod.get("status")
        phase = status.get("phase") if isinstance(status, Mapping) else None
        if phase not in TERMINAL_PHASES:
            out.append(pod)
    return out


def gpu_pods(pods: Iterable[Mapping[str, Any]], *, gpu_resources: Sequence[str]) -> list[Mapping[str, Any]]:
    """The active pods that request at least one GPU (``kli top gpus`` counts these alone)."""
    return [p for p in active_pods(pods) if pod_requests(_spec(p), gpu_resources=gpu_resources).gpus > 0]


# --- per node -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeCapacity:
    """One Node: ``allocatable`` (None: the Node could not be read), what its active bound pods
    request and how many they are (None: the pods could not be read)."""

    name: str
    allocatable: Requests | None
    allocatable_pods: int | None
    requested: Requests | None
    pods: int | None

    @property
    def free_gpus(self) -> int | None:
        if self.allocatable is None or self.requested is None:
            return None
        return self.allocatable.gpus - self.requested.gpus

    def to_dict(self) -> dict[str, Any]:
        alloc, req = self.allocatable, self.requested
        return {
            "name": self.name,
            "gpus": {
                "allocatable": None if alloc is None else alloc.gpus,
                "requested": None if req is None else req.gpus,
                "free": self.free_gpus,
            },
            "cpuMillis": {
                "allocatable": None if alloc is None else alloc.cpu_millis,
                "requested": None if req is None else req.cpu_millis,
            },
            "memoryBytes": {
                "allocatable": None if alloc is None else alloc.memory_bytes,
                "requested": None if req is None else req.memory_bytes,
            },
            "pods": {"allocatable": self.allocatable_pods, "count": self.pods},
        }


def _allocatable(node: Mapping[str, Any], gpu_resources: Sequence[str]) -> tuple[Requests, int | None]:
    status = node.get("status")
    allocatable = status.get("allocatable") if isinstance(status, Mapping) else None
    amounts = allocatable if isinstance(allocatable, Mapping) else {}
    # one resources block of requests: the rounded rule of every request (17.5 step 8)
    requests = container_requests({"resources": {"requests": amounts}}, gpu_resources=gpu_resources)
    try:
        pods = int(str(amounts.get("pods")))
    except ValueError:
        pods = None
    return requests, pods


def node_capacity(
    nodes: Sequence[Mapping[str, Any]] | None,
    pods: Sequence[Mapping[str, Any]] | None,
    *,
    gpu_resources: Sequence[str],
) -> list[NodeCapacity]:
    """One record per Node, sorted by name. ``nodes`` None (not readable): one record per node
    the active pods are bound to, allocatable unknown; ``pods`` None: requests unknown. Pods bound
    to a Node not in ``nodes`` (another label selector) are left out."""
    used: dict[str, Requests] = {}
    counts: dict[str, int] = {}
    for pod in active_pods(pods or ()):
        node = _node_of(pod)
        if not node:
            continue
        used[node] = used.get(node, Requests()) + pod_requests(_spec(pod), gpu_resources=gpu_resources)
        counts[node] = counts.get(node, 0) + 1
    out: list[NodeCapacity] = []
    if nodes is None:
        for name in sorted(used):
            out.append(NodeCapacity(name, None, None, used[name], counts[name]))
        return out
    for item in sorted(nodes, key=lambda n: str(_meta(n).get("name") or "")):
        name = str(_meta(item).get("name") or "")
        alloc, alloc_pods = _allocatable(item, gpu_resources)
        if pods is None:
            out.append(NodeCapacity(name, alloc, alloc_pods, None, None))
        else:
            out.append(NodeCapacity(name, alloc, alloc_pods, used.get(name, Requests()), counts.get(name, 0)))
    return out


# --- per namespace and workload type --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GpuUsage:
    """The GPU pods of one namespace whose top owners are of one type: how many workloads (top
    owners; each bare pod is one), pods, GPUs of the bound pods and of the pending ones."""

    namespace: str
    type: str
    workloads: int
    pods: int
    requested: int
    pending: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "type": self.type,
            "workloads": self.workloads,
            "pods": self.pods,
            "gpusRequested": self.requested,
            "gpusPending": self.pending,
        }


def gpu_usage(
    pods: Iterable[Mapping[str, Any]],
    top_owner: Callable[[Mapping[str, Any]], TopOwner | None],
    *,
    gpu_resources: Sequence[str],
) -> list[GpuUsage]:
    """GPU pods (:func:`gpu_pods`) grouped by namespace and their top owner's type (``Pod`` when
    ``top_owner`` gives None), sorted by namespace then type."""
    groups: dict[tuple[str, str], tuple[set[tuple[str, ...]], list[int], list[int]]] = {}
    for pod in gpu_pods(pods, gpu_resources=gpu_resources):
        meta = _meta(pod)
        namespace = str(meta.get("namespace") or "")
        owner = top_owner(pod)
        kind = owner.type if owner is not None else POD_TYPE
        workload = (
            (owner.kind, owner.group, owner.name) if owner is not None else ("", "", str(meta.get("name")))
        )
        workloads, bound, pending = groups.setdefault((namespace, kind), (set(), [], []))
        workloads.add(workload)
        gpus = pod_requests(_spec(pod), gpu_resources=gpu_resources).gpus
        (bound if _node_of(pod) else pending).append(gpus)
    return [
        GpuUsage(ns, kind, len(w), len(b) + len(p), sum(b), sum(p))
        for (ns, kind), (w, b, p) in sorted(groups.items())
    ]


@dataclass(frozen=True, slots=True)
class GpuTotals:
    """What the Nodes can allocate against what the rows request (None: not readable)."""

    allocatable: int | None
    nodes: int | None
    requested: int | None
    pending: int | None

    @property
    def free(self) -> int | None:
        if self.allocatable is None or self.requested is None:
            return None
        return self.allocatable - self.requested

    def summary(self) -> str:
        """The web view's line (its capacity page): ``4 GPUs allocatable on 1 Node · 3 requested
        by bound pods · 16 pending · 1 free``; an unread number is one word, not a count
        (``allocatable GPUs unknown · GPUs requested by pods unknown``)."""
        parts = []
        if self.allocatable is None:
            parts.append("allocatable GPUs unknown")
        else:
            nodes = f"{self.nodes} Node{'' if self.nodes == 1 else 's'}"
            parts.append(f"{self.allocatable} GPUs allocatable on {nodes}")
        if self.requested is None or self.pending is None:
            parts.append("GPUs requested by pods unknown")
        else:
            parts += [f"{self.requested} requested by bound pods", f"{self.pending} pending"]
        if self.free is not None:
            parts.append(f"{self.free} free")
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "gpusAllocatable": self.allocatable,
            "gpusRequested": self.requested,
            "gpusPending": self.pending,
            "gpusFree": self.free,
        }


def gpu_totals(
    nodes: Sequence[Mapping[str, Any]] | None,
    usage: Iterable[GpuUsage] | None,
    *,
    gpu_resources: Sequence[str],
) -> GpuTotals:
    """The sum of ``usage`` (None: the pods could not be read) and the GPUs allocatable on
    ``nodes`` (None: not readable)."""
    allocatable = None
    if nodes is not None:
        allocatable = sum(_allocatable(n, gpu_resources)[0].gpus for n in nodes)
    rows = None if usage is None else list(usage)
    return GpuTotals(
        allocatable=allocatable,
        nodes=None if nodes is None else len(nodes),
        requested=None if rows is None else sum(r.requested for r in rows),
        pending=None if rows is None else sum(r.pending for r in rows),
    )
