"""HTTP/1.1 to the API server over the standard library: TLS, connection pool, streams.

Owns the :class:`Transport` protocol (what :class:`karta.kube.client.KubeClient` needs: one
request, one streamed request) and :class:`HttpTransport`, its implementation over
``http.client`` and ``ssl``. Tests inject a fake transport instead (see ``tests/unit/kube``).

Kept idle connections are reused (keep-alive); a request that fails on a reused connection
because the server closed it meanwhile is retried once on a fresh one. A stream (watch) owns its
connection; :meth:`HttpStream.close` may be called from another thread to interrupt a blocked read.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import socket
import ssl
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

from karta.errors import ClusterUnreachableError, KubeConfigError
from karta.kube.auth import Credentials
from karta.kube.config import ClusterConfig

Headers = Sequence[tuple[str, str]]
MAX_IDLE_CONNECTIONS = 8


@dataclass
class HttpResponse:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes


class HttpStream(Protocol):
    status: int
    headers: dict[str, str]

    def lines(self) -> Iterator[bytes]: ...
    def read_all(self) -> bytes: ...
    def close(self) -> None: ...


class Transport(Protocol):
    def request(
        self, method: str, target: str, *, headers: Headers, body: bytes | None, timeout: float | None
    ) -> HttpResponse: ...

    def stream(self, method: str, target: str, *, headers: Headers, timeout: float | None) -> HttpStream: ...

    def close(self) -> None: ...


class _HTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection whose SNI/verification name may differ from the host (tls-server-name)."""

    def __init__(
        self, host: str, port: int | None, *, context: ssl.SSLContext, server_name: str | None
    ) -> None:
        super().__init__(host, port, context=context)
        self._ssl = context
        self._server_name = server_name

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._ssl.wrap_socket(self.sock, server_hostname=self._server_name or self.host)


@dataclass
class _Stream:
    conn: http.client.HTTPConnection
    response: http.client.HTTPResponse
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)

    def lines(self) -> Iterator[bytes]:
        while True:
            try:
                line = self.response.readline()
            # AttributeError: http.client's chunked reader when close() runs on another thread
            # mid-read (its fp is set to None under it); a stop, reported as a broken stream.
            except (OSError, http.client.HTTPException, ValueError, AttributeError) as exc:
                raise ClusterUnreachableError(f"watch stream broken: {exc}") from exc
            if not line:
                return
            line = line.strip()
            if line:
                yield line

    def read_all(self) -> bytes:
        try:
            return self.response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise ClusterUnreachableError(f"response broken: {exc}") from exc

    def close(self) -> None:
        sock = self.conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()


# What a request on a keep-alive connection the server has closed meanwhile raises (kube-apiserver
# closes a connection idle for 90 s; over TLS the next write can see the end of the stream as an
# SSLEOFError, "EOF occurred in violation of protocol"): tried once more on a new connection.
_IDLE_CLOSED = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ssl.SSLEOFError)


class HttpTransport:
    """The real transport for one :class:`ClusterConfig`."""

    def __init__(self, config: ClusterConfig, credentials: Credentials) -> None:
        parts = urlsplit(config.server)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise KubeConfigError(f"invalid server URL {config.server!r}")
        self.config = config
        self.credentials = credentials
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._lock = threading.Lock()
        self._idle: list[http.client.HTTPConnection] = []
        self._ssl: ssl.SSLContext | None = None

    # -- TLS ----------------------------------------------------------------------------------
    def ssl_context(self) -> ssl.SSLContext:
        with self._lock:
            if self._ssl is None:
                self._ssl = self._build_ssl()
            return self._ssl

    def reset_tls(self) -> None:
        """Drop the TLS context and idle connections (new client certificate from a plugin)."""
        with self._lock:
            self._ssl = None
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _build_ssl(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if self.config.insecure_skip_tls_verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif self.config.ca_data:
            try:
                ctx.load_verify_locations(cadata=self.config.ca_data.decode())
            except (ssl.SSLError, ValueError) as exc:
                raise KubeConfigError(f"the certificate authority data is not valid PEM: {exc}") from exc
        else:
            ctx.load_default_certs()
        pair = self.credentials.client_certificate()
        if pair is not None:
            _load_cert_chain(ctx, *pair)
        return ctx

    # -- connections --------------------------------------------------------------------------
    def _new_connection(self, timeout: float | None) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection
        if self._scheme == "https":
            conn = _HTTPSConnection(
                self._host, self._port, context=self.ssl_context(), server_name=self.config.tls_server_name
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port)
        conn.timeout = timeout
        return conn

    def _checkout(self, timeout: float | None) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            return self._new_connection(timeout), False
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn, True

    def _checkin(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append(conn)
                return
        conn.close()

    def _send(
        self,
        conn: http.client.HTTPConnection,
        method: str,
        target: str,
        headers: Headers,
        body: bytes | None,
    ) -> http.client.HTTPResponse:
        conn.putrequest(method, self._prefix + target, skip_accept_encoding=True)
        for name, value in headers:
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        return conn.getresponse()

    def request(
        self, method: str, target: str, *, headers: Headers, body: bytes | None, timeout: float | None
    ) -> HttpResponse:
        for attempt in range(2):
            conn, reused = self._checkout(timeout)
            try:
                resp = self._send(conn, method, target, headers, body)
                data = resp.read()
            except _IDLE_CLOSED as exc:
                conn.close()
                if reused and attempt == 0:
                    continue  # the server closed an idle keep-alive connection meanwhile
                raise ClusterUnreachableError(f"cannot reach {self.config.server}: {exc}") from exc
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise ClusterUnreachableError(f"cannot reach {self.config.server}: {_why(exc)}") from exc
            if resp.will_close:
                conn.close()
            else:
                self._checkin(conn)
            return HttpResponse(resp.status, _lower(resp.getheaders()), data)
        raise AssertionError("unreachable")

    def stream(self, method: str, target: str, *, headers: Headers, timeout: float | None) -> HttpStream:
        conn = self._new_connection(timeout)
        try:
            resp = self._send(conn, method, target, headers, None)
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise ClusterUnreachableError(f"cannot reach {self.config.server}: {_why(exc)}") from exc
        return _Stream(conn, resp, resp.status, _lower(resp.getheaders()))

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _lower(pairs: list[tuple[str, str]]) -> dict[str, str]:
    return {k.lower(): v for k, v in pairs}


def _why(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS verification failed: {exc.verify_message or exc}"
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    return str(exc) or type(exc).__name__


def _load_cert_chain(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """``load_cert_chain`` needs files: write both to a private directory, load, remove it."""
    directory = tempfile.mkdtemp(prefix="karta-kube-")
    try:
        cert_path = os.path.join(directory, "client.crt")
        key_path = os.path.join(directory, "client.key")
        for path, data in ((cert_path, cert), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        ctx.load_cert_chain(cert_path, key_path)
    except ssl.SSLError as exc:
        raise KubeConfigError(f"the client certificate or key is not usable: {exc}") from exc
    finally:
        shutil.rmtree(directory, ignore_errors=True)
