"""The platform metrics part's counting, offline: its informer caches filled as a list would fill
them (``Informer.replace``), the catalog's definitions, the collector's exposition."""

from __future__ import annotations

import threading
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest

from karta.controller.parts.platform import PlatformMetrics, _Type
from karta.definitions import DefinitionStore
from karta.kube import KubeClient
from karta.kube.config import ClusterConfig
from karta.kube.resources import ResourceType
from karta.model.gvk import GroupKind

READY = [{"type": "Ready", "status": "True"}]


class _Definitions:
    """What the part reads of LiveDefinitions: the store, synced, subscribe."""

    def __init__(self) -> None:
        self.store = DefinitionStore.offline(user_directory=None)
        self.synced = threading.Event()
        self.synced.set()

    def subscribe(self, _callback: Any) -> None:
        pass


def _rtype(group: str, kind: str, plural: str) -> ResourceType:
    version = "v1"
    return ResourceType(group, version, kind, plural, verbs=("list", "watch"))


def _obj(api_version: str, kind: str, name: str, *, owner: str | None = None, **rest: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": name, "resourceVersion": "1"}
    if owner is not None:
        group_kind = {
            "JobSet": "jobset.x-k8s.io/v1alpha2",
            "Job": "batch/v1",
            "Deployment": "apps/v1",
            "ReplicaSet": "apps/v1",
        }
        owner_kind, _, owner_name = owner.partition("/")
        meta["ownerReferences"] = [
            {
                "apiVersion": group_kind.get(owner_kind, "x/v1"),
                "kind": owner_kind,
                "name": owner_name,
                "uid": owner_name,
                "controller": True,
            }
        ]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}


def _pod(
    name: str, owner: str, *, gpus: int, node: str | None = None, unschedulable: bool = False
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": gpus}}}]
    }
    if node:
        spec["nodeName"] = node
    status: dict[str, Any] = {"phase": "Pending"}
    if unschedulable:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    return _obj("v1", "Pod", name, owner=owner, spec=spec, status=status)


def _part(backend: str) -> PlatformMetrics:
    client = KubeClient(ClusterConfig(server="https://127.0.0.1:1"))
    part = PlatformMetrics(client, definitions=_Definitions(), backend=backend)  # type: ignore[arg-type]
    store = part.definitions.store
    types = {
        GroupKind("batch", "Job"): _rtype("batch", "Job", "jobs"),
        GroupKind("apps", "Deployment"): _rtype("apps", "Deployment", "deployments"),
        GroupKind("apps", "ReplicaSet"): _rtype("apps", "ReplicaSet", "replicasets"),
    }
    pods_type = _rtype("", "Pod", "pods")
    part._pods = {None: part._informer(pods_type, None)}
    for gk, rtype in types.items():
        definition = store.definition_for(rtype.gvk)
        part._types[gk] = _Type(rtype, definition, {None: part._informer(rtype, None)})
    part._types[GroupKind("", "Pod")] = _Type(
        pods_type, store.definition_for(pods_type.gvk), part._pods, shared=True
    )
    return part


def _fill(part: PlatformMetrics, *, drain: bool = True) -> None:
    """The caches as a list fills them; the part's workers' evaluations done (``drain``)."""
    part._types[GroupKind("batch", "Job")].informers[None].informer.replace(
        [
            _obj("batch/v1", "Job", "fits", status={"ready": 2, "active": 2}),
            _obj("batch/v1", "Job", "big", status={"active": 2, "ready": 0}),
        ]
    )
    part._types[GroupKind("apps", "Deployment")].informers[None].informer.replace(
        [_obj("apps/v1", "Deployment", "web")]
    )
    part._types[GroupKind("apps", "ReplicaSet")].informers[None].informer.replace(
        [_obj("apps/v1", "ReplicaSet", "web-1", owner="Deployment/web")]
    )
    part._pods[None].informer.replace(
        [
            _pod("fits-0", "Job/fits", gpus=1, node="n1"),
            _pod("fits-1", "Job/fits", gpus=1, node="n1"),
            _pod("big-0", "Job/big", gpus=2, unschedulable=True),
            _pod("big-1", "Job/big", gpus=2),  # not tried yet
            _pod("web-1-x", "ReplicaSet/web-1", gpus=1, unschedulable=True),
            _obj(
                "v1", "Pod", "bare", spec={"nodeName": "n1"}, status={"phase": "Running", "conditions": READY}
            ),
        ]
    )
    if drain:
        part.drain()


def test_counts_are_per_top_level_workload_with_the_pods_below_it() -> None:
    part = _part("workload-api")
    _fill(part)
    counts = {(c.kind, c.status): c for c in part.counts()}
    assert set(counts) == {
        ("Job", "Running"),
        ("Job", "Initializing"),
        ("Deployment", "Initializing"),
        ("Pod", "Running"),
    }
    assert (counts["Job", "Running"].gpus_running, counts["Job", "Running"].gpus_pending) == (2, 0)
    big = counts["Job", "Initializing"]
    assert (big.gpus_running, big.gpus_pending, big.gang_pods_pending) == (0, 4, 1)
    web = counts[
        "Deployment", "Initializing"
    ]  # no gang instructions: its Unschedulable pod is not gang-pending
    assert (web.gpus_pending, web.gang_pods_pending) == (1, 0)
    # The ReplicaSet and the Jobs' pods are below covered workloads: not counted on their own.
    assert len(part.counts()) == 4


def test_without_a_backend_no_pod_is_gang_pending() -> None:
    part = _part("none")
    _fill(part)
    assert sum(c.gang_pods_pending for c in part.counts()) == 0


def test_the_exposition_has_the_three_families_and_drops_what_is_gone() -> None:
    part = _part("workload-api")
    registry = CollectorRegistry()
    registry.register(part)
    empty = [line for line in generate_latest(registry).decode().splitlines() if not line.startswith("#")]
    assert empty == []  # the families are declared, with no samples before the caches fill
    _fill(part)
    text = generate_latest(registry).decode()
    assert 'karta_workloads{group="batch",kind="Job",namespace="ns",status="Running"} 1.0' in text
    assert (
        'karta_workload_gpus_requested{group="batch",kind="Job",namespace="ns",phase="pending"} 4.0' in text
    )
    assert 'karta_gang_pods_pending{group="batch",kind="Job",namespace="ns"} 1.0' in text
    assert 'karta_workload_gpus_requested{group="",kind="Pod",namespace="ns",phase="running"} 0.0' in text
    part._types[GroupKind("batch", "Job")].informers[None].informer.replace([])
    part.drain()  # the part's thread counts again (scrapes serve the last count)
    text = generate_latest(registry).decode()
    assert 'kind="Job"' not in text
    assert part._statuses.keys() == {"web", "bare"}  # the cache of statuses forgets the deleted Jobs


def test_the_caches_drop_managed_fields_and_the_last_applied_annotation() -> None:
    part = _part("workload-api")
    annotations = {"kubectl.kubernetes.io/last-applied-configuration": "{...}", "keep": "me"}
    pod = _pod("p", "Job/fits", gpus=1)
    pod["metadata"].update(managedFields=[{"manager": "kubectl"}], annotations=annotations)
    informer = part._pods[None].informer
    assert informer.transform is not None
    kept = informer.transform(pod)
    assert kept is not None
    assert "managedFields" not in kept["metadata"]
    assert kept["metadata"]["annotations"] == {"keep": "me"}
    assert informer.transform(kept) == kept  # it accepts its own output
    assert pod["metadata"]["managedFields"]  # the object given is not changed
    assert informer.transform({"metadata": "junk"}) == {"metadata": "junk"}


def test_a_pods_gpus_are_read_again_only_when_its_resource_version_changes() -> None:
    part = _part("workload-api")
    _fill(part)
    assert sum(c.gpus_running for c in part.counts()) == 2
    pods = part._pods[None].informer
    changed = _pod("fits-0", "Job/fits", gpus=3, node="n1")
    pods.record("MODIFIED", changed)  # same resourceVersion: the count of the last scrape stands
    assert sum(c.gpus_running for c in part.counts()) == 2
    changed = _pod("fits-0", "Job/fits", gpus=3, node="n1")
    changed["metadata"]["resourceVersion"] = "2"
    pods.record("MODIFIED", changed)
    assert sum(c.gpus_running for c in part.counts()) == 4
    pods.replace([])
    part.counts()
    assert part._gpus == {}  # pods gone are forgotten
