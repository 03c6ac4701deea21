"""Volcano (docs/spec/gang-backends.md#volcano-rendering, #volcano-example) and coscheduling
(#coscheduling-rendering, #coscheduling-example) PodGroups: the worked examples, pod bindings, minResources,
the 63-character label rule and the zero-minimum rule."""

from __future__ import annotations

from render_fixtures import definition, managed_metadata, patch_of, pod, run, train_7, train_7_pods

from karta.gang import shorten_name


def test_volcano_worked_example() -> None:
    result = run("volcano", pods=train_7_pods(), queue="default")
    assert list(result.objects) == [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": managed_metadata("train-7-job"),
            "spec": {"minMember": 5, "minTaskMember": {"master": 1, "worker": 4}, "queue": "default"},
        }
    ]
    assert patch_of(result, "train-7-worker-2") == {
        "metadata": {
            "annotations": {"scheduling.k8s.io/group-name": "train-7-job", "volcano.sh/task-spec": "worker"}
        },
        "spec": {"schedulerName": "volcano"},
    }
    assert result.warnings == ()


def test_volcano_min_resources() -> None:
    (group,) = run("volcano", min_resources=True).objects
    assert group["spec"]["minResources"] == {"nvidia.com/gpu": "33"}


def test_volcano_queue_label_and_default() -> None:
    obj = train_7()
    obj["metadata"]["labels"]["scheduling.volcano.sh/queue-name"] = "research"
    (group,) = run("volcano", obj=obj, queue="default").objects
    assert group["spec"]["queue"] == "research"
    (group,) = run("volcano").objects
    assert "queue" not in group["spec"]


def test_volcano_without_sub_groups_has_no_task_minimums() -> None:
    result = run("volcano", definition(podGroup={"name": "job"}), pods=train_7_pods())
    (group,) = result.objects
    assert group["spec"] == {"minMember": 5}
    assert patch_of(result, "train-7-worker-2")["metadata"] == {
        "annotations": {"scheduling.k8s.io/group-name": "train-7-job"}
    }


def test_volcano_priority_class_when_all_templates_agree() -> None:
    obj = train_7()
    for spec in obj["spec"]["pytorchReplicaSpecs"].values():
        spec["template"]["spec"]["priorityClassName"] = "high"
    (group,) = run("volcano", obj=obj).objects
    assert group["spec"]["priorityClassName"] == "high"
    obj["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["priorityClassName"] = "low"
    (group,) = run("volcano", obj=obj).objects
    assert "priorityClassName" not in group["spec"]


def test_volcano_zero_minimum_is_allowed() -> None:
    obj = train_7()
    for spec in obj["spec"]["pytorchReplicaSpecs"].values():
        spec["replicas"] = 0
    (group,) = run("volcano", definition(podGroup={"name": "job"}), obj=obj).objects
    assert group["spec"]["minMember"] == 0


def test_coscheduling_worked_example() -> None:
    result = run("coscheduling", pods=train_7_pods(), schedule_timeout_seconds=300)
    assert list(result.objects) == [
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": managed_metadata("train-7-job"),
            "spec": {"minMember": 5, "scheduleTimeoutSeconds": 300},
        }
    ]
    expected = {
        "metadata": {"labels": {"scheduling.x-k8s.io/pod-group": "train-7-job"}},
        "spec": {"schedulerName": "scheduler-plugins-scheduler"},
    }
    assert all(p.patch == expected for p in result.pod_patches)
    assert len(result.pod_patches) == 5
    assert any("no sub-groups" in w for w in result.warnings)


def test_coscheduling_defaults_and_options() -> None:
    result = run("coscheduling", pods=train_7_pods(), scheduler_name="second", min_resources=True)
    (group,) = result.objects
    assert group["spec"] == {"minMember": 5, "minResources": {"nvidia.com/gpu": "33"}}
    assert patch_of(result, "train-7-master-0")["spec"] == {"schedulerName": "second"}


def test_coscheduling_zero_minimum_creates_no_group() -> None:
    obj = train_7()
    for spec in obj["spec"]["pytorchReplicaSpecs"].values():
        spec["replicas"] = 0
    result = run("coscheduling", definition(podGroup={"name": "job"}), obj=obj, pods=train_7_pods())
    assert result.objects == ()
    assert result.pod_patches == ()
    assert any("minimum 0" in w for w in result.warnings)


def test_coscheduling_names_fit_a_label_value() -> None:
    obj = train_7()
    obj["metadata"]["name"] = "a" * 70
    result = run("coscheduling", obj=obj, pods=[pod("p", {"training.kubeflow.org/replica-type": "master"})])
    (group,) = result.objects
    name = group["metadata"]["name"]
    assert len(name) == 63
    assert name == shorten_name("a" * 70 + "-job", 63)
    assert name.startswith("a" * 54 + "-")
    assert patch_of(result, "p")["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == name
    # Volcano only needs a DNS subdomain
    (group,) = run("volcano", obj=obj).objects
    assert group["metadata"]["name"] == "a" * 70 + "-job"


def test_topology_is_dropped_with_a_warning() -> None:
    karta = definition(
        podGroup={"name": "job", "topology": {"topologyName": "dc", "requiredTopologyLevel": "rack"}}
    )
    assert any("topology" in w for w in run("coscheduling", karta).warnings)
    assert any("topology" in w for w in run("volcano", karta).warnings)
