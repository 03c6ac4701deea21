"""A workload's references (extension E3) answered from a shared cache (the controller's, the web
view's), with an index so that a change of a referenced object re-queues every workload that
reads it.

:class:`ReferenceIndex` is what a consumer that evaluates definitions asks instead of the API: per
referenced kind it holds one reference on the shared cache (:class:`karta.kube.cache.SharedCache`;
cluster-scoped kinds once, namespaced kinds once per watched namespace, so the wide cache of the
controller with its web view shares them), taken the first time a workload reads the kind and
kept until :meth:`ReferenceIndex.close`. :meth:`~ReferenceIndex.resolve` plans a workload's
references (:func:`karta.references.plan_references`), answers each from the cache and binds them
(:func:`karta.references.bind_references`); it remembers which requests each reader made, and an
ADDED/MODIFIED/DELETED object of a referenced kind that one of them matches
(:meth:`~karta.references.ReferenceRequest.matches`, before or after the change) calls
``on_change(reader)``. A kind the cache may not read (403: the watch's ``on_error``) is reported
``forbidden`` for every reference to it, never as a missing object, while the watch keeps
failing (the informer retries; an error older than three retries is forgotten); a kind the API server does
not serve is an ``error``; a referenced object that is not there is a ``note`` (the reference is
bound null / []). Until a kind's cache has synced, :meth:`resolve` answers None: the caller
retries (a reconcile later, an admission request as for any unknown data).

**Warm-up.** Kinds are watched on first use; a consumer that must answer the first workload of a
kind at once (the pod webhook: its first pod) calls :meth:`~ReferenceIndex.warm` when a definition
is loaded, which takes the caches of every kind its references read then, so that they list
while nothing waits, and :meth:`~ReferenceIndex.wait_synced` to wait, bounded by its own
deadline, for what has not synced yet. Neither waits on a kind whose watch fails (forbidden, not
served): that kind is reported by :meth:`resolve`, as before.

No API read happens per resolution: every answer comes from the cache.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping
from itertools import islice
from typing import TYPE_CHECKING, Any

from karta.errors import ApiError, ClusterError, KartaError
from karta.references import (
    Fetched,
    ReferenceRequest,
    Resolution,
    bind_references,
    plan_references,
    referenced_kinds,
)

if TYPE_CHECKING:
    from karta.jq import Evaluator
    from karta.kube.cache import SharedCache, Watch
    from karta.kube.client import KubeClient
    from karta.model.types import Karta
    from karta.references import ReferenceLimits

__all__ = ["ReferenceIndex"]

_GVK = tuple[str, str, str]


class _Kind:
    """The cache's references on one referenced kind and what went wrong reading it."""

    def __init__(self) -> None:
        self.watches: dict[str | None, Watch] = {}
        self.namespaced = True
        self.forbidden: str | None = None
        self.error: str | None = None
        self.failed_at = 0.0  # the last error; the informer reports one at every retry while failing

    def failing(self, retry_s: float) -> bool:
        """Whether the watch still fails: an error within three retries. Older, the informer
        has listed since (RBAC fixed, the kind served again): the error is forgotten."""
        if self.forbidden is None and self.error is None:
            return False
        if time.monotonic() - self.failed_at <= 3 * retry_s:
            return True
        self.forbidden = self.error = None
        return False


class ReferenceIndex:
    """References answered from ``cache`` (see the module's docstring). ``namespaces``: the
    namespaces the part watches (``(None,)``: all); ``on_change(reader)``: a referenced object a
    reader's requests match changed (called on an informer thread: be quick)."""

    def __init__(
        self,
        client: KubeClient,
        cache: SharedCache,
        *,
        namespaces: tuple[str | None, ...] = (None,),
        on_change: Callable[[Hashable], None] = lambda _reader: None,
        limits: ReferenceLimits | None = None,
    ) -> None:
        self.client = client
        self.cache = cache
        self.namespaces = namespaces or (None,)
        self.on_change = on_change
        from karta.references import DEFAULT_LIMITS

        self.limits = limits or DEFAULT_LIMITS
        self._lock = threading.RLock()
        self._kinds: dict[_GVK, _Kind] = {}
        self._readers: dict[Hashable, tuple[ReferenceRequest, ...]] = {}
        self._by_kind: dict[_GVK, set[Hashable]] = {}

    # -- reading ---------------------------------------------------------------------------------
    def resolve(
        self, reader: Hashable, karta: Karta, obj: Mapping[str, Any], evaluator: Evaluator
    ) -> Resolution | None:
        """The bindings of ``obj``'s references, from the cache (None: a kind's cache has not
        synced yet; try again later). ``reader`` (a work-queue key) is re-queued through
        ``on_change`` when an object its requests match changes (None: an admission request,
        not remembered). A definition without references
        reads nothing. Raises :class:`~karta.errors.ReferenceLimitError` /
        :class:`~karta.errors.JqBudgetError` as the library does."""
        requests = plan_references(karta, obj, evaluator)
        if reader is not None:
            self._remember(reader, requests)
        if not requests:
            return Resolution({})
        got = [self._read(request) for request in requests]  # every kind's cache taken at once
        fetched = [g for g in got if g is not None]
        if len(fetched) < len(got):
            return None
        return bind_references(fetched, limits=self.limits)

    def warm(self, karta: Karta) -> list[_GVK]:
        """Take the cache's references on every kind ``karta``'s references read, now (see the
        module's docstring): their informers list in the background. The kinds, in order."""
        kinds = referenced_kinds(karta)
        for gvk in kinds:
            self._kind(gvk)
        return kinds

    def wait_synced(self, karta: Karta, deadline: float) -> list[str]:
        """Wait until every kind ``karta``'s references read has synced, or ``deadline``
        (:func:`time.monotonic`) passes; a kind whose watch fails is not waited for. The kinds
        still not synced (``Kind group/version``): [] when every one has (or fails)."""
        pending: list[str] = []
        for gvk in referenced_kinds(karta):
            kind = self._kind(gvk)
            if kind.failing(self.cache.retry_s):
                continue
            for watch in list(kind.watches.values()):
                if not watch.synced.wait(max(0.0, deadline - time.monotonic())):
                    group, version, name = gvk
                    pending.append(f"{name} {group}/{version}" if group else f"{name} {version}")
                    break
        return pending

    def forget(self, reader: Hashable) -> None:
        """``reader`` (a deleted workload) reads nothing any more."""
        self._remember(reader, [])

    def readers(self) -> int:
        with self._lock:
            return len(self._readers)

    def close(self) -> None:
        """Release every reference on the cache."""
        with self._lock:
            kinds, self._kinds = list(self._kinds.values()), {}
        for kind in kinds:
            for watch in kind.watches.values():
                watch.release()

    def _remember(self, reader: Hashable, requests: list[ReferenceRequest]) -> None:
        kept = tuple(r for r in requests if r.fetches)
        with self._lock:
            old = self._readers.pop(reader, ())
            for request in old:
                self._by_kind.get(_gvk(request), set()).discard(reader)
            if kept:
                self._readers[reader] = kept
                for request in kept:
                    self._by_kind.setdefault(_gvk(request), set()).add(reader)

    def _read(self, request: ReferenceRequest) -> Fetched | None:
        if not request.fetches:
            return Fetched(request)
        kind = self._kind(_gvk(request))
        if kind.failing(self.cache.retry_s):
            if kind.forbidden is not None:
                return Fetched(request, forbidden=kind.forbidden)
            if kind.error is not None:
                return Fetched(request, error=kind.error)
        namespace = request.namespace if kind.namespaced else None
        if kind.namespaced and None not in kind.watches and namespace not in kind.watches:
            return Fetched(
                request,
                error=f"namespace {namespace or '(none)'} is not watched by the controller (--namespace)",
            )
        watches = list(kind.watches.values())
        if not all(w.synced.is_set() for w in watches):
            return None
        if not request.is_list:
            key = f"{namespace}/{request.name}" if namespace else str(request.name)
            found = next((o for w in watches if (o := w.get(key)) is not None), None)
            if found is None:
                where = f" in namespace {namespace}" if namespace else ""
                return Fetched(request, note=f"{request.kind}/{request.name} not found{where}")
            return Fetched(request, (found,))
        # At most one past the limit: enough for bind_references to report a list over it (a list
        # without a selector matches every cached object of its namespace), never all of them.
        matching = (o for w in watches for o in w.objects() if request.matches(o))
        return Fetched(request, tuple(islice(matching, self.limits.list_objects + 1)))

    def _kind(self, gvk: _GVK) -> _Kind:
        """The cache's references on ``gvk``, taken the first time it is read."""
        with self._lock:
            found = self._kinds.get(gvk)
            if found is not None:
                return found
            kind = self._kinds[gvk] = _Kind()
        try:
            rtype = self.client.discovery.for_gvk(*gvk)
        except ClusterError as exc:  # not served (or discovery failed): an error, retried on resync
            kind.error, kind.failed_at = str(exc), time.monotonic()
            with self._lock:
                self._kinds.pop(gvk, None)
            return kind
        kind.namespaced = rtype.namespaced

        def handler(_event: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
            self._changed(gvk, obj, old)

        def on_error(exc: KartaError) -> None:
            first = not kind.failing(self.cache.retry_s)
            if isinstance(exc, ApiError) and exc.status == 403:
                kind.forbidden, kind.error = str(exc), None
            else:
                kind.forbidden, kind.error = None, str(exc)
            kind.failed_at = time.monotonic()
            if first:  # its readers are told once, not at every retry
                self._changed(gvk, None, None)

        for ns in self.namespaces if rtype.namespaced else (None,):
            kind.watches[ns] = self.cache.watch(rtype, namespace=ns, handler=handler, on_error=on_error)
        return kind

    def _changed(self, gvk: _GVK, obj: Mapping[str, Any] | None, old: Mapping[str, Any] | None) -> None:
        """Every reader whose requests ``obj`` (or ``old``) matches, re-queued; every reader of
        the kind when ``obj`` is None (the kind became unreadable)."""
        with self._lock:
            readers = [(r, self._readers.get(r, ())) for r in self._by_kind.get(gvk, ())]
        for reader, requests in readers:
            if obj is None or any(
                _gvk(q) == gvk and (q.matches(obj) or (old is not None and q.matches(old))) for q in requests
            ):
                self.on_change(reader)


def _gvk(request: ReferenceRequest) -> _GVK:
    return (request.group, request.version, request.kind)
