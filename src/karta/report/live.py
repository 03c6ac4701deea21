"""What ``kli describe`` shows about a live workload besides its component tree, as ``kubectl
describe`` does: the workload's own status conditions, why its pods are pending (their
PodScheduled=False reasons and messages, identical ones grouped) and its recent Events and those of
its unhealthy pods. Pure: the objects, pods and Events read by :mod:`karta.kube` in, records out.

- :func:`workload_conditions`: ``status.conditions`` of the object (type, status, reason, message,
  lastTransitionTime), in the object's order, as kubectl lists them.
- :func:`pending_groups`: the Pending pods that are not scheduled, grouped by the reason and
  message of their PodScheduled condition (no condition yet: reason and message empty), most pods
  first.
- :func:`event_subjects`: whose Events to read: the workload, then its unhealthy pods by name.
- :func:`event_rows`: Events newest last, identical ones (type, reason, source, message, kind) of
  several objects merged, the newest :data:`MAX_EVENTS` kept.
- :func:`live_details`: all of it for one workload (:class:`LiveDetails`), with the warnings of
  what could not be read.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karta.report.contracts import ConditionDetail, EventReport, PendingPods
from karta.report.pods import natural_key, pod_row
from karta.report.summary import parse_time

__all__ = [
    "MAX_EVENTS",
    "MAX_POD_EVENT_SUBJECTS",
    "ConditionRow",
    "EventRow",
    "LiveDetails",
    "PendingGroup",
    "event_rows",
    "event_subjects",
    "live_details",
    "pending_groups",
    "workload_conditions",
]

MAX_EVENTS = 20  # Events shown, the newest
MAX_POD_EVENT_SUBJECTS = 5  # unhealthy pods whose Events are read


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# ------------------------------------------------------------------------------ conditions


@dataclass(frozen=True)
class ConditionRow:
    """One condition of the workload's ``status.conditions``; absent fields read as ``""``."""

    type: str
    status: str
    reason: str
    message: str
    last_transition: str | None

    def to_dict(self) -> ConditionDetail:
        return {
            "type": self.type,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": self.last_transition,
        }


def workload_conditions(obj: Mapping[str, Any]) -> list[ConditionRow]:
    """The object's ``status.conditions`` (entries that are not objects, or have no type, are
    skipped), in the order the object lists them."""
    conditions = _mapping(obj.get("status")).get("conditions")
    out: list[ConditionRow] = []
    for item in conditions if isinstance(conditions, list) else ():
        if not isinstance(item, Mapping) or not _text(item.get("type")):
            continue
        moment = item.get("lastTransitionTime") or item.get("lastUpdateTime") or item.get("lastProbeTime")
        out.append(
            ConditionRow(
                type=_text(item.get("type")),
                status=_text(item.get("status")),
                reason=_text(item.get("reason")),
                message=_text(item.get("message")),
                last_transition=_timestamp(moment),
            )
        )
    return out


def _timestamp(value: Any) -> str | None:
    """An RFC 3339 text as given; a datetime (as YAML loads one) written as one; else None."""
    if isinstance(value, str):
        return value or None
    moment = parse_time(value)
    return moment.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else None


# ------------------------------------------------------------------------------ pending pods


@dataclass(frozen=True)
class PendingGroup:
    """Pending pods that are not scheduled, for one reason and message of their PodScheduled=False
    condition (both empty: the scheduler has not decided yet)."""

    reason: str
    message: str
    pods: tuple[str, ...]

    def to_dict(self) -> PendingPods:
        return {
            "count": len(self.pods),
            "reason": self.reason,
            "message": self.message,
            "pods": list(self.pods),
        }


def pending_groups(pods: Iterable[Mapping[str, Any]]) -> list[PendingGroup]:
    """The pods in phase Pending without a node whose PodScheduled condition is not True, grouped
    by its reason and message; most pods first, then by reason and message."""
    groups: dict[tuple[str, str], list[str]] = {}
    for pod in pods:
        status = _mapping(pod.get("status"))
        if status.get("phase") != "Pending" or _mapping(pod.get("spec")).get("nodeName"):
            continue
        scheduled = _scheduled_condition(status)
        if scheduled is not None and scheduled.get("status") == "True":
            continue
        key = (
            ("", "")
            if scheduled is None
            else (_text(scheduled.get("reason")), _text(scheduled.get("message")).strip())
        )
        groups.setdefault(key, []).append(_text(_mapping(pod.get("metadata")).get("name")))
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [
        PendingGroup(reason, message, tuple(sorted(names, key=natural_key)))
        for (reason, message), names in ordered
    ]


def _scheduled_condition(status: Mapping[str, Any]) -> Mapping[str, Any] | None:
    conditions = status.get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == "PodScheduled":
            return condition
    return None


# ------------------------------------------------------------------------------ events


def event_subjects(
    obj: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], *, pod_limit: int = MAX_POD_EVENT_SUBJECTS
) -> list[str]:
    """The UIDs whose Events ``describe`` reads: the workload's, then those of its first
    ``pod_limit`` unhealthy pods (neither ready nor Succeeded) by name."""
    uids = [_text(_mapping(obj.get("metadata")).get("uid"))]
    unhealthy = [p for p in pods if pod_row(p, gpu_resources=()).unhealthy]
    unhealthy.sort(key=lambda p: natural_key(_text(_mapping(p.get("metadata")).get("name"))))
    uids.extend(_text(_mapping(p.get("metadata")).get("uid")) for p in unhealthy[:pod_limit])
    return [uid for uid in uids if uid]


@dataclass(frozen=True)
class EventRow:
    """One Event, or identical Events of several objects merged: ``objects`` are ``Kind/name``,
    ``count`` the occurrences of all of them, ``first_seen``/``last_seen`` RFC 3339 times."""

    type: str
    reason: str
    source: str
    objects: tuple[str, ...]
    message: str
    count: int
    first_seen: str | None
    last_seen: str | None

    def to_dict(self) -> EventReport:
        return {
            "type": self.type,
            "reason": self.reason,
            "from": self.source,
            "objects": list(self.objects),
            "message": self.message,
            "count": self.count,
            "firstSeen": self.first_seen,
            "lastSeen": self.last_seen,
        }


def _event_row(event: Mapping[str, Any]) -> EventRow:
    involved = _mapping(event.get("involvedObject"))
    series = _mapping(event.get("series"))
    source = _text(_mapping(event.get("source")).get("component")) or _text(event.get("reportingComponent"))
    event_time = _text(event.get("eventTime")) or None
    first = _text(event.get("firstTimestamp")) or event_time
    last = _text(series.get("lastObservedTime")) or _text(event.get("lastTimestamp")) or event_time or first
    count = series.get("count") if series else event.get("count")
    return EventRow(
        type=_text(event.get("type")),
        reason=_text(event.get("reason")),
        source=source,
        objects=(f"{_text(involved.get('kind'))}/{_text(involved.get('name'))}",),
        message=_text(event.get("message")).strip(),
        count=count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1,
        first_seen=first or last,
        last_seen=last,
    )


def _epoch(value: str | None) -> float:
    moment = parse_time(value)
    return moment.timestamp() if moment is not None else float("-inf")


def event_rows(events: Iterable[Mapping[str, Any]], *, limit: int = MAX_EVENTS) -> tuple[list[EventRow], int]:
    """``(rows, omitted)``: the Events newest last (by last seen, then first seen), identical
    Events of several objects of one kind merged into one row (their counts summed, first and last
    seen widened), the newest ``limit`` kept (0: all); ``omitted`` counts the rows left out."""
    merged: dict[tuple[str, str, str, str, str], EventRow] = {}
    for event in events:
        row = _event_row(event)
        kind = row.objects[0].partition("/")[0]
        key = (row.type, row.reason, row.source, row.message, kind)
        seen = merged.get(key)
        if seen is None:
            merged[key] = row
            continue
        merged[key] = EventRow(
            type=row.type,
            reason=row.reason,
            source=row.source,
            objects=tuple(sorted({*seen.objects, *row.objects}, key=natural_key)),
            message=row.message,
            count=seen.count + row.count,
            first_seen=min(seen.first_seen, row.first_seen, key=_epoch),
            last_seen=max(seen.last_seen, row.last_seen, key=_epoch),
        )
    rows = sorted(
        merged.values(),
        key=lambda r: (_epoch(r.last_seen), _epoch(r.first_seen), r.objects, r.reason, r.message),
    )
    if limit and len(rows) > limit:
        return rows[-limit:], len(rows) - limit
    return rows, 0


# ------------------------------------------------------------------------------ all of it


@dataclass(frozen=True)
class LiveDetails:
    """What ``describe`` adds to a live workload's tree (see the module docstring); ``events`` is
    None when the Events could not be read (unknown, not none)."""

    conditions: list[ConditionRow] = field(default_factory=list)
    pending: list[PendingGroup] = field(default_factory=list)
    events: list[EventRow] | None = field(default_factory=list)
    events_omitted: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "conditions": [c.to_dict() for c in self.conditions],
            "pendingPods": [g.to_dict() for g in self.pending],
            "events": None if self.events is None else [e.to_dict() for e in self.events],
        }
        if self.events_omitted:
            out["eventsOmitted"] = self.events_omitted
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def live_details(
    obj: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    events: Iterable[Mapping[str, Any]] = (),
    *,
    warnings: Sequence[str] = (),
    events_read: bool = True,
    event_limit: int = MAX_EVENTS,
) -> LiveDetails:
    """The conditions of ``obj``, its pending ``pods`` grouped and the ``events`` as rows;
    ``warnings`` say what could not be read (pods, owners, Events). ``events_read`` False (the
    Events read failed) with no ``events`` makes them unknown (None)."""
    rows, omitted = event_rows(events, limit=event_limit)
    return LiveDetails(
        conditions=workload_conditions(obj),
        pending=pending_groups(pods),
        events=None if not events_read and not rows else rows,
        events_omitted=omitted,
        warnings=list(warnings),
    )
