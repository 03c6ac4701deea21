"""Kueue: the PodSets of a ``kueue.x-k8s.io/v1beta2`` Workload (docs/spec/gang-backends.md#kueue).

One PodSet per sub-group (current format with sub-groups), or one per distinct pod template when a
sub-group's pods have several (each counting only that template's pods), else one per pod-bearing
component instance; ``count`` from subtree_desired and the elastic minimum as ``minCount`` on at most
one PodSet; templates assembled whatever the definition's pod-spec style; topology requests from the
Karta topology (current format); ``queueName`` from the workload's ``kueue.x-k8s.io/queue-name``
label, else the ``queue`` option (``kli gang --queue``; the label wins, as Kueue's own integration
reads it), else none and a warning: Kueue admits no Workload without a queue. Kueue's integration
binds the pods, so there are no pod patches.

A split ``podGroup`` (extension E1): Kueue has no per-replica gang, a Workload is admitted whole, so
the PodSets are those of the unsplit definition (sub-groups gathered from every gang) and a warning
says so.

Our rule where the section is silent: a component nested under scaled components (an LWS worker
inside its group) counts its pods across all parent replicas, ``count`` and the minimum being
multiplied by the parents' own desired and minimum scale, as subtree_scale multiplies them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from karta.errors import GangError
from karta.extract import ComponentFactory, Scale
from karta.gang import (
    GangPlan,
    StructureSummary,
    SubGroupPlan,
    Topology,
    effective_desired,
    effective_min,
    structure_summary,
    subtree_desired,
    subtree_scale,
)
from karta.render.backends import KueueOptions
from karta.render.common import (
    Rendering,
    check_group_name,
    dns_label,
    group_metadata,
    missing_uid_warning,
    object_name,
    top_owner,
)
from karta.render.templates import component_templates

__all__ = ["API_VERSION", "MAX_POD_SETS", "QUEUE_LABEL", "KueuePodSet", "kueue_pod_sets", "render_kueue"]

API_VERSION = "kueue.x-k8s.io/v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MAX_POD_SETS = 18


class KueuePodSet:
    """One PodSet of the Workload, and the (component, instance id) pairs whose pod templates it
    stands for (karta.kueue writes an admission back through them)."""

    def __init__(
        self,
        name: str,
        count: int,
        minimum: int,
        template: dict[str, Any],
        topology: Topology | None,
        members: list[tuple[str, str]],
    ) -> None:
        self.name = name
        self.count = count
        self.minimum = minimum
        self.template = template
        self.topology = topology
        self.members = members
        self.min_count: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "count": self.count}
        if self.min_count is not None:
            out["minCount"] = self.min_count
        out["template"] = self.template
        if self.topology is not None:
            request: dict[str, str] = {}
            if self.topology.required_topology_level:
                request["required"] = self.topology.required_topology_level
            if self.topology.preferred_topology_level:
                request["preferred"] = self.topology.preferred_topology_level
            if request:
                out["topologyRequest"] = request
        return out


def _ancestor_factor(
    factory: ComponentFactory,
    summary: StructureSummary,
    component: str,
    per_instance: Callable[[Scale | None], int],
) -> int:
    """Π over the ancestors of their own scale (> 0; 1 otherwise), by the definition mode of 12.6."""
    if not summary.has_scale_definition:
        return 1
    factor = 1
    for ancestor in summary.ancestors(component):
        if summary.components[ancestor].scale_definition is None:
            continue
        scales = factory.component(ancestor).scales() or {}
        own = sum(per_instance(scale) for scale in scales.values())
        if own > 0:
            factor *= own
    return factor


def render_kueue(
    factory: ComponentFactory,
    plan: GangPlan,
    *,
    pods: Sequence[Mapping[str, Any]] = (),
    options: KueueOptions | None = None,
) -> Rendering:
    """One Kueue Workload with the PodSets the definition implies (6.5)."""
    owner = top_owner(factory.obj)
    warnings: list[str] = []
    if not owner.uid:
        warnings.append(missing_uid_warning(owner))
    if pods:
        warnings.append("Kueue's own integration binds the pods: there are no pod patches")
    pod_sets = kueue_pod_sets(factory, plan, warnings)
    spec: dict[str, Any] = {}
    queue = owner.labels.get(QUEUE_LABEL) or (options.queue if options is not None else None)
    if queue:
        spec["queueName"] = queue
    else:
        warnings.append(
            f"the workload has no {QUEUE_LABEL} label and no queue was given (--queue): "
            "Kueue admits no Workload without a queueName"
        )
    spec["podSets"] = [p.to_dict() for p in pod_sets]
    if options is not None and options.group_name is not None:
        name = check_group_name(options.group_name)
    else:
        name = object_name(f"{owner.kind.lower()}-{owner.name}", what="Workload name")
    workload = {
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": group_metadata(owner, name, factory.karta),
        "spec": spec,
    }
    return Rendering(objects=(workload,), warnings=tuple(warnings))


def kueue_pod_sets(factory: ComponentFactory, plan: GangPlan, warnings: list[str]) -> list[KueuePodSet]:
    """The PodSets of the workload's Workload (6.5), each with the component instances it covers;
    what the Workload cannot express is appended to ``warnings``."""
    summary = structure_summary(factory.karta)
    gang = plan.gangs[0] if plan.format == "podGroup" and plan.gangs else None
    split = [g for g in plan.gangs if g.split in ("replica", "instance")]
    if split:
        warnings.append(
            f"Kueue admits a Workload as one unit: the {len(split)} gangs of split component "
            f"{split[0].component} (extension E1) are not expressible as Workloads of their own; its "
            "PodSets count every replica, so Kueue admits all of them or none"
        )
    subs: dict[str, SubGroupPlan] = {}  # a split plan's sub-groups are spread over its gangs
    for one in plan.gangs if plan.format == "podGroup" else ():
        for sub in one.sub_groups:
            subs.setdefault(sub.name, sub)
    pod_sets: list[KueuePodSet] = []
    if gang is not None and subs:
        for sub in subs.values():
            pod_sets.extend(
                _sub_group_pod_sets(factory, summary, sub, sub.topology or gang.topology, warnings)
            )
    else:
        topology = gang.topology if gang is not None else None
        for component in summary.pod_bearing:
            desired_factor = _ancestor_factor(factory, summary, component, effective_desired)
            min_factor = _ancestor_factor(factory, summary, component, effective_min)
            for instance, template in component_templates(factory, component).items():
                name = f"{component}-{instance}" if instance else component
                narrowed = instance or None
                pod_sets.append(
                    KueuePodSet(
                        dns_label(name, what="PodSet name"),
                        subtree_desired(factory, component, narrowed, summary=summary) * desired_factor,
                        subtree_scale(factory, component, narrowed, summary=summary) * min_factor,
                        template,
                        topology,
                        [(component, instance)],
                    )
                )
    # A component the object does not have (a PyTorchJob without a Master) yields an empty template
    # of no pods: Kueue's Workload schema requires containers, so such a PodSet is left out.
    if not pod_sets:
        raise GangError(
            "the definition has no pod-bearing component: a Kueue Workload needs at least one PodSet"
        )
    pod_sets = [p for p in pod_sets if p.count > 0 or p.template.get("spec", {}).get("containers")]
    if not pod_sets:
        raise GangError(
            "the workload has no pod template at any pod-bearing component's path: a Kueue Workload "
            "needs at least one PodSet"
        )
    if len(pod_sets) > MAX_POD_SETS:
        raise GangError(f"Kueue allows at most {MAX_POD_SETS} PodSets; this workload needs {len(pod_sets)}")
    names = [p.name for p in pod_sets]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise GangError(f"PodSet names must be unique; {', '.join(duplicates)} repeat")
    _choose_min_count(pod_sets)
    if any(p.topology is not None and p.topology.topology_name for p in pod_sets):
        warnings.append(
            "Kueue takes topology levels from the ResourceFlavor: the Karta topologyName is not used"
        )
    return pod_sets


def _own_count(
    factory: ComponentFactory,
    summary: StructureSummary,
    component: str,
    instance: str,
    per_instance: Callable[[Scale | None], int],
) -> int:
    """The pods of one instance of a pod-bearing component itself (its own scale, not its subtree's),
    counted as subtree_scale counts them (12.6): 1 when the Karta has no scale definition at all, 0
    when the component has none of its own."""
    if not summary.has_scale_definition:
        return 1
    if summary.components[component].scale_definition is None:
        return 0
    scales = factory.component(component).scales() or {}
    return per_instance(scales.get(instance))


def _sub_group_pod_sets(
    factory: ComponentFactory,
    summary: StructureSummary,
    sub: SubGroupPlan,
    topology: Topology | None,
    warnings: list[str],
) -> list[KueuePodSet]:
    """The PodSets of one sub-group: one per distinct pod template among the instances of its
    pod-bearing components (itself and its descendants), each counting the pods of that template
    only (instances with identical templates share a PodSet, their counts summed), so that Kueue is
    asked for what the pods request. One template: the PodSet is named after the sub-group; several:
    ``<sub-group>-0``, ``<sub-group>-1``, ... in definition order."""
    covered = [c for c in (sub.component, *summary.descendants(sub.component)) if c in summary.pod_bearing]
    if not covered:
        raise GangError(f"sub-group {sub.name} covers no pod-bearing component: no PodSet template")
    shapes: dict[str, KueuePodSet] = {}
    for component in covered:
        desired_factor = _ancestor_factor(factory, summary, component, effective_desired)
        min_factor = _ancestor_factor(factory, summary, component, effective_min)
        for instance, template in component_templates(factory, component).items():
            desired = _own_count(factory, summary, component, instance, effective_desired) * desired_factor
            minimum = _own_count(factory, summary, component, instance, effective_min) * min_factor
            key = json.dumps(template, sort_keys=True, default=str)
            shape = shapes.get(key)
            if shape is None:
                shapes[key] = KueuePodSet("", desired, minimum, template, topology, [(component, instance)])
            else:
                shape.count += desired
                shape.minimum += minimum
                shape.members.append((component, instance))
    out = list(shapes.values())
    if len(out) == 1:
        out[0].name = dns_label(sub.name, what="PodSet name")
        return out
    for index, pod_set in enumerate(out):
        pod_set.name = dns_label(f"{sub.name}-{index}", what="PodSet name")
    if topology is not None:
        warnings.append(
            f"sub-group {sub.name} has {len(out)} pod templates, so {len(out)} PodSets "
            f"({', '.join(p.name for p in out)}): Kueue applies its topology request to each PodSet "
            "on its own, not to the sub-group as a whole"
        )
    return out


def _choose_min_count(pod_sets: list[KueuePodSet]) -> None:
    """``minCount`` on the one PodSet whose minimum is furthest below its count (ties: definition
    order); Kueue needs ``1 ≤ minCount ≤ count``, so a minimum of 0 counts as 1."""
    best: KueuePodSet | None = None
    for pod_set in pod_sets:
        minimum = max(pod_set.minimum, 1)
        if minimum < pod_set.count and (
            best is None or pod_set.count - minimum > best.count - max(best.minimum, 1)
        ):
            best = pod_set
    if best is not None:
        best.min_count = max(best.minimum, 1)
