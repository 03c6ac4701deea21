"""The Events involving some objects, as ``kubectl describe`` reads them: the core ``v1`` Events
of the objects' namespace with ``fieldSelector=involvedObject.uid=<uid>``, one request per object
(the scheduler's ``events.k8s.io`` Events are served there too, ``regarding`` as
``involvedObject``).

Owns :func:`object_events`. Bounded: at most :data:`MAX_OBJECTS` objects are asked about and one
page of at most :data:`PAGE` Events is read per object, from the API server's cache
(resourceVersion "0", as the pods of ``describe`` are). Selecting, grouping and ordering them is
the report's (:mod:`karta.report.events`). A refused or failing read is recorded
(:class:`EventsRead`), never raised: Events explain, they are never the data itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from karta.errors import ClusterError
from karta.kube.client import KubeClient
from karta.kube.owners import ReadFailure, read_failure

__all__ = ["MAX_OBJECTS", "PAGE", "EventsRead", "object_events"]

MAX_OBJECTS = 6  # the workload and up to five of its pods
PAGE = 250


@dataclass(frozen=True)
class EventsRead:
    """The Events read (unordered, each once) and the read that failed, if one did (the Events of
    the other objects are still there)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    failure: ReadFailure | None = None

    @property
    def warnings(self) -> list[str]:
        if self.failure is None:
            return []
        return [f"cannot {self.failure.what} ({self.failure.reason}): events are not shown"]


def object_events(client: KubeClient, namespace: str | None, uids: Sequence[str]) -> EventsRead:
    """The Events of the objects ``uids`` (the first :data:`MAX_OBJECTS`) in ``namespace`` (None:
    cluster-scoped objects, whose Events live in ``default``, as kubectl reads them). The first
    failed read stops the reading: the same verb on the same resource would fail again."""
    ns = namespace or "default"
    events: list[dict[str, Any]] = []
    seen: set[str] = set()
    try:
        event_type = client.discovery.for_gvk("", "v1", "Event")
        for uid in list(dict.fromkeys(u for u in uids if u))[:MAX_OBJECTS]:
            pages = client.iter_pages(
                event_type,
                namespace=ns,
                field_selector=f"involvedObject.uid={uid}",
                chunk_size=PAGE,
                resource_version="0",
            )
            for item in next(iter(pages)).items:
                key = str((item.get("metadata") or {}).get("uid") or id(item))
                if key not in seen:
                    seen.add(key)
                    events.append(item)
    except ClusterError as exc:
        return EventsRead(events, read_failure(exc, resource="events", namespace=ns, verb="list"))
    return EventsRead(events)
