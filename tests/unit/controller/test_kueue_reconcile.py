"""``KueueReconciler.reconcile`` without an API server (issue 25 item 2 of the helpers' round).

The seam is the gang reconciler's (test_gangs_reconcile.py): the reconciler runs on a
:class:`~karta.kube.cache.SharedCache` built with ``start=False`` and a
:class:`~karta.kube.tracker.Coverage` handed to it as the tracker would; :class:`FakeApi` is an
in-memory API server for what the reconciler calls (PUT with resourceVersion preconditions, create,
merge and JSON patches, delete with finalizers, lists, events) that feeds every write back into the
cache as its watch event would, and answers a chosen request with a chosen error once or always.
Kueue's part is played by the test: it writes the Workload's admission and eviction as Kueue would."""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from karta.controller.parts.kueue.reconciler import Key, KueueReconciler
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.metrics import Metrics
from karta.definitions import DefinitionStore
from karta.errors import ApiError
from karta.kube.cache import SharedCache
from karta.kube.client import KubeClient, ObjectList
from karta.kube.resources import ResourceType
from karta.kube.tracker import Coverage
from karta.kube.workloads import CoveredType
from karta.model.gvk import GroupKind

VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
JOBS = ResourceType("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", verbs=VERBS)
WORKLOADS = ResourceType("kueue.x-k8s.io", "v1beta2", "Workload", "workloads", verbs=VERBS)
FLAVORS = ResourceType("kueue.x-k8s.io", "v1beta2", "ResourceFlavor", "resourceflavors", False, verbs=VERBS)
PODS = ResourceType("", "v1", "Pod", "pods", verbs=VERBS)
EVENTS = ResourceType("", "v1", "Event", "events", verbs=VERBS)
RESOURCES = (JOBS, WORKLOADS, FLAVORS, PODS, EVENTS)
NS = "team"
GPU_TAINT = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
          "spec": {"nodeLabels": {"pool": "a100"}, "tolerations": [GPU_TAINT]}}  # fmt: skip


class _Discovery:
    def for_gvk(self, group: str, version: str, kind: str) -> ResourceType:
        for r in RESOURCES:
            if (r.group, r.version, r.kind) == (group, version, kind):
                return r
        raise ApiError(f"no {kind}", status=404)

    def for_api_version(self, api_version: str, kind: str) -> ResourceType:
        group, _, version = api_version.rpartition("/")
        return self.for_gvk(group, version, kind)

    def resources(self) -> list[ResourceType]:
        return list(RESOURCES)

    def invalidate(self) -> None:
        pass


def _kind_of(rtype: Any) -> str:
    if isinstance(rtype, ResourceType):
        return rtype.kind
    plural = str(rtype).split(".")[0]
    return next((r.kind for r in RESOURCES if r.plural == plural), plural)


@dataclass
class FakeApi:
    cache: SharedCache | None = None
    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    events: list[tuple[str, str]] = field(default_factory=list)  # (reason, message)
    faults: dict[tuple[str, str], list[ApiError]] = field(default_factory=dict)  # (verb, kind): errors
    always: dict[tuple[str, str], ApiError] = field(default_factory=dict)
    discovery: _Discovery = field(default_factory=_Discovery)
    _versions: Iterator[int] = field(default_factory=lambda: itertools.count(100))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def client(self) -> KubeClient:
        return cast(KubeClient, self)

    # -- fault injection and the watch -----------------------------------------------------------
    def _fault(self, verb: str, kind: str) -> None:
        self.calls.append((verb, kind, ""))
        if (verb, kind) in self.always:
            raise self.always[verb, kind]
        queued = self.faults.get((verb, kind))
        if queued:
            raise queued.pop(0)

    def feed(self, kind: str, event: str, obj: dict[str, Any]) -> None:
        rtype = next(r for r in RESOURCES if r.kind == kind)
        for key, informer in (self.cache.informers() if self.cache is not None else {}).items():
            if (key.group, key.plural) == (rtype.group, rtype.plural):
                informer.record(event, copy.deepcopy(obj))

    def put_object(self, obj: dict[str, Any], event: str = "MODIFIED") -> dict[str, Any]:
        """Store ``obj`` as the API server would (a new resourceVersion) and send its watch event."""
        stored = copy.deepcopy(obj)
        meta = stored["metadata"]
        meta["resourceVersion"] = str(next(self._versions))
        meta.setdefault("uid", f"uid-{meta['name']}")
        meta.setdefault("generation", 1)
        self.objects[stored["kind"], meta.get("namespace", ""), meta["name"]] = stored
        self.feed(stored["kind"], event, stored)
        return copy.deepcopy(stored)

    def _current(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        found = self.objects.get((kind, namespace, name))
        if found is None:
            raise ApiError(f"{kind} {name} not found", status=404)
        return found

    def _precondition(self, current: dict[str, Any], rv: Any) -> None:
        if rv is not None and rv != current["metadata"]["resourceVersion"]:
            raise ApiError("the object has been modified", status=409)

    # -- what the reconciler calls ---------------------------------------------------------------
    def request_json(self, method: str, path: str, body: Any = None, **_: Any) -> Any:
        parts = path.strip("/").split("/")
        plural, name = parts[-2], parts[-1]
        kind = _kind_of(plural)
        namespace = parts[parts.index("namespaces") + 1] if "namespaces" in parts else ""
        if method == "GET":
            self._fault("get", kind)
            return copy.deepcopy(self._current(kind, namespace, name))
        assert method == "PUT", (method, path)
        self._fault("update", kind)
        with self._lock:
            current = self._current(kind, namespace, name)
            self._precondition(current, body["metadata"].get("resourceVersion"))
            new = copy.deepcopy(body)
            new["metadata"] = {**body["metadata"], "uid": current["metadata"]["uid"]}
            if "status" in current and kind == "Workload":
                new["status"] = current["status"]
            return self.put_object(new)

    def create(self, obj: dict[str, Any], *, namespace: str | None = None) -> dict[str, Any]:
        if obj["kind"] == "Event":
            self.events.append((obj["reason"], obj["message"]))
            return obj
        self._fault("create", obj["kind"])
        meta = obj["metadata"]
        if (obj["kind"], meta.get("namespace", ""), meta["name"]) in self.objects:
            raise ApiError("already exists", status=409)
        return self.put_object(obj, "ADDED")

    def patch(
        self, rtype: Any, name: str, body: Any, *, namespace: str | None = None,
        subresource: str | None = None, patch_type: str = "merge", **_: Any,
    ) -> dict[str, Any]:  # fmt: skip
        kind = _kind_of(rtype)
        if kind in ("events", "Event"):
            return {}
        self._fault("patch", kind if subresource is None else f"{kind}/{subresource}")
        with self._lock:
            current = copy.deepcopy(self._current(kind, namespace or "", name))
            if patch_type == "json":
                for op in body:
                    if op["op"] == "test" and op["path"] == "/metadata/resourceVersion":
                        self._precondition(current, op["value"])
                    elif op["op"] == "test":  # as the API server: a failed test is a 422
                        assert op["path"] == "/metadata/finalizers"
                        if (current["metadata"].get("finalizers") or []) != op["value"]:
                            raise ApiError("testing value /metadata/finalizers failed", status=422)
                    else:
                        assert op == {**op, "op": "replace", "path": "/metadata/finalizers"}
                        current["metadata"]["finalizers"] = op["value"]
            else:
                self._precondition(current, (body.get("metadata") or {}).get("resourceVersion"))
                status = current.setdefault("status", {})
                for key, value in (body.get("status") or {}).items():
                    if value is None:
                        status.pop(key, None)
                    else:
                        status[key] = value
            if current["metadata"].get("deletionTimestamp") and not current["metadata"].get("finalizers"):
                del self.objects[kind, namespace or "", name]
                self.feed(kind, "DELETED", current)
                return current
            return self.put_object(current)

    def delete(self, rtype: ResourceType, name: str, *, namespace: str | None = None, **_: Any) -> None:
        self._fault("delete", rtype.kind)
        with self._lock:
            current = self._current(rtype.kind, namespace or "", name)
            if current["metadata"].get("finalizers"):
                going = copy.deepcopy(current)
                going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
                self.put_object(going)
                return
            del self.objects[rtype.kind, namespace or "", name]
            self.feed(rtype.kind, "DELETED", current)

    def list(self, rtype: Any, *, namespace: str | None = None, **_: Any) -> ObjectList:
        kind = _kind_of(rtype)
        self._fault("list", kind)
        items = [
            copy.deepcopy(o)
            for (k, ns, _n), o in self.objects.items()
            if k == kind and (namespace is None or ns == namespace)
        ]
        return ObjectList(items, "1")

    def get(
        self, rtype: ResourceType, name: str, *, namespace: str | None = None, **_: Any
    ) -> dict[str, Any]:
        self._fault("get", rtype.kind)
        return copy.deepcopy(self._current(rtype.kind, namespace or "", name))

    # -- reads of the test ------------------------------------------------------------------------
    def writes(self) -> list[tuple[str, str]]:
        return [(verb, kind) for verb, kind, _ in self.calls if verb not in ("get", "list")]

    def workloads(self) -> list[dict[str, Any]]:
        return [o for (k, _, _), o in self.objects.items() if k == "Workload"]

    def job(self, name: str = "train") -> dict[str, Any]:
        return self.objects["PyTorchJob", NS, name]


class _Informer:
    def objects(self) -> list[dict[str, Any]]:
        return []


class _Definitions:
    def __init__(self, store: DefinitionStore) -> None:
        self.store = store
        self.informer = _Informer()
        self.synced = threading.Event()
        self.synced.set()

    def subscribe(self, _callback: Callable[[DefinitionStore], None]) -> None:
        pass


def _pytorchjob(name: str = "train", *, replicas: int = 2, gpus: int = 4, **labels: str) -> dict[str, Any]:
    container = {
        "name": "pytorch",
        "image": "trainer",
        "resources": {
            "requests": {"cpu": "1", "nvidia.com/gpu": str(gpus)},
            "limits": {"nvidia.com/gpu": str(gpus)},
        },
    }
    worker = {"replicas": replicas, "template": {"spec": {"containers": [container]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}",
                     "labels": {"kueue.x-k8s.io/queue-name": "team-queue", **labels}},
        "spec": {"pytorchReplicaSpecs": {"Worker": worker}},
    }  # fmt: skip


def _suspended(obj: dict[str, Any]) -> bool:
    return bool(obj["spec"].get("runPolicy", {}).get("suspend"))


@dataclass
class Rig:
    kueue: KueueReconciler
    api: FakeApi
    store: DefinitionStore

    def coverage(self, *, jobs: bool = True) -> None:
        types = {}
        if jobs:
            types[GroupKind("kubeflow.org", "PyTorchJob")] = CoveredType(
                JOBS, self.store.definition_for(JOBS.gvk), ()
            )
        self.kueue._coverage(Coverage(store=self.store, types=types, resources=RESOURCES))
        for informer in self.kueue.cache.informers().values():
            if not informer.synced.is_set():
                informer.replace([])

    def reconcile(self, name: str = "train") -> float | None:
        self.api.calls.clear()
        return self.kueue.reconcile(Key(JOBS.gvk, NS, name))

    def settle(self, name: str = "train", rounds: int = 8) -> None:
        """Reconcile until a round writes nothing (as the watch events would bring it back)."""
        for _ in range(rounds):
            self.reconcile(name)
            if not self.api.writes():
                return
        raise AssertionError(f"still writing after {rounds} rounds: {self.api.calls}")

    def workload(self) -> dict[str, Any]:
        (wl,) = self.api.workloads()
        return wl

    def kueue_writes(self, wl: dict[str, Any], **status: Any) -> dict[str, Any]:
        """Kueue changes the Workload's status."""
        new = copy.deepcopy(wl)
        new.setdefault("status", {}).update(status)
        return self.api.put_object(new)


def _rig() -> Rig:
    api = FakeApi()
    cache = SharedCache(api.client, start=False)
    api.cache = cache
    api.put_object(FLAVOR, "ADDED")
    store = DefinitionStore.offline(user_directory=None)
    kueue = KueueReconciler(
        api.client,
        definitions=_Definitions(store),  # type: ignore[arg-type]
        metrics=Metrics(),
        events=EventRecorder(api.client),
        namespaces=(NS,),
        cache=cache,
        tracker=None,
    )
    rig = Rig(kueue, api, store)
    rig.coverage()
    return rig


def _condition(kind: str, status: str, reason: str = "Test", message: str = "") -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message or reason,
            "lastTransitionTime": "2026-01-01T00:00:00Z"}  # fmt: skip


def _admit(rig: Rig) -> dict[str, Any]:
    wl = rig.workload()
    assignments = [
        {"name": p["name"], "count": p["count"], "flavors": {"cpu": "gpu", "nvidia.com/gpu": "gpu"}}
        for p in wl["spec"]["podSets"]
    ]
    return rig.kueue_writes(
        wl,
        admission={"clusterQueue": "cq", "podSetAssignments": assignments},
        conditions=[_condition("QuotaReserved", "True"), _condition("Admitted", "True")],
    )


# -- the cases -------------------------------------------------------------------------------------


def _queued(rig: Rig, name: str = "train", **kwargs: Any) -> dict[str, Any]:
    """A labelled job created running (no webhook here): stopped, then its Workload created."""
    rig.api.put_object(_pytorchjob(name, **kwargs), "ADDED")
    rig.reconcile(name)
    assert _suspended(rig.api.job(name)), "stopped before it has a Workload"
    assert rig.api.workloads() == []
    rig.reconcile(name)
    (wl,) = rig.api.workloads()
    return wl


def test_creates_the_workload_of_a_queued_job() -> None:
    rig = _rig()
    wl = _queued(rig)
    assert wl["spec"]["queueName"] == "team-queue"
    assert [(p["name"], p["count"]) for p in wl["spec"]["podSets"]] == [("worker", 2)]
    owner = wl["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("PyTorchJob", "uid-train", True)
    assert wl["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
    assert [reason for reason, _ in rig.api.events] == ["KueueStopped", "KueueWorkloadCreated"]
    rig.settle()  # nothing more to do while it waits
    assert _suspended(rig.api.job())


def test_an_unlabelled_or_owned_job_is_left_alone() -> None:
    rig = _rig()
    plain = _pytorchjob("plain")
    plain["metadata"]["labels"] = {}
    owned = _pytorchjob("owned")
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u", "controller": True}
    ]
    for obj in (plain, owned):
        rig.api.put_object(obj, "ADDED")
        assert rig.reconcile(obj["metadata"]["name"]) is None
        assert rig.api.writes() == [] and rig.api.workloads() == []


def test_a_change_while_queued_updates_the_workload_in_place() -> None:
    rig = _rig()
    wl = _queued(rig)
    job = copy.deepcopy(rig.api.job())
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 3
    rig.api.put_object(job)
    rig.reconcile()
    (updated,) = rig.api.workloads()
    assert updated["metadata"]["uid"] == wl["metadata"]["uid"], "updated, not replaced"
    assert updated["spec"]["podSets"][0]["count"] == 3
    rig.settle()


def test_admission_writes_the_flavor_and_resumes() -> None:
    rig = _rig()
    _queued(rig)
    _admit(rig)
    rig.reconcile()
    job = rig.api.job()
    assert not _suspended(job)
    template = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    assert template["spec"]["nodeSelector"] == {"pool": "a100"}
    assert GPU_TAINT in template["spec"]["tolerations"]
    assert template["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "worker"
    assert "run.ai/karta-kueue-restore" in job["metadata"]["annotations"]
    assert rig.api.events[-1][0] == "KueueStarted"
    rig.settle()  # running and admitted: nothing to do


def _running(rig: Rig) -> dict[str, Any]:
    before = copy.deepcopy(_queued(rig))
    _admit(rig)
    rig.reconcile()
    assert not _suspended(rig.api.job())
    return before


def test_eviction_stops_restores_and_releases_the_quota() -> None:
    rig = _rig()
    _running(rig)
    wl = rig.workload()
    evicted = _condition(
        "Evicted", "True", "Preempted", "Preempted to accommodate a higher priority Workload"
    )
    rig.kueue_writes(wl, conditions=[*wl["status"]["conditions"], evicted])
    rig.reconcile()
    job = rig.api.job()
    assert _suspended(job)
    template = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    assert "nodeSelector" not in template["spec"] and "tolerations" not in template["spec"]
    assert "run.ai/karta-kueue-restore" not in (job["metadata"].get("annotations") or {})
    # a pod still running keeps the quota until it is gone
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "train-worker-0", "namespace": NS, "uid": "pod-uid",
                        "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                                             "name": "train", "uid": "uid-train", "controller": True}]},
           "status": {"phase": "Running"}}  # fmt: skip
    rig.api.put_object(pod, "ADDED")
    assert rig.reconcile() == pytest.approx(2.0)
    assert rig.workload()["status"].get("admission") is not None
    del rig.api.objects["Pod", NS, "train-worker-0"]
    rig.reconcile()
    status = rig.workload()["status"]
    assert "admission" not in status
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["QuotaReserved"]["status"] == "False"
    assert conditions["Requeued"]["status"] == "True" and conditions["Requeued"]["reason"] == "Preempted"
    rig.settle()
    assert _suspended(rig.api.job())


def test_a_finished_job_finishes_its_workload_and_releases_the_finalizer() -> None:
    rig = _rig()
    _running(rig)
    job = copy.deepcopy(rig.api.job())
    job["status"] = {"conditions": [{"type": "Succeeded", "status": "True", "reason": "JobSucceeded",
                                     "message": "done"}]}  # fmt: skip
    rig.api.put_object(job)
    rig.reconcile()
    finished = {c["type"]: c for c in rig.workload()["status"]["conditions"]}["Finished"]
    assert finished["status"] == "True"
    rig.reconcile()
    assert rig.workload()["metadata"]["finalizers"] == []
    rig.settle()


def test_a_workload_deleted_by_hand_stops_the_job_and_a_new_one_is_made() -> None:
    rig = _rig()
    _running(rig)
    old = rig.workload()
    rig.api.delete(WORKLOADS, old["metadata"]["name"], namespace=NS)  # held by the finalizer
    rig.reconcile()
    assert _suspended(rig.api.job()), "stopped first"
    rig.reconcile()
    assert rig.api.workloads() == [], "then the finalizer dropped: gone"
    rig.reconcile()
    (new,) = rig.api.workloads()
    assert "deletionTimestamp" not in new["metadata"]
    assert _suspended(rig.api.job())


def test_the_job_deleted_drops_the_finalizers() -> None:
    rig = _rig()
    _queued(rig)
    gone = rig.api.objects.pop(("PyTorchJob", NS, "train"))
    rig.api.feed("PyTorchJob", "DELETED", gone)
    rig.reconcile()
    assert rig.workload()["metadata"]["finalizers"] == []  # the garbage collector deletes it


def test_a_removed_definition_leaves_everything_as_it_is() -> None:
    rig = _rig()
    _running(rig)
    kept = copy.deepcopy(rig.api.objects)
    rig.coverage(jobs=False)
    assert GroupKind("kubeflow.org", "PyTorchJob") not in rig.kueue.watched_types()
    assert rig.reconcile() is None
    assert rig.api.writes() == []
    assert rig.api.objects == kept


def test_a_conflict_is_retried_and_ends_consistent() -> None:
    """409 on the job's update: the reconcile fails (the work queue retries it with back-off) and
    the next round, with the cache's fresh object, does the work once."""
    rig = _rig()
    _queued(rig)
    _admit(rig)
    rig.api.faults["update", "PyTorchJob"] = [ApiError("the object has been modified", status=409)]
    with pytest.raises(ApiError):
        rig.reconcile()
    assert _suspended(rig.api.job())
    rig.reconcile()
    assert not _suspended(rig.api.job())
    assert len(rig.api.workloads()) == 1


def test_a_stale_cache_is_refused_by_the_resource_version() -> None:
    """The job changed on the server after the cache's copy: the PUT's precondition fails (409),
    nothing is overwritten."""
    rig = _rig()
    _queued(rig)
    _admit(rig)
    rig.api.objects["PyTorchJob", NS, "train"]["metadata"]["resourceVersion"] = "999999"
    with pytest.raises(ApiError) as raised:
        rig.reconcile()
    assert raised.value.status == 409
    assert _suspended(rig.api.job())


# -- refusals (issue 25, the adversarial pass) -----------------------------------------------------


def test_without_rights_on_workloads_it_is_reported_once_and_stays_suspended() -> None:
    rig = _rig()
    forbidden = ApiError(
        'workloads.kueue.x-k8s.io is forbidden: User "system:serviceaccount:karta:karta" cannot create '
        'resource "workloads" in API group "kueue.x-k8s.io" in the namespace "team"',
        status=403,
        reason="Forbidden",
    )
    rig.api.always["create", "Workload"] = forbidden
    rig.api.put_object(_pytorchjob(), "ADDED")
    rig.reconcile()  # stopped: updating the job is allowed
    for _ in range(5):
        assert rig.reconcile() == pytest.approx(60.0), "looked at again later, not raised"
    assert _suspended(rig.api.job()) and rig.api.workloads() == []
    refused = [message for reason, message in rig.api.events if reason == "KueueForbidden"]
    assert len(refused) == 1 and "cannot create resource" in refused[0] and "HTTP 403" in refused[0]
    # the rights granted: the next look creates the Workload; a later refusal is reported again
    del rig.api.always["create", "Workload"]
    assert rig.reconcile() is None
    assert len(rig.api.workloads()) == 1


def test_without_rights_on_the_job_it_is_reported_once() -> None:
    rig = _rig()
    rig.api.always["update", "PyTorchJob"] = ApiError("pytorchjobs is forbidden", status=403)
    rig.api.put_object(_pytorchjob(), "ADDED")
    for _ in range(3):
        assert rig.reconcile() == pytest.approx(60.0)
    assert [reason for reason, _ in rig.api.events] == ["KueueForbidden"]
    assert rig.api.workloads() == []  # never queued while it could not be stopped


def test_a_workload_kueue_refuses_is_reported_once_and_nothing_partial_is_left() -> None:
    """Kueue v0.17.0's Workload allows 8 PodSets (workload_types.go, MaxItems=8): the API server
    answers 422 for more; reported on the job, not retried until it changes."""
    rig = _rig()
    rig.api.always["create", "Workload"] = ApiError(
        'Workload.kueue.x-k8s.io "pytorchjob-train-1a2b3" is invalid: spec.podSets: Too many: 9: must '
        "have at most 8 items",
        status=422,
        reason="Invalid",
    )
    rig.api.put_object(_pytorchjob(), "ADDED")
    rig.reconcile()
    for _ in range(3):
        assert rig.reconcile() is None
    assert [reason for reason, _ in rig.api.events] == ["KueueStopped", "KueueWorkloadRejected"]
    assert "must have at most 8 items" in rig.api.events[-1][1]
    assert rig.api.workloads() == [] and _suspended(rig.api.job())


def test_ten_thousand_replicas_are_one_pod_set_of_ten_thousand() -> None:
    rig = _rig()
    wl = _queued(rig, replicas=10_000)
    assert [(p["name"], p["count"]) for p in wl["spec"]["podSets"]] == [("worker", 10_000)]
    _admit(rig)
    rig.reconcile()
    assert not _suspended(rig.api.job())


def test_a_stale_workload_cache_after_a_relist_makes_no_second_workload() -> None:
    """The Workload watch expired (410) and the relist has not seen the Workload created just
    before: the create answers 409 AlreadyExists (Kueue's name is the job's, deterministic), the
    reconcile is retried, and once the cache has it nothing more is written."""
    rig = _rig()
    wl = _queued(rig)
    (watch,) = rig.kueue._workloads.watches.values()  # type: ignore[union-attr]
    watch.informer.replace([])  # relisted before the Workload reached the server's cache
    with pytest.raises(ApiError) as raised:
        rig.reconcile()
    assert raised.value.status == 409
    watch.informer.replace([copy.deepcopy(wl)])  # the next list has it
    rig.settle()
    assert len(rig.api.workloads()) == 1


def _deep(depth: int) -> dict[str, Any]:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(depth):
        node["x"] = {}
        node = node["x"]
    return deep


@pytest.mark.parametrize("depth", [200, 5000])
def test_a_job_nested_beyond_any_real_object_is_reported_not_crashed(depth: int) -> None:
    """A kind whose schema preserves unknown fields can hold values nested thousands deep (the API
    server takes 10,000): beyond Python's recursion limit for the evaluation. The reconcile reports
    it once per change (Warning event), makes no Workload, and does not raise."""
    rig = _rig()
    job = _pytorchjob()
    job["spec"]["extra"] = _deep(depth)
    rig.api.objects["PyTorchJob", NS, "train"] = job
    (watch,) = rig.kueue._types[GroupKind("kubeflow.org", "PyTorchJob")].watches.values()
    watch.informer.record("ADDED", job)  # as decoded by the client (no copy: deepcopy would recurse)
    assert rig.reconcile() is None
    assert rig.api.workloads() == []
    ((reason, message),) = rig.api.events
    assert reason == "KueueWorkloadFailed" and "nested too deeply" in message


def test_a_start_the_api_server_refuses_hands_the_quota_back() -> None:
    """The admitted job cannot be written (its annotations are at the 256 KiB limit, say): the
    Workload is Finished with FailedToStart, so Kueue frees the quota; the job stays suspended."""
    rig = _rig()
    _queued(rig)
    _admit(rig)
    rig.api.always["update", "PyTorchJob"] = ApiError(
        'PyTorchJob.kubeflow.org "train" is invalid: metadata.annotations: Too long: must have at most '
        "262144 bytes",
        status=422,
    )
    assert rig.reconcile() is None
    finished = {c["type"]: c for c in rig.workload()["status"]["conditions"]}["Finished"]
    assert (finished["status"], finished["reason"]) == ("True", "FailedToStart")
    assert "262144 bytes" in finished["message"]
    assert rig.api.events[-1][0] == "KueueFailedToStart"
    assert _suspended(rig.api.job())
    rig.reconcile()  # finished: the finalizer dropped, nothing started
    assert rig.workload()["metadata"]["finalizers"] == [] and _suspended(rig.api.job())


def test_a_webhooks_denial_is_a_rejection_not_a_missing_right() -> None:
    """Admission webhooks deny with 403 (controller-runtime's Denied): a policy engine refusing the
    started job's node selector is FailedToStart (the quota handed back), not a recheck every
    minute while the quota is held."""
    rig = _rig()
    _queued(rig)
    _admit(rig)
    rig.api.always["update", "PyTorchJob"] = ApiError(
        'admission webhook "policy.example.com" denied the request: nodeSelector pool=a100 is not allowed',
        status=403,
    )
    assert rig.reconcile() is None
    finished = {c["type"]: c for c in rig.workload()["status"]["conditions"]}["Finished"]
    assert finished["reason"] == "FailedToStart" and "not allowed" in finished["message"]
    assert "KueueForbidden" not in [reason for reason, _ in rig.api.events]


def test_the_finalizer_is_dropped_from_a_workload_changed_since_the_cache_read_it() -> None:
    """The finalizer patch tests the finalizers, not the resourceVersion: a Workload being deleted
    changes all the time (bench/kueue.py saw a retried reconcile per handover). Another finalizer
    added meanwhile is kept: the Workload is read again and the patch made afresh."""
    rig = _rig()
    wl = _queued(rig)
    assert rig.kueue._workloads is not None
    cached = copy.deepcopy(rig.workload())
    changed = copy.deepcopy(cached)
    changed["metadata"]["labels"] = {"touched": "yes"}  # a new resourceVersion
    rig.api.put_object(changed)
    rig.kueue._drop_finalizer(rig.kueue._workloads, cached)
    assert rig.workload()["metadata"]["finalizers"] == []

    other = copy.deepcopy(rig.workload())
    other["metadata"]["finalizers"] = ["kueue.x-k8s.io/resource-in-use"]
    stale = rig.api.put_object(other)
    other = copy.deepcopy(stale)
    other["metadata"]["finalizers"] = ["kueue.x-k8s.io/resource-in-use", "example.com/keep"]
    rig.api.put_object(other)
    rig.kueue._drop_finalizer(rig.kueue._workloads, stale)  # read the finalizers before the second
    assert rig.workload()["metadata"]["finalizers"] == ["example.com/keep"]
    assert wl["metadata"]["name"] == rig.workload()["metadata"]["name"]
