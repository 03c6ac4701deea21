"""The escaped-pod pass (karta.controller.parts.pod_binding.escaped), the owner cache
(karta.controller.runtime.owners)
and the wiring of both into the controller (karta.controller.main.build)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from karta.controller.main import build
from karta.controller.options import Options
from karta.controller.parts.pod_binding.admission import PATH, PodAdmission, PodBinder
from karta.controller.parts.pod_binding.escaped import EVENT_REASON, EscapedPods
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import OwnerCache, ReadableOwners, readable_owner_kinds
from karta.definitions import DefinitionStore
from karta.errors import ApiError, ClusterError
from karta.kube.owners import MAX_DEPTH, OwnerChains

from .pods_support import FakeCluster, job, job_pod, owned_pod


def _escaped(cluster: FakeCluster, tmp_path: Path) -> tuple[EscapedPods, Metrics]:
    store = DefinitionStore.load(user_directory=tmp_path / "none", include_catalog=True)
    binder = PodBinder(store=lambda: store, owners=OwnerCache(cluster.client), backend="workload-api")
    metrics = Metrics()
    events = EventRecorder(cluster.client)
    return EscapedPods(binder, cluster.client, metrics=metrics, events=events), metrics


def test_pods_without_their_binding_are_reported_once_each(tmp_path: Path) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job(parallelism=3))
    bound = job_pod(owner, name="train-a")
    bound["spec"]["schedulingGroup"] = {"podGroupName": "train-job"}
    cluster.add(bound)
    cluster.add(job_pod(owner, name="train-b"))
    cluster.add(job_pod(owner, name="train-c"))
    chosen = job_pod(owner, name="train-d")  # bound by its creator to a group of its own
    chosen["spec"]["schedulingGroup"] = {"podGroupName": "elsewhere"}
    cluster.add(chosen)
    cluster.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare"}, "spec": {}})
    escaped, metrics = _escaped(cluster, tmp_path)
    found = escaped.run_once()
    assert sorted(p.name for p in found) == ["train-b", "train-c"]
    assert {p.missing for p in found} == {("spec.schedulingGroup",)}
    assert metrics.registry.get_sample_value("karta_unbound_pods_total", {"reason": "escaped"}) == 2
    events = cluster.events(EVENT_REASON)
    assert len(events) == 2 and {e["involvedObject"]["name"] for e in events} == {"train"}
    assert escaped.run_once() == []
    assert cluster.applied == []  # the pass writes no group objects and no pods


def test_a_pod_that_is_gone_may_be_reported_again_if_it_comes_back(tmp_path: Path) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job(parallelism=1))
    pod = cluster.add(job_pod(owner, name="train-a"))
    escaped, _ = _escaped(cluster, tmp_path)
    assert len(escaped.run_once()) == 1
    del cluster.objects[("v1", "Pod", "team", "train-a")]
    assert escaped.run_once() == []
    cluster.add(pod)
    assert len(escaped.run_once()) == 1


def test_the_owner_cache_expires_is_bounded_and_rereads_a_replaced_owner() -> None:
    cluster = FakeCluster()
    now = [0.0]
    cache = OwnerCache(cluster.client, ttl=10.0, max_entries=2, clock=lambda: now[0])
    first = cluster.add(job("a"))
    pod = job_pod(first)
    assert cache.walk(pod).top == first
    assert cache.walk(pod).top == first and cache.reads == 1
    now[0] = 11.0
    assert cache.walk(pod).top == first and cache.reads == 2  # expired
    for name in ("b", "c"):
        cache.walk(job_pod(cluster.add(job(name))))
    assert len(cache) == 2  # least recently used out
    replaced = cluster.add({**job("a"), "metadata": {"name": "a", "namespace": "team", "uid": "new"}})
    assert cache.walk(job_pod(replaced)).top == replaced  # a reference to the new uid reads again
    assert cache.walk(pod).error is not None  # and the old reference no longer resolves


def test_a_fresh_read_keeps_the_cached_object_while_it_is_unchanged() -> None:
    """Pod admission reads the workload afresh (a scale-up's new pods): from the watch cache, and
    an unchanged one is the cached object itself (its identity keys the evaluations made)."""
    cluster = FakeCluster()
    cache = OwnerCache(cluster.client)
    first = cluster.add({**job("a"), "metadata": {**job("a")["metadata"], "resourceVersion": "1"}})
    walk = cache.walk(job_pod(first))
    assert walk.top_read and cache.walk(job_pod(first)).top_read is False  # then from the cache
    (link,) = walk.links
    assert cache.read_fresh(link) is walk.top and cluster.cache_reads == 1
    scaled = cluster.add(
        {**first, "spec": {"parallelism": 8}, "metadata": {**first["metadata"], "resourceVersion": "2"}}
    )
    fresh = cache.read_fresh(link)
    assert fresh == scaled and fresh is not walk.top
    assert cache.walk(job_pod(first)).top == scaled  # the cache holds the new one


def test_the_owner_cache_reads_an_owner_in_use_again_in_the_background() -> None:
    """After half its lifetime an entry is still served at once, and read again behind it (one
    read at a time per entry): a workload whose pods keep coming never waits for the API."""
    cluster = FakeCluster()
    now = [0.0]
    cache = OwnerCache(cluster.client, ttl=10.0, clock=lambda: now[0])
    first = cluster.add(job("a"))
    pod = job_pod(first)
    assert cache.walk(pod).top == first and cache.reads == 1
    now[0] = 6.0
    changed = cluster.add({**first, "spec": {"parallelism": 7}})
    assert cache.walk(pod).top == first  # served from the cache
    deadline = time.monotonic() + 10
    while cache.reads < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cache.reads == 2
    now[0] = 7.0
    assert cache.walk(pod).top == changed  # the background read's owner, fresh again
    time.sleep(0.05)
    assert cache.reads == 2
    now[0] = 18.0  # unused past its lifetime: read on the request, as before
    assert cache.walk(pod).top == changed and cache.reads == 3


def test_read_errors_are_not_cached_and_deep_chains_stop() -> None:
    cluster = FakeCluster()
    cache = OwnerCache(cluster.client)
    owner = job()
    owner["metadata"]["uid"] = "u"
    walk = cache.walk(job_pod(owner))
    assert walk.top is None and walk.error is not None and walk.links[0].kind == "Job"
    cluster.add(owner)
    assert cache.walk(job_pod(owner)).top is not None
    chain = cluster.add({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j0"}})
    for i in range(1, MAX_DEPTH + 2):
        chain = cluster.add(owned_pod(chain, name=f"j{i}") | {"apiVersion": "batch/v1", "kind": "Job"})
    assert "deeper" in (cache.walk(chain).error or "")

    def forbidden(kind: str, name: str) -> None:
        raise ApiError("forbidden", status=403, reason="Forbidden")

    cluster.on_get = forbidden
    assert OwnerCache(cluster.client).walk(job_pod(owner)).error is not None


def test_build_registers_the_pod_webhook_and_the_escaped_pass_only_with_a_backend(tmp_path: Path) -> None:
    cluster = FakeCluster()
    common = {
        "enable_webhook": True,
        "webhook_cert_dir": tmp_path,
        "cluster_definitions": False,
        "definitions_dir": tmp_path,
    }
    controller = build(Options(backend="workload-api", **common), cluster.client)
    assert controller.webhooks is not None
    name, handler = controller.webhooks.routes[PATH]
    assert name == "pods" and isinstance(handler, PodAdmission)
    assert isinstance(controller.parts["escaped-pods"], EscapedPods)
    handler.close()
    plain = build(Options(backend="none", **common), cluster.client)
    assert plain.webhooks is not None and PATH not in plain.webhooks.routes
    assert "escaped-pods" not in plain.parts
    assert build(Options(backend="kai", definitions_dir=tmp_path), cluster.client).webhooks is None


def test_owners_of_kinds_no_definition_names_are_not_read(tmp_path: Path) -> None:
    """The controller's RBAC grants ``get`` on the definitions' kinds only: an owner of another
    kind (here a CronJob above a Job) ends the chain below it, without a request."""
    cluster = FakeCluster()
    store = DefinitionStore.load(user_directory=tmp_path / "none", include_catalog=True)
    readable = ReadableOwners(lambda: store)
    assert ("batch", "Job") in readable and ("example.com", "Widget") not in readable
    owned = job("a")
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "w", "controller": True}
    ]
    first = cluster.add(owned)
    read: list[str] = []
    cluster.on_get = lambda kind, name: read.append(kind)
    walk = OwnerCache(cluster.client, readable=readable).walk(job_pod(first))
    assert walk.error is None and walk.top == first and [link.kind for link in walk.links] == ["Job"]
    assert read == ["Job"], read  # the Widget was never asked for
    chains = OwnerChains(cluster.client, readable=readable_owner_kinds(d.karta for d in store.definitions))
    chain = chains.walk(job_pod(first))
    assert chain.complete and [link.kind for link in chain.links] == ["Job"]
    assert "Widget" not in read


def test_a_fresh_read_not_answered_in_time_is_sent_again_and_the_first_answer_wins() -> None:
    """A hedged read: the API server's slow answer to one request does not hold the admission."""
    cluster = FakeCluster()
    first = cluster.add({**job("a"), "metadata": {**job("a")["metadata"], "resourceVersion": "1"}})
    cache = OwnerCache(cluster.client, hedge_after=0.01)
    (link,) = cache.walk(job_pod(first)).links
    release, calls = threading.Event(), []

    def slow_first(kind: str, name: str) -> None:
        calls.append(name)
        if len(calls) == 1:
            release.wait(10)  # the first request hangs until the test ends

    cluster.on_get = slow_first
    try:
        assert cache.read_fresh(link) == first
        assert cache.hedged == 1 and len(calls) == 2
    finally:
        release.set()
    cluster.on_get = None
    assert cache.read_fresh(link) == first and cache.hedged == 1  # answered in time: one request


def test_a_hedged_read_fails_only_when_both_requests_fail() -> None:
    cluster = FakeCluster()
    first = cluster.add(job("a"))
    cache = OwnerCache(cluster.client, hedge_after=0.01)
    (link,) = cache.walk(job_pod(first)).links
    calls: list[str] = []

    def failing(kind: str, name: str) -> None:
        calls.append(name)
        if len(calls) == 1:
            time.sleep(0.05)
        raise ClusterError("unreachable")

    cluster.on_get = failing
    with pytest.raises(ClusterError, match="unreachable"):
        cache.read_fresh(link)
    assert len(calls) == 2
