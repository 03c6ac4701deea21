"""scheduler-plugins coscheduling: ``scheduling.x-k8s.io/v1alpha1`` PodGroups (gang-backends.md
section 5).

One PodGroup per gang with ``minMember`` = flatMin, named within 63 characters because pods carry the
name as a label value; no group (and no pod label) when flatMin is 0, since the API needs ≥ 1.
Sub-groups and topology have no equivalent and are dropped with a warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta.extract import ComponentFactory
from karta.gang import GangPlan, flat_min
from karta.gang.naming import DNS1123_LABEL_MAX
from karta.render.backends import CoschedulingOptions
from karta.render.common import (
    Rendering,
    gang_object_name,
    group_metadata,
    has_topology,
    missing_uid_warning,
    pod_patches,
    top_owner,
)
from karta.render.resources import add_min_resources

__all__ = ["API_VERSION", "DEFAULT_SCHEDULER", "POD_GROUP_LABEL", "render_coscheduling"]

API_VERSION = "scheduling.x-k8s.io/v1alpha1"
DEFAULT_SCHEDULER = "scheduler-plugins-scheduler"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def render_coscheduling(
    factory: ComponentFactory,
    plan: GangPlan,
    *,
    pods: Sequence[Mapping[str, Any]] = (),
    options: CoschedulingOptions | None = None,
) -> Rendering:
    """coscheduling PodGroups for the plan's gangs (5.4) and the pod labels of 5.3."""
    options = options if options is not None else CoschedulingOptions()
    owner = top_owner(factory.obj)
    warnings: list[str] = []
    if not owner.uid and plan.gangs:
        warnings.append(missing_uid_warning(owner))
    if any(g.sub_groups for g in plan.gangs):
        warnings.append(
            "coscheduling has no sub-groups: the per-component minimums are dropped (the total is kept)"
        )
    if has_topology(plan):
        warnings.append("coscheduling has no topology constraints: the Karta topology is dropped")
    objects: list[dict[str, Any]] = []
    binding: dict[str, tuple[dict[str, str], dict[str, str], dict[str, Any]]] = {}
    scheduler = options.scheduler_name or DEFAULT_SCHEDULER
    for gang in plan.gangs:
        minimum = flat_min(gang)
        if minimum < 1:
            warnings.append(
                f"gang {gang.qualified_name} has minimum 0 (no gang requirement): no coscheduling "
                "PodGroup, pods are not labelled"
            )
            continue
        name = gang_object_name(owner, gang, limit=DNS1123_LABEL_MAX)
        spec: dict[str, Any] = {"minMember": minimum}
        if options.schedule_timeout_seconds is not None:
            spec["scheduleTimeoutSeconds"] = options.schedule_timeout_seconds
        if options.min_resources:
            add_min_resources(spec, factory=factory, gang=gang, warnings=warnings)
        objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": "PodGroup",
                "metadata": group_metadata(owner, name, factory.karta),
                "spec": spec,
            }
        )
        for pod in gang.members:
            binding.setdefault(pod, ({POD_GROUP_LABEL: name}, {}, {"schedulerName": scheduler}))
    return Rendering(objects=tuple(objects), pod_patches=pod_patches(pods, binding), warnings=tuple(warnings))
