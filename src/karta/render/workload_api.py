"""Kubernetes workload-aware scheduling: ``scheduling.k8s.io`` Workload and PodGroup objects
(docs/spec/gang-backends.md#workload-api) for Kubernetes 1.35 (``v1alpha1``), 1.36 (``v1alpha2``) and 1.37
(``v1beta1``, optionally the ``v1alpha3`` CompositePodGroup tree).

One Workload per workload object with one template per gang shape (``podGroup.name``, or each alpha
group name, all known from the definition); from 1.36 one PodGroup per gang instance pointing back at
its template. Sub-groups are flattened (the total is kept) unless the composite form is asked for.
Pods are bound through ``spec.schedulingGroup`` (1.36+) or ``spec.workloadRef`` (1.35), fields that are
immutable and so must be set at pod creation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta.errors import GangError
from karta.extract import ComponentFactory
from karta.gang import Gang, GangPlan, Topology, flat_min, subtree_scale
from karta.render.backends import WORKLOAD_API_VERSIONS, WorkloadApiOptions, check_group_name
from karta.render.common import (
    Rendering,
    TopOwner,
    dns_label,
    gang_object_name,
    group_metadata,
    missing_uid_warning,
    object_name,
    one_gang_for,
    pod_patches,
    sub_group_of,
    top_owner,
)

__all__ = ["API_GROUP", "MAX_TEMPLATES", "VERSIONS", "render_workload_api"]

API_GROUP = "scheduling.k8s.io"
VERSIONS = WORKLOAD_API_VERSIONS
COMPOSITE_VERSION = "v1alpha3"
MAX_TEMPLATES = 8

Binding = dict[str, tuple[dict[str, str], dict[str, str], dict[str, Any]]]


def _policy(minimum: int) -> dict[str, Any]:
    """``gang: {minCount}`` for a positive minimum, else ``basic: {}`` (the API needs ≥ 1)."""
    return {"gang": {"minCount": minimum}} if minimum >= 1 else {"basic": {}}


class _Renderer:
    def __init__(self, factory: ComponentFactory, plan: GangPlan, options: WorkloadApiOptions) -> None:
        version = VERSIONS.get(options.k8s_version)
        if version is None:
            raise GangError(
                f"unsupported Kubernetes version {options.k8s_version} for the Workload API; "
                f"one of {', '.join(VERSIONS)}"
            )
        if options.api_version not in (None, version, COMPOSITE_VERSION) or (
            options.api_version == COMPOSITE_VERSION and version != "v1beta1"
        ):
            raise GangError(
                f"Workload API {options.api_version} cannot carry the {options.k8s_version} objects; "
                f"only 1.37's may be written at {COMPOSITE_VERSION}"
            )
        self.factory = factory
        self.plan = plan
        self.options = options
        self.version = version  # the shapes
        self.api_version = f"{API_GROUP}/{options.api_version or version}"  # what the objects say
        self.owner: TopOwner = top_owner(factory.obj)
        check_group_name("workload-api", options)
        one_gang_for(plan, options.group_name)
        self.group_name = options.group_name
        if version == "v1alpha1" and self.group_name is not None:  # 1.35 pods point at the Workload
            self.workload_name = self.group_name
        else:
            self.workload_name = object_name(self.owner.name, what="Workload name")
        self.warnings: list[str] = []
        self.binding: Binding = {}

    # --- shared pieces ----------------------------------------------------------------------------

    def metadata(self, name: str) -> dict[str, Any]:
        return group_metadata(self.owner, name, self.factory.karta)

    def controller_ref(self) -> dict[str, str]:
        ref = {"apiGroup": self.owner.group, "kind": self.owner.kind, "name": self.owner.name}
        if not ref["apiGroup"]:
            del ref["apiGroup"]
        return ref

    def constraints(self, topology: Topology | None, where: str) -> dict[str, Any]:
        """``schedulingConstraints`` for a topology (3.5 step 4); what cannot be expressed is warned."""
        if topology is None:
            return {}
        if self.version == "v1alpha1":
            self.warnings.append(
                f"Workload API v1alpha1 has no topology constraints: {where} topology dropped"
            )
            return {}
        self.warnings.append(
            f"Workload API has no topology objects: topologyName {topology.topology_name} of {where} dropped"
        )
        if topology.preferred_topology_level:
            self.warnings.append(
                f"Workload API has no preferred topology level: {topology.preferred_topology_level} "
                f"of {where} dropped"
            )
        level = topology.required_topology_level
        if not level:
            return {}
        if not self.options.topology_gate:
            self.warnings.append(
                f"TopologyAwareWorkloadScheduling is off: required topology level {level} of {where} dropped"
            )
            return {}
        key = self.options.topology_level_map.get(level, level)
        return {"schedulingConstraints": {"topology": [{"key": key}]}}

    # --- templates --------------------------------------------------------------------------------

    def templates(self) -> list[tuple[str, list[Gang], dict[str, Any], dict[str, Any]]]:
        """(template name, its gangs, policy, constraints) in definition order."""
        out: list[tuple[str, list[Gang], dict[str, Any], dict[str, Any]]] = []
        gang_instructions = self.factory.karta.gang
        if self.plan.format == "podGroup":
            shapes: dict[str, list[Gang]] = {}  # extension E1: split gangs share one template
            for gang in self.plan.gangs:
                shapes.setdefault(_template_of(gang), []).append(gang)
            for template, gangs in shapes.items():
                gang = gangs[0]
                name = dns_label(template, what="pod-group template name")
                if gang.sub_groups and not self.composite():
                    self.warnings.append(
                        f"Workload API has no sub-groups: gang {gang.name} is flattened to minCount "
                        f"{flat_min(gang)} (per-component minimums are lost)"
                    )
                    self.warnings.extend(
                        f"Workload API has no sub-groups: the topology of sub-group {sub.name} is dropped"
                        for sub in gang.sub_groups
                        if sub.topology is not None
                    )
                out.append(
                    (
                        name,
                        gangs,
                        _policy(flat_min(gang)),
                        self.constraints(gang.topology, f"gang {gang.name}"),
                    )
                )
        elif self.plan.format == "podGroups" and gang_instructions is not None:
            seen: set[str] = set()
            for group in gang_instructions.pod_groups:
                if group.name in seen:
                    continue
                seen.add(group.name)
                gangs = [g for g in self.plan.gangs if g.name == group.name]
                name = dns_label(group.name, what="pod-group template name")
                if gangs:
                    minimum = flat_min(gangs[0])
                else:
                    minimum = self.estimate(group.name, [m.component_name for m in group.members])
                out.append((name, gangs, _policy(minimum), {}))
        if len(out) > MAX_TEMPLATES:
            raise GangError(
                f"the Workload API allows at most {MAX_TEMPLATES} pod-group templates; "
                f"this definition needs {len(out)}"
            )
        return out

    def estimate(self, group: str, components: list[str]) -> int:
        """The template minimum of an alpha group before any of its pods exists: the subtree scale of
        its first member's component (its first instance when it has several)."""
        if not components:
            return 0
        component = components[0]
        ids = self.factory.component(component).instance_ids()
        instance = ids[0] if len(ids) > 1 and ids[0] else None
        minimum = subtree_scale(self.factory, component, instance)
        where = f" (instance {instance})" if instance else ""
        self.warnings.append(
            f"alpha gang {group} has no pods yet: its template is sized from component {component}{where}, "
            "and its PodGroups appear once pods exist (pass --pods)"
        )
        return minimum

    def composite(self) -> bool:
        return self.options.composite and self.version == "v1beta1"

    # --- objects ----------------------------------------------------------------------------------

    def render(self, pods: Sequence[Mapping[str, Any]]) -> Rendering:
        if not self.plan.gangs and self.plan.format is None:
            return Rendering()
        if not self.owner.uid:
            self.warnings.append(missing_uid_warning(self.owner))
        if self.options.composite and self.version != "v1beta1":
            self.warnings.append("the CompositePodGroup form needs Kubernetes 1.37; rendered flat")
        templates = self.templates()
        if self.composite() and all(g.sub_groups for _, gangs, _, _ in templates for g in gangs):
            objects = self.render_composite(templates)
        elif self.version == "v1alpha1":
            objects = self.render_v1alpha1(templates)
        else:
            objects = self.render_templates(templates)
        return Rendering(
            objects=tuple(objects), pod_patches=pod_patches(pods, self.binding), warnings=tuple(self.warnings)
        )

    def workload(self, spec_key: str, templates: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": "Workload",
            "metadata": self.metadata(self.workload_name),
            "spec": {"controllerRef": self.controller_ref(), spec_key: templates},
        }

    def render_v1alpha1(
        self, templates: list[tuple[str, list[Gang], dict[str, Any], dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        groups = []
        for name, gangs, policy, _ in templates:
            groups.append({"name": name, "policy": policy})
            for gang in gangs:
                if _policy(flat_min(gang)) != policy:
                    self.warnings.append(
                        f"Workload API v1alpha1 shares one policy per pod group: gang {gang.qualified_name} "
                        f"needs minCount {flat_min(gang)}, template {name} has {_describe(policy)}"
                    )
                ref: dict[str, str] = {"name": self.workload_name, "podGroup": name}
                if gang.keys:
                    ref["podGroupReplicaKey"] = "-".join(gang.keys)
                for pod in gang.members:
                    self.binding.setdefault(pod, ({}, {}, {"workloadRef": ref}))
        return [self.workload("podGroups", groups)]

    def back_reference(self, template: str) -> dict[str, Any]:
        if self.version == "v1alpha2":
            return {
                "podGroupTemplateRef": {
                    "workload": {"workloadName": self.workload_name, "podGroupTemplateName": template}
                }
            }
        return {"workloadRef": {"workloadName": self.workload_name, "templateName": template}}

    def render_templates(
        self, templates: list[tuple[str, list[Gang], dict[str, Any], dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        entries = [
            {"name": name, "schedulingPolicy": policy, **constraints}
            for name, _, policy, constraints in templates
        ]
        objects = [self.workload("podGroupTemplates", entries)]
        for name, gangs, _, constraints in templates:
            for gang in gangs:
                pod_group = gang_object_name(self.owner, gang, given=self.group_name)
                objects.append(
                    {
                        "apiVersion": self.api_version,
                        "kind": "PodGroup",
                        "metadata": self.metadata(pod_group),
                        "spec": {
                            **self.back_reference(name),
                            "schedulingPolicy": _policy(flat_min(gang)),
                            **constraints,
                        },
                    }
                )
                for pod in gang.members:
                    self.binding.setdefault(pod, ({}, {}, {"schedulingGroup": {"podGroupName": pod_group}}))
        return objects

    def render_composite(
        self, templates: list[tuple[str, list[Gang], dict[str, Any], dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        """1.37 with the CompositePodGroup gate: the gang is a composite of one PodGroup per sub-group."""
        entries: list[dict[str, Any]] = []
        objects: list[dict[str, Any]] = []
        for name, gangs, _, constraints in templates:
            subs = [(dns_label(sub.name, what="pod-group template name"), sub) for sub in gangs[0].sub_groups]
            entries.append(
                {
                    "name": name,
                    "schedulingPolicy": {"gang": {"minGroupCount": len(subs)}},
                    **constraints,
                    "podGroupTemplates": [
                        {
                            "name": sub_name,
                            "schedulingPolicy": _policy(sub.min_member),
                            **self.constraints(sub.topology, f"sub-group {sub.name}"),
                        }
                        for sub_name, sub in subs
                    ],
                }
            )
            for gang in gangs:  # one composite per gang (extension E1: per replica or instance)
                self.composite_gang(name, gang, constraints, objects)
        return [self.workload("compositePodGroupTemplates", entries), *objects]

    def composite_gang(
        self, template: str, gang: Gang, constraints: dict[str, Any], objects: list[dict[str, Any]]
    ) -> None:
        """One gang's CompositePodGroup, its PodGroup per sub-group, and its pods' bindings."""
        alpha3 = f"{API_GROUP}/{COMPOSITE_VERSION}"
        subs = [(dns_label(sub.name, what="pod-group template name"), sub) for sub in gang.sub_groups]
        composite_name = gang_object_name(self.owner, gang, given=self.group_name)
        objects.append(
            {
                "apiVersion": alpha3,
                "kind": "CompositePodGroup",
                "metadata": self.metadata(composite_name),
                "spec": {
                    "workloadRef": {"workloadName": self.workload_name, "templateName": template},
                    "schedulingPolicy": {"gang": {"minGroupCount": len(subs)}},
                    **constraints,
                },
            }
        )
        for sub_name, sub in subs:
            pod_group = object_name(f"{composite_name}-{sub_name}", what="PodGroup name")
            objects.append(
                {
                    "apiVersion": alpha3,
                    "kind": "PodGroup",
                    "metadata": self.metadata(pod_group),
                    "spec": {
                        "parentCompositePodGroupName": composite_name,
                        "workloadRef": {"workloadName": self.workload_name, "templateName": sub_name},
                        "schedulingPolicy": _policy(sub.min_member),
                    },
                }
            )
        for pod in gang.members:
            member_of = sub_group_of(gang, pod)
            if member_of is None:
                self.warnings.append(f"pod {pod} is in no sub-group of gang {gang.name}: not bound")
                continue
            target = object_name(f"{composite_name}-{dns_label(member_of, what='pod-group template name')}")
            self.binding.setdefault(pod, ({}, {}, {"schedulingGroup": {"podGroupName": target}}))


def _template_of(gang: Gang) -> str:
    """The template of a current-format gang: ``podGroup.name``; the gangs of a split (extension E1)
    share ``<podGroup.name>-<split component>``, the gang of the rest keeps ``podGroup.name``."""
    if gang.split in ("replica", "instance"):
        return f"{gang.name}-{gang.component}"
    return gang.name


def _describe(policy: dict[str, Any]) -> str:
    gang = policy.get("gang")
    return f"minCount {gang['minCount']}" if isinstance(gang, dict) else "basic"


def render_workload_api(
    factory: ComponentFactory,
    plan: GangPlan,
    *,
    pods: Sequence[Mapping[str, Any]] = (),
    options: WorkloadApiOptions | None = None,
) -> Rendering:
    """The Workload API objects for ``options.k8s_version`` (3.5) and the pod bindings (3.5 step 6)."""
    return _Renderer(factory, plan, options if options is not None else WorkloadApiOptions()).render(pods)
