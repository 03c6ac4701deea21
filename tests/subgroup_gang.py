"""A gang with sub-groups and nothing bound (issue 21): the PyTorchJob definition of
``examples/definitions`` (one gang, sub-groups master and worker, so the gang-level minMember is 0)
on a job of 1 master and 11 workers whose 12 pods are all Pending, none bound to a Node. Every
consumer of the gang state must say "0/12 bound, min 12 not met"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from karta.definitions import DefinitionStore, StoredDefinition
from karta.model import GVK

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
UID = "uid-train-12"
NOT_MET = "0/12 bound, min 12 not met"


def definition() -> StoredDefinition:
    """The example PyTorchJob definition (sub-groups master and worker), not the catalog's."""
    store = DefinitionStore.offline(user_directory=EXAMPLES / "definitions")
    chosen = store.definition_for(GVK("kubeflow.org", "v1", "PyTorchJob"))
    assert chosen.origin == "user"
    gang = chosen.karta.gang
    assert gang is not None and gang.pod_group is not None and len(gang.pod_group.sub_groups) == 2
    return chosen


def job(workers: int = 11) -> dict[str, Any]:
    def replicas(count: int) -> dict[str, Any]:
        container = {"name": "pytorch", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}
        return {"replicas": count, "template": {"spec": {"containers": [container]}}}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {
            "name": "train-12",
            "namespace": "ml-team",
            "uid": UID,
            "resourceVersion": "1",
            "creationTimestamp": "2026-01-02T03:04:05Z",
        },
        "spec": {"pytorchReplicaSpecs": {"Master": replicas(1), "Worker": replicas(workers)}},
        "status": {"conditions": [{"type": "Created", "status": "True"}]},
    }


def pods(workers: int = 11, *, bound: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The job's pods, Pending and unschedulable except those named in ``bound`` (on node n1)."""
    out = []
    for role, count in (("master", 1), ("worker", workers)):
        for i in range(count):
            name = f"train-12-{role}-{i}"
            spec: dict[str, Any] = {
                "containers": [{"name": "pytorch", "resources": {"limits": {"nvidia.com/gpu": 1}}}]
            }
            status: dict[str, Any] = {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
            }
            if name in bound:
                spec["nodeName"] = "n1"
                status = {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": name,
                        "namespace": "ml-team",
                        "uid": f"uid-{name}",
                        "resourceVersion": "2" if name in bound else "1",  # a binding writes the pod
                        "labels": {
                            "training.kubeflow.org/job-name": "train-12",
                            "training.kubeflow.org/replica-type": role,
                            "training.kubeflow.org/replica-index": str(i),
                        },
                        "ownerReferences": [
                            {
                                "apiVersion": "kubeflow.org/v1",
                                "kind": "PyTorchJob",
                                "name": "train-12",
                                "uid": UID,
                                "controller": True,
                            }
                        ],
                    },
                    "spec": spec,
                    "status": status,
                }
            )
    return out
