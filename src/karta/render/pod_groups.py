"""The skeleton of the backends with one PodGroup per gang and pods bound to it by their metadata:
Volcano (docs/spec/gang-backends.md#volcano) and coscheduling (docs/spec/gang-backends.md#coscheduling).

It owns what they share: the missing-UID warning, a warning for each part of the plan the backend
drops (sub-groups, topology), one PodGroup per gang (named per 1.3, with the metadata of 1.5 and
optional ``minResources``), and the pod bindings (first gang wins) with the scheduler name. A backend
module supplies only what differs: the spec of a gang's group, and the labels and annotations that
point a pod at its group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from karta.extract import ComponentFactory
from karta.gang import Gang, GangPlan
from karta.render.common import (
    Rendering,
    TopOwner,
    gang_object_name,
    group_metadata,
    has_topology,
    missing_uid_warning,
    one_gang_for,
    pod_patches,
    sub_group_of,
)
from karta.render.resources import add_min_resources

__all__ = ["GroupSpec", "PodMetadata", "render_pod_groups"]

GroupSpec = Callable[[Gang, list[str]], dict[str, Any] | None]
"""The spec of a gang's PodGroup (before ``minResources``), or None for no group (after adding a
warning to the list it is given)."""

PodMetadata = Callable[[str, str | None], tuple[dict[str, str], dict[str, str]]]
"""(group name, the pod's sub-group or None) → the pod's (labels, annotations)."""


def render_pod_groups(
    factory: ComponentFactory,
    plan: GangPlan,
    *,
    owner: TopOwner,
    pods: Sequence[Mapping[str, Any]],
    api_version: str,
    scheduler: str,
    group_spec: GroupSpec,
    pod_metadata: PodMetadata,
    min_resources: bool,
    topology_dropped: str,
    sub_groups_dropped: str | None = None,
    label_valued_name: bool = False,
    group_name: str | None = None,
) -> Rendering:
    """One ``api_version`` PodGroup per gang of the plan and the pod bindings.

    ``topology_dropped`` (``sub_groups_dropped``) is the warning when the plan has topology
    (sub-groups) the backend cannot express; ``label_valued_name``: pods carry the group name as a
    label value (63 characters, 1.3); ``group_name``: the one gang's group name, instead of 1.3's.
    """
    one_gang_for(plan, group_name)
    warnings: list[str] = []
    if not owner.uid and plan.gangs:
        warnings.append(missing_uid_warning(owner))
    if sub_groups_dropped is not None and any(g.sub_groups for g in plan.gangs):
        warnings.append(sub_groups_dropped)
    if has_topology(plan):
        warnings.append(topology_dropped)
    objects: list[dict[str, Any]] = []
    binding: dict[str, tuple[dict[str, str], dict[str, str], dict[str, Any]]] = {}
    for gang in plan.gangs:
        spec = group_spec(gang, warnings)
        if spec is None:
            continue
        name = gang_object_name(owner, gang, label_value=label_valued_name, given=group_name)
        if min_resources:
            add_min_resources(spec, factory=factory, gang=gang, warnings=warnings)
        objects.append(
            {
                "apiVersion": api_version,
                "kind": "PodGroup",
                "metadata": group_metadata(owner, name, factory.karta),
                "spec": spec,
            }
        )
        for pod in gang.members:
            if pod not in binding:
                labels, annotations = pod_metadata(name, sub_group_of(gang, pod))
                binding[pod] = (labels, annotations, {"schedulerName": scheduler})
    return Rendering(objects=tuple(objects), pod_patches=pod_patches(pods, binding), warnings=tuple(warnings))
