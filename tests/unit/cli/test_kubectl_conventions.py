"""kubectl's conventions in ``kli`` (issue 12), offline: the object formats of ``kli definitions``
(``-o name``, ``-o jsonpath=``, ``-o custom-columns=``, ``--no-headers``, ``--sort-by``) and
their usage errors, ``-f`` with several documents, directories and standard input for
``describe``, ``inspect`` and ``gang``, a bare ``kli``, ``kli version`` without a cluster, and the
program name ``kubectl kli``. The live halves are in tests/e2e/cli/test_kubectl_conventions.py."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.cli import printing
from karta.cli.errors import UsageError
from karta.cli.main import main

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def user_examples(monkeypatch: pytest.MonkeyPatch, examples: Path) -> Path:
    """The example definitions are the user's (so that every example workload resolves)."""
    monkeypatch.setenv("KARTA_DEFINITIONS", str(examples / "definitions"))
    monkeypatch.delenv("KARTA_OUTPUT", raising=False)
    return examples


# ------------------------------------------------------------------------------ object formats


def test_definitions_in_the_object_formats(kli: Callable[..., Any]) -> None:
    names = kli("definitions", "--group", "ray.io", "-o", "name")
    assert (names.code, names.out) == (
        0,
        "karta.run.ai/ray-io-raycluster-v1\nkarta.run.ai/ray-io-rayjob-v1\nkarta.run.ai/ray-io-rayservice-v1\n",
    )
    path = ".spec.structureDefinition.rootComponent.kind.kind"
    columns = kli("definitions", "--group", "ray.io", "-o", f"custom-columns=NAME:.metadata.name,KIND:{path}")
    assert columns.out.splitlines() == [
        "NAME                   KIND",
        "ray-io-raycluster-v1   RayCluster",
        "ray-io-rayjob-v1       RayJob",
        "ray-io-rayservice-v1   RayService",
    ]
    bare = kli("definitions", "--group", "ray.io", "--no-headers", "-o", f"custom-columns=K:{path},X:.nope")
    assert bare.out.splitlines() == ["RayCluster   <none>", "RayJob       <none>", "RayService   <none>"]
    template = "jsonpath={range .items[*]}{.metadata.name}{'\\n'}{end}"
    listed = kli("definitions", "--group", "ray.io", "-o", template)
    assert listed.out == "ray-io-raycluster-v1\nray-io-rayjob-v1\nray-io-rayservice-v1\n"
    one = kli("definitions", "ray-io-rayjob-v1", "-o", f"jsonpath={{{path}}}")
    assert one.out == "RayJob"  # one named object: the template sees it bare; no newline added


def test_sort_by_a_field_of_the_objects(kli: Callable[..., Any]) -> None:
    path = ".spec.structureDefinition.rootComponent.kind.kind"
    r = kli("definitions", "--group", "kubeflow.org", "--sort-by", path, "-o", f"custom-columns=K:{path}")
    kinds = r.out.split()[1:]
    assert kinds == sorted(kinds) and kinds[0] == "Experiment"  # Katib's: first of kubeflow.org
    table = kli("definitions", "--group", "kubeflow.org", f"--sort-by={{{path}}}", "--no-headers")
    assert [line.split()[1].split(".")[0] for line in table.out.splitlines()] == kinds
    missing = kli("definitions", "--sort-by", ".status.nope")
    assert missing.code == 2
    assert "error: --sort-by .status.nope: no object has this field" in missing.err
    assert "their fields: .apiVersion, .kind, .metadata, .spec" in missing.err


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("jsonpath={.items[0", "invalid JSONPath '{.items[0': the action at character 1 is not closed"),
        ("jsonpath={.items.length()}", "functions (length()) are not supported"),
        ("jsonpath=", "-o jsonpath= needs a template"),
        ("custom-columns=NAME", "'NAME' is not HEADER:PATH"),
        ('custom-columns=A:.a[?(@.x=~"y")]', "regular expressions (=~) are not supported"),
        ("go-template={{.}}", "'go-template={{.}}' is not one of"),
    ],
)
def test_a_template_outside_the_subset_is_a_usage_error_naming_it(
    kli: Callable[..., Any], output: str, message: str
) -> None:
    r = kli("definitions", "-o", output)
    assert (r.code, r.out) == (2, "")
    assert r.err.startswith("error: ") and message in r.err, r.err


def test_custom_columns_split_at_the_commas_between_columns() -> None:
    columns = printing.parse_columns('custom-columns=A:.items[?(@.n=="x,y")].v,B:{.b}')
    assert columns.headers == ("A", "B")
    item = {"items": [{"n": "x,y", "v": 1}, {"n": "z", "v": 2}], "b": {"c": [True, None]}}
    assert columns.cells(item) == ["1", '{"c":[true,null]}']


def test_object_names_are_kind_dot_group() -> None:
    assert printing.object_name("PyTorchJob", "kubeflow.org/v1", "mnist") == "pytorchjob.kubeflow.org/mnist"
    assert printing.object_name("Pod", "v1", "p") == "pod/p"


def test_sort_items_orders_numbers_strings_and_missing_values() -> None:
    path = printing.parse_sort_by(".v")
    assert path is not None
    items = [{"v": 10}, {"v": 9.5}, {"x": 1}, {"v": "b"}, {"v": "a"}]
    assert printing.sort_items(items, path) == [{"x": 1}, {"v": 9.5}, {"v": 10}, {"v": "a"}, {"v": "b"}]
    with pytest.raises(UsageError, match="invalid JSONPath"):
        printing.parse_sort_by(".a[")


# ------------------------------------------------------------------------------ -f FILE|DIR|-


def _workloads(examples: Path) -> str:
    """The three example workloads as one multi-document stream."""
    files = sorted((examples / "workloads").glob("*.yaml"))
    return "".join(f.read_text().rstrip("\n") + "\n---\n" for f in files)


def test_describe_a_directory_and_a_multi_document_stdin(
    kli: Callable[..., Any], user_examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = kli("describe", "-f", str(user_examples / "workloads"))
    assert r.code == 0, r.err
    heads = [line for line in r.out.splitlines() if "   definition: " in line]
    assert [h.split()[0] for h in heads] == ["JobGroup/etl", "PyTorchJob/train-7", "ServiceGraph/chat"]
    assert "\n\n\nPyTorchJob/train-7" in r.out  # two blank lines between workloads, as kubectl
    monkeypatch.setattr(sys, "stdin", io.StringIO(_workloads(user_examples)))
    as_json = kli("describe", "-f", "-", "-o", "json")
    data = json.loads(as_json.out)
    assert data["count"] == 3 and [v["name"] for v in data["items"]] == ["etl", "train-7", "chat"]
    single = kli("describe", "-f", str(user_examples / "workloads" / "pytorchjob-train-7.yaml"), "-o", "json")
    assert json.loads(single.out)["name"] == "train-7"  # one object: the bare report (17.6)
    names = kli("describe", "-f", str(user_examples / "workloads"), "-o", "jsonpath={.items[*].name}")
    assert (names.code, names.out) == (0, "etl train-7 chat")
    train = str(user_examples / "workloads" / "pytorchjob-train-7.yaml")
    gpus = kli("describe", "-f", train, "-o", "jsonpath={.resources.gpus} {.components[*].name}")
    assert gpus.out == "33 master worker"
    assert kli("describe", "-f", train, "-o", "name").code == 2  # only jsonpath among kubectl's formats


def test_objects_no_definition_covers_are_skipped_among_several(
    kli: Callable[..., Any], examples: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "none"))  # the catalog alone
    r = kli("describe", "-f", str(examples / "workloads"))
    assert r.code == 0, r.err
    assert r.out.startswith("PyTorchJob/train-7   ")
    assert "warning: skipping " in r.err and "no Karta definition covers JobGroup (example.dev/v1)" in r.err
    only_uncovered = tmp_path / "uncovered"
    only_uncovered.mkdir()
    for name in ("jobgroup-etl.yaml", "servicegraph-chat.yaml"):
        shutil.copy(examples / "workloads" / name, only_uncovered / name)
    r = kli("describe", "-f", str(only_uncovered))
    assert r.code == 4 and "no Karta definition covers any of the 2 objects" in r.err


def test_recursive_directories_and_empty_ones(
    kli: Callable[..., Any], user_examples: Path, tmp_path: Path
) -> None:
    (tmp_path / "nested").mkdir()
    shutil.copy(user_examples / "workloads" / "pytorchjob-train-7.yaml", tmp_path / "nested" / "job.yml")
    flat = kli("describe", "-f", str(tmp_path))
    assert flat.code == 2 and "holds no .yaml, .yml, .json file (-R reads its subdirectories too)" in flat.err
    deep = kli("describe", "-f", str(tmp_path), "-R")
    assert deep.code == 0, deep.err
    assert deep.out.startswith("PyTorchJob/train-7   ")


def test_inspect_and_gang_take_several_workloads(kli: Callable[..., Any], user_examples: Path) -> None:
    workloads = str(user_examples / "workloads")
    r = kli("inspect", "-f", workloads, "-o", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert [v["workload"]["name"] for v in data["items"]] == ["etl", "train-7", "chat"]
    table = kli("inspect", "-f", workloads)
    assert table.out.count("Components:") == 3
    pods = str(user_examples / "pods" / "pytorchjob-train-7-pods.yaml")
    mixed = kli("inspect", "-f", workloads, "--pods", pods)
    assert mixed.code == 2 and "--pods goes with one workload" in mixed.err
    gang = kli("gang", "-f", workloads, "--backend", "volcano")
    assert gang.code == 0, gang.err
    groups = list(yaml.safe_load_all(gang.out))
    assert {g["metadata"]["name"] for g in groups} == {"train-7-job", "chat-graph"}
    as_list = json.loads(kli("gang", "-f", workloads, "--backend", "volcano", "-o", "json").out)
    assert as_list["items"] == groups


# ------------------------------------------------------------------------------ kli itself


def test_a_bare_kli_prints_the_help_and_succeeds(kli: Callable[..., Any]) -> None:
    r = kli()
    assert (r.code, r.err) == (0, "")
    assert r.out.startswith("Usage: kli [OPTIONS] COMMAND [ARGS]...")
    assert r.out == kli("--help").out


def test_version_offline(kli: Callable[..., Any]) -> None:
    from karta import __version__

    client = kli("version", "--client")
    assert (client.code, client.out, client.err) == (0, f"Client Version: {__version__}\n", "")
    no_cluster = kli("version")
    assert (no_cluster.code, no_cluster.out) == (0, f"Client Version: {__version__}\n")
    assert no_cluster.err.startswith("warning: no cluster configured: ")
    assert no_cluster.err.rstrip().endswith("the server version is unknown")
    data = yaml.safe_load(kli("version", "--client", "-o", "yaml").out)
    assert data["clientVersion"]["version"] == __version__ and "serverVersion" not in data
    unreachable = kli("version", "--server", "https://127.0.0.1:9", "-o", "json")
    assert unreachable.code == 0 and "serverVersion" not in json.loads(unreachable.out)
    assert "cannot reach https://127.0.0.1:9" in unreachable.err
    assert kli("--version").out == f"kli {__version__}\n"


def test_kubectl_kli_is_the_program_name_everywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv), prog_name="kubectl kli")
        out, err = capsys.readouterr()
        return code, out, err

    try:
        code, out, _ = run("--help")
        assert code == 0 and out.startswith("Usage: kubectl kli [OPTIONS] COMMAND [ARGS]...")
        assert "`kubectl kli validate` checks a definition" in out
        _, out, _ = run("get", "--help")
        assert out.startswith("Usage: kubectl kli get [OPTIONS]")
        _, out, _ = run("describe", "--help")
        assert "resolved as by `kubectl kli get`" in " ".join(out.split())
        code, _, err = run("get")
        assert code == 2 and "hint: run 'kubectl kli get --help'" in err
        code, _, err = run("gett")
        assert "Run 'kubectl kli --help' for the commands" in err
        code, _, err = run("definitions", "nope")
        assert code == 4 and 'Run "kubectl kli definitions" to see what is available' in err
    finally:
        main(["--version"])  # the program name is process state: back to kli
        capsys.readouterr()


def test_the_kubectl_kli_console_script(tmp_path: Path) -> None:
    """A ``kubectl-kli`` executable (as the console script is installed) calls itself ``kubectl
    kli``; through kubectl's plugin mechanism too, when kubectl is installed."""
    script = tmp_path / "kubectl-kli"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(REPO / 'src')!r})\n"
        "from karta.cli.entry import kubectl_main\nkubectl_main()\n"
    )
    script.chmod(0o755)
    env = {**os.environ, "KUBECONFIG": str(tmp_path / "none"), "HOME": str(tmp_path)}
    env["PATH"] = f"{tmp_path}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: kubectl kli [OPTIONS] COMMAND [ARGS]...")
    bare = subprocess.run([str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert (bare.returncode, bare.stdout) == (0, done.stdout)
    if shutil.which("kubectl") is None:
        return
    plugin = subprocess.run(["kubectl", "kli", "get"], capture_output=True, text=True, env=env, timeout=60)
    assert plugin.returncode == 2
    assert "hint: run 'kubectl kli get --help'" in plugin.stderr
