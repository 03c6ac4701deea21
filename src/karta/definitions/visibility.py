"""The index labels of Karta objects and KAI Scheduler's visibility of cluster definitions (R15,
section 15.2).

KAI finds a Karta through its index labels: ``run.ai/karta-group`` (the root group, empty for the
core group), ``run.ai/karta-version`` and ``run.ai/karta-kind``. :func:`root_gvk` reads the root
GVK of a Karta object as the API server holds it and :func:`index_labels` gives the labels it
calls for (the operator, the webhooks and ``kli catalog export`` all use these two). A cluster
definition whose labels are missing or disagree with its root GVK is invisible to KAI; this module
says so, one line each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karta.definitions.store import CLUSTER, StoredDefinition
from karta.model import GVK
from karta.model.names import label_value_error

__all__ = ["INDEX_LABELS", "expected_labels", "index_labels", "kai_visibility_warnings", "root_gvk"]

INDEX_LABELS = ("run.ai/karta-group", "run.ai/karta-version", "run.ai/karta-kind")


def root_gvk(obj: Mapping[str, Any]) -> GVK | None:
    """The root component's GVK of a Karta object as the API server holds it, or None when it
    has no kind with a version and a kind (a hostile object: any shape, never raises)."""
    node: Any = obj
    for key in ("spec", "structureDefinition", "rootComponent", "kind"):
        node = node.get(key) if isinstance(node, Mapping) else None
    if not isinstance(node, Mapping):
        return None
    parts = [node.get(k, "") for k in ("group", "version", "kind")]
    if not all(isinstance(p, str) for p in parts):
        return None
    gvk = GVK(*parts)
    return gvk if gvk.version and gvk.kind else None


def index_labels(gvk: GVK | None) -> dict[str, str]:
    """The index labels (15.2) for a root GVK; a value no label can hold is left out."""
    if gvk is None:
        return {}
    return {
        key: value for key, value in zip(INDEX_LABELS, gvk, strict=True) if label_value_error(value) is None
    }


def expected_labels(definition: StoredDefinition) -> dict[str, str] | None:
    """The index labels the definition's root GVK calls for, or None without a usable root GVK."""
    gvk = definition.gvk
    if gvk is None:
        return None
    return dict(zip(INDEX_LABELS, gvk, strict=True))


def kai_visibility_warnings(definitions: list[StoredDefinition]) -> list[str]:
    """One warning per cluster definition whose index labels are missing or wrong."""
    out: list[str] = []
    for definition in definitions:
        if definition.origin != CLUSTER:
            continue
        expected = expected_labels(definition)
        if expected is None:
            continue
        labels = definition.karta.metadata.labels
        problems = []
        for key, value in expected.items():
            if key not in labels:
                problems.append(f"label {key} is missing")
            elif labels[key] != value:
                problems.append(f'label {key} is "{labels[key]}", expected "{value}"')
        if problems:
            out.append(
                f"cluster Karta {definition.name} is not visible to KAI Scheduler: {'; '.join(problems)}"
            )
    return out
