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
from karta.kube.workloads import TopLevel
from karta.model.gvk import GroupKind

from .pods_support import FakeCluster

READY = [{"type": "Ready", "status": "True"}]


class _Definitions:
    """What the part reads of LiveDefinitions: the store, synced, subscribe."""

    def __init__(self) -> None:
        self.store = DefinitionStore.offline(user_directory=None)
        self.synced = threading.Event()
        self.synced.set()

    def subscribe(self, _callback: Any) -> None:
        pass


def _rtype(group: str, kind: str, plural: str, version: str = "v1") -> ResourceType:
    return ResourceType(group, version, kind, plural, verbs=("list", "watch"))


def _obj(api_version: str, kind: str, name: str, *, owner: str | None = None, **rest: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": name, "resourceVersion": "1"}
    if owner is not None:
        group_kind = {
            "JobSet": "jobset.x-k8s.io/v1alpha2",
            "Job": "batch/v1",
            "Deployment": "apps/v1",
            "ReplicaSet": "apps/v1",
            "CronJob": "batch/v1",
            "Experiment": "kubeflow.org/v1beta1",
            "Trial": "kubeflow.org/v1beta1",
            "PyTorchJob": "kubeflow.org/v1",
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


# -- the gang owners below top-level workloads (issue 27 item 3) ------------------------------------
_NESTED = {
    GroupKind("kubeflow.org", "Experiment"): _rtype("kubeflow.org", "Experiment", "experiments", "v1beta1"),
    GroupKind("kubeflow.org", "Trial"): _rtype("kubeflow.org", "Trial", "trials", "v1beta1"),
    GroupKind("kubeflow.org", "PyTorchJob"): _rtype("kubeflow.org", "PyTorchJob", "pytorchjobs"),
    GroupKind("batch", "CronJob"): _rtype("batch", "CronJob", "cronjobs"),
    GroupKind("jobset.x-k8s.io", "JobSet"): _rtype("jobset.x-k8s.io", "JobSet", "jobsets", "v1alpha2"),
}


def _pytorch_spec(workers: int) -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}
    return {
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": template},
            "Worker": {"replicas": workers, "template": template},
        }
    }


_jobset_spec = {
    "replicatedJobs": [
        {
            "name": "a",
            "replicas": 1,
            "template": {
                "spec": {
                    "parallelism": 1,
                    "completions": 1,
                    "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}},
                }
            },
        }
    ]
}


def _nested_part() -> PlatformMetrics:
    """Experiment → Trial (its run a PyTorchJob of 3 pods) → PyTorchJob → pods; CronJob → Job →
    pods; JobSet → Job → pods, beside the Job part's caches."""
    part = _part("workload-api")
    store = part.definitions.store
    for gk, rtype in _NESTED.items():
        part._types[gk] = _Type(rtype, store.definition_for(rtype.gvk), {None: part._informer(rtype, None)})
    run = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "t1"},
        "spec": _pytorch_spec(2),
    }
    objects = {
        "Experiment": [_obj("kubeflow.org/v1beta1", "Experiment", "random", spec={})],
        "Trial": [
            _obj("kubeflow.org/v1beta1", "Trial", "t1", owner="Experiment/random", spec={"runSpec": run})
        ],
        "PyTorchJob": [
            _obj("kubeflow.org/v1", "PyTorchJob", "t1-run", owner="Trial/t1", spec=_pytorch_spec(2))
        ],
        "CronJob": [_obj("batch/v1", "CronJob", "nightly", spec={})],
        "JobSet": [_obj("jobset.x-k8s.io/v1alpha2", "JobSet", "js", spec=_jobset_spec)],
    }
    for gk in _NESTED:
        part._types[gk].informers[None].informer.replace(objects[gk.kind])
    part._types[GroupKind("batch", "Job")].informers[None].informer.replace(
        [
            _obj(
                "batch/v1",
                "Job",
                "nightly-1",
                owner="CronJob/nightly",
                spec={"parallelism": 2, "completions": 2},
            ),
            _obj("batch/v1", "Job", "js-a", owner="JobSet/js", spec={"parallelism": 1, "completions": 1}),
        ]
    )
    part._pods[None].informer.replace(
        [
            _pod("t1-master-0", "PyTorchJob/t1-run", gpus=1, node="n1"),
            _pod("t1-worker-0", "PyTorchJob/t1-run", gpus=1, unschedulable=True),
            _pod("t1-worker-1", "PyTorchJob/t1-run", gpus=1, unschedulable=True),
            _pod("nightly-1-a", "Job/nightly-1", gpus=2, node="n2"),
            _pod("nightly-1-b", "Job/nightly-1", gpus=2, node="n2"),
            _pod("js-a-0", "Job/js-a", gpus=4, unschedulable=True),
        ]
    )
    part.drain()
    return part


def test_a_gang_owner_below_a_top_level_workload_counts_its_gang_there() -> None:
    part = _nested_part()
    counts = {c.kind: c for c in part.counts()}
    # Status and GPUs per top-level workload, as before: the Experiment, the CronJob, the JobSet.
    tops = {
        kind: (c.status is not None, c.gpus_running, c.gpus_pending)
        for kind, c in counts.items()
        if c.top_level
    }
    assert tops == {"Experiment": (True, 1, 2), "CronJob": (True, 4, 0), "JobSet": (True, 0, 4)}
    # Their gangs per gang owner: the Trial (under the Experiment) and the CronJob's Job own theirs,
    # the JobSet owns its Jobs' one; the PyTorchJob (in the Trial's gang) has no record.
    assert set(counts) == {"Experiment", "Trial", "CronJob", "Job", "JobSet"}
    trial, job = counts["Trial"], counts["Job"]
    assert not trial.top_level and not job.top_level
    assert (trial.status, trial.gpus_running, trial.gpus_pending, trial.gang_pods_pending) == (None, 0, 0, 2)
    assert trial.gang is not None and (trial.gang.met, trial.gang.bound, trial.gang.minimum) == (False, 1, 3)
    assert job.gang is not None and (job.gang.met, job.gang.bound) == (True, 2)
    assert counts["Experiment"].gang is None and counts["CronJob"].gang is None
    assert counts["Experiment"].gang_pods_pending == 0  # the Trial's, counted once
    jobset = counts["JobSet"]
    assert jobset.gang is not None
    assert (jobset.gang_pods_pending, jobset.gang.met, jobset.gang.bound, jobset.gang.minimum) == (
        1,
        False,
        0,
        1,
    )


def test_the_exposition_counts_gangs_per_gang_owner_and_workloads_once() -> None:
    part = _nested_part()
    registry = CollectorRegistry()
    registry.register(part)
    text = generate_latest(registry).decode()
    trial = 'group="kubeflow.org",kind="Trial",namespace="ns"'
    assert 'karta_gangs{group="kubeflow.org",kind="Trial",minimum="not_met",namespace="ns"} 1.0' in text
    assert f"karta_gang_pods_pending{{{trial}}} 2.0" in text
    assert f"karta_gang_pods_bound{{{trial}}} 1.0" in text
    assert f"karta_gang_pods_minimum{{{trial}}} 3.0" in text
    assert 'karta_gangs{group="batch",kind="Job",minimum="met",namespace="ns"} 1.0' in text
    assert 'karta_gangs{group="jobset.x-k8s.io",kind="JobSet",minimum="not_met",namespace="ns"} 1.0' in text
    # A kind counted only for its gangs has no workload or GPU rows: no double counting.
    for family in ("karta_workloads", "karta_workload_gpus_requested"):
        assert not [line for line in text.splitlines() if line.startswith(family) and 'kind="Trial"' in line]
        assert not [line for line in text.splitlines() if line.startswith(family) and 'kind="Job"' in line]
    experiment = 'group="kubeflow.org",kind="Experiment",namespace="ns"'
    assert f'karta_workload_gpus_requested{{{experiment},phase="pending"}} 2.0' in text
    assert sum(c.gpus_running + c.gpus_pending for c in part.counts()) == 1 + 2 + 4 + 4


def test_whether_a_trial_owns_its_gang_is_walked_by_the_parts_thread_not_by_a_count() -> None:
    part = _nested_part()
    cluster = FakeCluster()
    cluster.add(_obj("kubeflow.org/v1beta1", "Experiment", "random", spec={}))
    cluster.add(_obj("batch/v1", "CronJob", "nightly", spec={}))
    part._top, part._gang_top = (
        TopLevel(cluster.client, rule.covered) for rule in (part._top, part._gang_top)
    )
    part.counts()  # the Trial's and the Job's controllers have no gang instructions: a walk tells
    assert cluster.calls == [] and set(part._to_walk) == {(True, "t1"), (True, "nightly-1")}
    part._walk_pending()  # the part's thread
    assert part._walked == {(True, "t1"): ("random", True), (True, "nightly-1"): ("nightly", True)}
    assert cluster.calls
    calls = len(cluster.calls)
    assert {c.kind for c in part.counts() if c.gang is not None} == {"Trial", "Job", "JobSet"}
    assert len(cluster.calls) == calls and part._to_walk == {}  # decided once, kept
