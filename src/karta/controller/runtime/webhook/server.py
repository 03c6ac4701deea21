"""The HTTPS server the API server calls for admission: one path per webhook.

TLS comes from ``tls.crt``/``tls.key`` in a directory, re-read whenever either file changes
(cert-manager rotating a mounted Secret, or our own rotation in ``auto`` mode), so a new
certificate is served without a restart and without dropping a request: each connection is
wrapped with the context current when it is accepted. A request body is at most
:data:`MAX_BODY` bytes. An unknown path is 404; a body that is not an AdmissionReview is 400;
a handler that raises is a 500, so the API server applies the webhook's ``failurePolicy``
(the error is logged and counted, never shown as a traceback to the client).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

from karta.controller.runtime.logs import logger
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.webhook.review import Answer, Handler, response
from karta.jq._values import decoded_input

__all__ = ["MAX_BODY", "CertFiles", "WebhookServer"]

MAX_BODY: Final = 8 * 1024 * 1024
_LOG = logger("webhook")


class CertFiles:
    """The serving certificate in ``directory`` (``tls.crt``, ``tls.key``), reloaded on change."""

    def __init__(self, directory: Path, cert_name: str = "tls.crt", key_name: str = "tls.key") -> None:
        self.cert = directory / cert_name
        self.key = directory / key_name
        self._stamp: tuple[int, ...] | None = None
        self._context: ssl.SSLContext | None = None
        self._lock = threading.Lock()

    def _current_stamp(self) -> tuple[int, ...]:
        # The inodes too: a file replaced by a rename within one mtime tick is still a change.
        c, k = os.stat(self.cert), os.stat(self.key)
        return c.st_mtime_ns, k.st_mtime_ns, c.st_size, k.st_size, c.st_ino, k.st_ino

    def available(self) -> bool:
        return self.cert.is_file() and self.key.is_file()

    def context(self) -> ssl.SSLContext:
        """The context for the files as they are now (loaded again only when they changed).

        While the new pair cannot be loaded (a rotation between the key's and the certificate's
        rename, a half-written mount), the previous context is kept, so no connection fails."""
        with self._lock:
            try:
                stamp = self._current_stamp()
            except OSError:
                if self._context is None:
                    raise
                return self._context
            if self._context is None or stamp != self._stamp:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.minimum_version = ssl.TLSVersion.TLSv1_2
                try:
                    context.load_cert_chain(self.cert, self.key)
                except (OSError, ssl.SSLError):
                    if self._context is None:
                        raise
                    _LOG.debug("new serving certificate not loadable yet; serving the previous one")
                    return self._context
                if self._context is not None:
                    _LOG.info("serving certificate reloaded", extra={"cert": str(self.cert)})
                self._context, self._stamp = context, stamp
            return self._context


class _TLSServer(ThreadingHTTPServer):
    daemon_threads = True
    certs: CertFiles

    def server_activate(self) -> None:
        self.connections: set[Any] = set()  # accepted, not yet closed
        self.connections_lock = threading.Lock()
        super().server_activate()

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """End every kept-alive connection once its current request is answered, as the exit of
        the process would: the API server's next call connects again, and is refused (its
        failurePolicy decides), instead of reaching handlers that are shutting down. Only the
        reading side is shut (on the TCP socket, under TLS): an answer being written still goes out."""
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                socket.socket.shutdown(connection, socket.SHUT_RD)

    def get_request(self) -> tuple[Any, Any]:
        sock, address = self.socket.accept()
        try:
            context = self.certs.context()
        except (OSError, ssl.SSLError) as exc:
            _LOG.error("cannot load the serving certificate", extra={"error": str(exc)})
            sock.close()
            raise OSError("no serving certificate") from exc
        sock.settimeout(10.0)
        # The handshake happens on the handler's thread (first read), never in the accept loop.
        connection = context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        with self.connections_lock:
            self.connections.add(connection)
        return connection, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        _LOG.debug("connection error", extra={"client": str(client_address)})


class WebhookServer:
    """Serves the registered handlers over HTTPS on ``host:port`` (``port`` 0: any free port)."""

    name = "webhook-server"

    def __init__(
        self, certs: CertFiles, *, host: str = "0.0.0.0", port: int = 9443, metrics: Metrics
    ) -> None:
        self.certs = certs
        self.host = host
        self.port = port
        self.metrics = metrics
        self.routes: dict[str, tuple[str, Handler]] = {}
        self.serving = threading.Event()
        self._server: _TLSServer | None = None

    def register(self, path: str, name: str, handler: Handler) -> None:
        """Serve ``handler`` at ``path``; ``name`` labels its metrics (``pods``, ``karta-validate``...)."""
        self.routes[path] = (name, handler)

    @property
    def bound_port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        routes, metrics = self.routes, self.metrics

        class Admission(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # TCP_NODELAY, as Go's servers and clients set it: the headers and the body are two
            # writes, and on a kept-alive connection Nagle's algorithm held the body back until the
            # client's delayed ACK of the headers, ~40 ms on every answer.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.split("?", 1)[0] in ("/healthz", "/readyz"):
                    self._send(200, b"ok", "text/plain")
                else:
                    self._send(404, b'{"error": "not found"}')

            def do_POST(self) -> None:
                started = time.perf_counter()
                path = self.path.split("?", 1)[0]
                route = routes.get(path)
                if route is None:
                    self._send(404, b'{"error": "no webhook at this path"}')
                    return
                name, handler = route
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    length = -1
                if not 0 < length <= MAX_BODY:
                    metrics.webhook_requests.labels(webhook=name, outcome="error").inc()
                    self._send(400, b'{"error": "expected an AdmissionReview body of at most 8 MiB"}')
                    return
                try:
                    body = self.rfile.read(length)
                    # Numbers beyond 2**53 as the original's doubles, once (the handlers' evaluators
                    # are ``decoded``): one scan of the body.
                    review = decoded_input(json.loads(body), body)
                    if not isinstance(review, Mapping) or not isinstance(review.get("request"), Mapping):
                        raise ValueError("not an AdmissionReview")
                except (ValueError, RecursionError):  # RecursionError: JSON nested too deep to read
                    metrics.webhook_requests.labels(webhook=name, outcome="error").inc()
                    self._send(400, b'{"error": "expected an AdmissionReview"}')
                    return
                request = review["request"]
                try:
                    answer: Answer = handler(request)
                except Exception:
                    _LOG.exception("webhook handler failed", extra={"webhook": name, "key": _key(request)})
                    metrics.webhook_requests.labels(webhook=name, outcome="error").inc()
                    metrics.webhook_latency.labels(webhook=name).observe(time.perf_counter() - started)
                    self._send(500, b'{"error": "internal error in the webhook"}')
                    return
                outcome = answer.outcome or (
                    "denied" if not answer.allowed else "patched" if answer.patch else "allowed"
                )
                metrics.webhook_requests.labels(webhook=name, outcome=outcome).inc()
                self._send(200, json.dumps(response(review, answer)).encode())
                metrics.webhook_latency.labels(webhook=name).observe(time.perf_counter() - started)

        return Admission

    def start(self) -> None:
        """Bind and serve in a thread (returns at once); ``serving`` is set once listening."""
        self.certs.context()  # fail now, clearly, when there is no usable certificate
        server = _TLSServer((self.host, self.port), self._handler(), bind_and_activate=False)
        server.certs = self.certs
        server.allow_reuse_address = True
        server.server_bind()
        server.server_activate()
        self._server = server
        threading.Thread(target=server.serve_forever, name="webhook-server", daemon=True).start()
        self.serving.set()
        _LOG.info(
            "webhook server serving",
            extra={"address": f"{self.host}:{self.bound_port}", "paths": sorted(self.routes)},
        )

    def run(self, stop: threading.Event) -> None:
        # In auto mode the certificate part writes the files first: serve (and be ready) only then.
        while self._server is None and not self.certs.available():
            if stop.wait(0.1):
                return
        if self._server is None:
            self.start()
        stop.wait()
        self.close()

    def close(self) -> None:
        self.serving.clear()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server.close_connections()


def _key(request: Mapping[str, Any]) -> str:
    ns, name = request.get("namespace") or "", request.get("name") or ""
    return f"{ns}/{name}" if ns else str(name)
