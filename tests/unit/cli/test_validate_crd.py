"""``kli validate --crd CRD.yaml DEF``: a definition checked against its CRD's schema, offline
(issue 12 item 6); the check itself is pinned in tests/unit/schema, the whole catalog in
tests/catalog/test_catalog_schema.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CORPUS_CRDS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "crds"
PYTORCH_CRD = CORPUS_CRDS / "kubeflow.org_pytorchjobs.yaml"
ARGO_CRD = CORPUS_CRDS / "argoproj.io_workflows.yaml"
WHERE = "spec.versions[v1].schema.openAPIV3Schema"


@pytest.fixture
def pytorch(examples: Path) -> Path:
    return examples / "definitions/kubeflow-org-pytorchjob-v1.yaml"


@pytest.fixture
def typo(pytorch: Path, tmp_path: Path) -> Path:
    text = pytorch.read_text().replace(
        ".spec.pytorchReplicaSpecs.Worker.template", ".spec.replicaSpecs.Worker.template"
    )
    path = tmp_path / "typo.yaml"
    path.write_text(text)
    return path


def test_a_definition_that_fits_its_crd(kli, pytorch: Path) -> None:
    r = kli("validate", "--crd", str(PYTORCH_CRD), str(pytorch))
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == (
        "OK: kubeflow-org-pytorchjob-v1 is a valid Karta definition (GVK: kubeflow.org/v1, Kind=PyTorchJob)"
    )
    assert lines[1].startswith("  fits CRD pytorchjobs.kubeflow.org (v1): ")
    assert lines[1].endswith(" found in its schema")
    assert r.err == ""


def test_a_typo_is_a_finding_with_both_paths(kli, typo: Path) -> None:
    r = kli("validate", "--crd", str(PYTORCH_CRD), str(typo))
    assert r.code == 1
    assert r.out.splitlines() == [
        "INVALID: kubeflow-org-pytorchjob-v1",
        f"  .spec.replicaSpecs is not in the schema of kubeflow.org/v1 PyTorchJob: {WHERE}.properties.spec: "
        "it has no field 'replicaSpecs'; did you mean 'pytorchReplicaSpecs'? "
        "(at spec.structureDefinition.childComponents[1].specDefinition.podTemplateSpecPath)",
    ]
    assert r.err.splitlines()[-1] == "error: 1 finding in kubeflow-org-pytorchjob-v1"


def test_json_rows_carry_the_schema_path(kli, typo: Path) -> None:
    r = kli("validate", "-o", "json", "--crd", str(PYTORCH_CRD), str(typo))
    assert r.code == 1
    (row,) = json.loads(r.out)
    assert row["severity"] == "error"
    assert row["path"] == "spec.structureDefinition.childComponents[1].specDefinition.podTemplateSpecPath"
    assert row["schemaPath"] == f"{WHERE}.properties.spec.properties.replicaSpecs"


def test_preserve_unknown_fields_makes_notes_not_a_pass(kli, examples: Path) -> None:
    catalog = (
        Path(__file__).resolve().parents[3] / "src/karta/catalog/data/argoproj-io-workflow-v1alpha1.yaml"
    )
    r = kli("validate", "--crd", str(ARGO_CRD), str(catalog))
    assert r.code == 0, r.err
    assert "not checked (notes on stderr)" in r.out.splitlines()[1]
    notes = r.err.splitlines()
    assert notes and all(n.startswith("note: not checked: ") for n in notes)
    assert any("x-kubernetes-preserve-unknown-fields" in n for n in notes)
    rows = json.loads(kli("validate", "-o", "json", "--crd", str(ARGO_CRD), str(catalog)).out)
    assert rows and {row["severity"] for row in rows} == {"note"}


def test_a_definition_without_its_crd_is_not_checked(kli, pytorch: Path) -> None:
    """Issue 28: not checked is neither a pass nor INVALID: an OK line (the definition itself is
    valid) with the reason under it, exit 0; -o json has it as a note."""
    r = kli("validate", "--crd", str(ARGO_CRD), str(pytorch))
    assert r.code == 0, r.err
    assert r.out.splitlines() == [
        "OK: kubeflow-org-pytorchjob-v1 is a valid Karta definition (GVK: kubeflow.org/v1, Kind=PyTorchJob)",
        "  not checked against a CRD: the --crd files define no CRD for kubeflow.org/PyTorchJob",
    ]
    assert r.err == ""
    (row,) = json.loads(kli("validate", "-o", "json", "--crd", str(ARGO_CRD), str(pytorch)).out)
    assert row["severity"] == "note"
    assert row["path"] == "spec.structureDefinition.rootComponent.kind"


def test_several_crd_files_and_definitions(kli, pytorch: Path, typo: Path) -> None:
    r = kli("validate", "--crd", str(ARGO_CRD), "--crd", str(PYTORCH_CRD), str(pytorch), str(typo))
    assert r.code == 1, r.err
    assert r.out.startswith(
        "OK: kubeflow-org-pytorchjob-v1 is a valid Karta definition "
        f"(GVK: kubeflow.org/v1, Kind=PyTorchJob) in {pytorch}\n"
    )
    assert r.err.splitlines()[-1] == "error: 1 finding in 1 of 2 definitions"


def test_a_crd_file_without_a_crd_is_a_usage_error(kli, pytorch: Path) -> None:
    r = kli("validate", "--crd", str(pytorch), str(pytorch))
    assert r.code == 2
    assert f"--crd {pytorch}: no CustomResourceDefinition in the file" in r.err
    r = kli("validate", "--crd", "/nonexistent/crd.yaml", str(pytorch))
    assert r.code == 2
    assert "cannot read /nonexistent/crd.yaml: no such file" in r.err


def test_crd_and_crd_from_cluster_exclude_each_other(kli, pytorch: Path) -> None:
    r = kli("validate", "--crd", str(PYTORCH_CRD), "--crd-from-cluster", str(pytorch))
    assert r.code == 2
    assert "--crd and --crd-from-cluster exclude each other" in r.err


def test_crd_from_cluster_without_a_cluster_says_so(kli, pytorch: Path, tmp_path: Path) -> None:
    r = kli("validate", "--crd-from-cluster", "--kubeconfig", str(tmp_path / "none"), str(pytorch))
    assert r.code == 1
    assert r.err.startswith("error: ")
    assert "Traceback" not in r.err
