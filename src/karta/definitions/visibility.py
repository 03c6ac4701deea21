"""KAI Scheduler visibility of cluster definitions (R15, section 15.2).

KAI finds a Karta through its index labels: ``run.ai/karta-group`` (the root group, empty for the
core group), ``run.ai/karta-version`` and ``run.ai/karta-kind``. A cluster definition whose labels
are missing or disagree with its root GVK is invisible to KAI; this module says so, one line each.
"""

from __future__ import annotations

from karta.definitions.store import CLUSTER, StoredDefinition

__all__ = ["INDEX_LABELS", "expected_labels", "kai_visibility_warnings"]

INDEX_LABELS = ("run.ai/karta-group", "run.ai/karta-version", "run.ai/karta-kind")


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
