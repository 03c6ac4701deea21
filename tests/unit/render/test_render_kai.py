"""KAI PodGroups: the worked example of docs/spec/gang-backends.md#kai-example and its variants,
docs/spec/format.md#kai-current (topology rules and messages) and 13.4 (alpha names, keys, the DNS check), and
the 2.6 defaults."""

from __future__ import annotations

import pytest
from render_fixtures import OWNER_REF, UID, definition, patch_of, pod, run, train_7, train_7_pods

from karta.errors import GangError

KEYED_BY_JOB = {
    "podGroups": [
        {
            "name": "job",
            "members": [
                {
                    "componentName": "pytorchjob",
                    "groupByKeyPaths": ['.metadata.labels["training.kubeflow.org/job-name"]'],
                }
            ],
        }
    ]
}


def test_worked_example_2_9() -> None:
    result = run("kai", pods=train_7_pods())
    assert list(result.objects) == [
        {
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "kind": "PodGroup",
            "metadata": {
                "name": f"pg-{UID}-job",
                "namespace": "ml-team",
                "labels": {"kai.scheduler/queue": "team-a", "kueue.x-k8s.io/queue-name": "team-a"},
                "ownerReferences": [OWNER_REF],
            },
            "spec": {
                "queue": "team-a",
                "minSubGroup": 2,
                "subGroups": [{"name": "master", "minMember": 1}, {"name": "worker", "minMember": 4}],
            },
        }
    ]
    assert patch_of(result, "train-7-worker-2") == {
        "metadata": {
            "annotations": {"pod-group-name": f"pg-{UID}-job"},
            "labels": {"kai.scheduler/subgroup-name": "worker"},
        },
        "spec": {"schedulerName": "kai-scheduler"},
    }
    assert patch_of(result, "train-7-master-0")["metadata"]["labels"] == {
        "kai.scheduler/subgroup-name": "master"
    }
    assert result.warnings == ()
    assert result.owner_patch is None


def test_the_preview_does_not_depend_on_pods() -> None:
    assert run("kai").objects == run("kai", pods=train_7_pods()).objects


def test_without_sub_groups_min_member_is_the_root_subtree_scale() -> None:
    (group,) = run("kai", definition(podGroup={"name": "job"})).objects
    assert group["spec"] == {"queue": "team-a", "minMember": 5}


def test_elastic_worker_minimum() -> None:
    obj = train_7()
    obj["spec"]["elasticPolicy"] = {"minReplicas": 2, "maxReplicas": 4}
    (group,) = run("kai", obj=obj).objects
    assert group["spec"]["subGroups"] == [
        {"name": "master", "minMember": 1},
        {"name": "worker", "minMember": 2},
    ]


def test_topology_variant() -> None:
    topology = {
        "topologyName": "dc-topology",
        "requiredTopologyLevel": "topology.kubernetes.io/rack",
        "preferredTopologyLevel": "kubernetes.io/hostname",
    }
    karta = definition(
        podGroup={
            "name": "job",
            "topology": topology,
            "subGroups": [
                {"componentName": "master"},
                {
                    "componentName": "worker",
                    "topology": {"topologyName": "dc-topology", "requiredTopologyLevel": "zone"},
                },
            ],
        }
    )
    (group,) = run("kai", karta).objects
    assert group["spec"]["topologyConstraint"] == {
        "topology": "dc-topology",
        "requiredTopologyLevel": "topology.kubernetes.io/rack",
        "preferredTopologyLevel": "kubernetes.io/hostname",
    }
    assert group["spec"]["subGroups"][1] == {
        "name": "worker",
        "minMember": 4,
        "topologyConstraint": {"topology": "dc-topology", "requiredTopologyLevel": "zone"},
    }


@pytest.mark.parametrize(
    ("topology", "message"),
    [
        ({"requiredTopologyLevel": "rack"}, "topology constraint must include topology name"),
        ({"topologyName": "t"}, "topology constraint must include preferred or required topology level"),
    ],
)
def test_topology_rules(topology: dict[str, str], message: str) -> None:
    with pytest.raises(GangError, match=message):
        run("kai", definition(podGroup={"name": "job", "topology": topology}))


def test_sub_group_without_scale_is_the_kai_error() -> None:
    obj = train_7()
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 0
    with pytest.raises(GangError, match="component worker must expose a replica scale definition"):
        run("kai", obj=obj)


def test_alpha_variant_keyed_by_job_name() -> None:
    result = run("kai", definition(**KEYED_BY_JOB), pods=train_7_pods())
    (group,) = result.objects
    assert group["metadata"]["name"] == f"pg-{UID}-train-7"
    assert group["spec"] == {"queue": "team-a", "minMember": 5}
    assert patch_of(result, "train-7-worker-2") == {
        "metadata": {"annotations": {"pod-group-name": f"pg-{UID}-train-7"}},
        "spec": {"schedulerName": "kai-scheduler"},
    }


def test_alpha_without_keys_is_named_by_the_uid_alone() -> None:
    karta = definition(podGroups=[{"name": "job", "members": [{"componentName": "pytorchjob"}]}])
    (group,) = run("kai", karta, pods=train_7_pods()).objects
    assert group["metadata"]["name"] == f"pg-{UID}"


def test_alpha_without_pods_renders_nothing() -> None:
    assert run("kai", definition(**KEYED_BY_JOB)).objects == ()


def test_alpha_keys_must_make_a_dns_name() -> None:
    pods = [
        pod(
            "p", {"training.kubeflow.org/job-name": "Train_7", "training.kubeflow.org/replica-type": "master"}
        )
    ]
    result = run("kai", definition(**KEYED_BY_JOB), pods=pods)
    # a per-pod problem: KAI fails that pod; we report it and render the rest
    assert result.objects == ()
    assert any(
        f'Karta grouping keys [Train_7] produce invalid Kubernetes PodGroup name "pg-{UID}-Train_7"' in w
        for w in result.warnings
    )


def test_alpha_pod_without_member_is_reported() -> None:
    karta = definition(
        podGroups=[
            {
                "name": "workers",
                "members": [{"componentName": "worker", "filters": ['.metadata.labels.tier == "gpu"']}],
            }
        ]
    )
    pods = [pod("w", {"training.kubeflow.org/replica-type": "worker", "tier": "cpu"})]
    result = run("kai", karta, pods=pods)
    assert result.objects == ()
    assert any("does not match any Karta pod group member definition" in w for w in result.warnings)


def test_workload_without_uid_is_a_clear_error() -> None:
    obj = train_7()
    del obj["metadata"]["uid"]
    with pytest.raises(GangError, match=r"has no metadata\.uid"):
        run("kai", obj=obj)


def test_several_owners_are_an_error() -> None:
    obj = train_7()
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1"},
        {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "2"},
    ]
    with pytest.raises(GangError, match="2 owner references"):
        run("kai", obj=obj)


def test_defaults_of_2_6_from_owner_labels_and_annotations() -> None:
    obj = train_7()
    del obj["metadata"]["labels"]["kai.scheduler/queue"]
    obj["metadata"]["labels"].update(
        {
            "project": "research",
            "priorityClassName": "train",
            "kai.scheduler/preemptibility": "non-preemptible",
        }
    )
    obj["metadata"]["annotations"] = {
        "kai.scheduler/preemption-delay": "5m",
        "kai.scheduler/staleness-grace-period": "-1s",
        "kai.scheduler/topology": "dc",
        "kai.scheduler/topology-required-placement": "rack",
    }
    (group,) = run("kai", definition(podGroup={"name": "job"}), obj=obj).objects
    assert group["metadata"]["annotations"] == obj["metadata"]["annotations"]
    assert group["spec"] == {
        "queue": "research",
        "priorityClassName": "train",
        "preemptibility": "non-preemptible",
        "minMember": 5,
        "topologyConstraint": {"topology": "dc", "requiredTopologyLevel": "rack"},
        "preemptionDelay": "5m",
        "stalenessGracePeriod": "-1s",
    }


def test_karta_topology_replaces_the_owner_annotations() -> None:
    obj = train_7()
    obj["metadata"]["annotations"] = {
        "kai.scheduler/topology": "dc",
        "kai.scheduler/topology-required-placement": "rack",
    }
    karta = definition(
        podGroup={"name": "job", "topology": {"topologyName": "t2", "preferredTopologyLevel": "host"}}
    )
    (group,) = run("kai", karta, obj=obj).objects
    assert group["spec"]["topologyConstraint"] == {"topology": "t2", "preferredTopologyLevel": "host"}


def test_queue_falls_back_to_the_pod_then_default_queue() -> None:
    obj = train_7()
    del obj["metadata"]["labels"]["kai.scheduler/queue"]
    karta = definition(podGroup={"name": "job"})
    pods = [
        pod(
            "train-7-master-0",
            {"training.kubeflow.org/replica-type": "master", "kai.scheduler/queue": "q-pod"},
            priorityClassName="high",
        )
    ]
    (group,) = run("kai", karta, obj=obj, pods=pods).objects
    assert group["spec"]["queue"] == "q-pod"
    assert group["spec"]["priorityClassName"] == "high"
    (group,) = run("kai", karta, obj=obj).objects
    assert group["spec"]["queue"] == "default-queue"


def test_managed_mode_adds_our_labels_and_the_owner_annotation() -> None:
    result = run("kai", kai_managed=True, scheduler_name="kai-2")
    (group,) = result.objects
    assert group["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "karta"
    assert group["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
    assert group["metadata"]["annotations"] == {"run.ai/karta-name": "kubeflow-org-pytorchjob-v1"}
    assert result.owner_patch == {"metadata": {"annotations": {"kai.scheduler/skip-podgrouper": "true"}}}


def test_alpha_gangs_colliding_on_the_kai_name_are_reported() -> None:
    karta = definition(
        podGroups=[
            {"name": "a", "members": [{"componentName": "master"}]},
            {"name": "b", "members": [{"componentName": "worker"}]},
        ]
    )
    result = run("kai", karta, pods=train_7_pods())
    (group,) = result.objects
    assert group["metadata"]["name"] == f"pg-{UID}"
    assert group["spec"]["minMember"] == 1
    assert any("both map to KAI PodGroup" in w for w in result.warnings)
    assert all(
        p.patch["metadata"]["annotations"] == {"pod-group-name": f"pg-{UID}"} for p in result.pod_patches
    )
