"""Gang scheduling from Karta instructions: structure summary, pod → gang member inference, subtree
scale and desired counts, KAI names, and the backend-independent gang plan.
"""

from __future__ import annotations

from karta.gang.membership import EffectiveMember, effective_member, infer_pod_component, infer_pod_instance
from karta.gang.naming import (
    is_dns1123_label,
    is_dns1123_subdomain,
    kai_alpha_pod_group_name,
    kai_pod_group_name,
    shorten_name,
)
from karta.gang.plan import Gang, GangPlan, SubGroupPlan, Topology, compute_gang_plan, flat_min
from karta.gang.scale import effective_desired, effective_min, subtree_desired, subtree_scale
from karta.gang.structure import CandidateMember, StructureSummary

__all__ = [
    "CandidateMember",
    "EffectiveMember",
    "Gang",
    "GangPlan",
    "StructureSummary",
    "SubGroupPlan",
    "Topology",
    "compute_gang_plan",
    "effective_desired",
    "effective_member",
    "effective_min",
    "flat_min",
    "infer_pod_component",
    "infer_pod_instance",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "kai_alpha_pod_group_name",
    "kai_pod_group_name",
    "shorten_name",
    "subtree_desired",
    "subtree_scale",
]
