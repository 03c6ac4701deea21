"""Karta extension E1 (docs/format-extensions.md): the gangs of a ``podGroup`` with ``split``, one
per replica or per instance of a component, plus one gang for the pods outside its subtree.

The expected gangs come from the workload object, so a gang whose pods do not exist yet is planned
(and rendered) all the same:

- ``by: instance``: one gang per instance id of the split component S, minimum
  ``subtree_scale(S, id)`` (12.6), keys ``(id,)``;
- ``by: replica``: one gang per replica index ``0 .. desired - 1`` of each instance of S (desired:
  ``replicas``, else ``minReplicas``, docs/spec/gang-backends.md#desired), minimum 12.6 with S's own count
  taken as one replica (the sum of its children's subtree scales, 1 without children); keys ``(index,)``, or
  ``(id, index)`` when S is multi-instance;
- the rest: the pods of pod-bearing components outside S's subtree form one more gang, named
  ``podGroup.name`` as the workload's one gang would be, minimum 12.6 over the component tree with
  S's subtree left out; none when that minimum is 0 or nothing outside S bears pods.

A pod of S's subtree goes to the gang its keys name (``groupByKeyPaths``, else S's
``componentInstanceSelector.idPath`` and ``replicaSelector.keyPath``; each single and non-empty,
11.2; a replica key is a base-10 index). Keys that name no expected gang, a pod no component
claims, a pod outside S when there is no gang of the rest: diagnostics, never exceptions.
``subGroups`` of the split component or below it are sub-groups of every split gang (S's own with
that gang's minimum, one below with its ``subtree_scale``, which 12.6 counts per replica of its
parent); those outside S's subtree are sub-groups of the rest. ``when`` (object-side jq) false
or null plans the workload's one gang, exactly as without ``split``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import field
from typing import Any

from karta._records import record
from karta.errors import GangError, JqError, KartaError
from karta.extract.pods import PodQuerier
from karta.gang._types import FactoryLike
from karta.gang.compiled import ScaleNode, combine_scale, scale_tree, subtree_counts
from karta.gang.membership import infer_pod_component
from karta.gang.plan import Gang, GangPlan, SubGroupPlan, Topology
from karta.gang.scale import effective_desired, effective_min, subtree_desired, subtree_scale
from karta.gang.structure import StructureSummary
from karta.model.findings import Finding, Severity
from karta.model.types import SPLIT_BY, SPLIT_INDEXES, GangSplit, PodGroup, PodGroupMember
from karta.model.validate_gang import default_key_paths

__all__ = ["MAX_SPLIT_GANGS", "SplitShape", "compile_split", "split_enabled", "split_plan", "split_shape"]

MAX_SPLIT_GANGS = 1024
"""The most gangs a split may plan: a replica count read from a hostile object must not make the
plan (and the scheduler objects) unbounded."""

_INDEX = re.compile(r"^[0-9]+$")


@record(frozen=False, slots=True)
class _Planned:
    keys: tuple[str, ...]
    minimum: int
    desired: int
    members: list[str]


def split_enabled(factory: FactoryLike, split: GangSplit) -> bool:
    """Whether ``split.when`` (absent: always) holds on the workload object: ``true`` splits,
    ``false``, ``null`` or no result plan the one gang; anything else is a GangError."""
    if not split.when:
        return True
    query = getattr(factory, "query", None)
    if query is None:
        raise GangError("split.when needs the workload object's evaluator")
    try:
        results: list[Any] = list(query(split.when))
    except JqError as exc:
        raise GangError(f"failed to evaluate split.when '{split.when}': {exc}") from exc
    if not results or results == [None] or results == [False]:
        return False
    if results == [True]:
        return True
    shown = ", ".join(repr(r) for r in results[:3])
    raise GangError(f"split.when '{split.when}' must yield one boolean; got {shown}")


@record(slots=True)
class CompiledSubGroup:
    """A sub-group of a compiled split: its scale subtree (None for the split component's own, whose
    numbers are each gang's) and whether it is inside the split component's subtree."""

    name: str
    tree: ScaleNode | None
    inside: bool
    topology: Topology | None


@record(slots=True)
class SplitShape:
    """What a split takes from the definition alone, checked by :func:`split_shape` in the order
    :func:`split_plan` reports it. :func:`compile_split` adds the scale subtrees (``compiled``):
    built once per definition object (:mod:`karta.gang.compiled`), for a definition whose every
    definition-level check passes, so that only the workload object's numbers are left per object."""

    split: GangSplit
    target: str
    key_paths: tuple[str, ...]
    member: PodGroupMember
    inside: frozenset[str]
    outside_pods: bool  # a pod-bearing component outside the split component's subtree
    compiled: bool = False
    top: ScaleNode = ("", False, ())  # the split component's subtree
    rest: ScaleNode | None = None  # the root's subtree without the split one's (None: root inside)
    topology: Topology | None = None
    sub_groups: tuple[CompiledSubGroup, ...] = ()
    # Compiled: plans without pods by their numbers (equal numbers give an equal, immutable plan).
    plans: dict[tuple[Any, ...], GangPlan] = field(default_factory=dict)


def split_shape(summary: StructureSummary, pod_group: PodGroup) -> SplitShape:
    """The definition-level part of a split; GangError for the first problem (split_plan's order)."""
    split = pod_group.split
    assert split is not None
    target = split.component_name
    definition = summary.definition(target)
    if split.by not in SPLIT_BY:
        raise GangError(f"split.by '{split.by}' must be one of {', '.join(SPLIT_BY)}")
    key_paths = split.group_by_key_paths or default_key_paths(split, definition)
    if not key_paths:
        raise GangError(f"split of component {target} has no groupByKeyPaths and no pod selector keys")
    if split.indexes is not None and (split.indexes not in SPLIT_INDEXES or split.by != "replica"):
        raise GangError(
            f"split.indexes '{split.indexes}' must be one of {', '.join(SPLIT_INDEXES)}, with by replica"
        )
    if split.replica_size_path and pod_group.sub_groups:
        raise GangError("split.replicaSizePath cannot be combined with podGroup.subGroups")
    inside = frozenset((target, *summary.descendants(target)))
    return SplitShape(
        split=split,
        target=target,
        key_paths=tuple(key_paths),
        member=PodGroupMember(component_name=target, group_by_key_paths=tuple(key_paths)),
        inside=inside,
        outside_pods=any(c not in inside for c in summary.pod_bearing),
    )


def compile_split(summary: StructureSummary, pod_group: PodGroup) -> SplitShape | None:
    """The compiled split of a definition with scale definitions, or None when any
    definition-level check fails (the general code then reports it, in its order)."""
    try:
        shape = split_shape(summary, pod_group)
        target, inside = shape.target, shape.inside
        sub_groups: list[CompiledSubGroup] = []
        for sub_group in pod_group.sub_groups:
            name = sub_group.component_name
            if not name or name not in summary.components:
                return None
            if name not in inside and target in summary.descendants(name):
                return None
            tree = None if name == target else scale_tree(summary, name)
            sub_groups.append(
                CompiledSubGroup(name, tree, name in inside, Topology.from_constraint(sub_group.topology))
            )
        return SplitShape(
            split=shape.split,
            target=target,
            key_paths=shape.key_paths,
            member=shape.member,
            inside=inside,
            outside_pods=shape.outside_pods,
            compiled=True,
            top=scale_tree(summary, target),
            rest=None if summary.root_name in inside else scale_tree(summary, summary.root_name, inside),
            topology=Topology.from_constraint(pod_group.topology),
            sub_groups=tuple(sub_groups),
        )
    except GangError:
        return None


def split_plan(
    factory: FactoryLike,
    summary: StructureSummary,
    pod_group: PodGroup,
    queriers: Sequence[PodQuerier],
    shape: SplitShape | None = None,
) -> GangPlan | None:
    """The gangs of a split ``podGroup`` (module docstring), or None when ``split.when`` is false
    (the caller then plans the one gang). Definition-level problems raise GangError; ``shape`` is
    the definition's compiled split (:func:`compile_split`), if it has one."""
    split = pod_group.split
    assert split is not None
    if not split_enabled(factory, split):
        return None
    if shape is None:
        shape = split_shape(summary, pod_group)
    target, key_paths, inside, member = shape.target, shape.key_paths, shape.inside, shape.member
    observed = _observed(summary, queriers, member, inside) if split.indexes == "observed" else None
    expected, sizes = _expected(factory, summary, shape, observed)
    joined = [instance for instance, size in sizes.items() if size == 1]
    if shape.compiled:
        topology = shape.topology
        split_subs, rest_subs = _compiled_sub_groups(factory, shape)
        if joined:
            rest_min, rest_desired = _rest_counts(factory, summary, target, inside, joined)
        else:
            rest_min, rest_desired = (0, 0) if shape.rest is None else subtree_counts(factory, shape.rest)
    else:
        topology = Topology.from_constraint(pod_group.topology)
        split_subs, rest_subs = _sub_groups(factory, summary, pod_group, target, inside)
        rest_min, rest_desired = _rest_counts(factory, summary, target, inside, joined)
    has_rest = rest_min > 0 and (bool(joined) or shape.outside_pods)
    numbers: tuple[Any, ...] | None = None
    if shape.compiled and not queriers:
        # Without pods, the plan of a compiled split is a function of these numbers alone.
        numbers = (
            tuple((planned.keys, planned.minimum, planned.desired) for planned in expected),
            has_rest,
            rest_min,
            rest_desired,
            tuple((sub.min_member, sub.desired) for sub in (*split_subs, *rest_subs)),
        )
        known = shape.plans.get(numbers)
        if known is not None:
            return known

    by_keys = {planned.keys: planned for planned in expected}
    rest_members: list[str] = []
    diagnostics: list[Finding] = []
    for querier in queriers:
        label = f"{querier.namespace}/{querier.name}" if querier.namespace else querier.name
        try:
            component = infer_pod_component(summary, querier)
            if component not in inside:
                if has_rest:
                    rest_members.append(querier.name)
                else:
                    diagnostics.append(
                        Finding(
                            Severity.WARNING,
                            f"pod {label} (component {component}) is outside split component {target} "
                            "and the rest of the workload has no gang (minimum 0): it is in no gang",
                            f"pods/{label}",
                        )
                    )
                continue
            if sizes and _joins_rest(querier, member, joined, multi=len(key_paths) == 2):
                if has_rest:
                    rest_members.append(querier.name)
                    continue
                diagnostics.append(
                    Finding(
                        Severity.WARNING,
                        f"pod {label} (component {target}, a replica of one pod) joins the gang of the "
                        "rest, which the workload does not have (minimum 0): it is in no gang",
                        f"pods/{label}",
                    )
                )
                continue
            try:
                keys = tuple(querier.extract_group_keys(member))
            except KartaError as exc:
                if not sizes:
                    raise
                diagnostics.append(
                    Finding(
                        Severity.ERROR,
                        f"pod {label}: {exc}; each replica of component {target} "
                        f"({_sizes_text(sizes)} pods) is one gang, and this pod names none: it is in no gang",
                        f"pods/{label}",
                    )
                )
                continue
            if split.by == "replica" and _INDEX.match(keys[-1]):
                keys = (*keys[:-1], str(int(keys[-1])))
            planned = by_keys.get(keys)
            if planned is None:
                diagnostics.append(
                    Finding(
                        Severity.WARNING,
                        f"pod {label}: split keys [{' '.join(keys)}] name no expected gang of component "
                        f"{target} ({_expected_text(expected)}): it is in no gang",
                        f"pods/{label}",
                    )
                )
                continue
            planned.members.append(querier.name)
        except KartaError as exc:
            diagnostics.append(Finding(Severity.ERROR, f"pod {label}: {exc}", f"pods/{label}"))

    gangs: list[Gang] = []
    if has_rest:
        gangs.append(
            _gang(
                pod_group.name,
                summary.root_name,
                rest_min,
                rest_desired,
                subs=_with_members(rest_subs, summary, queriers, rest_members),
                topology=topology,
                members=rest_members,
                split="rest",
                keys=(),
            )
        )
    for planned in expected:
        subs = tuple(
            SubGroupPlan(
                name=sub.name,
                component=sub.component,
                min_member=planned.minimum if sub.component == target else sub.min_member,
                desired=planned.desired if sub.component == target else sub.desired,
                topology=sub.topology,
            )
            for sub in split_subs
        )
        gangs.append(
            _gang(
                pod_group.name,
                target,
                planned.minimum,
                planned.desired,
                subs=_with_members(subs, summary, queriers, planned.members),
                topology=topology,
                members=planned.members,
                split=split.by,
                keys=planned.keys,
            )
        )
    names = [g.qualified_name for g in gangs]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise GangError(f"split of component {target} gives two gangs named {', '.join(clashes)}")
    plan = GangPlan(gangs=tuple(gangs), format="podGroup", diagnostics=tuple(diagnostics))
    if numbers is not None:
        if len(shape.plans) >= 64:
            shape.plans.clear()
        shape.plans[numbers] = plan
    return plan


def _observed(
    summary: StructureSummary,
    queriers: Sequence[PodQuerier],
    member: PodGroupMember,
    inside: AbstractSet[str],
) -> dict[str, set[int]]:
    """The replica indexes the split component's pods carry, by instance id (the first key of two;
    "" for a single-instance component). Pods whose keys fail are reported by the assignment."""
    out: dict[str, set[int]] = {}
    for querier in queriers:
        try:
            if infer_pod_component(summary, querier) not in inside:
                continue
            keys = querier.extract_group_keys(member)
        except KartaError:
            continue
        if _INDEX.match(keys[-1]):
            out.setdefault(keys[0] if len(keys) == 2 else "", set()).add(int(keys[-1]))
    return out


def _indexes(count: int, carried: set[int] | None) -> list[int]:
    """``0 .. count-1`` (dense), or the ``carried`` indexes completed with the lowest free ones
    until there are ``count`` (observed; more carried than count: all of them)."""
    if carried is None:
        return list(range(count))
    chosen = set(carried)
    free = 0
    while len(chosen) < count:
        if free not in chosen:
            chosen.add(free)
        free += 1
    return sorted(chosen)


def _expected(
    factory: FactoryLike,
    summary: StructureSummary,
    shape: SplitShape,
    observed: Mapping[str, set[int]] | None,
) -> tuple[list[_Planned], dict[str, int]]:
    """The gangs the object asks for, in instance order then replica order; and, with
    ``replicaSizePath``, each instance's replica size (those of size 1 join the gang of the rest)."""
    split, target = shape.split, shape.target
    component = factory.component(target)
    ids = component.instance_ids()
    out: list[_Planned] = []
    if split.by == "instance":
        if not summary.components[target].instance_id_path:
            raise GangError(
                f"split by instance needs a multi-instance component; {target} has no instanceIdPath"
            )
        for instance in ids:
            if shape.compiled:
                minimum, desired = subtree_counts(factory, shape.top, instance)
            else:
                minimum = subtree_scale(factory, target, instance, summary=summary)
                desired = subtree_desired(factory, target, instance, summary=summary)
            out.append(_Planned((instance,), minimum, desired, []))
            _check_count(len(out), target)
        return out, {}
    if summary.components[target].scale_definition is None:
        raise GangError(
            f"split by replica needs the replica count of component {target}; it has no scaleDefinition"
        )
    if shape.compiled:
        below_min = below_desired = 0
        for tree in shape.top[2]:  # the split component's children
            minimum, desired = subtree_counts(factory, tree)
            below_min += minimum
            below_desired += desired
    else:
        children = summary.children.get(target, [])
        below_min = sum(subtree_scale(factory, c, summary=summary) for c in children)
        below_desired = sum(subtree_desired(factory, c, summary=summary) for c in children)
    per_min = below_min if below_min > 0 else 1
    per_desired = below_desired if below_desired > 0 else 1
    multi = bool(summary.components[target].instance_id_path)
    scales = component.scales() or {}
    sizes = _replica_sizes(factory, split, target, ids) if split.replica_size_path else {}
    for instance in ids:
        count = effective_desired(scales.get(instance))
        size = sizes.get(instance)
        if size == 1:
            continue  # one pod per replica: the instance joins the gang of the rest
        if size is not None:
            if count % size:
                raise GangError(
                    f"split of component {target}: instance {instance or '(single)'} asks for {count} "
                    f"pods, not a whole number of replicas of {size} (split.replicaSizePath)"
                )
            count //= size
        _check_count(len(out) + count, target)
        indexes = _indexes(count, None if observed is None else observed.get(instance, set()))
        _check_count(len(out) + len(indexes), target)
        for index in indexes:
            keys = (instance, str(index)) if multi else (str(index),)
            if size is None:
                out.append(_Planned(keys, per_min, per_desired, []))
            else:
                out.append(_Planned(keys, size, size, []))
    return out, sizes


def _replica_sizes(factory: FactoryLike, split: GangSplit, target: str, ids: Sequence[str]) -> dict[str, int]:
    """``split.replicaSizePath`` on the workload object: one positive integer per instance of the
    split component, in instance order."""
    expression = split.replica_size_path
    query = getattr(factory, "query", None)
    if query is None or expression is None:
        raise GangError("split.replicaSizePath needs the workload object's evaluator")
    try:
        results: list[Any] = list(query(expression))
    except JqError as exc:
        raise GangError(f"failed to evaluate split.replicaSizePath '{expression}': {exc}") from exc
    bad = [
        r for r in results if isinstance(r, bool) or not isinstance(r, int | float) or r != int(r) or r < 1
    ]
    if len(results) != len(ids) or bad:
        shown = ", ".join(repr(r) for r in (bad or results)[:3])
        raise GangError(
            f"split.replicaSizePath '{expression}' must yield one positive integer per instance of "
            f"component {target} ({len(ids)}); got {len(results)} results ({shown or 'none'})"
        )
    return {instance: int(size) for instance, size in zip(ids, results, strict=True)}


def _joins_rest(querier: PodQuerier, member: PodGroupMember, joined: Sequence[str], *, multi: bool) -> bool:
    """Whether a pod of the split component belongs to an instance of replica size 1 (its instance
    id, the first key, is one of ``joined``; a single-instance component: whether it joined)."""
    if not joined:
        return False
    if not multi:
        return True
    first = PodGroupMember(
        component_name=member.component_name, group_by_key_paths=member.group_by_key_paths[:1]
    )
    try:
        return querier.extract_group_keys(first)[0] in joined
    except KartaError:
        return False  # reported with the pod's full keys


def _sizes_text(sizes: Mapping[str, int]) -> str:
    shown = [f"{instance}: {size}" if instance else str(size) for instance, size in sizes.items() if size > 1]
    return ", ".join(shown[:4]) + (", …" if len(shown) > 4 else "")


def _check_count(count: int, target: str) -> None:
    if count > MAX_SPLIT_GANGS:
        raise GangError(f"split of component {target} asks for {count} gangs; at most {MAX_SPLIT_GANGS}")


def _expected_text(expected: Sequence[_Planned]) -> str:
    if not expected:
        return "it expects none"
    shown = ", ".join("[" + " ".join(p.keys) + "]" for p in expected[:4])
    more = f", … {len(expected)} in all" if len(expected) > 4 else ""
    return f"expected {shown}{more}"


def _sub_groups(
    factory: FactoryLike,
    summary: StructureSummary,
    pod_group: PodGroup,
    target: str,
    inside: AbstractSet[str],
) -> tuple[list[SubGroupPlan], list[SubGroupPlan]]:
    """The sub-groups of the split gangs (the split component's and those below it) and of the
    rest (those outside its subtree), without members; GangError for one containing the split
    component, or one without scale (13.3's error)."""
    split_subs: list[SubGroupPlan] = []
    rest_subs: list[SubGroupPlan] = []
    for sub_group in pod_group.sub_groups:
        name = sub_group.component_name
        if not name:
            raise GangError("subgroup component name cannot be empty")
        summary.definition(name)
        if name not in inside and target in summary.descendants(name):
            raise GangError(
                f"sub-group {name} contains the split component {target}: a sub-group of a split gang "
                "must be the split component, below it, or outside its subtree"
            )
        if name == target:
            minimum = desired = 0  # each gang's own, filled in per gang
        else:
            minimum = subtree_scale(factory, name, summary=summary)
            if minimum <= 0:
                raise GangError(f"component {name} must expose a replica scale definition")
            desired = subtree_desired(factory, name, summary=summary)
        plan = SubGroupPlan(
            name=name,
            component=name,
            min_member=minimum,
            desired=desired,
            topology=Topology.from_constraint(sub_group.topology),
        )
        (split_subs if name in inside else rest_subs).append(plan)
    return split_subs, rest_subs


def _compiled_sub_groups(
    factory: FactoryLike, shape: SplitShape
) -> tuple[list[SubGroupPlan], list[SubGroupPlan]]:
    """:func:`_sub_groups` of a compiled split: the definition-level checks passed when it was
    compiled, so only the numbers are read (and a minimum of 0 is still 13.3's error)."""
    split_subs: list[SubGroupPlan] = []
    rest_subs: list[SubGroupPlan] = []
    for sub in shape.sub_groups:
        minimum = desired = 0  # the split component's own: each gang's, filled in per gang
        if sub.tree is not None:
            minimum, desired = subtree_counts(factory, sub.tree)
            if minimum <= 0:
                raise GangError(f"component {sub.name} must expose a replica scale definition")
        plan = SubGroupPlan(
            name=sub.name, component=sub.name, min_member=minimum, desired=desired, topology=sub.topology
        )
        (split_subs if sub.inside else rest_subs).append(plan)
    return split_subs, rest_subs


def _with_members(
    subs: Sequence[SubGroupPlan],
    summary: StructureSummary,
    queriers: Sequence[PodQuerier],
    members: Sequence[str],
) -> tuple[SubGroupPlan, ...]:
    """``subs`` with their members among the gang's ``members`` (a pod matching the type selector of
    the sub-group's component or of a descendant, as 12.3)."""
    if not subs:
        return ()
    in_gang = set(members)
    chosen = [q for q in queriers if q.name in in_gang]
    out: list[SubGroupPlan] = []
    for sub in subs:
        covered = [summary.components[c] for c in (sub.component, *summary.descendants(sub.component))]
        found: list[str] = []
        for querier in chosen:
            try:
                if any(querier.matches_component_type(c) for c in covered):
                    found.append(querier.name)
            except KartaError:
                continue  # reported by the pod's own placement
        out.append(
            SubGroupPlan(
                name=sub.name,
                component=sub.component,
                min_member=sub.min_member,
                desired=sub.desired,
                topology=sub.topology,
                members=tuple(found),
            )
        )
    return tuple(out)


def _gang(
    name: str,
    component: str,
    minimum: int,
    desired: int,
    *,
    subs: tuple[SubGroupPlan, ...],
    topology: Topology | None,
    members: Sequence[str],
    split: str,
    keys: tuple[str, ...],
) -> Gang:
    if subs:
        return Gang(
            name=name,
            min_member=0,
            sub_groups=subs,
            min_sub_group=len(subs),
            topology=topology,
            members=tuple(members),
            component=component,
            desired=sum(s.desired for s in subs),
            split=split,
            split_keys=keys,
        )
    return Gang(
        name=name,
        min_member=minimum,
        topology=topology,
        members=tuple(members),
        component=component,
        desired=desired,
        split=split,
        split_keys=keys,
    )


def _rest_counts(
    factory: FactoryLike,
    summary: StructureSummary,
    target: str,
    inside: AbstractSet[str],
    joined: Sequence[str],
) -> tuple[int, int]:
    """(minimum, desired) of the workload without the split component's subtree: 12.6 (and 1.4)
    over the component tree with that subtree left out, without recursion; the split component's
    ``joined`` instances (replica size 1) stay in, as a component of those instances only."""
    if summary.root_name in inside and not joined:
        return 0, 0
    if not summary.has_scale_definition:  # 12.6 by counting: pod-bearing components outside S
        count = 0
        pending = [summary.root_name]
        visited: set[str] = set()
        while pending:
            name = pending.pop()
            if name in inside or name in visited:
                continue
            visited.add(name)
            if summary.components[name].is_pod_bearing:
                instances = len(factory.component(name).instance_ids())
                count += instances if summary.components[name].instance_id_path else 1
                continue
            pending.extend(summary.children.get(name, []))
        return count, count
    # frames: [component, own min, own desired, children, next child, children's min, desired]
    stack: list[list[Any]] = []

    def push(name: str) -> None:
        own_min = own_desired = 0
        if summary.components[name].scale_definition is not None:
            scales: Mapping[str, Any] = factory.component(name).scales() or {}
            if name == target:
                scales = {k: v for k, v in scales.items() if k in joined}
            own_min = sum(effective_min(s) for s in scales.values())
            own_desired = sum(effective_desired(s) for s in scales.values())
        keep = set(joined) and {target}
        children = [c for c in summary.children.get(name, []) if c not in inside or c in keep]
        stack.append([name, own_min, own_desired, children, 0, 0, 0])

    seen: set[str] = set()
    push(summary.root_name)
    while True:
        frame = stack[-1]
        if frame[4] < len(frame[3]):
            child = frame[3][frame[4]]
            frame[4] += 1
            if child in seen:
                raise GangError(f"ownership cycle detected involving component {child}")
            seen.add(child)
            push(child)
            continue
        stack.pop()
        values = (
            (frame[1], frame[2])
            if not frame[3]
            else (combine_scale(frame[1], frame[5]), combine_scale(frame[2], frame[6]))
        )
        if not stack:
            return values
        stack[-1][5] += values[0]
        stack[-1][6] += values[1]
