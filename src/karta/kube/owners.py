"""Controller-owner chains: Pod → Job → JobSet → ..., with a shared cache and a depth limit.

Owns :class:`OwnerChains`. A chain follows the ``ownerReferences`` entry with ``controller: true``
from an object upwards, reading each owner's metadata only (``PartialObjectMetadata``), at most
:data:`MAX_DEPTH` links (docs/spec/format.md#kli-get, #workload-tree: depth ≤ 6). Owner reads are cached per
(namespace, apiVersion, kind, name) and shared between chains; :meth:`OwnerChains.walk_many`
walks several objects with at most 8 concurrent reads.

A chain records every owner *reference* it saw, including the last one whose object could not be
read, so "is this object nested under a covered kind" (decided from the reference alone) works
even when the owner is unreadable; ``error`` then says why the walk stopped early, and
``failure`` (:class:`ReadFailure`) which read failed: the resource, the verb, the namespace
and why (forbidden, not found, ...), so that callers can say what they could not read.
"""

from __future__ import annotations

import threading
from collections.abc import Container, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from karta.errors import ApiError, ClusterError, UnknownResourceTypeError
from karta.kube.client import KubeClient

MAX_DEPTH = 6
MAX_CONCURRENT = 8


@dataclass(frozen=True)
class OwnerLink:
    """One controller owner reference (namespace: the child's, or empty for cluster-scoped)."""

    api_version: str
    kind: str
    name: str
    uid: str
    namespace: str = ""

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


@dataclass(frozen=True)
class ReadFailure:
    """A read that failed: ``verb`` (``get`` for an owner) on ``resource`` (``plural.group``, or
    ``Kind.group`` when discovery does not know it) in ``namespace`` (empty: cluster-scoped), and
    ``reason``: ``forbidden``, ``unauthorized``, ``not found``, ``not served`` or the error."""

    resource: str
    namespace: str
    verb: str
    reason: str
    message: str

    @property
    def missing(self) -> bool:
        """The object does not exist (deleted, or its kind is not served): for an owner, nothing
        owns the child through it, as opposed to an owner that exists but cannot be read."""
        return self.reason in ("not found", "not served")

    @property
    def what(self) -> str:
        """``get replicasets.apps in namespace ns``: what could not be done."""
        where = f" in namespace {self.namespace}" if self.namespace else ""
        return f"{self.verb} {self.resource}{where}"


def read_failure(exc: ClusterError, *, resource: str, namespace: str, verb: str) -> ReadFailure:
    """The :class:`ReadFailure` of ``exc``, raised doing ``verb`` on ``resource``."""
    if isinstance(exc, UnknownResourceTypeError):
        reason = "not served"
    elif isinstance(exc, ApiError) and exc.status in _REASONS:
        reason = _REASONS[exc.status]
    else:
        reason = str(exc)
    return ReadFailure(resource=resource, namespace=namespace, verb=verb, reason=reason, message=str(exc))


_REASONS = {401: "unauthorized", 403: "forbidden", 404: "not found"}


@dataclass(frozen=True)
class OwnerChain:
    """Controller owners, nearest first. ``complete``: the top has no controller owner."""

    links: tuple[OwnerLink, ...]
    complete: bool
    error: str | None = None
    failure: ReadFailure | None = None  # the owner read that stopped the walk, if one did

    def reaches(self, uid: str) -> bool:
        return any(link.uid == uid for link in self.links)

    def has_owner_of_kind(self, kinds: Iterable[tuple[str, str]]) -> bool:
        """True if a link's (group, kind) is one of ``kinds`` (decided from references alone)."""
        wanted = set(kinds)
        return any((link.group, link.kind) in wanted for link in self.links)

    @property
    def top(self) -> OwnerLink | None:
        return self.links[-1] if self.links else None


def controller_ref(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    meta = obj.get("metadata") or {}
    for ref in meta.get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


class OwnerChains:
    """Owner-chain walks against one cluster, with an owner cache shared by every walk.

    ``readable``: when given, only owners whose ``(group, kind)`` it contains are read; a reference
    to any other kind ends the chain below it, complete, without a request. A controller passes
    the kinds its definitions name (what its RBAC grants), so a pod owned by a kind no definition
    describes costs no refused read; ``kli`` reads every owner with the user's own rights."""

    def __init__(
        self,
        client: KubeClient,
        *,
        max_depth: int = MAX_DEPTH,
        readable: Container[tuple[str, str]] | None = None,
    ) -> None:
        if not 1 <= max_depth <= MAX_DEPTH:
            raise ValueError(f"max_depth must be between 1 and {MAX_DEPTH}")
        self.client = client
        self.max_depth = max_depth
        self.readable = readable
        self._cache: dict[tuple[str, str, str, str], dict[str, Any] | ReadFailure] = {}
        self._inflight: dict[tuple[str, str, str, str], threading.Event] = {}
        self._lock = threading.Lock()
        self.reads = 0  # owner objects actually fetched (the rest came from the cache)

    def walk(self, obj: Mapping[str, Any]) -> OwnerChain:
        namespace = str((obj.get("metadata") or {}).get("namespace") or "")
        links: list[OwnerLink] = []
        current: Mapping[str, Any] = obj
        while True:
            ref = controller_ref(current)
            if ref is None:
                return OwnerChain(tuple(links), complete=True)
            if len(links) >= self.max_depth:
                return OwnerChain(
                    tuple(links), complete=False, error=f"owner chain deeper than {self.max_depth}"
                )
            api_version, kind = str(ref.get("apiVersion", "")), str(ref.get("kind", ""))
            if self.readable is not None and (api_version.rpartition("/")[0], kind) not in self.readable:
                return OwnerChain(tuple(links), complete=True)
            name = str(ref.get("name", ""))
            try:
                owner_ns = self._owner_namespace(api_version, kind, namespace)
            except ClusterError as exc:
                links.append(OwnerLink(api_version, kind, name, str(ref.get("uid", "")), namespace))
                failure = read_failure(
                    exc, resource=_kind_resource(api_version, kind), namespace=namespace, verb="get"
                )
                return OwnerChain(tuple(links), complete=False, error=str(exc), failure=failure)
            link = OwnerLink(api_version, kind, name, str(ref.get("uid", "")), owner_ns)
            links.append(link)
            owner = self._read(link)
            if isinstance(owner, ReadFailure):
                return OwnerChain(
                    tuple(links),
                    complete=False,
                    error=f"cannot read {kind}/{name}: {owner.message}",
                    failure=owner,
                )
            got_uid = str((owner.get("metadata") or {}).get("uid") or "")
            if link.uid and got_uid and got_uid != link.uid:
                return OwnerChain(
                    tuple(links), complete=False, error=f"{kind}/{name} was replaced (uid {got_uid})"
                )
            current = owner

    def walk_many(self, objs: Iterable[Mapping[str, Any]]) -> list[OwnerChain]:
        """Chains for ``objs`` in order, with at most 8 owner reads at a time."""
        items = list(objs)
        if len(items) <= 1:
            return [self.walk(o) for o in items]
        with ThreadPoolExecutor(max_workers=min(MAX_CONCURRENT, len(items))) as pool:
            return list(pool.map(self.walk, items))

    def _owner_namespace(self, api_version: str, kind: str, child_namespace: str) -> str:
        rtype = self.client.discovery.for_api_version(api_version, kind)
        return child_namespace if rtype.namespaced else ""

    def _read(self, link: OwnerLink) -> dict[str, Any] | ReadFailure:
        """The owner's metadata (or why it could not be read); concurrent walks wait for one read."""
        key = (link.namespace, link.api_version, link.kind, link.name)
        with self._lock:
            if key in self._cache:
                return self._cache[key]
            pending = self._inflight.get(key)
            if pending is None:
                self._inflight[key] = threading.Event()
        if pending is not None:
            pending.wait()
            with self._lock:
                return self._cache[key]
        resource = _kind_resource(link.api_version, link.kind)
        value: dict[str, Any] | ReadFailure = ReadFailure(
            resource, link.namespace, "get", "interrupted", "the read was interrupted"
        )
        try:
            rtype = self.client.discovery.for_api_version(link.api_version, link.kind)
            resource = rtype.group_resource
            value = self.client.get(rtype, link.name, namespace=link.namespace or None, metadata_only=True)
        except ClusterError as exc:
            value = read_failure(exc, resource=resource, namespace=link.namespace, verb="get")
        finally:
            with self._lock:
                self._cache[key] = value
                self.reads += 1
                self._inflight.pop(key).set()
        return value


def _kind_resource(api_version: str, kind: str) -> str:
    """``Kind.group`` for a kind discovery cannot name the resource of."""
    group = api_version.rpartition("/")[0]
    return f"{kind}.{group}" if group else kind
