"""The web view's HTTP server on loopback, over a row store filled by the test: the JSON API, the
change stream, the bounds and refusals (bad queries, methods, hosts, too many streams), the
security headers, and that cluster text never becomes HTML (the page is static; the script only
writes text)."""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from karta.ui import RowStore, UiServer

HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


def _row(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"c/{i}",
        "cluster": "c",
        "uid": str(i),
        "kind": "Job",
        "name": f"w{i}",
        "namespace": "ns",
        "status": "Running",
        "phases": ["Running"],
        "definition": "d",
        "pods": {"ready": 0, "total": 0, "desired": 0},
        "gpus": 0,
        "gang": None,
        "createdAt": None,
        **extra,
    }


@pytest.fixture
def served() -> Iterator[tuple[UiServer, RowStore]]:
    store = RowStore()
    for i in range(30):
        store.put(_row(i))
    store.put(_row(99, name="evil", status=HOSTILE))

    def detail(uid: str) -> dict[str, Any] | None:
        if uid == "boom":
            raise RuntimeError("a bug")
        return {"row": store.get(f"c/{uid}"), "message": HOSTILE} if store.get(f"c/{uid}") else None

    server = UiServer(store, {"c": detail}, port=0, allowed_hosts={"127.0.0.1", "localhost"}, max_streams=2)
    server.start()
    try:
        yield server, store
    finally:
        server.close()


def _get(
    server: UiServer, path: str, *, method: str = "GET", host: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(*server.address, timeout=10)
    headers = {"Host": host} if host else {}
    conn.request(method, path, headers=headers)
    answer = conn.getresponse()
    body = answer.read()
    conn.close()
    return answer.status, {k.lower(): v for k, v in answer.getheaders()}, body


def test_the_list_api_filters_sorts_and_pages(served: tuple[UiServer, RowStore]) -> None:
    server, store = served
    status, headers, body = _get(server, "/api/workloads?limit=5&offset=0&sort=name&order=desc")
    assert status == 200 and headers["content-type"] == "application/json"
    data = json.loads(body)
    assert data["total"] == 31 and len(data["items"]) == 5 and data["seq"] == store.seq
    assert data["items"][0]["name"] == "w9"
    data = json.loads(_get(server, "/api/workloads?q=evil")[2])
    assert [r["name"] for r in data["items"]] == ["evil"] and data["items"][0]["status"] == HOSTILE
    facets = json.loads(_get(server, "/api/facets")[2])
    assert facets["count"] == 31 and facets["kinds"] == ["Job"]


def test_bad_requests_are_one_json_error_without_a_traceback(served: tuple[UiServer, RowStore]) -> None:
    server, _ = served
    for path, code, word in (
        ("/api/workloads?sort=nope", 400, "sort"),
        ("/api/workloads?limit=99999", 400, "limit"),
        ("/api/workload?id=c/none", 404, "no workload"),
        ("/api/workload?id=other/1", 404, "no workload"),
        ("/api/workload?id=c/boom", 500, "internal error"),
        ("/api/stream?since=abc", 400, "since"),
        ("/nope/<script>", 404, "no such page"),
        ("/api/workloads?" + "a=1&" * 40, 400, "too many"),
        ("/" + "x" * 5000, 414, "longer"),
    ):
        status, headers, body = _get(server, path)
        assert status == code, path
        error = json.loads(body)["error"]
        assert word in error and "Traceback" not in error
        assert headers["content-type"] == "application/json"
    status, headers, body = _get(server, "/api/workloads", method="POST")
    assert status == 405 and "read-only" in json.loads(body)["error"] and headers["allow"] == "GET, HEAD"
    status, _, body = _get(server, "/api/workloads", method="DELETE")
    assert status == 405


def test_a_host_not_allowed_is_refused(served: tuple[UiServer, RowStore]) -> None:
    server, _ = served
    status, _, body = _get(server, "/api/workloads", host="attacker.example:8001")
    assert status == 421 and "Host" in json.loads(body)["error"]
    assert _get(server, "/api/workloads", host=f"localhost:{server.address[1]}")[0] == 200


def test_the_page_is_static_and_every_answer_has_the_security_headers(
    served: tuple[UiServer, RowStore],
) -> None:
    server, _ = served
    status, headers, body = _get(server, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert body == (resources.files("karta.ui") / "static" / "index.html").read_bytes()
    assert b"evil" not in body and b"http" not in body.replace(b"http-equiv", b"")  # no cluster text, no CDN
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
    assert headers["x-content-type-options"] == "nosniff"
    for path in ("/static/app.js", "/static/app.css", "/api/facets", "/healthz"):
        status, headers, _ = _get(server, path)
        assert status == 200 and "content-security-policy" in headers, path
    assert _get(server, "/", method="HEAD")[2] == b""


def test_the_script_writes_cluster_text_as_text_only() -> None:
    script = (resources.files("karta.ui") / "static" / "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script, sink
    # no external assets; the SVG namespace name is an identifier, never fetched
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg\")", script)


def _stream(server: UiServer, since: int) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection(*server.address, timeout=10)
    conn.request("GET", f"/api/stream?since={since}")
    return conn, conn.getresponse()


def _next_event(answer: http.client.HTTPResponse) -> tuple[str, Any]:
    name, data = "", None
    while True:
        line = answer.readline().decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif line == "" and name:
            return name, data


def test_the_stream_sends_changes_then_reset_when_too_far_behind(served: tuple[UiServer, RowStore]) -> None:
    server, store = served
    conn, answer = _stream(server, store.seq)
    assert answer.status == 200 and answer.getheader("Content-Type", "").startswith("text/event-stream")
    threading.Timer(
        0.1, lambda: (store.put(_row(1, status="Failed", phases=["Failed"])), store.remove("c/2"))
    ).start()
    name, data = _next_event(answer)
    while name == "change" and not (data["upserts"] and data["deletes"]):
        _, more = _next_event(answer)
        data = {
            "upserts": data["upserts"] + more["upserts"],
            "deletes": data["deletes"] + more["deletes"],
            "seq": more["seq"],
        }
    assert (
        name == "change"
        and [r["status"] for r in data["upserts"]] == ["Failed"]
        and data["deletes"] == ["c/2"]
    )
    conn.close()
    conn, answer = _stream(server, store.seq + 5)  # from a store this server never had: reload
    assert _next_event(answer)[0] == "reset"
    conn.close()


def test_open_streams_are_bounded(served: tuple[UiServer, RowStore]) -> None:
    server, store = served
    open_ = [_stream(server, store.seq) for _ in range(2)]
    status, _, body = _get(server, f"/api/stream?since={store.seq}")
    assert status == 503 and "too many" in json.loads(body)["error"]
    for conn, _ in open_:
        conn.close()


class _Queues:
    def __init__(self, served: bool) -> None:
        self.served = served

    def kueue_served(self) -> bool:
        return self.served

    def queues(self) -> dict[str, Any]:
        rows = [
            {
                "name": HOSTILE,
                "missing": False,
                "admitted": 1,
                "reserving": 1,
                "pending": 1,
                "resources": [],
                "localQueues": [],
            }
        ]
        return {
            "cluster": "c",
            "served": self.served,
            "warnings": [],
            "clusterQueues": rows if self.served else [],
        }


@pytest.mark.parametrize("served", [True, False])
def test_the_queue_page_api_and_the_facet_that_links_it(served: bool) -> None:
    server = UiServer(RowStore(), {}, port=0, queues={"c": _Queues(served)})
    server.start()
    try:
        status, headers, body = _get(server, "/api/facets")
        assert status == 200 and json.loads(body)["kueue"] is served
        status, headers, body = _get(server, "/api/queues")
        assert status == 200 and headers["content-type"] == "application/json"
        (cluster,) = json.loads(body)["clusters"]
        assert cluster["served"] is served
        assert [cq["name"] for cq in cluster["clusterQueues"]] == ([HOSTILE] if served else [])
    finally:
        server.close()


def test_without_queue_sources_there_is_no_queue_link() -> None:
    server = UiServer(RowStore(), {}, port=0)
    server.start()
    try:
        assert json.loads(_get(server, "/api/facets")[2])["kueue"] is False
        assert json.loads(_get(server, "/api/queues")[2]) == {"clusters": []}
    finally:
        server.close()


class _Capacity:
    """A cluster whose requests change between reads (the history records each sample)."""

    def __init__(self) -> None:
        self.requested = 0

    def capacity(self) -> dict[str, Any]:
        self.requested += 1
        return {
            "cluster": "c",
            "nodes": 2,
            "gpusAllocatable": 8,
            "gpusRequested": self.requested,
            "gpusPending": 3,
            "gpusFree": 8 - self.requested,
            "namespaces": [
                {"namespace": f"ns{i}", "pods": 1, "gpusRequested": i, "gpusPending": 0} for i in range(60)
            ],
            "partial": ["cannot list nodes (forbidden): the capacity is unknown"]
            if self.requested > 2
            else [],
        }


def test_the_capacity_api_keeps_a_bounded_history_ring() -> None:
    """Issue 28 item 3: the capacity page's history is a ring in the server's memory: a sample per
    cluster every ``history_seconds``, the last ``history_length`` kept, each with the most
    requesting namespaces only; a partial read is marked in the sample and said in the answer."""
    source = _Capacity()
    server = UiServer(RowStore(), {}, port=0, capacity={"c": source}, history_seconds=3600, history_length=3)
    server.start()  # the sampler takes its first sample at once
    try:
        for _ in range(4):
            server.sample()
        status, _, body = _get(server, "/api/capacity")
        assert status == 200
        (cluster,) = json.loads(body)["clusters"]
        history = cluster["history"]
        assert len(history) == 3  # bounded: the oldest samples are gone
        assert [h["requested"] for h in history] == [3, 4, 5]
        assert [h["partial"] for h in history] == [True, True, True]
        assert all(h["allocatable"] == 8 and h["pending"] == 3 for h in history)
        assert len(history[-1]["namespaces"]) == 50 and "ns59" in history[-1]["namespaces"]
        assert "ns0" not in history[-1]["namespaces"]  # the least requesting are not kept
        assert cluster["gpusRequested"] == 6 and cluster["partial"]  # read on request
        assert json.loads(_get(server, "/api/facets")[2])["capacity"] is True
    finally:
        server.close()
    bare = UiServer(RowStore(), {}, port=0)
    bare.start()
    try:
        assert json.loads(_get(bare, "/api/capacity")[2]) == {"clusters": []}
        assert json.loads(_get(bare, "/api/facets")[2])["capacity"] is False
    finally:
        bare.close()


def _luminance(color: str) -> float:
    channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_every_text_colour_has_wcag_aa_contrast_on_every_background() -> None:
    """Issue 28 item 3: readable contrast. Every colour the stylesheet gives text (its variables
    and the literal colours of text rules) against every background it paints behind text reaches
    WCAG 2 AA for normal text (4.5:1)."""
    css = re.sub(
        r"/\*.*?\*/", "", (resources.files("karta.ui") / "static" / "app.css").read_text(), flags=re.S
    )
    variables = dict(re.findall(r"--([a-z]+):\s*(#[0-9a-fA-F]{6})", css))
    text = {name: variables[name] for name in ("fg", "muted", "ok", "bad", "warn", "info")}
    backgrounds = {"bg": variables["bg"], "head": variables["head"]}
    behind_text = (".rows tbody tr:hover", ".rows tbody tr[data-id]:focus", ".pending", ".partial")
    for selector, body in re.findall(r"([^{}]+)\{([^}]*)\}", css):
        found = re.search(r"(?<![-\w])background:\s*(#[0-9a-fA-F]{6})", body)
        if found and selector.strip() in behind_text:
            backgrounds[selector.strip()] = found.group(1)
    assert set(behind_text) <= set(backgrounds), backgrounds
    for name, colour in text.items():
        for where, background in backgrounds.items():
            ratio = _contrast(colour, background)
            assert ratio >= 4.5, f"--{name} {colour} on {where} {background}: {ratio:.2f}:1"
