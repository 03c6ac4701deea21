"""The Karta data model (``run.ai/v1alpha1`` ``Karta``), as immutable pydantic models.

Python attributes are snake_case; the wire names (YAML, JSON, CRD) are camelCase aliases. This
module only declares shapes; loading (strict unknown-field reporting, defaults of R1, the legacy
``ResourceInterface``) lives in :mod:`karta.model.load`, validation in :mod:`karta.model.validate`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

API_GROUP = "run.ai"
API_VERSION = "run.ai/v1alpha1"
KIND = "Karta"
LEGACY_API_VERSION = "optimization.nvidia.com/v1alpha1"
LEGACY_KIND = "ResourceInterface"


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="ignore", defer_build=True
    )


class ResourceStatus(StrEnum):
    """Normalised workload status; values are the wire strings (section 8.1)."""

    INITIALIZING = "Initializing"
    RUNNING = "Running"
    COMPLETED = "Completed"
    FAILED = "Failed"
    DEGRADED = "Degraded"
    SUSPENDED = "Suspended"
    SUSPENDING = "Suspending"
    RESUMING = "Resuming"
    UNDEFINED = "Undefined"


class GroupVersionKind(_Model):
    group: str = ""
    version: str = ""
    kind: str = ""

    def __str__(self) -> str:
        return f"{self.group}/{self.version}, Kind={self.kind}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


class TopologyConstraint(_Model):
    topology_name: str = ""
    required_topology_level: str = ""
    preferred_topology_level: str = ""


class FragmentedPodSpecDefinition(_Model):
    scheduler_name_path: str | None = None
    labels_path: str | None = None
    annotations_path: str | None = None
    resources_path: str | None = None
    resource_claims_path: str | None = None
    pod_affinity_path: str | None = None
    node_affinity_path: str | None = None
    containers_path: str | None = None
    container_path: str | None = None
    priority_class_name_path: str | None = None
    image_path: str | None = None


class SpecDefinition(_Model):
    pod_template_spec_path: str | None = None
    pod_spec_path: str | None = None
    metadata_path: str | None = None
    fragmented_pod_spec_definition: FragmentedPodSpecDefinition | None = None


class ScaleDefinition(_Model):
    replicas_path: str | None = None
    min_replicas_path: str | None = None
    max_replicas_path: str | None = None


class PhaseDefinition(_Model):
    path: str = ""


class ConditionsDefinition(_Model):
    """Field names default as in the CRD whenever a definition is loaded (R1)."""

    path: str = ""
    type_field_name: str = "type"
    status_field_name: str = "status"
    message_field_name: str = "message"
    reason_field_name: str = "reason"

    @field_validator(
        "type_field_name", "status_field_name", "message_field_name", "reason_field_name", mode="before"
    )
    @classmethod
    def _default_when_empty(cls, value: object, info: ValidationInfo) -> object:
        # R1: absent, null or "" all mean "the CRD default", whatever the source of the definition.
        if value is None or value == "":
            assert info.field_name is not None
            return _CONDITION_FIELD_DEFAULTS[info.field_name]
        return value


_CONDITION_FIELD_DEFAULTS = {
    "type_field_name": "type",
    "status_field_name": "status",
    "message_field_name": "message",
    "reason_field_name": "reason",
}


class ConditionMatcher(_Model):
    type: str = ""
    status: str = ""
    reason: str = ""


class ExpressionMatcher(_Model):
    expression: str = ""
    expected_result: str = ""


class StatusMatcher(_Model):
    by_phase: str | None = None
    by_conditions: tuple[ConditionMatcher, ...] | None = None
    by_expression: ExpressionMatcher | None = None


class StatusMappings(_Model):
    initializing: tuple[StatusMatcher, ...] = ()
    running: tuple[StatusMatcher, ...] = ()
    completed: tuple[StatusMatcher, ...] = ()
    failed: tuple[StatusMatcher, ...] = ()
    degraded: tuple[StatusMatcher, ...] = ()
    suspended: tuple[StatusMatcher, ...] = ()
    suspending: tuple[StatusMatcher, ...] = ()
    resuming: tuple[StatusMatcher, ...] = ()


class StatusDefinition(_Model):
    phase_definition: PhaseDefinition | None = None
    conditions_definition: ConditionsDefinition | None = None
    status_mappings: StatusMappings = Field(default_factory=StatusMappings)


class SuspendAction(_Model):
    path: str = ""
    value: str = ""


class SuspendDefinition(_Model):
    suspend_actions: tuple[SuspendAction, ...] = ()
    resume_actions: tuple[SuspendAction, ...] = ()


class ComponentTypeSelector(_Model):
    key_path: str | None = None
    value: str | None = None
    match_labels: dict[str, str] | None = None


class ComponentInstanceSelector(_Model):
    id_path: str = ""


class ReplicaSelector(_Model):
    key_path: str = ""


class PodSelector(_Model):
    component_type_selector: ComponentTypeSelector | None = None
    component_instance_selector: ComponentInstanceSelector | None = None
    replica_selector: ReplicaSelector | None = None


class ComponentDefinition(_Model):
    name: str = ""
    kind: GroupVersionKind | None = None
    owner_ref: str | None = None
    spec_definition: SpecDefinition | None = None
    scale_definition: ScaleDefinition | None = None
    status_definition: StatusDefinition | None = None
    suspend_definition: SuspendDefinition | None = None
    instance_id_path: str | None = None
    pod_selector: PodSelector | None = None

    @property
    def is_pod_bearing(self) -> bool:
        spec = self.spec_definition
        return spec is not None and bool(
            spec.pod_template_spec_path or spec.pod_spec_path or spec.fragmented_pod_spec_definition
        )


class StructureDefinition(_Model):
    root_component: ComponentDefinition = Field(default_factory=ComponentDefinition)
    child_components: tuple[ComponentDefinition, ...] = ()
    additional_child_kinds: tuple[GroupVersionKind, ...] = ()


class SubGroup(_Model):
    component_name: str = ""
    topology: TopologyConstraint | None = None


class PodGroup(_Model):
    """The current gang format (section 12.3)."""

    name: str = ""
    sub_groups: tuple[SubGroup, ...] = ()
    topology: TopologyConstraint | None = None


class PodGroupMember(_Model):
    component_name: str = ""
    group_by_key_paths: tuple[str, ...] = ()
    filters: tuple[str, ...] = ()


class AlphaPodGroup(_Model):
    """One entry of the deprecated alpha format ``podGroups`` (section 12.2)."""

    name: str = ""
    members: tuple[PodGroupMember, ...] = ()


class GangScheduling(_Model):
    pod_group: PodGroup | None = None
    pod_groups: tuple[AlphaPodGroup, ...] = ()


class OptimizationInstructions(_Model):
    gang_scheduling: GangScheduling | None = None


class KartaSpec(_Model):
    structure_definition: StructureDefinition = Field(default_factory=StructureDefinition)
    optimization_instructions: OptimizationInstructions = Field(default_factory=OptimizationInstructions)


class ObjectMeta(BaseModel):
    """Kubernetes ObjectMeta; kept permissive (the API server owns its schema)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="allow")

    name: str = ""
    namespace: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    uid: str | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    resource_version: str | None = None
    generation: int | None = None


class KartaStatus(_Model):
    conditions: tuple[dict[str, Any], ...] = ()


class Karta(_Model):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: KartaSpec = Field(default_factory=KartaSpec)
    status: KartaStatus | None = None

    @field_validator("status", mode="after")
    @classmethod
    def _no_empty_status(cls, value: KartaStatus | None) -> KartaStatus | None:
        # An empty status is no status: it is omitted on output, so it must compare equal to absent.
        return value if value is not None and value.conditions else None

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def root(self) -> ComponentDefinition:
        return self.spec.structure_definition.root_component

    @property
    def children(self) -> tuple[ComponentDefinition, ...]:
        return self.spec.structure_definition.child_components

    @property
    def components(self) -> tuple[ComponentDefinition, ...]:
        """Root first, then children in definition order."""
        return (self.root, *self.children)

    @property
    def root_gvk(self) -> GroupVersionKind | None:
        return self.root.kind

    @property
    def gang(self) -> GangScheduling | None:
        return self.spec.optimization_instructions.gang_scheduling

    def to_dict(self) -> dict[str, Any]:
        """The wire form (camelCase, unset fields omitted, ``optimizationInstructions`` kept)."""
        from karta.model.dump import karta_to_dict  # dump imports this module

        return karta_to_dict(self)
