"""The HTTP transport's retry of a request on a keep-alive connection the server closed."""

from __future__ import annotations

import re
import ssl
from typing import Any

import pytest

from karta.errors import ClusterUnreachableError
from karta.kube.auth import Credentials
from karta.kube.config import ClusterConfig
from karta.kube.transport import HttpTransport


class _Conn:
    sock = None
    timeout: float | None = None

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class _Resp:
    status = 201
    will_close = False

    def read(self) -> bytes:
        return b"{}"

    def getheaders(self) -> list[tuple[str, str]]:
        return [("Content-Type", "application/json")]


def _transport(
    monkeypatch: pytest.MonkeyPatch, failures: list[BaseException]
) -> tuple[HttpTransport, list[Any]]:
    config = ClusterConfig(server="https://127.0.0.1:6443")
    transport = HttpTransport(config, Credentials(config))
    idle = _Conn()
    transport._idle.append(idle)  # type: ignore[arg-type]
    used: list[Any] = []
    monkeypatch.setattr(transport, "_new_connection", lambda timeout: _Conn())

    def send(conn: Any, method: str, target: str, headers: Any, body: bytes | None) -> _Resp:
        used.append(conn)
        if failures:
            raise failures.pop(0)
        return _Resp()

    monkeypatch.setattr(transport, "_send", send)
    return transport, used


@pytest.mark.parametrize(
    "closed",
    [ssl.SSLEOFError(8, "EOF occurred in violation of protocol"), ConnectionResetError(), BrokenPipeError()],
)
def test_a_closed_idle_connection_is_retried_on_a_new_one(
    monkeypatch: pytest.MonkeyPatch, closed: BaseException
) -> None:
    transport, used = _transport(monkeypatch, [closed])
    resp = transport.request("POST", "/api/v1/namespaces", headers=[], body=b"{}", timeout=5)
    assert resp.status == 201
    assert len(used) == 2 and used[0].closed and used[0] is not used[1]


def test_a_new_connection_failing_the_same_way_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    transport, used = _transport(monkeypatch, [ssl.SSLEOFError(8, "EOF"), ssl.SSLEOFError(8, "EOF")])
    with pytest.raises(ClusterUnreachableError, match=re.escape("cannot reach https://127.0.0.1:6443")):
        transport.request("POST", "/api/v1/namespaces", headers=[], body=b"{}", timeout=5)
    assert len(used) == 2
