"""Which CustomResourceDefinitions the cluster has, kept as small records (karta-format.md 15.1, 15.4).

Owns :class:`CRDIndex`: a list-then-watch of ``apiextensions.k8s.io/v1`` CRDs that keeps, per CRD,
only a :class:`CRDRecord` (name, group, kind, the versions it serves, whether it is established).
Listing every CRD can exhaust memory in clusters with large CRDs (their OpenAPI schemas run to
megabytes), and ``PartialObjectMetadata`` lacks ``spec.group``/``names``/``versions``, so full
objects are read but each one is trimmed on arrival: a page of the list at a time, a watch event at
a time; nothing but the records is retained.

``on_change(group, kind)`` is called whenever a CRD appears, disappears or changes what it serves
(the operator re-queues the Kartas of that group and kind). :meth:`CRDIndex.serves` answers the
``CRDExists`` question for a root GVK: a CRD with that group and kind serves that version, or the
kind is built in (served by discovery with list and watch, and never seen as a CRD's kind).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from karta.controller.logs import logger
from karta.errors import ApiError, KartaError
from karta.kube.client import KubeClient
from karta.kube.resources import ResourceType
from karta.kube.watch import ListWatch, SyncEvent

__all__ = ["CRD_RESOURCE", "CRDIndex", "CRDRecord", "trim_crd"]

CRD_RESOURCE: Final = ResourceType(
    group="apiextensions.k8s.io",
    version="v1",
    kind="CustomResourceDefinition",
    plural="customresourcedefinitions",
    singular="customresourcedefinition",
    namespaced=False,
    verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
)
# Built-in kinds are looked up in discovery; a miss fetches it again at most this often.
DISCOVERY_REFRESH_S: Final = 30.0
_LOG = logger("crds")


@dataclass(frozen=True)
class CRDRecord:
    """What the operator needs of one CRD."""

    name: str
    group: str
    kind: str
    served: frozenset[str]
    established: bool

    def serves(self, version: str) -> bool:
        return self.established and version in self.served


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def trim_crd(obj: Mapping[str, Any]) -> CRDRecord | None:
    """The record of one CRD object, or None for something that is not one (never raises)."""
    meta = obj.get("metadata")
    spec = obj.get("spec")
    if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
        return None
    names = spec.get("names")
    name, group = _text(meta.get("name")), _text(spec.get("group"))
    kind = _text(names.get("kind")) if isinstance(names, Mapping) else ""
    if not name or not group or not kind:
        return None
    versions = spec.get("versions")
    served = frozenset(
        _text(v.get("name"))
        for v in (versions if isinstance(versions, list) else [])
        if isinstance(v, Mapping) and v.get("served") is True and _text(v.get("name"))
    )
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    established = any(
        isinstance(c, Mapping) and c.get("type") == "Established" and c.get("status") == "True"
        for c in (conditions if isinstance(conditions, list) else [])
    )
    return CRDRecord(name, group, kind, served, established)


@dataclass
class _TrimmingListWatch(ListWatch):
    """A :class:`ListWatch` whose lists keep only the records, page by page."""

    def _list(self) -> SyncEvent:
        records: list[dict[str, Any]] = []
        version = ""
        for page in self.client.iter_pages(self.rtype, chunk_size=self.chunk_size):
            if page.restarted:
                records, version = [], ""
            version = version or page.resource_version
            records.extend({"record": r} for r in map(trim_crd, page.items) if r is not None)
            page.items.clear()
        self.stats.lists += 1
        self.resource_version = version
        return SyncEvent(records, version)


@dataclass
class CRDIndex:
    """The cluster's CRDs as records; ``synced`` once the first list arrived."""

    client: KubeClient
    on_change: Callable[[str, str], None] | None = None
    retry_s: float = 5.0
    name: str = "crd-index"
    synced: threading.Event = field(default_factory=threading.Event)
    _records: dict[str, CRDRecord] = field(default_factory=dict)
    _seen_group_kinds: set[tuple[str, str]] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _watch: ListWatch | None = None
    _discovered_at: float = 0.0

    # -- queries --------------------------------------------------------------------------------
    def records(self) -> list[CRDRecord]:
        with self._lock:
            return list(self._records.values())

    def crd_serves(self, group: str, version: str, kind: str) -> bool:
        with self._lock:
            return any(
                r.group == group and r.kind == kind and r.serves(version) for r in self._records.values()
            )

    def is_crd_kind(self, group: str, kind: str) -> bool:
        """True if a CRD has ever defined this group and kind (it is then never a built-in)."""
        with self._lock:
            return (group, kind) in self._seen_group_kinds

    def serves(self, group: str, version: str, kind: str) -> bool:
        """``CRDExists`` for a root GVK: a CRD serves it, or it is a built-in kind (discovery: not
        a CRD's kind, not a subresource, list and watch). Discovery errors are raised."""
        if self.crd_serves(group, version, kind):
            return True
        if self.is_crd_kind(group, kind):
            return False
        discovery = self.client.discovery
        if discovery.serves(group, version, kind):
            return True
        now = time.monotonic()
        if now - self._discovered_at >= DISCOVERY_REFRESH_S:  # an aggregated API may have come up
            self._discovered_at = now
            discovery.invalidate()
            return discovery.serves(group, version, kind)
        return False

    # -- keeping current --------------------------------------------------------------------------
    def _set(self, fresh: dict[str, CRDRecord]) -> None:
        with self._lock:
            old, self._records = self._records, fresh
            self._seen_group_kinds.update((r.group, r.kind) for r in fresh.values())
        for name in sorted(set(old) | set(fresh)):
            self._changed(old.get(name), fresh.get(name))

    def _put(self, event_type: str, record: CRDRecord) -> None:
        with self._lock:
            before = self._records.get(record.name)
            if event_type == "DELETED":
                self._records.pop(record.name, None)
            else:
                self._records[record.name] = record
                self._seen_group_kinds.add((record.group, record.kind))
        self._changed(before, None if event_type == "DELETED" else record)

    def _changed(self, before: CRDRecord | None, after: CRDRecord | None) -> None:
        if before == after or self.on_change is None:
            return
        for record in {r for r in (before, after) if r is not None}:
            try:
                self.on_change(record.group, record.kind)
            except Exception:
                _LOG.exception("CRD change handler failed", extra={"crd": record.name})

    def _events(self, watch: ListWatch) -> Iterator[tuple[str, CRDRecord] | dict[str, CRDRecord]]:
        for event in watch.events():
            if isinstance(event, SyncEvent):
                yield {item["record"].name: item["record"] for item in event.items}
            elif event.type in ("ADDED", "MODIFIED", "DELETED"):
                record = trim_crd(event.object)
                if record is not None:
                    yield event.type, record

    def run(self, stop: threading.Event) -> None:
        def stopper() -> None:
            stop.wait()
            if self._watch is not None:
                self._watch.stop()

        threading.Thread(target=stopper, name=f"{self.name}-stop", daemon=True).start()
        while not stop.is_set():
            watch = self._watch = _TrimmingListWatch(self.client, CRD_RESOURCE)
            if stop.is_set():
                break
            try:
                for item in self._events(watch):
                    if isinstance(item, dict):
                        self._set(item)
                        self.synced.set()
                    else:
                        self._put(*item)
            except KartaError as exc:
                if isinstance(exc, ApiError) and exc.status in (403, 404):
                    self.synced.set()  # nothing better will come: Kartas of CRD kinds read as not found
                _LOG.warning(
                    "cannot list or watch CRDs; retrying", extra={"error": str(exc), "retry_s": self.retry_s}
                )
                stop.wait(self.retry_s)
            finally:
                watch.stop()
