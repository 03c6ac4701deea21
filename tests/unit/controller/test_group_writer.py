"""GroupWriter's use of a synced cache: no reads, no apply of an object our last apply left as it
is, and a difference on an immutable field seen in a cache confirmed by the server first. The
server is a small in-memory stand-in that counts requests (the writing itself is tested on the
real API server in tests/e2e/controller)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from karta.controller.runtime.group_writer import GroupWriter, holding_pods, lowered_minimums
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

    def apply(self, obj: Mapping[str, Any], *, field_manager: str, force: bool = False) -> dict[str, Any]:
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


# -- immutable changes: replaced while no pod holds the object, else reported -----------------------

WA_PODGROUPS = ResourceType(
    group="scheduling.k8s.io", version="v1beta1", kind="PodGroup", plural="podgroups", namespaced=True
)


class _WorkloadApiServer(_Server):
    """The Workload API's answers: a PodGroup with pods naming it stays while they exist (the
    podgroup-protection finalizer), marked for deletion."""

    def __init__(self) -> None:
        super().__init__()
        self.discovery = self  # type: ignore[assignment]
        self.held: set[str] = set()

    def for_api_version(self, api_version: str, kind: str) -> ResourceType:
        return {"PodGroup": WA_PODGROUPS, "Workload": WORKLOADS}[kind]

    def delete(self, rtype: ResourceType, name: str, *, namespace: str | None = None) -> None:
        self.calls.append("delete")
        if name in self.held:
            self.objects[name]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        else:
            self.objects.pop(name, None)


def _wa_group(name: str, policy: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"workloadRef": {"workloadName": "w", "templateName": "t"}, "schedulingPolicy": policy},
    }


def _pod(name: str, group: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingGroup": {"podGroupName": group}}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name}, "spec": spec}


def _diverged(server: _WorkloadApiServer) -> GroupWriter:
    """A live gang PodGroup ``pg`` our plan now wants ``basic`` (the policy kind is immutable)."""
    server.objects["pg"] = _wa_group("pg", {"gang": {"minCount": 4}})
    server.objects["pg"]["metadata"]["resourceVersion"] = "1"
    return GroupWriter(server, lambda: [WA_PODGROUPS])  # type: ignore[arg-type]


def test_an_immutable_change_is_replaced_when_no_pod_holds_the_object() -> None:
    server = _WorkloadApiServer()
    writer = _diverged(server)
    other = [_pod("x-0", "other", node="n1")]  # another gang's bound pod: not this one's
    result = writer.sync(OWNER, [_wa_group("pg", {"basic": {}})], namespace="ns", pods=lambda: other)
    assert server.calls[:4] == ["get", "delete", "get", "apply"]
    assert result.replaced == ["PodGroup/pg: spec.schedulingPolicy"] and result.immutable == []
    assert server.objects["pg"]["spec"]["schedulingPolicy"] == {"basic": {}}


def test_an_immutable_change_is_reported_while_a_pod_of_the_gang_is_bound() -> None:
    server = _WorkloadApiServer()
    writer = _diverged(server)
    pods = [_pod("pg-0", "pg", node="n1"), _pod("pg-1", "pg")]
    result = writer.sync(OWNER, [_wa_group("pg", {"basic": {}})], namespace="ns", pods=lambda: pods)
    assert "delete" not in server.calls and "apply" not in server.calls
    assert result.immutable == ["PodGroup/pg: spec.schedulingPolicy; kept: pods pg-0, pg-1 hold it"]
    # Without the pods (the list was refused, or the caller gave none) nothing is replaced either.
    result = writer.sync(OWNER, [_wa_group("pg", {"basic": {}})], namespace="ns", pods=lambda: None)
    assert result.immutable and "could not be listed" in result.immutable[0]
    result = writer.sync(OWNER, [_wa_group("pg", {"basic": {}})], namespace="ns")
    assert result.immutable and "delete" not in server.calls


def test_a_replacement_held_by_a_finalizer_is_created_once_the_object_is_gone() -> None:
    server = _WorkloadApiServer()
    writer = _diverged(server)
    server.held.add("pg")  # kube-controller-manager has not seen the last pod go yet
    result = writer.sync(OWNER, [_wa_group("pg", {"basic": {}})], namespace="ns", pods=lambda: [])
    assert result.deferred is not None and result.replaced and "apply" not in server.calls
    server.calls.clear()
    result = writer.sync(OWNER, [_wa_group("pg", {"basic": {}})], namespace="ns", pods=lambda: [])
    assert server.calls == ["get", "list"] and result.deferred is not None  # being deleted: waited for
    del server.objects["pg"]  # the finalizer let go
    result = writer.sync(OWNER, [_wa_group("pg", {"basic": {}})], namespace="ns", pods=lambda: [])
    assert result.applied == ["PodGroup/pg"] and server.objects["pg"]["spec"]["schedulingPolicy"] == {
        "basic": {}
    }


def test_holding_pods_per_backend() -> None:
    pods = [_pod("a", "pg", node="n"), _pod("b", "pg"), _pod("c", "other", node="n"), _pod("d", "other")]
    # A Workload API PodGroup is held by every pod naming it (its finalizer), bound or not.
    assert holding_pods(_wa_group("pg", {"gang": {"minCount": 2}}), pods) == ["a", "b"]
    # A Workload (or CompositePodGroup), which every gang hangs from: every bound pod.
    workload = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": "w"}}
    assert holding_pods(workload, pods) == ["a", "c"]
    # CRD backends: the bound pods naming it, by the record's pod_group_ref.
    volcano = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"}}
    named = [
        {
            "metadata": {"name": "v0", "annotations": {"scheduling.k8s.io/group-name": "pg"}},
            "spec": {"nodeName": "n"},
        },
        {"metadata": {"name": "v1", "annotations": {"scheduling.k8s.io/group-name": "pg"}}, "spec": {}},
        {
            "metadata": {"name": "v2", "annotations": {"scheduling.k8s.io/group-name": "x"}},
            "spec": {"nodeName": "n"},
        },
    ]
    assert holding_pods(volcano, named) == ["v0"]


def test_lowered_minimums() -> None:
    live = _wa_group("pg", {"gang": {"minCount": 9}})
    assert lowered_minimums(live, _wa_group("pg", {"gang": {"minCount": 5}})) == [
        "spec.schedulingPolicy.gang.minCount 9 -> 5"
    ]
    assert lowered_minimums(live, _wa_group("pg", {"gang": {"minCount": 12}})) == []
    kai_live = {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "spec": {"minMember": 9, "subGroups": [{"name": "worker", "minMember": 8}]},
    }
    kai_desired = copy.deepcopy(kai_live)
    kai_desired["spec"]["subGroups"][0]["minMember"] = 4
    assert lowered_minimums(kai_live, kai_desired) == ["spec.subGroups[worker].minMember 8 -> 4"]
    volcano_live = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "spec": {"minMember": 9, "minTaskMember": {"worker": 8}},
    }
    volcano_desired = {**volcano_live, "spec": {"minMember": 9, "minTaskMember": {"worker": 4}}}
    assert lowered_minimums(volcano_live, volcano_desired) == ["spec.minTaskMember[worker] 8 -> 4"]


def test_admission_never_lowers_a_minimum_but_raises_it() -> None:
    server = _WorkloadApiServer()
    server.objects["pg"] = _wa_group("pg", {"gang": {"minCount": 9}})  # the reconciler's, after a scale-up
    writer = GroupWriter(server, lambda: ())  # type: ignore[arg-type]
    result = writer.ensure([_wa_group("pg", {"gang": {"minCount": 5}})])  # rendered from a stale read
    assert result.kept == ["PodGroup/pg"] and "apply" not in server.calls
    assert server.objects["pg"]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 9}}
    result = writer.ensure([_wa_group("pg", {"gang": {"minCount": 12}})])
    assert result.applied == ["PodGroup/pg"]
    assert server.objects["pg"]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 12}}
