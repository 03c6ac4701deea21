"""Kubernetes Events (core/v1) about Kartas and workloads, aggregated like client-go's recorder.

The same (object, type, reason, message) within :data:`AGGREGATE_S` seconds bumps ``count`` and
``lastTimestamp`` of the Event already written instead of writing a new one. Events of
cluster-scoped objects (Kartas) go to the ``default`` namespace, as kubectl looks for them.
Writing an Event never fails the caller: an API error is logged and forgotten.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any, Final

from karta.controller.runtime.logs import logger
from karta.errors import KartaError
from karta.kube.client import KubeClient
from karta.rbac import rule

__all__ = ["AGGREGATE_S", "COMPONENT", "EventRecorder", "event_rules"]

COMPONENT: Final = "karta-controller"
AGGREGATE_S: Final = 600.0
_LOG = logger("events")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class EventRecorder:
    """Writes Events through ``client``; ``instance`` names this process (the pod's name)."""

    def __init__(self, client: KubeClient, *, instance: str = "") -> None:
        self.client = client
        self.instance = instance
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str, str, str], tuple[str, str, int, float]] = {}

    def warning(self, obj: Mapping[str, Any], reason: str, message: str) -> None:
        self.record(obj, "Warning", reason, message)

    def normal(self, obj: Mapping[str, Any], reason: str, message: str) -> None:
        self.record(obj, "Normal", reason, message)

    def record(self, obj: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name", ""))
        namespace = str(meta.get("namespace") or "default")
        uid = str(meta.get("uid", ""))
        key = (uid or f"{namespace}/{name}", type_, reason, message)
        now = time.monotonic()
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None and now - seen[3] < AGGREGATE_S:
                event_ns, event_name, count, _ = seen
                self._seen[key] = (event_ns, event_name, count + 1, now)
            else:
                seen = None
                event_ns, event_name, count = namespace, f"{name or 'object'}.{uuid.uuid4().hex[:16]}", 1
                self._seen[key] = (event_ns, event_name, 1, now)
            if len(self._seen) > 4096:  # forget the oldest half: aggregation is best effort
                for old in sorted(self._seen, key=lambda k: self._seen[k][3])[:2048]:
                    del self._seen[old]
        try:
            if seen is not None:
                self.client.patch(
                    "events",
                    event_name,
                    {"count": count + 1, "lastTimestamp": _now()},
                    namespace=event_ns,
                )
                return
            stamp = _now()
            self.client.create(
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {"name": event_name, "namespace": event_ns},
                    "involvedObject": {
                        "apiVersion": obj.get("apiVersion", ""),
                        "kind": obj.get("kind", ""),
                        "name": name,
                        **({"namespace": meta["namespace"]} if meta.get("namespace") else {}),
                        **({"uid": uid} if uid else {}),
                        **(
                            {"resourceVersion": meta["resourceVersion"]}
                            if meta.get("resourceVersion")
                            else {}
                        ),
                    },
                    "type": type_,
                    "reason": reason,
                    "message": message[:1024],
                    "count": 1,
                    "firstTimestamp": stamp,
                    "lastTimestamp": stamp,
                    "source": {"component": COMPONENT},
                    "reportingComponent": COMPONENT,
                    "reportingInstance": self.instance or COMPONENT,
                },
                namespace=event_ns,
            )
        except KartaError as exc:
            _LOG.warning(
                "cannot write event",
                extra={"key": f"{namespace}/{name}", "reason": reason, "error": str(exc)},
            )


def event_rules() -> list[dict[str, Any]]:
    """The RBAC rules of :class:`EventRecorder`: create Events and patch them (aggregation), in any
    namespace."""
    return [rule("", ["events"], ["create", "patch"])]
