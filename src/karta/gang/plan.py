"""The gang plan (docs/spec/gang-backends.md#gang-plan): the backend-independent gangs of one workload object
and its pods, which every scheduler renderer consumes.

Current format (``podGroup``): one gang per workload, one sub-group per ``subGroups[]`` entry with
``minMember = subtree_scale(component)``; pods are members of the gang, and of every sub-group whose
component (or a descendant of it) their type selector matches. Alpha format (``podGroups``): gangs
are discovered from pods, keyed by (alpha group name, group keys), each with
``minMember = subtree_scale(effective component, pod instance)``. When both formats are present the
current one wins. Per-pod problems of the alpha format are reported as diagnostics, never raised.
A ``podGroup`` with ``split`` (extension E1) is planned by :mod:`karta.gang.split`: one gang per
replica or instance of a component.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, cast

from karta._records import record
from karta.errors import GangError, KartaError, PodQueryError
from karta.extract.pods import PodQuerier, pod_functions
from karta.gang._types import FactoryLike
from karta.gang.compiled import CompiledGang, own_counts, subtree_counts
from karta.gang.compiled import _compiled as _compiled_gang  # compiled_gang, one call less
from karta.gang.membership import effective_member, infer_pod_component, infer_pod_instance
from karta.gang.scale import subtree_desired, subtree_scale
from karta.gang.structure import StructureSummary, structure_summary
from karta.jq import Evaluator
from karta.model.findings import Finding, FindingDict, Severity
from karta.model.types import AlphaPodGroup, PodGroup, TopologyConstraint

__all__ = [
    "Gang",
    "GangDict",
    "GangPlan",
    "GangPlanDict",
    "SubGroupDict",
    "SubGroupPlan",
    "Topology",
    "TopologyDict",
    "compute_gang_plan",
    "flat_min",
    "general_gang_plan",
]


if TYPE_CHECKING:  # the JSON shapes, for type checkers; at run time plain dicts (no typing
    # ForwardRef compile per annotation on every start-up)
    from typing import NotRequired, TypedDict

    class TopologyDict(TypedDict):
        topologyName: str
        requiredTopologyLevel: NotRequired[str]
        preferredTopologyLevel: NotRequired[str]

    class SubGroupDict(TypedDict):
        name: str
        component: str
        minMember: int
        topology: NotRequired[TopologyDict]

    class GangDict(TypedDict):
        """One gang in JSON output (``kli inspect``'s ``gang.gangs[]``)."""

        name: str
        minMember: int
        minSubGroup: NotRequired[int]
        subGroups: NotRequired[list[SubGroupDict]]
        topology: NotRequired[TopologyDict]
        group: NotRequired[str]
        keys: NotRequired[list[str]]
        split: NotRequired[str]
        members: list[str]

    class GangPlanDict(TypedDict):
        gangs: list[GangDict]
        diagnostics: NotRequired[list[FindingDict]]
else:
    TopologyDict = dict
    SubGroupDict = dict
    GangDict = dict
    GangPlanDict = dict


@record(slots=True)
class Topology:
    """A topology constraint; empty strings mean unset."""

    topology_name: str = ""
    required_topology_level: str = ""
    preferred_topology_level: str = ""

    @classmethod
    def from_constraint(cls, constraint: TopologyConstraint | None) -> Topology | None:
        """The plan's topology for a Karta constraint, checked with KAI's rules (13.3)."""
        if constraint is None:
            return None
        if not constraint.topology_name:
            raise GangError("topology constraint must include topology name")
        if not constraint.required_topology_level and not constraint.preferred_topology_level:
            raise GangError("topology constraint must include preferred or required topology level")
        return cls(
            topology_name=constraint.topology_name,
            required_topology_level=constraint.required_topology_level,
            preferred_topology_level=constraint.preferred_topology_level,
        )

    def to_dict(self) -> TopologyDict:
        """camelCase keys; unset levels omitted."""
        out: TopologyDict = {"topologyName": self.topology_name}
        if self.required_topology_level:
            out["requiredTopologyLevel"] = self.required_topology_level
        if self.preferred_topology_level:
            out["preferredTopologyLevel"] = self.preferred_topology_level
        return out


@record(slots=True)
class SubGroupPlan:
    """One sub-group of a current-format gang; ``name`` is the component name."""

    name: str
    component: str
    min_member: int
    desired: int
    topology: Topology | None = None
    members: tuple[str, ...] = ()

    def to_dict(self) -> SubGroupDict:
        """``{name, component, minMember, topology?}``: the CLI contract; ``desired`` and
        ``members`` stay on the dataclass."""
        out: SubGroupDict = {"name": self.name, "component": self.component, "minMember": self.min_member}
        if self.topology is not None:
            out["topology"] = self.topology.to_dict()
        return out


@record(slots=True)
class Gang:
    """One gang.

    ``name`` is the backend-independent name: ``podGroup.name`` (current format) or the alpha group
    name, whose group keys are in ``alpha_keys`` (None for the current format). ``component`` is
    the component whose subtree the gang covers (the root, or the alpha effective component);
    ``desired`` is the matching subtree_desired.

    Extension E1 (``podGroup.split``, :mod:`karta.gang.split`): ``split`` is ``replica`` or
    ``instance`` for the gang of one replica or instance of the split component ``component``,
    whose keys (the instance id and/or the replica index) are ``split_keys``; ``rest`` for the
    gang of the pods outside its subtree (``split_keys`` empty); "" otherwise.
    """

    name: str
    min_member: int
    sub_groups: tuple[SubGroupPlan, ...] = ()
    min_sub_group: int | None = None
    topology: Topology | None = None
    members: tuple[str, ...] = ()
    alpha_keys: tuple[str, ...] | None = None
    component: str = ""
    desired: int = 0
    split: str = ""
    split_keys: tuple[str, ...] = ()

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys that tell this gang from the others of its template: the alpha group keys, or
        the split keys (extension E1); empty for a workload's one gang."""
        return self.alpha_keys or self.split_keys

    @property
    def qualified_name(self) -> str:
        """Unique within a plan: the name, plus ``-<key1>-<key2>…`` for alpha gangs with keys and
        split gangs (the naming of docs/spec/gang-backends.md#naming without the workload-name prefix)."""
        return "-".join((self.name, *self.keys))

    def to_dict(self) -> GangDict:
        """``{name, minMember, minSubGroup?, subGroups?, topology?, group?, keys?, members}``;
        ``name`` is :attr:`qualified_name`; ``group`` (the alpha group name) and ``keys`` (its
        group keys) are present only for alpha-format gangs and split gangs (extension E1), which
        also have ``split`` (``replica``, ``instance`` or ``rest``)."""
        out: dict[str, Any] = {"name": self.qualified_name, "minMember": self.min_member}
        if self.min_sub_group is not None:
            out["minSubGroup"] = self.min_sub_group
        if self.sub_groups:
            out["subGroups"] = [sub.to_dict() for sub in self.sub_groups]
        if self.topology is not None:
            out["topology"] = self.topology.to_dict()
        if self.alpha_keys is not None:
            out["group"] = self.name
            out["keys"] = list(self.alpha_keys)
        elif self.split:
            out["group"] = self.name
            out["keys"] = list(self.split_keys)
            out["split"] = self.split
        out["members"] = list(self.members)
        return cast("GangDict", out)  # members last, as the contract prints them


@record(slots=True)
class GangPlan:
    """All gangs of one workload; ``format`` is ``podGroup``, ``podGroups`` or None (no gangs)."""

    gangs: tuple[Gang, ...] = ()
    format: str | None = None
    diagnostics: tuple[Finding, ...] = field(default=())

    def to_dict(self) -> GangPlanDict:
        """``{gangs: [...], diagnostics?: [...]}``."""
        out: GangPlanDict = {"gangs": [gang.to_dict() for gang in self.gangs]}
        if self.diagnostics:
            out["diagnostics"] = [d.to_dict() for d in self.diagnostics]
        return out


_NO_GANGS = GangPlan()  # the plan of a definition without gang instructions (immutable: shared)


def flat_min(gang: Gang) -> int:
    """Minimum pods of a gang for backends without sub-groups (docs/spec/gang-backends.md#gang-plan)."""
    if gang.sub_groups:
        return sum(sub.min_member for sub in gang.sub_groups)
    return gang.min_member


def compute_gang_plan(
    factory: FactoryLike,
    pods: Sequence[Mapping[str, Any]] = (),
    *,
    evaluator: Evaluator | None = None,
) -> GangPlan:
    """The gang plan of the factory's workload object and its pods (docs/spec/gang-backends.md#gang-plan).

    ``pods`` are the workload's pods (the caller filters by owner; the pods of external
    components, extension E2, are left out here). Definition-level problems (a sub-group without
    scale, an unknown component, a bad topology) raise GangError.
    """
    pods = workload_own_pods(factory, pods)
    compiled = _compiled_gang(factory.karta)
    if compiled is None:
        return general_gang_plan(factory, pods, evaluator=evaluator)
    if not pods and compiled.split is None:  # the common case (bench/run.py's (a)): no detour
        return _current_format_without_pods(factory, compiled)
    queriers: list[PodQuerier] = []
    if pods:
        evaluator = evaluator if evaluator is not None else _factory_evaluator(factory)
        functions = pod_functions(factory.karta, evaluator)
        queriers = [PodQuerier(pod, evaluator=evaluator, functions=functions) for pod in pods]
    if compiled.split is not None:  # extension E1
        from karta.gang.split import split_plan

        plan = split_plan(factory, compiled.summary, compiled.pod_group, queriers, compiled.split)
        if plan is not None:
            return plan
    if not pods:
        return _current_format_without_pods(factory, compiled)
    return _current_format(factory, compiled.summary, compiled.pod_group, queriers)


def workload_own_pods(factory: FactoryLike, pods: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """``pods`` less those of the definition's external components (extension E2: the pods of an
    operator's Helm releases, selected by labels, are never gang members). Only a
    :class:`~karta.extract.ComponentFactory` can evaluate their label maps; a definition without
    external components keeps every pod."""
    if not pods:  # before the imports: this runs on every plan (a gang plan is a few microseconds)
        return pods
    from karta.extract.factory import ComponentFactory
    from karta.model.validate_external import external_components

    if not external_components(factory.karta) or not isinstance(factory, ComponentFactory):
        return pods
    from karta.extract.external import external_selectors, split_external

    own, _ = split_external(external_selectors(factory), pods)
    return own


def general_gang_plan(
    factory: FactoryLike,
    pods: Sequence[Mapping[str, Any]] = (),
    *,
    evaluator: Evaluator | None = None,
) -> GangPlan:
    """:func:`compute_gang_plan` by the general code alone, whether or not the definition has a
    compiled gang (which gives the same plan, faster): the reference the equivalence tests hold
    the compiled one to."""
    gang = factory.karta.gang
    if gang is None:
        return _NO_GANGS
    pods = workload_own_pods(factory, pods)
    evaluator = evaluator if evaluator is not None else _factory_evaluator(factory)
    functions = pod_functions(factory.karta, evaluator) if pods else None
    queriers = [PodQuerier(pod, evaluator=evaluator, functions=functions) for pod in pods]
    summary = structure_summary(factory.karta)
    if gang.pod_group is not None:
        if gang.pod_group.split is not None:
            from karta.gang.split import split_plan

            plan = split_plan(factory, summary, gang.pod_group, queriers)
            if plan is not None:
                return plan
        return _current_format(factory, summary, gang.pod_group, queriers)
    if gang.pod_groups:
        return _alpha_format(factory, summary, gang.pod_groups, queriers)
    return GangPlan()


def _current_format_without_pods(factory: FactoryLike, compiled: CompiledGang) -> GangPlan:
    """The current format for a workload without pods, from the compiled structure."""
    if compiled.sub_groups:
        numbers: list[int] = []
        for sub in compiled.sub_groups:
            tree = sub.tree
            # A leaf (most sub-groups): its own counts, without the walk's call.
            minimum, desired = subtree_counts(factory, tree) if tree[2] else own_counts(factory, tree)
            if minimum <= 0:
                raise GangError(f"component {sub.name} must expose a replica scale definition")
            numbers += (minimum, desired)
        key = tuple(numbers)
    else:
        key = subtree_counts(factory, compiled.root_tree)
    plan: GangPlan | None = compiled.plans.get(key)
    if plan is None:
        plan = _current_format_plan(compiled, list(key))
        if len(compiled.plans) >= 64:
            compiled.plans.clear()
        compiled.plans[key] = plan
    return plan


def _current_format_plan(compiled: CompiledGang, numbers: list[int]) -> GangPlan:
    pod_group = compiled.pod_group
    sub_groups = tuple(
        SubGroupPlan(
            name=sub.name,
            component=sub.name,
            min_member=numbers[2 * i],
            desired=numbers[2 * i + 1],
            topology=Topology.from_constraint(sub.topology),
        )
        for i, sub in enumerate(compiled.sub_groups)
    )
    if sub_groups:
        min_member, min_sub_group, desired = 0, len(sub_groups), sum(sub.desired for sub in sub_groups)
    else:
        min_member, min_sub_group, desired = numbers[0], None, numbers[1]
    gang = Gang(
        name=pod_group.name,
        min_member=min_member,
        sub_groups=sub_groups,
        min_sub_group=min_sub_group,
        topology=Topology.from_constraint(pod_group.topology),
        component=compiled.summary.root_name,
        desired=desired,
    )
    return GangPlan(gangs=(gang,), format="podGroup")


def _factory_evaluator(factory: FactoryLike) -> Evaluator:
    candidate = getattr(factory, "evaluator", None)
    return candidate if isinstance(candidate, Evaluator) else Evaluator()


def _pod_label(querier: PodQuerier) -> str:
    return f"{querier.namespace}/{querier.name}" if querier.namespace else querier.name


def _current_format(
    factory: FactoryLike, summary: StructureSummary, pod_group: PodGroup, queriers: list[PodQuerier]
) -> GangPlan:
    diagnostics: list[Finding] = []
    sub_groups: list[SubGroupPlan] = []
    for index, sub_group in enumerate(pod_group.sub_groups):
        name = sub_group.component_name
        if not name:
            raise GangError("subgroup component name cannot be empty")
        summary.definition(name)
        minimum = subtree_scale(factory, name, summary=summary)
        if minimum <= 0:
            raise GangError(f"component {name} must expose a replica scale definition")
        covered = [summary.components[c] for c in (name, *summary.descendants(name))]
        members: list[str] = []
        for querier in queriers:
            try:
                if any(querier.matches_component_type(c) for c in covered):
                    members.append(querier.name)
            except PodQueryError as exc:
                location = f"spec.optimizationInstructions.gangScheduling.podGroup.subGroups[{index}]"
                diagnostics.append(Finding(Severity.ERROR, f"pod {_pod_label(querier)}: {exc}", location))
        sub_groups.append(
            SubGroupPlan(
                name=name,
                component=name,
                min_member=minimum,
                desired=subtree_desired(factory, name, summary=summary),
                topology=Topology.from_constraint(sub_group.topology),
                members=tuple(members),
            )
        )
    root = summary.root_name
    if sub_groups:
        min_member, min_sub_group = 0, len(sub_groups)
        desired = sum(sub.desired for sub in sub_groups)
    else:
        min_member, min_sub_group = subtree_scale(factory, root, summary=summary), None
        desired = subtree_desired(factory, root, summary=summary)
    gang = Gang(
        name=pod_group.name,
        min_member=min_member,
        sub_groups=tuple(sub_groups),
        min_sub_group=min_sub_group,
        topology=Topology.from_constraint(pod_group.topology),
        members=tuple(q.name for q in queriers),
        component=root,
        desired=desired,
    )
    return GangPlan(gangs=(gang,), format="podGroup", diagnostics=tuple(diagnostics))


@record(frozen=False, slots=True)
class _AlphaGang:
    order: tuple[int, tuple[str, ...]]
    name: str
    keys: tuple[str, ...]
    component: str
    min_member: int
    desired: int
    members: list[str]


def _alpha_format(
    factory: FactoryLike,
    summary: StructureSummary,
    pod_groups: Sequence[AlphaPodGroup],
    queriers: list[PodQuerier],
) -> GangPlan:
    group_index = {group.name: i for i, group in reversed(list(enumerate(pod_groups)))}
    gangs: dict[tuple[str, tuple[str, ...]], _AlphaGang] = {}
    diagnostics: list[Finding] = []
    for querier in queriers:
        label = _pod_label(querier)
        try:
            component = infer_pod_component(summary, querier)
            effective = effective_member(summary, querier, component)
            if effective is None:
                diagnostics.append(
                    Finding(
                        Severity.WARNING,
                        f"pod {label} does not match any Karta pod group member definition",
                        f"pods/{label}",
                    )
                )
                continue
            keys = tuple(querier.extract_group_keys(effective.member))
            identity = (effective.pod_group_name, keys)
            entry = gangs.get(identity)
            if entry is None:
                instance = infer_pod_instance(factory, querier, component=component, effective=effective)
                target = effective.effective_component
                entry = _AlphaGang(
                    order=(group_index.get(effective.pod_group_name, len(pod_groups)), keys),
                    name=effective.pod_group_name,
                    keys=keys,
                    component=target,
                    min_member=subtree_scale(factory, target, instance, summary=summary),
                    desired=subtree_desired(factory, target, instance, summary=summary),
                    members=[],
                )
                gangs[identity] = entry
            entry.members.append(querier.name)
        except KartaError as exc:
            diagnostics.append(Finding(Severity.ERROR, f"pod {label}: {exc}", f"pods/{label}"))
    ordered = sorted(gangs.values(), key=lambda g: g.order)
    return GangPlan(
        gangs=tuple(
            Gang(
                name=g.name,
                min_member=g.min_member,
                members=tuple(g.members),
                alpha_keys=g.keys,
                component=g.component,
                desired=g.desired,
            )
            for g in ordered
        ),
        format="podGroups",
        diagnostics=tuple(diagnostics),
    )
