"""A cache of one resource type kept current by :class:`karta.kube.ListWatch` (an informer).

It sits in the library (the only I/O layer) so that the controller's shared cache
(:mod:`karta.kube.cache`), the web view and ``kli get -w`` can all build on one copy.

:class:`Informer` holds the objects by key (``namespace/name``, or ``name`` for cluster-scoped
types), is ``synced`` once the first list arrived, and calls its handlers with
``(event_type, obj, old)`` for every change: ``ADDED``/``MODIFIED``/``DELETED`` from the watch,
and after a re-list (a 410, a restart) the differences against the cache, so that nothing is
lost or duplicated across re-lists. Errors the watch cannot retry (403, 404: the type is gone)
are reported to ``on_error`` and retried after ``retry_s``. Handlers run on the informer's thread;
they must be quick (enqueue work, update an index). A handler added to a running informer may ask
for the cached objects first (``replay``: one ``ADDED`` each, as client-go's ``AddEventHandler``),
with no event of the watch delivered between them; :meth:`Informer.remove_handler` takes it away.

What is kept of each object is ``transform``'s; :func:`trim_object` (the shared cache's default)
drops ``managedFields`` and kubectl's last-applied annotation, often half of an object's size.

Indexes (client-go's indexers): :meth:`Informer.add_index` names a function from an object to the
values it is found under (e.g. its owners' UIDs); :meth:`Informer.by_index` returns the cached
objects under one value without scanning the cache. Indexes are kept under the cache's lock with
every change, so a lookup never sees an object the cache no longer holds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from karta.errors import ApiError, KartaError
from karta.kube.client import KubeClient
from karta.kube.resources import ResourceType
from karta.kube.watch import ListWatch, SyncEvent

__all__ = [
    "LAST_APPLIED",
    "Handler",
    "IndexFunc",
    "Informer",
    "object_key",
    "owner_uids",
    "trim_object",
    "unserved_message",
]

Handler = Callable[[str, dict[str, Any], dict[str, Any] | None], None]
IndexFunc = Callable[[Mapping[str, Any]], list[str]]
LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
_LOG = logging.getLogger("karta.kube.informer")  # the controller gives its own (``log``)


def trim_object(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without ``metadata.managedFields`` and kubectl's last-applied annotation (no
    definition reads them); ``obj`` itself is not changed, and the function accepts its own output."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    annotations = meta.get("annotations")
    heavy = annotations if isinstance(annotations, dict) and LAST_APPLIED in annotations else None
    if "managedFields" not in meta and heavy is None:
        return obj
    meta = {k: v for k, v in meta.items() if k != "managedFields"}
    if heavy is not None:
        meta["annotations"] = {k: v for k, v in heavy.items() if k != LAST_APPLIED}
    return {**obj, "metadata": meta}


def unserved_message(rtype: ResourceType) -> str:
    """What a 404 on listing ``rtype`` means (the API server's own text is "404 page not found"):
    its CRD is not installed; for the Karta CRD, how to install it."""
    resource = f"{rtype.plural}.{rtype.group}" if rtype.group else rtype.plural
    if (rtype.group, rtype.plural) == ("run.ai", "kartas"):
        return (
            f"the Karta CRD {resource} is not installed, so no Karta definitions are read from the "
            "cluster: install it with 'kli crd | kubectl apply -f -' or the Helm chart (charts/karta "
            "installs it); retrying"
        )
    return f"the API server does not serve {resource} (404: its CRD is not installed?); retrying"


def object_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{ns}/{name}" if ns else str(name)


def owner_uids(obj: Mapping[str, Any]) -> list[str]:
    """The UIDs of an object's ownerReferences (an index function)."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return [str(ref["uid"]) for ref in refs if isinstance(ref, Mapping) and ref.get("uid")]


@dataclass
class Informer:
    client: KubeClient
    rtype: ResourceType
    namespace: str | None = None
    label_selector: str | None = None
    metadata_only: bool = False
    retry_s: float = 5.0
    on_error: Callable[[KartaError], None] | None = None
    name: str = ""
    # A list-watch other than the plain one (e.g. one that trims list pages as they arrive); its
    # lists must already hold objects as ``transform`` returns them.
    list_watch: Callable[[], ListWatch] | None = None
    # What is kept of each watched object (None: the event is dropped); applied to list items too,
    # so it must accept its own output.
    transform: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
    handlers: list[Handler] = field(default_factory=list)
    synced: threading.Event = field(default_factory=threading.Event)
    log: logging.Logger = _LOG
    _objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # Held while the cache changes and the handlers hear of it, and while a new handler is given
    # the cached objects: a handler sees every change once, in order.
    _dispatch: threading.RLock = field(default_factory=threading.RLock)
    _watch: ListWatch | None = None
    _index_funcs: dict[str, IndexFunc] = field(default_factory=dict)
    _indexes: dict[str, dict[str, set[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = f"informer/{self.rtype.plural}.{self.rtype.group or 'core'}"

    def add_handler(self, handler: Handler, *, replay: bool = False) -> None:
        """Call ``handler`` for every change from now on; ``replay``: first with ``ADDED`` for each
        object already cached."""
        with self._dispatch:
            self.handlers = [*self.handlers, handler]
            if replay:
                for obj in self.objects():
                    self._call(handler, "ADDED", obj, None)

    def remove_handler(self, handler: Handler) -> None:
        with self._dispatch:
            self.handlers = [h for h in self.handlers if h is not handler]

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Keep index ``name``: every cached object under each value ``func`` returns for it."""
        with self._lock:
            self._index_funcs[name] = func
            index: dict[str, set[str]] = {}
            for key, obj in self._objects.items():
                for value in func(obj):
                    index.setdefault(value, set()).add(key)
            self._indexes[name] = index

    def has_index(self, name: str) -> bool:
        with self._lock:
            return name in self._index_funcs

    def by_index(self, name: str, value: str) -> list[dict[str, Any]]:
        """The cached objects index ``name`` holds under ``value``."""
        with self._lock:
            keys = self._indexes[name].get(value, ())
            return [self._objects[k] for k in keys]

    def _store(self, key: str, obj: dict[str, Any] | None) -> dict[str, Any] | None:
        """Put ``obj`` under ``key`` (None: remove it), keeping the indexes; the object it
        replaced. Called with the lock held."""
        before = self._objects.pop(key, None) if obj is None else self._objects.get(key)
        if obj is not None:
            self._objects[key] = obj
        for name, func in self._index_funcs.items():
            index = self._indexes[name]
            old_values = func(before) if before is not None else []
            new_values = func(obj) if obj is not None else []
            if old_values == new_values:
                continue
            for value in old_values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
            for value in new_values:
                index.setdefault(value, set()).add(key)
        return before

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self._objects.get(key)

    def objects(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._objects.values())

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._objects)

    def _emit(self, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        for handler in self.handlers:
            self._call(handler, kind, obj, old)

    def _call(self, handler: Handler, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        try:
            handler(kind, obj, old)
        except Exception:
            self.log.exception(
                "informer handler failed", extra={"key": object_key(obj), "informer": self.name}
            )

    def replace(self, items: list[dict[str, Any]]) -> None:
        """The complete state (a list or re-list): the cache becomes ``items``, the handlers see
        the differences, and the informer is synced."""
        with self._dispatch:
            self._replace(items)

    def _replace(self, items: list[dict[str, Any]]) -> None:
        fresh = {object_key(o): o for o in items}
        with self._lock:
            old, self._objects = self._objects, dict(fresh)
            for name, func in self._index_funcs.items():
                index: dict[str, set[str]] = {}
                for key, obj in fresh.items():
                    for value in func(obj):
                        index.setdefault(value, set()).add(key)
                self._indexes[name] = index
        for key, obj in fresh.items():
            before = old.get(key)
            if before is None:
                self._emit("ADDED", obj, None)
            elif (before.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get(
                "resourceVersion"
            ):
                self._emit("MODIFIED", obj, before)
        for key, obj in old.items():
            if key not in fresh:
                self._emit("DELETED", obj, None)
        self.synced.set()

    def record(self, event_type: str, obj: dict[str, Any]) -> None:
        """One watch event (``ADDED``, ``MODIFIED``, ``DELETED``): into the cache, then to the handlers."""
        with self._dispatch:
            with self._lock:
                before = self._store(object_key(obj), None if event_type == "DELETED" else obj)
            self._emit(event_type, obj, before)

    def _new_watch(self) -> ListWatch:
        if self.list_watch is not None:
            return self.list_watch()
        return ListWatch(
            self.client,
            self.rtype,
            namespace=self.namespace,
            label_selector=self.label_selector,
            metadata_only=self.metadata_only,
        )

    def _kept(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.transform is None:
            return items
        return [kept for kept in map(self.transform, items) if kept is not None]

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()

    def run(self, stop: threading.Event) -> None:
        def stopper() -> None:
            stop.wait()
            if self._watch is not None:
                self._watch.stop()

        threading.Thread(target=stopper, name=f"{self.name}-stop", daemon=True).start()
        last_error = ""
        while not stop.is_set():
            watch = self._watch = self._new_watch()
            if stop.is_set():
                break
            try:
                for event in watch.events():
                    if isinstance(event, SyncEvent):
                        last_error = ""
                        self.replace(self._kept(event.items))
                        continue
                    if event.type in ("ADDED", "MODIFIED", "DELETED"):
                        kept = self._kept([dict(event.object)])
                        if kept:
                            self.record(event.type, kept[0])
            except Exception as exc:
                if stop.is_set() or watch.stopped:
                    # Stopping closes the watch's socket under this thread; http.client answers
                    # that with whatever it was doing (ValueError, AttributeError): not a failure,
                    # the same as the watch ending (the loop ends when ``stop`` is set).
                    continue
                if not isinstance(exc, KartaError):
                    raise
                if self.on_error is not None:
                    self.on_error(exc)
                # The same error again (a CRD not installed yet) is logged once, then at debug level.
                level = logging.DEBUG if str(exc) == last_error else logging.WARNING
                last_error = str(exc)
                self.log.log(
                    level,
                    unserved_message(self.rtype)
                    if isinstance(exc, ApiError) and exc.status == 404
                    else "cannot list or watch; retrying",
                    extra={"informer": self.name, "error": str(exc), "retry_s": self.retry_s},
                )
                stop.wait(self.retry_s)
            finally:
                watch.stop()
