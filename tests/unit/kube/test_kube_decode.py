"""Decoding the API server's answers (issue 9): a number no double can hold, NaN, Infinity or
nesting too deep to read is a ClusterError naming the object and the field, for a get, a list page
and a watch event alike, never a crash; integers beyond 2**53 read as the original's doubles."""

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


DEEP = '{"a":' * 5000 + "1" + "}" * 5000  # the API server stores it for a CRD that keeps unknown fields


@pytest.mark.parametrize("bad", [DEEP, HUGE, "NaN"])
def test_keep_readable_lists_keep_the_others_and_name_the_bad_one(bad: str) -> None:
    """One object nobody can decode must not blind an informer to its whole kind."""
    items = [cm("good-1", "1"), cm("bad", bad), cm("good-2", '"x"')]
    body = (
        f'{{"kind": "ConfigMapList", "metadata": {{"resourceVersion": "7"}}, "items": [{", ".join(items)}]}}'
    )
    listed = client(body.encode()).list(CM, namespace="ns", keep_readable=True)
    assert [i["metadata"]["name"] for i in listed.items] == ["good-1", "good-2"]
    assert listed.resource_version == "7"
    (unreadable,) = listed.unreadable
    assert unreadable.startswith("ConfigMap ns/bad: ")
    assert ("nested too deeply" in unreadable) if bad == DEEP else ("at .data.x" in unreadable)


def test_split_list_is_not_fooled_by_strings_and_nested_items() -> None:
    from karta.kube.unreadable import label_of, split_list

    body = rb'{"kind":"items","x":{"items":[1]},"s":"]\"[{","items":[{"a":[{"b":"}"}]},{"c":1}],"z":[]}'
    rest, items = split_list(body) or (b"", [])
    assert items == [rb'{"a":[{"b":"}"}]}', rb'{"c":1}']
    assert rest == rb'{"kind":"items","x":{"items":[1]},"s":"]\"[{","items":[],"z":[]}'
    assert split_list(b'{"kind":"x"}') is None and split_list(b"[1,2]") is None
    escapes = rb'{"kind":"A\u001b","metadata":{"name":"n\u0007x","namespace":"ns"}}'
    assert label_of(escapes) == r"A\u001b ns/n\u0007x"  # as the bytes say: never a raw escape


def test_an_unreadable_watch_event_makes_the_list_watch_list_again() -> None:
    from karta.kube.client import UnreadableEventError
    from karta.kube.watch import ListWatch

    line = f'{{"type": "MODIFIED", "object": {cm("bad", DEEP)}}}'.encode()
    stream = client(b"{}", [line]).watch(CM, namespace="ns")
    with pytest.raises(UnreadableEventError, match="ConfigMap ns/bad"):
        list(stream)
    body = (
        f'{{"kind": "ConfigMapList", "metadata": {{"resourceVersion": "9"}}, "items": [{cm("bad", DEEP)}]}}'
    )
    watch = ListWatch(client(body.encode(), [line]), CM, namespace="ns", backoff_initial=0.0)
    events = watch.events()
    first = next(events)
    again = next(events)  # the event could not be read: listed again, not resumed
    watch.stop()
    assert first.items == [] and again.items == [] and watch.stats.lists == 2
    assert watch.stats.unreadable >= 3


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


def test_big_integers_read_as_the_originals_doubles() -> None:
    obj = client(cm("big", str(2**64)).encode()).get(CM, "big", namespace="ns")
    assert obj["data"]["x"] == float(2**64)
    # Issue 24: beyond 2**53 an integer is the double the original reads (it was exact before).
    obj = client(cm("max", str(2**64 - 1)).encode()).get(CM, "max", namespace="ns")
    assert obj["data"]["x"] == float(2**64 - 1) and obj["data"]["x"].__class__ is float


BIG = 9007199254740993  # 2**53 + 1: no double holds it


def test_a_live_object_with_9007199254740993_is_the_double_for_get_list_and_watch() -> None:
    # Issue 24, item 4: the client converts where it decodes (one scan of the answer's bytes); the
    # process's evaluators (karta.definitions.POOL) are ``decoded`` and read the object as it is.
    from tests.unit.jq.test_gojq_engine_points import DEFINITION

    from karta.definitions import evaluator_for
    from karta.extract import ComponentFactory
    from karta.model import karta_from_dict

    big = '{"apiVersion": "example.com/v1", "kind": "Big", "metadata": {"name": "w", "namespace": "ns"},'
    big += f' "spec": {{"count": {BIG}, "uid": "12345678901234567890"}}}}'
    got = client(big.encode()).get(CM, "w", namespace="ns")
    page = f'{{"kind": "List", "metadata": {{}}, "items": [{big}]}}'
    (listed,) = client(page.encode()).list(CM, namespace="ns").items
    (event,) = client(b"{}", [f'{{"type": "ADDED", "object": {big}}}'.encode()]).watch(CM, namespace="ns")
    karta = karta_from_dict(DEFINITION)
    for obj in (got, listed, event.object):
        assert obj["spec"] == {"count": 2**53, "uid": "12345678901234567890"}
        for trusted in (True, False):
            evaluator = evaluator_for(trusted=trusted)
            assert evaluator.decoded
            for _ in range(3):  # the general code first, then the generated code
                factory = ComponentFactory(karta, obj, evaluator=evaluator)
                assert factory.root().status().primary.value == "Running"
                assert factory.query(".spec.count | tostring") == ["9007199254740992"]


def test_an_answer_without_a_long_number_is_decoded_as_it_was() -> None:
    obj = client(cm("plain", '"1234567890123456"').encode()).get(CM, "plain", namespace="ns")
    assert obj["data"] == {"x": "1234567890123456"}
    obj = client(cm("exact", str(2**53 - 1)).encode()).get(CM, "exact", namespace="ns")
    assert obj["data"]["x"] == 2**53 - 1 and obj["data"]["x"].__class__ is int
