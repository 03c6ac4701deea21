"""Real manifests of the shared corpus through small ad-hoc definitions (not the catalog).

Proves that real pod-template shapes pass typed conversion, that multi-instance pairing works on
real collections, and that writing the extracted values back leaves every object unchanged.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.model.types import Karta

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "workloads"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_STATUS = {
    "conditionsDefinition": {"path": ".status.conditions"},
    "statusMappings": {
        "running": [{"byConditions": [{"type": "Running", "status": "True"}]}],
        "completed": [{"byConditions": [{"type": "Succeeded", "status": "True"}]}],
        "failed": [{"byConditions": [{"type": "Failed", "status": "True"}]}],
    },
}


def _replica_specs(field: str) -> list[dict[str, Any]]:
    collection = f".spec.{field}"
    return [
        {
            "name": "replica",
            "ownerRef": "root",
            "instanceIdPath": f"{collection} | to_entries[] | .key",
            "specDefinition": {"podTemplateSpecPath": f"{collection} | .[] | .template"},
            "scaleDefinition": {"replicasPath": f"{collection} | .[] | .replicas"},
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.labels.x"}},
        }
    ]


def _list_of(collection: str, name: str, template: str, replicas: str, *, style: str) -> dict[str, Any]:
    return {
        "name": "member",
        "ownerRef": "root",
        "instanceIdPath": f"{collection}[].{name}",
        "specDefinition": {style: f"{collection}[].{template}"},
        "scaleDefinition": {"replicasPath": f"{collection}[].{replicas}"},
        "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.labels.x"}},
    }


def _child(name: str, style: str, path: str, replicas: str | None = None) -> dict[str, Any]:
    child: dict[str, Any] = {"name": name, "ownerRef": "root", "specDefinition": {style: path}}
    if replicas:
        child["scaleDefinition"] = {"replicasPath": replicas}
    return child


TEMPLATE = "podTemplateSpecPath"
CHILDREN: dict[str, list[dict[str, Any]]] = {
    "PyTorchJob": _replica_specs("pytorchReplicaSpecs"),
    "TFJob": _replica_specs("tfReplicaSpecs"),
    "MPIJob": _replica_specs("mpiReplicaSpecs"),
    "JobSet": [
        _list_of(".spec.replicatedJobs", "name", "template.spec.template", "replicas", style=TEMPLATE)
    ],
    "Job": [_child("pod", TEMPLATE, ".spec.template", ".spec.parallelism // 1")],
    "ReplicaSet": [_child("pod", TEMPLATE, ".spec.template", ".spec.replicas")],
    "LeaderWorkerSet": [
        _child("leader", TEMPLATE, ".spec.leaderWorkerTemplate.leaderTemplate", "1"),
        _child(
            "worker", TEMPLATE, ".spec.leaderWorkerTemplate.workerTemplate", ".spec.leaderWorkerTemplate.size"
        ),
    ],
    "RayCluster": [
        _child("head", TEMPLATE, ".spec.headGroupSpec.template", "1"),
        _list_of(".spec.workerGroupSpecs", "groupName", "template", "replicas // 1", style=TEMPLATE),
    ],
    "PodCliqueSet": [
        _list_of(".spec.template.cliques", "name", "spec.podSpec", "spec.replicas", style="podSpecPath")
    ],
    "DynamoGraphDeployment": [
        {
            "name": "service",
            "ownerRef": "root",
            "instanceIdPath": ".spec.services | to_entries[] | .key",
            "specDefinition": {
                "fragmentedPodSpecDefinition": {
                    "containerPath": ".spec.services | .[] | .extraPodSpec.mainContainer",
                    "labelsPath": ".spec.services | .[] | .labels",
                    "annotationsPath": ".spec.services | .[] | .annotations",
                }
            },
            "scaleDefinition": {"replicasPath": ".spec.services | .[] | .replicas"},
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.labels.x"}},
        }
    ],
}
# Volcano's Job shares its kind with batch/v1 Job; pick by API group.
VOLCANO = [_list_of(".spec.tasks", "name", "template", "replicas", style=TEMPLATE)]


def _children_for(doc: dict[str, Any]) -> list[dict[str, Any]] | None:
    if doc.get("kind") == "Job" and str(doc.get("apiVersion", "")).startswith("batch.volcano.sh/"):
        return VOLCANO
    if doc.get("kind") == "DynamoGraphDeployment" and str(doc.get("apiVersion")).endswith("/v1beta1"):
        return [_list_of(".spec.components", "name", "podTemplate", "replicas", style=TEMPLATE)]
    if doc.get("kind") == "Service" and str(doc.get("apiVersion", "")).startswith("serving.knative.dev/"):
        return [_child("revision", TEMPLATE, ".spec.template")]
    return CHILDREN.get(str(doc.get("kind")))


def _documents() -> list[tuple[str, dict[str, Any]]]:
    if not CORPUS.is_dir():
        return []
    out = []
    for path in sorted(CORPUS.rglob("*.yaml")):
        with path.open() as handle:
            for index, doc in enumerate(yaml.load_all(handle, Loader=_Loader)):
                if isinstance(doc, dict) and _children_for(doc) is not None:
                    out.append((f"{path.relative_to(CORPUS)}#{index}", doc))
    return out


DOCUMENTS = _documents()


def _karta(doc: dict[str, Any]) -> Karta:
    group, _, version = str(doc["apiVersion"]).rpartition("/")
    root = {
        "name": "root",
        "kind": {"group": group, "version": version, "kind": doc["kind"]},
        "statusDefinition": _STATUS,
    }
    return Karta.model_validate(
        {
            "metadata": {"name": "corpus"},
            "spec": {"structureDefinition": {"rootComponent": root, "childComponents": _children_for(doc)}},
        }
    )


@pytest.fixture(scope="module")
def ev() -> Evaluator:
    return Evaluator(trusted=True)


def test_corpus_present() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus folder {CORPUS} is absent")
    assert len(DOCUMENTS) >= 30


def _containers(instance: Any) -> list[Any] | None:
    if instance.pod_template_spec is not None:
        return instance.pod_template_spec.get("spec", {}).get("containers")
    if instance.pod_spec is not None:
        return instance.pod_spec.get("containers")
    if instance.fragmented_pod_spec is not None:
        container = instance.fragmented_pod_spec.get("container")
        return [container] if container else None
    return None


@pytest.mark.parametrize(("name", "doc"), DOCUMENTS, ids=[name for name, _ in DOCUMENTS])
def test_corpus_extracts_and_round_trips(name: str, doc: dict[str, Any], ev: Evaluator) -> None:
    original = copy.deepcopy(doc)
    factory = ComponentFactory(_karta(doc), doc, evaluator=ev)
    assert factory.resource() is doc
    status = factory.root().status()
    assert status is not None and status.diagnostics == []

    with_containers = 0
    for component in factory.children():
        instances = component.extracted_instances()
        assert instances, f"{name}: component {component.name} has no instances"
        for instance in instances.values():
            containers = _containers(instance)
            if containers:
                with_containers += 1
                assert all(isinstance(c, dict) and (c.get("name") or c.get("image")) for c in containers)
            if instance.scale is not None and instance.scale.replicas is not None:
                assert instance.scale.replicas >= 0

        # Writing back what was read changes nothing (whole values are only written when all exist).
        for read, write in (
            (component.pod_template_specs, component.update_pod_template_spec),
            (component.pod_specs, component.update_pod_spec),
            (component.fragmented_pod_specs, component.update_fragmented_pod_spec),
        ):
            values = read()
            if values is None:
                continue
            if write is not component.update_fragmented_pod_spec and not all(values.values()):
                continue
            write(copy.deepcopy(values))
            assert factory.obj == original, f"{name}: write-back of {component.name} changed the object"
    assert with_containers > 0, f"{name}: no containers extracted"
    assert doc == original
