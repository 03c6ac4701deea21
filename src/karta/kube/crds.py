"""Reading the CustomResourceDefinition that serves a group and kind (``kli validate --crd-from-cluster``).

:func:`served_crd` finds the kind's plural in discovery (the CRD of a custom resource is named
``<plural>.<group>``) and reads that CRD. A kind discovery does not list, or one the API server
serves itself (no CRD by that name), is :class:`CrdNotFound` with the reason; other API errors
(403 Forbidden: the identity may not read CRDs) are raised as they are.
"""

from __future__ import annotations

from typing import Any

from karta.errors import ApiError, KartaError
from karta.kube.client import KubeClient

__all__ = ["CRD_TYPE", "CrdNotFound", "served_crd"]

CRD_TYPE = "customresourcedefinitions.apiextensions.k8s.io"


class CrdNotFound(KartaError):
    """No CRD serves the group and kind; the message says why."""


def served_crd(client: KubeClient, *, group: str, kind: str) -> dict[str, Any]:
    """The CRD serving ``group``/``kind`` (at any version), as the API server returns it."""
    served = client.discovery.preferred(group, kind)
    if served is None:
        raise CrdNotFound(f"the cluster serves no kind {kind} in group {group or 'core'} (API discovery)")
    name = f"{served.plural}.{group}"
    try:
        return client.get(CRD_TYPE, name)
    except ApiError as exc:
        if exc.status == 404:
            raise CrdNotFound(
                f"the cluster serves {kind} ({served.group_resource}) but has no CRD {name}: "
                "the API server or an aggregated API serves it"
            ) from None
        raise
