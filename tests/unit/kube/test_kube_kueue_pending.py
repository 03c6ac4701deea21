"""karta.kube.kueue_pending over a fake transport: a LocalQueue's pending list from Kueue's
visibility API (``visibility.kueue.x-k8s.io``, served version from discovery), read page by page
with limit/offset until the Workload is listed, the list ends, or the bound is reached; hostile
answers (no list, more items than asked, items that are not objects) and failures (not served,
forbidden, Kueue's 503) recorded, never raised."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from karta.kube import ClusterConfig, KubeClient, kueue_pending
from karta.kube.kueue import MAX_PENDING, PENDING_PAGE
from karta.kube.transport import HttpResponse

AGG = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
LQ_PATH = "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/team-a/pendingworkloads"


def _resource(plural: str, kind: str) -> dict[str, Any]:
    return {"resource": plural, "responseKind": {"kind": kind}, "scope": "Namespaced", "verbs": ["get"]}


def _discovery(*, visibility: bool) -> dict[str, Any]:
    kueue = {
        "metadata": {"name": "kueue.x-k8s.io"},
        "versions": [{"version": "v1beta2", "resources": [_resource("localqueues", "LocalQueue")]}],
    }
    items = [kueue]
    if visibility:
        items.append(
            {
                "metadata": {"name": "visibility.kueue.x-k8s.io"},
                "versions": [
                    {"version": v, "resources": [_resource("localqueues", "PendingWorkloadsSummary")]}
                    for v in ("v1beta2", "v1beta1")
                ],
            }
        )
    return {"kind": "APIGroupDiscoveryList", "items": items}


class Server:
    """The API server: discovery, the LocalQueue, and the pending list from ``answer(offset,
    limit)`` (a status and a document)."""

    def __init__(self, answer: Any, *, visibility: bool = True, local_queue: Any = None) -> None:
        self.answer = answer
        self.visibility = visibility
        self.local_queue = local_queue if local_queue is not None else {"spec": {"clusterQueue": "gpus"}}
        self.pages: list[tuple[int, int]] = []

    def request(self, method: str, target: str, *, headers: Any, body: Any, timeout: Any) -> HttpResponse:
        parts = urlsplit(target)
        query = parse_qs(parts.query)
        if parts.path == "/api":
            return _json(200, {"kind": "APIGroupDiscoveryList", "items": []}, AGG)
        if parts.path == "/apis":
            return _json(200, _discovery(visibility=self.visibility), AGG)
        if parts.path == "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/team-a":
            return _json(200, self.local_queue)
        assert parts.path == LQ_PATH, target
        offset, limit = int(query["offset"][0]), int(query["limit"][0])
        self.pages.append((offset, limit))
        status, doc = self.answer(offset, limit)
        return _json(status, doc)

    def close(self) -> None:
        pass


def _json(status: int, doc: Any, content_type: str = "application/json") -> HttpResponse:
    return HttpResponse(status, {"content-type": content_type}, json.dumps(doc).encode())


def _client(server: Server) -> KubeClient:
    return KubeClient(ClusterConfig(server="https://fake"), transport=server)  # type: ignore[arg-type]


def _item(name: str, position: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ml"},
        "positionInClusterQueue": position,
        "positionInLocalQueue": position,
    }


def _queue_of(total: int) -> Any:
    """A LocalQueue of ``total`` pending Workloads ``w0``..., served as Kueue serves them."""

    def answer(offset: int, limit: int) -> tuple[int, dict[str, Any]]:
        items = [_item(f"w{i}", i) for i in range(offset, min(offset + limit, total))]
        return 200, {"kind": "PendingWorkloadsSummary", "items": items}

    return answer


def test_pages_until_the_workload_is_listed_and_names_the_cluster_queue() -> None:
    server = Server(_queue_of(600))
    read = kueue_pending(_client(server), "ml", "team-a", f"w{PENDING_PAGE + 3}")
    assert server.pages == [(0, PENDING_PAGE), (PENDING_PAGE, PENDING_PAGE)]
    assert (len(read.items), read.complete, read.cluster_queue, read.unread) == (
        2 * PENDING_PAGE,
        True,
        "gpus",
        "",
    )


def test_a_short_page_ends_the_list() -> None:
    server = Server(_queue_of(3))
    read = kueue_pending(_client(server), "ml", "team-a")
    assert server.pages == [(0, PENDING_PAGE)]
    assert [i["metadata"]["name"] for i in read.items] == ["w0", "w1", "w2"] and read.complete


def test_a_huge_queue_is_read_up_to_the_bound_and_marked_incomplete() -> None:
    server = Server(_queue_of(10**6))
    read = kueue_pending(_client(server), "ml", "team-a", "not-there")
    assert len(server.pages) == MAX_PENDING // PENDING_PAGE
    assert (len(read.items), read.complete) == (MAX_PENDING, False)


def test_hostile_answers() -> None:
    more = Server(lambda o, n: (200, {"items": [_item(f"w{i}", i) for i in range(n + 50)]}))
    read = kueue_pending(_client(more), "ml", "team-a", "w0")
    assert len(read.items) == PENDING_PAGE  # never more than asked for
    odd = Server(lambda o, n: (200, {"items": ["w0", None, 7]}))
    assert kueue_pending(_client(odd), "ml", "team-a").items == [{}, {}, {}]
    for doc in ({"items": None}, {"items": {"w0": 0}}, [], "text"):
        read = kueue_pending(_client(Server(lambda o, n, d=doc: (200, d))), "ml", "team-a")
        assert read.items == [] and read.unread == f"{LQ_PATH} answered no list of items"
    broken_lq = Server(_queue_of(1), local_queue={"spec": {"clusterQueue": ["gpus"]}})
    assert kueue_pending(_client(broken_lq), "ml", "team-a").cluster_queue is None


def test_not_served_forbidden_and_failing_are_reasons() -> None:
    absent = Server(_queue_of(1), visibility=False)
    assert kueue_pending(_client(absent), "ml", "team-a").unread == (
        "Kueue's visibility API (visibility.kueue.x-k8s.io) is not served by this cluster"
    )
    assert absent.pages == []
    forbidden = Server(
        lambda o, n: (403, {"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no"})
    )
    assert kueue_pending(_client(forbidden), "ml", "team-a").unread == (
        "cannot get localqueues/pendingworkloads.visibility.kueue.x-k8s.io in namespace ml (forbidden)"
    )
    down = Server(
        lambda o, n: (503, {"kind": "Status", "code": 503, "message": "error trying to reach\nservice"})
    )
    read = kueue_pending(_client(down), "ml", "team-a")
    assert read.unread.startswith(
        "cannot get localqueues/pendingworkloads.visibility.kueue.x-k8s.io in namespace ml ("
    )
    assert "\n" not in read.unread and read.items == []
