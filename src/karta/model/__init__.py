"""The Karta model: types, loading (strict, R1 defaults, R17), validation and serialisation.

Everything other layers need is exported here; the submodules are implementation detail.
Names are resolved lazily (PEP 562) so that ``kli validate`` does not import the YAML writer or
other parts it does not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "API_GROUP": "karta.model.types",
    "API_VERSION": "karta.model.types",
    "KIND": "karta.model.types",
    "LEGACY_API_VERSION": "karta.model.types",
    "LEGACY_KIND": "karta.model.types",
    "AlphaPodGroup": "karta.model.types",
    "ComponentDefinition": "karta.model.types",
    "ComponentInstanceSelector": "karta.model.types",
    "ComponentTypeSelector": "karta.model.types",
    "ConditionMatcher": "karta.model.types",
    "ConditionsDefinition": "karta.model.types",
    "ExpressionMatcher": "karta.model.types",
    "Finding": "karta.model.findings",
    "FragmentedPodSpecDefinition": "karta.model.types",
    "GangScheduling": "karta.model.types",
    "GVK": "karta.model.gvk",
    "GroupKind": "karta.model.gvk",
    "GroupVersionKind": "karta.model.types",
    "Karta": "karta.model.types",
    "KartaSpec": "karta.model.types",
    "KartaStatus": "karta.model.types",
    "LoadResult": "karta.model.load",
    "ObjectMeta": "karta.model.types",
    "OptimizationInstructions": "karta.model.types",
    "PhaseDefinition": "karta.model.types",
    "PodGroup": "karta.model.types",
    "PodGroupMember": "karta.model.types",
    "PodSelector": "karta.model.types",
    "ReplicaSelector": "karta.model.types",
    "ResourceStatus": "karta.model.types",
    "ScaleDefinition": "karta.model.types",
    "Severity": "karta.model.findings",
    "SpecDefinition": "karta.model.types",
    "StatusDefinition": "karta.model.types",
    "StatusMappings": "karta.model.types",
    "StatusMatcher": "karta.model.types",
    "StructureDefinition": "karta.model.types",
    "SubGroup": "karta.model.types",
    "SuspendAction": "karta.model.types",
    "SuspendDefinition": "karta.model.types",
    "TopologyConstraint": "karta.model.types",
    "karta_from_dict": "karta.model.load",
    "karta_to_dict": "karta.model.dump",
    "karta_to_yaml": "karta.model.dump",
    "load_karta": "karta.model.load",
    "load_kartas": "karta.model.load",
    "validate_karta": "karta.model.validate",
    "validate_or_raise": "karta.model.validate",
}

__all__ = [
    "API_GROUP",
    "API_VERSION",
    "GVK",
    "KIND",
    "LEGACY_API_VERSION",
    "LEGACY_KIND",
    "AlphaPodGroup",
    "ComponentDefinition",
    "ComponentInstanceSelector",
    "ComponentTypeSelector",
    "ConditionMatcher",
    "ConditionsDefinition",
    "ExpressionMatcher",
    "Finding",
    "FragmentedPodSpecDefinition",
    "GangScheduling",
    "GroupKind",
    "GroupVersionKind",
    "Karta",
    "KartaSpec",
    "KartaStatus",
    "LoadResult",
    "ObjectMeta",
    "OptimizationInstructions",
    "PhaseDefinition",
    "PodGroup",
    "PodGroupMember",
    "PodSelector",
    "ReplicaSelector",
    "ResourceStatus",
    "ScaleDefinition",
    "Severity",
    "SpecDefinition",
    "StatusDefinition",
    "StatusMappings",
    "StatusMatcher",
    "StructureDefinition",
    "SubGroup",
    "SuspendAction",
    "SuspendDefinition",
    "TopologyConstraint",
    "karta_from_dict",
    "karta_to_dict",
    "karta_to_yaml",
    "load_karta",
    "load_kartas",
    "validate_karta",
    "validate_or_raise",
]


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


__dir__ = lazy_dir(_EXPORTS, globals())


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.model.dump import karta_to_dict, karta_to_yaml
    from karta.model.findings import Finding, Severity
    from karta.model.gvk import GVK, GroupKind
    from karta.model.load import LoadResult, karta_from_dict, load_karta, load_kartas
    from karta.model.types import (
        API_GROUP,
        API_VERSION,
        KIND,
        LEGACY_API_VERSION,
        LEGACY_KIND,
        AlphaPodGroup,
        ComponentDefinition,
        ComponentInstanceSelector,
        ComponentTypeSelector,
        ConditionMatcher,
        ConditionsDefinition,
        ExpressionMatcher,
        FragmentedPodSpecDefinition,
        GangScheduling,
        GroupVersionKind,
        Karta,
        KartaSpec,
        KartaStatus,
        ObjectMeta,
        OptimizationInstructions,
        PhaseDefinition,
        PodGroup,
        PodGroupMember,
        PodSelector,
        ReplicaSelector,
        ResourceStatus,
        ScaleDefinition,
        SpecDefinition,
        StatusDefinition,
        StatusMappings,
        StatusMatcher,
        StructureDefinition,
        SubGroup,
        SuspendAction,
        SuspendDefinition,
        TopologyConstraint,
    )
    from karta.model.validate import validate_karta, validate_or_raise
