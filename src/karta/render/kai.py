"""KAI Scheduler: ``scheduling.run.ai/v2alpha2`` PodGroups (docs/spec/gang-backends.md#kai).

By default the output is a preview of what KAI's own Karta fallback creates (mode A,
docs/spec/format.md#kai-current and #kai-alpha): names ``pg-<topOwnerUID>-<podGroup.name>`` or
``pg-<topOwnerUID>[-<keys>]``, the top owner's labels and annotations copied, queue / priority /
preemptibility / topology from the owner's labels and annotations (2.6), then the Karta's sizes, sub-groups
and topology; nothing of ours is added. With ``kai_managed`` (mode B) our labels are added and the workload
gets ``kai.scheduler/skip-podgrouper: "true"`` so that KAI's pod-grouper leaves its pods alone; the
PodGroup may then be given another name (``group_name``), and the annotations karta's Kueue adapter
keeps on the workload (:data:`KUEUE_STATE_PREFIX`) are not copied. A split ``podGroup`` (extension E1) gives
one PodGroup per gang, ``pg-<topOwnerUID>-<podGroup.name>-<keys>`` (the gang of the rest keeps
``pg-<topOwnerUID>-<podGroup.name>``); KAI's own reader ignores the extension, which the preview
says in a warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta.errors import GangError
from karta.extract import ComponentFactory
from karta.gang import (
    Gang,
    GangPlan,
    Topology,
    is_dns1123_subdomain,
    kai_alpha_pod_group_name,
    kai_pod_group_name,
)
from karta.render.backends import KaiOptions, check_group_name
from karta.render.common import (
    Rendering,
    TopOwner,
    group_metadata,
    one_gang_for,
    pod_patches,
    sub_group_of,
    top_owner,
)

__all__ = ["API_VERSION", "DEFAULT_QUEUE", "DEFAULT_SCHEDULER", "KUEUE_STATE_PREFIX", "render_kai"]

API_VERSION = "scheduling.run.ai/v2alpha2"
DEFAULT_SCHEDULER = "kai-scheduler"
DEFAULT_QUEUE = "default-queue"
KUEUE_STATE_PREFIX = "run.ai/karta-kueue-"
"""The annotations karta's Kueue adapter keeps on a workload it manages (``karta.kueue.names``:
the templates to restore on eviction): state of one admission, not a fact about the gang. In mode B,
where karta writes the PodGroup, they are not copied onto it: every admission and eviction would
otherwise rewrite the PodGroup with a copy of that state (docs/kueue.md, "Kueue with a gang backend")."""

_TOPOLOGY_ANNOTATIONS = (
    ("kai.scheduler/topology", "topology"),
    ("kai.scheduler/topology-required-placement", "requiredTopologyLevel"),
    ("kai.scheduler/topology-preferred-placement", "preferredTopologyLevel"),
)


def render_kai(
    factory: ComponentFactory,
    plan: GangPlan,
    *,
    pods: Sequence[Mapping[str, Any]] = (),
    options: KaiOptions | None = None,
) -> Rendering:
    """KAI PodGroups for the plan's gangs (2.8), the pod bindings of 2.7 and, in mode B, the owner
    annotation. KAI names groups by the top owner's UID, so the workload must carry one."""
    options = options if options is not None else KaiOptions()
    check_group_name("kai", options)
    one_gang_for(plan, options.group_name)
    owner = top_owner(factory.obj)
    if not owner.uid:
        raise GangError(
            f"KAI names its PodGroups pg-<topOwnerUID>-..., and {owner.kind} {owner.name} has no "
            "metadata.uid; render the object as read from the cluster (kubectl get -o yaml)"
        )
    pods_by_name = {_pod_name(pod): pod for pod in pods}
    objects: list[dict[str, Any]] = []
    warnings: list[str] = []
    binding: dict[str, tuple[dict[str, str], dict[str, str], dict[str, Any]]] = {}
    scheduler = options.scheduler_name or DEFAULT_SCHEDULER
    rendered: dict[str, str] = {}
    for gang in plan.gangs:
        if options.group_name is not None:
            name = options.group_name
        elif gang.alpha_keys is None:
            name = kai_pod_group_name(owner.uid, gang.qualified_name)  # split gangs: + -<keys>
            if gang.split_keys and not is_dns1123_subdomain(name):
                raise GangError(
                    f'split keys [{" ".join(gang.split_keys)}] produce invalid KAI PodGroup name "{name}"'
                )
        else:
            try:
                name = kai_alpha_pod_group_name(owner.uid, gang.alpha_keys)
            except GangError as exc:  # KAI fails these pods, not the others: report and go on
                warnings.append(f"pods {', '.join(gang.members)}: {exc}")
                continue
        if name in rendered:
            warnings.append(
                f"alpha gangs {rendered[name]} and {gang.qualified_name} both map to KAI PodGroup {name} "
                "(KAI leaves the alpha group name out of its names); kept the first"
            )
        else:
            rendered[name] = gang.qualified_name
            first_pod = next((pods_by_name[p] for p in gang.members if p in pods_by_name), None)
            objects.append(_pod_group(factory, owner, gang, name, first_pod, options))
        for pod in gang.members:
            if pod in binding:
                continue
            labels: dict[str, str] = {}
            sub = sub_group_of(gang, pod)
            if sub is not None:
                labels["kai.scheduler/subgroup-name"] = sub
            binding[pod] = (labels, {"pod-group-name": name}, {"schedulerName": scheduler})
    if not options.kai_managed and any(g.split for g in plan.gangs):
        warnings.append(
            "podGroup.split is karta extension E1: KAI's own Karta reader ignores it and makes one "
            "PodGroup for the whole workload; these per-gang PodGroups are what karta creates in mode B"
        )
    owner_patch = None
    if options.kai_managed and objects:
        owner_patch = {"metadata": {"annotations": {"kai.scheduler/skip-podgrouper": "true"}}}
    return Rendering(
        objects=tuple(objects),
        pod_patches=pod_patches(pods, binding),
        owner_patch=owner_patch,
        warnings=tuple(warnings),
    )


def _pod_name(pod: Mapping[str, Any]) -> str:
    metadata = pod.get("metadata")
    return str(metadata.get("name") or "") if isinstance(metadata, Mapping) else ""


def _pod_labels(pod: Mapping[str, Any] | None) -> Mapping[str, Any]:
    metadata = pod.get("metadata") if pod is not None else None
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def _label(owner: TopOwner, pod: Mapping[str, Any] | None, key: str) -> str:
    """A label of the top owner, else of the pod (KAI's order); "" when neither has it."""
    value = owner.labels.get(key) or _pod_labels(pod).get(key)
    return str(value) if value else ""


def _pod_group(
    factory: ComponentFactory,
    owner: TopOwner,
    gang: Gang,
    name: str,
    pod: Mapping[str, Any] | None,
    options: KaiOptions,
) -> dict[str, Any]:
    annotations = owner.annotations
    if options.kai_managed:
        annotations = {k: v for k, v in annotations.items() if not k.startswith(KUEUE_STATE_PREFIX)}
    metadata = group_metadata(
        owner,
        name,
        factory.karta,
        managed=options.kai_managed,
        labels=owner.labels,
        annotations=annotations,
    )

    spec: dict[str, Any] = {"queue": _queue(owner, pod, options)}
    priority = _label(owner, pod, "priorityClassName")
    if not priority and pod is not None:
        pod_spec = pod.get("spec")
        if isinstance(pod_spec, Mapping) and pod_spec.get("priorityClassName"):
            priority = str(pod_spec["priorityClassName"])
    if priority:
        spec["priorityClassName"] = priority
    preemptibility = _label(owner, pod, "kai.scheduler/preemptibility")
    if preemptibility:
        spec["preemptibility"] = preemptibility
    if gang.sub_groups:
        spec["minSubGroup"] = gang.min_sub_group if gang.min_sub_group is not None else len(gang.sub_groups)
        spec["subGroups"] = [
            {"name": sub.name, "minMember": sub.min_member, **_topology_field(sub.topology)}
            for sub in gang.sub_groups
        ]
    else:
        spec["minMember"] = gang.min_member
    if gang.topology is not None:
        spec.update(_topology_field(gang.topology))
    else:
        from_annotations = {
            field: owner.annotations[key]
            for key, field in _TOPOLOGY_ANNOTATIONS
            if owner.annotations.get(key)
        }
        if "topology" in from_annotations:
            spec["topologyConstraint"] = from_annotations
    for key, field in (
        ("kai.scheduler/preemption-delay", "preemptionDelay"),
        ("kai.scheduler/staleness-grace-period", "stalenessGracePeriod"),
    ):
        if owner.annotations.get(key):
            spec[field] = owner.annotations[key]
    return {"apiVersion": API_VERSION, "kind": "PodGroup", "metadata": metadata, "spec": spec}


def _queue(owner: TopOwner, pod: Mapping[str, Any] | None, options: KaiOptions) -> str:
    queue = _label(owner, pod, options.kai_queue_label)
    if queue:
        return queue
    project = _label(owner, pod, "project")
    if project:
        return project
    return options.queue or DEFAULT_QUEUE


def _topology_field(topology: Topology | None) -> dict[str, Any]:
    if topology is None:
        return {}
    constraint = {"topology": topology.topology_name}
    if topology.required_topology_level:
        constraint["requiredTopologyLevel"] = topology.required_topology_level
    if topology.preferred_topology_level:
        constraint["preferredTopologyLevel"] = topology.preferred_topology_level
    return {"topologyConstraint": constraint}
