"""The compiled gang structure of one Karta: what a current-format gang plan needs from the
definition alone, worked out once per definition object (DESIGN.md 1, "compile once").

:func:`compiled_gang` returns None whenever the definition needs the general code of
:mod:`karta.gang.plan` (alpha format, no gang, by-counting scale, a definition-level error such as
an unknown sub-group component, a bad topology or an ownership cycle), so that every error keeps
its message and its order. Otherwise the result holds the structure summary, each sub-group's
covered components and topology, and the scale subtrees as nested tuples, so that one pass over
them yields both the gang minimum (12.6) and the desired count (docs/spec/gang-backends.md#desired). Both
walks are iterative: a definition nobody validated cannot make them reach Python's recursion limit.
A ``podGroup`` with ``split`` (extension E1) is compiled too, with its split's shape
(:func:`karta.gang.split.compile_split`, None when one of its definition-level checks fails): its
``when`` is evaluated per object, false plans the one gang from this structure.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import field
from typing import Any

from karta._identity import IdentityCache
from karta._records import record
from karta.errors import GangError
from karta.extract.factory import Component
from karta.gang._types import FactoryLike
from karta.gang.structure import StructureSummary, structure_summary
from karta.model.types import ComponentDefinition, Karta, PodGroup, TopologyConstraint

__all__ = [
    "CompiledGang",
    "CompiledSubGroup",
    "ScaleNode",
    "combine_scale",
    "compiled_gang",
    "own_counts",
    "scale_tree",
    "subtree_counts",
]

# (component name, has a scaleDefinition, child nodes)
ScaleNode = tuple[str, bool, tuple[Any, ...]]


@record(slots=True)
class CompiledSubGroup:
    name: str
    covered: tuple[ComponentDefinition, ...]
    topology: TopologyConstraint | None
    tree: ScaleNode


@record(frozen=False, slots=True)
class CompiledGang:
    summary: StructureSummary
    pod_group: PodGroup
    sub_groups: tuple[CompiledSubGroup, ...]
    root_tree: ScaleNode
    # The compiled split (karta.gang.split.SplitShape), or None without ``split``.
    split: Any = None
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
    summary = structure_summary(karta)
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
            sub_groups.append(CompiledSubGroup(name, covered, sub_group.topology, scale_tree(summary, name)))
        root_tree = scale_tree(summary, summary.root_name)
    except GangError:  # an ownership cycle: the general code reports it where it meets it
        return None
    split = None
    if pod_group.split is not None:  # extension E1, planned by karta.gang.split
        from karta.gang.split import compile_split

        split = compile_split(summary, pod_group)
        if split is None:
            return None
    return CompiledGang(summary, pod_group, tuple(sub_groups), root_tree, split)


# Keyed by identity (definitions are immutable).
_compiled: IdentityCache[Karta, CompiledGang | None] = IdentityCache(_compile, size=256)


def _valid_topology(constraint: TopologyConstraint | None) -> bool:
    return constraint is None or bool(
        constraint.topology_name
        and (constraint.required_topology_level or constraint.preferred_topology_level)
    )


def scale_tree(summary: StructureSummary, start: str, without: AbstractSet[str] = frozenset()) -> ScaleNode:
    """The scale subtree below ``start`` as nested tuples, built without recursion (depth first,
    in definition order, so a cycle is reported at the component the recursion would meet); the
    components of ``without`` (and so their subtrees) are left out."""
    built: dict[str, ScaleNode] = {}
    path: set[str] = set()
    stack: list[tuple[str, bool]] = [(start, False)]
    while stack:
        name, expanded = stack.pop()
        children = summary.children.get(name, [])
        if without:
            children = [child for child in children if child not in without]
        if expanded:
            path.discard(name)
            has_scale = summary.components[name].scale_definition is not None
            built[name] = (name, has_scale, tuple(built.pop(child) for child in children))
            continue
        if name in path:
            raise GangError(f"ownership cycle detected involving component {name}")
        path.add(name)
        stack.append((name, True))
        stack.extend((child, False) for child in reversed(children))
    return built[start]


def subtree_counts(factory: FactoryLike, node: ScaleNode, instance: str | None = None) -> tuple[int, int]:
    """(gang minimum, desired count) of one subtree: subtree_scale and subtree_desired at once,
    of the top component's ``instance`` alone when given (an id it has).

    Without recursion: each component's own counts are read on the way down (the order the
    definition lists them), and combined with its children's on the way up."""
    if not node[2]:  # a leaf (most subtrees a gang counts): its own counts
        return own_counts(factory, node, instance)
    # frames: [node, own minimum, own desired, next child, children's minimum, children's desired]
    stack: list[list[Any]] = [[node, *own_counts(factory, node, instance), 0, 0, 0]]
    while True:
        frame = stack[-1]
        children = frame[0][2]
        if frame[3] < len(children):
            child = children[frame[3]]
            frame[3] += 1
            stack.append([child, *own_counts(factory, child), 0, 0, 0])
            continue
        stack.pop()
        if children:
            counts = (combine_scale(frame[1], frame[4]), combine_scale(frame[2], frame[5]))
        else:
            counts = (frame[1], frame[2])
        if not stack:
            return counts
        stack[-1][4] += counts[0]
        stack[-1][5] += counts[1]


def own_counts(factory: FactoryLike, node: ScaleNode, instance: str | None = None) -> tuple[int, int]:
    """A component's own (minimum, desired) over its instances, or of one instance (0, 0 without a
    scale definition)."""
    name, has_scale, _ = node
    own_min = own_desired = 0
    if has_scale:
        component = factory.component(name)
        if instance is not None:
            one = (component.scales() or {}).get(instance)
            scales: Any = () if one is None else (one,)
        # The factory's own component avoids building an id -> Scale map.
        elif type(component) is Component:
            scales = component._scale_list()
        else:
            scales = (component.scales() or {}).values()
        for scale in scales or ():
            replicas, low = scale.replicas, scale.min_replicas
            if low is not None and low > 0:
                own_min += low
            elif replicas is not None and replicas > 0:
                own_min += replicas
            if replicas is not None and replicas > 0:
                own_desired += replicas
            elif low is not None and low > 0:
                own_desired += low
    return own_min, own_desired


def combine_scale(own: int, below: int) -> int:
    """A component's own scale with its children's (12.6): the one that is not 0, else the product."""
    if below == 0:
        return own
    if own == 0:
        return below
    return own * below
