"""Volcano: ``scheduling.volcano.sh/v1beta1`` PodGroups (gang-backends.md section 4).

One PodGroup per gang, ``minMember`` = flatMin, ``minTaskMember`` per sub-group, the queue from the
workload label ``scheduling.volcano.sh/queue-name`` (else the configured default), the priority class
when every pod template agrees, optional ``minResources``; pods get the group annotation, their task
annotation and ``schedulerName: volcano``. Topology is not mapped (HyperNode tiers are another model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta.extract import ComponentFactory
from karta.gang import GangPlan, flat_min
from karta.render.backends import VolcanoOptions
from karta.render.common import (
    Rendering,
    gang_object_name,
    group_metadata,
    has_topology,
    missing_uid_warning,
    pod_patches,
    sub_group_of,
    top_owner,
)
from karta.render.resources import add_min_resources
from karta.render.templates import agreed_priority_class

__all__ = ["API_VERSION", "DEFAULT_SCHEDULER", "QUEUE_LABEL", "render_volcano"]

API_VERSION = "scheduling.volcano.sh/v1beta1"
DEFAULT_SCHEDULER = "volcano"
QUEUE_LABEL = "scheduling.volcano.sh/queue-name"


def render_volcano(
    factory: ComponentFactory,
    plan: GangPlan,
    *,
    pods: Sequence[Mapping[str, Any]] = (),
    options: VolcanoOptions | None = None,
) -> Rendering:
    """Volcano PodGroups for the plan's gangs (4.4) and the pod bindings of 4.3."""
    options = options if options is not None else VolcanoOptions()
    owner = top_owner(factory.obj)
    warnings: list[str] = []
    if not owner.uid and plan.gangs:
        warnings.append(missing_uid_warning(owner))
    queue = owner.labels.get(QUEUE_LABEL) or options.queue
    priority = agreed_priority_class(factory) if plan.gangs else None
    if has_topology(plan):
        warnings.append("Volcano: Karta topology constraints are not mapped to networkTopology; dropped")
    objects: list[dict[str, Any]] = []
    binding: dict[str, tuple[dict[str, str], dict[str, str], dict[str, Any]]] = {}
    scheduler = options.scheduler_name or DEFAULT_SCHEDULER
    for gang in plan.gangs:
        name = gang_object_name(owner, gang)
        spec: dict[str, Any] = {"minMember": flat_min(gang)}
        if gang.sub_groups:
            spec["minTaskMember"] = {sub.name: sub.min_member for sub in gang.sub_groups}
        if queue:
            spec["queue"] = queue
        if priority:
            spec["priorityClassName"] = priority
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
            if pod in binding:
                continue
            annotations = {"scheduling.k8s.io/group-name": name}
            task = sub_group_of(gang, pod)
            if task is not None:
                annotations["volcano.sh/task-spec"] = task
            binding[pod] = ({}, annotations, {"schedulerName": scheduler})
    return Rendering(objects=tuple(objects), pod_patches=pod_patches(pods, binding), warnings=tuple(warnings))
