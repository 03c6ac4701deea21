"""Pod → component → gang member → instance (docs/spec/format.md#pod-membership), for the alpha gang format
and for pod placement in general.
"""

from __future__ import annotations

from karta._records import record
from karta.errors import GangError, PodQueryError
from karta.extract.pods import PodQuerier
from karta.gang._types import FactoryLike
from karta.gang.structure import StructureSummary
from karta.model.types import PodGroupMember

__all__ = ["EffectiveMember", "effective_member", "infer_pod_component", "infer_pod_instance"]


@record(slots=True)
class EffectiveMember:
    """The alpha member that covers a pod, and the component it names."""

    effective_component: str
    pod_group_name: str
    member: PodGroupMember


def infer_pod_component(summary: StructureSummary, querier: PodQuerier) -> str:
    """The component a pod belongs to.

    The only pod-bearing component if there is exactly one (selectors not consulted); else the
    first pod-bearing component, root first, whose type selector matches; else GangError
    ``no component found for pod <name>``. Selector evaluation errors propagate.
    """
    if len(summary.pod_bearing) == 1:
        return summary.pod_bearing[0]
    for name in summary.pod_bearing:
        if querier.matches_component_type(summary.components[name]):
            return name
    raise GangError(f"no component found for pod {querier.name}")


def effective_member(
    summary: StructureSummary, querier: PodQuerier, component: str
) -> EffectiveMember | None:
    """The first candidate member of ``component`` (12.5) whose filters all pass, or None."""
    for candidate in summary.candidates(component):
        try:
            passed = querier.passes_filters(candidate.member)
        except PodQueryError as exc:
            raise GangError(
                f"failed to evaluate filters for component {candidate.member.component_name} "
                f"in group {candidate.pod_group_name}: {exc}"
            ) from exc
        if passed:
            return EffectiveMember(
                effective_component=candidate.member.component_name,
                pod_group_name=candidate.pod_group_name,
                member=candidate.member,
            )
    return None


def infer_pod_instance(
    factory: FactoryLike,
    querier: PodQuerier,
    *,
    component: str,
    effective: EffectiveMember | None,
) -> str | None:
    """The pod's instance id of its own component, when it matters for the gang minimum.

    Only when the effective component is the pod's own component, that component is
    multi-instance (``instanceIdPath``) and has a ``podSelector``; the id is then matched through
    11.4 (errors propagate). Otherwise None.
    """
    if effective is None or effective.effective_component != component:
        return None
    extracted = factory.component(component)
    definition = extracted.definition
    if not definition.instance_id_path or definition.pod_selector is None:
        return None
    return querier.matching_instance_id(definition, list(extracted.instance_ids()))
