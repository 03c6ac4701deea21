"""The gang's owner (issue 27 item 3): the topmost workload in the owner chain whose definition has
gang instructions; the owners above it without any (a Katib Experiment, a CronJob, a
ScheduledSparkApplication, a Tekton PipelineRun) only contain it. The one rule of the gang
reconciler (:meth:`karta.kube.TopLevel.of` with ``gangs``), ``kli describe``'s ``ownedBy``
(:meth:`~karta.kube.TopLevel.top_owner`) and the pod webhook's owner walk
(:meth:`karta.controller.parts.pod_binding.admission.PodBinder.top`), on an in-memory cluster."""

from __future__ import annotations

from typing import Any

import pytest

from karta.controller.parts.pod_binding.admission import PodAdmission, PodBinder
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import OwnerCache, readable_owner_kinds
from karta.definitions import DefinitionStore
from karta.kube import TopLevel, gang_kinds
from karta.model.gvk import GroupKind

from .pods_support import FakeCluster, job, job_pod, owned_pod, review

CONTAINER = {"name": "main", "image": "busybox"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> DefinitionStore:
    return DefinitionStore.load(user_directory=tmp_path_factory.mktemp("none"), include_catalog=True)


def _ref(owner: dict[str, Any]) -> list[dict[str, Any]]:
    meta = owner["metadata"]
    return [
        {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": True,
        }
    ]


def _add(
    cluster: FakeCluster,
    api_version: str,
    kind: str,
    name: str,
    owner: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if owner is not None:
        meta["ownerReferences"] = _ref(owner)
    return cluster.add({"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec})


def _pytorch_spec(workers: int) -> dict[str, Any]:
    template = {"spec": {"containers": [CONTAINER]}}
    return {
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": template},
            "Worker": {"replicas": workers, "template": template},
        }
    }


def _katib(cluster: FakeCluster) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Experiment → Trial (runSpec: a PyTorchJob, 1 master and 2 workers) → PyTorchJob."""
    experiment = _add(cluster, "kubeflow.org/v1beta1", "Experiment", "random")
    run = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "t1"}}
    run["spec"] = _pytorch_spec(2)
    trial = _add(cluster, "kubeflow.org/v1beta1", "Trial", "t1", experiment, runSpec=run)
    pytorchjob = _add(cluster, "kubeflow.org/v1", "PyTorchJob", "t1", trial, **_pytorch_spec(2))
    return experiment, trial, pytorchjob


def _top_level(cluster: FakeCluster, store: DefinitionStore, *, gangs: bool) -> TopLevel:
    readable = readable_owner_kinds(d.karta for d in store.definitions)
    return TopLevel.of(cluster.client, store, readable=readable, gangs=gangs)


def test_the_kinds_that_can_own_a_gang_are_those_with_gang_instructions(store: DefinitionStore) -> None:
    kinds = gang_kinds(store)
    for kind in (
        GroupKind("kubeflow.org", "Trial"),
        GroupKind("batch", "Job"),
        GroupKind("sparkoperator.k8s.io", "SparkApplication"),
        GroupKind("ray.io", "RayJob"),
        GroupKind("ray.io", "RayCluster"),
        GroupKind("jobset.x-k8s.io", "JobSet"),
        GroupKind("kubeflow.org", "PyTorchJob"),
    ):
        assert kind in kinds, kind
    for kind in (
        GroupKind("kubeflow.org", "Experiment"),
        GroupKind("batch", "CronJob"),
        GroupKind("sparkoperator.k8s.io", "ScheduledSparkApplication"),
        GroupKind("tekton.dev", "PipelineRun"),
        GroupKind("tekton.dev", "TaskRun"),
        GroupKind("apps", "Deployment"),
    ):
        assert kind not in kinds, kind


def _owner(top: TopLevel, obj: dict[str, Any]) -> str | None:
    link = top.top_owner(obj)
    return None if link is None else f"{link.kind}/{link.name}"


def test_an_experiments_trial_owns_its_gang_and_the_pytorchjob_is_in_it(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    experiment, trial, pytorchjob = _katib(cluster)
    gangs = _top_level(cluster, store, gangs=True)
    assert gangs.is_top_level(experiment) and gangs.is_top_level(trial)  # the Trial makes its gang
    assert not gangs.is_top_level(pytorchjob)  # in the Trial's: none of its own
    assert (_owner(gangs, trial), _owner(gangs, pytorchjob)) == (None, "Trial/t1")
    # the display rule (every covered kind) is unchanged: only the Experiment is top-level
    shown = _top_level(cluster, store, gangs=False)
    assert [shown.is_top_level(o) for o in (experiment, trial, pytorchjob)] == [True, False, False]
    assert (_owner(shown, trial), _owner(shown, pytorchjob)) == ("Experiment/random", "Experiment/random")


@pytest.mark.parametrize(
    ("top", "nested", "owner"),
    [
        # a container without gang instructions: the run owns its gang
        (("batch/v1", "CronJob"), ("batch/v1", "Job"), None),
        (
            ("sparkoperator.k8s.io/v1beta2", "ScheduledSparkApplication"),
            ("sparkoperator.k8s.io/v1beta2", "SparkApplication"),
            None,
        ),
        # the top has gang instructions: unchanged, the nested one is in the top's gang
        (("ray.io/v1", "RayJob"), ("ray.io/v1", "RayCluster"), "RayJob/top"),
        (("jobset.x-k8s.io/v1alpha2", "JobSet"), ("batch/v1", "Job"), "JobSet/top"),
    ],
)
def test_the_topmost_owner_with_gang_instructions_owns_the_gang(
    store: DefinitionStore, top: tuple[str, str], nested: tuple[str, str], owner: str | None
) -> None:
    cluster = FakeCluster()
    parent = _add(cluster, *top, "top")
    child = _add(cluster, *nested, "run", parent)
    gangs = _top_level(cluster, store, gangs=True)
    assert gangs.is_top_level(parent)
    assert gangs.is_top_level(child) is (owner is None)
    assert _owner(gangs, child) == owner


def test_a_chain_where_no_one_has_gang_instructions_has_no_gang_owner(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    run = _add(cluster, "tekton.dev/v1", "PipelineRun", "p")
    task = _add(cluster, "tekton.dev/v1", "TaskRun", "p-build", run)
    gangs = _top_level(cluster, store, gangs=True)
    assert _owner(gangs, task) is None and _owner(gangs, run) is None


def _admission(cluster: FakeCluster, store: DefinitionStore) -> tuple[PodAdmission, OwnerCache]:
    readable = readable_owner_kinds(d.karta for d in store.definitions)
    owners = OwnerCache(cluster.client, readable=readable)
    binder = PodBinder(store=lambda: store, owners=owners, backend="workload-api")
    events = EventRecorder(cluster.client, instance="test")
    return PodAdmission(binder, cluster.client, metrics=Metrics(), events=events), owners


def _pytorch_pod(owner: dict[str, Any], role: str, index: int) -> dict[str, Any]:
    labels = {"training.kubeflow.org/replica-type": role, "training.kubeflow.org/replica-index": str(index)}
    return owned_pod(owner, name=f"t1-{role}-{index}", labels=labels)


def test_the_webhook_binds_an_experiments_trials_pods_to_the_trials_gang(store: DefinitionStore) -> None:
    """A PyTorchJob pod of a Trial an Experiment owns: the walk reads PyTorchJob, Trial and
    Experiment (the Experiment has no gang instructions: the walk is re-rooted at the Trial), the
    group objects are the Trial's (owned by its UID, the gang counts the 3 pods of its runSpec)."""
    cluster = FakeCluster()
    _experiment, trial, _pytorchjob = _katib(cluster)
    handler, _ = _admission(cluster, store)
    answer = handler(review(_pytorch_pod(_pytorchjob, "master", 0)))
    assert answer.allowed
    assert list(answer.patch) == [
        {"op": "add", "path": "/spec/schedulingGroup", "value": {"podGroupName": "t1-trial"}}
    ]
    (workload, _), _ = cluster.applied
    assert (workload["kind"], workload["metadata"]["name"]) == ("Workload", "t1")
    assert {o["metadata"]["ownerReferences"][0]["uid"] for o, _ in cluster.applied} == {
        trial["metadata"]["uid"]
    }
    assert workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    gets = len([c for c in cluster.calls if c[0] == "get"])
    # the next pod: the owners from the cache, the gang's owner read fresh (from the watch cache),
    # as for a workload nobody owns: the re-rooting costs no API call
    assert handler(review(_pytorch_pod(_pytorchjob, "worker", 0))).patch
    assert [c for c in cluster.calls if c[0] == "get"][gets:] == [("get", "Trial", "t1")]


def test_the_webhook_binds_a_cronjobs_job_pods_to_the_jobs_gang(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    cron = _add(cluster, "batch/v1", "CronJob", "nightly")
    owned = job("nightly-1", parallelism=2)
    owned["metadata"]["ownerReferences"] = _ref(cron)
    run = cluster.add(owned)
    handler, _ = _admission(cluster, store)
    answer = handler(review(job_pod(run)))
    assert list(answer.patch) == [
        {"op": "add", "path": "/spec/schedulingGroup", "value": {"podGroupName": "nightly-1-job"}}
    ]
    assert {o["metadata"]["ownerReferences"][0]["uid"] for o, _ in cluster.applied} == {
        run["metadata"]["uid"]
    }


def test_the_webhook_leaves_a_jobsets_job_pods_in_the_jobsets_gang(store: DefinitionStore) -> None:
    """The top has gang instructions: the pod's gang is the JobSet's, as before."""
    cluster = FakeCluster()
    jobset = _add(cluster, "jobset.x-k8s.io/v1alpha2", "JobSet", "js", replicatedJobs=[])
    owned = job("js-workers-0", parallelism=2)
    owned["metadata"]["ownerReferences"] = _ref(jobset)
    run = cluster.add(owned)
    handler, owners = _admission(cluster, store)
    walk = handler.binder.top(job_pod(run))
    assert walk.top is not None and walk.top["kind"] == "JobSet" and len(walk.links) == 2
    assert owners.reads == 2


def test_a_pipelineruns_taskrun_pod_is_in_no_gang(store: DefinitionStore) -> None:
    cluster = FakeCluster()
    run = _add(cluster, "tekton.dev/v1", "PipelineRun", "p")
    task = _add(cluster, "tekton.dev/v1", "TaskRun", "p-build", run)
    handler, _ = _admission(cluster, store)
    answer = handler(review(owned_pod(task, name="p-build-pod")))
    assert answer.allowed and not answer.patch and not cluster.applied
