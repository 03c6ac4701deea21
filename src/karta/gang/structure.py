"""The structure summary of a Karta (docs/spec/format.md#structure-summary): the component tree precomputed
once.

It holds the parent and children maps (definition order), the definitions by name, the pod-bearing
components (root first), whether any component has a ``scaleDefinition`` (which selects the
by-definition or by-counting mode of subtree scale, 12.6), and for the alpha gang format the
candidate members of every component (12.5).
"""

from __future__ import annotations

from karta._identity import IdentityCache
from karta._records import record
from karta.errors import GangError
from karta.model.types import ComponentDefinition, Karta, PodGroupMember

__all__ = ["CandidateMember", "StructureSummary", "structure_summary"]


@record(slots=True)
class CandidateMember:
    """One alpha member that may cover a component: the member and the pod group naming it."""

    pod_group_name: str
    member: PodGroupMember


class StructureSummary:
    """Precomputed structure of one Karta (12.4)."""

    def __init__(self, karta: Karta) -> None:
        self.karta = karta
        self.root_name = karta.root.name
        self.components: dict[str, ComponentDefinition] = {}
        for definition in karta.components:
            # Names are unique in a valid Karta; keep the first so the root is never shadowed.
            self.components.setdefault(definition.name, definition)
        self.parent: dict[str, str | None] = {self.root_name: None}
        self.children: dict[str, list[str]] = {name: [] for name in self.components}
        for child in karta.children:
            owner = child.owner_ref or ""
            if child.name == self.root_name or child.name in self.parent:
                continue
            self.parent[child.name] = owner
            if owner in self.children:
                self.children[owner].append(child.name)
        self.pod_bearing: list[str] = [c.name for c in karta.components if c.is_pod_bearing]
        self.has_scale_definition = any(c.scale_definition is not None for c in karta.components)
        self._members_by_component = self._index_alpha_members(karta)
        self._candidates: dict[str, list[CandidateMember]] = {}

    @staticmethod
    def _index_alpha_members(karta: Karta) -> dict[str, list[CandidateMember]]:
        index: dict[str, list[CandidateMember]] = {}
        gang = karta.gang
        for group in gang.pod_groups if gang is not None else ():
            for member in group.members:
                index.setdefault(member.component_name, []).append(CandidateMember(group.name, member))
        return index

    def definition(self, name: str) -> ComponentDefinition:
        """The definition of component ``name``; GangError ``component <name> not found``."""
        try:
            return self.components[name]
        except KeyError:
            raise GangError(f"component {name} not found") from None

    def ancestors(self, name: str) -> list[str]:
        """``name``'s parent, grandparent, … up to the root (cycle-safe)."""
        chain: list[str] = []
        seen = {name}
        current = self.parent.get(name)
        while current is not None and current not in seen and current in self.components:
            chain.append(current)
            seen.add(current)
            current = self.parent.get(current)
        return chain

    def descendants(self, name: str) -> list[str]:
        """All components below ``name``, depth first in definition order (cycle-safe)."""
        out: list[str] = []
        seen = {name}
        stack = list(reversed(self.children.get(name, [])))
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            out.append(current)
            stack.extend(reversed(self.children.get(current, [])))
        return out

    def candidates(self, name: str) -> list[CandidateMember]:
        """Alpha members that may cover pods of ``name``: its own, then its ancestors' (12.5)."""
        cached = self._candidates.get(name)
        if cached is None:
            cached = []
            for owner in (name, *self.ancestors(name)):
                cached.extend(self._members_by_component.get(owner, ()))
            self._candidates[name] = cached
        return cached


_summaries: IdentityCache[Karta, StructureSummary] = IdentityCache(StructureSummary, size=1024)


def structure_summary(karta: Karta) -> StructureSummary:
    """The :class:`StructureSummary` of ``karta``, built once per definition object (definitions
    are immutable; the summary's own cache of candidates only fills in)."""
    return _summaries(karta)
