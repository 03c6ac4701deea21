"""scheduler-plugins coscheduling: ``scheduling.x-k8s.io/v1alpha1`` PodGroups
(docs/spec/gang-backends.md#coscheduling).

One PodGroup per gang with ``minMember`` = flatMin, named within 63 characters because pods carry the
name as a label value (dots allowed: an object name and a label value both take them); no group (and
no pod label) when flatMin is 0, since the API needs ≥ 1. Sub-groups and topology have no equivalent
and are dropped with a warning. The per-gang skeleton it shares with Volcano is
:mod:`karta.render.pod_groups`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta.extract import ComponentFactory
from karta.gang import Gang, GangPlan, flat_min
from karta.render.backends import CoschedulingOptions
from karta.render.common import Rendering, top_owner
from karta.render.pod_groups import render_pod_groups

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
    timeout = options.schedule_timeout_seconds

    def group_spec(gang: Gang, warnings: list[str]) -> dict[str, Any] | None:
        minimum = flat_min(gang)
        if minimum < 1:
            warnings.append(
                f"gang {gang.qualified_name} has minimum 0 (no gang requirement): no coscheduling "
                "PodGroup, pods are not labelled"
            )
            return None
        spec: dict[str, Any] = {"minMember": minimum}
        if timeout is not None:
            spec["scheduleTimeoutSeconds"] = timeout
        return spec

    return render_pod_groups(
        factory,
        plan,
        owner=top_owner(factory.obj),
        pods=pods,
        api_version=API_VERSION,
        scheduler=options.scheduler_name or DEFAULT_SCHEDULER,
        group_spec=group_spec,
        pod_metadata=lambda group, _sub_group: ({POD_GROUP_LABEL: group}, {}),
        min_resources=options.min_resources,
        topology_dropped="coscheduling has no topology constraints: the Karta topology is dropped",
        sub_groups_dropped=(
            "coscheduling has no sub-groups: the per-component minimums are dropped (the total is kept)"
        ),
        label_valued_name=True,
        group_name=options.group_name,
    )
