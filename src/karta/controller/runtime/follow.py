"""What a part that follows the covered types runs on: the shared cache and the covered-types
tracker (:class:`karta.kube.cache.SharedCache`, :class:`karta.kube.tracker.CoveredTypes`).

:class:`FollowsTypes` is the base of such parts (the gang reconciler, the platform metrics). The
controller gives every part the same cache and tracker, so each resource is listed and watched
once; a part built on its own (a test, a tool) gets its own ones, run and stopped with it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from karta.controller.runtime.definitions import LiveDefinitions
from karta.kube.cache import SharedCache
from karta.kube.client import KubeClient
from karta.kube.tracker import Coverage, CoveredTypes, following

__all__ = ["FollowsTypes"]


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

    def _follow(self, stop: threading.Event, body: Callable[[], None]) -> None:
        """Run the owned cache and tracker, hear every coverage, run ``body`` until it returns."""
        self._subscribed = True
        try:
            with following(self.tracker, self._coverage, stop, own=self._own_parts):
                body()
        finally:
            self._subscribed = False
