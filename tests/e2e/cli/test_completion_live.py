"""Live completion against the real API server (17.9): NAMEs of the resolved type, namespaces for
``-n``, and silence where the cluster cannot or may not answer.

Uses the session's ``training`` workloads (a PyTorchJob and a JobSet with their pods).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from karta.cli.main import main

from .conftest import Training

Complete = Callable[[str], list[str]]


@pytest.fixture
def complete(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Complete:
    """``complete(line)`` -> the values click's bash protocol answers (exit 0, stderr empty)."""
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "no-definitions"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    def run(line: str) -> list[str]:
        words = line.split()
        monkeypatch.setenv("_KLI_COMPLETE", "bash_complete")
        monkeypatch.setenv("COMP_WORDS", line)
        monkeypatch.setenv("COMP_CWORD", str(len(words) if line.endswith(" ") else len(words) - 1))
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            main([])
        out, err = capsys.readouterr()
        assert (exit_info.value.code, err) == (0, "")
        return [line.removeprefix("plain,") for line in out.splitlines() if line]

    return run


def test_names_of_the_resolved_type(complete: Complete, training: Training) -> None:
    flags = f"--kubeconfig {training.kubeconfig} -n {training.namespace}"
    assert complete(f"kli get {flags} pytorchjob ") == ["pytorch-dist-mnist-nccl"]
    assert complete(f"kli get {flags} pytorchjobs.kubeflow.org pyt") == ["pytorch-dist-mnist-nccl"]
    assert complete(f"kli describe {flags} jobsets/") == ["jobsets/paralleljobs"]
    assert complete(f"kli describe {flags} jobset/x") == []
    assert complete(f"kli gang --backend kai {flags} pytorchjob/p") == ["pytorchjob/pytorch-dist-mnist-nccl"]
    pods = complete(f"kli describe {flags} pod paralleljobs-")
    assert "paralleljobs-debug" in pods and "paralleljobs-workers-0-0" in pods
    assert pods == sorted(pods)
    # the flags can come after the TYPE too, as long as they are typed before the word completed
    assert complete(f"kli get jobs -n {training.namespace} --kubeconfig {training.kubeconfig} ") == [
        "paralleljobs-driver-0",
        "paralleljobs-workers-0",
    ]


def test_namespaces(complete: Complete, training: Training) -> None:
    namespaces = complete(f"kli get --kubeconfig {training.kubeconfig} -n ")
    assert training.namespace in namespaces and "default" in namespaces and "kube-system" in namespaces
    assert complete(
        f"kli describe --kubeconfig {training.kubeconfig} --namespace {training.namespace[:-1]}"
    ) == [training.namespace]


def test_silent_where_nothing_can_be_listed(complete: Complete, training: Training) -> None:
    flags = f"--kubeconfig {training.kubeconfig}"
    assert complete(f"kli get {flags} -n {training.namespace} raycluster ") == []  # not served
    assert complete(f"kli get {flags} -n {training.namespace} nosuchtype ") == []
    assert complete(f"kli get {flags} -n karta-no-such-namespace pytorchjob ") == []
    # an identity that may not list anything: no names, no namespaces, no error
    assert complete(f"kli get {flags} --as nobody -n {training.namespace} pytorchjob ") == []
    assert complete(f"kli get {flags} --as nobody -n ") == []
    # the context named does not exist
    assert complete(f"kli get {flags} --context nope -n {training.namespace} pytorchjob ") == []
