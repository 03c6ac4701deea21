"""Watches against the real API server: events, bookmarks, 410 Gone, and an API-server restart."""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from karta.errors import ApiError
from karta.kube import KubeClient, ListWatch, SyncEvent, WatchEvent

from .conftest import PrivateControlPlane

Event = SyncEvent | WatchEvent


def _cm(name: str, label: str, value: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"watch": label}},
        "data": {"v": value},
    }


class Collector:
    """Runs a ListWatch in a thread; the test waits for events matching a predicate."""

    def __init__(self, lw: ListWatch) -> None:
        self.lw = lw
        self.events: queue.Queue[Event | BaseException] = queue.Queue()
        self.seen: list[Event] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for event in self.lw.events():
                self.events.put(event)
        except BaseException as exc:  # surfaced to the test by wait_for
            self.events.put(exc)

    def wait_for(self, predicate: Callable[[Event], bool], *, timeout: float = 60.0) -> Event:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no matching event; saw {[e.type for e in self.seen]}"
            try:
                item = self.events.get(timeout=remaining)
            except queue.Empty:
                continue
            if isinstance(item, BaseException):
                raise item
            self.seen.append(item)
            if predicate(item):
                return item

    def stop(self) -> None:
        self.lw.stop()
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()


def _named(event: Event, type_: str, name: str) -> bool:
    if isinstance(event, SyncEvent):
        return type_ == "SYNC" and any(i["metadata"]["name"] == name for i in event.items)
    return event.type == type_ and event.object.get("metadata", {}).get("name") == name


@pytest.fixture
def collector() -> Iterator[Callable[[ListWatch], Collector]]:
    started: list[Collector] = []

    def start(lw: ListWatch) -> Collector:
        c = Collector(lw)
        started.append(c)
        return c

    yield start
    for c in started:
        c.stop()


def test_watch_from_list_version_sees_added_modified_deleted(kube: KubeClient, namespace: str) -> None:
    label = uuid.uuid4().hex[:8]
    kube.create(_cm(f"before-{label}", label), namespace=namespace)
    listed = kube.list("cm", namespace=namespace, label_selector=f"watch={label}")
    stream = kube.watch(
        "cm", namespace=namespace, resource_version=listed.resource_version, label_selector=f"watch={label}"
    )
    name = f"w-{label}"
    kube.create(_cm(name, label), namespace=namespace)
    kube.patch("cm", name, {"data": {"v": "2"}}, namespace=namespace)
    kube.delete("cm", name, namespace=namespace)
    kinds: list[str] = []
    for event in stream:
        assert event.object["metadata"]["name"] == name  # "before" is not replayed
        kinds.append(event.type)
        if event.type == "DELETED":
            stream.close()
    assert kinds == ["ADDED", "MODIFIED", "DELETED"]
    assert int(stream.resource_version) > int(listed.resource_version)


def test_initial_events_end_with_a_bookmark(kube: KubeClient, namespace: str) -> None:
    label = uuid.uuid4().hex[:8]
    for i in range(3):
        kube.create(_cm(f"b{i}-{label}", label), namespace=namespace)
    stream = kube.watch(
        "cm",
        namespace=namespace,
        label_selector=f"watch={label}",
        send_initial_events=True,
        timeout_seconds=30,
    )
    added: list[str] = []
    for event in stream:
        if event.type == "BOOKMARK":
            annotations = event.object["metadata"].get("annotations") or {}
            assert annotations.get("k8s.io/initial-events-end") == "true"
            assert int(event.resource_version) > 0
            stream.close()
            break
        assert event.type == "ADDED"
        added.append(event.object["metadata"]["name"])
    assert sorted(added) == [f"b{i}-{label}" for i in range(3)]


def _secret(name: str, label: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "labels": {"watch": label}},
        "stringData": {"v": "1"},
    }


def test_compacted_resource_version_is_410(private_control_plane: PrivateControlPlane) -> None:
    client = private_control_plane.client()
    label = uuid.uuid4().hex[:8]
    first = client.create(_secret(f"s1-{label}", label), namespace="default")
    client.create(_secret(f"s2-{label}", label), namespace="default")
    client.create(_secret(f"s3-{label}", label), namespace="default")  # s1+1 is compacted too
    latest = client.list("secrets", namespace="default").resource_version
    private_control_plane.compact_etcd(int(latest))
    with pytest.raises(ApiError) as info:
        for _ in client.watch(
            "secrets",
            namespace="default",
            resource_version=first["metadata"]["resourceVersion"],
            timeout_seconds=10,
        ):
            pass
    assert info.value.status == 410
    assert info.value.reason in ("Expired", "Gone")
    client.close()


def test_list_watch_relists_after_410(
    private_control_plane: PrivateControlPlane, collector: Callable[[ListWatch], Collector]
) -> None:
    client = private_control_plane.client()
    label = uuid.uuid4().hex[:8]
    old = client.create(_secret(f"old-{label}", label), namespace="default")
    client.create(_secret(f"mid-{label}", label), namespace="default")
    client.create(_secret(f"late-{label}", label), namespace="default")
    private_control_plane.compact_etcd(int(client.list("secrets").resource_version))
    rtype = client.discovery.resolve("secrets")
    lw = ListWatch(
        client,
        rtype,
        namespace="default",
        label_selector=f"watch={label}",
        resource_version=old["metadata"]["resourceVersion"],  # resume from a compacted version
    )
    c = collector(lw)
    sync = c.wait_for(lambda e: e.type == "SYNC")
    assert isinstance(sync, SyncEvent)
    names = sorted(i["metadata"]["name"] for i in sync.items)
    assert names == [f"late-{label}", f"mid-{label}", f"old-{label}"]
    assert lw.stats.expired == 1 and lw.stats.lists == 1
    client.create(_secret(f"new-{label}", label), namespace="default")
    c.wait_for(lambda e: _named(e, "ADDED", f"new-{label}"))
    client.close()


def test_list_watch_survives_an_apiserver_restart(
    private_control_plane: PrivateControlPlane, collector: Callable[[ListWatch], Collector]
) -> None:
    client = private_control_plane.client()
    rtype = client.discovery.resolve("configmaps")
    label = uuid.uuid4().hex[:8]
    client.create(_cm(f"a-{label}", label), namespace="default")
    lw = ListWatch(
        client,
        rtype,
        namespace="default",
        label_selector=f"watch={label}",
        backoff_initial=0.1,
        backoff_max=1.0,
    )
    c = collector(lw)
    c.wait_for(lambda e: _named(e, "SYNC", f"a-{label}"))
    client.create(_cm(f"b-{label}", label), namespace="default")
    c.wait_for(lambda e: _named(e, "ADDED", f"b-{label}"))

    private_control_plane.restart_apiserver()
    client.create(_cm(f"c-{label}", label), namespace="default")
    # Resumed from the last resourceVersion (ADDED) or, if the new cache no longer holds it,
    # re-listed after a 410 (SYNC holding the new object): either way nothing is lost.
    c.wait_for(lambda e: _named(e, "ADDED", f"c-{label}") or _named(e, "SYNC", f"c-{label}"))
    assert lw.stats.watches >= 2 and lw.stats.reconnects >= 1, lw.stats
    client.patch("cm", f"c-{label}", {"data": {"v": "3"}}, namespace="default")
    c.wait_for(lambda e: _named(e, "MODIFIED", f"c-{label}"))
    client.close()
