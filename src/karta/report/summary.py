"""One workload as one row (docs/spec/format.md#kli-get ``View``), read once for every consumer: what ``kli
get`` lists and the web view's rows show (status, phases, GPUs, pods per component, pods ready and,
read with its pods, the gang state of :mod:`karta.report.gang_state`).

:func:`summarize` reads a workload (with its pods, when given) into a :class:`Summary`;
:class:`Summarizer` turns it into ``kli get``'s row.

A summary is ``{name, namespace, kind, apiVersion, createdAt, definition, origin, phases, gpus,
components}``: ``phases`` the matched statuses (``["Undefined"]`` when none), ``gpus`` the GPUs of
all desired pods (from the pod templates, per the request arithmetic of 17.5), ``components`` the
pod-bearing components with their desired pod counts; ``kli get -o wide|json|yaml`` adds ``gang``
(:func:`karta.report.gang_report`, once it has read the pods). Also the ``--phase`` filter rule
(:func:`has_phase`) and the listing order (:func:`sort_summaries`).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta._records import record
from karta.model import ResourceStatus
from karta.report.contracts import ComponentCount, WorkloadSummary
from karta.report.rows import WorkloadRows, resource_rows, workload_rows

if TYPE_CHECKING:
    from karta.definitions import StoredDefinition
    from karta.jq import Evaluator
    from karta.report.gang_state import GangState

__all__ = [
    "PHASES",
    "Summarizer",
    "Summary",
    "created_at",
    "has_phase",
    "parse_time",
    "sort_summaries",
    "summarize",
]

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


@record
class Summary:
    """One workload read once through its definition: the tree and rows (``built``), the GPUs of
    every desired pod, the pod-bearing components with their desired pods and, when the definition
    has gang instructions, its gang state, or why it is unknown (``gang_error``: read without its
    pods or with only some of them, or the gang plan could not be computed)."""

    built: WorkloadRows
    gpus: int
    components: list[ComponentCount]
    gang: GangState | None = None
    gang_error: str | None = None

    @property
    def phases(self) -> list[str]:
        return self.built.phases

    @property
    def status(self) -> str:
        """The primary status (docs/spec/format.md#primary-status), ``Undefined`` when none matched."""
        status = self.built.tree.status
        return str(status.primary) if status is not None else "Undefined"

    def gang_report(self) -> dict[str, Any] | None:
        """The ``gang`` field of ``kli describe``: :func:`karta.report.gang_state.report_of`."""
        from karta.report.gang_state import report_of

        return report_of(self.gang, self.gang_error)

    @property
    def pods(self) -> dict[str, int]:
        """``{ready, total, desired}`` pods over the rows."""
        rows = [r for r in self.built.rows if not r.external]  # extension E2: not the workload's pods
        return {
            "ready": sum(r.ready for r in rows),
            "total": sum(r.current for r in rows),
            "desired": sum(r.pods_desired for r in rows),
        }


def summarize(
    definition: StoredDefinition,
    obj: Mapping[str, Any],
    *,
    gpu_resources: Sequence[str],
    pods: Sequence[Mapping[str, Any]] | None = None,
    pods_complete: bool = True,
    evaluator: Evaluator | None = None,
    external_pods: Sequence[Mapping[str, Any]] = (),
) -> Summary:
    """The :class:`Summary` of ``obj`` read through ``definition`` (with its live ``pods`` when
    given: then the rows count them and the gang state is computed; ``pods_complete`` False: they
    are only some of its pods, the counts and the gang state are unknown); ``evaluator`` defaults
    to the process's for the definition; ``external_pods``: the pods listed by the labels of its
    external components (extension E2: shown on them, never in the counts or the gang). Raises
    :class:`~karta.errors.KartaError` when the definition is invalid or extraction fails (a gang
    plan that fails is ``gang_error``)."""
    from karta.definitions.evaluators import evaluator_for
    from karta.report.gang_state import read_gang

    evaluator = evaluator if evaluator is not None else evaluator_for(definition)
    pod_list = None if pods is None else [dict(p) for p in pods]
    built = workload_rows(
        definition.karta,
        obj,
        evaluator=evaluator,
        gpu_resources=gpu_resources,
        pods=pod_list,
        pods_complete=pods_complete,
        external_pods=external_pods,
    )
    components = resource_rows(built.rows)
    gang, gang_error = read_gang(
        definition.karta, obj, pod_list, pods_complete=pods_complete, evaluator=evaluator
    )
    return Summary(
        built=built,
        gpus=sum(r.gpus for _, _, r in components),
        components=[{"name": name, "replicas": desired} for name, desired, _ in components],
        gang=gang,
        gang_error=gang_error,
    )


def created_at(meta: Mapping[str, Any]) -> str | None:
    """The object's ``creationTimestamp`` as RFC 3339 UTC (a datetime, as YAML loads one, written
    as one); None when absent or unreadable."""
    moment = parse_time(meta.get("creationTimestamp"))
    return moment.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else None


class Summarizer:
    """The ``kli get`` rows of workload objects (:func:`summarize`)."""

    def __init__(self, *, gpu_resources: Sequence[str]) -> None:
        self.gpu_resources = tuple(gpu_resources)

    def summary(
        self, obj: Mapping[str, Any], definition: StoredDefinition, *, evaluator: Evaluator | None = None
    ) -> WorkloadSummary:
        """The row of ``obj`` resolved through ``definition`` (``evaluator``: with its references
        bound, extension E3), read without its pods (``kli get`` adds ``gang`` when it shows it:
        :func:`karta.report.gang_report`). Raises :class:`~karta.errors.KartaError` when the
        definition is invalid or extraction fails."""
        read = summarize(definition, obj, gpu_resources=self.gpu_resources, evaluator=evaluator)
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        created = meta.get("creationTimestamp")
        if isinstance(created, _dt.datetime):
            created = created_at(meta)
        out: WorkloadSummary = {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "kind": obj.get("kind"),
            "apiVersion": obj.get("apiVersion"),
            "createdAt": created or None,
            "definition": definition.name,
            "origin": definition.origin,
            "phases": read.phases,
            "gpus": read.gpus,
            "components": read.components,
        }
        return out
