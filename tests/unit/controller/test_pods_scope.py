"""The pod webhook inside the gang-scheduling scope (issue 22 items 1-2; docs/controller/
pod-binding.md "When binding fails"): a pod whose gang binding cannot be made is denied (HTTP 503,
a message its controller records in FailedCreate), never admitted unbound; on the Workload API,
whose scheduler holds a pod whose group is missing, it is admitted bound; a workload outside the
scope fails open, untouched. The scope reads the namespace with one GET (no informer: the
runtime's seam before it has synced)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from karta.controller.parts.pod_binding.admission import EVENT_REASON, PodAdmission, PodBinder
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import OwnerCache
from karta.controller.runtime.scope import GangScope
from karta.controller.runtime.webhook.review import response
from karta.definitions import DefinitionStore
from karta.errors import ApiError
from karta.gang import SCOPE_LABEL

from .pods_support import FakeCluster, job, job_pod, owned_pod, review


@pytest.fixture
def store(tmp_path: Path) -> DefinitionStore:
    return DefinitionStore.load(user_directory=tmp_path / "none", include_catalog=True)


def _cluster(namespace_label: str | None) -> FakeCluster:
    cluster = FakeCluster()
    labels = {SCOPE_LABEL: namespace_label} if namespace_label is not None else {}
    # cluster-scoped: the fake keys it under its default namespace, as its get() looks it up
    cluster.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": labels}})
    return cluster


def _admission(
    cluster: FakeCluster, store: DefinitionStore, *, backend: str, mode: str = "opt-in"
) -> tuple[PodAdmission, Metrics]:
    metrics = Metrics()
    binder = PodBinder(store=lambda: store, owners=OwnerCache(cluster.client), backend=backend)
    scope = GangScope(cluster.client, mode=mode)
    events = EventRecorder(cluster.client, instance="test")
    handler = PodAdmission(binder, cluster.client, metrics=metrics, events=events, timeout=4.0, scope=scope)
    return handler, metrics


def _refuse(obj: Any) -> None:
    raise ApiError("podgroups is forbidden", status=403, reason="Forbidden")


def _count(metrics: Metrics, name: str, labels: dict[str, str]) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


@pytest.mark.parametrize("backend", ["volcano", "coscheduling", "kai"])
def test_in_scope_a_pod_whose_group_cannot_be_written_is_denied_with_a_clear_message(
    store: DefinitionStore, backend: str
) -> None:
    cluster = _cluster("enabled")
    owner = cluster.add(job())
    cluster.on_apply = _refuse
    handler, metrics = _admission(cluster, store, backend=backend)
    answer = handler(review(job_pod(owner, name="train-abcde")))
    assert not answer.allowed and not answer.patch
    assert answer.code == 503
    assert answer.message.startswith(
        "karta: pod team/train-abcde refused: its gang binding cannot be made now (api)"
    )
    assert "created again by its controller" in answer.message
    sent = response({"apiVersion": "admission.k8s.io/v1", "request": review({})}, answer)["response"]
    assert sent["allowed"] is False and sent["status"]["code"] == 503
    assert sent["status"]["message"] == answer.message  # what the API server returns to the Job controller
    assert _count(metrics, "karta_unbound_pods_total", {"reason": "api"}) == 1
    (event,) = cluster.wait_events(EVENT_REASON)
    assert event["type"] == "Warning" and event["involvedObject"]["uid"] == owner["metadata"]["uid"]
    assert "refused" in event["message"]


def test_in_scope_an_unreadable_owner_is_denied(store: DefinitionStore) -> None:
    cluster = _cluster("enabled")
    owner = job()
    owner["metadata"]["uid"] = "gone"  # not in the cluster: the owner walk reads a 404
    handler, metrics = _admission(cluster, store, backend="volcano")
    answer = handler(review(job_pod(owner)))
    assert not answer.allowed and answer.code == 503
    assert "(owner)" in answer.message
    assert _count(metrics, "karta_unbound_pods_total", {"reason": "owner"}) == 1


def test_on_the_workload_api_the_pod_is_admitted_bound_its_scheduler_holds_it(store: DefinitionStore) -> None:
    cluster = _cluster("enabled")
    owner = cluster.add(job())
    cluster.on_apply = _refuse
    handler, metrics = _admission(cluster, store, backend="workload-api")
    answer = handler(review(job_pod(owner)))
    assert answer.allowed
    assert [op["path"] for op in answer.patch] == ["/spec/schedulingGroup"]
    assert "admitted with its gang binding before its group object exists" in answer.warnings[0]
    assert _count(metrics, "karta_unbound_pods_total", {"reason": "api"}) == 1


@pytest.mark.parametrize(
    ("namespace_label", "workload_label", "mode"),
    [
        (None, None, "opt-in"),  # the namespace did not opt in
        (None, "enabled", "opt-in"),  # a workload cannot opt in where the namespace did not
        ("opt-in", None, "opt-in"),  # the namespace lets workloads opt in; this one did not
        ("enabled", "disabled", "opt-in"),  # the workload opts out
        ("disabled", None, "all"),  # the namespace opts out of --gang-scope all
    ],
)
def test_outside_the_scope_the_pod_is_allowed_unchanged_and_nothing_is_written(
    store: DefinitionStore, namespace_label: str | None, workload_label: str | None, mode: str
) -> None:
    cluster = _cluster(namespace_label)
    labels = {SCOPE_LABEL: workload_label} if workload_label is not None else {}
    owner = cluster.add(job(labels=labels))
    cluster.on_apply = _refuse  # would deny, were the workload in scope
    handler, metrics = _admission(cluster, store, backend="volcano", mode=mode)
    answer = handler(review(job_pod(owner)))
    assert answer.allowed and not answer.patch and not answer.warnings
    assert not [c for c in cluster.calls if c[0] in ("apply", "create")]
    assert _count(metrics, "karta_unbound_pods_total", {"reason": "api"}) == 0


def test_a_workload_that_opts_in_is_bound(store: DefinitionStore) -> None:
    cluster = _cluster("opt-in")
    owner = cluster.add(job(labels={SCOPE_LABEL: "enabled"}))
    handler, _ = _admission(cluster, store, backend="volcano")
    answer = handler(review(job_pod(owner)))
    assert answer.allowed and answer.patch
    assert ("apply", "PodGroup", "train-train") in cluster.calls or any(
        c[:2] == ("apply", "PodGroup") for c in cluster.calls
    )


def test_a_webhook_shutting_down_refuses_in_a_scope(store: DefinitionStore) -> None:
    """A request on a kept-alive connection after the handler's pool stopped: refused, never unbound."""
    cluster = _cluster("enabled")
    owner = cluster.add(job())
    handler, _ = _admission(cluster, store, backend="volcano")
    handler.close()
    answer = handler(review(job_pod(owner)))
    assert not answer.allowed and answer.code == 503 and "shutting down" in answer.message


def _multi_host_ray() -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "ray", "image": "rayproject/ray"}]}}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "tpu", "namespace": "team"},
        "spec": {
            "headGroupSpec": {"template": template},
            "workerGroupSpecs": [
                {"groupName": "slice", "replicas": 1, "numOfHosts": 2, "template": template}
            ],
        },
    }


@pytest.mark.parametrize("index", [None, "0"])
def test_a_pod_whose_gang_the_definition_cannot_decide_is_refused_never_scheduled_alone(
    store: DefinitionStore, index: str | None
) -> None:
    """Issue 22: a multi-host Ray worker without KubeRay's replica index (KubeRay 1.5 with its
    RayMultiHostIndexing gate off) is in no gang of the catalog's split; inside the scope it is
    refused with the plan's reason and the way out, not admitted to be scheduled alone. With the
    label it is bound to its replica's gang."""
    cluster = _cluster("enabled")
    owner = cluster.add(_multi_host_ray())
    labels = {"ray.io/node-type": "worker", "ray.io/group": "slice", "ray.io/cluster": "tpu"}
    if index is not None:
        labels["ray.io/worker-group-replica-index"] = index
    handler, metrics = _admission(cluster, store, backend="volcano")
    answer = handler(review(owned_pod(owner, name="tpu-slice-worker-a", labels=labels)))
    if index is not None:
        assert answer.allowed and answer.patch
        return
    assert not answer.allowed and answer.code == 503
    assert answer.message.startswith("karta: pod team/tpu-slice-worker-a refused: its gang cannot be decided")
    assert "ray.io/worker-group-replica-index" in answer.message
    assert f"{SCOPE_LABEL}=disabled" in answer.message
    assert _count(metrics, "karta_unbound_pods_total", {"reason": "no-gang"}) == 1
    (event,) = cluster.wait_events(EVENT_REASON)
    assert event["involvedObject"]["uid"] == owner["metadata"]["uid"]
