"""The top owner of a pod at admission time: the controller-owner chain walked upwards with a small
cache of owner objects that expires and is bounded, so a webhook that runs for months neither grows
nor serves a workload's old spec for long.

:class:`karta.kube.owners.OwnerChains` caches every read for its lifetime (right for one ``kli``
command, wrong for a server). Here an entry lives :data:`TTL_S` seconds, at most
:data:`MAX_ENTRIES` entries are kept (least recently used first out), a read error is never cached,
and a cached owner whose UID differs from the reference (the workload was re-created under the same
name) is read again. Owners are read in full: the top owner is the workload object the definition is
evaluated on, and the intermediate ones (a JobSet's Jobs, a Deployment's ReplicaSets) are small.
The walk follows the ``controller: true`` reference, at most :data:`~karta.kube.owners.MAX_DEPTH`
links, and stops at ``deadline`` (``time.monotonic()``).

An entry used after half its lifetime is read again in the background (one reader thread, one
read per entry at a time) while the cached owner is served: a workload whose pods keep coming never
makes an admission request wait for the API server, which is slowest exactly when the cluster is
busy (measured: every owner re-read on the admission path took the 2,000-workload burst's API
latency into the webhook's p99). No owner is served older than the lifetime.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Container, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from karta.errors import ClusterError
from karta.kube.client import KubeClient
from karta.kube.owners import MAX_DEPTH, OwnerLink, controller_ref
from karta.model.names import plural_guess
from karta.rbac import rule

if TYPE_CHECKING:
    from karta.definitions import DefinitionStore
    from karta.model import Karta

__all__ = [
    "HEDGE_AFTER_S",
    "MAX_ENTRIES",
    "TTL_S",
    "OwnerCache",
    "OwnerWalk",
    "ReadableOwners",
    "owner_kinds",
    "owner_rules",
    "readable_owner_kinds",
]

TTL_S: Final = 10.0
MAX_ENTRIES: Final = 2048
# A fresh read not answered within this time is sent once more, on another connection, and the
# first answer wins (a hedged request): one slow answer of a busy API server no longer sets the
# admission's tail (measured with bench/controller.py --admission; docs/controller/pod-binding.md).
HEDGE_AFTER_S: Final = 0.02
_HEDGE_THREADS: Final = 32
_POD = ("", "Pod")


@dataclass(frozen=True)
class OwnerWalk:
    """The chain above one object, nearest first; ``top`` is the last owner read (None when the
    object has no controller owner, or the first owner could not be read), ``error`` why the walk
    stopped before reaching an object without a controller owner."""

    links: tuple[OwnerLink, ...]
    top: dict[str, Any] | None
    error: str | None = None
    top_read: bool = False  # ``top`` was read from the server by this walk, not from the cache
    # the owners read, nearest first (``links[i]`` read as ``owners[i]``), and whether each was
    # read from the server: for :meth:`rooted_at`
    owners: tuple[dict[str, Any], ...] = ()
    reads: tuple[bool, ...] = ()

    def rooted_at(self, index: int) -> OwnerWalk:
        """The walk ended at ``links[index]`` (read as ``owners[index]``): the owners above it only
        contain it (the gang's owner is the topmost with gang instructions, not the topmost)."""
        return OwnerWalk(
            self.links[: index + 1],
            self.owners[index],
            None,
            top_read=self.reads[index],
            owners=self.owners[: index + 1],
            reads=self.reads[: index + 1],
        )


class OwnerCache:
    """Owner reads through ``client``, cached per (namespace, apiVersion, kind, name)."""

    def __init__(
        self,
        client: KubeClient,
        *,
        ttl: float = TTL_S,
        max_entries: int = MAX_ENTRIES,
        clock: Any = time.monotonic,
        readable: Container[tuple[str, str]] | None = None,
        refresh_after: float | None = None,
        hedge_after: float | None = HEDGE_AFTER_S,
    ) -> None:
        self.client = client
        self.hedge_after = hedge_after  # None: a fresh read is one request, however long it takes
        self.hedged = 0  # fresh reads sent a second time
        self._hedge_pool: ThreadPoolExecutor | None = None
        # Served and read again in the background after this age (default: half the lifetime).
        self.refresh_after = ttl / 2 if refresh_after is None else refresh_after
        self.readable = readable  # only owners of these (group, kind) are read (see OwnerChains)
        self.ttl = ttl
        self.max_entries = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str, str, str], tuple[float, dict[str, Any]]] = OrderedDict()
        self.reads = 0  # owners fetched from the API server (the rest came from the cache)
        self._refreshing: set[tuple[str, str, str, str]] = set()
        self._refresh: queue.SimpleQueue[tuple[OwnerLink, Any]] = queue.SimpleQueue()
        self._refresher: threading.Thread | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def forget(self, namespace: str, api_version: str, kind: str, name: str) -> None:
        with self._lock:
            self._entries.pop((namespace, api_version, kind, name), None)

    def walk(self, obj: Mapping[str, Any], *, deadline: float | None = None) -> OwnerWalk:
        metadata = obj.get("metadata")
        namespace = str(metadata.get("namespace") or "") if isinstance(metadata, Mapping) else ""
        links: list[OwnerLink] = []
        top: dict[str, Any] | None = None
        top_read = False
        owners: list[dict[str, Any]] = []
        reads: list[bool] = []

        def end(error: str | None = None) -> OwnerWalk:
            return OwnerWalk(
                tuple(links), top, error, top_read=top_read, owners=tuple(owners), reads=tuple(reads)
            )

        current: Mapping[str, Any] = obj
        while True:
            ref = controller_ref(current) if isinstance(current.get("metadata"), Mapping) else None
            if ref is None:
                return end()
            if len(links) >= MAX_DEPTH:
                return end(f"owner chain deeper than {MAX_DEPTH}")
            if deadline is not None and self._clock() > deadline:
                return end("out of time walking the owner chain")
            api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
            if self.readable is not None and (api_version.rpartition("/")[0], kind) not in self.readable:
                return end()  # a kind no definition names: the chain ends
            name, uid = str(ref.get("name") or ""), str(ref.get("uid") or "")
            if not (api_version and kind and name):
                return end("an owner reference without apiVersion, kind or name")
            try:
                rtype = self.client.discovery.for_api_version(api_version, kind)
            except ClusterError as exc:
                links.append(OwnerLink(api_version, kind, name, uid, namespace))
                return end(f"unknown owner type {kind} ({api_version}): {exc}")
            link = OwnerLink(api_version, kind, name, uid, namespace if rtype.namespaced else "")
            links.append(link)
            try:
                owner, top_read = self._read(link, rtype)
            except ClusterError as exc:
                return end(f"cannot read {kind} {name}: {exc}")
            top = owner
            owners.append(owner)
            reads.append(top_read)
            current = owner

    def _read(self, link: OwnerLink, rtype: Any) -> tuple[dict[str, Any], bool]:
        """The owner, and whether it was read from the server (not the cache)."""
        key = (link.namespace, link.api_version, link.kind, link.name)
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                stamp, owner = entry
                uid = str((owner.get("metadata") or {}).get("uid") or "")
                if now - stamp <= self.ttl and (not link.uid or uid == link.uid):
                    self._entries.move_to_end(key)
                    if now - stamp > self.refresh_after and key not in self._refreshing:
                        self._refreshing.add(key)
                        self._schedule(link, rtype)
                    return owner, False
                del self._entries[key]
        return self._fetch(link, rtype), True

    def read_fresh(self, link: OwnerLink) -> dict[str, Any]:
        """``link`` read from the server now (the cache updated with it), not from this cache: from
        the API server's watch cache (``resourceVersion=0``, no etcd read), which holds every change
        a watcher has been told of, such as the one a workload's controller acted on."""
        rtype = self.client.discovery.for_api_version(link.api_version, link.kind)
        key = (link.namespace, link.api_version, link.kind, link.name)
        with self._lock:
            entry = self._entries.get(key)
        owner = self._fetch_hedged(link, rtype)
        if entry is not None and _version(entry[1]) == _version(owner) != "":
            # Unchanged: the cached object itself, whose identity keys the evaluations already made.
            with self._lock:
                self._entries[key] = (self._clock(), entry[1])
            return entry[1]
        return owner

    def _fetch_hedged(self, link: OwnerLink, rtype: Any) -> dict[str, Any]:
        """The watch-cache read of :meth:`read_fresh`, sent again after :attr:`hedge_after`
        seconds without an answer; the first answer wins (an error only when both fail). Both are
        reads of the API server's state after the pod arrived, so either is fresh enough."""
        if self.hedge_after is None:
            return self._fetch(link, rtype, resource_version="0")
        with self._lock:
            if self._hedge_pool is None:
                self._hedge_pool = ThreadPoolExecutor(_HEDGE_THREADS, thread_name_prefix="owner-read")
            pool = self._hedge_pool
        first = pool.submit(self._fetch, link, rtype, resource_version="0")
        try:
            return first.result(timeout=self.hedge_after)
        except FutureTimeout:
            pass
        with self._lock:
            self.hedged += 1
        pending = {first, pool.submit(self._fetch, link, rtype, resource_version="0")}
        error: BaseException | None = None
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                exc = future.exception()
                if exc is None:
                    return future.result()
                error = error or exc
        assert error is not None
        raise error

    def _fetch(self, link: OwnerLink, rtype: Any, *, resource_version: str | None = None) -> dict[str, Any]:
        owner = self.client.get(
            rtype, link.name, namespace=link.namespace or None, resource_version=resource_version
        )
        got_uid = str((owner.get("metadata") or {}).get("uid") or "")
        key = (link.namespace, link.api_version, link.kind, link.name)
        if link.uid and got_uid and got_uid != link.uid:
            self.forget(*key)
            raise ClusterError(f"{link.kind} {link.name} was replaced (uid {got_uid}, not {link.uid})")
        with self._lock:
            self.reads += 1
            self._entries[key] = (self._clock(), owner)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return owner

    def _schedule(self, link: OwnerLink, rtype: Any) -> None:
        """Read ``link`` again on the reader thread (started on first use; a daemon: a read in
        flight never holds the process at exit). Called with the lock held."""
        self._refresh.put((link, rtype))
        if self._refresher is None:
            self._refresher = threading.Thread(target=self._refresh_loop, name="owner-refresh", daemon=True)
            self._refresher.start()

    def _refresh_loop(self) -> None:
        while True:
            link, rtype = self._refresh.get()
            try:
                self._fetch(link, rtype)
            except Exception:  # the entry expires as it would have; the next use reads it
                pass
            finally:
                with self._lock:
                    self._refreshing.discard((link.namespace, link.api_version, link.kind, link.name))


def _version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def owner_kinds(kartas: Iterable[Karta]) -> set[tuple[str, str]]:
    """``(group, kind)`` of what may stand between a pod and its root workload: every ancestor of
    a pod-bearing component (itself included) and of a ``Pod`` component (itself excluded), below
    the root, and every ``additionalChildKinds`` entry (what the workload creates, e.g. Knative's
    Configuration between a Service and its Revisions). Core-group kinds (Services, claims, pods)
    control no pod and are left out, as are the roots."""
    out: set[tuple[str, str]] = set()
    for karta in kartas:
        by_name = {c.name: c for c in karta.components}
        root = karta.root
        for component in karta.components:
            kind = component.kind
            is_pod = kind is not None and (kind.group, kind.kind) == _POD
            if not (is_pod or component.is_pod_bearing):
                continue
            current = by_name.get(component.owner_ref or "") if is_pod else component
            seen: set[str] = set()
            while current is not None and current is not root and current.name not in seen:
                seen.add(current.name)
                if current.kind is not None and current.kind.kind:
                    out.add((current.kind.group, current.kind.kind))
                current = by_name.get(current.owner_ref or "")
        out.update((gvk.group, gvk.kind) for gvk in karta.spec.structure_definition.additional_child_kinds)
    return {(group, kind) for group, kind in out if group}


def owner_rules(
    kartas: Iterable[Karta], *, read: Mapping[str, Container[str]], plurals: Mapping[tuple[str, str], str]
) -> list[dict[str, Any]]:
    """The RBAC rules of the owner walk for the definitions ``kartas``: ``get`` on the kinds
    between a pod and its workload (:func:`owner_kinds`, resource names from ``plurals``, else
    guessed) that ``read`` (API group → resources already read) does not cover, one rule per group."""
    owners: dict[str, set[str]] = {}
    for group, kind in sorted(owner_kinds(kartas)):
        plural = plurals.get((group, kind)) or plural_guess(kind)
        if plural not in read.get(group, ()):
            owners.setdefault(group, set()).add(plural)
    return [rule(group, sorted(names), ("get",)) for group, names in sorted(owners.items())]


def readable_owner_kinds(kartas: Iterable[Karta]) -> frozenset[tuple[str, str]]:
    """``(group, kind)`` of the owners the controller reads walking up from a pod: the definitions'
    root kinds and :func:`owner_kinds`, the kinds its rules let it ``get``. A walk ends below any
    other kind (a CronJob above a Job, an operator's own kind no definition describes) without a
    request: nothing above it can be a described workload's, and the read would be refused."""
    out = set()
    for karta in kartas:
        kind = karta.root.kind
        if kind is not None and kind.kind:
            out.add((kind.group, kind.kind))
        out |= owner_kinds([karta])
    return frozenset(out)


class ReadableOwners:
    """:func:`readable_owner_kinds` of the store's current definitions, as the ``readable`` of an
    owner walk: recomputed when the definitions change (the store is replaced)."""

    def __init__(self, store: Callable[[], DefinitionStore]) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._for: tuple[object, frozenset[tuple[str, str]]] | None = None

    def __contains__(self, item: object) -> bool:
        store = self._store()
        with self._lock:
            cached = self._for
            if cached is None or cached[0] is not store:
                cached = (store, readable_owner_kinds(d.karta for d in store.definitions))
                self._for = cached
        return item in cached[1]
