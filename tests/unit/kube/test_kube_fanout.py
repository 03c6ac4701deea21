"""list_many and MergedWatch over a fake transport: pages of several types, the one 410 policy
(an expired continue token re-lists from scratch, marked ``restarted``), per-type failures."""

from __future__ import annotations

import threading
import time
from typing import Any

from tests.unit.kube.test_kube_client import FakeStream, FakeTransport, _json, _status

from karta.errors import ApiError
from karta.kube import KubeClient, ListedPage, ListFailed, MergedWatch, ResourceType, WatchFailed, list_many
from karta.kube.client import ClusterConfig
from karta.kube.transport import HttpResponse

CM = ResourceType("", "v1", "ConfigMap", "configmaps", verbs=("list", "watch"))
SECRET = ResourceType("", "v1", "Secret", "secrets", verbs=("list", "watch"))
JOB = ResourceType("batch", "v1", "Job", "jobs", verbs=("list", "watch"))


def _handler(
    totals: dict[str, int], *, expire: dict[str, int] | None = None, deny: set[str] = frozenset()
) -> Any:
    """Paged lists of ``totals[plural]`` items; ``expire[plural]``: a continue token from that
    offset on is 410 Gone; ``deny``: plurals answered 403."""
    expired = dict(expire or {})
    lock = threading.Lock()

    def handler(method: str, path: str, q: dict[str, list[str]], h: Any, b: Any) -> HttpResponse:
        plural = path.rsplit("/", 1)[-1]
        if plural in deny:
            return _status(403, "Forbidden", f"{plural} is forbidden")
        total = totals[plural]
        limit = int(q.get("limit", ["0"])[0]) or total
        start = int(q.get("continue", ["0"])[0])
        with lock:
            if plural in expired and start >= expired[plural]:
                del expired[plural]  # once: the unpaged list that follows succeeds
                return _status(410, "Expired", "The provided continue parameter is too old")
        end = min(start + limit, total)
        items = [{"metadata": {"name": f"{plural}-{i}", "uid": f"{plural}-{i}"}} for i in range(start, end)]
        meta = {"resourceVersion": "9" if "continue" not in q else "ignored"}
        if end < total:
            meta["continue"] = str(end)
        return _json(200, {"kind": "List", "metadata": meta, "items": items})

    return handler


def _client(handler: Any, streams: list[Any] | None = None) -> KubeClient:
    return KubeClient(ClusterConfig(server="https://fake"), transport=FakeTransport(handler, streams))


def test_pages_of_every_type_arrive_in_order_per_type() -> None:
    client = _client(_handler({"configmaps": 5, "secrets": 0, "jobs": 3}))
    got: dict[int, list[str]] = {0: [], 1: [], 2: []}
    for page in list_many(client, [CM, SECRET, JOB], chunk_size=2):
        assert isinstance(page, ListedPage) and not page.restarted
        got[page.index].extend(o["metadata"]["name"] for o in page.items)
    assert got == {
        0: [f"configmaps-{i}" for i in range(5)],
        1: [],
        2: [f"jobs-{i}" for i in range(3)],
    }


def test_an_expired_continue_token_restarts_that_type_only() -> None:
    client = _client(_handler({"configmaps": 5, "jobs": 4}, expire={"configmaps": 2}))
    pages = [p for p in list_many(client, [CM, JOB], chunk_size=2) if isinstance(p, ListedPage)]
    cm = [p for p in pages if p.index == 0]
    assert [len(p.items) for p in cm] == [2, 5] and [p.restarted for p in cm] == [False, True]
    assert not any(p.restarted for p in pages if p.index == 1)
    # KubeClient.list applies the same policy: the restarted page replaces the earlier ones
    client = _client(_handler({"configmaps": 5}, expire={"configmaps": 2}))
    listed = client.list(CM, chunk_size=2)
    assert (len(listed.items), listed.pages) == (5, 1)


def test_a_failing_type_is_reported_for_itself_and_the_others_go_on() -> None:
    client = _client(_handler({"configmaps": 3, "jobs": 1}, deny={"secrets"}))
    entries = list(list_many(client, [CM, SECRET, JOB]))
    (failed,) = [e for e in entries if isinstance(e, ListFailed)]
    assert failed.index == 1 and isinstance(failed.error, ApiError) and failed.error.status == 403
    listed = {e.index: len(e.items) for e in entries if isinstance(e, ListedPage)}
    assert listed == {0: 3, 2: 1}


def test_closing_early_stops_the_lists() -> None:
    client = _client(_handler({"configmaps": 1000, "jobs": 1000}))
    pages = list_many(client, [CM, JOB], chunk_size=1)
    first = next(pages)
    pages.close()
    assert isinstance(first, ListedPage)


def test_merged_watch_delivers_each_types_events_and_failures() -> None:
    added = {"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "10"}}}
    forbidden = FakeStream(403, [], body=b'{"kind":"Status","code":403,"reason":"Forbidden","message":"no"}')
    client = _client(_handler({"configmaps": 1, "jobs": 0}), streams=[FakeStream(200, [added]), forbidden])
    seen: list[Any] = []
    with MergedWatch(client, [CM], resource_versions=["5"]) as merged:
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            entry = merged.next(0.1)
            if entry is not None:
                seen.append(entry)
    ((index, event),) = seen
    assert index == 0 and event.type == "ADDED" and event.object["metadata"]["name"] == "a"
    # a watch that ends with an error it does not retry is reported, for its type
    client = _client(_handler({"jobs": 0}), streams=[forbidden])
    with MergedWatch(client, [JOB], resource_versions=["5"]) as merged:
        entry = None
        deadline = time.monotonic() + 5
        while entry is None and time.monotonic() < deadline:
            entry = merged.next(0.1)
    assert isinstance(entry, WatchFailed) and entry.index == 0
    assert isinstance(entry.error, ApiError) and entry.error.status == 403
