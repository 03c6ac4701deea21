"""Gang scheduling from Karta instructions: structure summary, pod → gang member inference, subtree
scale and desired counts, KAI names, and the backend-independent gang plan.

Names are resolved lazily (PEP 562): importing the package, or one light module of it, costs nothing
until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "EffectiveMember": "karta.gang.membership",
    "effective_member": "karta.gang.membership",
    "infer_pod_component": "karta.gang.membership",
    "infer_pod_instance": "karta.gang.membership",
    "is_dns1123_label": "karta.gang.naming",
    "is_dns1123_subdomain": "karta.gang.naming",
    "kai_alpha_pod_group_name": "karta.gang.naming",
    "kai_pod_group_name": "karta.gang.naming",
    "shorten_name": "karta.gang.naming",
    "Gang": "karta.gang.plan",
    "GangPlan": "karta.gang.plan",
    "SubGroupPlan": "karta.gang.plan",
    "Topology": "karta.gang.plan",
    "compute_gang_plan": "karta.gang.plan",
    "flat_min": "karta.gang.plan",
    "effective_desired": "karta.gang.scale",
    "effective_min": "karta.gang.scale",
    "subtree_desired": "karta.gang.scale",
    "subtree_scale": "karta.gang.scale",
    "CandidateMember": "karta.gang.structure",
    "gang_format": "karta.gang.format",
    "gangs_follow_pods": "karta.gang.format",
    "SCOPE_LABEL": "karta.gang.scope",
    "ScopeDecision": "karta.gang.scope",
    "gang_scope": "karta.gang.scope",
    "namespace_selector": "karta.gang.scope",
    "scope_report": "karta.gang.scope",
    "StructureSummary": "karta.gang.structure",
    "structure_summary": "karta.gang.structure",
}

__all__ = [
    "SCOPE_LABEL",
    "CandidateMember",
    "EffectiveMember",
    "Gang",
    "GangPlan",
    "ScopeDecision",
    "StructureSummary",
    "SubGroupPlan",
    "Topology",
    "compute_gang_plan",
    "effective_desired",
    "effective_member",
    "effective_min",
    "flat_min",
    "gang_format",
    "gang_scope",
    "gangs_follow_pods",
    "infer_pod_component",
    "infer_pod_instance",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "kai_alpha_pod_group_name",
    "kai_pod_group_name",
    "namespace_selector",
    "scope_report",
    "shorten_name",
    "structure_summary",
    "subtree_desired",
    "subtree_scale",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.gang.format import gang_format, gangs_follow_pods
    from karta.gang.membership import (
        EffectiveMember,
        effective_member,
        infer_pod_component,
        infer_pod_instance,
    )
    from karta.gang.naming import (
        is_dns1123_label,
        is_dns1123_subdomain,
        kai_alpha_pod_group_name,
        kai_pod_group_name,
        shorten_name,
    )
    from karta.gang.plan import Gang, GangPlan, SubGroupPlan, Topology, compute_gang_plan, flat_min
    from karta.gang.scale import effective_desired, effective_min, subtree_desired, subtree_scale
    from karta.gang.scope import SCOPE_LABEL, ScopeDecision, gang_scope, namespace_selector, scope_report
    from karta.gang.structure import CandidateMember, StructureSummary, structure_summary
