"""karta.kube.workloads without a cluster: covered types at their most stable served version, and
which workloads are top-level by their controller reference alone."""

from __future__ import annotations

from pathlib import Path
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
