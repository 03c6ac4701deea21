"""Which CustomResourceDefinitions the cluster has, kept as small records
(docs/spec/format.md#operator-conditions, #operator-flags).

Owns :class:`CRDIndex`: a list-then-watch of ``apiextensions.k8s.io/v1`` CRDs that keeps, per CRD,
only a :class:`CRDRecord` (name, group, kind, the versions it serves, whether it is established).
Listing every CRD can exhaust memory in clusters with large CRDs (their OpenAPI schemas run to
megabytes), and ``PartialObjectMetadata`` lacks ``spec.group``/``names``/``versions``, so full
objects are read but each one is trimmed on arrival: a page of the list at a time, a watch event at
a time; nothing but the records is retained. The list-watch, re-list differences and retries are
an :class:`~karta.kube.informer.Informer`'s.

``on_change(group, kind)`` and every callback given to :meth:`CRDIndex.listen` are called whenever
a CRD appears, disappears or changes what it serves (the operator re-queues the Kartas of that
group and kind; the covered-types tracker reads discovery again). It is the process's one watch of
CRDs: the controller runs one index for all its parts. :meth:`CRDIndex.serves` answers the
``CRDExists`` question for a root GVK: a CRD with that group and kind serves that version, or the
kind is built in (served by discovery with list and watch, and never seen as a CRD's kind).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from karta.controller.runtime.logs import logger
from karta.errors import ApiError, KartaError
from karta.kube.client import KubeClient
from karta.kube.informer import Informer
from karta.kube.resources import ResourceType
from karta.kube.watch import ListWatch, SyncEvent
from karta.rbac import rule

__all__ = ["CRD_RESOURCE", "CRDIndex", "CRDRecord", "crd_rules", "slim_crd", "trim_crd"]

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


def slim_crd(obj: dict[str, Any]) -> dict[str, Any] | None:
    """What the index keeps of a CRD object: its name and resourceVersion (for the informer's
    re-list differences) and its :class:`CRDRecord` (None: not a CRD). Accepts its own output."""
    if isinstance(obj.get("record"), CRDRecord):
        return obj
    record = trim_crd(obj)
    if record is None:
        return None
    meta = obj.get("metadata") or {}
    return {
        "metadata": {"name": record.name, "resourceVersion": _text(meta.get("resourceVersion"))},
        "record": record,
    }


@dataclass
class _TrimmingListWatch(ListWatch):
    """A :class:`ListWatch` whose lists keep only :func:`slim_crd` items, page by page."""

    def _list(self) -> SyncEvent:
        items: list[dict[str, Any]] = []
        version = ""
        for page in self.client.iter_pages(self.rtype, chunk_size=self.chunk_size):
            if page.restarted:
                items, version = [], ""
            version = version or page.resource_version
            items.extend(slim for slim in map(slim_crd, page.items) if slim is not None)
            page.items.clear()
        self.stats.lists += 1
        self.resource_version = version
        return SyncEvent(items, version)


@dataclass
class CRDIndex:
    """The cluster's CRDs as records (an :class:`~karta.kube.informer.Informer` keeping
    :func:`slim_crd` items); ``synced`` once the first list arrived, or once listing CRDs is
    refused (403, 404: nothing better will come, Kartas of CRD kinds read as not found)."""

    client: KubeClient
    on_change: Callable[[str, str], None] | None = None
    retry_s: float = 5.0
    name: str = "crd-index"
    synced: threading.Event = field(default_factory=threading.Event)
    _records: dict[str, CRDRecord] = field(default_factory=dict)
    _seen_group_kinds: set[tuple[str, str]] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _discovered_at: float = 0.0
    _listeners: list[Callable[[str, str], None]] = field(default_factory=list)
    informer: Informer = field(init=False)

    def __post_init__(self) -> None:
        self.informer = Informer(
            self.client,
            CRD_RESOURCE,
            retry_s=self.retry_s,
            name=self.name,
            synced=self.synced,
            on_error=self._refused,
            list_watch=lambda: _TrimmingListWatch(self.client, CRD_RESOURCE),
            transform=slim_crd,
            log=_LOG,
        )
        self.informer.add_handler(self._handle)

    def listen(self, callback: Callable[[str, str], None]) -> None:
        """``callback(group, kind)`` on every change, besides ``on_change``."""
        self._listeners.append(callback)

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
    def run(self, stop: threading.Event) -> None:
        self.informer.run(stop)

    def _refused(self, exc: KartaError) -> None:
        if isinstance(exc, ApiError) and exc.status in (403, 404):
            self.synced.set()

    def _handle(self, event_type: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        record: CRDRecord = obj["record"]
        before: CRDRecord | None = old["record"] if old is not None else None
        with self._lock:
            if event_type == "DELETED":
                before, after = record, None
                self._records.pop(record.name, None)
            else:
                after = record
                self._records[record.name] = record
                self._seen_group_kinds.add((record.group, record.kind))
        self._changed(before, after)

    def _changed(self, before: CRDRecord | None, after: CRDRecord | None) -> None:
        callbacks = [c for c in (self.on_change, *self._listeners) if c is not None]
        if before == after or not callbacks:
            return
        kinds = {(r.group, r.kind): r.name for r in (before, after) if r is not None}
        for (group, kind), name in kinds.items():  # once per group and kind
            for callback in callbacks:
                try:
                    callback(group, kind)
                except Exception:
                    _LOG.exception("CRD change handler failed", extra={"crd": name})


def crd_rules() -> list[dict[str, Any]]:
    """The RBAC rules of the CRD index (the operator's and the covered-types tracker's CRD watch):
    list and watch ``customresourcedefinitions``."""
    return [rule("apiextensions.k8s.io", ["customresourcedefinitions"], ["list", "watch"])]
