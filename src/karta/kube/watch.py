"""List-then-watch that keeps going: bookmarks, re-list on 410 Gone, reconnects after outages.

Owns :class:`ListWatch`. Its :meth:`ListWatch.events` yields a ``SYNC`` event holding the full
list first, then the server's ``ADDED``/``MODIFIED``/``DELETED``/``BOOKMARK`` events; every watch
resumes from the last resourceVersion seen (bookmarks move it forward without traffic). When the
server answers 410 (the version was compacted away), it lists again and yields a new ``SYNC``
event so the consumer can reconcile against the complete state. A broken connection (apiserver
restart, network) is retried with capped exponential back-off from the same resourceVersion.
An object the client cannot decode (nested too deeply, a number no double holds:
:mod:`karta.kube.unreadable`) never blinds the loop to its kind: a list keeps every other object
and names it in a warning, and a watch event carrying it makes the loop list again (resuming the
watch would send the same event); ``stats.unreadable`` counts both. This is the loop the
controller builds on (DESIGN.md section 4: no controller framework).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from karta.errors import ApiError, ClusterUnreachableError
from karta.kube.client import DEFAULT_CHUNK_SIZE, KubeClient, UnreadableEventError, WatchEvent, WatchStream
from karta.kube.resources import ResourceType

_LOG = logging.getLogger("karta.kube.watch")

SYNC = "SYNC"


@dataclass(frozen=True)
class SyncEvent:
    """The complete state at ``resource_version`` (after the first list and after each re-list)."""

    items: list[dict[str, Any]]
    resource_version: str
    type: str = SYNC


@dataclass
class ListWatchStats:
    lists: int = 0
    watches: int = 0
    expired: int = 0  # 410 answers that forced a re-list
    reconnects: int = 0  # broken connections resumed from the last resourceVersion
    bookmarks: int = 0
    unreadable: int = 0  # objects left out of lists, and watch events, the client could not decode


@dataclass
class ListWatch:
    """A resumable list-then-watch of one type (optionally one namespace, one label selector)."""

    client: KubeClient
    rtype: ResourceType
    namespace: str | None = None
    label_selector: str | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    watch_timeout: int = 300  # seconds per watch request (the server ends it; we resume)
    backoff_initial: float = 0.2
    backoff_max: float = 5.0
    metadata_only: bool = False
    resource_version: str = ""  # where to resume; empty: list first
    stats: ListWatchStats = field(default_factory=ListWatchStats)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _current: WatchStream | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def stop(self) -> None:
        """Stop from any thread: the iterator ends after the event being delivered, if any."""
        self._stop.set()
        with self._lock:
            if self._current is not None:
                self._current.close()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _list(self) -> SyncEvent:
        listed = self.client.list(
            self.rtype,
            namespace=self.namespace,
            label_selector=self.label_selector,
            chunk_size=self.chunk_size,
            metadata_only=self.metadata_only,
            keep_readable=True,
        )
        self.stats.lists += 1
        if listed.unreadable:
            self.stats.unreadable += len(listed.unreadable)
            _LOG.warning(
                "objects the client cannot read are left out of the list (the others are kept)",
                extra={"resource": self.rtype.plural, "objects": "; ".join(listed.unreadable[:5])[:2000]},
            )
        self.resource_version = listed.resource_version
        return SyncEvent(listed.items, listed.resource_version)

    def events(self) -> Iterator[SyncEvent | WatchEvent]:
        delay = self.backoff_initial
        need_list = not self.resource_version  # given one: resume from it (a 410 still re-lists)
        while not self.stopped:
            try:
                if need_list:
                    yield self._list()
                    need_list = False
                    delay = self.backoff_initial
                stream = self.client.watch(
                    self.rtype,
                    namespace=self.namespace,
                    resource_version=self.resource_version,
                    label_selector=self.label_selector,
                    timeout_seconds=self.watch_timeout,
                    metadata_only=self.metadata_only,
                )
                self.stats.watches += 1
                with self._lock:
                    if self.stopped:
                        stream.close()
                        return
                    self._current = stream
                delay = self.backoff_initial
                for event in stream:
                    if event.resource_version:
                        self.resource_version = event.resource_version
                    if event.type == "BOOKMARK":
                        self.stats.bookmarks += 1
                    yield event
                    if self.stopped:
                        return
            except UnreadableEventError as exc:
                # one object the client cannot decode: a re-list keeps the others and names it
                # (resuming the watch would send the same event again)
                self.stats.unreadable += 1
                _LOG.warning("a watch event the client cannot read; listing again", extra={"error": str(exc)})
                need_list = True
                self._sleep(delay)
                delay = min(delay * 2, self.backoff_max)
                continue
            except ApiError as exc:
                if exc.status == 410:
                    self.stats.expired += 1
                    need_list = True
                    continue
                if exc.status not in (429, 500, 502, 503, 504):
                    raise
                self._sleep(delay)
                delay = min(delay * 2, self.backoff_max)
            except ClusterUnreachableError:
                if self.stopped:
                    return
                self.stats.reconnects += 1
                self._sleep(delay)
                delay = min(delay * 2, self.backoff_max)
            finally:
                with self._lock:
                    self._current = None

    def _sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)
