"""Kueue Workload PodSets (gang-backends.md 6.5, 6.6): the worked example and its elastic variant,
PodSets per instance, nested scales, assembled fragmented templates, topology requests and limits."""

from __future__ import annotations

from typing import Any

import pytest
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
