"""Pod admission's fresh read of the workload from the admission process's own watch
(karta.controller.parts.pod_binding.workloads): no request when the watch holds the workload at
least as new as the cached one, the server read otherwise; and the watch itself, on a shared cache
whose informers never touch an API server (``start=False``: the test fills them as a list would)."""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pytest

from karta.controller.parts.pod_binding.admission import PodAdmission, PodBinder
from karta.controller.parts.pod_binding.workloads import WatchedWorkloads, not_older
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import OwnerCache
from karta.definitions import DefinitionStore
from karta.kube.cache import SharedCache
from karta.kube.client import KubeClient
from karta.kube.owners import OwnerLink
from karta.kube.resources import ResourceType
from karta.kube.tracker import Coverage, CoveredTypes
from karta.kube.workloads import CoveredType
from karta.model.gvk import GroupKind

from .pods_support import FakeCluster, job, job_pod, review

VERBS = ("get", "list", "watch")
JOBS = ResourceType("batch", "v1", "Job", "jobs", verbs=VERBS)
DEPLOYMENTS = ResourceType("apps", "v1", "Deployment", "deployments", verbs=VERBS)


class FakeView:
    """The seam: what the watch holds, by (apiVersion, kind, namespace, name); None: not synced."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str, str], dict[str, Any]] | None = {}
        self.asked = 0

    def hold(self, obj: Mapping[str, Any]) -> None:
        assert self.objects is not None
        meta = obj["metadata"]
        self.objects[(obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"])] = copy.deepcopy(
            dict(obj)
        )

    def get(self, link: OwnerLink) -> Mapping[str, Any] | None:
        self.asked += 1
        if self.objects is None:
            return None
        return self.objects.get((link.api_version, link.kind, link.namespace, link.name))


@pytest.fixture
def store(tmp_path: Path) -> DefinitionStore:
    return DefinitionStore.load(user_directory=tmp_path / "none", include_catalog=True)


def _versioned(obj: dict[str, Any], version: str, **spec: Any) -> dict[str, Any]:
    return {
        **obj,
        "metadata": {**obj["metadata"], "resourceVersion": version},
        "spec": {**obj["spec"], **spec},
    }


def _admission(cluster: FakeCluster, store: DefinitionStore, view: FakeView) -> tuple[PodAdmission, Metrics]:
    metrics = Metrics()
    binder = PodBinder(
        store=lambda: store,
        owners=OwnerCache(cluster.client),
        backend="workload-api",
        watched=view,
        metrics=metrics,
    )
    events = EventRecorder(cluster.client, instance="test")
    return PodAdmission(binder, cluster.client, metrics=metrics, events=events), metrics


def _reads(metrics: Metrics, source: str) -> float:
    value = metrics.registry.get_sample_value("karta_admission_workload_reads_total", {"source": source})
    return value or 0.0


def _min_counts(cluster: FakeCluster) -> list[int]:
    return [
        obj["spec"]["schedulingPolicy"]["gang"]["minCount"]
        for obj, _ in cluster.applied
        if obj["kind"] == "PodGroup"
    ]


def test_a_scaled_workload_comes_from_the_watch_without_a_request(store: DefinitionStore) -> None:
    """The scale-up the workload's controller acted on is in the watch: the new pod's group object
    gets the new minimum, and the workload was not read from the server for it."""
    cluster, view = FakeCluster(), FakeView()
    owner = cluster.add(_versioned(job(parallelism=4), "5"))
    view.hold(owner)
    handler, metrics = _admission(cluster, store, view)
    assert handler(review(job_pod(owner))).patch  # the walk read the Job: nothing fresher to ask
    assert handler(review(job_pod(owner))).patch  # from the cache, confirmed by the watch
    assert cluster.cache_reads == 0 and _reads(metrics, "watch") == 1
    scaled = _versioned(owner, "6", parallelism=8, completions=8)
    cluster.add(scaled)
    view.hold(scaled)
    gets = [c for c in cluster.calls if c[:2] == ("get", "Job")]
    assert handler(review(job_pod(owner))).patch
    assert [c for c in cluster.calls if c[:2] == ("get", "Job")] == gets  # no read of the Job
    assert _min_counts(cluster) == [4, 8]
    assert _reads(metrics, "watch") == 2 and _reads(metrics, "server") == 0
    # The watched object is now the cached one: the next pod is answered from it.
    assert handler(review(job_pod(owner))).patch and cluster.cache_reads == 0


@pytest.mark.parametrize(
    ("watched_version", "why"),
    [
        ("4", "the watch is behind the cached object"),
        (None, "the watch has not synced or does not hold it"),
        ("abc", "a resourceVersion that is not a number is not compared"),
    ],
)
def test_the_server_is_read_when_the_watch_cannot_vouch_for_the_workload(
    store: DefinitionStore, watched_version: str | None, why: str
) -> None:
    cluster, view = FakeCluster(), FakeView()
    owner = cluster.add(_versioned(job(parallelism=4), "5"))
    handler, metrics = _admission(cluster, store, view)
    assert handler(review(job_pod(owner))).patch
    if watched_version is None:
        view.objects = None
    else:
        view.hold(_versioned(owner, watched_version, parallelism=2))
    cluster.add(_versioned(owner, "7", parallelism=6, completions=6))
    assert handler(review(job_pod(owner))).patch
    assert cluster.cache_reads == 1, why  # the API server's watch cache, as before
    assert _reads(metrics, "server") == 1 and _reads(metrics, "watch") == 0
    assert _min_counts(cluster) == [4, 6]


def test_resource_versions_compare_as_kep_5504_numbers_only() -> None:
    def rv(version: str) -> dict[str, Any]:
        return {"metadata": {"resourceVersion": version}}

    assert not_older(rv("10"), rv("9")) and not_older(rv("9"), rv("9"))
    assert not not_older(rv("9"), rv("10"))  # numbers, not strings
    for bad in ("", "0", "007", "1e3", "-1", "١٢"):
        assert not not_older(rv(bad), rv("1")) and not not_older(rv("1"), rv(bad))
    assert not not_older({}, rv("1")) and not not_older({"metadata": "x"}, rv("1"))


# --- the watch itself ------------------------------------------------------------------------------


class _Definitions:
    def __init__(self, store: DefinitionStore) -> None:
        self.store = store
        self.synced = threading.Event()

    def subscribe(self, _callback: Any) -> None:
        pass


def _watched(
    store: DefinitionStore, namespaces: tuple[str, ...] = ()
) -> tuple[WatchedWorkloads, SharedCache]:
    client = cast(KubeClient, None)  # neither the cache nor the tracker ever runs here
    cache = SharedCache(client, start=False)
    view = WatchedWorkloads(
        client,
        definitions=_Definitions(store),  # type: ignore[arg-type]
        namespaces=namespaces,
        cache=cache,
        tracker=CoveredTypes(client, lambda: store),
    )
    return view, cache


def _cover(view: WatchedWorkloads, store: DefinitionStore, *types: ResourceType) -> None:
    covered = {GroupKind(r.group, r.kind): CoveredType(r, store.definition_for(r.gvk), ()) for r in types}
    view._coverage(Coverage(store=store, types=covered, resources=types))  # as the tracker hands it


def _link(obj: Mapping[str, Any], *, api_version: str = "batch/v1", uid: str | None = None) -> OwnerLink:
    meta = obj["metadata"]
    return OwnerLink(api_version, obj["kind"], meta["name"], uid or meta["uid"], meta["namespace"])


def test_the_watch_follows_the_covered_types_with_gangs_one_informer_each(store: DefinitionStore) -> None:
    view, cache = _watched(store)
    _cover(view, store, JOBS, DEPLOYMENTS)
    assert set(view.watched()) == {GroupKind("batch", "Job")}  # a Deployment has no gang instructions
    assert list(cache.keys().values()) == [1]
    _cover(view, store, JOBS)
    assert list(cache.keys().values()) == [1]  # unchanged: not watched twice
    _cover(view, store)
    assert view.watched() == {} and cache.keys() == {}  # no longer covered: released


def test_the_watch_answers_only_once_synced_and_only_for_the_same_object(store: DefinitionStore) -> None:
    view, cache = _watched(store, namespaces=("team", "other"))
    owner = _versioned({**job(), "metadata": {**job()["metadata"], "uid": "u1"}}, "3")
    assert view.get(_link(owner)) is None  # the type is not watched yet
    _cover(view, store, JOBS)
    assert len(cache.keys()) == 2  # one per --namespace
    informers = {key.namespace: informer for key, informer in cache.informers().items()}
    assert view.get(_link(owner)) is None  # not synced
    informers["team"].replace([owner])
    assert view.get(_link(owner)) == owner
    assert view.get(_link(owner, uid="u2")) is None  # re-created under the same name
    assert view.get(_link(owner, api_version="batch/v2")) is None  # another version: not compared
    elsewhere = {**owner, "metadata": {**owner["metadata"], "namespace": "other"}}
    assert view.get(_link(elsewhere)) is None  # that namespace's informer has not synced
    informers["other"].replace([])
    assert view.get(_link(elsewhere)) is None  # synced, not there
    stop = threading.Event()
    stop.set()
    view.run(stop)
    assert cache.keys() == {}  # stopping releases every reference
