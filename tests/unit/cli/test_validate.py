"""``kli validate``: output lines and exit codes of docs/spec/format.md#kli-validate; several files,
directories and documents; ``-o json`` findings for CI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_valid_definition(kli, examples: Path) -> None:
    r = kli("validate", str(examples / "definitions/kubeflow-org-pytorchjob-v1.yaml"))
    assert r.code == 0, r.err
    assert r.out == (
        "OK: kubeflow-org-pytorchjob-v1 is a valid Karta definition (GVK: kubeflow.org/v1, Kind=PyTorchJob)\n"
    )


@pytest.mark.parametrize("name", ["example-dev-jobgroup-v1.yaml", "example-dev-servicegraph-v1.yaml"])
def test_every_bundled_example_is_valid(kli, examples: Path, name: str) -> None:
    r = kli("validate", str(examples / "definitions" / name))
    assert r.code == 0, r.out + r.err
    assert r.out.startswith("OK: ")


def test_invalid_definition_lists_every_finding(kli, examples: Path) -> None:
    r = kli("validate", str(examples / "invalid/broken-karta.yaml"))
    assert r.code == 1
    lines = r.out.splitlines()
    assert lines[0] == "INVALID: broken"
    assert all(line.startswith("  ") for line in lines[1:])
    text = r.out
    assert (
        'unknown field "spec.structureDefinition.rootComponent.specDefinition.fragmentedPodDefinition"'
        in text
    )
    assert "uses byPhase but has no phaseDefinition" in text
    assert "recursive descent operator '..' is not allowed" in text
    assert "modifying operator '|=' is not allowed" in text
    assert "value is not valid JSON" in r.err  # a warning (R2)
    assert "sub-group component 'ghost' is not defined" in text
    assert r.err.splitlines()[-1] == f"error: {len(lines) - 1} findings in broken"


def test_stdin(kli, examples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    text = (examples / "definitions/kubeflow-org-pytorchjob-v1.yaml").read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    r = kli("validate", "-")
    assert r.code == 0
    assert r.out.startswith("OK: kubeflow-org-pytorchjob-v1 ")


def test_warnings_do_not_fail(kli, tmp_path: Path) -> None:
    f = tmp_path / "warn.yaml"
    f.write_text(
        """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: warn}
spec:
  structureDefinition:
    rootComponent:
      name: r
      kind: {group: example.dev, version: v1, kind: W}
      specDefinition: {podTemplateSpecPath: '{metadata: .spec.meta, spec: .spec.pod}'}
      statusDefinition:
        statusMappings:
          running: [{}]
"""
    )
    r = kli("validate", str(f))
    assert r.code == 0, r.out + r.err
    assert r.out.startswith("OK: warn is a valid Karta definition")
    assert "warning: " in r.err
    assert "empty status matcher always matches" in r.err
    assert "path is not assignable" in r.err


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("a: [b\n", "cannot parse"),
        ("", "empty"),
        ("- 1\n- 2\n", "expected"),
        ("kind: Karta\n---\nkind: Karta\n", "bad.yaml (document 2) is not a Karta"),
    ],
)
def test_unparseable_input_is_a_usage_error(kli, tmp_path: Path, content: str, needle: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(content)
    r = kli("validate", str(f))
    assert r.code in (1, 2)
    assert r.err.startswith("error: ")
    assert needle in r.err
    assert "Traceback" not in r.err


def test_missing_file(kli) -> None:
    r = kli("validate", "/nonexistent/file.yaml")
    assert r.code == 2
    assert r.err == "error: cannot read /nonexistent/file.yaml: no such file\n"


def test_json_findings_for_ci(kli, examples: Path) -> None:
    r = kli("validate", "-o", "json", str(examples / "definitions/kubeflow-org-pytorchjob-v1.yaml"))
    assert (r.code, json.loads(r.out)) == (0, [])
    broken = str(examples / "invalid" / "broken-karta.yaml")
    r = kli("validate", "-o", "json", broken, str(examples / "definitions"))
    assert r.code == 1
    rows = json.loads(r.out)
    assert {tuple(sorted(row)) for row in rows} == {("file", "message", "path", "severity")}
    assert {row["file"] for row in rows} == {broken}
    assert {"error", "warning"} == {row["severity"] for row in rows}
    field = "spec.structureDefinition.rootComponent.specDefinition.fragmentedPodDefinition"
    assert {"file": broken, "severity": "error", "path": field, "message": f'unknown field "{field}"'} in rows
    assert r.err.endswith("error: 5 findings in 1 of 4 definitions\n")
    r = kli("validate", "-o", "json", "/nonexistent.yaml", broken)
    assert r.code == 2  # an input that cannot be read: a usage error, after the others are checked
    assert json.loads(r.out)[0] == {
        "file": "/nonexistent.yaml",
        "severity": "error",
        "path": "",
        "message": "cannot read /nonexistent.yaml: no such file",
    }
    assert r.err == "error: cannot read /nonexistent.yaml: no such file\n"


def test_several_files_directories_and_documents(kli, examples: Path, tmp_path: Path) -> None:
    one = (examples / "definitions" / "kubeflow-org-pytorchjob-v1.yaml").read_text()
    (tmp_path / "sub").mkdir()
    (tmp_path / "two.yaml").write_text(one + "---\n" + one.replace("kubeflow-org-pytorchjob-v1", "copy"))
    (tmp_path / "sub" / "deep.yml").write_text(one)
    (tmp_path / "notes.txt").write_text("not a definition")
    r = kli("validate", str(tmp_path))
    assert r.code == 0, r.err
    assert r.out.splitlines() == [
        f"OK: kubeflow-org-pytorchjob-v1 is a valid Karta definition (GVK: kubeflow.org/v1, Kind=PyTorchJob)"
        f" in {tmp_path / 'two.yaml'}",
        f"OK: copy is a valid Karta definition (GVK: kubeflow.org/v1, Kind=PyTorchJob)"
        f" in {tmp_path / 'two.yaml'}",
    ]
    assert len(kli("validate", "-R", str(tmp_path)).out.splitlines()) == 3  # and sub/deep.yml
    r = kli("validate", str(tmp_path / "sub"), str(examples / "invalid"))
    assert r.code == 1
    assert r.out.splitlines()[0].startswith("OK: kubeflow-org-pytorchjob-v1 ")
    assert r.out.splitlines()[1] == f"INVALID: broken in {examples / 'invalid' / 'broken-karta.yaml'}"
    empty = tmp_path / "empty"
    empty.mkdir()
    r = kli("validate", str(empty))
    assert r.code == 2 and "holds no .yaml, .yml, .json file" in r.err


def test_wrong_kind_is_reported(kli, tmp_path: Path) -> None:
    f = tmp_path / "pod.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    r = kli("validate", str(f))
    assert r.code in (1, 2)
    assert "Karta" in r.err + r.out
