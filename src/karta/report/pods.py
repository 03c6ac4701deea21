"""Live pods as the reports show them (docs/spec/format.md#workload-tree rule 10, #kli-describe): one row per
pod, why a pod is not ready, and which pods count as unhealthy.

A pod row is ``{name, phase, ready, node, reason?, resources}``: ``ready`` is the PodReady
condition, ``node`` is ``spec.nodeName`` (None while unscheduled), and ``reason`` (only when not
ready) is the reason of PodScheduled=False, else ``status.reason``, else the reason of Ready=False.
A pod is unhealthy when it is neither ready nor Succeeded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from karta._ordering import natural_key
from karta._records import record
from karta.extract.requests import Requests, pod_requests
from karta.report.contracts import PodReport

__all__ = ["PodRow", "natural_key", "pod_row"]


@record(slots=True)
class PodRow:
    """One live pod as ``kli describe`` shows it."""

    name: str
    phase: str
    ready: bool
    node: str | None
    reason: str | None
    resources: Requests

    @property
    def unhealthy(self) -> bool:
        """Neither ready nor Succeeded (``--pod-limit`` shows these first)."""
        return not self.ready and self.phase != "Succeeded"

    def to_dict(self) -> PodReport:
        out: dict[str, Any] = {"name": self.name, "phase": self.phase, "ready": self.ready, "node": self.node}
        if self.reason is not None:
            out["reason"] = self.reason
        out["resources"] = self.resources.to_dict()
        return cast("PodReport", out)  # in the printed key order


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _condition(status: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return None
    for condition in conditions:
        if isinstance(condition, Mapping) and condition.get("type") == kind:
            return condition
    return None


def _reason(status: Mapping[str, Any]) -> str | None:
    scheduled = _condition(status, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False" and scheduled.get("reason"):
        return str(scheduled["reason"])
    if status.get("reason"):
        return str(status["reason"])
    ready = _condition(status, "Ready")
    if ready is not None and ready.get("status") == "False" and ready.get("reason"):
        return str(ready["reason"])
    return None


def pod_row(pod: Mapping[str, Any], *, gpu_resources: Sequence[str]) -> PodRow:
    """The row of one Pod object (plain JSON data)."""
    meta = _mapping(pod.get("metadata"))
    spec = _mapping(pod.get("spec"))
    status = _mapping(pod.get("status"))
    ready_condition = _condition(status, "Ready")
    ready = ready_condition is not None and ready_condition.get("status") == "True"
    node = spec.get("nodeName")
    return PodRow(
        name=str(meta.get("name") or ""),
        phase=str(status.get("phase") or "Unknown"),
        ready=ready,
        node=str(node) if node else None,
        reason=None if ready else _reason(status),
        resources=pod_requests(spec, gpu_resources=gpu_resources),
    )
