"""``kli get`` on several contexts without a live cluster: the usage rules (exit 2 before any
connection), unknown contexts, every cluster unreachable (a warning per context, then exit 1),
the one-cluster commands refusing several contexts, and the CLUSTER column of the table. The
listing itself is tested against real control planes (tests/e2e/cli/test_get_contexts.py)."""

from __future__ import annotations

import datetime as dt
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.cli.views.get import Table

NOW = dt.datetime(2026, 1, 2, 12, 0, 0, tzinfo=dt.UTC)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    """Contexts ``a`` and ``b`` at closed local ports, ``broken`` naming a missing cluster."""
    servers = {"a": f"https://127.0.0.1:{_closed_port()}", "b": f"http://127.0.0.1:{_closed_port()}"}
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "a",
        "clusters": [{"name": n, "cluster": {"server": url}} for n, url in servers.items()],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "u"}} for n in servers]
        + [{"name": "broken", "context": {"cluster": "nowhere", "user": "u"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--all-contexts", "--context", "a"), "--all-contexts lists every context: it takes no --context"),
        (("--context", "a", "--context", "b", "-w"), "-w/--watch follows one cluster"),
        (("--all-contexts", "-w"), "-w/--watch follows one cluster"),
        (
            ("--context", "a", "--context", "b", "--server", "http://127.0.0.1:1"),
            "--server chooses one cluster's server or credentials: not with several contexts",
        ),
        (
            ("--all-contexts", "--user", "u", "--token", "t"),
            "--user, --token choose one cluster's server or credentials",
        ),
        (("--all-contexts", "--insecure-skip-tls-verify"), "--insecure-skip-tls-verify chooses one"),
    ],
)
def test_usage_errors(kli: Callable[..., Any], kubeconfig: Path, args: tuple[str, ...], message: str) -> None:
    result = kli("get", "jobs", "--kubeconfig", str(kubeconfig), *args)
    assert result.code == 2, result.err
    assert result.out == ""
    assert result.err.startswith("error: ") and message in result.err


def test_the_same_context_twice_is_one_cluster(kli: Callable[..., Any], kubeconfig: Path) -> None:
    result = kli("get", "jobs", "--kubeconfig", str(kubeconfig), "--context", "a", "--context", "a")
    assert result.code == 1
    assert "CLUSTER" not in result.out
    assert result.err.startswith("error: cannot reach https://127.0.0.1:")  # the one-cluster error


def test_unknown_contexts_are_one_error(kli: Callable[..., Any], kubeconfig: Path) -> None:
    result = kli("get", "jobs", "--kubeconfig", str(kubeconfig), "--context", "a", "--context", "nope")
    assert result.code == 1
    assert result.err.splitlines() == [
        'error: cannot use the cluster configuration: context "nope" does not exist in the kubeconfig '
        "(its contexts: a, b, broken)",
        "hint: 'kubectl config get-contexts' lists the contexts; --kubeconfig chooses the file",
    ]


def test_no_kubeconfig(kli: Callable[..., Any]) -> None:
    result = kli("get", "jobs", "--all-contexts")
    assert result.code == 1
    assert result.err.startswith("error: no cluster configured: several contexts need a kubeconfig file")


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_no_cluster_listed_is_exit_1_after_a_warning_per_context(
    kli: Callable[..., Any], kubeconfig: Path, fmt: str
) -> None:
    started = time.monotonic()
    result = kli("get", "jobs", "--kubeconfig", str(kubeconfig), "--all-contexts", "-o", fmt)
    assert time.monotonic() - started < 30
    assert result.code == 1
    assert result.out == ""
    lines = result.err.splitlines()
    assert lines[0].startswith('warning: context "a": cannot reach https://127.0.0.1:')
    assert lines[0].endswith("Connection refused")
    assert lines[1].startswith('warning: context "b": cannot reach http://127.0.0.1:')
    assert lines[2] == 'warning: context "broken": cluster "nowhere" does not exist in the kubeconfig'
    assert lines[3] == "error: no cluster could be listed (3 contexts failed: see the warnings)"
    assert lines[4].startswith("hint: ")
    assert len(lines) == 5


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (("describe", "jobs", "x"), "describe"),
        (("top", "nodes"), "top nodes"),
        (("top", "gpus"), "top gpus"),
        (("definitions",), "definitions"),
        (("version",), "version"),
    ],
)
def test_one_cluster_commands_refuse_several_contexts(
    kli: Callable[..., Any], kubeconfig: Path, command: tuple[str, ...], name: str
) -> None:
    result = kli(*command, "--kubeconfig", str(kubeconfig), "--context", "a", "--context", "b")
    assert result.code == 2, result.err
    assert result.err.splitlines()[0] == (
        f"error: kli {name} works on one cluster: --context was given 2 contexts (a, b)"
    )
    assert "'kli get' lists several clusters" in result.err


def test_help(kli: Callable[..., Any]) -> None:
    out = kli("get", "--help").out
    assert "--all-contexts" in out
    assert "repeatable: one cluster each" in " ".join(out.split())
    assert "CLUSTER column" in " ".join(out.split())
    described = kli("describe", "--help").out
    assert "--all-contexts" not in described and "The kubeconfig context to use." in described


def test_the_cluster_column_comes_first() -> None:
    row = {
        "cluster": "east",
        "name": "train",
        "namespace": "ml",
        "kind": "Job",
        "apiVersion": "batch/v1",
        "createdAt": "2026-01-02T11:00:00Z",
        "phases": ["Running"],
        "gpus": 2,
        "components": [{"name": "job", "replicas": 1}],
        "origin": "catalog",
    }
    table = Table(show_cluster=True, show_namespace=True, show_type=False, wide=True, now=lambda: NOW)
    assert table.render([row, {**row, "cluster": "west-long-name"}]).splitlines() == [
        "CLUSTER          NAMESPACE   NAME    PHASE     GPU   COMPONENTS   AGE   GANG     ORIGIN",
        "east             ml          train   Running   2     job:1        60m   <none>   catalog",
        "west-long-name   ml          train   Running   2     job:1        60m   <none>   catalog",
    ]
    plain = Table(show_cluster=False, show_type=False, wide=False, headers=False, now=lambda: NOW)
    assert plain.render([row]) == "train   Running   2   job:1   60m\n"
