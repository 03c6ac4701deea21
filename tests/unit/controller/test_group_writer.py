"""GroupWriter's use of a synced cache: no reads, no apply of an object our last apply left as it
is, and a difference on an immutable field seen in a cache confirmed by the server first. The
server is a small in-memory stand-in that counts requests (the writing itself is tested on the
real API server in tests/e2e/controller)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from karta.controller.runtime.group_writer import GroupWriter
from karta.errors import ApiError
from karta.kube.client import ObjectList
from karta.kube.resources import ResourceType

PODGROUPS = ResourceType(
    group="scheduling.x-k8s.io", version="v1alpha1", kind="PodGroup", plural="podgroups", namespaced=True
)
WORKLOADS = ResourceType(
    group="scheduling.k8s.io", version="v1beta1", kind="Workload", plural="workloads", namespaced=True
)
OWNER = {"metadata": {"name": "job", "namespace": "ns", "uid": "u1"}}


class _Discovery:
    def for_api_version(self, api_version: str, kind: str) -> ResourceType:
        return {"PodGroup": PODGROUPS, "Workload": WORKLOADS}[kind]


class _Server:
    """Objects by name; every request counted by verb."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []
        self.discovery = _Discovery()
        self._rv = 0

    def get(self, rtype: ResourceType, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append("get")
        if name not in self.objects:
            raise ApiError(f"{name} not found", status=404, reason="NotFound")
        return copy.deepcopy(self.objects[name])

    def apply(self, obj: Mapping[str, Any], *, field_manager: str, force: bool) -> dict[str, Any]:
        self.calls.append("apply")
        name = obj["metadata"]["name"]
        live = self.objects.get(name)
        if live is None or live["spec"] != obj["spec"]:
            self._rv += 1
            live = copy.deepcopy(dict(obj))
            live["metadata"]["resourceVersion"] = str(self._rv)
            self.objects[name] = live
        return copy.deepcopy(live)

    def list(self, rtype: ResourceType, **_: Any) -> ObjectList:
        self.calls.append("list")
        return ObjectList(items=list(self.objects.values()), resource_version=str(self._rv))

    def delete(self, rtype: ResourceType, name: str, *, namespace: str | None = None) -> None:
        self.calls.append("delete")
        self.objects.pop(name, None)


class _Cache:
    """A synced cache that shows what it was last given (it may lag the server)."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}

    def cached_object(
        self, rtype: ResourceType, namespace: str, name: str
    ) -> Mapping[str, Any] | Literal[False] | None:
        return self.objects.get(name) or False

    def owned_objects(self, rtype: ResourceType, namespace: str, uid: str) -> Sequence[Mapping[str, Any]]:
        return list(self.objects.values())


def _group(name: str, min_member: int, kind: str = "PodGroup") -> dict[str, Any]:
    api = "scheduling.x-k8s.io/v1alpha1" if kind == "PodGroup" else "scheduling.k8s.io/v1beta1"
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"minMember": min_member},
    }


def _writer(server: _Server, cache: _Cache | None) -> GroupWriter:
    return GroupWriter(server, lambda: [PODGROUPS], cache=cache)  # type: ignore[arg-type]


def test_an_object_as_our_last_apply_left_it_is_not_applied_again() -> None:
    server, cache = _Server(), _Cache()
    writer = _writer(server, cache)
    result = writer.sync(OWNER, [_group("pg", 4)], namespace="ns")
    assert result.applied == ["PodGroup/pg"] and server.calls == ["apply"]  # cache: absent, no GET
    cache.objects = copy.deepcopy(server.objects)  # the watch event arrives
    server.calls.clear()
    result = writer.sync(OWNER, [_group("pg", 4)], namespace="ns")
    assert result.unchanged == ["PodGroup/pg"] and server.calls == []
    # Someone else changed it (a new resourceVersion in the cache): applied again.
    server.objects["pg"]["spec"]["minMember"] = 9
    server.objects["pg"]["metadata"]["resourceVersion"] = "77"
    cache.objects = copy.deepcopy(server.objects)
    result = writer.sync(OWNER, [_group("pg", 4)], namespace="ns")
    assert server.calls == ["apply"] and server.objects["pg"]["spec"]["minMember"] == 4
    # The plan changed: applied.
    cache.objects = copy.deepcopy(server.objects)
    server.calls.clear()
    result = writer.sync(OWNER, [_group("pg", 5)], namespace="ns")
    assert result.applied == ["PodGroup/pg"] and server.calls == ["apply"]


def test_a_deleted_object_is_applied_again() -> None:
    server, cache = _Server(), _Cache()
    writer = _writer(server, cache)
    writer.sync(OWNER, [_group("pg", 4)], namespace="ns")
    cache.objects = copy.deepcopy(server.objects)
    rv = server.objects["pg"]["metadata"]["resourceVersion"]
    del server.objects["pg"]
    cache.objects = {}
    writer.forget("scheduling.x-k8s.io/v1alpha1", "PodGroup", "ns", "pg")
    result = writer.sync(OWNER, [_group("pg", 4)], namespace="ns")
    assert result.applied == ["PodGroup/pg"] and "pg" in server.objects
    assert server.objects["pg"]["metadata"]["resourceVersion"] != rv


def test_an_immutable_difference_in_a_lagging_cache_is_confirmed_by_the_server() -> None:
    server, cache = _Server(), _Cache()
    writer = GroupWriter(server, lambda: [WORKLOADS], cache=cache)  # type: ignore[arg-type]
    desired = _group("w", 1, kind="Workload")
    desired["spec"] = {"podGroupTemplates": [{"name": "job", "schedulingPolicy": {"gang": {"minCount": 4}}}]}
    old = copy.deepcopy(desired)
    old["spec"]["podGroupTemplates"][0]["name"] = "old"
    old["metadata"]["resourceVersion"] = "1"
    cache.objects = {"w": old}  # the cache still shows an earlier object of that name
    server.objects = {}  # the server no longer has it
    result = writer.sync(OWNER, [desired], namespace="ns")
    assert server.calls[:2] == ["get", "apply"] and result.applied == ["Workload/w"]
    assert result.immutable == []
    # When the server agrees (someone re-created the old object), the change is reported and
    # nothing is written.
    old["metadata"]["resourceVersion"] = "100"
    server.objects = {"w": copy.deepcopy(old)}
    cache.objects = {"w": copy.deepcopy(old)}
    server.calls.clear()
    result = writer.sync(OWNER, [desired], namespace="ns")
    assert server.calls == ["get"]
    assert result.immutable and "podGroupTemplates[*].name" in result.immutable[0]


def test_without_a_cache_every_object_is_read_first() -> None:
    server = _Server()
    writer = _writer(server, None)
    writer.sync(OWNER, [_group("pg", 4)], namespace="ns")
    writer.sync(OWNER, [_group("pg", 4)], namespace="ns")
    assert server.calls == ["get", "apply", "list", "get", "apply", "list"]
