"""The stale-status rule on every catalog kind whose operator writes ``status.observedGeneration``.

A status whose ``observedGeneration`` is below ``metadata.generation`` describes an older spec: the
matched set stays what the mappings say, the result is flagged ``stale`` and its primary status
ignores Degraded, Completed and Failed (Initializing when nothing else matched). The kinds are the
built-in Deployment, ReplicaSet and StatefulSet plus every CRD of the corpus whose schema has
``status.properties.observedGeneration`` for the catalog definition's version (read from the CRD
files here, so a new kind that writes the field fails until it has snapshots below).

The replicated kinds (README "Statuses") read Initializing instead of Running when stale.

The snapshots are written in each operator's own vocabulary (its status fields, condition types and
reasons), not from the current mapping text, so they stay valid while mappings change; each is
evaluated once as written (observedGeneration == generation) and once with the generation bumped,
by the generated status functions and by the general code alike.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from catalog_view import CORPUS, crd_files, definition_for, workload_documents
from tests.engines import GENERAL, GENERATED

from karta.catalog import catalog_definitions
from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.model import Karta
from karta.model.types import ResourceStatus
from karta.status import primary_status

CRDS = CORPUS / "crds"
BUILTIN_WITH_OBSERVED_GENERATION = frozenset(
    {
        ("apps", "v1", "Deployment"),
        ("apps", "v1", "ReplicaSet"),
        ("apps", "v1", "StatefulSet"),
        ("apps", "v1", "DaemonSet"),
    }
)
IGNORED_WHEN_STALE = {"Degraded", "Completed", "Failed"}
# The replicated kinds (README "Statuses"): Running only once the rollout settled, which includes an
# observed spec; their other statuses keep the rule above.
REPLICATED = frozenset(
    {
        "apps-deployment-v1",
        "apps-replicaset-v1",
        "apps-statefulset-v1",
        "apps-daemonset-v1",
        "grove-io-podcliqueset-v1alpha1",
        "leaderworkerset-x-k8s-io-leaderworkerset-v1",
        "milvus-io-milvus-v1beta1",
        "slinky-slurm-net-nodeset-v1beta1",
    }
)
MATCHED_ORDER = (
    "Resuming",
    "Suspending",
    "Suspended",
    "Running",
    "Failed",
    "Completed",
    "Initializing",
    "Degraded",
)
GENERATION = 4


def _cond(ctype: str, status: str, reason: str = "") -> dict[str, str]:
    out = {"type": ctype, "status": status}
    if reason:
        out["reason"] = reason
    return out


# Per definition: (snapshot label, status as the operator writes it, without observedGeneration).
SNAPSHOTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "apps-deployment-v1": [
        (
            "progress deadline exceeded",
            {
                "replicas": 3,
                "updatedReplicas": 3,
                "readyReplicas": 1,
                "availableReplicas": 1,
                "unavailableReplicas": 2,
                "conditions": [
                    _cond("Available", "False", "MinimumReplicasUnavailable"),
                    _cond("Progressing", "False", "ProgressDeadlineExceeded"),
                ],
            },
        ),
        (
            "rollout done, one pod lost",
            {
                "replicas": 3,
                "updatedReplicas": 3,
                "readyReplicas": 2,
                "availableReplicas": 2,
                "unavailableReplicas": 1,
                "conditions": [
                    _cond("Available", "True", "MinimumReplicasAvailable"),
                    _cond("Progressing", "True", "NewReplicaSetAvailable"),
                ],
            },
        ),
        (
            "all available",
            {
                "replicas": 3,
                "updatedReplicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "conditions": [
                    _cond("Available", "True", "MinimumReplicasAvailable"),
                    _cond("Progressing", "True", "NewReplicaSetAvailable"),
                ],
            },
        ),
    ],
    "apps-replicaset-v1": [
        (
            "pod creation refused",
            {
                "replicas": 1,
                "fullyLabeledReplicas": 1,
                "readyReplicas": 1,
                "availableReplicas": 1,
                "conditions": [_cond("ReplicaFailure", "True", "FailedCreate")],
            },
        ),
        (
            "one pod lost",
            {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 2},
        ),
        (
            "all available",
            {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3},
        ),
    ],
    "apps-statefulset-v1": [
        (
            "one pod lost",
            {
                "replicas": 3,
                "readyReplicas": 2,
                "availableReplicas": 2,
                "currentReplicas": 3,
                "updatedReplicas": 3,
                "currentRevision": "web-1",
                "updateRevision": "web-1",
            },
        ),
        (
            "all available",
            {
                "replicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "currentReplicas": 3,
                "updatedReplicas": 3,
                "currentRevision": "web-1",
                "updateRevision": "web-1",
            },
        ),
    ],
    # Slinky NodeSet: syncNodeSetStatus writes observedGeneration = generation with every status.
    "slinky-slurm-net-nodeset-v1beta1": [
        (
            "one pod not available",
            {"replicas": 2, "desired": 2, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 2},
        ),
        (
            "rolled out",
            {"replicas": 2, "desired": 2, "readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 2},
        ),
        (
            "a Slurm node down",
            {"replicas": 2, "desired": 2, "availableReplicas": 2, "updatedReplicas": 2, "slurmDown": 1},
        ),
    ],
    "apps-daemonset-v1": [
        (
            "one pod not available",
            {
                "currentNumberScheduled": 3,
                "numberMisscheduled": 0,
                "desiredNumberScheduled": 3,
                "numberReady": 2,
                "updatedNumberScheduled": 3,
                "numberAvailable": 2,
                "numberUnavailable": 1,
            },
        ),
        (
            "all available",
            {
                "currentNumberScheduled": 3,
                "numberMisscheduled": 0,
                "desiredNumberScheduled": 3,
                "numberReady": 3,
                "updatedNumberScheduled": 3,
                "numberAvailable": 3,
            },
        ),
    ],
    # Tekton: knative's generated reconciler writes observedGeneration after every reconcile.
    "tekton-dev-pipelinerun-v1": [
        ("a task failed, stopping", {"conditions": [_cond("Succeeded", "Unknown", "PipelineRunStopping")]}),
        ("running", {"conditions": [_cond("Succeeded", "Unknown", "Running")]}),
        ("failed", {"conditions": [_cond("Succeeded", "False", "Failed")]}),
        ("succeeded", {"conditions": [_cond("Succeeded", "True", "Succeeded")]}),
    ],
    "tekton-dev-taskrun-v1": [
        ("pod pending", {"conditions": [_cond("Succeeded", "Unknown", "Pending")], "podName": "p"}),
        ("running", {"conditions": [_cond("Succeeded", "Unknown", "Running")], "podName": "p"}),
        ("failed", {"conditions": [_cond("Succeeded", "False", "Failed")], "podName": "p"}),
        ("succeeded", {"conditions": [_cond("Succeeded", "True", "Succeeded")], "podName": "p"}),
    ],
    "grove-io-podcliqueset-v1alpha1": [
        (
            "min available breached",
            {
                "replicas": 1,
                "updatedReplicas": 1,
                "availableReplicas": 0,
                "conditions": [_cond("MinAvailableBreached", "True", "InsufficientAvailablePCSGReplicas")],
            },
        ),
        (
            "available",
            {
                "replicas": 1,
                "updatedReplicas": 1,
                "availableReplicas": 1,
                "conditions": [_cond("MinAvailableBreached", "False", "SufficientAvailablePCSGReplicas")],
            },
        ),
    ],
    # KubeVirt VM: virt-controller's vm.go writes observedGeneration (and desiredGeneration) on sync.
    "kubevirt-io-virtualmachine-v1": [
        ("image pull failing", {"printableStatus": "ImagePullBackOff", "created": True}),
        ("running", {"printableStatus": "Running", "created": True, "ready": True}),
        ("paused", {"printableStatus": "Paused", "created": True}),
    ],
    "leaderworkerset-x-k8s-io-leaderworkerset-v1": [
        (
            "a group lost its leader",
            {
                "replicas": 2,
                "readyReplicas": 1,
                "updatedReplicas": 2,
                "conditions": [
                    _cond("Available", "False", "AllGroupsReady"),
                    _cond("Progressing", "True", "GroupsProgressing"),
                ],
            },
        ),
        (
            "all groups ready",
            {
                "replicas": 2,
                "readyReplicas": 2,
                "updatedReplicas": 2,
                "conditions": [
                    _cond("Available", "True", "AllGroupsReady"),
                    _cond("Progressing", "False", "GroupsReady"),
                ],
            },
        ),
    ],
    "milvus-io-milvus-v1beta1": [
        (
            "unhealthy",
            {
                "status": "Unhealthy",
                "conditions": [_cond("MilvusReady", "False", "MilvusComponentNotHealthy")],
            },
        ),
        (
            "healthy",
            {"status": "Healthy", "conditions": [_cond("MilvusReady", "True", "MilvusClusterHealthy")]},
        ),
    ],
    "nvidia-com-dynamographdeployment-v1alpha1": [
        ("failed", {"state": "failed", "conditions": [_cond("Ready", "False", "SomeResourcesAreNotReady")]}),
        (
            "successful",
            {"state": "successful", "conditions": [_cond("Ready", "True", "AllResourcesAreReady")]},
        ),
    ],
    "nvidia-com-dynamographdeployment-v1beta1": [
        ("failed", {"state": "failed", "conditions": [_cond("Ready", "False", "SomeResourcesAreNotReady")]}),
        (
            "successful",
            {"state": "successful", "conditions": [_cond("Ready", "True", "AllResourcesAreReady")]},
        ),
    ],
    "ray-io-raycluster-v1": [
        (
            "worker pods fail to be created",
            {
                "state": "ready",
                "desiredWorkerReplicas": 2,
                "readyWorkerReplicas": 1,
                "availableWorkerReplicas": 1,
                "conditions": [
                    _cond("RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime"),
                    _cond("HeadPodReady", "True", "HeadPodRunningAndReady"),
                    _cond("RayClusterReplicaFailure", "True", "FailedCreateWorkerPod"),
                ],
            },
        ),
        (
            "ready",
            {
                "state": "ready",
                "desiredWorkerReplicas": 2,
                "readyWorkerReplicas": 2,
                "availableWorkerReplicas": 2,
                "conditions": [
                    _cond("RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime"),
                    _cond("HeadPodReady", "True", "HeadPodRunningAndReady"),
                ],
            },
        ),
    ],
    "ray-io-rayjob-v1": [
        (
            "job failed",
            {"jobDeploymentStatus": "Failed", "jobStatus": "FAILED", "reason": "AppFailed", "failed": 1},
        ),
        ("job succeeded", {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED", "succeeded": 1}),
        ("job running", {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}),
    ],
    "ray-io-rayservice-v1": [
        (
            "not ready",
            {
                "serviceStatus": "",
                "conditions": [
                    _cond("Ready", "False", "Initializing"),
                    _cond("UpgradeInProgress", "False", "NoPendingCluster"),
                ],
            },
        ),
        (
            "running",
            {
                "serviceStatus": "Running",
                "numServeEndpoints": 2,
                "conditions": [
                    _cond("Ready", "True", "NonZeroServeEndpoints"),
                    _cond("UpgradeInProgress", "False", "NoPendingCluster"),
                ],
            },
        ),
    ],
    "serving-knative-dev-service-v1": [
        (
            "revision failed",
            {
                "latestCreatedRevisionName": "svc-00002",
                "latestReadyRevisionName": "svc-00001",
                "conditions": [
                    _cond("ConfigurationsReady", "False", "RevisionFailed"),
                    _cond("Ready", "False", "RevisionFailed"),
                    _cond("RoutesReady", "True"),
                ],
            },
        ),
        (
            "ready",
            {
                "latestCreatedRevisionName": "svc-00001",
                "latestReadyRevisionName": "svc-00001",
                "conditions": [
                    _cond("ConfigurationsReady", "True"),
                    _cond("Ready", "True"),
                    _cond("RoutesReady", "True"),
                ],
            },
        ),
    ],
    "serving-kserve-io-inferenceservice-v1beta1": [
        (
            "model failed to load",
            {
                "conditions": [
                    _cond("PredictorReady", "False"),
                    _cond("Ready", "False"),
                ],
                "modelStatus": {
                    "transitionStatus": "BlockedByFailedLoad",
                    "states": {"activeModelState": "", "targetModelState": "FailedToLoad"},
                    "lastFailureInfo": {"reason": "ModelLoadFailed"},
                },
            },
        ),
        (
            "ready",
            {
                "conditions": [
                    _cond("IngressReady", "True"),
                    _cond("PredictorReady", "True"),
                    _cond("Ready", "True"),
                ],
                "modelStatus": {
                    "transitionStatus": "UpToDate",
                    "states": {"activeModelState": "Loaded", "targetModelState": "Loaded"},
                },
            },
        ),
    ],
    "serving-kserve-io-llminferenceservice-v1alpha2": [
        (
            "workloads not ready",
            {
                "conditions": [
                    _cond("WorkloadsReady", "False", "MinimumReplicasUnavailable"),
                    _cond("Ready", "False", "MinimumReplicasUnavailable"),
                ],
            },
        ),
        (
            "ready",
            {
                "conditions": [
                    _cond("WorkloadsReady", "True"),
                    _cond("RouterReady", "True"),
                    _cond("Ready", "True"),
                ],
            },
        ),
    ],
    # Seldon's duckv1.Status has observedGeneration; the operators leave it unset, so the rule only
    # applies to a status someone else wrote it into.
    "machinelearning-seldon-io-seldondeployment-v1": [
        ("creating", {"state": "Creating"}),
        (
            "failed",
            {"state": "Failed", "description": "Deployment is no longer progressing and not available."},
        ),
        ("available", {"state": "Available", "conditions": [_cond("Ready", "True")]}),
    ],
    "mlops-seldon-io-model-v1alpha1": [
        (
            "load failed",
            {"conditions": [{**_cond("ModelReady", "False", "load failed"), "message": "ModelFailed"}]},
        ),
        (
            "available",
            {
                "conditions": [{**_cond("ModelReady", "True"), "message": "ModelAvailable"}],
                "availableReplicas": 1,
            },
        ),
    ],
    "mlops-seldon-io-server-v1alpha1": [
        ("reconcile error", {"conditions": [_cond("StatefulSetReady", "False", "ServerConfig not found")]}),
        (
            "ready",
            {
                "conditions": [
                    _cond("StatefulSetReady", "True", "StatefulSet replicas matches desired replicas")
                ]
            },
        ),
    ],
}

# Objects for kinds the corpus has no manifest of (the built-in ones): a spec their mappings can read.
_BUILTIN_OBJECTS: dict[str, dict[str, Any]] = {
    kind: {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}},
        },
    }
    for kind in ("Deployment", "ReplicaSet", "StatefulSet")
}


def _crd_versions_with_observed_generation() -> set[tuple[str, str, str]]:
    out: set[tuple[str, str, str]] = set()
    for path in crd_files():
        for doc in yaml.safe_load_all(path.read_text()):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec.get("versions") or ():
                schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
                status = (schema.get("properties") or {}).get("status") or {}
                if "observedGeneration" in (status.get("properties") or {}):
                    out.add((spec["group"], version["name"], spec["names"]["kind"]))
    return out


def _writes_observed_generation() -> dict[str, Karta]:
    gvks = _crd_versions_with_observed_generation() | BUILTIN_WITH_OBSERVED_GENERATION
    out = {}
    for karta in catalog_definitions():
        kind = karta.root.kind
        if kind is not None and (kind.group, kind.version, kind.kind) in gvks:
            out[karta.metadata.name] = karta
    return out


KINDS = _writes_observed_generation() if CRDS.is_dir() else {}


def _base_object(name: str, karta: Karta) -> dict[str, Any]:
    for _, _, doc in workload_documents():
        found = definition_for(doc)
        if found is not None and found.metadata.name == name:
            obj = copy.deepcopy(doc)
            obj.pop("status", None)
            return obj
    kind = karta.root.kind
    assert kind is not None and kind.kind in _BUILTIN_OBJECTS, f"{name}: no corpus manifest, no object here"
    return copy.deepcopy(_BUILTIN_OBJECTS[kind.kind])


def _snapshot(base: dict[str, Any], status: dict[str, Any], generation: int, observed: int) -> dict[str, Any]:
    obj = copy.deepcopy(base)
    obj.setdefault("metadata", {})["generation"] = generation
    obj["status"] = {**copy.deepcopy(status), "observedGeneration": observed}
    return obj


def _status(karta: Karta, obj: dict[str, Any], evaluator: Evaluator) -> Any:
    status = ComponentFactory(karta, obj, evaluator=evaluator).root().status(strict=True)
    assert status is not None
    return status


CASE_LIST = [(name, label, status) for name in sorted(KINDS) for label, status in SNAPSHOTS.get(name, [])]
CASES = [pytest.param(*case, id=f"{case[0]}::{case[1]}") for case in CASE_LIST]


@pytest.mark.skipif(not KINDS, reason="shared corpus not found")
def test_every_kind_that_writes_observed_generation_has_snapshots() -> None:
    assert {"apps-deployment-v1", "apps-replicaset-v1", "apps-statefulset-v1"} <= set(KINDS)
    missing = sorted(set(KINDS) - set(SNAPSHOTS))
    assert not missing, (
        f"kinds whose operator writes status.observedGeneration, without stale snapshots: {missing}"
    )
    unknown = sorted(set(SNAPSHOTS) - set(KINDS))
    assert not unknown, f"snapshots for kinds without status.observedGeneration: {unknown}"


@pytest.mark.parametrize(("name", "label", "status"), CASES)
def test_stale_status_keeps_matched_and_drops_verdicts(name: str, label: str, status: dict[str, Any]) -> None:
    karta = KINDS[name]
    base = _base_object(name, karta)
    current = _snapshot(base, status, GENERATION, GENERATION)
    stale = _snapshot(base, status, GENERATION + 1, GENERATION)
    for evaluator in (GENERATED, GENERAL):
        fresh = _status(karta, current, evaluator)
        assert not fresh.stale, f"{label}: observedGeneration == generation is not stale"
        assert "stale" not in fresh.to_dict()
        got = _status(karta, stale, evaluator)
        assert got.stale, f"{label}: observedGeneration < generation is stale"
        assert got.to_dict()["stale"] is True
        if name in REPLICATED:
            # README "Statuses", replicated-kind rule: Running needs an observed spec, so a stale
            # status of these kinds is a rollout in progress (Initializing) instead of Running.
            want = set(map(str, fresh.matched))
            if "Running" in want:
                want = (want - {"Running"}) | {"Initializing"}
            assert [str(s) for s in got.matched] == [s for s in MATCHED_ORDER if s in want], label
        else:
            assert got.matched == fresh.matched, f"{label}: the matched set is what the mappings say"
        assert str(got.primary) not in IGNORED_WHEN_STALE, f"{label}: stale primary {got.primary}"
        assert got.primary == primary_status(got.matched, stale=True)
        if set(map(str, fresh.matched)) <= IGNORED_WHEN_STALE:
            assert got.primary == ResourceStatus.INITIALIZING, f"{label}: only verdicts matched"
        # An observedGeneration ahead of, or equal to, the generation is no claim of staleness.
        ahead = _snapshot(base, status, GENERATION, GENERATION + 1)
        assert _status(karta, ahead, evaluator).primary == fresh.primary
    assert _status(karta, stale, GENERATED).to_dict() == _status(karta, stale, GENERAL).to_dict()


@pytest.mark.skipif(not KINDS, reason="shared corpus not found")
def test_the_snapshots_exercise_the_ignored_statuses() -> None:
    """Not vacuous: some snapshots do yield Degraded, Completed or Failed when current."""
    hits = set()
    for name, label, status in CASE_LIST:
        karta = KINDS[name]
        obj = _snapshot(_base_object(name, karta), status, GENERATION, GENERATION)
        matched = {str(s) for s in _status(karta, obj, GENERATED).matched}
        if matched & IGNORED_WHEN_STALE:
            hits.add((name, label))
    assert len(hits) >= 5, f"only {sorted(hits)} yield Degraded/Completed/Failed"
