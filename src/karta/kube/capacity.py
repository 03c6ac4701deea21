"""The reads of ``kli top``: the Nodes and the non-terminal Pods, each either listed or refused.

A list the cluster refuses (401, 403) is not an error here: :class:`Listed` carries the
:class:`~karta.kube.owners.ReadFailure` instead of the items, so a caller can report what it could
not read and still show the rest. Any other failure (unreachable server, 5xx) is raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from karta.errors import ApiError, ClusterError
from karta.kube.client import KubeClient
from karta.kube.owners import ReadFailure, read_failure

__all__ = ["ACTIVE_PODS", "Listed", "list_nodes", "list_pods"]

# what "kubectl describe node" asks for: the pods that may hold resources
ACTIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass(frozen=True)
class Listed:
    """The items of one list, or (``items`` None) why it was refused."""

    items: list[dict[str, Any]] | None
    failure: ReadFailure | None = None


def _listed(
    client: KubeClient,
    resource: str,
    *,
    namespace: str | None,
    label_selector: str | None = None,
    field_selector: str | None = None,
    chunk_size: int = 500,
) -> Listed:
    try:
        found = client.list(
            resource,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            chunk_size=chunk_size,
        )
    except ApiError as exc:
        if exc.status not in (401, 403):
            raise
        failure = read_failure(exc, resource=resource, namespace=namespace or "", verb="list")
        return Listed(None, failure)
    except ClusterError:
        raise
    return Listed(found.items)


def list_nodes(client: KubeClient, *, label_selector: str | None = None, chunk_size: int = 500) -> Listed:
    """The Nodes (those matching ``label_selector``)."""
    return _listed(client, "nodes", namespace=None, label_selector=label_selector, chunk_size=chunk_size)


def list_pods(client: KubeClient, *, namespace: str | None = None, chunk_size: int = 500) -> Listed:
    """The Pods that are neither Succeeded nor Failed, of ``namespace`` (None: every namespace)."""
    return _listed(client, "pods", namespace=namespace, field_selector=ACTIVE_PODS, chunk_size=chunk_size)
