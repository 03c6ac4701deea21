"""The Karta data model (``run.ai/v1alpha1`` ``Karta``), as immutable models (:mod:`karta.model.base`).

Python attributes are snake_case; the wire names (YAML, JSON, CRD) are camelCase aliases. This
module only declares shapes; loading (strict unknown-field reporting, defaults of R1, the legacy
``ResourceInterface``) lives in :mod:`karta.model.load`, validation in :mod:`karta.model.validate`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from karta.model.base import Model, field
from karta.model.gvk import GVK

API_GROUP = "run.ai"
API_VERSION = "run.ai/v1alpha1"
KIND = "Karta"
LEGACY_API_VERSION = "optimization.nvidia.com/v1alpha1"
LEGACY_KIND = "ResourceInterface"


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


class GroupVersionKind(Model):
    group: str = ""
    version: str = ""
    kind: str = ""

    def __str__(self) -> str:
        return f"{self.group}/{self.version}, Kind={self.kind}"

    @property
    def api_version(self) -> str:
        return self.gvk.api_version

    @property
    def gvk(self) -> GVK:
        return GVK(self.group, self.version, self.kind)


class TopologyConstraint(Model):
    topology_name: str = ""
    required_topology_level: str = ""
    preferred_topology_level: str = ""


class FragmentedPodSpecDefinition(Model):
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


class SpecDefinition(Model):
    pod_template_spec_path: str | None = None
    pod_spec_path: str | None = None
    metadata_path: str | None = None
    fragmented_pod_spec_definition: FragmentedPodSpecDefinition | None = None


class ScaleDefinition(Model):
    replicas_path: str | None = None
    min_replicas_path: str | None = None
    max_replicas_path: str | None = None


class PhaseDefinition(Model):
    path: str = ""


class ConditionsDefinition(Model):
    """Field names default as in the CRD whenever a definition is loaded (R1)."""

    path: str = ""
    type_field_name: str = "type"
    status_field_name: str = "status"
    message_field_name: str = "message"
    reason_field_name: str = "reason"


def _condition_field_default(name: str) -> Any:
    def before(value: object) -> object:
        # R1: absent, null or "" all mean "the CRD default", whatever the source of the definition.
        return name if value is None or value == "" else value

    return before


ConditionsDefinition.__before__ = {
    f"{name}_field_name": _condition_field_default(name) for name in ("type", "status", "message", "reason")
}


class ConditionMatcher(Model):
    type: str = ""
    status: str = ""
    reason: str = ""


class ExpressionMatcher(Model):
    expression: str = ""
    expected_result: str = ""


class StatusMatcher(Model):
    by_phase: str | None = None
    by_conditions: tuple[ConditionMatcher, ...] | None = None
    by_expression: ExpressionMatcher | None = None


class StatusMappings(Model):
    initializing: tuple[StatusMatcher, ...] = ()
    running: tuple[StatusMatcher, ...] = ()
    completed: tuple[StatusMatcher, ...] = ()
    failed: tuple[StatusMatcher, ...] = ()
    degraded: tuple[StatusMatcher, ...] = ()
    suspended: tuple[StatusMatcher, ...] = ()
    suspending: tuple[StatusMatcher, ...] = ()
    resuming: tuple[StatusMatcher, ...] = ()


class StatusDefinition(Model):
    phase_definition: PhaseDefinition | None = None
    conditions_definition: ConditionsDefinition | None = None
    status_mappings: StatusMappings = field(default_factory=StatusMappings)


class SuspendAction(Model):
    path: str = ""
    value: str = ""


class SuspendDefinition(Model):
    suspend_actions: tuple[SuspendAction, ...] = ()
    resume_actions: tuple[SuspendAction, ...] = ()


class ComponentTypeSelector(Model):
    key_path: str | None = None
    value: str | None = None
    match_labels: dict[str, str] | None = None


class ComponentInstanceSelector(Model):
    id_path: str = ""


class ReplicaSelector(Model):
    key_path: str = ""


class ExternalPods(Model):
    """Karta extension E2 (docs/format-extensions.md): the component's pods are not the
    workload's own (no controller-owner chain reaches the workload, 17.5 rule 2) but carry labels
    computed from the workload, such as the Helm releases an operator installs next to it.
    ``matchLabelsExpression`` is object-side jq yielding one label map (or null / ``{}``: none)."""

    match_labels_expression: str = ""


class PodSelector(Model):
    component_type_selector: ComponentTypeSelector | None = None
    component_instance_selector: ComponentInstanceSelector | None = None
    replica_selector: ReplicaSelector | None = None
    external_pods: ExternalPods | None = None
    """Extension E2: pods found by labels in the workload's namespace, outside the owner chain."""


class ComponentDefinition(Model):
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


class LookupReference(Model):
    """Extension E3: one object by name; ``nameExpression`` is object-side jq yielding its name."""

    name_expression: str = ""


class ReferenceRequirement(Model):
    """Extension E3: one ``matchExpressions`` entry of a list reference (a Kubernetes label
    selector requirement); each value is a label value (literal) or else a jq expression
    (:func:`karta.model.validate_references.is_literal`)."""

    key: str = ""
    operator: str = ""
    values: tuple[str, ...] = ()


class ListReference(Model):
    """Extension E3: the objects a label selector matches; a ``matchLabels`` value that is a
    valid label value is literal, any other is a jq expression (object-side, one string)."""

    match_labels: dict[str, str] | None = None
    match_expressions: tuple[ReferenceRequirement, ...] = ()


class Reference(Model):
    """Karta extension E3 (docs/format-extensions.md): a related object (or list of objects) the
    consumer fetches before any expression runs, bound in every jq expression as ``$<name>``:
    an object or null for ``lookup``, an array for ``list``."""

    name: str = ""
    gvk: GroupVersionKind | None = None
    namespace_expression: str | None = None
    lookup: LookupReference | None = None
    list: ListReference | None = None


class StructureDefinition(Model):
    root_component: ComponentDefinition = field(default_factory=ComponentDefinition)
    child_components: tuple[ComponentDefinition, ...] = ()
    additional_child_kinds: tuple[GroupVersionKind, ...] = ()
    references: tuple[Reference, ...] = ()
    """Extension E3: related objects bound as ``$<name>`` in every expression."""


class SubGroup(Model):
    component_name: str = ""
    topology: TopologyConstraint | None = None


SPLIT_BY = ("replica", "instance")
"""The values of ``split.by`` (extension E1)."""

SPLIT_INDEXES = ("dense", "observed")
"""The values of ``split.indexes`` (extension E1): which replica indexes are the gangs."""


class GangSplit(Model):
    """Karta extension E1 (docs/format-extensions.md): one gang per replica or per instance of a
    component, instead of one per workload. KAI's own Karta reader ignores it."""

    component_name: str = ""
    by: str = ""
    group_by_key_paths: tuple[str, ...] = ()
    when: str | None = None
    replica_size_path: str | None = None
    """Object-side jq, one positive integer per instance of the split component: the pods of one
    replica, for a component that counts pods (replicas x hosts). Only with ``by: replica``."""
    indexes: str | None = None
    """``dense`` (absent: 0 .. count-1) or ``observed`` (the indexes the pods carry, completed with
    the lowest free ones: an operator that removes any replica on scale-down). Only with ``by: replica``."""


class PodGroup(Model):
    """The current gang format (section 12.3); ``split`` is karta extension E1."""

    name: str = ""
    sub_groups: tuple[SubGroup, ...] = ()
    topology: TopologyConstraint | None = None
    split: GangSplit | None = None


class PodGroupMember(Model):
    component_name: str = ""
    group_by_key_paths: tuple[str, ...] = ()
    filters: tuple[str, ...] = ()


class AlphaPodGroup(Model):
    """One entry of the deprecated alpha format ``podGroups`` (section 12.2)."""

    name: str = ""
    members: tuple[PodGroupMember, ...] = ()


class GangScheduling(Model):
    pod_group: PodGroup | None = None
    pod_groups: tuple[AlphaPodGroup, ...] = ()


class OptimizationInstructions(Model):
    gang_scheduling: GangScheduling | None = None


class KartaSpec(Model):
    structure_definition: StructureDefinition = field(default_factory=StructureDefinition)
    optimization_instructions: OptimizationInstructions = field(default_factory=OptimizationInstructions)


class ObjectMeta(Model, extra="allow"):
    """Kubernetes ObjectMeta; kept permissive (the API server owns its schema)."""

    name: str = ""
    namespace: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    uid: str | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    resource_version: str | None = None
    generation: int | None = None


class KartaStatus(Model):
    conditions: tuple[dict[str, Any], ...] = ()


class Karta(Model):
    # Derived values cached outside ``__dict__`` (so equality, hashing, copies and pickles ignore
    # them); a copy starts without them. Safe because the model never changes after construction.
    __slots__ = ("_components_cache",)

    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: KartaSpec = field(default_factory=KartaSpec)
    status: KartaStatus | None = None

    def __model_post__(self) -> None:
        # An empty status is no status: it is omitted on output, so it must compare equal to absent.
        if self.status is not None and not self.status.conditions:
            self.__dict__["status"] = None

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
        """Root first, then children in definition order (computed once per object)."""
        try:
            cached: tuple[ComponentDefinition, ...] = self._components_cache
        except AttributeError:
            cached = (self.root, *self.children)
            _set_components_cache(self, cached)
        return cached

    @property
    def root_gvk(self) -> GroupVersionKind | None:
        return self.root.kind

    @property
    def gang(self) -> GangScheduling | None:
        return self.spec.optimization_instructions.gang_scheduling


_set_components_cache = Karta._components_cache.__set__  # type: ignore[attr-defined]
