"""Decoding the API server's answers (issue 9): a number no double can hold, NaN, Infinity or
nesting too deep to read is a ClusterError naming the object and the field, for a get, a list page
and a watch event alike, never a crash; big integers read as orjson reads them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from karta.errors import ClusterError
from karta.kube import ClusterConfig, KubeClient, ResourceType
from karta.kube.transport import HttpResponse

CM = ResourceType(group="", version="v1", kind="ConfigMap", plural="configmaps", verbs=("list", "watch"))
HUGE = "1" + "0" * 5000


class Transport:
    """Answers every request with ``body``; a watch streams ``lines``."""

    def __init__(self, body: bytes, lines: list[bytes] | None = None) -> None:
        self.body = body
        self.lines_ = lines or []

    def request(self, method: str, target: str, *, headers: Any, body: Any, timeout: Any) -> HttpResponse:
        return HttpResponse(200, {"content-type": "application/json"}, self.body)

    def stream(self, method: str, target: str, *, headers: Any, timeout: Any) -> Any:
        outer = self

        class Stream:
            status = 200
            headers: ClassVar[dict[str, str]] = {}

            def lines(self) -> Iterator[bytes]:
                yield from outer.lines_

            def read_all(self) -> bytes:
                return b""

            def close(self) -> None:
                pass

        return Stream()

    def close(self) -> None:
        pass


def client(body: bytes, lines: list[bytes] | None = None) -> KubeClient:
    return KubeClient(ClusterConfig(server="https://fake"), transport=Transport(body, lines))


def cm(name: str, data: str) -> str:
    meta = f'{{"name": "{name}", "namespace": "ns"}}'
    return f'{{"kind": "ConfigMap", "metadata": {meta}, "data": {{"x": {data}}}}}'


@pytest.mark.parametrize(
    ("number", "says"),
    [
        (HUGE, "the number 100000000000... (5,001 characters) at .data.x, too large for a double"),
        ("1e400", "the number 1e400 at .data.x, too large for a double"),
        ("NaN", "NaN at .data.x, which is not a JSON number"),
        ("-Infinity", "-Infinity at .data.x, which is not a JSON number"),
    ],
)
def test_a_get_names_the_object_and_the_field(number: str, says: str) -> None:
    with pytest.raises(ClusterError) as err:
        client(cm("bad", number).encode()).get(CM, "bad", namespace="ns")
    assert str(err.value) == f"the server sent ConfigMap ns/bad with {says}" + (
        " (kli cannot read it)" if "double" in says else ""
    )


def test_a_list_page_names_the_bad_item() -> None:
    body = f'{{"kind": "ConfigMapList", "metadata": {{}}, "items": [{cm("good", "1")}, {cm("bad", HUGE)}]}}'
    with pytest.raises(ClusterError, match=r"ConfigMap ns/bad with the number .* at \.data\.x"):
        client(body.encode()).list(CM, namespace="ns")


def test_a_watch_event_names_the_object() -> None:
    line = f'{{"type": "ADDED", "object": {cm("bad", "1e999")}}}'.encode()
    stream = client(b"{}", [line]).watch(CM, namespace="ns")
    with pytest.raises(ClusterError, match=r"ConfigMap ns/bad with the number 1e999 at \.data\.x"):
        list(stream)


def test_too_deep_and_garbage_are_clear_errors() -> None:
    with pytest.raises(ClusterError, match="nested too deeply to read"):
        client(b"[" * 100_000 + b"]" * 100_000).get(CM, "x", namespace="ns")
    with pytest.raises(ClusterError, match="undecodable answer"):
        client(b"{nope").get(CM, "x", namespace="ns")


def test_big_integers_read_as_orjson_reads_them() -> None:
    obj = client(cm("big", str(2**64)).encode()).get(CM, "big", namespace="ns")
    assert obj["data"]["x"] == float(2**64)
    obj = client(cm("max", str(2**64 - 1)).encode()).get(CM, "max", namespace="ns")
    assert obj["data"]["x"] == 2**64 - 1
