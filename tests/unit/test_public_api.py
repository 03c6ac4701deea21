"""The library's public surface is pinned: a change here is an API change."""

from __future__ import annotations

import importlib

import karta

EXPECTED = {
    "__version__",
    "KartaError",
    "JqError",
    "JqParseError",
    "JqCompileError",
    "JqRuntimeError",
    "JqTimeoutError",
    "JqResultLimitError",
    "DefinitionError",
    "ValidationError",
    "ExtractionError",
    "ConversionError",
    "StatusError",
    "WriteBackError",
    "PodQueryError",
    "InstanceNotFoundError",
    "GangError",
    "ResolutionError",
    "NoDefinitionError",
    "AmbiguousDefinitionError",
    "Evaluator",
    "Karta",
    "ComponentDefinition",
    "GroupVersionKind",
    "GVK",
    "ResourceStatus",
    "Finding",
    "Severity",
    "LoadResult",
    "load_karta",
    "load_kartas",
    "karta_from_dict",
    "validate_karta",
    "karta_to_dict",
    "karta_to_yaml",
    "StatusResult",
    "Condition",
    "extract_status",
    "ComponentFactory",
    "Component",
    "Scale",
    "ExtractedInstance",
    "PodQuerier",
    "build_tree",
    "StructureSummary",
    "infer_pod_component",
    "effective_member",
    "infer_pod_instance",
    "subtree_scale",
    "subtree_desired",
    "compute_gang_plan",
    "GangPlan",
}


def test_all_is_pinned() -> None:
    assert set(karta.__all__) == EXPECTED


def test_every_export_resolves() -> None:
    for name in karta.__all__:
        assert getattr(karta, name) is not None, name


def test_import_is_lazy() -> None:
    # importing the package must not pull in the engines (kli start-up budget)
    import subprocess
    import sys

    code = "import sys, karta; print(any(m in sys.modules for m in ('jq', 'pydantic', 'yaml')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    assert importlib.import_module("karta").__version__
