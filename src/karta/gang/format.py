"""Which gang format a definition uses (karta-format.md: ``podGroup``, the current one, or the alpha
``podGroups``), the one answer every consumer asks before computing or rendering a gang."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from karta.model import Karta

__all__ = ["gang_format"]


def gang_format(karta: Karta) -> Literal["podGroup", "podGroups"] | None:
    """``podGroup`` (current format, wins when both are given), ``podGroups`` (alpha) or None."""
    gang = karta.gang
    if gang is None:
        return None
    if gang.pod_group is not None:
        return "podGroup"
    return "podGroups" if gang.pod_groups else None
