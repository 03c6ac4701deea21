"""The covered types: which workload types the controller watches, from the definitions and API
discovery."""

from __future__ import annotations

from collections.abc import Callable

from karta.definitions import DefinitionStore, StoredDefinition
from karta.kube.client import KubeClient
from karta.kube.workloads import CoveredType, covered_types
from karta.model.gvk import GroupKind

__all__ = ["watchable_types"]


def watchable_types(
    client: KubeClient,
    store: DefinitionStore,
    usable: Callable[[StoredDefinition], bool],
    *,
    log: Callable[[str], None],
) -> dict[GroupKind, CoveredType]:
    """The covered types (discovery read again) that can be listed and watched and whose
    definition is ``usable``, by GroupKind; the skipped kinds' warnings go to ``log``. Raises
    :class:`ClusterError` when discovery fails."""
    client.discovery.invalidate()
    covered, warnings = covered_types(client, store)
    for message in warnings:
        log(message)
    return {
        GroupKind(c.resource.group, c.resource.kind): c
        for c in covered
        if c.resource.supports("list", "watch") and usable(c.definition)
    }
