"""A namespace's labels, read live: the input of the gang-scheduling scope
(:func:`karta.gang.scope.gang_scope`) for ``kli describe`` and the web view's workload page.

Owns :data:`NAMESPACE_RESOURCE` (the core ``v1`` Namespace, also the controller's informer type)
and :func:`namespace_labels`. A refused or failing read is recorded (:class:`NamespaceRead`),
never raised: the scope explains, it is never the data itself (a user may read workloads
without being allowed to read namespaces).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from karta.errors import ClusterError
from karta.kube.client import KubeClient
from karta.kube.owners import ReadFailure, read_failure
from karta.kube.resources import ResourceType

__all__ = ["NAMESPACE_RESOURCE", "NamespaceRead", "namespace_labels"]

NAMESPACE_RESOURCE: Final = ResourceType(
    group="",
    version="v1",
    kind="Namespace",
    plural="namespaces",
    singular="namespace",
    namespaced=False,
    verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
)


@dataclass(frozen=True)
class NamespaceRead:
    """The labels of a namespace (``{}``: none), or ``None`` and the read that failed."""

    labels: dict[str, Any] | None
    failure: ReadFailure | None = None

    @property
    def unread(self) -> str | None:
        """Why the labels are not known (None: they are)."""
        return None if self.failure is None else f"cannot {self.failure.what} ({self.failure.reason})"


def namespace_labels(client: KubeClient, namespace: str) -> NamespaceRead:
    """One GET of ``namespace``: its ``metadata.labels``."""
    try:
        obj = client.get(NAMESPACE_RESOURCE, namespace)
    except ClusterError as exc:
        failure = read_failure(exc, resource=f"namespaces/{namespace}", namespace="", verb="get")
        return NamespaceRead(None, failure)
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return NamespaceRead(dict(labels) if isinstance(labels, Mapping) else {})
