"""``kli inspect``: the JSON contract, definition resolution, pods, errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PT_DEF = "definitions/kubeflow-org-pytorchjob-v1.yaml"
PT_OBJ = "workloads/pytorchjob-train-7.yaml"
PT_PODS = "pods/pytorchjob-train-7-pods.yaml"


def _json(kli, *args: str) -> dict:
    r = kli("inspect", *args, "-o", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_contract_shape_for_the_running_example(kli, examples: Path) -> None:
    view = _json(
        kli,
        "-f",
        str(examples / PT_OBJ),
        "--definition",
        str(examples / PT_DEF),
        "--pods",
        str(examples / PT_PODS),
    )
    assert list(view) == ["definition", "workload", "status", "components", "gang", "pods", "diagnostics"]
    assert view["definition"] == "kubeflow-org-pytorchjob-v1"
    assert view["workload"] == {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "name": "train-7",
        "namespace": "ml-team",
    }
    status = view["status"]
    assert status["phase"] is None
    assert status["matched"] == ["Running", "Initializing"]
    assert status["primary"] == "Running"
    assert [c["type"] for c in status["conditions"]] == ["Created", "Running"]
    assert set(status["conditions"][0]) == {"type", "status", "reason", "message"}

    names = [c["name"] for c in view["components"]]
    assert names == ["pytorchjob", "master", "worker"]
    root, master, worker = view["components"]
    assert root["owner"] is None and root["kind"] == {
        "group": "kubeflow.org",
        "version": "v1",
        "kind": "PyTorchJob",
    }
    assert master["owner"] == "pytorchjob" and master["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert root["instances"] == [
        {"id": "", "scale": {"replicas": None, "minReplicas": None, "maxReplicas": None}}
    ]
    (inst,) = worker["instances"]
    assert inst["id"] == ""
    assert inst["scale"] == {"replicas": 4, "minReplicas": None, "maxReplicas": None}
    assert inst["podTemplateSpec"]["spec"]["containers"][0]["name"] == "pytorch"

    (gang,) = view["gang"]["gangs"]
    assert gang["name"] == "job" and gang["minMember"] == 0 and gang["minSubGroup"] == 2
    assert gang["subGroups"] == [
        {"name": "master", "component": "master", "minMember": 1},
        {"name": "worker", "component": "worker", "minMember": 4},
    ]
    assert len(gang["members"]) == 5
    pods = {p["name"]: p for p in view["pods"]}
    assert pods["train-7-master-0"] == {
        "name": "train-7-master-0",
        "component": "master",
        "instance": None,
        "replica": None,
        "gang": "job",
    }
    assert pods["train-7-worker-3"]["component"] == "worker"
    assert view["diagnostics"] == []


def test_yaml_output_equals_json(kli, examples: Path) -> None:
    import yaml

    args = ("-f", str(examples / PT_OBJ), "--definition", str(examples / PT_DEF))
    as_json = _json(kli, *args)
    r = kli("inspect", *args, "-o", "yaml")
    assert r.code == 0
    assert yaml.safe_load(r.out) == as_json


def test_multi_instance_and_alpha_gangs(kli, examples: Path) -> None:
    view = _json(
        kli,
        "-f",
        str(examples / "workloads/jobgroup-etl.yaml"),
        "--definition",
        str(examples / "definitions/example-dev-jobgroup-v1.yaml"),
        "--pods",
        str(examples / "pods/jobgroup-etl-pods.yaml"),
    )
    job = view["components"][1]
    assert [i["id"] for i in job["instances"]] == ["indexer", "processor"]
    assert [i["scale"]["replicas"] for i in job["instances"]] == [2, 3]
    assert job["instances"][0]["metadata"] == {"labels": {"role": "indexer"}}
    assert "podSpec" in job["instances"][0]
    gangs = {g["name"]: g for g in view["gang"]["gangs"]}
    assert gangs["per-job-indexer"]["minMember"] == 2
    assert gangs["per-job-processor"]["minMember"] == 3
    pods = {p["name"]: p for p in view["pods"]}
    assert pods["etl-processor-1"]["instance"] == "processor"
    assert pods["etl-processor-1"]["gang"] == "per-job-processor"


def test_fragmented_map_sorted_instances_and_degraded(kli, examples: Path) -> None:
    view = _json(
        kli,
        "-f",
        str(examples / "workloads/servicegraph-chat.yaml"),
        "--definition",
        str(examples / "definitions/example-dev-servicegraph-v1.yaml"),
    )
    service = view["components"][1]
    assert [i["id"] for i in service["instances"]] == ["decoder", "router"]
    decoder = service["instances"][0]
    assert decoder["fragmentedPodSpec"]["container"]["name"] == "decoder"
    assert decoder["scale"] == {"replicas": 4, "minReplicas": 2, "maxReplicas": 8}
    assert view["status"]["matched"] == ["Running", "Degraded"]
    assert view["status"]["primary"] == "Degraded"
    assert view["status"]["phase"] == "successful"
    assert view["gang"]["gangs"][0]["subGroups"] == [
        {"name": "service", "component": "service", "minMember": 3}
    ]


def test_resolution_by_gvk_from_the_user_directory(
    kli, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KARTA_DEFINITIONS", str(examples / "definitions"))
    view = _json(kli, "-f", str(examples / "workloads/jobgroup-etl.yaml"))
    assert view["definition"] == "example-dev-jobgroup-v1"


def test_resolution_from_the_builtin_catalog(kli, examples: Path) -> None:
    view = _json(kli, "-f", str(examples / PT_OBJ))
    assert view["definition"] == "kubeflow-org-pytorchjob-v1"
    assert view["components"][0]["name"] == "pytorchjob"


def test_no_definition_exits_4(kli, tmp_path: Path) -> None:
    f = tmp_path / "x.yaml"
    f.write_text("apiVersion: unknown.example/v1\nkind: Mystery\nmetadata: {name: m}\n")
    r = kli("inspect", "-f", str(f))
    assert r.code == 4
    assert r.err.startswith("error: no Karta definition covers Mystery (unknown.example/v1)\n")
    assert "hint:" in r.err


def _definition(tmp_path: Path, replicas_path: str, instance_path: str = ".spec.jobs[].name") -> Path:
    d = tmp_path / "def.yaml"
    d.write_text(f"""
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {{name: t}}
spec:
  structureDefinition:
    rootComponent:
      name: r
      kind: {{group: example.dev, version: v1, kind: T}}
      statusDefinition:
        phaseDefinition: {{path: .status.phase}}
        statusMappings:
          running: [{{byPhase: Running}}]
    childComponents:
    - name: job
      ownerRef: r
      instanceIdPath: '{instance_path}'
      specDefinition: {{podSpecPath: '.spec.jobs[].spec'}}
      scaleDefinition: {{replicasPath: '{replicas_path}'}}
      podSelector:
        componentInstanceSelector: {{idPath: .metadata.labels.job}}
""")
    return d


@pytest.mark.parametrize(
    ("replicas_path", "instance_path", "needle"),
    [
        (".spec.jobs[0].n", ".spec.jobs[].name", "instance ids count (2) does not match results count (1)"),
        (".spec.jobs[].n", ".spec.jobs[].name", 'replicas value "many" at index 1 is not a number'),
        (".spec.jobs[].n", ".spec.jobs[].label", "instance id path contained empty string values [,b]"),
        (".spec.jobs[].n | .x", ".spec.jobs[].name", "JQ execution error for expression"),
    ],
)
def test_extraction_errors_exit_1(
    kli, tmp_path: Path, replicas_path: str, instance_path: str, needle: str
) -> None:
    obj = tmp_path / "obj.yaml"
    obj.write_text("""
apiVersion: example.dev/v1
kind: T
metadata: {name: t1}
spec:
  jobs:
  - {name: a, n: 1, spec: {containers: [{name: c}]}}
  - {name: b, label: b, n: many, spec: {containers: [{name: c}]}}
status: {phase: Running}
""")
    r = kli(
        "inspect", "-f", str(obj), "--definition", str(_definition(tmp_path, replicas_path, instance_path))
    )
    assert r.code == 1
    assert r.err.startswith("error: ")
    assert needle in r.err
    assert "Traceback" not in r.err


def test_failing_status_matcher_is_a_diagnostic(kli, tmp_path: Path) -> None:
    d = tmp_path / "d.yaml"
    d.write_text("""
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: t}
spec:
  structureDefinition:
    rootComponent:
      name: r
      kind: {group: example.dev, version: v1, kind: T}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: .status.phase | ascii_downcase, expectedResult: running}}]
""")
    obj = tmp_path / "o.yaml"
    obj.write_text("apiVersion: example.dev/v1\nkind: T\nmetadata: {name: t1}\nstatus: {phase: 3}\n")
    view = _json(kli, "-f", str(obj), "--definition", str(d))
    assert view["status"]["matched"] == ["Undefined"]
    (diag,) = view["diagnostics"]
    assert diag["severity"] == "warning"
    assert "failed to match status" in diag["message"]


def test_invalid_definition_is_refused(kli, examples: Path) -> None:
    r = kli(
        "inspect", "-f", str(examples / PT_OBJ), "--definition", str(examples / "invalid/broken-karta.yaml")
    )
    assert r.code == 1
    assert "is not a valid Karta definition" in r.err
    assert "kli validate" in r.err


def test_table_output(kli, examples: Path) -> None:
    r = kli(
        "inspect",
        "-f",
        str(examples / PT_OBJ),
        "--definition",
        str(examples / PT_DEF),
        "--pods",
        str(examples / PT_PODS),
    )
    assert r.code == 0
    assert r.out.splitlines()[0] == (
        "PyTorchJob/train-7   namespace: ml-team   definition: kubeflow-org-pytorchjob-v1"
    )
    assert "|-- master  Pod.v1   replicas: 1   containers: pytorch" in r.out
    assert "`-- worker  Pod.v1   replicas: 4   containers: pytorch" in r.out
    assert "job: minSubGroup 2 (master min 1, worker min 4)" in r.out
    assert all(len(line) <= 100 for line in r.out.splitlines() if not line.startswith("    members:"))


@pytest.mark.parametrize(
    ("content", "code"),
    [("", 2), ("a: [", 2), ("- x\n", 2), ("apiVersion: v1\n", 2), ("kind: X\n---\nkind: Y\n", 2)],
)
def test_bad_object_files(kli, tmp_path: Path, content: str, code: int) -> None:
    f = tmp_path / "o.yaml"
    f.write_text(content)
    r = kli("inspect", "-f", str(f))
    assert r.code == code
    assert r.err.startswith("error: ")
