"""What a part that follows the covered types runs on: the shared cache and the covered-types
tracker (:class:`karta.kube.cache.SharedCache`, :class:`karta.kube.tracker.CoveredTypes`).

:class:`FollowsTypes` is the base of such parts (the gang reconciler, the platform metrics). The
controller gives every part the same cache and tracker, so each resource is listed and watched
once; a part built on its own (a test, a tool) gets its own ones, run and stopped with it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from karta.controller.runtime.definitions import LiveDefinitions
from karta.controller.runtime.workqueue import start_workers
from karta.definitions import StoredDefinition
from karta.kube.cache import OWNER_INDEX, SharedCache, Watch
from karta.kube.client import KubeClient
from karta.kube.resources import ResourceType
from karta.kube.tracker import Coverage, CoveredTypes, following

__all__ = ["FollowsTypes", "Watched", "every"]


@dataclass
class Watched:
    """One followed type: its served resource, its definition (None: a resource the part reads
    for itself, such as group objects or pods), its references on the shared cache (one per
    watched namespace, None: all)."""

    resource: ResourceType
    definition: StoredDefinition | None
    watches: dict[str | None, Watch] = field(default_factory=dict)

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        key = f"{namespace}/{name}" if namespace else name
        for ns, watch in self.watches.items():
            if ns is None or ns == namespace:
                found = watch.get(key)
                if found is not None:
                    return found
        return None

    def objects(self) -> list[dict[str, Any]]:
        return [obj for watch in self.watches.values() for obj in watch.objects()]

    def owned(self, namespace: str, uid: str) -> list[dict[str, Any]]:
        """The cached objects of ``namespace`` owned by ``uid`` (the watches keep :data:`OWNER_INDEX`)."""
        return [
            obj
            for watch in self.watches.values()
            for obj in watch.by_index(OWNER_INDEX, uid)
            if (obj.get("metadata") or {}).get("namespace") == namespace
        ]

    @property
    def synced(self) -> bool:
        return all(watch.synced.is_set() for watch in self.watches.values())

    def release(self) -> None:
        for watch in self.watches.values():
            watch.release()


def every(stop: threading.Event, period: Callable[[], float], body: Callable[[], None]) -> None:
    """Run ``body`` every ``period()`` seconds until ``stop`` (a part's resync)."""
    next_run = time.monotonic() + period()
    while not stop.wait(min(0.5, max(0.05, next_run - time.monotonic()))):
        if time.monotonic() >= next_run:
            body()
            next_run = time.monotonic() + period()


class FollowsTypes:
    """A part on a shared cache and tracker; subclasses call :meth:`_follow` in their ``run``."""

    cache: SharedCache
    tracker: CoveredTypes

    def _init_following(
        self,
        client: KubeClient,
        definitions: LiveDefinitions,
        *,
        cache: SharedCache | None,
        tracker: CoveredTypes | None,
        types_interval: float,
        retry_s: float,
        log: logging.Logger,
    ) -> None:
        self.cache = cache or SharedCache(client, retry_s=retry_s, log=log)
        self.tracker = tracker or CoveredTypes(
            client, lambda: definitions.store, interval=types_interval, after=definitions.synced, log=log
        )
        self._own_parts: list[SharedCache | CoveredTypes] = []
        if cache is None:
            self._own_parts.append(self.cache)
        if tracker is None:
            self._own_parts.append(self.tracker)
            definitions.subscribe(self.tracker.poke)
        self._subscribed = False

    @property
    def types_interval(self) -> float:
        """How often the (shared) tracker reads the types regardless of changes."""
        return self.tracker.interval

    @types_interval.setter
    def types_interval(self, seconds: float) -> None:
        self.tracker.interval = seconds

    @property
    def informer_retry_s(self) -> float:
        return self.cache.retry_s

    @informer_retry_s.setter
    def informer_retry_s(self, seconds: float) -> None:
        self.cache.retry_s = seconds

    def _coverage(self, coverage: Coverage) -> None:
        raise NotImplementedError

    def refresh_types(self) -> None:
        """Read the types now (the tracker tells every subscriber, this part included)."""
        coverage = self.tracker.refresh()
        if coverage is not None and not self._subscribed:
            self._coverage(coverage)

    def _reconcile_following(
        self, stop: threading.Event, controller: str, release: Callable[[], list[Watched]]
    ) -> None:
        """A reconciler's ``run`` (the part has ``queue``, ``reconcile``, ``workers``, ``metrics``,
        ``resync`` and ``resync_period``): the workers draining the queue, the types followed, a
        resync every ``resync_period`` seconds until ``stop``; then the references ``release()``
        hands back (the part forgets them) released and the workers joined."""
        part: Any = self
        threads = start_workers(
            part.queue,
            part.reconcile,
            workers=part.workers,
            stop=stop,
            controller=controller,
            metrics=part.metrics,
        )
        try:
            self._follow(stop, lambda: every(stop, lambda: float(part.resync_period), part.resync))
        finally:
            stop.set()
            for w in release():
                w.release()
            threads.join(timeout=30)

    def _follow(self, stop: threading.Event, body: Callable[[], None]) -> None:
        """Run the owned cache and tracker, hear every coverage, run ``body`` until it returns."""
        self._subscribed = True
        try:
            with following(self.tracker, self._coverage, stop, own=self._own_parts):
                body()
        finally:
            self._subscribed = False
