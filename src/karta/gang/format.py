"""Which gang format a definition uses (docs/spec/format.md: ``podGroup``, the current one, or the alpha
``podGroups``), the one answer every consumer asks before computing or rendering a gang."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from karta.model import Karta

__all__ = ["gang_format", "gangs_follow_pods"]


def gang_format(karta: Karta) -> Literal["podGroup", "podGroups"] | None:
    """``podGroup`` (current format, wins when both are given), ``podGroups`` (alpha) or None."""
    gang = karta.gang
    if gang is None:
        return None
    if gang.pod_group is not None:
        return "podGroup"
    return "podGroups" if gang.pod_groups else None


def gangs_follow_pods(karta: Karta) -> bool:
    """Whether the set of gangs depends on the workload's pods, not only on the object: the alpha
    format (gangs found from pods), or extension E1 with ``split.indexes: observed`` (the replica
    indexes the pods carry). A consumer that plans such a definition lists the pods and re-plans
    when they change."""
    fmt = gang_format(karta)
    if fmt == "podGroups":
        return True
    if fmt != "podGroup":
        return False
    gang = karta.gang
    split = gang.pod_group.split if gang is not None and gang.pod_group is not None else None
    return split is not None and split.indexes == "observed"
