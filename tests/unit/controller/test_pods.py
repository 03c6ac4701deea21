"""The pod admission handler (karta.controller.parts.pod_binding.admission) on an in-memory
cluster: the binding per
backend as a JSON patch, the group objects applied before the answer, and every failure (owner,
definition, extraction, jq budget, API, timeout, hostile input) allowed unchanged, counted and
reported on the workload."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from karta.controller.parts.pod_binding.admission import (
    EVENT_REASON,
    PodAdmission,
    PodBinder,
    binding_patch,
    missing_binding,
    pod_webhook,
)
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import OwnerCache
from karta.controller.runtime.webhook.review import Answer, response
from karta.definitions import DefinitionStore
from karta.errors import ApiError
from karta.model.load import load_karta

from .pods_support import FakeCluster, job, job_pod, owned_pod, review

TRAINER = """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: trainer}
spec:
  structureDefinition:
    rootComponent:
      name: trainer
      kind: {group: example.com, version: v1, kind: Trainer}
      specDefinition: {podTemplateSpecPath: .spec.template}
      scaleDefinition:
        replicasPath: REPLICAS
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["example.com/trainer"]'}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings: {running: [{byPhase: Running}]}
  optimizationInstructions:
    gangScheduling:
      podGroup: {name: trainer}
"""


def _store(tmp_path: Path, *cluster_kartas: str) -> DefinitionStore:
    store = DefinitionStore.load(user_directory=tmp_path / "none", include_catalog=True)
    if cluster_kartas:
        store = store.with_cluster([load_karta(text).karta for text in cluster_kartas])
    return store


def _admission(
    cluster: FakeCluster,
    store: DefinitionStore,
    *,
    backend: str = "workload-api",
    scheduler_name: str | None = None,
    timeout: float = 4.0,
) -> tuple[PodAdmission, Metrics]:
    metrics = Metrics()
    binder = PodBinder(
        store=lambda: store,
        owners=OwnerCache(cluster.client),
        backend=backend,
        scheduler_name=scheduler_name,
    )
    events = EventRecorder(cluster.client, instance="test")
    return PodAdmission(binder, cluster.client, metrics=metrics, events=events, timeout=timeout), metrics


def _unbound(metrics: Metrics, reason: str) -> float:
    value = metrics.registry.get_sample_value("karta_unbound_pods_total", {"reason": reason})
    return value or 0.0


@pytest.fixture
def store(tmp_path: Path) -> DefinitionStore:
    return _store(tmp_path)


def test_a_job_pod_is_bound_to_its_podgroup_and_the_group_objects_exist_first(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())
    handler, metrics = _admission(cluster, store)
    answer = handler(review(job_pod(owner)))  # generateName: no name yet at admission
    assert answer.allowed
    assert list(answer.patch) == [
        {"op": "add", "path": "/spec/schedulingGroup", "value": {"podGroupName": "train-job"}}
    ]
    kinds = [(obj["kind"], obj["metadata"]["name"], manager) for obj, manager in cluster.applied]
    assert kinds == [("Workload", "train", "karta"), ("PodGroup", "train-job", "karta")]
    (workload, _), (group, _) = cluster.applied
    assert workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    assert group["metadata"]["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]
    assert _unbound(metrics, "api") == 0
    # The other pods of the gang: the applied objects come from the memo; the workload is read
    # again for each (a cached one may predate a scale-up whose new pods these are).
    for _ in range(3):
        assert handler(review(job_pod(owner))).patch
    # (the Workload was looked up once: it is created only when missing; the PodGroup once: a
    # minimum is never lowered at admission)
    assert [c for c in cluster.calls if c[0] == "get"] == [
        ("get", "Job", "train"),
        ("get", "Workload", "train"),
        ("get", "PodGroup", "train-job"),
        *[("get", "Job", "train")] * 3,
    ]
    assert cluster.cache_reads == 3  # from the API server's watch cache: no etcd read
    assert len(cluster.applied) == 2


def test_the_response_carries_the_patch_as_base64_json() -> None:
    answer = Answer(True, patch=({"op": "add", "path": "/spec/x", "value": 1},))
    out = response({"apiVersion": "admission.k8s.io/v1", "request": {"uid": "u"}}, answer)["response"]
    assert out["patchType"] == "JSONPatch" and out["uid"] == "u" and out["allowed"] is True


def test_a_pod_of_no_covered_workload_is_allowed_unchanged_without_api_calls(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    handler, metrics = _admission(cluster, store)
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    answer = handler(review(bare))
    assert answer.allowed and not answer.patch and answer.outcome == ""
    assert cluster.calls == []
    assert metrics.registry.get_sample_value("karta_unbound_pods_total", {"reason": "owner"}) is None


def test_a_deployment_pod_is_allowed_unchanged_the_deployment_has_no_gang(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    deployment = cluster.add(
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {}}
    )
    rs = cluster.add(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "web-1",
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "web",
                        "uid": deployment["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
        }
    )
    handler, _ = _admission(cluster, store)
    answer = handler(review(owned_pod(rs)))
    assert answer.allowed and not answer.patch
    assert cluster.applied == []


def test_pytorchjob_pods_of_both_replica_types_join_one_gang(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    spec = {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}}
    owner = cluster.add(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "ddp"},
            "spec": {"pytorchReplicaSpecs": {"Master": spec, "Worker": {**spec, "replicas": 3}}},
        }
    )
    handler, _ = _admission(cluster, store)
    for replica_type in ("master", "worker"):
        pod = owned_pod(
            owner, name=f"ddp-{replica_type}-0", labels={"training.kubeflow.org/replica-type": replica_type}
        )
        assert handler(review(pod)).patch == (
            {"op": "add", "path": "/spec/schedulingGroup", "value": {"podGroupName": "ddp-pytorchjob"}},
        )
    group = next(obj for obj, _ in cluster.applied if obj["kind"] == "PodGroup")
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}


@pytest.mark.parametrize(
    ("backend", "labels", "annotations", "scheduler"),
    [
        ("volcano", {}, {"scheduling.k8s.io/group-name": "train-job"}, "volcano"),
        ("coscheduling", {"scheduling.x-k8s.io/pod-group": "train-job"}, {}, "scheduler-plugins-scheduler"),
        (
            "kai",
            {},
            {"pod-group-name": "pg-{uid}-job", "kai.scheduler/skip-podgrouper": "true"},
            "kai-scheduler",
        ),
    ],
)
def test_the_binding_metadata_of_each_backend(
    store: DefinitionStore, backend: str, labels: dict[str, str], annotations: dict[str, str], scheduler: str
) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())
    uid = owner["metadata"]["uid"]
    handler, _ = _admission(cluster, store, backend=backend)
    pod = job_pod(owner, name="train-abcde")
    answer = handler(review(pod))
    expected = [
        {
            "op": "add",
            "path": "/metadata/labels/scheduling.x-k8s.io~1pod-group",
            "value": value,
        }
        for value in labels.values()
    ]
    if annotations:
        value = {k: v.format(uid=uid) for k, v in annotations.items()}
        expected.append({"op": "add", "path": "/metadata/annotations", "value": value})
    expected.append({"op": "add", "path": "/spec/schedulerName", "value": scheduler})
    assert list(answer.patch) == expected
    assert [obj["kind"] for obj, _ in cluster.applied] == ["PodGroup"]


def test_the_scheduler_name_flag_is_written_for_the_workload_api_too(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())
    handler, _ = _admission(cluster, store, scheduler_name="gang-scheduler")
    patch = list(handler(review(job_pod(owner))).patch)
    assert {"op": "add", "path": "/spec/schedulerName", "value": "gang-scheduler"} in patch


def test_a_dry_run_gets_the_patch_and_writes_nothing(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())
    handler, _ = _admission(cluster, store)
    assert handler(review(job_pod(owner), dry_run=True)).patch
    assert cluster.applied == []


def test_a_pod_that_already_names_another_group_is_left_alone(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())
    handler, _ = _admission(cluster, store)
    pod = job_pod(owner)
    pod["spec"]["schedulingGroup"] = {"podGroupName": "chosen-by-the-user"}
    answer = handler(review(pod))
    assert answer.allowed and not answer.patch and answer.warnings
    assert cluster.applied == []


def test_an_unreadable_owner_allows_the_pod_unbound_and_counts_it(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    owner = job()
    owner["metadata"]["uid"] = "gone"
    handler, metrics = _admission(cluster, store)  # the Job is not in the cluster: 404
    answer = handler(review(job_pod(owner)))
    assert answer.allowed and not answer.patch and answer.outcome == "unbound"
    assert _unbound(metrics, "owner") == 1
    assert "cannot read Job train" in answer.warnings[0]


def test_an_api_error_writing_the_group_allows_unbound_with_a_warning_event_on_the_workload(
    store: DefinitionStore,
) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())

    def refuse(obj: Any) -> None:
        raise ApiError("podgroups is forbidden", status=403, reason="Forbidden")

    cluster.on_apply = refuse
    handler, metrics = _admission(cluster, store)
    answer = handler(review(job_pod(owner)))
    assert answer.allowed and not answer.patch
    assert _unbound(metrics, "api") == 1
    (event,) = cluster.wait_events(EVENT_REASON)
    assert event["type"] == "Warning"
    assert event["involvedObject"]["uid"] == owner["metadata"]["uid"]
    assert "forbidden" in event["message"]


def test_a_group_held_with_other_values_is_used_as_it_is(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())
    cluster.add(
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {"name": "train"},
            "spec": {},
        }
    )
    cluster.add(
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "train-job"},
            "spec": {},
        }
    )

    def immutable(obj: Any) -> None:
        raise ApiError("field is immutable", status=422, reason="Invalid")

    cluster.on_apply = immutable
    handler, metrics = _admission(cluster, store)
    assert handler(review(job_pod(owner))).patch
    assert _unbound(metrics, "api") == 0


def test_a_slow_api_server_is_answered_within_the_timeout(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())
    release = threading.Event()
    cluster.on_get = lambda kind, name: release.wait(5)
    handler, metrics = _admission(cluster, store, timeout=0.3)
    started = time.monotonic()
    answer = handler(review(job_pod(owner)))
    took = time.monotonic() - started
    release.set()
    assert answer.allowed and not answer.patch
    assert took < 2.0
    assert _unbound(metrics, "timeout") == 1


def test_an_extraction_error_and_a_budget_breach_of_an_untrusted_definition(tmp_path: Path) -> None:
    for replicas, reason in (
        ("'error(\"no replicas\")'", "extraction"),
        ("'0 | until(. > 100000000; . + 1)'", "budget"),  # valid, but over the budget
    ):
        store = _store(tmp_path, TRAINER.replace("REPLICAS", replicas))
        cluster = FakeCluster()
        owner = cluster.add(
            {
                "apiVersion": "example.com/v1",
                "kind": "Trainer",
                "metadata": {"name": "t"},
                "spec": {"template": {}},
            }
        )
        handler, metrics = _admission(cluster, store)
        pod = owned_pod(owner, labels={"example.com/trainer": "x"})
        answer = handler(review(pod))
        assert answer.allowed and not answer.patch, reason
        assert _unbound(metrics, reason) == 1
        (event,) = cluster.wait_events(EVENT_REASON)
        assert event["involvedObject"]["kind"] == "Trainer"


HOSTILE: list[Any] = [
    None,
    [],
    "pod",
    {"kind": {"group": "", "kind": "Pod"}, "object": []},
    {"operation": "CREATE", "object": {"metadata": "x"}},
    {"operation": "CREATE", "object": {"metadata": {"ownerReferences": "abc"}}},
    {"operation": "CREATE", "object": {"metadata": {"ownerReferences": [{"controller": True}]}}},
    {"operation": "CREATE", "object": {"metadata": {"ownerReferences": [{"controller": True, "kind": 7}]}}},
    {
        "operation": "CREATE",
        "object": {
            "metadata": {
                "labels": ["not", "a", "map"],
                "generateName": 12,
                "ownerReferences": [
                    {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": 5, "controller": True}
                ],
            },
            "spec": "nope",
        },
    },
    {"operation": "DELETE", "object": {"metadata": {}}},
    {"operation": "CREATE", "subResource": "binding", "object": {"metadata": {}}},
]


@pytest.mark.parametrize("request_", HOSTILE)
def test_hostile_requests_are_allowed_never_a_traceback(store: DefinitionStore, request_: Any) -> None:
    cluster = FakeCluster()
    cluster.add(job())
    handler, _ = _admission(cluster, store)
    answer = handler(request_)
    assert answer.allowed


def test_a_hostile_workload_object_is_allowed_unbound(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())
    owner["spec"] = {"parallelism": {"a": [1]}, "completions": "many", "template": []}
    cluster.add(owner)
    handler, metrics = _admission(cluster, store)
    answer = handler(review(job_pod(owner)))
    assert answer.allowed and not answer.patch
    assert sum(_unbound(metrics, r) for r in ("extraction", "render", "internal")) == 1


def test_binding_patch_adds_only_what_differs_and_escapes_keys() -> None:
    pod = {"metadata": {"labels": {"a": "1"}}, "spec": {"schedulerName": "volcano"}}
    merge = {
        "metadata": {"labels": {"a": "1", "x/y": "2"}, "annotations": {"k": "v"}},
        "spec": {"schedulerName": "volcano", "schedulingGroup": {"podGroupName": "g"}},
    }
    assert binding_patch(pod, merge) == [
        {"op": "add", "path": "/metadata/labels/x~1y", "value": "2"},
        {"op": "add", "path": "/metadata/annotations", "value": {"k": "v"}},
        {"op": "add", "path": "/spec/schedulingGroup", "value": {"podGroupName": "g"}},
    ]
    assert missing_binding(pod, merge) == [
        "metadata.labels.x/y",
        "metadata.annotations.k",
        "spec.schedulingGroup",
    ]
    bound = {"metadata": {"labels": {"a": "1", "x/y": "2"}, "annotations": {"k": "v"}}, "spec": merge["spec"]}
    assert missing_binding(bound, merge) == []


def test_the_webhook_registration_entry() -> None:
    entry = pod_webhook(client_config={"url": "https://127.0.0.1:9443/mutate--v1-pod"})
    assert entry["failurePolicy"] == "Ignore"
    assert entry["rules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["pods"],
            "scope": "Namespaced",
        }
    ]
    assert entry["sideEffects"] == "NoneOnDryRun" and entry["timeoutSeconds"] == 5
    assert entry["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system"]
    assert pod_webhook(client_config={}, failure_policy="Fail")["failurePolicy"] == "Fail"


def test_pods_outside_the_watched_namespaces_are_left_alone(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    owner = cluster.add(job())
    metrics = Metrics()
    binder = PodBinder(store=lambda: store, owners=OwnerCache(cluster.client), backend="workload-api")
    events = EventRecorder(cluster.client)
    only_other = PodAdmission(binder, cluster.client, metrics=metrics, events=events, namespaces=("other",))
    assert not only_other(review(job_pod(owner))).patch
    assert cluster.calls == []
    mine = PodAdmission(binder, cluster.client, metrics=metrics, events=events, namespaces=("team",))
    assert mine(review(job_pod(owner))).patch


def _jobset_tree(cluster: FakeCluster) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    def replicated(name: str, replicas: int, parallelism: int) -> dict[str, Any]:
        template = {"spec": {"parallelism": parallelism, "template": {"spec": {"containers": []}}}}
        return {"name": name, "replicas": replicas, "template": template}

    jobset = cluster.add(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "js"},
            "spec": {"replicatedJobs": [replicated("leader", 1, 1), replicated("workers", 2, 2)]},
        }
    )
    jobs = {}
    for name in ("leader", "workers"):
        child = owned_pod(jobset, name=f"js-{name}-0") | {"apiVersion": "batch/v1", "kind": "Job"}
        jobs[name] = cluster.add(child)
    return jobset, jobs


# A JobSet definition with one gang per replicated job (alpha ``podGroups``), as the catalog had it
# before it declared one gang for the whole JobSet: the alpha path, two owners down.
ALPHA_JOBSET = (Path(__file__).parents[2] / "definitions" / "jobset-per-replicated-job.yaml").read_text()


def test_alpha_gangs_are_discovered_from_the_pod_two_owners_down(tmp_path: Path) -> None:
    """A definition that groups pods by replicated job (alpha ``podGroups``): each pod's gang is
    only known from its labels, so the webhook renders it from the pod."""
    cluster = FakeCluster()
    jobset, jobs = _jobset_tree(cluster)
    handler, _ = _admission(cluster, _store(tmp_path, ALPHA_JOBSET))
    label = "jobset.sigs.k8s.io/replicatedjob-name"
    answer = handler(review(owned_pod(jobs["workers"], labels={label: "workers"})))
    assert list(answer.patch) == [
        {"op": "add", "path": "/spec/schedulingGroup", "value": {"podGroupName": "js-replicatedjob-workers"}}
    ]
    answer = handler(review(owned_pod(jobs["leader"], labels={label: "leader"})))
    assert answer.patch[0]["value"] == {"podGroupName": "js-replicatedjob-leader"}
    groups = {obj["metadata"]["name"]: obj for obj, _ in cluster.applied if obj["kind"] == "PodGroup"}
    assert groups["js-replicatedjob-workers"]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    assert groups["js-replicatedjob-leader"]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 1}}
    assert {ref["uid"] for g in groups.values() for ref in g["metadata"]["ownerReferences"]} == {
        jobset["metadata"]["uid"]
    }
    # One Workload, written once: the leader's pod does not rewrite the template the workers' made.
    assert [obj["metadata"]["name"] for obj, _ in cluster.applied if obj["kind"] == "Workload"] == ["js"]


def test_catalog_jobset_pods_of_every_replicated_job_join_one_gang(store: DefinitionStore) -> None:
    """The catalog's JobSet: one gang for the whole JobSet (sum of replicas x parallelism), the same
    group for the leader's pod and the workers', two owners down."""
    cluster = FakeCluster()
    jobset, jobs = _jobset_tree(cluster)
    handler, _ = _admission(cluster, store)
    label = "jobset.sigs.k8s.io/replicatedjob-name"
    for name in ("leader", "workers"):
        answer = handler(review(owned_pod(jobs[name], labels={label: name})))
        assert list(answer.patch) == [
            {"op": "add", "path": "/spec/schedulingGroup", "value": {"podGroupName": "js-jobset"}}
        ]
    groups = [obj for obj, _ in cluster.applied if obj["kind"] == "PodGroup"]
    assert {g["metadata"]["name"] for g in groups} == {"js-jobset"}
    assert groups[0]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 5}}
    assert {ref["uid"] for g in groups for ref in g["metadata"]["ownerReferences"]} == {
        jobset["metadata"]["uid"]
    }
