"""Kubernetes Workload API objects: the worked examples of docs/spec/gang-backends.md#workload-api-example
(v1beta1, v1alpha2, v1alpha1, composite), alpha gangs per key (one PodGroup per key; podGroupReplicaKey in
1.35),
``basic`` for a zero minimum, topology and the template limit."""

from __future__ import annotations

from typing import Any

import pytest
from render_fixtures import OWNER_REF, definition, managed_metadata, patch_of, run, train_7, train_7_pods

from karta.errors import GangError

CONTROLLER_REF = {"apiGroup": "kubeflow.org", "kind": "PyTorchJob", "name": "train-7"}
BY_REPLICA_TYPE = {
    "podGroups": [
        {
            "name": "rt",
            "members": [
                {
                    "componentName": c,
                    "groupByKeyPaths": ['.metadata.labels["training.kubeflow.org/replica-type"]'],
                }
                for c in ("master", "worker")
            ],
        }
    ]
}


def test_worked_example_v1beta1() -> None:
    result = run("workload-api", pods=train_7_pods(), k8s_version="1.37")
    assert list(result.objects) == [
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": managed_metadata("train-7"),
            "spec": {
                "controllerRef": CONTROLLER_REF,
                "podGroupTemplates": [{"name": "job", "schedulingPolicy": {"gang": {"minCount": 5}}}],
            },
        },
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": managed_metadata("train-7-job"),
            "spec": {
                "workloadRef": {"workloadName": "train-7", "templateName": "job"},
                "schedulingPolicy": {"gang": {"minCount": 5}},
            },
        },
    ]
    assert {p.pod for p in result.pod_patches} == {p["metadata"]["name"] for p in train_7_pods()}
    assert all(
        p.patch == {"spec": {"schedulingGroup": {"podGroupName": "train-7-job"}}} for p in result.pod_patches
    )
    assert any("flattened to minCount 5" in w for w in result.warnings)


def test_worked_example_v1alpha2_differs_only_in_the_back_reference() -> None:
    beta = run("workload-api", k8s_version="1.37").objects
    alpha2 = run("workload-api", k8s_version="1.36").objects
    assert [o["apiVersion"] for o in alpha2] == ["scheduling.k8s.io/v1alpha2"] * 2
    assert alpha2[0]["spec"] == beta[0]["spec"]
    assert alpha2[1]["spec"] == {
        "podGroupTemplateRef": {"workload": {"workloadName": "train-7", "podGroupTemplateName": "job"}},
        "schedulingPolicy": {"gang": {"minCount": 5}},
    }


def test_worked_example_v1alpha1() -> None:
    result = run("workload-api", pods=train_7_pods(), k8s_version="1.35")
    assert list(result.objects) == [
        {
            "apiVersion": "scheduling.k8s.io/v1alpha1",
            "kind": "Workload",
            "metadata": managed_metadata("train-7"),
            "spec": {
                "controllerRef": CONTROLLER_REF,
                "podGroups": [{"name": "job", "policy": {"gang": {"minCount": 5}}}],
            },
        }
    ]
    assert patch_of(result, "train-7-worker-1") == {
        "spec": {"workloadRef": {"name": "train-7", "podGroup": "job"}}
    }


def test_worked_example_composite() -> None:
    result = run("workload-api", pods=train_7_pods(), k8s_version="1.37", composite=True)
    workload, composite, master, worker = result.objects
    assert workload["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert workload["spec"] == {
        "controllerRef": CONTROLLER_REF,
        "compositePodGroupTemplates": [
            {
                "name": "job",
                "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                "podGroupTemplates": [
                    {"name": "master", "schedulingPolicy": {"gang": {"minCount": 1}}},
                    {"name": "worker", "schedulingPolicy": {"gang": {"minCount": 4}}},
                ],
            }
        ],
    }
    assert composite == {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": managed_metadata("train-7-job"),
        "spec": {
            "workloadRef": {"workloadName": "train-7", "templateName": "job"},
            "schedulingPolicy": {"gang": {"minGroupCount": 2}},
        },
    }
    assert worker == {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "PodGroup",
        "metadata": managed_metadata("train-7-job-worker"),
        "spec": {
            "parentCompositePodGroupName": "train-7-job",
            "workloadRef": {"workloadName": "train-7", "templateName": "worker"},
            "schedulingPolicy": {"gang": {"minCount": 4}},
        },
    }
    assert master["metadata"]["name"] == "train-7-job-master"
    assert master["spec"]["schedulingPolicy"] == {"gang": {"minCount": 1}}
    assert patch_of(result, "train-7-worker-2") == {
        "spec": {"schedulingGroup": {"podGroupName": "train-7-job-worker"}}
    }
    assert patch_of(result, "train-7-master-0") == {
        "spec": {"schedulingGroup": {"podGroupName": "train-7-job-master"}}
    }


def test_composite_needs_1_37() -> None:
    result = run("workload-api", k8s_version="1.36", composite=True)
    assert [o["kind"] for o in result.objects] == ["Workload", "PodGroup"]
    assert any("needs Kubernetes 1.37" in w for w in result.warnings)


def test_alpha_gangs_get_one_pod_group_per_key() -> None:
    result = run("workload-api", definition(**BY_REPLICA_TYPE), pods=train_7_pods())
    workload, master, worker = result.objects
    assert workload["spec"]["podGroupTemplates"] == [
        {"name": "rt", "schedulingPolicy": {"gang": {"minCount": 1}}}
    ]
    assert (master["metadata"]["name"], master["spec"]["schedulingPolicy"]) == (
        "train-7-rt-master",
        {"gang": {"minCount": 1}},
    )
    assert (worker["metadata"]["name"], worker["spec"]["schedulingPolicy"]) == (
        "train-7-rt-worker",
        {"gang": {"minCount": 4}},
    )
    assert worker["spec"]["workloadRef"] == {"workloadName": "train-7", "templateName": "rt"}
    assert patch_of(result, "train-7-worker-0") == {
        "spec": {"schedulingGroup": {"podGroupName": "train-7-rt-worker"}}
    }


def test_alpha_gangs_in_1_35_use_the_replica_key() -> None:
    result = run("workload-api", definition(**BY_REPLICA_TYPE), pods=train_7_pods(), k8s_version="1.35")
    (workload,) = result.objects
    assert workload["spec"]["podGroups"] == [{"name": "rt", "policy": {"gang": {"minCount": 1}}}]
    assert patch_of(result, "train-7-worker-0") == {
        "spec": {"workloadRef": {"name": "train-7", "podGroup": "rt", "podGroupReplicaKey": "worker"}}
    }
    assert any("rt-worker needs minCount 4" in w for w in result.warnings)


def test_alpha_templates_exist_before_pods() -> None:
    result = run("workload-api", definition(**BY_REPLICA_TYPE))
    (workload,) = result.objects
    assert workload["spec"]["podGroupTemplates"] == [
        {"name": "rt", "schedulingPolicy": {"gang": {"minCount": 1}}}
    ]
    assert any("has no pods yet" in w for w in result.warnings)


def test_zero_minimum_is_basic() -> None:
    obj = train_7()
    for spec in obj["spec"]["pytorchReplicaSpecs"].values():
        spec["replicas"] = 0
    workload, group = run("workload-api", definition(podGroup={"name": "job"}), obj=obj).objects
    assert workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"basic": {}}
    assert group["spec"]["schedulingPolicy"] == {"basic": {}}


def _topology_definition() -> Any:
    return definition(
        podGroup={
            "name": "job",
            "topology": {
                "topologyName": "dc",
                "requiredTopologyLevel": "rack",
                "preferredTopologyLevel": "host",
            },
        }
    )


def test_required_topology_level_becomes_a_scheduling_constraint() -> None:
    result = run("workload-api", _topology_definition(), topology_level_map={"rack": "example.com/rack"})
    workload, group = result.objects
    constraints = {"topology": [{"key": "example.com/rack"}]}
    assert workload["spec"]["podGroupTemplates"][0]["schedulingConstraints"] == constraints
    assert group["spec"]["schedulingConstraints"] == constraints
    assert any("topologyName dc" in w for w in result.warnings)
    assert any("preferred topology level: host" in w for w in result.warnings)


def test_topology_without_the_gate_or_in_1_35_is_dropped() -> None:
    workload, _ = run("workload-api", _topology_definition(), topology_gate=False).objects
    assert "schedulingConstraints" not in workload["spec"]["podGroupTemplates"][0]
    result = run("workload-api", _topology_definition(), k8s_version="1.35")
    assert "schedulingConstraints" not in result.objects[0]["spec"]["podGroups"][0]
    assert any("v1alpha1 has no topology" in w for w in result.warnings)


def test_more_than_eight_templates_is_an_error() -> None:
    groups = [{"name": f"g{i}", "members": [{"componentName": "master"}]} for i in range(9)]
    with pytest.raises(GangError, match="at most 8 pod-group templates"):
        run("workload-api", definition(podGroups=groups))


def test_unknown_version() -> None:
    with pytest.raises(GangError, match=r"unsupported Kubernetes version 1\.34"):
        run("workload-api", k8s_version="1.34")


def test_core_group_controller_ref_has_no_api_group() -> None:
    karta_data = {
        "metadata": {"name": "pod"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "pod",
                    "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "specDefinition": {"podTemplateSpecPath": "."},
                }
            },
            "optimizationInstructions": {"gangScheduling": {"podGroup": {"name": "pod"}}},
        },
    }
    from karta.model import karta_from_dict

    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "uid": "u"},
        "spec": {"containers": []},
    }
    workload, group = run("workload-api", karta_from_dict(karta_data), obj=obj).objects
    assert workload["spec"]["controllerRef"] == {"kind": "Pod", "name": "p"}
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 1}}
    assert workload["metadata"]["labels"]["run.ai/karta-group"] == ""
    assert "namespace" not in workload["metadata"]


def test_owner_reference_matches_the_workload() -> None:
    for obj in run("workload-api").objects:
        assert obj["metadata"]["ownerReferences"] == [OWNER_REF]
