"""``--ref FILE`` (extension E3, docs/format-extensions.md E3.5): the hand-written definition of
``references/`` (a lookup and a list) through ``kli inspect|describe|gang|verify``, in-process
and once through the installed ``kli`` itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml
from tests.unit.cli.conftest import Result

HERE = Path(__file__).resolve().parent / "references"
DEF, WORKLOAD, REFS = str(HERE / "definition.yaml"), str(HERE / "workload.yaml"), str(HERE / "refs.yaml")

Kli = Callable[..., Result]
LABELS = {"example.com/run": "run1", "tier": "trainer"}


def test_inspect_reads_the_runtime_and_the_list(kli: Kli) -> None:
    r = kli("inspect", "-f", WORKLOAD, "--definition", DEF, "--ref", REFS, "-o", "json")
    assert r.code == 0, r.err
    view = json.loads(r.out)
    assert view["status"]["matched"] == ["Running"]  # $configs holds the one ConfigMap of namespace team
    (root,) = view["components"]
    (instance,) = root["instances"]
    assert instance["scale"]["replicas"] == 4  # $runtime.spec.nodes 3 + .spec.extraNodes 1
    containers = instance["podTemplateSpec"]["spec"]["containers"]
    assert [c["image"] for c in containers] == ["trainer:1"]
    assert [g["minMember"] for g in view["gang"]["gangs"]] == [4]
    assert "note:" not in r.err


def test_without_ref_every_reference_is_missing_with_a_note(kli: Kli) -> None:
    r = kli("inspect", "-f", WORKLOAD, "--definition", DEF, "-o", "json")
    assert r.code == 0, r.err
    view = json.loads(r.out)
    assert view["status"]["matched"] == ["Undefined"]  # $configs is [], so the expression is false
    (root,) = view["components"]
    assert root["instances"][0]["scale"]["replicas"] == 2  # null // 1, + 1: never an error
    assert "note: reference 'runtime' (RunTemplate example.com/v1): no given object" in r.err
    assert "bound as null" in r.err
    assert "note: reference 'configs' (ConfigMap v1)" in r.err and "bound as []" in r.err


def test_refs_repeatable_and_lists(kli: Kli, tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all(Path(REFS).read_text()))
    one = tmp_path / "runtime.yaml"
    one.write_text(yaml.safe_dump(docs[0]))
    rest = tmp_path / "configs.yaml"
    rest.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": docs[1:]}))
    r = kli(
        "inspect", "-f", WORKLOAD, "--definition", DEF, "--ref", str(one), "--ref", str(rest), "-o", "json"
    )
    assert r.code == 0, r.err
    assert json.loads(r.out)["status"]["matched"] == ["Running"]


def test_gang_renders_what_the_runtime_implies(kli: Kli) -> None:
    r = kli("gang", "-f", WORKLOAD, "--definition", DEF, "--ref", REFS, "--backend", "volcano")
    assert r.code == 0, r.err
    (group,) = [o for o in yaml.safe_load_all(r.out) if o]
    assert group["kind"] == "PodGroup" and group["spec"]["minMember"] == 4


def test_describe_counts_the_runtime_gpus(kli: Kli) -> None:
    r = kli("describe", "-f", WORKLOAD, "--definition", DEF, "--ref", REFS, "-o", "json")
    assert r.code == 0, r.err
    view = json.loads(r.out)
    assert view["resources"] == {"gpus": 32, "cpuMillis": 0, "memoryBytes": 0, "pods": 4}
    assert view["phases"] == ["Running"]


def test_verify_takes_refs(kli: Kli) -> None:
    r = kli("verify", "--definition", DEF, "--workload", WORKLOAD, "--ref", REFS)
    assert r.code == 0, r.out + r.err
    assert "replicas 4" in r.out


def test_ref_goes_with_files(kli: Kli) -> None:
    r = kli("gang", "trainruns/run1", "--backend", "volcano", "--ref", REFS)
    assert r.code == 2
    assert "--ref goes with -f FILE" in r.err


def test_ref_on_a_definition_without_references_warns(kli: Kli, tmp_path: Path) -> None:
    plain = yaml.safe_load(Path(DEF).read_text())
    structure = plain["spec"]["structureDefinition"]
    del structure["references"]
    root = structure["rootComponent"]
    root["specDefinition"]["podTemplateSpecPath"] = ".spec.t"
    root["scaleDefinition"]["replicasPath"] = ".spec.extraNodes"
    root["statusDefinition"]["statusMappings"]["running"][0]["byExpression"]["expression"] = "true"
    path = tmp_path / "plain.yaml"
    path.write_text(yaml.safe_dump(plain))
    r = kli("inspect", "-f", WORKLOAD, "--definition", str(path), "--ref", REFS, "-o", "json")
    assert r.code == 0, r.err
    assert "--ref is not used: definition example-com-trainrun-v1 has no references" in r.err


def test_a_list_over_the_limit_is_an_error_naming_the_reference(kli: Kli, tmp_path: Path) -> None:
    many = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": f"c{i}",
                "namespace": "team",
                "labels": {"example.com/run": "run1", "tier": "trainer"},
            },
        }
        for i in range(1001)
    ]
    path = tmp_path / "many.yaml"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": many}))
    r = kli("inspect", "-f", WORKLOAD, "--definition", DEF, "--ref", str(path))
    assert r.code == 1
    assert "reference 'configs' (ConfigMap v1) matches 1,001 objects; at most 1,000 are allowed" in r.err


def test_the_installed_kli_end_to_end() -> None:
    """The console script in a process of its own, as a user runs it (installed beside the
    interpreter running the tests)."""
    exe = str(Path(sys.executable).parent / "kli")
    env = {**os.environ, "KARTA_DEFINITIONS": "/nonexistent", "KUBECONFIG": "/nonexistent"}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    done = subprocess.run(
        [
            exe,
            "gang",
            "-f",
            WORKLOAD,
            "--definition",
            DEF,
            "--ref",
            REFS,
            "--backend",
            "workload-api",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)["items"]
    assert [
        (o["kind"], o["spec"].get("schedulingPolicy", {}).get("gang", {}).get("minCount")) for o in items
    ] == [
        ("Workload", None),
        ("PodGroup", 4),
    ]


def test_validate_notes_the_extension(kli: Kli) -> None:
    r = kli("validate", DEF)
    assert r.code == 0, r.out + r.err
    assert "note: structureDefinition.references is karta extension E3" in r.err
