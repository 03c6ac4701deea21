"""karta.kube.workloads without a cluster: covered types at their most stable served version,
which workloads are top-level by their controller reference alone, what a failed read says, and
the objects a workload owns through the kinds its definition names (owned_workloads)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from karta.definitions import DefinitionStore
from karta.kube import ResourceType, TopLevel, covered_types
from karta.model.gvk import GroupKind


def _owned_by(api_version: str, kind: str) -> dict[str, Any]:
    ref = {"apiVersion": api_version, "kind": kind, "name": "o", "uid": "u", "controller": True}
    return {"metadata": {"name": "x", "ownerReferences": [ref]}}


def test_top_level_by_reference() -> None:
    top = TopLevel(client=None, covered=[GroupKind("jobset.x-k8s.io", "JobSet")])  # type: ignore[arg-type]
    assert top.by_reference({"metadata": {"name": "bare"}}) is True
    assert top.by_reference(_owned_by("jobset.x-k8s.io/v1alpha2", "JobSet")) is False
    assert top.by_reference(_owned_by("apps/v1", "ReplicaSet")) is None  # only the chain can tell
    not_controller = {
        "metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "controller": False}]}
    }
    assert top.by_reference(not_controller) is True


class _Discovery:
    def __init__(self, served: list[ResourceType]) -> None:
        self.served = served

    def resources(self) -> list[ResourceType]:
        return self.served

    def find(self, group: str, version: str, kind: str) -> ResourceType | None:
        return next((r for r in self.served if r.gvk == (group, version, kind)), None)


class _Client:
    def __init__(self, served: list[ResourceType]) -> None:
        self.discovery = _Discovery(served)


def test_covered_types_once_at_the_most_stable_listable_version() -> None:
    store = DefinitionStore.offline(user_directory=Path("/nonexistent"))
    served = [
        ResourceType("kubeflow.org", "v1beta1", "Notebook", "notebooks", verbs=("list",)),
        ResourceType("kubeflow.org", "v1", "Notebook", "notebooks", verbs=("list",)),
        ResourceType("batch", "v1", "Job", "jobs", verbs=("get",)),  # not listable: left out
        ResourceType("", "v1", "ConfigMap", "configmaps", verbs=("list",)),  # no definition
    ]
    covered, warnings = covered_types(_Client(served), store)  # type: ignore[arg-type]
    assert [(c.resource.gvk, c.definition.name) for c in covered] == [
        (("kubeflow.org", "v1", "Notebook"), "kubeflow-org-notebook-v1")
    ]
    assert warnings == []


def test_read_failures_name_the_verb_the_resource_and_why() -> None:
    from karta.errors import ApiError, ClusterUnreachableError, UnknownResourceTypeError
    from karta.kube import UnreadOwners, WorkloadPods
    from karta.kube.owners import read_failure

    forbidden = read_failure(
        ApiError('replicasets.apps "web-1" is forbidden', status=403, reason="Forbidden"),
        resource="replicasets.apps",
        namespace="ml",
        verb="get",
    )
    assert (forbidden.what, forbidden.reason, forbidden.missing) == (
        "get replicasets.apps in namespace ml",
        "forbidden",
        False,
    )
    gone = read_failure(ApiError("not found", status=404), resource="jobs.batch", namespace="ml", verb="get")
    assert gone.reason == "not found" and gone.missing
    unserved = read_failure(UnknownResourceTypeError("no"), resource="Widget.x.io", namespace="", verb="get")
    assert unserved.missing and unserved.what == "get Widget.x.io"
    down = read_failure(
        ClusterUnreachableError("connection refused"), resource="pods", namespace="ml", verb="list"
    )
    assert down.reason == "connection refused" and not down.missing

    found = WorkloadPods("Deployment/web", [], unread=(UnreadOwners(forbidden, ("web-1-a", "web-1-b")),))
    assert not found.complete
    assert found.warnings == [
        "cannot get replicasets.apps in namespace ml (forbidden): 2 pods owned through them are not shown, "
        "and the ready counts of Deployment/web are unknown"
    ]
    refused = WorkloadPods(
        "Job/train",
        [],
        list_failure=read_failure(
            ApiError("pods is forbidden", status=403), resource="pods", namespace="ml", verb="list"
        ),
    )
    assert refused.warnings == [
        "cannot list pods in namespace ml (forbidden): Job/train is shown without pods "
        "and its ready counts are unknown"
    ]
    assert WorkloadPods("Job/train", []).complete


class _Listing(_Client):
    """Lists from ``objects`` by (group, kind); a kind in ``refused`` answers 403; ``lists`` counts."""

    def __init__(self, served: list[ResourceType], objects: list[dict[str, Any]], refused: set[str]) -> None:
        super().__init__(served)
        self.objects = objects
        self.refused = refused
        self.lists: list[str] = []

    def list(self, rtype: ResourceType, **_kw: Any) -> Any:
        from karta.errors import ApiError

        self.lists.append(rtype.kind)
        if rtype.kind in self.refused:
            raise ApiError("forbidden", status=403, reason="Forbidden")
        return SimpleNamespace(items=[o for o in self.objects if o["kind"] == rtype.kind])


def _object(kind: str, name: str, owner: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    if owner is not None:
        ref = {"kind": owner["kind"], "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
        meta["ownerReferences"] = [{**ref, "apiVersion": "example.com/v1", "controller": True}]
    return {"apiVersion": "example.com/v1", "kind": kind, "metadata": meta}


def test_owned_workloads_level_by_level() -> None:
    """Each kind is listed once (the most stable served version), the objects a listed owner
    controls make the next level, a kind nobody names for that owner is not taken, a refused list
    is a warning and an unserved kind is skipped; depth and count are bounded."""
    from karta.kube import owned_workloads

    served = [
        ResourceType("example.com", "v1beta1", "Run", "runs", verbs=("list",)),
        ResourceType("example.com", "v1", "Run", "runs", verbs=("list",)),
        ResourceType("example.com", "v1", "Step", "steps", verbs=("list",)),
        ResourceType("example.com", "v1", "Secret", "secrets", verbs=("list",)),
    ]
    root = _object("Pipeline", "p")
    run = _object("Run", "p-run", root)
    step = _object("Step", "p-run-step", run)
    stray = _object("Step", "p-step", root)  # a Step the Pipeline owns directly: not one of its kinds
    other = _object("Run", "other-run", _object("Pipeline", "other"))
    kinds = {
        "Pipeline": {("example.com", "Run"), ("example.com", "Secret"), ("example.com", "Gone")},
        "Run": {("example.com", "Step")},
    }
    client = _Listing(served, [run, step, stray, other], refused={"Secret"})
    found, warnings = owned_workloads(
        client,  # type: ignore[arg-type]
        root,
        kinds_of=lambda o: kinds.get(o["kind"], set()),
    )
    assert [o["metadata"]["name"] for o in found] == ["p-run", "p-run-step"]
    assert client.lists == ["Run", "Secret", "Step"]  # Gone is not served: no request
    assert warnings == [
        "cannot list secrets.example.com in namespace ns (forbidden): the Secret objects it owns are not "
        "in its owner tree"
    ]
    shallow, _ = owned_workloads(client, root, kinds_of=lambda o: kinds.get(o["kind"], set()), max_depth=1)  # type: ignore[arg-type]
    assert [o["metadata"]["name"] for o in shallow] == ["p-run"]
    few, _ = owned_workloads(client, root, kinds_of=lambda o: kinds.get(o["kind"], set()), max_objects=1)  # type: ignore[arg-type]
    assert [o["metadata"]["name"] for o in few] == ["p-run"]
