"""GroupWriter's admission mode (what pod admission writes through) and ServedOptions (the
webhook's options from discovery, read once and then in the background), on the in-memory cluster."""

from __future__ import annotations

import threading
import time
from typing import Any

from karta.controller.runtime.group_writer import APPLIED_TTL_S, HELD_APPLIED_TTL_S, GroupWriter
from karta.controller.runtime.served import ServedOptions
from karta.errors import ApiError
from karta.render import WorkloadApiOptions

from .pods_support import FakeCluster


def _obj(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": "team"}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": kind, "metadata": meta, "spec": spec}


def test_create_only_kinds_are_not_rewritten_and_a_recent_write_is_not_repeated() -> None:
    cluster = FakeCluster()
    cluster.add(_obj("Workload", "train", podGroupTemplates=[{"name": "other"}]))
    writer = GroupWriter(cluster.client, lambda: ())
    objects = [_obj("Workload", "train", podGroupTemplates=[{"name": "job"}]), _obj("PodGroup", "train-job")]
    result = writer.ensure(objects)
    assert (result.applied, result.kept, result.failed) == (["PodGroup/train-job"], ["Workload/train"], [])
    assert [(o["kind"], m) for o, m in cluster.applied] == [("PodGroup", "karta")]
    again = writer.ensure(objects)
    assert again.kept == ["Workload/train", "PodGroup/train-job"] and not again.applied
    assert len(cluster.applied) == 1


def test_a_conflict_on_an_existing_object_keeps_it_and_a_failure_stops() -> None:
    cluster = FakeCluster()
    cluster.add(_obj("PodGroup", "held"))

    def refuse(obj: Any) -> None:
        raise ApiError("conflict", status=409, reason="Conflict")

    cluster.on_apply = refuse
    writer = GroupWriter(cluster.client, lambda: ())
    result = writer.ensure([_obj("PodGroup", "held"), _obj("PodGroup", "missing"), _obj("PodGroup", "never")])
    assert result.unchanged == ["PodGroup/held"]
    assert len(result.failed) == 1 and result.failed[0].startswith("PodGroup/missing")
    assert ("apply", "PodGroup", "never") not in cluster.calls


def test_a_passed_deadline_stops_before_writing() -> None:
    cluster = FakeCluster()
    result = GroupWriter(cluster.client, lambda: ()).ensure(
        [_obj("PodGroup", "g")], deadline=time.monotonic() - 1
    )
    assert result.out_of_time and cluster.calls == []


class _Discovery:
    def __init__(self, versions: list[str]) -> None:
        self.versions = versions
        self.reads = 0
        self.fail = False

    def invalidate(self) -> None:
        pass

    def resources(self) -> list[Any]:
        from karta.errors import ClusterError

        self.reads += 1
        if self.fail:
            raise ClusterError("unreachable")
        from karta.kube.resources import ResourceType

        return [
            ResourceType(
                group="scheduling.k8s.io", version=v, kind="Workload", plural="workloads", namespaced=True
            )
            for v in self.versions
        ]


class _Client:
    def __init__(self, discovery: _Discovery) -> None:
        self.discovery = discovery


def test_served_options_read_discovery_once_then_in_the_background() -> None:
    discovery = _Discovery(["v1alpha2"])
    served = ServedOptions(_Client(discovery), "workload-api", interval=0.05)  # type: ignore[arg-type]
    assert served.current() == WorkloadApiOptions(k8s_version="1.36")
    assert served.current() == WorkloadApiOptions(k8s_version="1.36")
    assert discovery.reads == 1 and served.ready.is_set()
    discovery.versions = ["v1beta1"]
    stop = threading.Event()
    thread = threading.Thread(target=served.run, args=(stop,))
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while served.current() != WorkloadApiOptions(k8s_version="1.37") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert served.current() == WorkloadApiOptions(k8s_version="1.37")
        discovery.fail = True  # a failed read keeps the last options
        reads = discovery.reads
        while discovery.reads < reads + 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert served.current() == WorkloadApiOptions(k8s_version="1.37")
    finally:
        stop.set()
        thread.join(5)


def test_served_options_fall_back_until_discovery_answers() -> None:
    discovery = _Discovery(["v1alpha2"])
    discovery.fail = True
    served = ServedOptions(_Client(discovery), "workload-api")  # type: ignore[arg-type]
    assert served.current() == WorkloadApiOptions()
    assert not served.ready.is_set()
    discovery.fail = False
    assert served.current() == WorkloadApiOptions(k8s_version="1.36")


def _group(min_count: int) -> dict[str, Any]:
    return _obj("PodGroup", "train-job", schedulingPolicy={"gang": {"minCount": min_count}})


def _job(generation: int) -> dict[str, Any]:
    return {"metadata": {"name": "train", "namespace": "team", "uid": "u1", "generation": generation}}


def test_a_scale_up_after_a_lowering_raises_the_minimum_again_within_the_memo_lifetime() -> None:
    # Up (admission writes 5), down (the reconciler lowers to 3), up again a few seconds later: the
    # admission renders the same object as the first time, but the live one has changed since.
    cluster = FakeCluster()
    writer = GroupWriter(cluster.client, lambda: ())
    assert writer.ensure([_group(5)], workload=_job(2)).applied == ["PodGroup/train-job"]
    cluster.add(_group(3))  # the reconciler's scale-down
    again = writer.ensure([_group(5)], workload=_job(4))
    assert again.applied == ["PodGroup/train-job"], again
    assert cluster.objects[("scheduling.k8s.io/v1beta1", "PodGroup", "team", "train-job")]["spec"] == {
        "schedulingPolicy": {"gang": {"minCount": 5}}
    }
    # The same workload generation again: the recent write is trusted, nothing read or written.
    calls = len(cluster.calls)
    assert writer.ensure([_group(5)], workload=_job(4)).kept == ["PodGroup/train-job"]
    assert len(cluster.calls) == calls


def test_a_write_is_trusted_longer_where_the_scheduler_holds_pods_of_a_missing_group() -> None:
    """The Workload API holds a pod whose PodGroup is missing: a write is trusted for
    HELD_APPLIED_TTL_S, not read and written again every APPLIED_TTL_S on the admission path."""
    cluster = FakeCluster()
    now = [0.0]
    writer = GroupWriter(cluster.client, lambda: (), clock=lambda: now[0])
    assert writer.ensure([_group(5)], workload=_job(1)).applied == ["PodGroup/train-job"]
    calls = len(cluster.calls)
    now[0] = APPLIED_TTL_S + 1
    assert writer.ensure([_group(5)], workload=_job(1)).kept == ["PodGroup/train-job"]
    assert len(cluster.calls) == calls
    now[0] = HELD_APPLIED_TTL_S + 1  # then read and written again
    assert writer.ensure([_group(5)], workload=_job(1)).applied == ["PodGroup/train-job"]
