"""Volcano: ``scheduling.volcano.sh/v1beta1`` PodGroups (docs/spec/gang-backends.md#volcano).

One PodGroup per gang, ``minMember`` = flatMin, ``minTaskMember`` per sub-group, the queue from the
workload label ``scheduling.volcano.sh/queue-name`` (else the configured default), the priority class
when every pod template agrees, optional ``minResources``; pods get the group annotation, their task
annotation and ``schedulerName: volcano``. Topology is not mapped (HyperNode tiers are another model).
The per-gang skeleton it shares with coscheduling is :mod:`karta.render.pod_groups`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta.extract import ComponentFactory
from karta.gang import Gang, GangPlan, flat_min
from karta.render.backends import VolcanoOptions
from karta.render.common import Rendering, top_owner
from karta.render.pod_groups import render_pod_groups
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
    queue = owner.labels.get(QUEUE_LABEL) or options.queue
    priority = agreed_priority_class(factory) if plan.gangs else None

    def group_spec(gang: Gang, warnings: list[str]) -> dict[str, Any]:
        spec: dict[str, Any] = {"minMember": flat_min(gang)}
        if gang.sub_groups:
            spec["minTaskMember"] = {sub.name: sub.min_member for sub in gang.sub_groups}
        if queue:
            spec["queue"] = queue
        if priority:
            spec["priorityClassName"] = priority
        return spec

    def pod_metadata(group: str, task: str | None) -> tuple[dict[str, str], dict[str, str]]:
        annotations = {"scheduling.k8s.io/group-name": group}
        if task is not None:
            annotations["volcano.sh/task-spec"] = task
        return {}, annotations

    return render_pod_groups(
        factory,
        plan,
        owner=owner,
        pods=pods,
        api_version=API_VERSION,
        scheduler=options.scheduler_name or DEFAULT_SCHEDULER,
        group_spec=group_spec,
        pod_metadata=pod_metadata,
        min_resources=options.min_resources,
        topology_dropped="Volcano: Karta topology constraints are not mapped to networkTopology; dropped",
        group_name=options.group_name,
    )
