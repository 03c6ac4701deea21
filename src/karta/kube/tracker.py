"""The covered types, kept current: which workload types the definitions cover and the cluster
serves (list and watch), read again as definitions, CRDs and discovery change.

Owns :class:`CoveredTypes`, the one copy of the rules every mirror of "every covered type" used to
repeat:

- **debounce**: :meth:`CoveredTypes.poke` (the definitions changed; the store is rebuilt on every
  Karta update, status updates included) reads the types at once, but at most once a second;
- **discovery lag**: :meth:`CoveredTypes.crds_changed` (a CRD was created, changed or deleted)
  reads them at once and again :data:`DISCOVERY_LAG_S` later, because discovery serves a new CRD
  a moment after it is established;
- **two misses**: a type still claimed by a definition but missing from discovery is dropped only
  when missing from two reads in a row (after an API-server restart CRDs are served a moment later
  than built-in types); a type no definition covers any more is dropped at once;
- **periodic**: every ``interval`` seconds regardless.

Each read gives the subscribers a :class:`Coverage`: the covered types (with their definitions),
the served resources (for the consumers that follow other types too: group objects, pods) and
what was added, removed or changed since the previous read. A consumer keeps the types it wants
(e.g. only those whose definition has gang instructions) by filtering ``types``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final, Protocol

from karta.definitions import DefinitionStore, StoredDefinition
from karta.errors import ClusterError
from karta.kube.client import KubeClient
from karta.kube.resources import ResourceType
from karta.kube.workloads import CoveredType, covered_types
from karta.model.gvk import GroupKind

__all__ = [
    "DISCOVERY_LAG_S",
    "MIN_INTERVAL_S",
    "MISSES_TO_DROP",
    "Coverage",
    "CoveredTypes",
    "following",
    "same_definition",
]

MIN_INTERVAL_S: Final = 1.0
DISCOVERY_LAG_S: Final = 2.0
MISSES_TO_DROP: Final = 2
_LOG = logging.getLogger("karta.kube.tracker")


def same_definition(old: StoredDefinition, new: StoredDefinition) -> bool:
    """Whether two snapshots hold the same definition (the store is rebuilt on every Karta change,
    status updates included: an equal definition must not requeue every workload of its type)."""
    if old.karta is new.karta:
        return True
    where = (old.origin, old.source, old.trusted) != (new.origin, new.source, new.trusted)
    return not where and old.karta == new.karta


@dataclass(frozen=True)
class Coverage:
    """One read of the types: ``types`` by GroupKind (list and watch served), the served
    ``resources``, the store it was read with, the warnings of kinds skipped, and the changes
    against the previous read (``changed``: another definition)."""

    store: DefinitionStore
    types: Mapping[GroupKind, CoveredType]
    resources: tuple[ResourceType, ...]
    warnings: tuple[str, ...] = ()
    added: frozenset[GroupKind] = frozenset()
    removed: frozenset[GroupKind] = frozenset()
    changed: frozenset[GroupKind] = frozenset()

    def resource(self, group: str, version: str, kind: str) -> ResourceType | None:
        return next((r for r in self.resources if r.gvk == (group, version, kind)), None)


class CoveredTypes:
    """The covered-types tracker (see the module docstring); ``run(stop)`` blocks."""

    name = "covered-types"

    def __init__(
        self,
        client: KubeClient,
        store: Callable[[], DefinitionStore],
        *,
        interval: float = 30.0,
        after: threading.Event | None = None,
        log: logging.Logger = _LOG,
    ) -> None:
        self.client = client
        self.store = store
        self.interval = interval
        self.after = after  # set once the definitions are ready
        self.log = log
        self.current: Coverage | None = None
        self.refreshed = threading.Event()
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[Coverage], None]] = []
        self._missing: dict[GroupKind, int] = {}
        self._now = threading.Event()
        self._later: list[float] = []  # monotonic times of reads due after a CRD change
        self.reads = 0

    def subscribe(self, callback: Callable[[Coverage], None]) -> None:
        """``callback(coverage)`` after every read (at once with the last one, if any)."""
        with self._lock:
            self._subscribers.append(callback)
            current = self.current
        if current is not None:
            self._call(callback, current)

    def unsubscribe(self, callback: Callable[[Coverage], None]) -> None:
        with self._lock:
            self._subscribers = [c for c in self._subscribers if c is not callback]

    def poke(self, *_ignored: object) -> None:
        """Read the types again soon (at most once a second); any thread."""
        self._now.set()

    def crds_changed(self, *_ignored: object) -> None:
        """A CRD changed: read now and once more after the discovery lag."""
        with self._lock:
            self._later.append(time.monotonic() + DISCOVERY_LAG_S)
        self._now.set()

    # -- reading -----------------------------------------------------------------------------------
    def refresh(self) -> Coverage | None:
        """Read discovery and the definitions once and tell the subscribers (None: discovery
        failed; the last coverage stands)."""
        store = self.store()
        try:
            self.client.discovery.invalidate()
            resources = tuple(self.client.discovery.resources())
            covered, warnings = covered_types(self.client, store)
        except ClusterError as exc:
            self.log.warning("cannot read the served types; keeping them", extra={"error": str(exc)})
            return None
        self.reads += 1
        found = {
            GroupKind(c.resource.group, c.resource.kind): c
            for c in covered
            if c.resource.supports("list", "watch")
        }
        served = {GroupKind(r.group, r.kind) for r in resources}
        claimed = {gvk.group_kind for gvk in store.gvks()}
        with self._lock:
            before = dict(self.current.types) if self.current is not None else {}
            types = dict(found)
            for gk, previous in before.items():
                if gk in found:
                    self._missing.pop(gk, None)
                elif gk in claimed and gk not in served:
                    misses = self._missing[gk] = self._missing.get(gk, 0) + 1
                    if misses < MISSES_TO_DROP:
                        types[gk] = previous  # not served for a moment: kept until the next read
                    else:
                        self._missing.pop(gk, None)
                else:
                    self._missing.pop(gk, None)
            coverage = Coverage(
                store=store,
                types=types,
                resources=resources,
                warnings=tuple(warnings),
                added=frozenset(types.keys() - before.keys()),
                removed=frozenset(before.keys() - types.keys()),
                changed=frozenset(
                    gk
                    for gk in types.keys() & before.keys()
                    if types[gk].resource.gvk != before[gk].resource.gvk
                    or not same_definition(before[gk].definition, types[gk].definition)
                ),
            )
            self.current = coverage
            subscribers = list(self._subscribers)
        for gk in sorted(coverage.added):
            self.log.info("type covered", extra={"type": types[gk].resource.token})
        for gk in sorted(coverage.removed):
            self.log.info("type no longer covered", extra={"type": before[gk].resource.token})
        for callback in subscribers:
            self._call(callback, coverage)
        self.refreshed.set()
        return coverage

    def _call(self, callback: Callable[[Coverage], None], coverage: Coverage) -> None:
        try:
            callback(coverage)
        except Exception:  # a bug in one consumer must not stop the others
            self.log.exception("covered-types subscriber failed")

    # -- running -----------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        while self.after is not None and not self.after.wait(0.2):
            if stop.is_set():
                return
        next_read = last_read = 0.0
        while not stop.is_set():
            now = time.monotonic()
            with self._lock:
                due = [t for t in self._later if t <= now]
                self._later = [t for t in self._later if t > now]
            if due:
                self._now.set()
            early = self._now.is_set() and now >= last_read + MIN_INTERVAL_S
            if now >= next_read or early:
                self._now.clear()
                try:
                    self.refresh()
                except Exception:  # a bug must not stop the tracker: logged, read again later
                    self.log.exception("cannot refresh the covered types")
                last_read = time.monotonic()
                next_read = last_read + self.interval
            with self._lock:
                wake = min([next_read, *self._later])
            if self._now.is_set():
                stop.wait(max(0.05, min(wake, last_read + MIN_INTERVAL_S) - time.monotonic()))
            else:
                self._now.wait(min(0.5, max(0.05, wake - time.monotonic())))  # and see ``stop``


class _Runnable(Protocol):
    name: str

    def run(self, stop: threading.Event) -> None: ...


@contextmanager
def following(
    tracker: CoveredTypes,
    callback: Callable[[Coverage], None],
    stop: threading.Event,
    *,
    own: Sequence[_Runnable] = (),
) -> Iterator[None]:
    """``callback`` hears every coverage of ``tracker`` inside the block; the parts a consumer
    built for itself (``own``: its cache, its tracker, when none was shared with it) run in
    threads until ``stop``, and are waited for when the block ends."""
    threads = [threading.Thread(target=part.run, args=(stop,), name=part.name, daemon=True) for part in own]
    for thread in threads:
        thread.start()
    tracker.subscribe(callback)
    try:
        yield
    finally:
        tracker.unsubscribe(callback)
        for thread in threads:
            thread.join(timeout=5)
