"""karta: one engine for every Kubernetes AI workload type, driven by declarative Karta definitions.

The public library API (the layers below ``karta.kube``) is re-exported here and pinned by a test.
Names are resolved lazily (PEP 562) so that ``import karta`` stays cheap for the CLI's start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_getattr

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # errors
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
    # jq
    "Evaluator": "karta.jq",
    # model
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
    # status
    "StatusResult": "karta.status",
    "Condition": "karta.status",
    "extract_status": "karta.status",
    # extraction
    "ComponentFactory": "karta.extract",
    "Component": "karta.extract",
    "Scale": "karta.extract",
    "ExtractedInstance": "karta.extract",
    "PodQuerier": "karta.extract",
    "build_tree": "karta.extract",
    # gangs
    "StructureSummary": "karta.gang",
    "infer_pod_component": "karta.gang",
    "effective_member": "karta.gang",
    "infer_pod_instance": "karta.gang",
    "subtree_scale": "karta.gang",
    "subtree_desired": "karta.gang",
    "compute_gang_plan": "karta.gang",
    "GangPlan": "karta.gang",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return list(__all__)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.errors import (  # noqa: F401
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
        PodQueryError,
        StatusError,
        ValidationError,
        WriteBackError,
    )
