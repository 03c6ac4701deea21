"""The built-in catalog as data: every file loads strictly and validates with zero findings (but the
note that marks karta extension E1, on exactly the definitions that use it), names follow section
18.1, one definition per root GVK, and the catalog API hands out sorted copies."""

from __future__ import annotations

from pathlib import Path

import pytest

import karta.catalog as catalog
from karta.errors import DefinitionError
from karta.extract.fragments import FIELDS as FRAGMENT_FIELDS
from karta.jq.bound import bound_names
from karta.model import Karta, load_karta, validate_karta
from karta.model.findings import Severity
from karta.model.types import ComponentDefinition
from karta.model.validate_external import EXTERNAL_NOTE, external_components
from karta.model.validate_gang import SPLIT_PATH
from karta.model.validate_references import REFERENCES_NOTE, REFERENCES_PATH

FILES = sorted(catalog.CATALOG_DATA_DIR.glob("*.yaml"))


def test_catalog_has_at_least_35_root_gvks() -> None:
    definitions = catalog.catalog_definitions()
    kinds = {(k.root_gvk.group, k.root_gvk.kind) for k in definitions if k.root_gvk}
    assert len(definitions) >= 35
    # Four kinds ship two versions: MPIJob, DynamoGraphDeployment, LLMInferenceService, Notebook.
    assert len(kinds) == len(definitions) - 4


def _component_locations(karta: Karta) -> list[tuple[str, ComponentDefinition]]:
    structure = karta.spec.structure_definition
    return [("rootComponent", structure.root_component)] + [
        (f"childComponents[{i}]", c) for i, c in enumerate(structure.child_components)
    ]


def _pod_spec_paths(component: ComponentDefinition) -> list[tuple[str, str]]:
    """The pod spec paths of ``component`` (``podTemplateSpecPath``, the fragmented fields), as
    (field, expression)."""
    spec = component.spec_definition
    if spec is None:
        return []
    out = [("podTemplateSpecPath", spec.pod_template_spec_path or "")]
    fragmented = spec.fragmented_pod_spec_definition
    if fragmented is not None:
        out += [
            (f"fragmentedPodSpecDefinition.{field.path_field}", getattr(fragmented, field.attr) or "")
            for field in FRAGMENT_FIELDS
        ]
    return out


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_builtin_loads_strictly_with_zero_findings(path: Path) -> None:
    result = load_karta(path, strict=True)
    assert result.karta is not None
    findings = list(result.findings) + validate_karta(result.karta)
    gang = result.karta.gang
    splits = gang is not None and gang.pod_group is not None and gang.pod_group.split is not None
    # Extension E1 is marked (kli validate tells authors KAI's own reader ignores it): one note, no more.
    marks = [f for f in findings if f.severity == Severity.NOTE and f.location == SPLIT_PATH]
    assert len(marks) == (1 if splits else 0)
    # Extension E2 likewise: one note per component that selects its pods by labels.
    external = [f for f in findings if f.severity == Severity.NOTE and f.message == EXTERNAL_NOTE]
    assert len(external) == len(external_components(result.karta))
    # Extension E3: one note on the definitions with references, and an R6 warning (E3.3.7) for each
    # pod spec path that merges a referenced object (a value, not a path: karta never writes it).
    references = result.karta.spec.structure_definition.references
    e3 = [f for f in findings if f.location == REFERENCES_PATH and f.message == REFERENCES_NOTE]
    assert len(e3) == (1 if references else 0)
    names = frozenset(r.name for r in references)
    merged = {
        f"spec.structureDefinition.{where}.specDefinition.{field}"
        for where, c in _component_locations(result.karta)
        for field, expression in _pod_spec_paths(c)
        if bound_names(expression, names)
    }
    r6 = [
        f
        for f in findings
        if f.severity == Severity.WARNING and any(f"at '{m}'" in f.message for m in merged)
    ]
    assert len(r6) == len(merged)
    rest = [f for f in findings if f not in marks and f not in external and f not in e3 and f not in r6]
    assert [f"{f.severity}: {f.message} ({f.location})" for f in rest] == []


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_file_name_is_metadata_name_is_slug(path: Path) -> None:
    result = load_karta(path, strict=True)
    assert result.karta is not None and result.karta.root_gvk is not None
    assert result.karta.name == path.stem == catalog.slug_for(result.karta.root_gvk)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_file_layout_spdx_then_api_version_then_kind(path: Path) -> None:
    lines = path.read_text().splitlines()
    assert lines[0] == "# SPDX-License-Identifier: Apache-2.0"
    data = [line for line in lines if line and not line.startswith("#")]
    assert data[:2] == ["apiVersion: run.ai/v1alpha1", "kind: Karta"]


def test_one_definition_per_root_gvk() -> None:
    gvks = [str(k.root_gvk) for k in catalog.catalog_definitions()]
    assert len(gvks) == len(set(gvks)) == len(FILES)


def test_listing_is_sorted_by_gvk_string() -> None:
    gvks = [str(k.root_gvk) for k in catalog.catalog_definitions()]
    assert gvks == sorted(gvks)
    assert catalog.catalog_slugs() == [k.name for k in catalog.catalog_definitions()]


def test_lookup_by_exact_gvk() -> None:
    karta = catalog.catalog_by_gvk("kubeflow.org", "v2beta1", "MPIJob")
    assert karta is not None and karta.name == "kubeflow-org-mpijob-v2beta1"
    assert catalog.catalog_by_gvk("kubeflow.org", "v9", "MPIJob") is None
    assert catalog.catalog_by_gvk("", "v1", "Pod") is not None


def test_returned_definitions_are_copies() -> None:
    first = catalog.catalog_by_gvk("batch", "v1", "Job")
    second = catalog.catalog_by_gvk("batch", "v1", "Job")
    assert first is not None and second is not None
    assert first == second and first is not second
    assert first.metadata is not second.metadata
    listed = catalog.catalog_definitions()
    assert all(a is not b for a, b in zip(listed, catalog.catalog_definitions(), strict=True))
    # Mutable parts (label maps) of a copy never reach the catalog.
    first.metadata.labels["x"] = "y"
    again = catalog.catalog_by_gvk("batch", "v1", "Job")
    assert again is not None and "x" not in again.metadata.labels


def _write(directory: Path, name: str, text: str) -> None:
    (directory / name).write_text(text)


_POD = """# SPDX-License-Identifier: Apache-2.0
apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: {name}
spec:
  structureDefinition:
    rootComponent:
      name: pod
      kind: {{group: "", version: v1, kind: Pod}}
      specDefinition:
        podTemplateSpecPath: .
      statusDefinition:
        phaseDefinition: {{path: .status.phase}}
        statusMappings:
          running: [{{byPhase: Running}}]
"""


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(catalog, "CATALOG_DATA_DIR", tmp_path)
    catalog._catalog.cache_clear()
    yield tmp_path
    catalog._catalog.cache_clear()


def test_duplicate_root_gvk_is_an_error(data_dir: Path) -> None:
    _write(data_dir, "core-pod-v1.yaml", _POD.format(name="core-pod-v1"))
    _write(data_dir, "zz-copy.yaml", _POD.format(name="zz-copy"))
    with pytest.raises(DefinitionError, match="duplicate root GVK"):
        catalog.catalog_definitions()


def test_name_not_matching_slug_is_an_error(data_dir: Path) -> None:
    _write(data_dir, "pod.yaml", _POD.format(name="pod"))
    with pytest.raises(DefinitionError, match="slug"):
        catalog.catalog_definitions()


def test_any_finding_in_a_builtin_is_an_error(data_dir: Path) -> None:
    text = _POD.format(name="core-pod-v1").replace("running: [{byPhase: Running}]", "running: [{}]")
    _write(data_dir, "core-pod-v1.yaml", text)
    with pytest.raises(DefinitionError, match="empty status matcher"):
        catalog.catalog_definitions()


def test_valid_directory_loads(data_dir: Path) -> None:
    _write(data_dir, "core-pod-v1.yaml", _POD.format(name="core-pod-v1"))
    assert catalog.catalog_slugs() == ["core-pod-v1"]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_additional_child_kinds_are_not_components(path: Path) -> None:
    """R12: no kind is both a component and an additional child kind, and none is listed twice."""
    karta = load_karta(path, strict=True).karta
    assert karta is not None
    extra = [str(k) for k in karta.spec.structure_definition.additional_child_kinds]
    components = {str(c.kind) for c in karta.components if c.kind is not None}
    assert len(extra) == len(set(extra))
    assert components.isdisjoint(extra)
