"""``kli validate --crd-from-cluster``: a definition checked against the CRD the real API server
serves for its root kind (issue 12 item 6), with kubectl's connection flags.

The corpus PyTorchJob CRD is installed (shared with other tests: an existing one is accepted);
the served CRD (as the API server returns it, defaults and status included) gives the same result
as the file: the catalog definition fits, a typo is a finding with both paths. A kind the cluster
does not serve, a kind the API server serves itself (no CRD) and an identity that may not read
CRDs (403) each say so in one message.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from ..kubehttp import KubeHTTP
from .conftest import Result

REPO = Path(__file__).resolve().parents[3]
CATALOG = REPO / "src/karta/catalog/data"
PYTORCH = CATALOG / "kubeflow-org-pytorchjob-v1.yaml"
WHERE = "spec.versions[v1].schema.openAPIV3Schema"


@pytest.fixture(scope="module")
def pytorch_crd(cluster: KubeHTTP, corpus: Path) -> None:
    crd = yaml.load((corpus / "crds/kubeflow.org_pytorchjobs.yaml").read_bytes(), Loader=yaml.CSafeLoader)
    cluster.ensure_crd(crd)


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_the_served_crd_checks_like_the_file(
    kli: Callable[..., Result], cluster: KubeHTTP, pytorch_crd: None, tmp_path: Path
) -> None:
    kubeconfig = str(cluster.kubeconfig)
    r = kli("validate", "--crd-from-cluster", "--kubeconfig", kubeconfig, str(PYTORCH))
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].startswith("OK: kubeflow-org-pytorchjob-v1 is a valid Karta definition")
    assert lines[1].startswith("  fits CRD pytorchjobs.kubeflow.org (v1): ")
    assert r.err == ""

    typo = _write(
        tmp_path,
        "typo.yaml",
        PYTORCH.read_text().replace(
            ".spec.pytorchReplicaSpecs.Master.template", ".spec.replicaSpecs.Master.template"
        ),
    )
    r = kli("validate", "--crd-from-cluster", "--kubeconfig", kubeconfig, "-o", "json", typo)
    assert r.code == 1
    (row,) = json.loads(r.out)
    assert row["path"] == "spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath"
    assert row["schemaPath"] == f"{WHERE}.properties.spec.properties.replicaSpecs"
    assert "did you mean 'pytorchReplicaSpecs'?" in row["message"]


def test_a_kind_without_a_crd_in_the_cluster(
    kli: Callable[..., Result], cluster: KubeHTTP, tmp_path: Path
) -> None:
    kind = f"Absent{uuid.uuid4().hex[:6]}"
    absent = _write(
        tmp_path,
        "absent.yaml",
        PYTORCH.read_text()
        .replace(
            "kind: {group: kubeflow.org, version: v1, kind: PyTorchJob}",
            f"kind: {{group: acme.ai, version: v1, kind: {kind}}}",
        )
        .replace("name: kubeflow-org-pytorchjob-v1", "name: acme-ai-absent-v1"),
    )
    job = str(CATALOG / "batch-job-v1.yaml")
    r = kli("validate", "--crd-from-cluster", "--kubeconfig", str(cluster.kubeconfig), absent, job)
    assert r.code == 0, r.err  # issue 28: not checked is neither a pass nor INVALID
    assert r.out.startswith("OK: acme-ai-absent-v1 is a valid Karta definition")
    assert (
        f"not checked against a CRD: the cluster serves no kind {kind} in group acme.ai (API discovery)"
        in r.out
    )
    assert (
        "not checked against a CRD: the cluster serves Job (jobs.batch) but has no CRD jobs.batch: "
        "the API server or an aggregated API serves it"
    ) in r.out
    assert "error:" not in r.err


def test_an_identity_that_may_not_read_crds(
    kli: Callable[..., Result], cluster: KubeHTTP, pytorch_crd: None
) -> None:
    nobody = f"nobody-{uuid.uuid4().hex[:6]}"
    r = kli(
        "validate",
        "--crd-from-cluster",
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--as",
        nobody,
        str(PYTORCH),
    )
    assert r.code == 1
    first, hint = r.err.splitlines()[:2]
    assert first.startswith(
        f'error: user "{nobody}" (impersonated) may not read the CRD of kubeflow.org/PyTorchJob '
        "(403 Forbidden)"
    )
    assert hint == (
        "hint: --crd-from-cluster needs get on customresourcedefinitions.apiextensions.k8s.io; "
        "or check against a file with --crd CRD.yaml"
    )
    assert r.out == ""
