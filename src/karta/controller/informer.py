"""A cache of one resource type kept current by :class:`karta.kube.ListWatch` (an informer).

:class:`Informer` holds the objects by key (``namespace/name``, or ``name`` for cluster-scoped
types), is ``synced`` once the first list arrived, and calls its handlers with
``(event_type, obj, old)`` for every change: ``ADDED``/``MODIFIED``/``DELETED`` from the watch,
and after a re-list (a 410, a restart) the differences against the cache, so that nothing is
lost or duplicated across re-lists. Errors the watch cannot retry (403, 404: the type is gone)
are reported to ``on_error`` and retried after ``retry_s``. Handlers run on the informer's thread;
they must be quick (enqueue work, update an index).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from karta.controller.logs import logger
from karta.errors import KartaError
from karta.kube.client import KubeClient
from karta.kube.resources import ResourceType
from karta.kube.watch import ListWatch, SyncEvent

__all__ = ["Handler", "Informer", "object_key"]

Handler = Callable[[str, dict[str, Any], dict[str, Any] | None], None]
_LOG = logger("informer")


def object_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{ns}/{name}" if ns else str(name)


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
    handlers: list[Handler] = field(default_factory=list)
    synced: threading.Event = field(default_factory=threading.Event)
    _objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _watch: ListWatch | None = None

    def __post_init__(self) -> None:
        if not self.name:
            self.name = f"informer/{self.rtype.plural}.{self.rtype.group or 'core'}"

    def add_handler(self, handler: Handler) -> None:
        self.handlers.append(handler)

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
            try:
                handler(kind, obj, old)
            except Exception:
                _LOG.exception(
                    "informer handler failed", extra={"key": object_key(obj), "informer": self.name}
                )

    def _sync(self, event: SyncEvent) -> None:
        fresh = {object_key(o): o for o in event.items}
        with self._lock:
            old, self._objects = self._objects, dict(fresh)
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
            watch = self._watch = ListWatch(
                self.client,
                self.rtype,
                namespace=self.namespace,
                label_selector=self.label_selector,
                metadata_only=self.metadata_only,
            )
            if stop.is_set():
                break
            try:
                for event in watch.events():
                    if isinstance(event, SyncEvent):
                        last_error = ""
                        self._sync(event)
                        continue
                    if event.type not in ("ADDED", "MODIFIED", "DELETED"):
                        continue
                    obj = dict(event.object)
                    key = object_key(obj)
                    with self._lock:
                        before = self._objects.get(key)
                        if event.type == "DELETED":
                            self._objects.pop(key, None)
                        else:
                            self._objects[key] = obj
                    self._emit(event.type, obj, before)
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
                _LOG.log(
                    level,
                    "cannot list or watch; retrying",
                    extra={"informer": self.name, "error": str(exc), "retry_s": self.retry_s},
                )
                stop.wait(self.retry_s)
            finally:
                watch.stop()
