"""Gang plans (docs/spec/gang-backends.md#gang-plan, #running-example, #kai-example;
docs/spec/format.md#conformance)."""

from __future__ import annotations

from typing import Any

import pytest
from gang_builders import POD_KIND, component, karta, make_factory, pod, pts, selector

from karta.errors import GangError
from karta.gang import compute_gang_plan, flat_min, kai_pod_group_name
from karta.model.findings import Severity

REPLICA_TYPE = '.metadata.labels["training.kubeflow.org/replica-type"]'
JOB_NAME = '.metadata.labels["training.kubeflow.org/job-name"]'
UID = "6d1e0c7a-51f2-4c2e-9a55-0b3d00000007"

TRAIN_7 = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "train-7", "namespace": "ml-team", "uid": UID},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch"}]}}},
            "Worker": {"replicas": 4, "template": {"spec": {"containers": [{"name": "pytorch"}]}}},
        }
    },
}


def pytorch_karta(gang: dict[str, Any] | None, *, worker_min: str | None = None) -> Any:
    worker_scale: dict[str, Any] = {"replicasPath": ".spec.pytorchReplicaSpecs.Worker.replicas // 1"}
    if worker_min is not None:
        worker_scale["minReplicasPath"] = worker_min
    return karta(
        component("pytorchjob", kind={"group": "kubeflow.org", "version": "v1", "kind": "PyTorchJob"}),
        component(
            "master",
            "pytorchjob",
            kind=POD_KIND,
            specDefinition=pts(".spec.pytorchReplicaSpecs.Master.template"),
            scaleDefinition={"replicasPath": ".spec.pytorchReplicaSpecs.Master.replicas // 1"},
            podSelector=selector(REPLICA_TYPE, "master"),
        ),
        component(
            "worker",
            "pytorchjob",
            kind=POD_KIND,
            specDefinition=pts(".spec.pytorchReplicaSpecs.Worker.template"),
            scaleDefinition=worker_scale,
            podSelector=selector(REPLICA_TYPE, "worker"),
        ),
        gang=gang,
    )


SUB_GROUPS = {
    "podGroup": {"name": "job", "subGroups": [{"componentName": "master"}, {"componentName": "worker"}]}
}


def train_pods() -> list[dict[str, Any]]:
    labels = {"training.kubeflow.org/job-name": "train-7"}
    pods = [pod("train-7-master-0", {**labels, "training.kubeflow.org/replica-type": "master"})]
    pods += [
        pod(f"train-7-worker-{i}", {**labels, "training.kubeflow.org/replica-type": "worker"})
        for i in range(4)
    ]
    return pods


def test_running_example_current_format() -> None:
    plan = compute_gang_plan(make_factory(pytorch_karta(SUB_GROUPS), TRAIN_7), train_pods())
    assert plan.format == "podGroup"
    (gang,) = plan.gangs
    assert kai_pod_group_name("U", gang.name) == "pg-U-job"
    assert (gang.min_member, gang.min_sub_group) == (0, 2)
    assert [(s.name, s.component, s.min_member, s.desired) for s in gang.sub_groups] == [
        ("master", "master", 1, 1),
        ("worker", "worker", 4, 4),
    ]
    assert gang.sub_groups[0].members == ("train-7-master-0",)
    assert "train-7-worker-2" in gang.sub_groups[1].members
    assert "train-7-worker-2" not in gang.sub_groups[0].members
    assert len(gang.members) == 5
    assert flat_min(gang) == 5
    assert plan.to_dict() == {
        "gangs": [
            {
                "name": "job",
                "minMember": 0,
                "minSubGroup": 2,
                "subGroups": [
                    {"name": "master", "component": "master", "minMember": 1},
                    {"name": "worker", "component": "worker", "minMember": 4},
                ],
                "members": ["train-7-master-0"] + [f"train-7-worker-{i}" for i in range(4)],
            }
        ]
    }


def test_without_pods_the_plan_still_has_sizes() -> None:
    (gang,) = compute_gang_plan(make_factory(pytorch_karta(SUB_GROUPS), TRAIN_7)).gangs
    assert [s.min_member for s in gang.sub_groups] == [1, 4]
    assert gang.members == ()


def test_without_sub_groups_min_is_root_subtree() -> None:
    (gang,) = compute_gang_plan(make_factory(pytorch_karta({"podGroup": {"name": "job"}}), TRAIN_7)).gangs
    assert (gang.min_member, gang.min_sub_group, gang.sub_groups) == (5, None, ())
    assert flat_min(gang) == 5
    assert gang.to_dict() == {"name": "job", "minMember": 5, "members": []}


def test_elastic_worker_min() -> None:
    (gang,) = compute_gang_plan(make_factory(pytorch_karta(SUB_GROUPS, worker_min='"2"'), TRAIN_7)).gangs
    assert [(s.min_member, s.desired) for s in gang.sub_groups] == [(1, 1), (2, 4)]
    assert flat_min(gang) == 3


def test_topology() -> None:
    gang_def = {
        "podGroup": {
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
    }
    (gang,) = compute_gang_plan(make_factory(pytorch_karta(gang_def), TRAIN_7)).gangs
    data = gang.to_dict()
    assert data["topology"] == {"topologyName": "dc", "requiredTopologyLevel": "rack"}
    assert data["subGroups"][1]["topology"] == {"topologyName": "dc", "preferredTopologyLevel": "host"}
    assert "topology" not in data["subGroups"][0]


@pytest.mark.parametrize(
    ("topology", "message"),
    [
        ({"requiredTopologyLevel": "rack"}, "topology constraint must include topology name"),
        ({"topologyName": "dc"}, "topology constraint must include preferred or required topology level"),
    ],
)
def test_bad_topology(topology: dict[str, str], message: str) -> None:
    gang_def = {"podGroup": {"name": "job", "topology": topology}}
    with pytest.raises(GangError, match=message):
        compute_gang_plan(make_factory(pytorch_karta(gang_def), TRAIN_7))


def test_sub_group_errors() -> None:
    k = karta(
        component("root"),
        component("a", "root", specDefinition=pts(".a"), scaleDefinition={"replicasPath": "0"}),
        gang={"podGroup": {"name": "g", "subGroups": [{"componentName": "a"}]}},
    )
    with pytest.raises(GangError, match="component a must expose a replica scale definition"):
        compute_gang_plan(make_factory(k, {}))
    ghost = pytorch_karta({"podGroup": {"name": "g", "subGroups": [{"componentName": "ghost"}]}})
    with pytest.raises(GangError, match="component ghost not found"):
        compute_gang_plan(make_factory(ghost, TRAIN_7))
    empty = pytorch_karta({"podGroup": {"name": "g", "subGroups": [{"componentName": ""}]}})
    with pytest.raises(GangError, match="subgroup component name cannot be empty"):
        compute_gang_plan(make_factory(empty, TRAIN_7))


def test_sub_group_covers_descendants() -> None:
    k = karta(
        component("root"),
        component("group", "root", scaleDefinition={"replicasPath": "2"}),
        component(
            "leader",
            "group",
            specDefinition=pts(".l"),
            podSelector=selector(".metadata.labels.role", "leader"),
        ),
        component(
            "worker",
            "group",
            specDefinition=pts(".w"),
            podSelector=selector(".metadata.labels.role", "worker"),
        ),
        component("sidecar", "root", specDefinition=pts(".s"), scaleDefinition={"replicasPath": "1"}),
        gang={
            "podGroup": {"name": "g", "subGroups": [{"componentName": "group"}, {"componentName": "sidecar"}]}
        },
    )
    pods = [pod("l", {"role": "leader"}), pod("w", {"role": "worker"}), pod("x", {"role": "other"})]
    (gang,) = compute_gang_plan(make_factory(k, {}), pods).gangs
    assert gang.sub_groups[0].members == ("l", "w")
    assert gang.sub_groups[1].members == ()
    assert gang.members == ("l", "w", "x")


def test_alpha_format_root_member_keyed_by_job_name() -> None:
    gang_def = {
        "podGroups": [
            {"name": "whole", "members": [{"componentName": "pytorchjob", "groupByKeyPaths": [JOB_NAME]}]}
        ]
    }
    plan = compute_gang_plan(make_factory(pytorch_karta(gang_def), TRAIN_7), train_pods())
    assert plan.format == "podGroups"
    (gang,) = plan.gangs
    assert (gang.name, gang.alpha_keys, gang.min_member, gang.component) == (
        "whole",
        ("train-7",),
        5,
        "pytorchjob",
    )
    assert len(gang.members) == 5
    assert gang.to_dict()["keys"] == ["train-7"]
    assert flat_min(gang) == 5


def test_alpha_gangs_per_key_and_unmatched_pods_are_diagnostics() -> None:
    gang_def = {
        "podGroups": [
            {
                "name": "per-type",
                "members": [
                    {"componentName": "worker", "groupByKeyPaths": [REPLICA_TYPE], "filters": ["true"]}
                ],
            },
        ]
    }
    pods = [*train_pods(), pod("stray", {"training.kubeflow.org/replica-type": "chief"})]
    plan = compute_gang_plan(make_factory(pytorch_karta(gang_def), TRAIN_7), pods)
    (gang,) = plan.gangs
    assert (gang.alpha_keys, gang.min_member, len(gang.members)) == (("worker",), 4, 4)
    messages = [(d.severity, d.message) for d in plan.diagnostics]
    assert (
        Severity.WARNING,
        "pod ns/train-7-master-0 does not match any Karta pod group member definition",
    ) in messages
    assert any(sev is Severity.ERROR and "no component found for pod stray" in msg for sev, msg in messages)
    assert plan.to_dict()["diagnostics"]


def test_alpha_instance_scoped_minimum() -> None:
    k = karta(
        component("root"),
        component(
            "svc",
            "root",
            specDefinition=pts(".spec.services[].template"),
            instanceIdPath=".spec.services | keys[]",
            scaleDefinition={"replicasPath": ".spec.services[].replicas"},
            podSelector={
                "componentTypeSelector": {"keyPath": ".metadata.labels.svc"},
                "componentInstanceSelector": {"idPath": ".metadata.labels.svc"},
            },
        ),
        component("other", "root", specDefinition=pts(".o"), podSelector=selector(".metadata.labels.o")),
        gang={
            "podGroups": [
                {
                    "name": "per-svc",
                    "members": [{"componentName": "svc", "groupByKeyPaths": [".metadata.labels.svc"]}],
                }
            ]
        },
    )
    obj = {"spec": {"services": {"a": {"replicas": 2}, "b": {"replicas": 3}}}}
    pods = [pod("b-0", {"svc": "b"}), pod("a-0", {"svc": "a"}), pod("a-1", {"svc": "a"})]
    plan = compute_gang_plan(make_factory(k, obj), pods)
    assert [(g.alpha_keys, g.min_member, g.members) for g in plan.gangs] == [
        (("a",), 2, ("a-0", "a-1")),
        (("b",), 3, ("b-0",)),
    ]


def test_both_formats_present_uses_pod_group() -> None:
    gang_def = {**SUB_GROUPS, "podGroups": [{"name": "alpha", "members": [{"componentName": "pytorchjob"}]}]}
    plan = compute_gang_plan(make_factory(pytorch_karta(gang_def), TRAIN_7), train_pods())
    assert plan.format == "podGroup" and plan.gangs[0].name == "job"


def test_no_gang_instructions() -> None:
    plan = compute_gang_plan(make_factory(pytorch_karta(None), TRAIN_7), train_pods())
    assert plan.gangs == () and plan.format is None and plan.to_dict() == {"gangs": []}
    assert compute_gang_plan(make_factory(pytorch_karta({}), TRAIN_7)).gangs == ()
