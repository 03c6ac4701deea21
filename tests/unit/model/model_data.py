"""Wire-form definitions used by the karta.model tests (fresh copies on every call)."""

from __future__ import annotations

import copy
from typing import Any

_MINIMAL: dict[str, Any] = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "example-org-batchrun-v1"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "batchrun",
                "kind": {"group": "example.org", "version": "v1", "kind": "BatchRun"},
                "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                "scaleDefinition": {"replicasPath": ".spec.workers // 1"},
                "statusDefinition": {
                    "phaseDefinition": {"path": ".status.phase"},
                    "statusMappings": {
                        "initializing": [{"byPhase": "Pending"}],
                        "running": [{"byPhase": "Running"}],
                        "completed": [{"byPhase": "Succeeded"}],
                        "failed": [{"byPhase": "Failed"}],
                    },
                },
            }
        }
    },
}

_FULLER: dict[str, Any] = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "kubeflow-org-pytorchjob-v1"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "pytorchjob",
                "kind": {"group": "kubeflow.org", "version": "v1", "kind": "PyTorchJob"},
                "statusDefinition": {
                    "conditionsDefinition": {"path": ".status.conditions"},
                    "statusMappings": {
                        "initializing": [{"byConditions": [{"type": "Created", "status": "True"}]}],
                        "running": [{"byConditions": [{"type": "Running", "status": "True"}]}],
                        "completed": [{"byConditions": [{"type": "Succeeded", "status": "True"}]}],
                        "failed": [{"byConditions": [{"type": "Failed", "status": "True"}]}],
                        "suspended": [{"byConditions": [{"type": "Suspended", "status": "True"}]}],
                    },
                },
                "suspendDefinition": {
                    "suspendActions": [{"path": ".spec.runPolicy.suspend", "value": "true"}],
                    "resumeActions": [{"path": ".spec.runPolicy.suspend", "value": "false"}],
                },
            },
            "childComponents": [
                {
                    "name": "master",
                    "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "ownerRef": "pytorchjob",
                    "specDefinition": {"podTemplateSpecPath": ".spec.pytorchReplicaSpecs.Master.template"},
                    "scaleDefinition": {"replicasPath": ".spec.pytorchReplicaSpecs.Master.replicas // 1"},
                    "podSelector": {
                        "componentTypeSelector": {
                            "keyPath": '.metadata.labels["training.kubeflow.org/replica-type"]',
                            "value": "master",
                        }
                    },
                },
                {
                    "name": "worker",
                    "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "ownerRef": "pytorchjob",
                    "specDefinition": {"podTemplateSpecPath": ".spec.pytorchReplicaSpecs.Worker.template"},
                    "scaleDefinition": {
                        "replicasPath": ".spec.pytorchReplicaSpecs.Worker.replicas // 1",
                        "minReplicasPath": ".spec.elasticPolicy.minReplicas",
                        "maxReplicasPath": ".spec.elasticPolicy.maxReplicas",
                    },
                    "podSelector": {
                        "componentTypeSelector": {
                            "keyPath": '.metadata.labels["training.kubeflow.org/replica-type"]',
                            "value": "worker",
                        }
                    },
                },
            ],
        },
        "optimizationInstructions": {
            "gangScheduling": {
                "podGroup": {
                    "name": "job",
                    "subGroups": [{"componentName": "master"}, {"componentName": "worker"}],
                }
            }
        },
    },
}


def minimal() -> dict[str, Any]:
    """Section 2.4: a single pod-bearing root with phase-based status."""
    return copy.deepcopy(_MINIMAL)


def fuller() -> dict[str, Any]:
    """Section 2.5: a PyTorchJob-like root with master and worker children and a pod group."""
    return copy.deepcopy(_FULLER)


def root(data: dict[str, Any]) -> dict[str, Any]:
    component: dict[str, Any] = data["spec"]["structureDefinition"]["rootComponent"]
    return component


def children(data: dict[str, Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = data["spec"]["structureDefinition"].setdefault("childComponents", [])
    return items


def gang(data: dict[str, Any]) -> dict[str, Any]:
    spec = data["spec"]
    g: dict[str, Any] = spec.setdefault("optimizationInstructions", {}).setdefault("gangScheduling", {})
    return g
