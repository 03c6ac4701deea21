"""Several clusters without a cluster (karta.kube.contexts): which contexts a request selects,
their overrides and default timeout, and the parallel run per cluster: results in order, one
cluster's failure (a closed port, a server that never answers, a broken context, an exception)
delivered for that cluster only, in bounded time, with a bounded number of threads."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.errors import ClusterUnreachableError, KubeConfigError, NoKubeconfigError
from karta.kube import (
    DEFAULT_CLUSTER_TIMEOUT,
    ClusterConfig,
    ClusterTarget,
    ConfigOverrides,
    KubeClient,
    context_names,
    per_cluster,
    select_contexts,
)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers a byte."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield int(sock.getsockname()[1])
    finally:
        sock.close()


def _kubeconfig(path: Path, servers: dict[str, str], *, extra_contexts: dict[str, Any] | None = None) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": next(iter(servers)),
        "clusters": [{"name": name, "cluster": {"server": url}} for name, url in servers.items()],
        "users": [{"name": "admin", "user": {"token": "secret"}}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": "admin", "namespace": f"ns-{name}"}}
            for name in servers
        ]
        + [{"name": name, "context": body} for name, body in (extra_contexts or {}).items()],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    return _kubeconfig(
        tmp_path / "config",
        {
            "west": "https://west:6443",
            "east": "https://east:6443",
            "dead": f"http://127.0.0.1:{_closed_port()}",
        },
        extra_contexts={"broken": {"cluster": "nowhere", "user": "admin"}},
    )


# ------------------------------------------------------------------------------ select_contexts


def test_all_contexts_are_every_context_sorted_by_name(kubeconfig: Path) -> None:
    targets = select_contexts(ConfigOverrides(kubeconfig=str(kubeconfig)), all_contexts=True)
    assert [t.context for t in targets] == ["broken", "dead", "east", "west"]
    broken = targets[0]
    assert broken.config is None and broken.error is not None
    assert 'cluster "nowhere" does not exist' in str(broken.error)
    east = targets[2]
    assert east.config is not None
    assert (east.config.server, east.config.namespace, east.config.context) == (
        "https://east:6443",
        "ns-east",
        "east",
    )
    assert east.config.token == "secret"
    assert east.config.timeout == DEFAULT_CLUSTER_TIMEOUT  # bounded: a dead cluster cannot hang


def test_named_contexts_keep_their_order_once_each_with_the_overrides(kubeconfig: Path) -> None:
    overrides = ConfigOverrides(kubeconfig=str(kubeconfig), namespace="team", request_timeout="2s")
    targets = select_contexts(overrides, contexts=["west", "east", "west"])
    assert [t.context for t in targets] == ["west", "east"]
    assert all(t.config is not None and t.config.namespace == "team" for t in targets)
    assert all(t.config is not None and t.config.timeout == 2.0 for t in targets)
    assert [t.server for t in targets] == ["https://west:6443", "https://east:6443"]


def test_a_request_timeout_of_zero_means_no_limit_as_kubectl(kubeconfig: Path) -> None:
    (target,) = select_contexts(
        ConfigOverrides(kubeconfig=str(kubeconfig), request_timeout="0"), contexts=["east"]
    )
    assert target.config is not None and target.config.timeout is None


def test_unknown_contexts_fail_the_whole_request(kubeconfig: Path) -> None:
    with pytest.raises(KubeConfigError) as caught:
        select_contexts(ConfigOverrides(kubeconfig=str(kubeconfig)), contexts=["east", "nope", "typo"])
    assert str(caught.value) == (
        'contexts "nope", "typo" do not exist in the kubeconfig (its contexts: broken, dead, east, west)'
    )
    with pytest.raises(KubeConfigError, match=r'^context "nope" does not exist'):
        select_contexts(ConfigOverrides(kubeconfig=str(kubeconfig)), contexts=["nope"])


def test_no_kubeconfig_and_no_contexts(tmp_path: Path) -> None:
    with pytest.raises(NoKubeconfigError, match="several contexts need a kubeconfig file"):
        select_contexts(all_contexts=True, environ={"KUBECONFIG": str(tmp_path / "none")})
    with pytest.raises(KubeConfigError, match="does not exist"):
        select_contexts(ConfigOverrides(kubeconfig=str(tmp_path / "none")), all_contexts=True)
    empty = tmp_path / "empty"
    empty.write_text("apiVersion: v1\nkind: Config\n")
    with pytest.raises(KubeConfigError, match="has no contexts"):
        select_contexts(ConfigOverrides(kubeconfig=str(empty)), all_contexts=True)


def test_merged_files_give_the_contexts_of_all(tmp_path: Path) -> None:
    first = _kubeconfig(tmp_path / "a", {"one": "https://one:6443"})
    second = _kubeconfig(tmp_path / "b", {"two": "https://two:6443", "one": "https://ignored:6443"})
    targets = select_contexts(all_contexts=True, environ={"KUBECONFIG": f"{first}:{second}"})
    assert [(t.context, t.server) for t in targets] == [
        ("one", "https://one:6443"),
        ("two", "https://two:6443"),
    ]


# ---------------------------------------------------------------------------------- per_cluster


def test_results_come_in_order_and_each_cluster_has_its_own_client(kubeconfig: Path) -> None:
    targets = select_contexts(ConfigOverrides(kubeconfig=str(kubeconfig)), contexts=["west", "east"])
    seen: list[KubeClient] = []

    def work(client: KubeClient) -> str:
        seen.append(client)
        return f"{client.config.context}@{client.config.server}"

    results = per_cluster(targets, work)
    assert [(r.context, r.value, r.ok) for r in results] == [
        ("west", "west@https://west:6443", True),
        ("east", "east@https://east:6443", True),
    ]
    assert len({id(c) for c in seen}) == 2


def test_one_unreachable_or_broken_cluster_fails_alone(kubeconfig: Path) -> None:
    targets = select_contexts(ConfigOverrides(kubeconfig=str(kubeconfig)), all_contexts=True)

    def work(client: KubeClient) -> int:
        if client.config.context == "dead":
            return len(client.discovery.resources())  # a real request to a closed port
        if client.config.context == "west":
            raise ValueError("west failed in work")
        return 7

    results = {r.context: r for r in per_cluster(targets, work)}
    assert isinstance(results["dead"].error, ClusterUnreachableError)
    assert "Connection refused" in str(results["dead"].error)
    assert results["dead"].server.startswith("http://127.0.0.1:")
    assert isinstance(results["broken"].error, KubeConfigError)
    assert isinstance(results["west"].error, ValueError)
    assert results["east"].value == 7 and results["east"].ok


def test_a_server_that_never_answers_fails_in_bounded_time(tmp_path: Path, silent_port: int) -> None:
    kubeconfig = _kubeconfig(
        tmp_path / "config", {"silent": f"http://127.0.0.1:{silent_port}", "fine": "https://fine:6443"}
    )
    targets = select_contexts(
        ConfigOverrides(kubeconfig=str(kubeconfig), request_timeout="1s"), all_contexts=True
    )

    def work(client: KubeClient) -> str:
        if client.config.context == "silent":
            client.discovery.resources()
        return "listed"

    started = time.monotonic()
    results = {r.context: r for r in per_cluster(targets, work)}
    assert time.monotonic() - started < 10
    assert isinstance(results["silent"].error, ClusterUnreachableError)
    assert "timed out" in str(results["silent"].error)
    assert results["fine"].value == "listed"


def test_at_most_max_parallel_clusters_at_once() -> None:
    targets = [ClusterTarget(f"c{i}", config=_config(f"c{i}")) for i in range(7)]
    lock = threading.Lock()
    now, peak = 0, 0

    def work(client: KubeClient) -> str:
        nonlocal now, peak
        with lock:
            now += 1
            peak = max(peak, now)
        time.sleep(0.05)
        with lock:
            now -= 1
        return client.config.context

    results = per_cluster(targets, work, max_parallel=3)
    assert [r.value for r in results] == [f"c{i}" for i in range(7)]
    assert peak == 3


def test_an_unusable_server_url_is_that_clusters_error() -> None:
    targets = [
        ClusterTarget("bad", config=_config("bad", server="ftp://x")),
        ClusterTarget("ok", config=_config("ok")),
    ]
    results = per_cluster(targets, lambda client: client.config.context)
    assert isinstance(results[0].error, KubeConfigError)
    assert results[1].value == "ok"


def _config(context: str, *, server: str = "https://example:6443") -> ClusterConfig:
    return ClusterConfig(server=server, context=context)


def test_context_names(kubeconfig: Path, tmp_path: Path) -> None:
    assert context_names(ConfigOverrides(kubeconfig=str(kubeconfig))) == ["broken", "dead", "east", "west"]
    assert context_names(environ={"KUBECONFIG": str(tmp_path / "none")}) == []
