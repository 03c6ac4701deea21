"""kli as an installer's tool: ``kli crd`` prints the shipped CRD, ``kli catalog export`` the
built-in catalog as the Karta objects the controller's ``--install-catalog`` applies (stdout or
``--dir``), and ``kubectl_complete-kli`` answers kubectl's plugin completion from kli's own."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import yaml

from karta.catalog import catalog_slugs
from karta.cli.kubectl_complete import ERROR, FILTER_DIRS, NO_FILE_COMP, answer, main
from karta.crd import CRD_FILE, load_crd, render_crd_yaml
from karta.definitions import INDEX_LABELS, MANAGED_BY, catalog_objects, root_gvk

REPO = Path(__file__).resolve().parents[3]


# ------------------------------------------------------------------------------------ kli crd


def test_crd_prints_the_shipped_manifest(kli) -> None:
    r = kli("crd")
    assert r.code == 0 and r.err == ""
    assert r.out == CRD_FILE.read_text(encoding="utf-8") == render_crd_yaml()
    assert yaml.safe_load(r.out) == load_crd()


def test_crd_as_json(kli) -> None:
    r = kli("crd", "-o", "json")
    assert r.code == 0 and r.err == ""
    assert json.loads(r.out) == load_crd()


def test_crd_refuses_another_format(kli) -> None:
    r = kli("crd", "-o", "table")
    assert r.code == 2
    assert r.err.startswith("error: Invalid value for '-o' / '--output'")


# ---------------------------------------------------------------------------- catalog export


def _documents(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def test_export_prints_every_builtin_as_the_installer_applies_it(kli) -> None:
    r = kli("catalog", "export")
    assert r.code == 0 and r.err == ""
    assert r.out.startswith(
        f"# The {len(catalog_slugs())} built-in Karta definitions of karta {version('karta')}"
    )
    docs = _documents(r.out)
    assert docs == catalog_objects()  # the one library function --install-catalog applies
    assert [d["metadata"]["name"] for d in docs] == catalog_slugs()
    assert r.out.count("\n---\n") == len(docs) - 1
    for doc in docs:
        assert (doc["apiVersion"], doc["kind"]) == ("run.ai/v1alpha1", "Karta")
        labels = doc["metadata"]["labels"]
        assert labels[MANAGED_BY] == "karta"
        gvk = root_gvk(doc)
        assert gvk is not None
        assert {k: labels[k] for k in INDEX_LABELS} == dict(zip(INDEX_LABELS, gvk, strict=True))
        assert "status" not in doc


def test_export_core_group_label_is_empty(kli) -> None:
    pod = next(d for d in _documents(kli("catalog", "export").out) if d["metadata"]["name"] == "core-pod-v1")
    assert pod["metadata"]["labels"]["run.ai/karta-group"] == ""
    assert pod["metadata"]["labels"]["run.ai/karta-kind"] == "Pod"


def test_export_as_a_json_list(kli) -> None:
    r = kli("catalog", "export", "-o", "json")
    assert r.code == 0 and r.err == ""
    data = json.loads(r.out)
    assert (data["apiVersion"], data["kind"]) == ("v1", "List")
    assert data["items"] == catalog_objects()


def test_export_to_a_directory_writes_one_file_per_definition(kli, tmp_path: Path) -> None:
    target = tmp_path / "a" / "catalog"
    (tmp_path / "a").mkdir()
    stale = target / "batch-job-v1.yaml"
    target.mkdir()
    stale.write_text("old")
    (target / "mine.yaml").write_text("kept")
    r = kli("catalog", "export", "--dir", str(target))
    assert r.code == 0 and r.err == ""
    written = r.out.splitlines()
    assert written == [str(target / f"{name}.yaml") for name in catalog_slugs()]
    by_name = {o["metadata"]["name"]: o for o in catalog_objects()}
    for path in map(Path, written):
        assert yaml.safe_load(path.read_text()) == by_name[path.stem]
    assert (target / "mine.yaml").read_text() == "kept"  # other files are left alone


def test_export_json_files(kli, tmp_path: Path) -> None:
    r = kli("catalog", "export", "--dir", str(tmp_path / "new"), "-o", "json")
    assert r.code == 0
    files = sorted((tmp_path / "new").iterdir())
    assert [f.name for f in files] == sorted(f"{n}.json" for n in catalog_slugs())
    assert json.loads(files[0].read_text())["kind"] == "Karta"


def test_export_dir_that_is_a_file_is_a_usage_error(kli, tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("")
    r = kli("catalog", "export", "--dir", str(target))
    assert r.code == 2 and r.out == ""
    assert "--dir" in r.err and "is a file" in r.err


def test_export_dir_that_cannot_be_written(kli, tmp_path: Path) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    (parent / "blocker").write_text("")  # a file where a directory is needed
    r = kli("catalog", "export", "--dir", str(parent / "blocker" / "sub"))
    assert r.code == 1 and r.out == ""
    lines = r.err.splitlines()
    assert lines[0].startswith(f"error: --dir {parent / 'blocker' / 'sub'}: cannot write: ")
    assert lines[1] == "hint: choose a directory you can write to"


def test_catalog_alone_prints_its_help(kli) -> None:
    r = kli("catalog")
    assert r.code == 0 and r.err == ""
    assert r.out.startswith("Usage: kli catalog [OPTIONS] [COMMAND] [ARGS]...")
    assert "export  Print the built-in definitions as Karta objects to apply." in r.out


# --------------------------------------------------------------------- kubectl_complete-kli


def _lines(text: str) -> tuple[list[str], str]:
    *items, directive = text.splitlines()
    return items, directive


def test_kubectl_completion_of_commands_with_descriptions() -> None:
    items, directive = _lines(answer([""]))
    assert directive == f":{NO_FILE_COMP}"
    names = [line.split("\t")[0] for line in items]
    assert {"catalog", "crd", "get", "validate"} <= set(names)
    assert "crd\tPrint the Karta CustomResourceDefinition (kartas.run.ai)." in items


def test_kubectl_completion_of_a_prefix_a_subcommand_and_choices() -> None:
    assert answer(["ca"]) == "catalog\tExport the built-in definitions as Karta objects to apply.\n:4\n"
    items, _ = _lines(answer(["catalog", ""]))
    assert [i.split("\t")[0] for i in items] == ["export"]
    assert _lines(answer(["catalog", "export", "-o", ""])) == (["yaml", "json"], ":4")
    assert _lines(answer(["completion", "z"])) == (["zsh"], ":4")


def test_kubectl_completion_of_flags() -> None:
    items, _ = _lines(answer(["catalog", "export", "--"]))
    assert [i.split("\t")[0] for i in items] == ["--dir", "--output", "--help"]


def test_kubectl_completion_of_a_directory_leaves_it_to_the_shell() -> None:
    assert answer(["catalog", "export", "--dir", ""]) == f":{FILTER_DIRS}\n"


def test_kubectl_completion_of_definition_names() -> None:
    items, directive = _lines(answer(["rbac", "batch-j"]))
    assert directive == ":4"
    assert "batch-job-v1" in [i.split("\t")[0] for i in items]


def test_the_kubectl_complete_script_never_fails_loudly(capsys, monkeypatch) -> None:
    def broken(words: list[str]) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr("karta.cli.kubectl_complete.answer", broken)
    assert main(["get", ""]) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (f":{ERROR}\n", "")


def test_the_console_script_is_declared_and_runs() -> None:
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl_complete-kli"] == "karta.cli.kubectl_complete:main"
    done = subprocess.run(
        [sys.executable, "-m", "karta.cli.kubectl_complete", "catalog", "ex"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "export\tPrint the built-in definitions as Karta objects to apply.\n:4\n"
