"""Shared fixtures of the extraction tests: conformance workloads C1 and C2 and a definition builder."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from karta.jq import Evaluator
from karta.model.types import Karta


@pytest.fixture(scope="session")
def evaluator() -> Evaluator:
    return Evaluator(trusted=True)


def make_karta(root: dict[str, Any], *children: dict[str, Any]) -> Karta:
    """A Karta from camelCase component dicts (root gets a kind when it has none)."""
    root = {"kind": {"group": "example.dev", "version": "v1", "kind": "Thing"}, **root}
    return Karta.model_validate(
        {
            "metadata": {"name": "test"},
            "spec": {"structureDefinition": {"rootComponent": root, "childComponents": list(children)}},
        }
    )


C1_WORKLOAD: dict[str, Any] = {
    "apiVersion": "example.dev/v1",
    "kind": "JobGroup",
    "metadata": {"name": "jg", "namespace": "default", "uid": "u-1"},
    "spec": {
        "replicatedJobs": [
            {
                "name": "indexer",
                "replicas": 2,
                "metadata": {"labels": {"role": "indexer", "job-name": "indexer"}},
                "spec": {"containers": [{"name": "indexer", "image": "busybox"}]},
            },
            {
                "name": "processor",
                "replicas": 3,
                "metadata": {"labels": {"role": "processor"}},
                "spec": {"containers": [{"name": "processor", "image": "busybox"}]},
            },
        ]
    },
    "status": {"conditions": [{"type": "Running", "status": "True"}]},
}

C1_ROOT: dict[str, Any] = {
    "name": "jobgroup",
    "kind": {"group": "example.dev", "version": "v1", "kind": "JobGroup"},
    "statusDefinition": {
        "conditionsDefinition": {"path": ".status.conditions"},
        "statusMappings": {"running": [{"byConditions": [{"type": "Running", "status": "True"}]}]},
    },
}
C1_JOB: dict[str, Any] = {
    "name": "job",
    "ownerRef": "jobgroup",
    "instanceIdPath": ".spec.replicatedJobs[].name",
    "specDefinition": {
        "podSpecPath": ".spec.replicatedJobs[].spec",
        "metadataPath": ".spec.replicatedJobs[].metadata",
    },
    "scaleDefinition": {"replicasPath": ".spec.replicatedJobs[].replicas"},
    "podSelector": {"componentInstanceSelector": {"idPath": '.metadata.labels["example.dev/job-name"]'}},
}

C2_WORKLOAD: dict[str, Any] = {
    "apiVersion": "example.dev/v1",
    "kind": "Reactor",
    "metadata": {"name": "r1", "namespace": "default"},
    "spec": {
        "services": {
            "api": {
                "labels": {"service-name": "api", "tier": "frontend"},
                "annotations": {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"},
                "containers": [
                    {
                        "name": "api-server",
                        "ports": [{"containerPort": 8080}],
                        "env": [{"name": "PORT", "value": "8080"}],
                    }
                ],
                "mainContainer": {"name": "api-server-main"},
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                "replicas": 3,
                "minReplicas": 2,
                "maxReplicas": 10,
            },
            "worker": {
                "annotations": {"prometheus.io/scrape": "true"},
                "containers": [{"name": "worker"}],
                "resources": {"limits": {"nvidia.com/gpu": 1}},
                "replicas": 5,
            },
            "cache": {"containers": [{"name": "redis", "image": "redis"}], "replicas": 1},
        }
    },
    "status": {"phase": "running"},
}

C2_ROOT: dict[str, Any] = {
    "name": "reactor",
    "kind": {"group": "example.dev", "version": "v1", "kind": "Reactor"},
    "instanceIdPath": ".spec.services | to_entries[] | .key",
    "specDefinition": {
        "fragmentedPodSpecDefinition": {
            "labelsPath": ".spec.services | .[] | .labels",
            "annotationsPath": ".spec.services | .[] | .annotations",
            "containersPath": ".spec.services | .[] | .containers",
            "containerPath": ".spec.services | .[] | .mainContainer",
            "resourcesPath": ".spec.services | .[] | .resources",
        }
    },
    "scaleDefinition": {
        "replicasPath": ".spec.services | .[] | .replicas",
        "minReplicasPath": ".spec.services | .[] | .minReplicas",
        "maxReplicasPath": ".spec.services | .[] | .maxReplicas",
    },
    "podSelector": {"componentInstanceSelector": {"idPath": '.metadata.labels["service-name"]'}},
}


@pytest.fixture(scope="session")
def build() -> Callable[..., Karta]:
    """``build(root, *children)`` -> Karta (see :func:`make_karta`)."""
    return make_karta


@pytest.fixture
def c1_karta() -> Karta:
    return make_karta(C1_ROOT, C1_JOB)


@pytest.fixture
def c2_karta() -> Karta:
    return make_karta(C2_ROOT)


@pytest.fixture
def c1() -> dict[str, Any]:
    return copy.deepcopy(C1_WORKLOAD)


@pytest.fixture
def c2() -> dict[str, Any]:
    return copy.deepcopy(C2_WORKLOAD)
