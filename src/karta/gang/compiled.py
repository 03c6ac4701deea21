"""The compiled gang structure of one Karta: what a current-format gang plan needs from the
definition alone, worked out once per definition object (DESIGN.md 1, "compile once").

:func:`compiled_gang` returns None whenever the definition needs the general code of
:mod:`karta.gang.plan` (alpha format, no gang, by-counting scale, a definition-level error such as
an unknown sub-group component, a bad topology or an ownership cycle), so that every error keeps
its message and its order. Otherwise the result holds the structure summary, each sub-group's
covered components and topology, and the scale subtrees as nested tuples, so that one pass over
them yields both the gang minimum (12.6) and the desired count (gang-backends.md 1.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from karta._identity import IdentityCache
from karta.errors import GangError
from karta.extract.factory import Component
from karta.gang._types import FactoryLike
from karta.gang.structure import StructureSummary
from karta.model.types import ComponentDefinition, Karta, PodGroup, TopologyConstraint

__all__ = ["CompiledGang", "CompiledSubGroup", "ScaleNode", "compiled_gang", "subtree_counts"]

# (component name, has a scaleDefinition, child nodes)
ScaleNode = tuple[str, bool, tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class CompiledSubGroup:
    name: str
    covered: tuple[ComponentDefinition, ...]
    topology: TopologyConstraint | None
    tree: ScaleNode


@dataclass(slots=True)
class CompiledGang:
    summary: StructureSummary
    pod_group: PodGroup
    sub_groups: tuple[CompiledSubGroup, ...]
    root_tree: ScaleNode
    # Plans without pods by their numbers: the plan is immutable, equal numbers give an equal plan.
    plans: dict[tuple[int, ...], Any] = field(default_factory=dict)


def compiled_gang(karta: Karta) -> CompiledGang | None:
    """The compiled current-format gang of ``karta``, or None when the general code must run."""
    return _compiled(karta)


def _compile(karta: Karta) -> CompiledGang | None:
    # Once per definition object (see _compiled below).
    gang = karta.gang
    if gang is None or gang.pod_group is None:
        return None
    summary = StructureSummary(karta)
    if not summary.has_scale_definition:
        return None
    pod_group = gang.pod_group
    if not _valid_topology(pod_group.topology):
        return None
    sub_groups: list[CompiledSubGroup] = []
    try:
        for sub_group in pod_group.sub_groups:
            name = sub_group.component_name
            if not name or name not in summary.components or not _valid_topology(sub_group.topology):
                return None
            covered = tuple(summary.components[c] for c in (name, *summary.descendants(name)))
            sub_groups.append(
                CompiledSubGroup(name, covered, sub_group.topology, _tree(summary, name, set()))
            )
        root_tree = _tree(summary, summary.root_name, set())
    except GangError:  # an ownership cycle: the general code reports it where it meets it
        return None
    return CompiledGang(summary, pod_group, tuple(sub_groups), root_tree)


# Keyed by identity (definitions are immutable).
_compiled: IdentityCache[Karta, CompiledGang | None] = IdentityCache(_compile, size=256)


def _valid_topology(constraint: TopologyConstraint | None) -> bool:
    return constraint is None or bool(
        constraint.topology_name
        and (constraint.required_topology_level or constraint.preferred_topology_level)
    )


def _tree(summary: StructureSummary, name: str, visiting: set[str]) -> ScaleNode:
    if name in visiting:
        raise GangError(f"ownership cycle detected involving component {name}")
    visiting.add(name)
    children = tuple(_tree(summary, child, visiting) for child in summary.children.get(name, []))
    visiting.discard(name)
    return (name, summary.components[name].scale_definition is not None, children)


def subtree_counts(factory: FactoryLike, node: ScaleNode) -> tuple[int, int]:
    """(gang minimum, desired count) of one subtree: subtree_scale and subtree_desired at once."""
    name, has_scale, children = node
    own_min = own_desired = 0
    if has_scale:
        component = factory.component(name)
        # The factory's own component avoids building an id -> Scale map.
        scales = (
            component._scale_list() if type(component) is Component else (component.scales() or {}).values()
        )
        if scales:
            for scale in scales:
                replicas, low = scale.replicas, scale.min_replicas
                if low is not None and low > 0:
                    own_min += low
                elif replicas is not None and replicas > 0:
                    own_min += replicas
                if replicas is not None and replicas > 0:
                    own_desired += replicas
                elif low is not None and low > 0:
                    own_desired += low
    if not children:
        return own_min, own_desired
    below_min = below_desired = 0
    for child in children:
        child_min, child_desired = subtree_counts(factory, child)
        below_min += child_min
        below_desired += child_desired
    return _combine(own_min, below_min), _combine(own_desired, below_desired)


def _combine(own: int, below: int) -> int:
    if below == 0:
        return own
    if own == 0:
        return below
    return own * below
