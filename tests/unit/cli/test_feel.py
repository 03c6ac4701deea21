"""How ``kli`` feels (issue 5): tables fit a terminal of 100 columns on the bundled examples and the
corpus (and, as kubectl, are never cut off a terminal: issue 12), no
ANSI colour unless stdout is a terminal and never with ``-o json|yaml``, errors say what to do
next, and ``kubectl kli`` is kli.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.cli.main import main

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"
CORPUS = REPO.parent / "shared" / "corpus"
WIDTH = 100


def corpus_workloads() -> list[Path]:
    return sorted((CORPUS / "workloads").rglob("*.yaml")) if CORPUS.is_dir() else []


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> Iterator[Callable[..., tuple[int, str, str]]]:
    """``cli(*argv, tty=False)`` -> (code, stdout, stderr); the example definitions are the user's."""
    monkeypatch.setenv("KARTA_DEFINITIONS", str(EXAMPLES / "definitions"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("KARTA_OUTPUT", "KARTA_CONFIG", "KUBERNETES_SERVICE_HOST", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)

    def run(*argv: str, tty: bool = False) -> tuple[int, str, str]:
        capsys.readouterr()
        with monkeypatch.context() as m:
            if tty:  # stdout claims to be a terminal, 100 columns wide
                m.setattr(sys.stdout, "isatty", lambda: True, raising=False)
                m.setenv("COLUMNS", str(WIDTH))
            code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    yield run


def _too_wide(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > WIDTH]


# ------------------------------------------------------------------------------ 100 columns


def test_inspect_fits_on_the_examples_with_pods(cli: Callable[..., Any]) -> None:
    for workload, pods in (
        ("pytorchjob-train-7", "pytorchjob-train-7-pods"),
        ("jobgroup-etl", "jobgroup-etl-pods"),
        ("servicegraph-chat", None),
    ):
        argv = ["inspect", "-f", str(EXAMPLES / "workloads" / f"{workload}.yaml")]
        if pods:
            argv += ["--pods", str(EXAMPLES / "pods" / f"{pods}.yaml")]
        code, out, err = cli(*argv, tty=True)
        assert code == 0, err
        assert _too_wide(out) == []
        code, out, err = cli("describe", "-f", str(EXAMPLES / "workloads" / f"{workload}.yaml"))
        assert code == 0, err
        assert _too_wide(out) == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not next to the checkout")
def test_inspect_and_describe_fit_on_the_corpus(cli: Callable[..., Any]) -> None:
    """Every corpus manifest that resolves: inspect entirely, describe -f below its headers (a
    header is one line by the format's rule 17.6, "separated by three spaces"; a file of several
    documents has one per workload)."""
    shown = 0
    for path in corpus_workloads():
        code, out, _ = cli("inspect", "-f", str(path), tty=True)
        if code != 0:
            continue
        shown += 1
        assert _too_wide(out) == [], path
        code, out, _ = cli("describe", "-f", str(path))
        assert code == 0, path
        body = [line for line in out.splitlines() if "   definition: " not in line]  # headers: one line
        assert _too_wide("\n".join(body)) == [], path
    assert shown >= 50


def test_definitions_fit(cli: Callable[..., Any]) -> None:
    for argv in ((), ("--group", "kubeflow.org"), ("--group", "serving.kserve.io"), ("core-pod-v1",)):
        code, out, err = cli("definitions", *argv, tty=True)
        assert code == 0, err
        assert _too_wide(out) == [], argv
        header = out.splitlines()[0].split()
        assert header in (
            ["NAME", "KIND", "ORIGIN", "STATUS", "COMPONENTS"],
            ["NAME", "KIND", "ORIGIN", "STATUS"],
            ["NAME", "ORIGIN", "STATUS"],  # the whole catalog: its longest NAME spells the kind
        )


# ------------------------------------------------------------------------------ colour


def _offline_runs() -> list[list[str]]:
    workload = str(EXAMPLES / "workloads" / "pytorchjob-train-7.yaml")
    definition = str(EXAMPLES / "definitions" / "kubeflow-org-pytorchjob-v1.yaml")
    pods = str(EXAMPLES / "pods" / "pytorchjob-train-7-pods.yaml")
    runs = [
        ["validate", definition],
        ["validate", str(EXAMPLES / "invalid" / "broken-karta.yaml")],
        ["gang", "-f", workload, "--backend", "volcano"],
        ["rbac", definition],
        ["verify", "--definition", definition, "--workload", workload],
        ["definitions", "--group", "kubeflow.org"],
        ["definitions", "kubeflow-org-pytorchjob-v1"],
        ["inspect", "-f", workload, "--pods", pods],
        ["describe", "-f", workload],
        ["inspect", "-f", str(EXAMPLES / "workloads" / "jobgroup-etl.yaml"), "--definition", "nope.yaml"],
        ["get", "pytorchjobs"],  # no cluster: an error
    ]
    crds = sorted((CORPUS / "crds").glob("*.yaml"))[:1] if CORPUS.is_dir() else []
    runs += [["scaffold", "--crd", str(crd)] for crd in crds]
    return runs


@pytest.mark.parametrize("tty", [False, True])
def test_no_ansi_codes_off_a_terminal_and_never_in_json_or_yaml(cli: Callable[..., Any], tty: bool) -> None:
    for argv in _offline_runs():
        formats: list[list[str]] = [[]]
        if argv[0] in ("inspect", "describe", "definitions", "verify", "get"):
            formats += [["-o", "json"], ["-o", "yaml"]]
        for fmt in formats:
            _, out, err = cli(*argv, *fmt, tty=tty)
            assert "\x1b" not in out and "\x1b" not in err, (argv, fmt)


def test_get_colours_only_tables_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from karta.cli.commands.get import Request, Run
    from karta.kube import ConfigOverrides

    def table_colour(fmt: str) -> bool:
        run = Run(
            request=Request((("jobs", ()),)),
            phases=frozenset(),
            selector=None,
            chunk_size=500,
            all_namespaces=False,
            fmt=fmt,
            gpu_resources=("nvidia.com/gpu",),
            overrides=ConfigOverrides(),
        )
        return run._table().colour

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    assert not table_colour("table")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    assert table_colour("table") and table_colour("wide")
    assert not table_colour("json") and not table_colour("yaml")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not table_colour("table")


# ------------------------------------------------------------------------------ next steps


@pytest.mark.parametrize(
    ("argv", "code", "expected"),
    [
        # no definition: where to look and how to write one
        (["describe", "-f", "examples/workloads/jobgroup-etl.yaml"], 4, ("kli definitions", "kli scaffold")),
        (["inspect", "-f", "examples/workloads/jobgroup-etl.yaml"], 4, ("kli definitions", "kli scaffold")),
        (["definitions", "no-such-definition"], 4, ('Run "kli definitions"',)),
        (["rbac", "no-such-definition"], 4, ('Run "kli definitions"',)),
        # no cluster: how to point kli at one, and what works offline
        (["get", "pytorchjobs"], 1, ("--kubeconfig", "kli describe -f")),
        (["describe", "pytorchjob/x"], 1, ("--kubeconfig",)),
        (["gang", "pytorchjob/x", "--backend", "kai"], 1, ("--kubeconfig",)),
        # usage errors: the command's help
        (["get"], 2, ("kli get --help",)),
        (["get", "pods", "--chunk-size", "x"], 2, ("kli get --help",)),
        (["get", "pods", "-o"], 2, ("kli get --help",)),
        (["describe"], 2, ("kli describe --help",)),
        (["gang", "-f", "x.yaml"], 2, ("kli gang --help", "kai")),
        (["completion"], 2, ("bash, zsh, fish, powershell",)),
        (["nosuchcommand"], 2, ("kli --help",)),
        (["gett"], 2, ("Did you mean 'get'",)),
        # unknown options: a long one gets suggestions, a short one its own error (karta.cli.main._Parser)
        (["inspect", "--fil", "x.yaml"], 2, ("No such option '--fil'.", "'--file'")),
        (["inspect", "--pod=x", "-f", "x.yaml"], 2, ("No such option '--pod'. Did you mean '--pods'?",)),
        (["inspect", "-q"], 2, ("No such option '-q'.", "kli inspect --help")),
        (["--hlep"], 2, ("No such option '--hlep'. Did you mean '--help'?",)),
        (["-x"], 2, ("No such option '-x'.",)),
    ],
)
def test_errors_say_what_to_do_next(
    cli: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    code: int,
    expected: tuple[str, ...],
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("KARTA_DEFINITIONS", "/nonexistent")  # the example kinds are not covered
    got, _, err = cli(*argv)
    assert got == code, err
    assert err.startswith("error: ")
    for text in expected:
        assert text in err, (text, err)
    for line in err.splitlines():
        assert line.startswith(("error: ", "hint: ", "warning: ")), line


# ------------------------------------------------------------------------------ kubectl kli


def _script(name: str) -> Path:
    return Path(sys.executable).parent / name


@pytest.mark.skipif(not _script("kubectl-kli").exists(), reason="kli is not installed in this environment")
def test_kubectl_kli_entry_point_prints_klis_help_as_kubectl_kli(tmp_path: Path) -> None:
    env = {**os.environ, "KUBECONFIG": str(tmp_path / "none"), "HOME": str(tmp_path)}
    done = subprocess.run(
        [str(_script("kubectl-kli")), "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: kubectl kli ")  # kubectl's plugin convention
    assert "validate" in done.stdout and "completion" in done.stdout


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")
def test_kubectl_finds_the_plugin(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PATH": f"{_script('kubectl-kli').parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "KUBECONFIG": str(tmp_path / "none"),
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        ["kubectl", "kli", "--help"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: kubectl kli ")  # kubectl's plugin convention
