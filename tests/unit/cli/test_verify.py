"""``kli verify``: R16 semantic checks, prediction diffs, JSON shape, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

DEFINITION = "examples/definitions/kubeflow-org-pytorchjob-v1.yaml"


def workload(**changes: Any) -> dict[str, Any]:
    path = Path(__file__).resolve().parents[3] / "examples/workloads/pytorchjob-train-7.yaml"
    obj: dict[str, Any] = yaml.safe_load(path.read_text())
    for key, value in changes.items():
        if key == "worker_replicas":
            obj["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = value
        elif key == "status":
            obj["status"] = value
        elif key == "worker_containers":
            obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = value
        elif key == "kind":
            obj["kind"] = value
    return obj


def write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return str(path)


def definition(examples: Path) -> str:
    return str(examples / "definitions/kubeflow-org-pytorchjob-v1.yaml")


def test_a_matching_workload_passes_with_warnings_for_empty_optional_paths(kli, examples, tmp_path) -> None:
    r = kli(
        "verify", "--definition", definition(examples), "--workload", write(tmp_path, "w.yaml", workload())
    )
    assert r.code == 0, r.out + r.err
    lines = r.out.splitlines()
    assert lines[0] == "verify kubeflow-org-pytorchjob-v1 against PyTorchJob/train-7"
    assert "  ok    component worker: 1 instance, replicas 4" in lines
    assert any(
        line.startswith("  warn  component worker: scaleDefinition.minReplicasPath extracts nothing")
        for line in lines
    )
    assert lines[-1].endswith("0 failed, 2 warnings")
    assert r.err == ""
    assert all(len(line) <= 100 for line in lines)


def test_predictions_give_clear_diffs(kli, examples, tmp_path) -> None:
    predictions = {
        "status": "Running",
        "components": {"worker": {"replicas": 4, "instances": [""]}, "master": {"replicas": {"": 1}}},
        "gang": {"minSubGroup": 2, "subGroups": {"worker": 4, "master": 1}},
    }
    args = [
        "verify",
        "--definition",
        definition(examples),
        "--predict",
        write(tmp_path, "p.yaml", predictions),
    ]
    ok = kli(*args, "--workload", write(tmp_path, "w.yaml", workload()))
    assert ok.code == 0, ok.out
    assert "  ok    component worker: replicas 4 as predicted" in ok.out.splitlines()
    assert "  ok    gang job: sub-group worker minMember 4 as predicted" in ok.out.splitlines()

    bad = kli(*args, "--workload", write(tmp_path, "w2.yaml", workload(worker_replicas=2)))
    assert bad.code == 1
    assert "  FAIL  component worker: expected replicas 4, got 2" in bad.out.splitlines()
    assert "  FAIL  gang job: expected sub-group worker minMember 4, got 2" in bad.out.splitlines()
    assert bad.err.startswith("error: 2 of ")


def test_status_prediction_and_undefined(kli, examples, tmp_path) -> None:
    done = {"conditions": [{"type": "Succeeded", "status": "True"}]}
    pred = write(tmp_path, "p.yaml", {"status": "Running", "matched": ["Running"]})
    r = kli(
        "verify",
        "--definition",
        definition(examples),
        "--workload",
        write(tmp_path, "w.yaml", workload(status=done)),
        "--predict",
        pred,
    )
    assert r.code == 1
    assert "  FAIL  status: expected Running, got Completed" in r.out.splitlines()
    assert "  FAIL  status: expected matched [Running], got [Completed]" in r.out.splitlines()

    weird = {"conditions": [{"type": "Exploded", "status": "True"}]}
    r = kli(
        "verify",
        "--definition",
        definition(examples),
        "--workload",
        write(tmp_path, "w2.yaml", workload(status=weird)),
    )
    assert r.code == 1
    assert (
        "  FAIL  status: resolves to Undefined: no status mapping matches this object" in r.out.splitlines()
    )
    r = kli(
        "verify",
        "--definition",
        definition(examples),
        "--workload",
        write(tmp_path, "w3.yaml", workload(status=weird)),
        "--predict",
        write(tmp_path, "p2.yaml", {"status": "Undefined"}),
    )
    assert r.code == 0, r.out


def test_pod_spec_without_containers_and_kind_mismatch(kli, examples, tmp_path) -> None:
    r = kli(
        "verify",
        "--definition",
        definition(examples),
        "--workload",
        write(tmp_path, "w.yaml", workload(worker_containers=[])),
    )
    assert r.code == 1
    assert "  FAIL  component worker: pod template has no containers" in r.out.splitlines()
    r = kli(
        "verify",
        "--definition",
        definition(examples),
        "--workload",
        write(tmp_path, "w2.yaml", workload(kind="TFJob")),
    )
    assert r.code == 1
    assert (
        "  FAIL  definition: is for PyTorchJob (kubeflow.org/v1) but the workload is TFJob (kubeflow.org/v1)"
        in r.out
    )


KARTA = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "acme-ai-group-v1"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "group",
                "kind": {"group": "acme.ai", "version": "v1", "kind": "Group"},
                "statusDefinition": {
                    "phaseDefinition": {"path": ".status.phase"},
                    "statusMappings": {"running": [{"byPhase": "Running"}]},
                },
            },
            "childComponents": [
                {
                    "name": "member",
                    "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "ownerRef": "group",
                    "specDefinition": {"podSpecPath": ".spec.members[].pod"},
                    "instanceIdPath": ".spec.members[].name",
                    "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.name"}},
                }
            ],
        }
    },
}


def test_component_without_instances_and_no_pod_spec_anywhere(kli, tmp_path) -> None:
    obj = {
        "apiVersion": "acme.ai/v1",
        "kind": "Group",
        "metadata": {"name": "g"},
        "spec": {"members": []},
        "status": {"phase": "Running"},
    }
    r = kli(
        "verify",
        "--definition",
        write(tmp_path, "k.yaml", KARTA),
        "--workload",
        write(tmp_path, "w.yaml", obj),
    )
    assert r.code == 1
    assert "  FAIL  component member: has no instances" in r.out.splitlines()
    pred = write(tmp_path, "p.yaml", {"components": {"member": {"instances": []}}})
    r = kli(
        "verify",
        "--definition",
        write(tmp_path, "k.yaml", KARTA),
        "--workload",
        write(tmp_path, "w.yaml", obj),
        "--predict",
        pred,
    )
    assert "has no instances" not in r.out
    assert "  FAIL  definition: no component extracts a pod specification from this workload" in r.out
    obj["spec"]["members"] = [
        {"name": "a", "pod": {"containers": [{"name": "c", "image": "i"}]}},
        {"name": "b", "pod": {"containers": [{"name": "c", "image": "i"}]}},
    ]
    r = kli(
        "verify",
        "--definition",
        write(tmp_path, "k.yaml", KARTA),
        "--workload",
        write(tmp_path, "w.yaml", obj),
        "--predict",
        write(tmp_path, "p3.yaml", {"components": {"member": {"instances": ["b", "a"]}}}),
    )
    assert r.code == 0, r.out
    assert "  ok    component member: 2 instances [a, b]" in r.out.splitlines()


def test_json_output(kli, examples, tmp_path) -> None:
    r = kli(
        "verify",
        "--definition",
        "kubeflow-org-pytorchjob-v1",
        "--workload",
        write(tmp_path, "w.yaml", workload(worker_replicas=2)),
        "--predict",
        write(tmp_path, "p.yaml", {"components": {"worker": {"replicas": 4}}}),
        "-o",
        "json",
    )
    assert r.code == 1
    data = json.loads(r.out)
    assert data["definition"] == "kubeflow-org-pytorchjob-v1"
    assert data["workload"] == {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "name": "train-7",
        "namespace": "ml-team",
    }
    assert data["ok"] is False
    assert data["summary"]["failed"] == 1
    assert {"result": "fail", "subject": "component worker", "message": "expected replicas 4, got 2"} in data[
        "checks"
    ]
    warn = next(c for c in data["checks"] if c["result"] == "warn")
    assert warn["message"].endswith("extracts nothing")
    assert warn["expression"].startswith("if .spec.elasticPolicy == null")


def test_usage_errors(kli, examples, tmp_path) -> None:
    w = write(tmp_path, "w.yaml", workload())
    r = kli(
        "verify",
        "--definition",
        definition(examples),
        "--workload",
        w,
        "--predict",
        write(tmp_path, "p.yaml", {"replicas": 3}),
    )
    assert r.code == 2
    assert "unknown prediction replicas; expected one of status, matched, phase, components, gang" in r.err
    r = kli(
        "verify",
        "--definition",
        definition(examples),
        "--workload",
        w,
        "--predict",
        write(tmp_path, "p2.yaml", {"components": {"worker": {"replica": 3}}}),
    )
    assert r.code == 2 and "unknown prediction components.worker.replica" in r.err
    r = kli("verify", "--definition", "no-such-definition", "--workload", w)
    assert r.code == 4 and "no Karta definition named 'no-such-definition'" in r.err
    assert kli("verify", "--definition", definition(examples)).code == 2
    r = kli(
        "verify",
        "--definition",
        definition(examples),
        "--workload",
        w,
        "--predict",
        write(tmp_path, "p3.yaml", {"components": {"ghost": {"replicas": 1}}}),
    )
    assert (
        r.code == 1
        and "  FAIL  component ghost: is predicted but the definition has no such component" in r.out
    )


CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "workloads"


def test_absent_replica_types_pass_and_a_definition_without_pods_fails(kli) -> None:
    """Issue 28: a TFJob without chief, master, ps or evaluator is not 4 failures; an AppWrapper
    definition, which shows no pods at all, is one; one wording for an unset phase; plurals."""
    tfjob = str(CORPUS / "kubeflow-training-v1/tfjob-simple.yaml")
    r = kli("verify", "--definition", "kubeflow-org-tfjob-v1", "--workload", tfjob)
    assert r.code == 0, r.out + r.err
    lines = r.out.splitlines()
    assert "  ok    component chief: 1 instance, replicas 0: not part of this workload" in lines
    assert "  ok    status: Initializing (matched: Initializing; phase: none)" in lines
    assert lines[-1] == "8 checks: 7 ok, 0 failed, 1 warning"
    wrapper = str(CORPUS / "appwrapper/wrapped-gpu-job.yaml")
    r = kli("verify", "--definition", "workload-codeflare-dev-appwrapper-v1beta2", "--workload", wrapper)
    assert r.code == 1
    lines = r.out.splitlines()
    assert "  FAIL  definition: has no component with a pod specification: it shows none of the pods" in lines
    assert "  ok    status: Initializing (matched: Initializing; phase: none)" in lines  # phase ""
    assert r.err == f"error: 1 of 6 checks failed for {wrapper}\n"


def test_a_replica_type_scaled_to_zero_is_checked_as_it_is(kli, examples, tmp_path) -> None:
    """replicas 0 with its template still there is not "absent": its template is still checked."""
    w = write(tmp_path, "w.yaml", workload(worker_replicas=0))
    r = kli("verify", "--definition", definition(examples), "--workload", w)
    assert r.code == 0, r.out
    assert "  ok    component worker: 1 instance, replicas 0" in r.out.splitlines()
    w = write(tmp_path, "w2.yaml", workload(worker_replicas=0, worker_containers=[]))
    r = kli("verify", "--definition", definition(examples), "--workload", w)
    assert r.code == 1
    assert "  FAIL  component worker: pod template has no containers" in r.out.splitlines()
