"""``kli verify --pods``: the pod selectors and gang membership checked against real pods (issue 12),
``-o yaml``, and ``--definition NAME|FILE``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
WORKLOAD = str(ROOT / "examples/workloads/pytorchjob-train-7.yaml")
PODS = str(ROOT / "examples/pods/pytorchjob-train-7-pods.yaml")
WITH_SUB_GROUPS = str(
    ROOT / "examples/definitions/kubeflow-org-pytorchjob-v1.yaml"
)  # gang "job": master, worker
CORPUS_CRD = ROOT.parent / "shared" / "corpus" / "crds" / "kubeflow.org_pytorchjobs.yaml"


def pods() -> list[dict[str, Any]]:
    return [p for p in yaml.safe_load_all(Path(PODS).read_text()) if p]


def write(tmp_path: Path, name: str, *docs: Any) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_the_catalog_definition_places_every_real_pod(kli: Any) -> None:
    r = kli("verify", "--definition", "kubeflow-org-pytorchjob-v1", "--workload", WORKLOAD, "--pods", PODS)
    assert r.code == 0, r.out + r.err
    lines = r.out.splitlines()
    assert "  ok    pod train-7-master-0: component master, gang pytorchjob" in lines
    assert "  ok    pod train-7-worker-3: component worker, gang pytorchjob" in lines
    assert lines[-1] == "11 checks: 9 ok, 0 failed, 2 warnings"


def test_a_pod_no_component_claims_fails(kli: Any, tmp_path: Path) -> None:
    stray = copy.deepcopy(pods()[1])
    stray["metadata"]["name"] = "stray-0"
    stray["metadata"]["labels"] = {"app": "other"}
    r = kli("verify", "--definition", WITH_SUB_GROUPS, "--workload", WORKLOAD, "--pods",
            write(tmp_path, "pods.yaml", *pods(), stray))  # fmt: skip
    assert r.code == 1
    no_component = "matches no component (no component found for pod stray-0); its labels: app=other"
    assert f"  FAIL  pod stray-0: {no_component}" in r.out.splitlines()
    assert "is in no gang" not in r.out  # the current format's one gang has every pod of the workload
    assert (
        "  FAIL  pod stray-0: is in gang job but in none of its sub-groups (master, worker): no "
        "sub-group component's type selector matches it" in r.out.splitlines()
    )


def test_the_placeholder_selectors_of_a_draft_fail_against_real_pods(kli: Any, tmp_path: Path) -> None:
    """Before issue 12 a scaffold draft passed verify: its only pod-bearing component takes every
    pod without consulting selectors. The real pods do not carry the placeholder labels."""
    draft = kli("scaffold", "--crd", str(CORPUS_CRD))
    assert draft.code == 0, draft.err
    definition = tmp_path / "draft.yaml"
    definition.write_text(draft.out)
    r = kli("verify", "--definition", str(definition), "--workload", WORKLOAD)
    assert r.code == 0, r.out  # the manifest alone cannot tell
    r = kli("verify", "--definition", str(definition), "--workload", WORKLOAD, "--pods", PODS)
    assert r.code == 1
    fails = [line for line in r.out.splitlines() if line.startswith("  FAIL  pod train-7-worker-0")]
    assert fails == [
        "  FAIL  pod train-7-worker-0: is placed on pytorch-replica (the only pod-bearing component) but "
        "does not match its componentTypeSelector; its labels: training.kubeflow.org/job-name=train-7, "
        "training.kubeflow.org/replica-index=0, training.kubeflow.org/replica-type=worker",
        '  FAIL  pod train-7-worker-0: failed to extract instance id from path ".metadata.labels'
        '["kubeflow.org/instance"]": query result is empty <nil>',
    ]


def test_predicted_places(kli: Any, tmp_path: Path) -> None:
    predictions = {
        "pods": {
            "train-7-master-0": {"component": "master", "gang": "job", "subGroup": "master"},
            "train-7-worker-0": {"component": "master"},  # wrong on purpose
            "train-7-worker-9": {"component": "worker"},  # not among the pods
        }
    }
    predict = write(tmp_path, "p.yaml", predictions)
    r = kli("verify", "--definition", WITH_SUB_GROUPS, "--workload", WORKLOAD, "--pods", PODS,
            "--predict", predict)  # fmt: skip
    assert r.code == 1
    lines = r.out.splitlines()
    assert "  ok    pod train-7-master-0: component master as predicted" in lines
    assert "  ok    pod train-7-master-0: subGroup master as predicted" in lines
    assert "  FAIL  pod train-7-worker-0: expected component master, got worker" in lines
    assert "  FAIL  pod train-7-worker-9: is predicted but not among the pods given" in lines
    assert "  ok    pod train-7-worker-1: component worker, gang job, sub-group worker" in lines
    # predictions about pods need the pods
    r = kli(
        "verify", "--definition", "kubeflow-org-pytorchjob-v1", "--workload", WORKLOAD, "--predict", predict
    )
    assert r.code == 2 and "pass the pods with --pods PODS" in r.err
    bad = write(tmp_path, "bad.yaml", {"pods": {"x": {"node": "n1"}}})
    r = kli("verify", "--definition", "kubeflow-org-pytorchjob-v1", "--workload", WORKLOAD, "--pods", PODS,
            "--predict", bad)  # fmt: skip
    assert r.code == 2 and "unknown prediction pods.x.node" in r.err


def test_alpha_gangs_and_instances(kli: Any, examples: Path) -> None:
    r = kli(
        "verify",
        "--definition",
        str(examples / "definitions/example-dev-jobgroup-v1.yaml"),
        "--workload",
        str(examples / "workloads/jobgroup-etl.yaml"),
        "--pods",
        str(examples / "pods/jobgroup-etl-pods.yaml"),
    )
    assert r.code == 0, r.out
    assert "  ok    pod etl-processor-2: component job, instance processor, gang per-job-processor" in r.out


def test_yaml_and_json_output(kli: Any) -> None:
    args = ("verify", "--definition", "kubeflow-org-pytorchjob-v1", "--workload", WORKLOAD, "--pods", PODS)
    as_yaml = yaml.safe_load(kli(*args, "-o", "yaml").out)
    as_json = json.loads(kli(*args, "-o", "json").out)
    assert as_yaml == as_json
    assert as_json["summary"] == {"checks": 11, "failed": 0, "warnings": 2}
    assert {
        "result": "ok",
        "subject": "pod train-7-worker-0",
        "message": "component worker, gang pytorchjob",
    } in (as_json["checks"])


def test_definition_by_name_or_file(kli: Any, tmp_path: Path) -> None:
    r = kli("verify", "--definition", "kubeflow-org-pytorchjob", "--workload", WORKLOAD)
    assert r.code == 4
    assert "no Karta definition named 'kubeflow-org-pytorchjob', and no such file" in r.err
    assert "hint: did you mean kubeflow-org-pytorchjob-v1" in r.err
    r = kli("verify", "--definition", str(tmp_path / "missing.yaml"), "--workload", WORKLOAD)
    assert r.code == 2 and "missing.yaml" in r.err  # a path: read as a file, even when missing
