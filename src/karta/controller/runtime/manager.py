"""The manager: runs the controller's parts as threads, serves health and metrics, stops cleanly.

Like controller-runtime's manager: parts (:class:`Runnable`) are started at once, or only while
this process leads (``leader_only``, when an elector is set); ``/healthz`` answers while the
process lives, ``/readyz`` only once every readiness check passes (caches synced, the webhook
server serving); ``/metrics`` serves :class:`~karta.controller.runtime.metrics.Metrics`. SIGTERM or SIGINT
sets the stop event: every part is asked to stop, and the manager waits up to
``shutdown_timeout`` seconds for them (a part still running then is abandoned, the process
exits). Losing the lease stops the process too (exit code 1), so that a new leader never races
a stale one.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from karta.controller.runtime.logs import logger
from karta.controller.runtime.metrics import Metrics

__all__ = ["Elector", "Manager", "Runnable", "parse_address"]

_LOG = logger("manager")


class Runnable(Protocol):
    """A part of the controller: ``run`` blocks until ``stop`` is set (or it fails)."""

    name: str

    def run(self, stop: threading.Event) -> None: ...


class Elector(Protocol):
    """Leader election: ``run`` blocks, calling ``on_started`` when this process leads and
    ``on_stopped`` when it stops leading (or gives the lease up when ``stop`` is set)."""

    def run(
        self, stop: threading.Event, on_started: Callable[[], None], on_stopped: Callable[[], None]
    ) -> None: ...


def parse_address(address: str) -> tuple[str, int] | None:
    """``:8080``, ``127.0.0.1:8080`` or ``[::1]:8080``; ``0`` (or empty) disables the endpoint."""
    address = address.strip()
    if address in ("", "0"):
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"invalid bind address {address!r} (expected [HOST]:PORT, or 0 to disable)")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


@dataclass
class Manager:
    metrics: Metrics
    probe_address: tuple[str, int] | None = None
    metrics_address: tuple[str, int] | None = None
    shutdown_timeout: float = 30.0
    elector: Elector | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    exit_code: int = 0
    _parts: list[tuple[Runnable, bool]] = field(default_factory=list)
    _checks: dict[str, Callable[[], bool]] = field(default_factory=dict)
    _threads: list[threading.Thread] = field(default_factory=list)
    _servers: dict[str, ThreadingHTTPServer] = field(default_factory=dict)
    _leading: threading.Event = field(default_factory=threading.Event)
    # Set once the parts have stopped: only then does the elector give the lease up, so that the
    # next leader never starts while this one still drains its queue.
    _release: threading.Event = field(default_factory=threading.Event)
    _elector_thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, part: Runnable, *, leader_only: bool = False) -> None:
        self._parts.append((part, leader_only))

    def add_ready_check(self, name: str, check: Callable[[], bool]) -> None:
        self._checks[name] = check

    @property
    def leading(self) -> bool:
        return self._leading.is_set()

    def ready(self) -> tuple[bool, dict[str, bool]]:
        results = {}
        for name, check in self._checks.items():
            try:
                results[name] = bool(check())
            except Exception:  # a check that fails is not ready, never a crash of the endpoint
                results[name] = False
        return all(results.values()), results

    # -- running ---------------------------------------------------------------------------------
    def _start(self, part: Runnable) -> None:
        def body() -> None:
            try:
                part.run(self.stop)
            except Exception:
                _LOG.exception("controller part failed; stopping", extra={"part": part.name})
                self.exit_code = 1
                self.stop.set()

        thread = threading.Thread(target=body, name=part.name, daemon=True)
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def _on_started_leading(self) -> None:
        self._leading.set()
        self.metrics.leader.labels(name="karta-controller").set(1)
        _LOG.info("became leader")
        for part, leader_only in self._parts:
            if leader_only and not self.stop.is_set():
                self._start(part)

    def _on_stopped_leading(self) -> None:
        self.metrics.leader.labels(name="karta-controller").set(0)
        if self._leading.is_set() and not self.stop.is_set():
            _LOG.error("lost the lease; stopping")
            self.exit_code = 1
        self._leading.clear()
        self.stop.set()

    def start(self) -> None:
        """Start the endpoints and the parts (returns at once)."""
        if self.probe_address is not None:
            self._serve(self.probe_address, self._probe_handler(), "probes")
        if self.metrics_address is not None:
            self._serve(self.metrics_address, self._metrics_handler(), "metrics")
        for part, leader_only in self._parts:
            if not leader_only or self.elector is None:
                self._start(part)
        if self.elector is None:
            if any(leader_only for _, leader_only in self._parts):
                self._leading.set()
        else:
            elector = self.elector
            thread = threading.Thread(
                target=lambda: elector.run(self._release, self._on_started_leading, self._on_stopped_leading),
                name="leader-election",
                daemon=True,
            )
            self._elector_thread = thread
            thread.start()

    def run(self) -> int:
        """Start, wait for SIGTERM/SIGINT (or a failed part), shut down; the exit code."""

        def on_signal(signum: int, _frame: Any) -> None:
            _LOG.info("signal received; shutting down", extra={"signal": signal.Signals(signum).name})
            self.stop.set()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()
            while not self.stop.wait(0.5):
                pass
            self.shutdown()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
        return self.exit_code

    def shutdown(self) -> None:
        """Ask every part to stop and wait for them, then release the lease, up to
        ``shutdown_timeout`` in all."""
        self.stop.set()
        deadline = time.monotonic() + self.shutdown_timeout
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        late = [t.name for t in threads if t.is_alive()]
        if late:
            _LOG.warning("parts still running at the shutdown deadline", extra={"parts": late})
        self._release.set()
        if self._elector_thread is not None:
            # The release is one request: allowed a little time even when the parts used it all.
            self._elector_thread.join(max(2.0, deadline - time.monotonic()))
        for server in self._servers.values():
            server.shutdown()
            server.server_close()
        _LOG.info("stopped")

    # -- endpoints -------------------------------------------------------------------------------
    def _serve(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], name: str) -> None:
        server = ThreadingHTTPServer(address, handler)
        server.daemon_threads = True
        self._servers[name] = server
        threading.Thread(target=server.serve_forever, name=f"{name}-server", daemon=True).start()
        _LOG.info("serving", extra={"endpoint": name, "address": f"{address[0]}:{server.server_address[1]}"})

    def bound_port(self, name: str) -> int:
        """The port an endpoint listens on (``probes`` or ``metrics``; for port 0 in tests)."""
        return int(self._servers[name].server_address[1])

    def _probe_handler(self) -> type[BaseHTTPRequestHandler]:
        manager = self

        class Probes(_Quiet):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path in ("/healthz", "/livez"):
                    self._send(200, b"ok")
                elif path == "/readyz":
                    ok, checks = manager.ready()
                    body = "".join(
                        f"[{'+' if v else '-'}]{k} {'ok' if v else 'failed'}\n" for k, v in checks.items()
                    )
                    body += "readyz check passed\n" if ok else "readyz check failed\n"
                    self._send(200 if ok else 500, body.encode())
                else:
                    self._send(404, b"not found")

        return Probes

    def _metrics_handler(self) -> type[BaseHTTPRequestHandler]:
        metrics = self.metrics

        class Scrape(_Quiet):
            def do_GET(self) -> None:
                if self.path.split("?", 1)[0] == "/metrics":
                    self._send(200, metrics.exposition(), "text/plain; version=0.0.4; charset=utf-8")
                else:
                    self._send(404, b"not found")

        return Scrape


class _Quiet(BaseHTTPRequestHandler):
    """No access log on stderr; one helper to answer; TCP_NODELAY (headers and body are two
    writes, which Nagle's algorithm and a delayed ACK would hold apart)."""

    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, code: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
