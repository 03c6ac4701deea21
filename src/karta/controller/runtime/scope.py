"""The gang-scheduling scope in the controller (docs/controller/gang-reconciler.md, "Scope"): the
namespaces' labels from the shared cache, and the library's one decision
(:func:`karta.gang.scope.gang_scope`) for a workload, for every part that needs it (the gang
reconciler, the pod webhook, the escaped-pod pass, the platform metrics).

:class:`GangScope` is a manager part on every replica (the webhook's process needs it too): a
reference on the shared cache's metadata-only informer of Namespaces, and the listeners told
a namespace whose :data:`~karta.gang.scope.SCOPE_LABEL` changed (the gang reconciler
re-enqueues that namespace's workloads, :func:`~karta.controller.runtime.mappers.namespace_keys`).
Before the informer has synced a namespace is read with one GET (the webhook must answer at once).

:func:`excluded_namespaces`: ``--exclude-namespace`` plus the controller's own namespace, only
when it runs in a cluster (``$POD_NAMESPACE``, or the in-cluster config's service-account
namespace) — never the kubeconfig's namespace of a controller run from a workstation.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from karta.errors import KartaError
from karta.gang.scope import ScopeDecision, gang_scope, namespace_selector
from karta.kube.cache import SharedCache, Watch
from karta.kube.client import KubeClient
from karta.kube.namespaces import NAMESPACE_RESOURCE
from karta.rbac import rule

__all__ = [
    "NAMESPACE_RESOURCE",
    "GangScope",
    "excluded_namespaces",
    "scope_rules",
]


def excluded_namespaces(
    excluded: Iterable[str], *, client: KubeClient, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """``excluded`` and, when the controller runs in a cluster, its own namespace."""
    env = os.environ if environ is None else environ
    own = env.get("POD_NAMESPACE") or ""
    config = getattr(client, "config", None)  # a test's fake client has none: not in a cluster
    if not own and getattr(config, "source", "") == "in-cluster":
        own = client.namespace
    return tuple(sorted({*excluded, *([own] if own else [])}))


def scope_rules() -> list[dict[str, Any]]:
    """Namespaces read: list and watch (the informer), get (one read before it synced)."""
    return [rule("", ["namespaces"], ["get", "list", "watch"])]


class GangScope:
    """The scope decision for workloads, over the namespaces' labels (a manager part)."""

    name = "gang-scope"

    def __init__(
        self,
        client: KubeClient,
        *,
        mode: str,
        excluded: tuple[str, ...] = (),
        cache: SharedCache | None = None,
    ) -> None:
        self.client = client
        self.mode = mode
        self.excluded = excluded
        self.cache = cache
        self._watch: Watch | None = None
        self._listeners: list[Callable[[Mapping[str, Any]], None]] = []
        self._lock = threading.Lock()
        self.synced = threading.Event()

    def selector(self) -> dict[str, Any]:
        """The pod webhook's namespaceSelector for this scope."""
        return namespace_selector(self.mode, excluded=self.excluded)

    def listen(self, listener: Callable[[Mapping[str, Any]], None]) -> None:
        """``listener(namespace)`` (the Namespace object) when a namespace's scope label changes
        (informer thread: quick)."""
        with self._lock:
            self._listeners.append(listener)

    def run(self, stop: threading.Event) -> None:
        if self.cache is None:
            self.synced.set()
            stop.wait()
            return
        self._watch = self.cache.watch(NAMESPACE_RESOURCE, metadata_only=True, handler=self._event)
        try:
            while not stop.wait(0.1):
                if self._watch.synced.is_set():
                    self.synced.set()
                    break
            stop.wait()
        finally:
            watch, self._watch = self._watch, None
            if watch is not None:
                watch.release()

    def _event(self, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        from karta.controller.runtime.mappers import label_changed
        from karta.gang.scope import SCOPE_LABEL

        if kind == "MODIFIED" and old is not None and not label_changed(obj, old, SCOPE_LABEL):
            return
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(obj)

    def namespace_labels(self, namespace: str) -> Mapping[str, Any] | None:
        """The labels of ``namespace`` (None: it cannot be read)."""
        watch = self._watch
        if watch is not None and watch.synced.is_set():
            found = watch.get(namespace)
            return _labels(found) if found is not None else None
        try:
            return _labels(self.client.get(NAMESPACE_RESOURCE, namespace))
        except KartaError:
            return None

    def decide(self, workload: Mapping[str, Any]) -> ScopeDecision:
        """Whether ``workload`` (a namespaced top-level object) is in the scope."""
        meta = workload.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        namespace = str(meta.get("namespace") or "")
        return gang_scope(
            mode=self.mode,
            namespace=namespace,
            namespace_labels=self.namespace_labels(namespace) if namespace else None,
            workload_labels=meta.get("labels") if isinstance(meta.get("labels"), Mapping) else None,
            excluded=self.excluded,
        )


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}
