"""Reports on one workload, computed by the library for every consumer (``kli``, the controller, a
web view): the component rows with replicas, pods and requests (:mod:`.rows`, ``kli describe``),
a live workload's conditions, pending pods and Events (:mod:`.live`), a workload described, live
or from a file (:mod:`.describe`, ``kli describe`` and the web view's workload page), the one-row
summary read once (:mod:`.summary`, ``kli get`` and the web view's rows) with the gang state
(:mod:`.gang_state`, sub-group minimums counted), everything the engine derives
(:mod:`.inspect`, ``kli inspect``) and checks against predictions (:mod:`.verify`, ``kli
verify``), and cluster capacity, allocatable against requested (:mod:`.capacity`, ``kli
top``), what a platform counts per workload and per namespace and kind (:mod:`.platform`, the
controller's metrics); their JSON shapes are TypedDicts (:mod:`.contracts`). Pure: objects and definitions in,
records out; no cluster access and no text formatting here.

Names are resolved lazily (PEP 562), so that ``kli`` commands can import the package at no cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "GpuTotals": "karta.report.capacity",
    "GpuUsage": "karta.report.capacity",
    "NodeCapacity": "karta.report.capacity",
    "TopOwner": "karta.report.capacity",
    "gpu_totals": "karta.report.capacity",
    "gpu_usage": "karta.report.capacity",
    "gpu_pods": "karta.report.capacity",
    "node_capacity": "karta.report.capacity",
    "KindTotals": "karta.report.platform",
    "WorkloadCounts": "karta.report.platform",
    "controller_uid": "karta.report.platform",
    "gang_pending": "karta.report.platform",
    "owned_pods": "karta.report.platform",
    "platform_totals": "karta.report.platform",
    "pod_gpus": "karta.report.platform",
    "pod_placement": "karta.report.platform",
    "primary_status": "karta.report.platform",
    "workload_counts": "karta.report.platform",
    "PodRow": "karta.report.pods",
    "natural_key": "karta.report.pods",
    "pod_row": "karta.report.pods",
    "UNATTRIBUTED": "karta.report.rows",
    "Row": "karta.report.rows",
    "WorkloadRows": "karta.report.rows",
    "describe_report": "karta.report.rows",
    "desired_replicas": "karta.report.rows",
    "resource_rows": "karta.report.rows",
    "total_requests": "karta.report.rows",
    "workload_rows": "karta.report.rows",
    "LiveDetails": "karta.report.live",
    "PendingInput": "karta.report.queue",
    "PendingQuery": "karta.report.queue",
    "QueueDetail": "karta.report.queue",
    "QueuePosition": "karta.report.queue",
    "pending_query": "karta.report.queue",
    "queue_cell": "karta.report.queue",
    "queue_detail": "karta.report.queue",
    "queue_rows": "karta.report.queues",
    "unknown_queue": "karta.report.queue",
    "queue_name": "karta.report.queue",
    "event_rows": "karta.report.live",
    "event_subjects": "karta.report.live",
    "live_details": "karta.report.live",
    "pending_groups": "karta.report.live",
    "workload_conditions": "karta.report.live",
    "PHASES": "karta.report.summary",
    "Summarizer": "karta.report.summary",
    "Summary": "karta.report.summary",
    "created_at": "karta.report.summary",
    "summarize": "karta.report.summary",
    "GangState": "karta.report.gang_state",
    "Described": "karta.report.describe",
    "describe_file": "karta.report.describe",
    "describe_live": "karta.report.describe",
    "external_selectors_of": "karta.report.describe",
    "ScopeInput": "karta.report.describe",
    "gang_scope_report": "karta.report.describe",
    "workload_gang": "karta.report.gang_state",
    "gang_report": "karta.report.gang_state",
    "has_phase": "karta.report.summary",
    "parse_time": "karta.report.summary",
    "sort_summaries": "karta.report.summary",
    "absent_components": "karta.report.inspect",
    "error_count": "karta.report.inspect",
    "inspect_report": "karta.report.inspect",
    "Check": "karta.report.verify",
    "check_predictions": "karta.report.verify",
    "run_checks": "karta.report.verify",
    "DescribeReport": "karta.report.contracts",
    "InspectReport": "karta.report.contracts",
    "WorkloadSummary": "karta.report.contracts",
}

__all__ = [
    "PHASES",
    "UNATTRIBUTED",
    "Check",
    "DescribeReport",
    "Described",
    "GangState",
    "GpuTotals",
    "GpuUsage",
    "InspectReport",
    "KindTotals",
    "LiveDetails",
    "NodeCapacity",
    "PendingInput",
    "PendingQuery",
    "PodRow",
    "QueueDetail",
    "QueuePosition",
    "Row",
    "ScopeInput",
    "Summarizer",
    "Summary",
    "TopOwner",
    "WorkloadCounts",
    "WorkloadRows",
    "WorkloadSummary",
    "absent_components",
    "check_predictions",
    "controller_uid",
    "created_at",
    "describe_file",
    "describe_live",
    "describe_report",
    "desired_replicas",
    "error_count",
    "event_rows",
    "event_subjects",
    "external_selectors_of",
    "gang_pending",
    "gang_report",
    "gang_scope_report",
    "gpu_pods",
    "gpu_totals",
    "gpu_usage",
    "has_phase",
    "inspect_report",
    "live_details",
    "natural_key",
    "node_capacity",
    "owned_pods",
    "parse_time",
    "pending_groups",
    "pending_query",
    "platform_totals",
    "pod_gpus",
    "pod_placement",
    "pod_row",
    "primary_status",
    "queue_cell",
    "queue_detail",
    "queue_name",
    "queue_rows",
    "resource_rows",
    "run_checks",
    "sort_summaries",
    "summarize",
    "total_requests",
    "unknown_queue",
    "workload_conditions",
    "workload_counts",
    "workload_gang",
    "workload_rows",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.report.capacity import (
        GpuTotals,
        GpuUsage,
        NodeCapacity,
        TopOwner,
        gpu_pods,
        gpu_totals,
        gpu_usage,
        node_capacity,
    )
    from karta.report.contracts import DescribeReport, InspectReport, WorkloadSummary
    from karta.report.describe import (
        Described,
        ScopeInput,
        describe_file,
        describe_live,
        external_selectors_of,
        gang_scope_report,
    )
    from karta.report.gang_state import GangState, gang_report, workload_gang
    from karta.report.inspect import absent_components, error_count, inspect_report
    from karta.report.live import (
        LiveDetails,
        event_rows,
        event_subjects,
        live_details,
        pending_groups,
        workload_conditions,
    )
    from karta.report.platform import (
        KindTotals,
        WorkloadCounts,
        controller_uid,
        gang_pending,
        owned_pods,
        platform_totals,
        pod_gpus,
        pod_placement,
        primary_status,
        workload_counts,
    )
    from karta.report.pods import PodRow, natural_key, pod_row
    from karta.report.queue import (
        PendingInput,
        PendingQuery,
        QueueDetail,
        QueuePosition,
        pending_query,
        queue_cell,
        queue_detail,
        queue_name,
        unknown_queue,
    )
    from karta.report.queues import queue_rows
    from karta.report.rows import (
        UNATTRIBUTED,
        Row,
        WorkloadRows,
        describe_report,
        desired_replicas,
        resource_rows,
        total_requests,
        workload_rows,
    )
    from karta.report.summary import (
        PHASES,
        Summarizer,
        Summary,
        created_at,
        has_phase,
        parse_time,
        sort_summaries,
        summarize,
    )
    from karta.report.verify import Check, check_predictions, run_checks
