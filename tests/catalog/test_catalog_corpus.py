"""Every workload manifest of the shared corpus through the built-in catalog.

Each document of a covered kind resolves to a built-in definition, extracts without error (components,
instances, pod specs, scale, status, gang plan) and matches its reviewed golden view. Status mappings are
checked on every status example of the corpus: the full objects and the status-only fragments merged
into a minimal object of their kind.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from catalog_view import (
    CORPUS,
    NOT_WORKLOADS,
    WORKLOADS,
    bound_evaluator,
    corpus_files,
    definition_for,
    documents,
    evaluator,
    golden_path,
    golden_view,
    relative,
    workload_documents,
    workload_file,
)

from karta.catalog import catalog_by_gvk
from karta.extract import ComponentFactory
from karta.jq.bound import bound_names

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")

DOCS = workload_documents() if WORKLOADS.is_dir() else []
IDS = [f"{relative(p)}#{i}" for p, i, _ in DOCS]


def test_corpus_has_workloads() -> None:
    assert len(corpus_files()) >= 80
    assert len(DOCS) >= 80


def test_every_document_is_a_workload_or_a_known_non_workload() -> None:
    kinds = {(d.get("apiVersion"), d.get("kind")) for p in corpus_files() for d in documents(p)}
    uncovered = {
        k for k in kinds - NOT_WORKLOADS if definition_for({"apiVersion": k[0], "kind": k[1]}) is None
    }
    assert uncovered == set()


@pytest.mark.parametrize(("path", "index", "doc"), DOCS, ids=IDS)
def test_document_matches_reviewed_golden(path: Path, index: int, doc: dict[str, Any]) -> None:
    karta = definition_for(doc)
    assert karta is not None, f"no built-in definition for {doc.get('apiVersion')} {doc.get('kind')}"
    view = golden_view(path, index, karta, doc)
    golden = golden_path(path, index)
    assert golden.exists(), f"missing golden {golden.name}: run tests/catalog/regen_golden.py and review it"
    assert view == json.loads(golden.read_text())


@pytest.mark.parametrize(("path", "index", "doc"), DOCS, ids=IDS)
def test_pod_specs_round_trip_through_write_back(path: Path, index: int, doc: dict[str, Any]) -> None:
    """Writing the extracted pod specs back leaves the object unchanged (the paths are writable).
    A pod spec path that reads a reference (extension E3: the runtime's template, merged with the
    workload's overrides) is a value, not a path (E3.3.7): karta never writes it back."""
    karta = definition_for(doc)
    assert karta is not None
    names = frozenset(r.name for r in karta.spec.structure_definition.references)
    factory = ComponentFactory(karta, copy.deepcopy(doc), evaluator=bound_evaluator(karta, doc)[0])
    for definition in karta.components:
        spec = definition.spec_definition
        paths = [spec.pod_template_spec_path, spec.pod_spec_path] if spec is not None else []
        if any(p and bound_names(p, names) for p in paths):
            continue
        component = factory.component(definition.name)
        templates = component.pod_template_specs()
        if templates is not None and all(templates.values()):
            component.update_pod_template_spec(templates)
        specs = component.pod_specs()
        if specs is not None and all(specs.values()):
            component.update_pod_spec(specs)
        fragments = component.fragmented_pod_specs()
        if fragments is not None:
            component.update_fragmented_pod_spec(fragments)
    assert factory.obj == doc


def test_no_stale_goldens() -> None:
    expected = {golden_path(p, i).name for p, i, _ in DOCS}
    present = {p.name for p in golden_path(*DOCS[0][:2]).parent.glob("*.json")}
    assert present == expected


# --- status examples ------------------------------------------------------------------------------

FULL_STATUS = {
    "kubeflow-training-v1/pytorchjob-with-status.yaml": ["Completed"],
    "kubeflow-training-v1/tfjob-with-status.yaml": ["Completed"],
    "mpi-operator-v2beta1/tensorflow-benchmarks-with-status.yaml": ["Completed"],
    "spark-operator/spark-pi-with-status.yaml": ["Completed"],
    "argo/dag-xfail-with-status.yaml": ["Running"],
    # Controller test data without a workflow-level phase: nothing says it started.
    "argo/dag-retry-succeeded-with-status.yaml": ["Initializing"],
}


@pytest.mark.parametrize(("name", "expected"), sorted(FULL_STATUS.items()))
def test_status_of_full_objects(name: str, expected: list[str]) -> None:
    (doc,) = documents(workload_file(name))
    assert "status" in doc
    karta = definition_for(doc)
    assert karta is not None
    status = ComponentFactory(karta, doc, evaluator=evaluator()).root().status(strict=True)
    assert status is not None
    assert [str(s) for s in status.matched] == expected


def test_every_full_status_example_is_checked() -> None:
    with_status = {
        str(relative(p))
        for p in corpus_files()
        for d in documents(p)
        if isinstance(d.get("status"), dict) and (d.get("apiVersion"), d.get("kind")) not in NOT_WORKLOADS
    }
    assert with_status == set(FULL_STATUS)


# (fragment file, apiVersion, kind, where the fragment goes, expected matched, expected primary)
FRAGMENTS: list[tuple[str, str, str, str, list[str], str]] = [
    (
        "kserve/status-fragments/llmisvc-status-healthy.yaml",
        "serving.kserve.io/v1alpha2",
        "LLMInferenceService",
        "status",
        ["Running"],
        "Running",
    ),
    (
        "kserve/status-fragments/llmisvc-status-failing-autoscaling.yaml",
        "serving.kserve.io/v1alpha2",
        "LLMInferenceService",
        "status",
        ["Degraded"],
        "Degraded",
    ),
    (
        "kserve/status-fragments/llmisvc-status-missing-config.yaml",
        "serving.kserve.io/v1alpha2",
        "LLMInferenceService",
        "status",
        ["Failed"],
        "Failed",
    ),
    (
        "kserve/status-fragments/llmisvc-status-healthy.yaml",
        "serving.kserve.io/v1alpha1",
        "LLMInferenceService",
        "status",
        ["Running"],
        "Running",
    ),
    (
        "kserve/status-fragments/isvc-status-components-predictor-canary.yaml",
        "serving.kserve.io/v1beta1",
        "InferenceService",
        "components.predictor",
        ["Initializing"],
        "Initializing",
    ),
    (
        "dynamo/status-fragments/dgd-status-topology-degraded.yaml",
        "nvidia.com/v1beta1",
        "DynamoGraphDeployment",
        "status",
        ["Running", "Degraded"],
        "Degraded",
    ),
    (
        "dynamo/status-fragments/dgd-status-topology-degraded.yaml",
        "nvidia.com/v1alpha1",
        "DynamoGraphDeployment",
        "status",
        ["Running", "Degraded"],
        "Degraded",
    ),
    (
        "milvus/status-fragments/milvus-status-schematic.yaml",
        "milvus.io/v1beta1",
        "Milvus",
        "status",
        ["Running"],
        "Running",
    ),
]


def _fragment_object(name: str, api_version: str, kind: str, where: str) -> dict[str, Any]:
    with workload_file(name).open() as handle:
        fragment = yaml.safe_load(handle)
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": {}}
    if where == "status":
        obj["status"] = fragment["status"]
    else:
        status: dict[str, Any] = {}
        node = status
        *parents, leaf = where.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = fragment
        obj["status"] = status
    return obj


@pytest.mark.parametrize(
    ("name", "api_version", "kind", "where", "matched", "primary"),
    FRAGMENTS,
    ids=[f"{f[0]}@{f[1]}" for f in FRAGMENTS],
)
def test_status_fragments(
    name: str, api_version: str, kind: str, where: str, matched: list[str], primary: str
) -> None:
    obj = _fragment_object(name, api_version, kind, where)
    group, _, version = api_version.rpartition("/")
    karta = catalog_by_gvk(group, version, kind)
    assert karta is not None
    status = ComponentFactory(karta, obj, evaluator=evaluator()).root().status(strict=True)
    assert status is not None
    assert [str(s) for s in status.matched] == matched
    assert str(status.primary) == primary


def test_every_status_fragment_is_checked() -> None:
    present = {str(p.relative_to(WORKLOADS)) for p in WORKLOADS.glob("*/status-fragments/*.yaml")}
    assert present == {f[0] for f in FRAGMENTS}
