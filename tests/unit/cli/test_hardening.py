"""Hostile inputs through ``kli`` (issue 9): component chains at and beyond the validated depth
through every command that evaluates, oversized numbers in every kind of file, duplicate keys,
control characters through every human view, and a million-item ``--pods`` List (fast, bounded
memory: in a subprocess under ``RLIMIT_AS``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.hang_guard import HANG_GUARD_S

from karta.model.validate_structure import MAX_COMPONENT_DEPTH

Kli = Callable[..., Any]

RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d", "\x9c", "\u202e")
OSC52 = "\x1b]52;c;SGVsbG8=\x07"  # write "Hello" to the clipboard
CSI = "\x1b[2J\x1b[31m"  # clear the screen, red
C1 = "\x9b31m\x9d0;title\x9c"  # 8-bit CSI and OSC
BIDI = "\u202eevil"


def assert_safe(*texts: str) -> None:
    for text in texts:
        for raw in RAW_CONTROLS:
            assert raw not in text, (raw, text[:400])


def write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return str(path)


# --------------------------------------------------------------------------- component chains


def chain_definition(depth: int) -> dict[str, Any]:
    """A root and a chain of ``depth`` components, each owned by the one before; the last bears pods."""
    children: list[dict[str, Any]] = [
        {
            "name": f"c{i}",
            "ownerRef": f"c{i - 1}" if i > 1 else "root",
            "kind": {"group": "acme.ai", "version": "v1", "kind": f"Level{i}"},
        }
        for i in range(1, depth + 1)
    ]
    children[-1].update(
        kind={"group": "", "version": "v1", "kind": "Pod"},
        specDefinition={"podTemplateSpecPath": ".spec.template"},
        scaleDefinition={"replicasPath": ".spec.replicas"},
    )
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": f"chain-{depth}"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "root",
                    "kind": {"group": "acme.ai", "version": "v1", "kind": "Chain"},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "statusMappings": {"running": [{"byPhase": "Running"}]},
                    },
                },
                "childComponents": children,
            },
            "optimizationInstructions": {
                "gangScheduling": {"podGroup": {"name": "g", "subGroups": [{"componentName": f"c{depth}"}]}}
            },
        },
    }


CHAIN_OBJECT = {
    "apiVersion": "acme.ai/v1",
    "kind": "Chain",
    "metadata": {"name": "deep", "namespace": "ns", "uid": "u-1"},
    "spec": {
        "replicas": 2,
        "template": {
            "spec": {
                "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]
            }
        },
    },
    "status": {"phase": "Running"},
}


def chain_commands(definition: str, workload: str) -> dict[str, list[str]]:
    return {
        "inspect": ["inspect", "-f", workload, "--definition", definition],
        "gang": ["gang", "-f", workload, "--definition", definition, "--backend", "volcano"],
        "verify": ["verify", "--definition", definition, "--workload", workload],
    }


def test_a_chain_at_the_depth_limit_works_through_every_command(kli: Kli, tmp_path: Path) -> None:
    definition = write(tmp_path, "chain.yaml", chain_definition(MAX_COMPONENT_DEPTH))
    workload = write(tmp_path, "deep.yaml", CHAIN_OBJECT)
    for name, argv in chain_commands(definition, workload).items():
        r = kli(*argv)
        assert r.code == 0, (name, r.err)
        assert "RecursionError" not in r.err and "internal error" not in r.err
    r = kli("inspect", "-f", workload, "--definition", definition, "-o", "json")
    (gang,) = json.loads(r.out)["gang"]["gangs"]
    assert gang["subGroups"][0]["minMember"] == 2
    # describe -f resolves through the user directory
    (tmp_path / "no-definitions").mkdir()
    write(tmp_path / "no-definitions", "chain.yaml", chain_definition(MAX_COMPONENT_DEPTH))
    r = kli("describe", "-f", workload)
    assert r.code == 0, r.err
    assert f"c{MAX_COMPONENT_DEPTH}" in r.out and "TOTAL       2          2" in r.out


@pytest.mark.parametrize("depth", [MAX_COMPONENT_DEPTH + 1, 500])
def test_a_chain_beyond_the_limit_is_the_validation_finding_everywhere(
    kli: Kli, tmp_path: Path, depth: int
) -> None:
    definition = write(tmp_path, "chain.yaml", chain_definition(depth))
    workload = write(tmp_path, "deep.yaml", CHAIN_OBJECT)
    finding = f"'c{MAX_COMPONENT_DEPTH + 1}' is {MAX_COMPONENT_DEPTH + 1} owner levels below the root"
    for name, argv in chain_commands(definition, workload).items():
        r = kli(*argv)
        assert r.code == 1, (name, r.err)
        assert finding in r.err and "is not a valid Karta definition" in r.err, (name, r.err)
    r = kli("validate", definition)
    assert r.code == 1 and finding in r.out
    # the same definition from the user directory: every evaluating command refuses it the same way
    (tmp_path / "no-definitions").mkdir()
    write(tmp_path / "no-definitions", "chain.yaml", chain_definition(depth))
    for argv in (
        ["inspect", "-f", workload],
        ["describe", "-f", workload],
        ["gang", "-f", workload, "--backend", "volcano"],
    ):
        r = kli(*argv)
        assert r.code == 1 and finding in r.err and "internal error" not in r.err, (argv, r.err)
    r = kli("verify", "--definition", f"chain-{depth}", "--workload", workload)
    assert r.code == 1 and "FAIL  definition: is not valid: " in r.out and finding in r.out
    r = kli("definitions")  # listing does not evaluate: the definition is listed
    assert r.code == 0 and f"chain-{depth}" in r.out


# --------------------------------------------------------------------------- numbers in every file

HUGE = "1" + "0" * 5000


@pytest.mark.parametrize(
    "where",
    ["workload", "pods", "definition", "validate", "predictions", "config", "crd", "stdin"],
)
def test_a_5000_digit_integer_in_any_file_is_exit_2_naming_the_file(
    kli: Kli, tmp_path: Path, examples: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    workload = str(examples / "workloads/pytorchjob-train-7.yaml")
    definition = str(examples / "definitions/kubeflow-org-pytorchjob-v1.yaml")
    bad = tmp_path / f"{where}.yaml"
    base = {
        "workload": Path(workload).read_text(),
        "definition": Path(definition).read_text(),
        "validate": Path(definition).read_text(),
        "pods": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
        "predictions": "status: Running\n",
        "config": "output: table\n",
        "crd": (
            Path(__file__).resolve().parents[4] / "shared/corpus/crds/jobset.x-k8s.io_jobsets.yaml"
        ).read_text()
        if (Path(__file__).resolve().parents[4] / "shared/corpus/crds/jobset.x-k8s.io_jobsets.yaml").exists()
        else "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n",
        "stdin": Path(workload).read_text(),
    }[where]
    bad.write_text(base + f"extra: {HUGE}\n")
    argv = {
        "workload": ["inspect", "-f", str(bad)],
        "pods": ["inspect", "-f", workload, "--pods", str(bad)],
        "definition": ["inspect", "-f", workload, "--definition", str(bad)],
        "validate": ["validate", str(bad)],
        "predictions": ["verify", "--definition", definition, "--workload", workload, "--predict", str(bad)],
        "config": ["get", "pods", "--config", str(bad)],
        "crd": ["scaffold", "--crd", str(bad)],
        "stdin": ["describe", "-f", "-"],
    }[where]
    if where == "stdin":
        import io

        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bad.read_bytes())))
    r = kli(*argv)
    assert r.code == 2, r.err
    name = "stdin" if where == "stdin" else str(bad)
    assert f"{name} (line " in r.err and "an integer of 5,001 digits is larger than kli reads" in r.err, r.err
    assert "internal error" not in r.err and len(r.err) < 1000


def test_a_5000_digit_integer_in_the_definitions_directory_is_a_warning(
    kli: Kli, tmp_path: Path, examples: Path
) -> None:
    directory = tmp_path / "no-definitions"
    directory.mkdir()
    (directory / "bad.yaml").write_text(
        f"apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {{name: x}}\nx: {HUGE}\n"
    )
    r = kli("definitions")
    assert r.code == 0
    assert "warning: skipping" in r.err and "bad.yaml" in r.err and "5,001 digits" in r.err


@pytest.mark.parametrize("number", ["1e400", "NaN", "-Infinity", HUGE])
def test_numbers_json_forbids_in_a_json_file_are_exit_2(kli: Kli, tmp_path: Path, number: str) -> None:
    path = write(
        tmp_path,
        "w.json",
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": ' + number + "}",
    )
    r = kli("inspect", "-f", path)
    assert r.code == 2 and f"cannot parse {path} (line 1, column " in r.err, r.err


@pytest.mark.parametrize("number", [".inf", "-.inf", ".nan", "1.0e+400"])
def test_infinities_in_yaml_are_exit_2(kli: Kli, tmp_path: Path, number: str) -> None:
    path = write(tmp_path, "w.yaml", f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nx: {number}\n")
    r = kli("inspect", "-f", path)
    assert r.code == 2 and f"cannot parse {path} (line 4, column 4)" in r.err, r.err


# --------------------------------------------------------------------------- duplicate keys


def test_duplicate_keys_in_a_definition_are_findings(kli: Kli, tmp_path: Path, examples: Path) -> None:
    text = (examples / "definitions/kubeflow-org-pytorchjob-v1.yaml").read_text()
    text = text.replace(
        "  name: kubeflow-org-pytorchjob-v1\n", "  name: kubeflow-org-pytorchjob-v1\n  name: other\n", 1
    )
    path = write(tmp_path, "dup.yaml", text)
    r = kli("validate", path)
    assert r.code == 1
    assert '  duplicate key "metadata.name" (line ' in r.out
    r = kli("inspect", "-f", str(examples / "workloads/pytorchjob-train-7.yaml"), "--definition", path)
    assert r.code == 1 and 'duplicate key "metadata.name"' in r.err


# --------------------------------------------------------------------------- control characters


def evil_workload() -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "job" + OSC52, "namespace": "ns" + CSI, "uid": "u-1"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "m" + BIDI, "image": "i"}]}},
                },
                "Worker": {
                    "replicas": 2,
                    "template": {"spec": {"containers": [{"name": "w" + C1, "image": "i"}]}},
                },
            }
        },
        "status": {
            "conditions": [
                {"type": "Running", "status": "True", "reason": "Why" + OSC52, "message": "m" + CSI}
            ]
        },
    }


def evil_pods() -> dict[str, Any]:
    def pod(name: str, role: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name + OSC52, "labels": {"training.kubeflow.org/replica-type": role}},
            "spec": {"nodeName": "node" + CSI},
            "status": {"phase": "Pending" + C1, "reason": "Unschedulable" + OSC52},
        }

    return {"apiVersion": "v1", "kind": "List", "items": [pod("m-0", "master"), pod("w-0", "worker")]}


def test_control_characters_are_escaped_in_inspect(kli: Kli, tmp_path: Path) -> None:
    workload = write(tmp_path, "w.yaml", evil_workload())
    pods = write(tmp_path, "p.yaml", evil_pods())
    r = kli("inspect", "-f", workload, "--pods", pods)
    assert_safe(r.out, r.err)
    assert "PyTorchJob/job\\x1b]52;c;SGVsbG8=\\x07" in r.out
    assert "condition Running=True (Why\\x1b]52;c;SGVsbG8=\\x07)" in r.out
    assert "containers: w\\x9b31m\\x9d0;title\\x9c" in r.out
    assert "m\\u202eevil" in r.out
    assert "m-0\\x1b]52" in r.out
    # JSON stays exact
    data = json.loads(kli("inspect", "-f", workload, "-o", "json").out)
    assert data["workload"]["name"] == "job" + OSC52
    assert data["status"]["conditions"][0]["reason"] == "Why" + OSC52


def test_control_characters_are_escaped_in_describe(kli: Kli, tmp_path: Path) -> None:
    r = kli("describe", "-f", write(tmp_path, "w.yaml", evil_workload()))
    assert r.code == 0, r.err
    assert_safe(r.out, r.err)
    assert r.out.startswith("PyTorchJob/job\\x1b]52;c;SGVsbG8=\\x07   namespace: ns\\x1b[2J\\x1b[31m   ")


def test_control_characters_are_escaped_in_verify_and_validate(
    kli: Kli, tmp_path: Path, examples: Path
) -> None:
    workload = write(tmp_path, "w.yaml", evil_workload())
    r = kli("verify", "--definition", "kubeflow-org-pytorchjob-v1", "--workload", workload)
    assert_safe(r.out, r.err)
    assert "against PyTorchJob/job\\x1b]52;c;SGVsbG8=\\x07" in r.out
    definition = yaml.safe_load((examples / "definitions/kubeflow-org-pytorchjob-v1.yaml").read_text())
    definition["metadata"]["name"] = "evil" + OSC52
    definition["spec"]["structureDefinition"]["childComponents"][0]["ownerRef"] = "nobody" + CSI
    r = kli("validate", write(tmp_path, "d.yaml", definition))
    assert r.code == 1
    assert_safe(r.out, r.err)
    assert "INVALID: evil\\x1b]52;c;SGVsbG8=\\x07" in r.out and "'nobody\\x1b[2J\\x1b[31m'" in r.out
    assert r.err.startswith("error: 1 finding in evil\\x1b]52")


def test_control_characters_are_escaped_in_definitions(kli: Kli, tmp_path: Path, examples: Path) -> None:
    directory = tmp_path / "no-definitions"
    directory.mkdir()
    definition = yaml.safe_load((examples / "definitions/kubeflow-org-pytorchjob-v1.yaml").read_text())
    definition["metadata"]["name"] = "evil" + OSC52
    for child in definition["spec"]["structureDefinition"]["childComponents"]:
        child["name"] += C1
        child["ownerRef"] = definition["spec"]["structureDefinition"]["rootComponent"]["name"]
    write(directory, "evil.yaml", definition)
    r = kli("definitions", "--group", "kubeflow.org", "--kind", "PyTorchJob", "--component-limit", "0")
    assert r.code == 0, r.err
    assert_safe(r.out, r.err)
    assert "evil\\x1b]52;c;SGVsbG8=\\x07" in r.out and "master\\x9b31m" in r.out
    lines = r.out.splitlines()
    # the component names are not DNS labels: invalid, so the built-in one is used; both listed
    assert [line.split()[2:4] for line in lines[1:]] == [["user", "invalid"], ["catalog", "ok"]]
    assert (
        len(
            {
                line.index("ORIGIN" if i == 0 else "user" if "user" in line else "catalog")
                for i, line in enumerate(lines)
            }
        )
        == 1
    )  # still aligned
    assert "warning: user definition evil\\x1b]52;c;SGVsbG8=\\x07 (" in r.err


def test_error_warning_and_hint_lines_are_escaped(kli: Kli, tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "w.yaml",
        {"apiVersion": "nope.io/v1" + OSC52, "kind": "Thing" + CSI, "metadata": {"name": "x"}},
    )
    r = kli("inspect", "-f", path)
    assert r.code == 4
    assert_safe(r.out, r.err)
    assert r.err.startswith("error: no Karta definition covers Thing\\x1b[2J\\x1b[31m (nope.io/v1\\x1b]52")
    assert all(line.startswith(("error:", "hint:", "warning:")) for line in r.err.splitlines())
    r = kli("get", "jobs", "--phase", "Running\x1b]0;pwned\x07")
    assert r.code == 2 and "\\x1b]0;pwned\\x07" in r.err
    assert_safe(r.err)


# --------------------------------------------------------------------------- a million-item --pods List

_RUN_LIMITED = """
import resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from karta.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_a_million_item_pods_list_is_a_fast_clear_error_in_bounded_memory(
    tmp_path: Path, examples: Path, form: str
) -> None:
    pods = tmp_path / f"pods.{form}"
    if form == "yaml":
        pods.write_text(
            "apiVersion: v1\nkind: List\nitems:\n"
            + "".join(
                f"- {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}}}\n" for i in range(1_000_000)
            )
        )
    else:
        pods.write_text(
            '{"apiVersion": "v1", "kind": "List", "items": [' + ",".join(["{}"] * 1_000_000) + "]}"
        )
    limit = 1024 * 1024 * 1024  # 1 GiB of address space: the interpreter, libjq and what the file costs
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _RUN_LIMITED,
            str(limit),
            "inspect",
            "-f",
            str(examples / "workloads/pytorchjob-train-7.yaml"),
            "--pods",
            str(pods),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "KARTA_DEFINITIONS": str(tmp_path / "none"),
            "KUBECONFIG": str(tmp_path / "none"),
            "PATH": "/usr/bin:/bin",
        },
    )
    elapsed = time.perf_counter() - start
    assert proc.returncode == 2, proc.stderr
    assert "a list has more than 10,000 entries" in proc.stderr and str(pods) in proc.stderr
    assert "MemoryError" not in proc.stderr and "Traceback" not in proc.stderr
    assert elapsed < HANG_GUARD_S, elapsed
