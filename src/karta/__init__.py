"""karta: one engine for every Kubernetes AI workload type, driven by declarative Karta definitions.

The public library API (the layers below ``karta.kube``) is re-exported here and pinned by a test.
Names are resolved lazily (PEP 562) so that ``import karta`` stays cheap for the CLI's start-up;
the ``TYPE_CHECKING`` block imports the same names and ``__all__`` is a literal list, so that type
checkers see each one precisely (``tests/unit/test_typed_surface.py`` checks both agree).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "KartaError": "karta.errors",
    "JqError": "karta.errors",
    "JqParseError": "karta.errors",
    "JqCompileError": "karta.errors",
    "JqRuntimeError": "karta.errors",
    "JqTimeoutError": "karta.errors",
    "JqResultLimitError": "karta.errors",
    "DefinitionError": "karta.errors",
    "ValidationError": "karta.errors",
    "ExtractionError": "karta.errors",
    "ConversionError": "karta.errors",
    "StatusError": "karta.errors",
    "WriteBackError": "karta.errors",
    "PodQueryError": "karta.errors",
    "InstanceNotFoundError": "karta.errors",
    "GangError": "karta.errors",
    "ResolutionError": "karta.errors",
    "NoDefinitionError": "karta.errors",
    "AmbiguousDefinitionError": "karta.errors",
    "Evaluator": "karta.jq",
    "Karta": "karta.model",
    "ComponentDefinition": "karta.model",
    "GroupVersionKind": "karta.model",
    "ResourceStatus": "karta.model",
    "Finding": "karta.model",
    "Severity": "karta.model",
    "LoadResult": "karta.model",
    "load_karta": "karta.model",
    "load_kartas": "karta.model",
    "karta_from_dict": "karta.model",
    "validate_karta": "karta.model",
    "karta_to_dict": "karta.model",
    "karta_to_yaml": "karta.model",
    "GVK": "karta.model",
    "StatusResult": "karta.status",
    "Condition": "karta.status",
    "extract_status": "karta.status",
    "ComponentFactory": "karta.extract",
    "Component": "karta.extract",
    "Scale": "karta.extract",
    "ExtractedInstance": "karta.extract",
    "PodQuerier": "karta.extract",
    "build_tree": "karta.extract",
    "StructureSummary": "karta.gang",
    "infer_pod_component": "karta.gang",
    "effective_member": "karta.gang",
    "infer_pod_instance": "karta.gang",
    "subtree_scale": "karta.gang",
    "subtree_desired": "karta.gang",
    "compute_gang_plan": "karta.gang",
    "GangPlan": "karta.gang",
}

__all__ = [
    "GVK",
    "AmbiguousDefinitionError",
    "Component",
    "ComponentDefinition",
    "ComponentFactory",
    "Condition",
    "ConversionError",
    "DefinitionError",
    "Evaluator",
    "ExtractedInstance",
    "ExtractionError",
    "Finding",
    "GangError",
    "GangPlan",
    "GroupVersionKind",
    "InstanceNotFoundError",
    "JqCompileError",
    "JqError",
    "JqParseError",
    "JqResultLimitError",
    "JqRuntimeError",
    "JqTimeoutError",
    "Karta",
    "KartaError",
    "LoadResult",
    "NoDefinitionError",
    "PodQuerier",
    "PodQueryError",
    "ResolutionError",
    "ResourceStatus",
    "Scale",
    "Severity",
    "StatusError",
    "StatusResult",
    "StructureSummary",
    "ValidationError",
    "WriteBackError",
    "__version__",
    "build_tree",
    "compute_gang_plan",
    "effective_member",
    "extract_status",
    "infer_pod_component",
    "infer_pod_instance",
    "karta_from_dict",
    "karta_to_dict",
    "karta_to_yaml",
    "load_karta",
    "load_kartas",
    "subtree_desired",
    "subtree_scale",
    "validate_karta",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.errors import (
        AmbiguousDefinitionError,
        ConversionError,
        DefinitionError,
        ExtractionError,
        GangError,
        InstanceNotFoundError,
        JqCompileError,
        JqError,
        JqParseError,
        JqResultLimitError,
        JqRuntimeError,
        JqTimeoutError,
        KartaError,
        NoDefinitionError,
        PodQueryError,
        ResolutionError,
        StatusError,
        ValidationError,
        WriteBackError,
    )
    from karta.extract import (
        Component,
        ComponentFactory,
        ExtractedInstance,
        PodQuerier,
        Scale,
        build_tree,
    )
    from karta.gang import (
        GangPlan,
        StructureSummary,
        compute_gang_plan,
        effective_member,
        infer_pod_component,
        infer_pod_instance,
        subtree_desired,
        subtree_scale,
    )
    from karta.jq import (
        Evaluator,
    )
    from karta.model import (
        GVK,
        ComponentDefinition,
        Finding,
        GroupVersionKind,
        Karta,
        LoadResult,
        ResourceStatus,
        Severity,
        karta_from_dict,
        karta_to_dict,
        karta_to_yaml,
        load_karta,
        load_kartas,
        validate_karta,
    )
    from karta.status import (
        Condition,
        StatusResult,
        extract_status,
    )
