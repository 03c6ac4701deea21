"""``kli verify`` on every built-in definition against every corpus manifest of its kind (issue 28):
no FAIL a user would not agree with.

An optional replica type absent from a manifest (a TFJob without a chief: replicas 0, no template),
an optional component with no instances while others have some (an InferenceService without a
transformer), and a fragmented pod spec the manifest leaves empty (the operator builds the pod from
its defaults) are not failures. What is left is listed in ``KNOWN`` by definition, with the reason a
user would agree with: each of these definitions says in its header why it cannot show the pods.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.catalog.catalog_view import definition_for, reference_documents, relative, workload_documents

from karta.catalog import catalog_slugs
from karta.cli.main import main

NO_POD_SPEC = "definition: has no component with a pod specification: it shows none of the pods"
NOTHING_EXTRACTED = "definition: no component extracts a pod specification from this workload"

ALL = frozenset[str]()  # every corpus manifest of the kind

# slug -> (the failed checks, "subject: message"; the manifests they fail on, ALL for every one;
# why a user agrees)
KNOWN: dict[str, tuple[set[str], frozenset[str], str]] = {
    "workload-codeflare-dev-appwrapper-v1beta2": (
        {NO_POD_SPEC},
        ALL,
        "the wrapped objects' pod templates sit behind podSet paths held as strings, which no jq "
        "path can follow; the wrapped kinds' own definitions show their pods",
    ),
    "argoproj-io-workflow-v1alpha1": (
        {NO_POD_SPEC},
        ALL,
        "a Workflow's pods are created per step at run time from templates the DAG picks",
    ),
    "apps-nvidia-com-nimcache-v1alpha1": (
        {NO_POD_SPEC},
        ALL,
        "the caching Job's pod is built by the NIM operator, not read from the NIMCache",
    ),
    "kubeflow-org-scheduledworkflow-v1beta1": (
        {NO_POD_SPEC},
        ALL,
        "a ScheduledWorkflow creates Workflows on a schedule; it has no pods of its own",
    ),
    "kubeflow-org-experiment-v1beta1": (
        {NO_POD_SPEC},
        ALL,
        "an Experiment's pods belong to the Trials it creates (their run objects' pods)",
    ),
    "workspace-devfile-io-devworkspace-v1alpha2": (
        {NO_POD_SPEC},
        ALL,
        "a DevWorkspace's pod is built by its operator from devfile components (not Kubernetes "
        "containers) into a Deployment it owns",
    ),
    "production-stack-vllm-ai-vllmruntime-v1alpha1": (
        {NO_POD_SPEC},
        ALL,
        "a VLLMRuntime's pods belong to the Deployment its operator builds from fields that are "
        "not a pod spec (resources as cpu/memory/gpu strings, the image as a record)",
    ),
    "mlops-seldon-io-model-v1alpha1": (
        {NO_POD_SPEC},
        ALL,
        "a Seldon Model is loaded onto Server pods; it has no pods of its own",
    ),
    "tekton-dev-pipelinerun-v1": (
        {NO_POD_SPEC},
        ALL,
        "a PipelineRun's pods belong to the TaskRuns it creates",
    ),
    "kaito-sh-workspace-v1beta1": (
        {"component workspace: pod template has no containers", NOTHING_EXTRACTED},
        frozenset(
            f"kaito/kaito_workspace_{name}.yaml"
            for name in ("accelerator", "deepseek_r1", "llama-3.1_8b_instruct", "tuning_phi_3")
        ),
        "a preset Workspace's pod spec comes from KAITO's preset registry, not the object",
    ),
    "machinelearning-seldon-io-seldondeployment-v1": (
        {"component component: has no instances", NOTHING_EXTRACTED},
        frozenset({"seldon-core-v1/iris.yaml"}),
        "a prepackaged server's container is written into componentSpecs by Seldon's defaulting "
        "webhook: the raw manifest has no componentSpecs",
    ),
    "mlops-seldon-io-server-v1alpha1": (
        {"component server: pod spec has no containers", NOTHING_EXTRACTED},
        frozenset({"seldon-core-v2/mlserver1.yaml"}),
        "a Server's containers come from its ServerConfig, another object; .spec.podSpec only overrides them",
    ),
}

CASES = [
    pytest.param(path, index, doc, id=f"{relative(path)}#{index}")
    for path, index, doc in workload_documents()
    if definition_for(doc) is not None
]


def _verify(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, path: Path, index: int, doc: dict[str, Any]
) -> tuple[str, int, dict[str, Any]]:
    karta = definition_for(doc)
    assert karta is not None
    workload = tmp_path / f"{path.stem}-{index}.yaml"
    workload.write_text(yaml.safe_dump(doc))
    refs = reference_documents(path)[0] if karta.spec.structure_definition.references else []
    args = ["verify", "--definition", karta.metadata.name, "--workload", str(workload), "-o", "json"]
    for ref in refs:
        args += ["--ref", str(ref)]
    capsys.readouterr()
    code = main(args)
    out = capsys.readouterr().out
    return karta.metadata.name, code, json.loads(out)


@pytest.fixture(autouse=True)
def _no_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "no-definitions"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


@pytest.mark.parametrize(("path", "index", "doc"), CASES)
def test_verify_has_no_fail_a_user_would_not_agree_with(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, path: Path, index: int, doc: dict[str, Any]
) -> None:
    slug, code, report = _verify(capsys, tmp_path, path, index, doc)
    failed = {f"{c['subject']}: {c['message']}" for c in report["checks"] if c["result"] == "fail"}
    fails, files, _why = KNOWN.get(slug, (set(), ALL, ""))
    expected = fails if not files or str(relative(path)) in files else set()
    assert failed == expected, f"{slug} on {relative(path)}#{index}: {sorted(failed)}"
    assert code == (1 if expected else 0)


def test_every_known_failure_is_a_catalog_definition_the_corpus_exercises() -> None:
    exercised = {k.metadata.name for _p, _i, doc in workload_documents() if (k := definition_for(doc))}
    assert set(KNOWN) <= set(catalog_slugs())
    assert set(KNOWN) <= exercised
    named = {str(relative(p)) for p, _i, _d in workload_documents()}
    for slug, (_fails, files, _why) in KNOWN.items():
        assert files <= named, f"{slug}: {sorted(files - named)} are not corpus manifests"
