"""One workload as one row (karta-format.md 17.4 ``View``): what ``kli get`` lists and what a
platform counts per workload (phases, GPUs, pods per component).

A summary is ``{name, namespace, kind, apiVersion, createdAt, definition, origin, phases, gpus,
components}``: ``phases`` the matched statuses (``["Undefined"]`` when none), ``gpus`` the GPUs of
all desired pods (from the pod templates, per the request arithmetic of 17.5), ``components`` the
pod-bearing components with their desired pod counts. Also the ``--phase`` filter rule
(:func:`has_phase`) and the listing order (:func:`sort_summaries`).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from karta.definitions import StoredDefinition
from karta.jq import Evaluator
from karta.model import ResourceStatus
from karta.report.contracts import WorkloadSummary
from karta.report.rows import resource_rows, workload_rows

__all__ = ["PHASES", "Summarizer", "has_phase", "parse_time", "sort_summaries"]

PHASES: tuple[str, ...] = tuple(
    status.value
    for status in (
        ResourceStatus.UNDEFINED,
        ResourceStatus.RESUMING,
        ResourceStatus.SUSPENDING,
        ResourceStatus.SUSPENDED,
        ResourceStatus.RUNNING,
        ResourceStatus.FAILED,
        ResourceStatus.COMPLETED,
        ResourceStatus.INITIALIZING,
        ResourceStatus.DEGRADED,
    )
)
"""Every status a row can show, in the order ``kli get --phase`` lists them."""


def has_phase(summary: Mapping[str, Any], phases: Collection[str]) -> bool:
    """Any-match: the row stays if one of its phases is listed (no phases: every row)."""
    return not phases or any(p in phases for p in summary.get("phases") or ())


def sort_summaries(summaries: Iterable[WorkloadSummary]) -> list[WorkloadSummary]:
    """Newest first, then Kind, then name (then namespace, for a stable order)."""
    items = list(summaries)
    items.sort(key=lambda v: (v.get("kind") or "", v.get("name") or "", v.get("namespace") or ""))
    items.sort(key=lambda v: _epoch(v.get("createdAt")), reverse=True)
    return items


def _epoch(value: Any) -> float:
    moment = parse_time(value)
    return moment.timestamp() if moment is not None else float("-inf")


def parse_time(value: Any) -> _dt.datetime | None:
    """An RFC 3339 timestamp (or a datetime, as YAML loads one) as an aware datetime; None when
    absent or unreadable."""
    if isinstance(value, _dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=_dt.UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=_dt.UTC)


class Summarizer:
    """Summaries of workload objects; one jq evaluator per definition, shared by all its objects."""

    def __init__(self, *, gpu_resources: Sequence[str]) -> None:
        self.gpu_resources = tuple(gpu_resources)
        self._evaluators: dict[int, tuple[StoredDefinition, Evaluator]] = {}

    def _evaluator(self, definition: StoredDefinition) -> Evaluator:
        key = id(definition.karta)
        found = self._evaluators.get(key)
        if found is None or found[0].karta is not definition.karta:
            found = self._evaluators[key] = (definition, Evaluator(trusted=definition.trusted))
        return found[1]

    def summary(self, obj: Mapping[str, Any], definition: StoredDefinition) -> WorkloadSummary:
        """The row of ``obj`` resolved through ``definition``; raises
        :class:`~karta.errors.KartaError` when the definition is invalid or extraction fails."""
        built = workload_rows(
            definition.karta, obj, evaluator=self._evaluator(definition), gpu_resources=self.gpu_resources
        )
        components = resource_rows(built.rows)
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        created = meta.get("creationTimestamp")
        if isinstance(created, _dt.datetime):
            moment = parse_time(created)
            created = moment.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None
        return {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "kind": obj.get("kind"),
            "apiVersion": obj.get("apiVersion"),
            "createdAt": created or None,
            "definition": definition.name,
            "origin": definition.origin,
            "phases": built.phases,
            "gpus": sum(r.gpus for _, _, r in components),
            "components": [{"name": name, "replicas": desired} for name, desired, _ in components],
        }
