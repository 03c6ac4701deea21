"""The built-in catalog as the ``kartas.run.ai`` objects karta puts on a cluster.

Owns :func:`catalog_objects` and karta's ownership label (:data:`MANAGED_BY`). Each built-in
definition becomes a Karta object named by its slug, without status, labelled
``app.kubernetes.io/managed-by: karta`` and with its index labels (docs/spec/format.md#index-labels). The
controller's ``--install-catalog`` applies exactly these objects and ``kli catalog export`` prints
them for ``kubectl apply``, so both put the same objects on a cluster.
"""

from __future__ import annotations

from typing import Any, Final

from karta.definitions.visibility import index_labels, root_gvk

__all__ = ["MANAGED_BY", "MANAGED_BY_VALUE", "catalog_objects"]

MANAGED_BY: Final = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE: Final = "karta"


def catalog_objects() -> list[dict[str, Any]]:
    """Every built-in definition as a Karta object, in the catalog's order (by root GVK)."""
    from karta.catalog import catalog_definitions
    from karta.model import karta_to_dict

    out = []
    for karta in catalog_definitions():
        body = karta_to_dict(karta)
        body.pop("status", None)
        body["metadata"] = {
            "name": karta.name,
            "labels": {MANAGED_BY: MANAGED_BY_VALUE, **index_labels(root_gvk(body))},
        }
        out.append(body)
    return out
