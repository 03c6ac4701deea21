"""Kueue Workload PodSets (docs/spec/gang-backends.md#kueue-rendering, #kueue-example): the worked example and
its elastic variant, PodSets per instance, nested scales, assembled fragmented templates, topology requests
and limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from render_fixtures import EVALUATOR, definition, managed_metadata, run, train_7

from karta.errors import GangError
from karta.extract import ComponentFactory
from karta.model import Karta, karta_from_dict
from karta.render import KueueOptions, render

WORKER_TEMPLATE = {
    "spec": {
        "containers": [
            {
                "name": "pytorch",
                "image": "registry.example/train:1.0",
                "resources": {"limits": {"nvidia.com/gpu": 8}},
            }
        ]
    }
}


def test_worked_example_6_6() -> None:
    result = run("kueue")
    assert list(result.objects) == [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": managed_metadata("pytorchjob-train-7"),
            "spec": {
                "queueName": "team-a",
                "podSets": [
                    {
                        "name": "master",
                        "count": 1,
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "pytorch",
                                        "image": "registry.example/train:1.0",
                                        "resources": {"limits": {"nvidia.com/gpu": 1}},
                                    }
                                ]
                            }
                        },
                    },
                    {"name": "worker", "count": 4, "template": WORKER_TEMPLATE},
                ],
            },
        }
    ]
    assert result.pod_patches == ()
    assert result.warnings == ()


def test_elastic_variant_gains_min_count() -> None:
    obj = train_7()
    obj["spec"]["elasticPolicy"] = {"minReplicas": 2, "maxReplicas": 4}
    (workload,) = run("kueue", obj=obj).objects
    master, worker = workload["spec"]["podSets"]
    assert "minCount" not in master
    assert worker == {"name": "worker", "count": 4, "minCount": 2, "template": WORKER_TEMPLATE}


def test_without_sub_groups_one_pod_set_per_pod_bearing_component() -> None:
    (workload,) = run("kueue", definition(podGroup={"name": "job"})).objects
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [("master", 1), ("worker", 4)]


def test_queue_name_only_from_the_label() -> None:
    obj = train_7()
    del obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    (workload,) = run("kueue", obj=obj).objects
    assert "queueName" not in workload["spec"]


def test_topology_request_from_sub_group_or_gang() -> None:
    karta = definition(
        podGroup={
            "name": "job",
            "topology": {"topologyName": "dc", "requiredTopologyLevel": "rack"},
            "subGroups": [
                {"componentName": "master"},
                {
                    "componentName": "worker",
                    "topology": {"topologyName": "dc", "preferredTopologyLevel": "host"},
                },
            ],
        }
    )
    result = run("kueue", karta)
    master, worker = result.objects[0]["spec"]["podSets"]
    assert master["topologyRequest"] == {"required": "rack"}
    assert worker["topologyRequest"] == {"preferred": "host"}
    assert any("topologyName" in w for w in result.warnings)


def _services_karta(**extra_child: Any) -> Karta:
    child = {
        "name": "svc",
        "ownerRef": "app",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "instanceIdPath": ".spec.services | keys[]",
        "podSelector": {"componentInstanceSelector": {"idPath": '.metadata.labels["svc"]'}},
        **extra_child,
    }
    return karta_from_dict(
        {
            "metadata": {"name": "services"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "app",
                        "kind": {"group": "example.org", "version": "v1", "kind": "App"},
                    },
                    "childComponents": [child],
                },
                "optimizationInstructions": {"gangScheduling": {"podGroup": {"name": "app"}}},
            },
        }
    )


def _app(services: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "example.org/v1",
        "kind": "App",
        "metadata": {"name": "chat", "namespace": "ns", "uid": "u-1"},
        "spec": {"services": services},
    }


def _render(karta: Karta, obj: dict[str, Any]) -> dict[str, Any]:
    result = render("kueue", ComponentFactory(karta, obj, evaluator=EVALUATOR), options=KueueOptions())
    (workload,) = result.objects
    return workload


def test_multi_instance_components_get_one_pod_set_per_instance_and_fragments_are_assembled() -> None:
    karta = _services_karta(
        specDefinition={
            "fragmentedPodSpecDefinition": {
                "containerPath": '.spec.services[] | {name: "main", image: .image}',
                "resourcesPath": ".spec.services[].resources",
                "labelsPath": ".spec.services[].labels",
                "nodeAffinityPath": ".spec.services[].nodeAffinity",
            }
        },
        scaleDefinition={
            "replicasPath": ".spec.services[].replicas",
            "minReplicasPath": ".spec.services[].min",
        },
    )
    obj = _app(
        {
            "decode": {
                "image": "d:1",
                "replicas": 4,
                "min": 1,
                "resources": {"limits": {"nvidia.com/gpu": 2}},
                "labels": {"role": "decode"},
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}},
            },
            "frontend": {"image": "f:1", "replicas": 2, "min": 1, "labels": {"role": "fe"}},
        }
    )
    workload = _render(karta, obj)
    decode, frontend = workload["spec"]["podSets"]
    assert decode == {
        "name": "svc-decode",
        "count": 4,
        "minCount": 1,
        "template": {
            "metadata": {"labels": {"role": "decode"}},
            "spec": {
                "containers": [
                    {"name": "main", "image": "d:1", "resources": {"limits": {"nvidia.com/gpu": 2}}}
                ],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                    }
                },
            },
        },
    }
    # only the PodSet with the largest gap carries minCount
    assert frontend["name"] == "svc-frontend"
    assert (frontend["count"], "minCount" in frontend) == (2, False)
    assert workload["metadata"]["name"] == "app-chat"


def test_invalid_pod_set_names_are_errors() -> None:
    karta = _services_karta(specDefinition={"podTemplateSpecPath": ".spec.services[].template"})
    with pytest.raises(GangError, match='PodSet name "svc-Decode_1" is not a DNS-1123 label'):
        _render(karta, _app({"Decode_1": {"template": {"spec": {"containers": []}}}}))


def test_more_than_18_pod_sets_is_an_error() -> None:
    karta = _services_karta(specDefinition={"podTemplateSpecPath": ".spec.services[].template"})
    services = {f"s{i:02d}": {"template": {"spec": {}}} for i in range(19)}
    with pytest.raises(GangError, match="at most 18 PodSets"):
        _render(karta, _app(services))


def test_nested_components_count_every_parent_replica() -> None:
    karta = karta_from_dict(
        {
            "metadata": {"name": "groups"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "set",
                        "kind": {"group": "example.org", "version": "v1", "kind": "Set"},
                    },
                    "childComponents": [
                        {
                            "name": "group",
                            "ownerRef": "set",
                            "scaleDefinition": {"replicasPath": ".spec.replicas"},
                        },
                        {
                            "name": "leader",
                            "ownerRef": "group",
                            "kind": {"group": "", "version": "v1", "kind": "Pod"},
                            "specDefinition": {"podTemplateSpecPath": ".spec.leader"},
                            "scaleDefinition": {"replicasPath": "1"},
                        },
                        {
                            "name": "worker",
                            "ownerRef": "group",
                            "kind": {"group": "", "version": "v1", "kind": "Pod"},
                            "specDefinition": {"podTemplateSpecPath": ".spec.worker"},
                            "scaleDefinition": {"replicasPath": ".spec.size - 1"},
                        },
                    ],
                },
                "optimizationInstructions": {"gangScheduling": {"podGroup": {"name": "set"}}},
            },
        }
    )
    obj = {
        "apiVersion": "example.org/v1",
        "kind": "Set",
        "metadata": {"name": "s", "uid": "u"},
        "spec": {"replicas": 3, "size": 4, "leader": {"spec": {}}, "worker": {"spec": {}}},
    }
    workload = _render(karta, obj)
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [("leader", 3), ("worker", 9)]


# -- a sub-group whose pods have several pod templates ---------------------------------------------


ONE_COMPONENT = Path(__file__).resolve().parents[2] / "definitions" / "pytorchjob-one-component.yaml"


def _one_component_karta(**gang: Any) -> Karta:
    """PyTorchJob as one component with an instance per replica type, one sub-group over it."""
    data = yaml.safe_load(ONE_COMPONENT.read_text())
    data["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"].update(gang)
    return karta_from_dict(data)


def _two_templates(master_gpus: int = 2, worker_gpus: int = 0, workers: int = 2) -> dict[str, Any]:
    def replica(count: int, gpus: int) -> dict[str, Any]:
        container: dict[str, Any] = {"name": "pytorch", "image": "train:1"}
        if gpus:
            container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
        return {"replicas": count, "template": {"spec": {"containers": [container]}}}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "llama-3.1-8b", "namespace": "ml", "uid": "u-1"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": replica(1, master_gpus),
                "Worker": replica(workers, worker_gpus),
            }
        },
    }


def _gpus(workload: dict[str, Any]) -> int:
    total = 0
    for pod_set in workload["spec"]["podSets"]:
        for container in pod_set["template"]["spec"]["containers"]:
            total += pod_set["count"] * int(
                container.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)
            )
    return total


def test_a_sub_group_with_several_templates_gets_one_pod_set_per_template() -> None:
    result = render("kueue", ComponentFactory(_one_component_karta(), _two_templates(), evaluator=EVALUATOR))
    (workload,) = result.objects
    master, worker = workload["spec"]["podSets"]
    assert (master["name"], master["count"]) == ("replica-0", 1)
    assert master["template"]["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 2}}
    assert (worker["name"], worker["count"]) == ("replica-1", 2)
    assert "resources" not in worker["template"]["spec"]["containers"][0]
    assert _gpus(workload) == 2  # what the pods request (the first template x 3 asked for 6)
    # issue 22: no queue-name label and no --queue is said (Kueue admits no Workload without one)
    assert [w for w in result.warnings if "queue-name" not in w] == []


def test_identical_templates_of_a_sub_group_share_one_pod_set() -> None:
    obj = _two_templates(master_gpus=1, worker_gpus=1, workers=3)
    (workload,) = render("kueue", ComponentFactory(_one_component_karta(), obj, evaluator=EVALUATOR)).objects
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [("replica", 4)]
    assert _gpus(workload) == 4


def test_split_sub_groups_carry_min_count_and_say_what_topology_means() -> None:
    obj = _two_templates(workers=4)
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["minReplicas"] = 2
    karta = _one_component_karta(topology={"topologyName": "dc", "requiredTopologyLevel": "rack"})
    result = render("kueue", ComponentFactory(karta, obj, evaluator=EVALUATOR))
    master, worker = result.objects[0]["spec"]["podSets"]
    assert "minCount" not in master
    assert (worker["count"], worker["minCount"]) == (4, 2)
    assert master["topologyRequest"] == worker["topologyRequest"] == {"required": "rack"}
    assert any(
        "sub-group replica has 2 pod templates, so 2 PodSets (replica-0, replica-1)" in w
        and "each PodSet" in w
        for w in result.warnings
    )


def test_a_sub_group_over_several_components_counts_each_components_pods() -> None:
    # the running example with one sub-group over the whole job: master and worker are separate
    karta = definition(podGroup={"name": "job", "subGroups": [{"componentName": "pytorchjob"}]})
    (workload,) = run("kueue", karta).objects
    pod_sets = workload["spec"]["podSets"]
    assert [(p["name"], p["count"]) for p in pod_sets] == [("pytorchjob-0", 1), ("pytorchjob-1", 4)]
    assert _gpus(workload) == 1 * 1 + 4 * 8


def test_group_name_names_the_workload() -> None:
    (workload,) = run("kueue", group_name="train.7").objects
    assert workload["metadata"]["name"] == "train.7"
    with pytest.raises(GangError, match='group name "Train" is not a DNS-1123 subdomain'):
        run("kueue", group_name="Train")
