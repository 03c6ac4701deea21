"""An in-memory stand-in for :class:`karta.kube.client.KubeClient`, just what pod binding uses:
discovery by apiVersion/kind, get, server-side apply, list and create (events), with hooks to make
a call fail or hang."""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from karta.errors import ApiError, UnknownResourceTypeError
from karta.kube.client import KubeClient, ObjectList

NAMESPACED = {
    ("batch/v1", "Job"),
    ("kubeflow.org/v1", "PyTorchJob"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "Deployment"),
    ("example.com/v1", "Trainer"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"),
    ("ray.io/v1", "RayCluster"),
    ("ray.io/v1", "RayJob"),
    ("batch/v1", "CronJob"),
    ("kubeflow.org/v1beta1", "Experiment"),
    ("kubeflow.org/v1beta1", "Trial"),
    ("sparkoperator.k8s.io/v1beta2", "ScheduledSparkApplication"),
    ("sparkoperator.k8s.io/v1beta2", "SparkApplication"),
    ("tekton.dev/v1", "PipelineRun"),
    ("tekton.dev/v1", "TaskRun"),
    ("v1", "Pod"),
    ("v1", "Event"),
    ("scheduling.k8s.io/v1beta1", "Workload"),
    ("scheduling.k8s.io/v1beta1", "PodGroup"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"),
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"),
    ("scheduling.run.ai/v2alpha2", "PodGroup"),
}


@dataclass(frozen=True)
class FakeType:
    api_version: str
    kind: str
    namespaced: bool = True

    @property
    def group_resource(self) -> str:
        return f"{self.kind.lower()}s.{self.api_version.rpartition('/')[0]}".rstrip(".")


class FakeDiscovery:
    def for_api_version(self, api_version: str, kind: str) -> FakeType:
        if (api_version, kind) not in NAMESPACED:
            raise UnknownResourceTypeError(f'the server doesn\'t have a resource type "{kind}"')
        return FakeType(api_version, kind)

    def invalidate(self) -> None:
        pass


Hook = Callable[[str, Mapping[str, Any]], None]


class FakeCluster:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self.discovery = FakeDiscovery()
        self.calls: list[tuple[str, str, str]] = []  # (verb, kind, name)
        self.cache_reads = 0  # reads answered from the API server's watch cache (resourceVersion=0)
        self.applied: list[tuple[dict[str, Any], str]] = []
        self.on_get: Callable[[str, str], None] | None = None
        self.on_apply: Callable[[Mapping[str, Any]], None] | None = None

    @property
    def client(self) -> KubeClient:
        return cast(KubeClient, self)

    def fork(self) -> KubeClient:
        return self.client

    def add(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("namespace", "team")
        self.objects[(obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"])] = obj
        return obj

    def get(
        self,
        what: Any,
        name: str,
        *,
        namespace: str | None = None,
        metadata_only: bool = False,
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        self.calls.append(("get", what.kind, name))
        if resource_version is not None:
            self.cache_reads += 1
        if self.on_get is not None:
            self.on_get(what.kind, name)
        obj = self.objects.get((what.api_version, what.kind, namespace or "team", name))
        if obj is None:
            raise ApiError(f'{what.kind} "{name}" not found', status=404, reason="NotFound")
        return copy.deepcopy(obj)

    def apply(self, obj: Mapping[str, Any], *, field_manager: str = "karta", **_: Any) -> dict[str, Any]:
        self.calls.append(("apply", str(obj["kind"]), str(obj["metadata"]["name"])))
        if self.on_apply is not None:
            self.on_apply(obj)
        self.applied.append((copy.deepcopy(dict(obj)), field_manager))
        return self.add(dict(obj))

    def create(self, obj: Mapping[str, Any], *, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append(("create", str(obj["kind"]), str(obj["metadata"]["name"])))
        return self.add(dict(obj))

    def patch(self, what: Any, name: str, patch: Any, **_: Any) -> dict[str, Any]:
        self.calls.append(("patch", str(what), name))
        return {}

    def list(self, what: Any, *, namespace: str | None = None, **_: Any) -> ObjectList:
        self.calls.append(("list", str(what), namespace or ""))
        items = [
            copy.deepcopy(o)
            for (av, kind, ns, _name), o in self.objects.items()
            if (av, kind) == ("v1", "Pod") and (namespace is None or ns == namespace)
        ]
        return ObjectList(items, "1")

    def events(self, reason: str | None = None) -> list[dict[str, Any]]:
        return [
            o
            for (av, kind, _, _), o in self.objects.items()
            if kind == "Event" and reason in (None, o.get("reason"))
        ]

    def wait_events(self, reason: str, count: int = 1, timeout: float = 5.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.events(reason)) < count:
            assert time.monotonic() < deadline, f"no {reason} event"
            time.sleep(0.01)
        return self.events(reason)


def job(name: str = "train", parallelism: int = 4, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "team", **meta},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}},
        },
    }


def owned_pod(
    owner: Mapping[str, Any], *, name: str = "", labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "namespace": "team",
        "labels": dict(labels or {}),
        "ownerReferences": [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ],
    }
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = f"{owner['metadata']['name']}-"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"schedulerName": "default-scheduler", "containers": [{"name": "main", "image": "busybox"}]},
    }


def job_pod(owner: Mapping[str, Any], *, name: str = "") -> dict[str, Any]:
    return owned_pod(owner, name=name, labels={"batch.kubernetes.io/job-name": owner["metadata"]["name"]})


def review(pod: Any, *, operation: str = "CREATE", dry_run: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "uid": "0f3c9a51-1111-2222-3333-444455556666",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": "team",
        "operation": operation,
        "dryRun": dry_run,
        "object": pod,
        **extra,
    }
