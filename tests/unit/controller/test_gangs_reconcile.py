"""``GangReconciler.reconcile``, table-driven, without an API server (issue 21 item 5).

The seam is the runtime's: the reconciler runs on a :class:`~karta.kube.cache.SharedCache` built
with ``start=False`` (its informers never list or watch; the test fills them as a list would) and
a :class:`~karta.kube.tracker.Coverage` handed to it as the tracker would. Writes go to
:class:`FakeApi`, an in-memory API (server-side apply, delete, get, events) that feeds every write
back into the cache as its watch event would."""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from karta.controller.parts.gangs import GangReconciler, Key
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.scope import GangScope
from karta.definitions import DefinitionStore
from karta.errors import ApiError
from karta.kube.cache import SharedCache
from karta.kube.client import KubeClient, ObjectList
from karta.kube.resources import ResourceType
from karta.kube.tracker import Coverage
from karta.kube.workloads import CoveredType
from karta.model.gvk import GVK, GroupKind

VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
JOBS = ResourceType("batch", "v1", "Job", "jobs", verbs=VERBS)
PODS = ResourceType("", "v1", "Pod", "pods", verbs=VERBS)
EVENTS = ResourceType("", "v1", "Event", "events", verbs=VERBS)
WORKLOADS = ResourceType("scheduling.k8s.io", "v1beta1", "Workload", "workloads", verbs=VERBS)
PODGROUPS = ResourceType("scheduling.k8s.io", "v1beta1", "PodGroup", "podgroups", verbs=VERBS)
RESOURCES = (JOBS, PODS, EVENTS, WORKLOADS, PODGROUPS)
NS = "team"


class _Discovery:
    def for_api_version(self, api_version: str, kind: str) -> ResourceType:
        for r in RESOURCES:
            if r.api_version == api_version and r.kind == kind:
                return r
        raise ApiError(f"no {kind}", status=404)

    def for_gvk(self, group: str, version: str, kind: str) -> ResourceType:
        return self.for_api_version(f"{group}/{version}" if group else version, kind)

    def resources(self) -> list[ResourceType]:
        return list(RESOURCES)

    def invalidate(self) -> None:
        pass


@dataclass
class FakeApi:
    """What the reconciler, its writer and its events call; writes of group objects reach the
    cache's informers as watch events."""

    cache: SharedCache | None = None
    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    discovery: _Discovery = field(default_factory=_Discovery)
    _versions: itertools.count[int] = field(default_factory=lambda: itertools.count(100))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def client(self) -> KubeClient:
        return cast(KubeClient, self)

    def _feed(self, kind: str, event: str, obj: dict[str, Any]) -> None:
        """The watch event of a write, to every informer of the kind."""
        rtype = next(r for r in RESOURCES if r.kind == kind)
        for key, informer in (self.cache.informers() if self.cache is not None else {}).items():
            if (key.group, key.plural) == (rtype.group, rtype.plural):
                informer.record(event, copy.deepcopy(obj))

    def apply(self, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        name = str(obj["metadata"]["name"])
        self.calls.append(("apply", str(obj["kind"]), name))
        with self._lock:
            key = (str(obj["kind"]), NS, name)
            event = "MODIFIED" if key in self.objects else "ADDED"
            stored = copy.deepcopy(obj)
            stored["metadata"] = {
                **stored["metadata"],
                "namespace": NS,
                "resourceVersion": str(next(self._versions)),
                "uid": f"uid-{name}",
                "creationTimestamp": "2020-01-01T00:00:00Z",
            }
            self.objects[key] = stored
        self._feed(str(obj["kind"]), event, stored)
        return copy.deepcopy(stored)

    def delete(self, rtype: ResourceType, name: str, **_: Any) -> None:
        self.calls.append(("delete", rtype.kind, name))
        gone = self.objects.pop((rtype.kind, NS, name), None)
        if gone is None:
            raise ApiError("not found", status=404)
        self._feed(rtype.kind, "DELETED", gone)

    def get(self, rtype: ResourceType, name: str, **_: Any) -> dict[str, Any]:
        found = self.objects.get((rtype.kind, NS, name))
        if found is None:
            raise ApiError("not found", status=404)
        return copy.deepcopy(found)

    def list(self, rtype: ResourceType, **_: Any) -> ObjectList:
        return ObjectList([copy.deepcopy(o) for (k, _, _), o in self.objects.items() if k == rtype.kind], "1")

    def create(self, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.calls.append(("create", str(obj["kind"]), str(obj.get("reason") or "")))
        return obj

    def patch(self, rtype: Any, name: str, body: Any, **_: Any) -> dict[str, Any]:
        self.calls.append(("patch", str(getattr(rtype, "kind", rtype)), name))
        return {}

    def written(self) -> list[tuple[str, str, str]]:
        return [c for c in self.calls if c[0] in ("apply", "delete")]

    def events(self) -> list[str]:
        return [reason for verb, kind, reason in self.calls if verb == "create" and kind == "Event"]


class _Definitions:
    def __init__(self, store: DefinitionStore) -> None:
        self.store = store
        self.synced = threading.Event()
        self.synced.set()

    def subscribe(self, _callback: Callable[[DefinitionStore], None]) -> None:
        pass


def _job(name: str = "train", *, parallelism: int = 4, uid: str = "job-uid", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS, "uid": uid, "resourceVersion": "1"},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}},
            **spec,
        },
    }


def _ours(kind: str, name: str, *, owner_uid: str = "job-uid", **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "resourceVersion": "7",
            "creationTimestamp": "2020-01-01T00:00:00Z",
            "labels": {"app.kubernetes.io/managed-by": "karta"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "train",
                    "uid": owner_uid,
                    "controller": True,
                }
            ],
        },
        **extra,
    }


@dataclass
class Rig:
    gangs: GangReconciler
    api: FakeApi
    store: DefinitionStore

    def coverage(self, store: DefinitionStore | None = None, *, jobs: bool = True) -> None:
        store = store or self.store
        types = {}
        if jobs:
            types[GroupKind("batch", "Job")] = CoveredType(JOBS, store.definition_for(JOBS.gvk), ())
        self.gangs._coverage(Coverage(store=store, types=types, resources=RESOURCES))
        for informer in self.gangs.cache.informers().values():
            if not informer.synced.is_set():
                informer.replace([])  # listed: empty

    def job(self, obj: dict[str, Any]) -> None:
        (watch,) = self.gangs._types[GroupKind("batch", "Job")].watches.values()
        watch.informer.record("MODIFIED" if watch.get(f"{NS}/{obj['metadata']['name']}") else "ADDED", obj)

    def reconcile(self, name: str = "train") -> float | None:
        self.api.calls.clear()
        return self.gangs.reconcile(Key(GVK("batch", "v1", "Job"), NS, name))


def _rig(scope: Callable[[KubeClient], GangScope | None] = lambda _client: None) -> Rig:
    """The reconciler on the fake API (``scope``: its gang-scheduling scope, none by default)."""
    api = FakeApi()
    cache = SharedCache(api.client, start=False)
    api.cache = cache
    store = DefinitionStore.offline(user_directory=None)
    gangs = GangReconciler(
        api.client,
        definitions=_Definitions(store),  # type: ignore[arg-type]
        backend="workload-api",
        metrics=Metrics(),
        events=EventRecorder(api.client),
        namespaces=(NS,),
        cache=cache,
        tracker=None,
        scope=scope(api.client),
    )
    rig = Rig(gangs, api, store)
    rig.coverage()
    return rig


def _applied(rig: Rig) -> list[tuple[str, str]]:
    return sorted((kind, name) for verb, kind, name in rig.api.written() if verb == "apply")


def _deleted(rig: Rig) -> list[tuple[str, str]]:
    return sorted((kind, name) for verb, kind, name in rig.api.written() if verb == "delete")


def _create(rig: Rig) -> None:
    rig.job(_job())
    rig.reconcile()
    assert _applied(rig), "the group objects are applied"
    assert rig.reconcile() is None
    assert rig.api.written() == []  # the cache holds what was applied: nothing to write


def _scale(rig: Rig) -> None:
    _create(rig)
    before = copy.deepcopy(rig.api.objects)
    rig.job(_job(parallelism=6))
    rig.reconcile()
    # minCount is mutable in v1beta1 (1.37.2: "to support workload scaling"): both updated in place.
    assert _applied(rig) == [("PodGroup", "train-job"), ("Workload", "train")]
    assert _deleted(rig) == []
    assert rig.api.objects != before
    (template,) = rig.api.objects["Workload", NS, "train"]["spec"]["podGroupTemplates"]
    assert template["schedulingPolicy"]["gang"]["minCount"] == 6
    policy = rig.api.objects["PodGroup", NS, "train-job"]["spec"]["schedulingPolicy"]
    assert policy == {"gang": {"minCount": 6}}
    assert rig.api.events() == []


def _suspend(rig: Rig) -> None:
    _create(rig)
    kept = set(rig.api.objects)
    rig.job(_job(suspend=True))
    rig.reconcile()
    assert _deleted(rig) == []  # suspended workloads keep their group objects
    assert set(rig.api.objects) == kept


def _stale_object(rig: Rig) -> None:
    stale = _ours("PodGroup", "train-old")
    rig.api.objects["PodGroup", NS, "train-old"] = stale
    (watch,) = rig.gangs._groups[PODGROUPS.gvk].watches.values()
    watch.informer.record("ADDED", stale)
    rig.job(_job())
    rig.reconcile()
    assert _deleted(rig) == [("PodGroup", "train-old")]
    assert ("PodGroup", NS, "train-old") not in rig.api.objects


def _rename(rig: Rig) -> None:
    # The workload's objects are named after it: the same Job under another name (another UID) gets
    # objects of its own, and the old Job's objects are not touched (garbage collection's).
    _create(rig)
    old = set(rig.api.objects)
    rig.job(_job("renamed", uid="renamed-uid"))
    rig.reconcile("renamed")
    assert _applied(rig) and all("renamed" in name for _, name in _applied(rig))
    assert _deleted(rig) == []
    assert old <= set(rig.api.objects)


def _deleted_workload(rig: Rig) -> None:
    assert rig.reconcile("gone") is None
    assert rig.api.written() == []


def _render_error(rig: Rig) -> None:
    rig.job(_job(parallelism="many"))  # type: ignore[arg-type]
    assert rig.reconcile() is None  # not retried: the workload must change first
    assert rig.api.written() == []
    assert rig.api.events() == ["GangRenderFailed"]


def _diverged_workload(rig: Rig) -> str:
    """The live Workload holds a template set ours cannot be applied over (an immutable field)."""
    _create(rig)
    (name,) = [n for (k, _, n) in rig.api.objects if k == "Workload"]
    live = rig.api.objects["Workload", NS, name]
    live["spec"]["podGroupTemplates"] = [*live["spec"]["podGroupTemplates"], {"name": "extra"}]
    live["metadata"]["resourceVersion"] = "999"
    (watch,) = rig.gangs._groups[WORKLOADS.gvk].watches.values()
    watch.informer.record("MODIFIED", copy.deepcopy(live))
    return name


def _pod(name: str, *, node: str | None) -> dict[str, Any]:
    """A pod of the Job (its controller reference), bound to ``node`` or pending."""
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "job-uid", "controller": True}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "ownerReferences": [owner]},
        "spec": {"schedulingGroup": {"podGroupName": "train-job"}, **({"nodeName": node} if node else {})},
    }


def _immutable_change(rig: Rig) -> None:
    # None of the gang's pods is bound: the Workload is replaced (deleted, created).
    name = _diverged_workload(rig)
    rig.api.objects["Pod", NS, "train-0"] = _pod("train-0", node=None)
    rig.job(_job(parallelism=6))
    rig.reconcile()
    assert _deleted(rig) == [("Workload", name)]
    assert ("Workload", name) in _applied(rig)
    assert [t["name"] for t in rig.api.objects["Workload", NS, name]["spec"]["podGroupTemplates"]] == ["job"]
    assert rig.api.events() == ["GangObjectReplaced"]


def _immutable_change_bound(rig: Rig) -> None:
    # A pod of the gang is bound: kept as it is and reported, never forced.
    name = _diverged_workload(rig)
    rig.api.objects["Pod", NS, "train-0"] = _pod("train-0", node="node-a")
    rig.job(_job(parallelism=6))
    rig.reconcile()
    assert ("Workload", name) not in _applied(rig)
    assert _deleted(rig) == []
    assert rig.api.events() == ["GangImmutableChange"]


def _deleted_definition(rig: Rig) -> None:
    _create(rig)
    kept = copy.deepcopy(rig.api.objects)
    rig.coverage(jobs=False)  # no usable definition covers Jobs any more
    assert GroupKind("batch", "Job") not in rig.gangs.watched_types()
    assert rig.reconcile() is None
    assert rig.api.written() == []
    assert rig.api.objects == kept  # left as they are


CASES: dict[str, Callable[[Rig], None]] = {
    "create": _create,
    "scale": _scale,
    "suspend": _suspend,
    "rename": _rename,
    "stale object": _stale_object,
    "render error": _render_error,
    "immutable change": _immutable_change,
    "immutable change, a pod bound": _immutable_change_bound,
    "deleted definition": _deleted_definition,
    "deleted workload": _deleted_workload,
}


@pytest.mark.parametrize("case", CASES)
def test_reconcile(case: str) -> None:
    CASES[case](_rig())
