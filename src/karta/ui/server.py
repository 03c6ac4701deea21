"""The web view's HTTP server: the page (three hand-written files bundled with the package), the JSON
API and the live change stream (server-sent events), read-only, over a
:class:`~karta.ui.store.RowStore` and the cluster sources that fill it.

Owns :class:`UiServer`. The standard library's ``ThreadingHTTPServer``: the view needs GET only, a
few routes and one long-lived response per open page, so a web framework would add dependencies
and start-up time for nothing (``kli`` keeps its start-up budget; see docs/ui.md).

Routes (GET and HEAD only; anything else is 405, an unknown path 404, always a JSON error, never a
traceback):

- ``/`` the page; ``/static/app.js``, ``/static/app.css``;
- ``/api/workloads?namespace=&kind=&status=&q=&sort=&order=&offset=&limit=`` rows
  (:class:`karta.ui.rows.RowQuery`): ``{items, total, offset, limit, seq}``;
- ``/api/facets``: the namespaces, kinds and statuses present, each cluster's readiness and warnings;
- ``/api/workload?id=CLUSTER/UID``: the workload page (:func:`karta.ui.detail.workload_detail`);
- ``/api/queues``: the queue page, ``{clusters: [{cluster, served, warnings, clusterQueues}]}``
  (:meth:`karta.ui.source.ClusterSource.queues`: Kueue's ClusterQueues and LocalQueues read on
  request, one at a time); ``/api/facets`` says ``kueue`` (some cluster serves Kueue's queues:
  the page links the queue page only then);
- ``/api/capacity``: the capacity page, ``{clusters: [{cluster, nodes, gpusAllocatable,
  gpusRequested, gpusPending, gpusFree, namespaces, partial, history}]}``
  (:meth:`karta.ui.source.ClusterSource.capacity`, read on request, one at a time) with each
  cluster's recent history: a sample every :data:`HISTORY_SECONDS`, the last
  :data:`HISTORY_LENGTH` kept in memory (a ring: nothing grows, nothing is written);
- ``/api/stream?since=SEQ`` (or ``Last-Event-ID``): ``text/event-stream`` of ``change`` events
  ``{seq, upserts, deletes}``, ``reset`` when the client is too far behind (reload), a comment
  every 15 s;
- ``/healthz``.

Bounded: request lines and headers by the standard library (64 KiB), URLs to :data:`MAX_URL`,
no request body is read, at most :data:`MAX_CONNECTIONS` requests at once and
:data:`MAX_STREAMS` open streams (503 beyond), :data:`MAX_DETAILS` workload pages computed at
once, an idle socket times out after :data:`SOCKET_TIMEOUT` seconds. With ``allowed_hosts`` the
``Host`` header must name one of them (a page of another site reached through DNS rebinding is
refused: ``kli ui`` serves the user's own credentials' view). Every response sets a
Content-Security-Policy allowing this origin's scripts and styles only: the page builds its DOM
with ``textContent``, and cluster text is never interpreted as HTML.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import orjson

from karta.ui.rows import QueryError, RowQuery
from karta.ui.store import RowStore

__all__ = [
    "HISTORY_LENGTH",
    "HISTORY_SECONDS",
    "MAX_CONNECTIONS",
    "MAX_DETAILS",
    "MAX_STREAMS",
    "MAX_URL",
    "CapacitySource",
    "DetailSource",
    "QueueSource",
    "UiServer",
]

MAX_URL = 4096
MAX_CONNECTIONS = 64
MAX_STREAMS = 16
MAX_DETAILS = 4
SOCKET_TIMEOUT = 30.0
HEARTBEAT = 15.0
BATCH_SECONDS = 0.2
HISTORY_SECONDS = 15.0  # a capacity sample per cluster this often
HISTORY_LENGTH = 240  # samples kept per cluster (an hour at 15 s)
HISTORY_NAMESPACES = 50  # namespaces kept per sample (the most requesting)

_STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}
_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}

DetailSource = Callable[[str], "dict[str, Any] | None"]
"""A cluster's workload page by UID (:meth:`karta.ui.source.ClusterSource.detail`)."""


class QueueSource(Protocol):
    """A cluster's Kueue queues (:class:`karta.ui.source.ClusterSource`)."""

    def kueue_served(self) -> bool: ...

    def queues(self) -> dict[str, Any]: ...


class CapacitySource(Protocol):
    """A cluster's GPU capacity (:meth:`karta.ui.source.ClusterSource.capacity`)."""

    def capacity(self) -> dict[str, Any]: ...


def _sample(capacity: Mapping[str, Any], at: float) -> dict[str, Any]:
    """One point of a cluster's history: the totals and the most requesting namespaces'."""
    spaces = sorted(
        capacity.get("namespaces") or (),
        key=lambda n: -(int(n.get("gpusRequested") or 0) + int(n.get("gpusPending") or 0)),
    )
    return {
        "t": round(at, 3),
        "allocatable": capacity.get("gpusAllocatable"),
        "requested": capacity.get("gpusRequested"),
        "pending": capacity.get("gpusPending"),
        "partial": bool(capacity.get("partial")),
        "namespaces": {
            str(n.get("namespace")): [n.get("gpusRequested"), n.get("gpusPending")]
            for n in spaces[:HISTORY_NAMESPACES]
        },
    }


def _static(name: str) -> bytes:
    return (resources.files("karta.ui") / "static" / name).read_bytes()


class UiServer:
    """Serve ``store`` (and the workload pages of ``details``, cluster name → source) on
    ``host:port`` (0: any free port). :meth:`start` serves in a thread; ``run(stop)`` blocks, as
    a controller part."""

    name = "ui-server"

    def __init__(
        self,
        store: RowStore,
        details: Mapping[str, DetailSource],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        allowed_hosts: Iterable[str] | None = None,
        max_streams: int = MAX_STREAMS,
        max_connections: int = MAX_CONNECTIONS,
        queues: Mapping[str, QueueSource] | None = None,
        capacity: Mapping[str, CapacitySource] | None = None,
        history_seconds: float = HISTORY_SECONDS,
        history_length: int = HISTORY_LENGTH,
    ) -> None:
        self.store = store
        self.details = dict(details)
        self.queues = dict(queues or {})
        self.queue_slot = threading.Lock()  # one queue page read at a time
        self.capacity = dict(capacity or {})
        self.capacity_slot = threading.Lock()  # one capacity read at a time
        self.history_seconds = history_seconds
        self.history: dict[str, deque[dict[str, Any]]] = {
            name: deque(maxlen=history_length) for name in self.capacity
        }
        self.allowed_hosts = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
        self.stopping = threading.Event()
        self.streams = threading.BoundedSemaphore(max_streams)
        self.connections = threading.BoundedSemaphore(max_connections)
        self.detail_slots = threading.BoundedSemaphore(MAX_DETAILS)
        self.files = {path: (_static(name), kind) for path, (name, kind) in _STATIC.items()}
        handler = type("Handler", (_Handler,), {"ui": self})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.httpd.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def start(self) -> UiServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="karta-ui")
        self._thread.start()
        if self.capacity:
            sampler = threading.Thread(target=self._sampling, daemon=True, name="karta-ui-history")
            sampler.start()
        return self

    def read_capacity(self) -> list[dict[str, Any]]:
        """Every cluster's capacity now (one read at a time), with its history."""
        with self.capacity_slot:
            read = {name: self.capacity[name].capacity() for name in sorted(self.capacity)}
        return [{**found, "history": list(self.history[name])} for name, found in read.items()]

    def sample(self) -> None:
        """A point of every cluster's history (the sampler's thread, every ``history_seconds``)."""
        at = time.time()
        with self.capacity_slot:
            read = {name: source.capacity() for name, source in self.capacity.items()}
        for name, found in read.items():
            self.history[name].append(_sample(found, at))

    def _sampling(self) -> None:
        while not self.stopping.is_set():
            with contextlib.suppress(Exception):  # a failed read is a gap in the history
                self.sample()
            self.stopping.wait(self.history_seconds)

    def close(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(5.0)

    def run(self, stop: threading.Event) -> None:
        self.start()
        stop.wait()
        self.close()


class _Handler(BaseHTTPRequestHandler):
    ui: UiServer
    server_version = "karta-ui"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT
    # Kept-alive connections: without TCP_NODELAY, Nagle's algorithm holds the body (a second
    # write) until the browser's delayed ACK of the headers, up to 40 ms per answer.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: kli prints the URL, the controller logs its own way

    # -- dispatch ---------------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def _refuse_method(self) -> None:
        self.close_connection = True
        self._json({"error": "method not allowed: the web view is read-only"}, status=405, allow="GET, HEAD")

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _refuse_method

    def _serve(self, *, head: bool) -> None:
        if not self.ui.connections.acquire(blocking=False):
            self.close_connection = True
            self._json({"error": "too many requests at once; try again"}, status=503)
            return
        try:
            self._route(head=head)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
        except Exception:  # never a traceback to the client; the page says what failed
            self.close_connection = True
            with contextlib.suppress(OSError):
                self._json({"error": "internal error while answering this request"}, status=500)
        finally:
            self.ui.connections.release()

    def _route(self, *, head: bool) -> None:
        if self.headers.get("Content-Length", "0") not in ("", "0") or self.headers.get("Transfer-Encoding"):
            self.close_connection = True  # a GET has no body; it is never read
        if len(self.path) > MAX_URL:
            self._json({"error": f"URL longer than {MAX_URL} characters"}, status=414)
            return
        if not self._host_allowed():
            self._json({"error": "Host header not allowed (open the URL kli ui printed)"}, status=421)
            return
        parts = urlsplit(self.path)
        try:
            params = parse_qs(parts.query, keep_blank_values=True, max_num_fields=32)
        except ValueError:
            self._json({"error": "too many query parameters"}, status=400)
            return
        path = parts.path
        if path in self.ui.files:
            body, kind = self.ui.files[path]
            self._send(200, body, kind, head=head, cache="no-cache")
        elif path == "/healthz":
            self._send(200, b"ok\n", "text/plain; charset=utf-8", head=head)
        elif path == "/api/workloads":
            self._workloads(params, head=head)
        elif path == "/api/facets":
            facets = self.ui.store.facets()
            facets["kueue"] = any(q.kueue_served() for q in self.ui.queues.values())
            facets["capacity"] = bool(self.ui.capacity)
            self._json(facets, head=head)
        elif path == "/api/queues":
            self._queues(head=head)
        elif path == "/api/capacity":
            self._json({"clusters": self.ui.read_capacity()}, head=head)
        elif path == "/api/workload":
            self._detail(params, head=head)
        elif path == "/api/stream":
            self._stream(params)
        else:
            self._json({"error": f"no such page: {path[:200]}"}, status=404, head=head)

    def _host_allowed(self) -> bool:
        allowed = self.ui.allowed_hosts
        if allowed is None:
            return True
        host = (self.headers.get("Host") or "").strip().lower()
        if host.startswith("["):
            name = host[1 : host.find("]")] if "]" in host else host
        else:
            name = host.rpartition(":")[0] if ":" in host else host
        return name in allowed

    # -- answers ----------------------------------------------------------------------------------
    def _send(
        self,
        status: int,
        body: bytes,
        kind: str,
        *,
        head: bool = False,
        cache: str = "no-store",
        allow: str | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        if allow:
            self.send_header("Allow", allow)
        for name, value in _SECURITY_HEADERS.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, data: Any, *, status: int = 200, head: bool = False, allow: str | None = None) -> None:
        self._send(status, orjson.dumps(data), "application/json", head=head, allow=allow)

    def _workloads(self, params: Mapping[str, list[str]], *, head: bool) -> None:
        try:
            query = RowQuery.parse(params)
        except QueryError as exc:
            self._json({"error": str(exc)}, status=400, head=head)
            return
        page, total, seq = self.ui.store.select(query)
        body = {"items": page, "total": total, "offset": query.offset, "limit": query.limit, "seq": seq}
        self._json(body, head=head)

    def _detail(self, params: Mapping[str, list[str]], *, head: bool) -> None:
        key = (params.get("id") or [""])[-1]
        cluster, _, uid = key.rpartition("/")
        source = self.ui.details.get(cluster)
        if not uid or source is None or len(key) > 512:
            self._json({"error": f"no workload {key[:200]!r}"}, status=404, head=head)
            return
        if not self.ui.detail_slots.acquire(timeout=10.0):
            self._json({"error": "too many workload pages being computed; try again"}, status=503)
            return
        try:
            found = source(uid)
        finally:
            self.ui.detail_slots.release()
        if found is None:
            self._json({"error": f"no workload {key[:200]!r} (deleted?)"}, status=404, head=head)
            return
        self._json(found, head=head)

    def _queues(self, *, head: bool) -> None:
        if not self.ui.queue_slot.acquire(timeout=10.0):
            self._json({"error": "the queue page is being read; try again"}, status=503)
            return
        try:
            clusters = [self.ui.queues[name].queues() for name in sorted(self.ui.queues)]
        finally:
            self.ui.queue_slot.release()
        self._json({"clusters": clusters}, head=head)

    def _stream(self, params: Mapping[str, list[str]]) -> None:
        text = self.headers.get("Last-Event-ID") or (params.get("since") or [""])[-1]
        if not text.isdigit() or len(text) > 18:
            self._json({"error": "since: expected the seq of /api/workloads"}, status=400)
            return
        if not self.ui.streams.acquire(blocking=False):
            self.close_connection = True
            self._json({"error": "too many live views open; close one and reload"}, status=503)
            return
        try:
            self._events(int(text))
        finally:
            self.ui.streams.release()

    def _events(self, seq: int) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        for name, value in _SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(b"retry: 2000\n\n")
        self.wfile.flush()
        store = self.ui.store
        while not self.ui.stopping.is_set():
            if seq <= store.seq and not store.wait(seq, HEARTBEAT):
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
                continue
            if seq < store.seq:
                time.sleep(BATCH_SECONDS)  # let a burst of changes arrive: one message for it
            changes = store.changes_since(seq)
            if changes is None:
                self.wfile.write(b"event: reset\ndata: {}\n\n")
                self.wfile.flush()
                return
            seq = changes.seq
            data = orjson.dumps({"seq": seq, "upserts": changes.upserts, "deletes": changes.deletes})
            self.wfile.write(b"event: change\nid: %d\ndata: %s\n\n" % (seq, data))
            self.wfile.flush()
