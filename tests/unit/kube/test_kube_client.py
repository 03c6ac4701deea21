"""KubeClient, ListWatch and the cluster-Karta reader over a fake transport (no network)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from karta.errors import ApiError, ClusterError, ClusterUnreachableError
from karta.kube import (
    ClusterConfig,
    ConfigOverrides,
    KubeClient,
    ListWatch,
    ResourceType,
    read_cluster_kartas,
)
from karta.kube.kartas import CRD_MISSING
from karta.kube.sources import connect_for_definitions
from karta.kube.transport import HttpResponse, HttpTransport

BUILTIN_ONLY = "showing built-in definitions only"
CM = ResourceType(group="", version="v1", kind="ConfigMap", plural="configmaps", verbs=("list", "watch"))


def _json(status: int, doc: Any, content_type: str = "application/json") -> HttpResponse:
    return HttpResponse(status, {"content-type": content_type}, json.dumps(doc).encode())


def _status(code: int, reason: str, message: str) -> HttpResponse:
    return _json(
        code, {"kind": "Status", "apiVersion": "v1", "code": code, "reason": reason, "message": message}
    )


class FakeStream:
    def __init__(self, status: int, lines: list[Any], body: bytes = b"") -> None:
        self.status = status
        self.headers: dict[str, str] = {}
        self._lines = lines
        self._body = body
        self.closed = False

    def lines(self) -> Iterator[bytes]:
        for line in self._lines:
            if isinstance(line, BaseException):
                raise line
            yield json.dumps(line).encode()

    def read_all(self) -> bytes:
        return self._body

    def close(self) -> None:
        self.closed = True


Handler = Callable[[str, str, dict[str, list[str]], list[tuple[str, str]], bytes | None], HttpResponse]


class FakeTransport:
    def __init__(self, handler: Handler, streams: list[FakeStream] | None = None) -> None:
        self.handler = handler
        self.streams = list(streams or [])
        self.requests: list[tuple[str, str, list[tuple[str, str]], bytes | None]] = []

    def request(
        self, method: str, target: str, *, headers: Any, body: bytes | None, timeout: float | None
    ) -> HttpResponse:
        self.requests.append((method, target, list(headers), body))
        parts = urlsplit(target)
        return self.handler(method, parts.path, parse_qs(parts.query), list(headers), body)

    def stream(self, method: str, target: str, *, headers: Any, timeout: float | None) -> FakeStream:
        self.requests.append((method, target, list(headers), None))
        item = self.streams.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        pass


def _client(
    handler: Handler, streams: list[Any] | None = None, **config: Any
) -> tuple[KubeClient, FakeTransport]:
    transport = FakeTransport(handler, streams)
    return KubeClient(ClusterConfig(server="https://fake", **config), transport=transport), transport


def _pages(total: int, *, expire_after: int | None = None) -> Handler:
    def handler(method: str, path: str, q: dict[str, list[str]], h: Any, b: Any) -> HttpResponse:
        limit = int(q.get("limit", ["0"])[0]) or total
        start = int(q.get("continue", ["0"])[0])
        if expire_after is not None and start >= expire_after:
            return _status(410, "Expired", "The provided continue parameter is too old")
        end = min(start + limit, total)
        items = [{"metadata": {"name": f"cm{i}"}} for i in range(start, end)]
        meta = {"resourceVersion": "77", **({"continue": str(end)} if end < total else {})}
        return _json(200, {"kind": "ConfigMapList", "metadata": meta, "items": items})

    return handler


def test_paging_fills_types_and_keeps_the_snapshot_version() -> None:
    client, transport = _client(_pages(1200))
    listed = client.list(CM, namespace="ns", chunk_size=500)
    assert (listed.pages, len(listed.items), listed.resource_version) == (3, 1200, "77")
    assert listed.items[0] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm0"}}
    targets = [t for _, t, _, _ in transport.requests]
    assert targets[0] == "/api/v1/namespaces/ns/configmaps?limit=500"
    assert targets[1].endswith("limit=500&continue=500")


def test_expired_continue_token_falls_back_to_a_full_list() -> None:
    client, transport = _client(_pages(1200, expire_after=500))
    listed = client.list(CM, chunk_size=500)
    assert (listed.pages, len(listed.items)) == (1, 1200)
    assert transport.requests[-1][1] == "/api/v1/configmaps"


def test_error_statuses_become_api_errors() -> None:
    def handler(method: str, path: str, q: Any, h: Any, b: Any) -> HttpResponse:
        if path.endswith("/forbidden"):
            return _status(403, "Forbidden", 'configmaps "forbidden" is forbidden: User "x" cannot get')
        return HttpResponse(404, {"content-type": "text/plain"}, b"404 page not found")

    client, _ = _client(handler)
    with pytest.raises(ApiError, match="is forbidden") as info:
        client.get(CM, "forbidden", namespace="n")
    assert (info.value.status, info.value.reason) == (403, "Forbidden")
    with pytest.raises(ApiError, match="404 page not found") as info:
        client.get(CM, "x", namespace="n")
    assert (info.value.status, info.value.reason) == (404, "NotFound")


def test_headers_impersonation_groups_repeat() -> None:
    client, transport = _client(
        _pages(1), token="tok", impersonate_user="u", impersonate_groups=("g1", "g2"), impersonate_uid="9"
    )
    client.list(CM, chunk_size=0)
    headers = transport.requests[0][2]
    assert ("Authorization", "Bearer tok") in headers
    assert [v for k, v in headers if k == "Impersonate-Group"] == ["g1", "g2"]
    assert ("Impersonate-User", "u") in headers and ("Impersonate-Uid", "9") in headers


def test_401_rereads_the_token_file_once(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("old")
    seen: list[str] = []

    def handler(method: str, path: str, q: Any, headers: list[tuple[str, str]], b: Any) -> HttpResponse:
        auth = dict(headers)["Authorization"]
        seen.append(auth)
        if auth != "Bearer new":
            token.write_text("new")  # rotated meanwhile
            return _status(401, "Unauthorized", "Unauthorized")
        return _json(200, {"metadata": {"name": "x"}})

    client, _ = _client(handler, token_file=str(token))
    assert client.get(CM, "x", namespace="n")["metadata"]["name"] == "x"
    assert seen == ["Bearer old", "Bearer new"]


def test_apply_sends_an_apply_patch_without_managed_fields() -> None:
    discovery_docs = {
        "/api": _json(200, {"kind": "APIVersions", "versions": ["v1"]}),
        "/api/v1": _json(200, {"resources": [{"name": "configmaps", "namespaced": True, "kind": "ConfigMap",
                                              "verbs": ["patch"]}]}),
        "/apis": _json(200, {"kind": "APIGroupList", "groups": []}),
    }  # fmt: skip

    def handler(method: str, path: str, q: dict[str, list[str]], h: Any, body: bytes | None) -> HttpResponse:
        if method == "GET":
            return discovery_docs[path]
        assert body is not None
        return _json(200, json.loads(body))

    client, transport = _client(handler, namespace="team")
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"},
           "metadata": {"name": "c", "managedFields": [{"manager": "x"}]}}  # fmt: skip
    applied = client.apply(obj, force=True)
    method, target, headers, _ = transport.requests[-1]
    assert method == "PATCH"
    assert target == "/api/v1/namespaces/team/configmaps/c?fieldManager=karta&force=true"
    assert ("Content-Type", "application/apply-patch+yaml") in headers
    assert applied["metadata"] == {"name": "c", "namespace": "team"}
    assert obj["metadata"]["managedFields"] == [{"manager": "x"}]  # the caller's object is untouched
    with pytest.raises(ClusterError, match=r"metadata\.name"):
        client.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})


def test_watch_events_and_error_event() -> None:
    stream = FakeStream(
        200,
        [
            {"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "5"}}},
            {"type": "BOOKMARK", "object": {"kind": "ConfigMap", "metadata": {"resourceVersion": "9"}}},
            {
                "type": "ERROR",
                "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"},
            },
        ],
    )
    client, transport = _client(_pages(0), [stream])
    watch = client.watch(CM, namespace="n", resource_version="4", timeout_seconds=60)
    seen: list[str] = []
    with pytest.raises(ApiError, match="too old") as info:
        for event in watch:
            seen.append(event.type)
    assert info.value.status == 410
    assert seen == ["ADDED", "BOOKMARK"] and watch.resource_version == "9" and stream.closed
    query = parse_qs(urlsplit(transport.requests[0][1]).query)
    assert query == {"watch": ["true"], "resourceVersion": ["4"], "allowWatchBookmarks": ["true"],
                     "timeoutSeconds": ["60"]}  # fmt: skip


def test_watch_http_error() -> None:
    body = json.dumps({"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no"}).encode()
    client, _ = _client(_pages(0), [FakeStream(403, [], body)])
    with pytest.raises(ApiError, match="no"):
        client.watch(CM)


def test_list_watch_relists_on_410_and_resumes_after_a_broken_stream() -> None:
    gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "old"}}
    added = {"type": "ADDED", "object": {"metadata": {"name": "b", "resourceVersion": "80"}}}
    streams = [
        FakeStream(200, [gone]),
        FakeStream(200, [added, ClusterUnreachableError("reset")]),
        ClusterUnreachableError("refused"),
        FakeStream(
            200, [{"type": "MODIFIED", "object": {"metadata": {"name": "b", "resourceVersion": "81"}}}]
        ),
    ]
    client, transport = _client(_pages(2), streams)
    lw = ListWatch(client, CM, resource_version="3", backoff_initial=0.0, backoff_max=0.0)
    events = []
    for event in lw.events():
        events.append(event.type)
        if event.type == "MODIFIED":
            lw.stop()
    assert events == ["SYNC", "ADDED", "MODIFIED"]
    assert (lw.stats.expired, lw.stats.lists, lw.stats.reconnects) == (1, 1, 2)
    watch_rvs = [parse_qs(urlsplit(t).query).get("resourceVersion") for m, t, _, _ in transport.requests
                 if "watch=true" in t]  # fmt: skip
    assert watch_rvs == [["3"], ["77"], ["80"], ["80"]]


# ----------------------------------------------------------------------------- cluster Kartas


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (HttpResponse(404, {}, b"404 page not found"), CRD_MISSING),
        (
            _status(403, "Forbidden", 'kartas.run.ai is forbidden: User "a" cannot list'),
            "not allowed to list",
        ),
        (_status(500, "InternalError", "etcd is sad"), f"cluster: etcd is sad; {BUILTIN_ONLY}"),
    ],
)
def test_cluster_karta_read_warnings(response: HttpResponse, expected: str) -> None:
    client, _ = _client(lambda *a: response)
    read = read_cluster_kartas(client)
    assert not read.available and read.kartas == []
    (warning,) = read.warnings
    assert expected in warning


def test_cluster_karta_undecodable_is_skipped() -> None:
    root = {"name": "r", "kind": {"group": "g", "version": "v1", "kind": "K"}}
    good = {"apiVersion": "run.ai/v1alpha1", "kind": "Karta", "metadata": {"name": "good"},
            "spec": {"structureDefinition": {"rootComponent": root}}}  # fmt: skip
    bad = {"apiVersion": "run.ai/v1alpha1", "kind": "Karta", "metadata": {"name": "bad"},
           "spec": {"structureDefinition": {"rootComponent": 7}}}  # fmt: skip
    listing = {"kind": "KartaList", "metadata": {"resourceVersion": "1"}, "items": [bad, good]}
    client, _ = _client(lambda *a: _json(200, listing))
    read = read_cluster_kartas(client)
    assert read.available and read.names == ["good"]
    assert read.warnings[0].startswith("skipping the cluster Karta bad: ")


def test_connect_for_definitions_is_silent_without_kubeconfig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert connect_for_definitions() == (None, [])
    client, warnings = connect_for_definitions(ConfigOverrides(kubeconfig=str(tmp_path / "missing")))
    assert client is None
    assert warnings[0].startswith("could not read Karta definitions from the cluster: kubeconfig")


def test_fork_has_its_own_pool_but_shares_an_injected_transport() -> None:
    client, transport = _client(lambda *a: (200, {}, b"{}"))
    forked = client.fork()
    assert forked is not client and forked.transport is transport and forked.config is client.config
    real = KubeClient(ClusterConfig(server="https://127.0.0.1:1"))
    other = real.fork()
    assert isinstance(other.transport, HttpTransport) and other.transport is not real.transport
    assert other.config is real.config
