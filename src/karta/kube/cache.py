"""One cache of the cluster shared by every consumer in a process: reference-counted informers.

Owns :class:`SharedCache`. :meth:`SharedCache.watch` hands out a :class:`Watch` (a reference) on
the :class:`~karta.kube.informer.Informer` of one resource type in one namespace (all namespaces:
None), one label selector, full objects or metadata only (:class:`WatchKey`). The first reference
creates the informer, later ones share it (their handler is first given the cached objects, as
``ADDED``), the last :meth:`Watch.release` stops it. So two consumers of the same objects (the gang
reconciler and the platform metrics, the definitions and the Karta operator) cost one list and one
watch, and one copy in memory.

Every object is kept as :func:`~karta.kube.informer.trim_object` returns it (no ``managedFields``,
no kubectl last-applied annotation). Indexes are named and shared: a consumer asks for the ones it
reads (:data:`OWNER_INDEX`, :data:`CONTROLLER_INDEX`, or its own); an index another consumer added
under the same name is the same function.

**Wide** (``wide=True``, the controller with its web view): every request is served from the
informer of its type in all namespaces without a label selector, the namespace and the selector
applied in the process (:func:`~karta.kube.selectors.label_matcher`: a selector it cannot parse is
left to the server). A consumer that wants every object of a type (the web view) and one that
wants only some (the gang reconciler's own group objects, one ``--namespace``) then share one list
and one watch; the :class:`Watch` of each shows it only what it asked for, its handler hears an
object that starts or stops matching as ``ADDED`` or ``DELETED``, as a selected watch would.

Informers start when the cache runs (:meth:`SharedCache.run`, a controller part) or at once when
it already does; ``start=False`` builds a cache whose informers never touch the API server (fed by
``Informer.replace``/``record``: the controller's unit tests use it as their fake cluster cache).
It is in the library, below the controller, the web view and ``kli``: all of them can use it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from karta.errors import KartaError
from karta.kube.client import KubeClient
from karta.kube.informer import Handler, IndexFunc, Informer, owner_uids, trim_object
from karta.kube.owners import controller_ref
from karta.kube.resources import ResourceType
from karta.kube.selectors import label_matcher

__all__ = ["CONTROLLER_INDEX", "OWNER_INDEX", "SharedCache", "Watch", "WatchKey", "controller_uids"]

OWNER_INDEX: Final = "owner"  # by the UIDs of every ownerReference
CONTROLLER_INDEX: Final = "controller"  # by the UID of the controller reference
_LOG = logging.getLogger("karta.kube.cache")


def controller_uids(obj: Mapping[str, Any]) -> list[str]:
    """The UID of an object's controller reference, if any (an index function)."""
    ref = controller_ref(obj)
    uid = ref.get("uid") if ref is not None else None
    return [uid] if isinstance(uid, str) and uid else []


_STANDARD_INDEXES: Final[Mapping[str, IndexFunc]] = {
    OWNER_INDEX: owner_uids,
    CONTROLLER_INDEX: controller_uids,
}


@dataclass(frozen=True)
class WatchKey:
    """What makes two informers different: one of each is kept."""

    group: str
    version: str
    plural: str
    namespace: str | None
    label_selector: str | None
    metadata_only: bool

    def __str__(self) -> str:
        where = f"/{self.namespace}" if self.namespace else ""
        what = f"{self.plural}.{self.group or 'core'}/{self.version}{where}"
        if self.label_selector:
            what += f"?{self.label_selector}"
        return what + (" (metadata)" if self.metadata_only else "")


@dataclass
class _Entry:
    informer: Informer
    refs: int = 0
    stop: threading.Event = field(default_factory=threading.Event)
    started: bool = False
    error_listeners: list[Callable[[KartaError], None]] = field(default_factory=list)


Match = Callable[[Mapping[str, Any]], bool]


def _matcher(namespace: str | None, label_selector: str | None) -> Match | None:
    """What a wide cache's :class:`Watch` keeps of its informer's objects (None: everything);
    a selector that cannot be matched here raises ValueError."""
    labels = label_matcher(label_selector) if label_selector else None
    if namespace is None:
        return labels
    if labels is None:
        return lambda obj: (obj.get("metadata") or {}).get("namespace") == namespace
    return lambda obj: (obj.get("metadata") or {}).get("namespace") == namespace and labels(obj)


def _filtered(handler: Handler, match: Match) -> Handler:
    """``handler`` hearing only the objects ``match`` keeps: one that starts matching is
    ``ADDED``, one that stops is ``DELETED`` (what a server-side selected watch sends)."""

    def on_event(kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        now = match(obj)
        if kind != "MODIFIED":
            if now:
                handler(kind, obj, old)
            return
        before = old is not None and match(old)
        if now and before:
            handler(kind, obj, old)
        elif now:
            handler("ADDED", obj, None)
        elif before:
            handler("DELETED", obj, None)

    return on_event


class Watch:
    """One consumer's reference on a shared informer: read the cache, then :meth:`release`.
    ``match`` (a wide cache): the objects of the informer this reference sees."""

    def __init__(
        self,
        cache: SharedCache,
        key: WatchKey,
        informer: Informer,
        handler: Handler | None,
        *,
        match: Match | None = None,
        on_error: Callable[[KartaError], None] | None = None,
    ) -> None:
        self.cache = cache
        self.key = key
        self.informer = informer
        self.resource = informer.rtype
        self.handler = handler
        self.match = match
        self.on_error = on_error
        self.released = False

    @property
    def synced(self) -> threading.Event:
        return self.informer.synced

    def _kept(self, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        match = self.match
        return objs if match is None else [obj for obj in objs if match(obj)]

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached object under ``namespace/name`` (``name``: cluster-scoped)."""
        found = self.informer.get(key)
        return found if found is None or self.match is None or self.match(found) else None

    def objects(self) -> list[dict[str, Any]]:
        return self._kept(self.informer.objects())

    def by_index(self, name: str, value: str) -> list[dict[str, Any]]:
        return self._kept(self.informer.by_index(name, value))

    def release(self) -> None:
        """Stop hearing of changes; the informer stops with its last reference. Idempotent."""
        self.cache._release(self)


class SharedCache:
    """Reference-counted informers, one per :class:`WatchKey` (see the module docstring)."""

    name = "shared-cache"

    def __init__(
        self,
        client: KubeClient,
        *,
        retry_s: float = 5.0,
        log: logging.Logger = _LOG,
        start: bool = True,
        wide: bool = False,
    ) -> None:
        self.client = client
        self.retry_s = retry_s
        self.log = log
        self.start = start
        self.wide = wide
        self._lock = threading.Lock()
        self._entries: dict[WatchKey, _Entry] = {}
        self._running = False
        self._closed = False

    # -- references --------------------------------------------------------------------------------
    def watch(
        self,
        rtype: ResourceType,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        metadata_only: bool = False,
        handler: Handler | None = None,
        indexes: tuple[str, ...] = (),
        extra_indexes: Mapping[str, IndexFunc] | None = None,
        on_error: Callable[[KartaError], None] | None = None,
    ) -> Watch:
        """A reference on the informer of ``rtype`` (in ``namespace`` when the type is namespaced)
        with ``handler`` added (given the cached objects first) and the named indexes kept: the
        standard ones by name (``indexes``), others with their function (``extra_indexes``).
        ``on_error`` hears the errors the watch cannot retry (403, 404)."""
        namespace = namespace if rtype.namespaced else None
        label_selector = label_selector or None
        match: Match | None = None
        if self.wide and (namespace or label_selector):
            try:
                match = _matcher(namespace, label_selector)
            except ValueError:  # not a selector we can match: the server selects
                pass
            else:
                namespace = label_selector = None
        key = WatchKey(rtype.group, rtype.version, rtype.plural, namespace, label_selector, metadata_only)
        if handler is not None and match is not None:
            handler = _filtered(handler, match)
        wanted = {name: _STANDARD_INDEXES[name] for name in indexes}
        wanted.update(extra_indexes or {})
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = self._new_entry(key, rtype)
            entry.refs += 1
            if on_error is not None:
                entry.error_listeners.append(on_error)
            start = self._running and not entry.started
            entry.started = entry.started or start
        informer = entry.informer
        for name, func in wanted.items():
            if not informer.has_index(name):
                informer.add_index(name, func)
        if handler is not None:
            informer.add_handler(handler, replay=True)
        if start:
            self._start(entry)
        return Watch(self, key, informer, handler, match=match, on_error=on_error)

    def _new_entry(self, key: WatchKey, rtype: ResourceType) -> _Entry:
        entry: _Entry
        informer = Informer(
            self.client,
            rtype,
            namespace=key.namespace,
            label_selector=key.label_selector,
            metadata_only=key.metadata_only,
            retry_s=self.retry_s,
            name=f"cache/{key}",
            transform=trim_object,
            log=self.log,
            on_error=lambda exc: self._errors(entry, exc),
        )
        entry = _Entry(informer)
        return entry

    def _errors(self, entry: _Entry, exc: KartaError) -> None:
        with self._lock:
            listeners = list(entry.error_listeners)
        for listener in listeners:
            try:
                listener(exc)
            except Exception:
                self.log.exception("cache error listener failed", extra={"informer": entry.informer.name})

    def _release(self, watch: Watch) -> None:
        with self._lock:
            if watch.released:
                return
            watch.released = True
            entry = self._entries.get(watch.key)
            if entry is None:
                return
            entry.refs -= 1
            if watch.on_error is not None:
                entry.error_listeners = [e for e in entry.error_listeners if e is not watch.on_error]
            last = entry.refs <= 0
            if last:
                del self._entries[watch.key]
        if watch.handler is not None:
            entry.informer.remove_handler(watch.handler)
        if last:
            entry.stop.set()
            entry.informer.stop()

    def keys(self) -> dict[WatchKey, int]:
        """Every informer kept, with its number of references."""
        with self._lock:
            return {key: entry.refs for key, entry in self._entries.items()}

    def informers(self) -> dict[WatchKey, Informer]:
        """Every informer kept (a test feeds a cache built with ``start=False`` through them)."""
        with self._lock:
            return {key: entry.informer for key, entry in self._entries.items()}

    # -- running -----------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Start every informer (now and as they come) until ``stop``, then stop them all."""
        with self._lock:
            self._running = self.start
            pending = [e for e in self._entries.values() if not e.started] if self.start else []
            for entry in pending:
                entry.started = True
        for entry in pending:
            self._start(entry)
        stop.wait()
        self.close()

    def close(self) -> None:
        with self._lock:
            entries, self._entries = list(self._entries.values()), {}
            self._running = False
        for entry in entries:
            entry.stop.set()
            entry.informer.stop()

    def _start(self, entry: _Entry) -> None:
        informer, stop = entry.informer, entry.stop

        def body() -> None:
            # Stopping closes the watch's socket under the reading thread, which http.client may
            # answer with any exception: expected then, retried before.
            while not stop.is_set():
                try:
                    informer.run(stop)
                except Exception:
                    if stop.is_set():
                        return
                    self.log.exception("informer failed; restarting", extra={"informer": informer.name})
                    stop.wait(self.retry_s)

        threading.Thread(target=body, name=informer.name, daemon=True).start()
