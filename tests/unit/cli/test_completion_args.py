"""Completion of ``TYPE[/NAME] [NAME]`` and ``-n`` through click's bash protocol, offline (17.9).

Where each word position goes (TYPE tokens, live NAMEs, namespaces), which connection flags the
live lookup sees, and that a live lookup without a cluster, against a server that never answers or
that fails in any way is silent and ends within the completion timeout.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from karta.cli import completion as cmd_completion
from karta.cli.main import main

Complete = Callable[[str], list[str]]


@pytest.fixture
def complete(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Complete:
    """``complete("kli get pyt")`` -> the ``type,value`` lines; a trailing space starts a new word."""
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "no-definitions"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    def run(line: str) -> list[str]:
        words = line.split()
        cword = len(words) if line.endswith(" ") else len(words) - 1
        monkeypatch.setenv("_KLI_COMPLETE", "bash_complete")
        monkeypatch.setenv("COMP_WORDS", line)
        monkeypatch.setenv("COMP_CWORD", str(cword))
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            main([])
        out, err = capsys.readouterr()
        assert exit_info.value.code == 0
        assert err == ""  # completion never prints an error
        return [line for line in out.splitlines() if line]

    return run


@pytest.fixture
def fake_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, Any]]]:
    """Replace the live lookups: names ``alpha``, ``beta``; namespaces ``ml-team``, ``default``.
    Yields the calls as ``(what, overrides)``."""
    calls: list[tuple[str, Any]] = []

    def names(ctx: click.Context, token: str) -> list[str]:
        calls.append((token, cmd_completion._overrides(ctx)))
        return ["alpha", "beta"]

    def namespaces(ctx: click.Context) -> list[str]:
        calls.append(("namespaces", cmd_completion._overrides(ctx)))
        return ["default", "ml-team"]

    monkeypatch.setattr(cmd_completion, "live_names", names)
    monkeypatch.setattr(cmd_completion, "live_namespaces", namespaces)
    yield calls


@pytest.mark.parametrize("command", ["get", "describe", "gang --backend kai"])
def test_type_position_completes_definition_kinds(complete: Complete, command: str) -> None:
    assert complete(f"kli {command} pytorch") == ["plain,pytorchjob"]
    kinds = complete(f"kli {command} ")
    assert "plain,raycluster" in kinds and "plain,pod" in kinds
    assert "plain,mpijob" not in kinds  # covered at two versions: qualified
    assert "plain,mpijob.v2beta1.kubeflow.org" in kinds
    assert complete(f"kli {command} PyTorchJ") == ["plain,pytorchjob"]


@pytest.mark.parametrize("command", ["get", "describe", "gang --backend kai"])
def test_name_positions(complete: Complete, fake_cluster: list[tuple[str, Any]], command: str) -> None:
    assert complete(f"kli {command} pytorchjob ") == ["plain,alpha", "plain,beta"]
    assert complete(f"kli {command} pytorchjob b") == ["plain,beta"]
    assert complete(f"kli {command} pytorchjobs.kubeflow.org/") == [
        "plain,pytorchjobs.kubeflow.org/alpha",
        "plain,pytorchjobs.kubeflow.org/beta",
    ]
    assert complete(f"kli {command} pj/a") == ["plain,pj/alpha"]
    assert [token for token, _ in fake_cluster] == [
        "pytorchjob",
        "pytorchjob",
        "pytorchjobs.kubeflow.org",
        "pj",
    ]
    # nothing after a NAME, after TYPE/NAME, or for "/NAME" without a TYPE
    assert complete(f"kli {command} pytorchjob alpha ") == []
    assert complete(f"kli {command} pytorchjob/alpha ") == []
    assert complete(f"kli {command} /a") == []
    assert len(fake_cluster) == 4


def test_no_workload_words_with_all_types_or_a_file(complete: Complete, fake_cluster: list[Any]) -> None:
    assert complete("kli get --all-types ") == []
    assert complete("kli describe -f job.yaml ") == []
    assert complete("kli gang --backend kai -f job.yaml ") == []
    assert fake_cluster == []


@pytest.mark.parametrize("command", ["get pytorchjob", "describe", "gang --backend kai"])
def test_namespace_option(complete: Complete, fake_cluster: list[Any], command: str) -> None:
    assert complete(f"kli {command} -n ") == ["plain,default", "plain,ml-team"]
    assert complete(f"kli {command} --namespace m") == ["plain,ml-team"]
    assert complete(f"kli {command} --namespace=m") == ["plain,ml-team"]


def test_live_lookups_see_the_connection_flags_typed_so_far(
    complete: Complete, fake_cluster: list[tuple[str, Any]]
) -> None:
    complete("kli get --kubeconfig /k --context prod --as alice -n ml --request-timeout 1s pytorchjob ")
    complete("kli describe --context dev -n ")
    complete("kli get --request-timeout 5m pytorchjob ")
    (_, first), (_, second), (_, third) = fake_cluster
    assert (first.kubeconfig, first.context, first.as_user, first.namespace) == ("/k", "prod", "alice", "ml")
    assert first.request_timeout == "1s"  # shorter than the completion's own limit: kept
    assert (second.context, second.namespace) == ("dev", None)
    assert third.request_timeout == "2s"  # never longer than the completion timeout


def test_live_names_without_a_cluster_are_silent(complete: Complete) -> None:
    """No kubeconfig: no NAMEs, no namespaces, no error, no delay."""
    start = time.monotonic()
    assert complete("kli get pytorchjob ") == []
    assert complete("kli describe pytorchjob/") == []
    assert complete("kli get -n ") == []
    assert complete("kli get --kubeconfig /does/not/exist pytorchjob ") == []
    assert time.monotonic() - start < cmd_completion.COMPLETION_TIMEOUT


def test_live_names_give_up_after_the_timeout(
    complete: Complete, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A server that accepts connections and never answers: nothing, after the deadline (the
    deadline is the feature under test; shortened here to keep the suite fast)."""
    monkeypatch.setattr(cmd_completion, "COMPLETION_TIMEOUT", 0.3)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
            "users: [{name: u, user: {token: t}}]\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        )
        start = time.monotonic()
        assert complete(f"kli get --kubeconfig {kubeconfig} pytorchjob ") == []
        assert complete(f"kli get --kubeconfig {kubeconfig} -n ") == []
        elapsed = time.monotonic() - start
    assert elapsed < 2 * cmd_completion.COMPLETION_TIMEOUT + 1.0


def test_a_failing_lookup_is_silent(complete: Complete, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(cmd_completion, "_store", boom)
    monkeypatch.setattr(cmd_completion, "live_names", boom)
    monkeypatch.setattr(cmd_completion, "live_namespaces", boom)
    assert complete("kli get pyt") == []
    assert complete("kli get pytorchjob ") == []
    assert complete("kli get -n ") == []


def test_an_unknown_command_is_not_an_error_while_completing(complete: Complete) -> None:
    complete("kli nosuchcommand ")  # asserts: exit 0, nothing on stderr
