"""Escaped pods: pods of covered workloads that should carry a gang binding but do not.

A pod escapes the webhook when it is created while the webhook is unreachable (failure policy
``Ignore``), timed out, failed, or was not yet registered. Its binding cannot be added afterwards
(``spec.schedulingGroup`` is immutable; the other backends read their keys when the pod is first
queued), so the scheduler places it alone. :class:`EscapedPods` finds them: a periodic pass (a
leader-only part of the manager, one report per pod) that lists the pods that are not finished,
resolves each to its workload exactly as the webhook does
(:class:`~karta.controller.parts.pod_binding.admission.PodBinder`,
one rendering per workload with all its pods), and reports each pod whose binding is missing with a
Warning event ``PodEscapedBinding`` on the workload and ``karta_unbound_pods{reason="escaped"}``.
Nothing is written to the pod: deleting it lets its controller re-create it through the webhook.
Pods of workloads outside the gang-scheduling scope (``scope``) are never reported: nothing binds them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from karta.controller.parts.pod_binding.admission import (
    BindingFailure,
    PodBinder,
    conflicting_group,
    missing_binding,
)
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.logs import logger
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import OwnerWalk
from karta.controller.runtime.scope import GangScope
from karta.definitions import StoredDefinition
from karta.errors import KartaError
from karta.kube.client import KubeClient

__all__ = ["EVENT_REASON", "INTERVAL_S", "EscapedPod", "EscapedPods"]

EVENT_REASON: Final = "PodEscapedBinding"
INTERVAL_S: Final = 60.0
_LOG = logger("escaped")


@dataclass(frozen=True)
class EscapedPod:
    namespace: str
    name: str
    uid: str
    workload_kind: str
    workload_name: str
    missing: tuple[str, ...]


class EscapedPods:
    """The periodic pass; :meth:`run_once` is one pass (returns the pods it reported this time)."""

    name = "escaped-pods"

    def __init__(
        self,
        binder: PodBinder,
        client: KubeClient,
        *,
        metrics: Metrics,
        events: EventRecorder,
        namespaces: tuple[str, ...] = (),
        interval: float = INTERVAL_S,
        scope: GangScope | None = None,
    ) -> None:
        self.binder = binder
        self.scope = scope
        self.client = client
        self.metrics = metrics
        self.events = events
        self.namespaces = namespaces
        self.interval = interval
        self._reported: set[str] = set()

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(self.interval):
            try:
                self.run_once()
            except Exception:  # one bad pass must not end the part
                _LOG.exception("escaped-pod pass failed")

    def _pods(self) -> list[dict[str, Any]]:
        selector = "status.phase!=Succeeded,status.phase!=Failed"
        if not self.namespaces:
            return self.client.list("pods", namespace=None, field_selector=selector).items
        out: list[dict[str, Any]] = []
        for ns in self.namespaces:
            out.extend(self.client.list("pods", namespace=ns, field_selector=selector).items)
        return out

    def run_once(self) -> list[EscapedPod]:
        if not self.binder.covers_anything():
            return []
        try:
            pods = self._pods()
        except KartaError as exc:
            _LOG.warning("cannot list pods for the escaped-pod pass", extra={"error": str(exc)})
            return []
        groups: dict[str, tuple[OwnerWalk, StoredDefinition, list[dict[str, Any]]]] = {}
        seen: set[str] = set()
        for pod in pods:
            meta = pod.get("metadata") or {}
            uid = str(meta.get("uid") or "")
            seen.add(uid)
            if uid in self._reported or meta.get("deletionTimestamp"):
                continue
            try:
                walk = self.binder.top(pod)
                stored = self.binder.definition(walk)
            except BindingFailure:
                continue  # the workload cannot be read now: the next pass tries again
            if stored is None or walk.top is None:
                continue
            if self.scope is not None and not self.scope.decide(walk.top).in_scope:
                continue  # outside the scope: nothing binds its pods
            top_uid = str((walk.top.get("metadata") or {}).get("uid") or "")
            groups.setdefault(top_uid, (walk, stored, []))[2].append(pod)
        self._reported &= seen  # forget pods that are gone
        found: list[EscapedPod] = []
        for walk, stored, members in groups.values():
            try:
                binding = self.binder.bind(walk, stored, members)
            except BindingFailure as failure:
                _LOG.info("cannot render for the escaped-pod pass", extra={"error": failure.message})
                continue
            workload = binding.workload
            for pod in members:
                meta = pod.get("metadata") or {}
                merge = binding.patch_for(str(meta.get("name") or ""))
                if merge is None or conflicting_group(pod, merge, self.binder.record.pod_group_fields):
                    continue  # in no gang, or bound to a group of its creator's choosing
                missing = missing_binding(pod, merge)
                if not missing:
                    continue
                escaped = EscapedPod(
                    namespace=str(meta.get("namespace") or ""),
                    name=str(meta.get("name") or ""),
                    uid=str(meta.get("uid") or ""),
                    workload_kind=str(workload.get("kind") or ""),
                    workload_name=str((workload.get("metadata") or {}).get("name") or ""),
                    missing=tuple(missing),
                )
                self._report(workload, escaped)
                found.append(escaped)
        return found

    def _report(self, workload: Mapping[str, Any], pod: EscapedPod) -> None:
        self._reported.add(pod.uid)
        self.metrics.unbound_pods.labels(reason="escaped").inc()
        message = (
            f"pod {pod.name} was created without its gang binding (missing {', '.join(pod.missing)}), "
            "so the scheduler places it on its own; delete it to have it re-created through the webhook"
        )
        _LOG.warning(
            "escaped pod", extra={"pod": f"{pod.namespace}/{pod.name}", "missing": list(pod.missing)}
        )
        self.events.warning(workload, EVENT_REASON, message)
