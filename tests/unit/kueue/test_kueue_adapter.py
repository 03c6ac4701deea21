"""karta as Kueue's adapter (docs/kueue.md): eligibility, the Workload (Kueue's name rule, owner,
labels), an admission written into the pod templates and restored (round trip to the object as
suspended at creation) on catalog definitions with corpus manifests (PyTorchJob, JobSet, RayJob) and
a made-up CRD Kueue has no integration for, conflicts as Kueue reports them, equivalence, finished."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import catalog_definition
from karta.errors import KueueError
from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.kueue.activity import is_active, pods_ready
from karta.kueue.admission import admission_infos, restore_infos
from karta.kueue.eligibility import eligibility
from karta.kueue.finished import finished_condition
from karta.kueue.names import RESTORE_ANNOTATION, workload_name
from karta.kueue.patches import is_suspended, start, stop, suspend
from karta.kueue.workload import build_workload, equivalent, pod_set_members, priority_class_ref
from karta.model import Karta, karta_from_dict

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT.parent / "shared" / "corpus" / "workloads"
EVALUATOR = Evaluator(trusted=True)
UID = "0b6f3c1e-7d2a-4c1b-9e55-000000000025"

GPU_FLAVOR = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "ResourceFlavor",
    "metadata": {"name": "a100"},
    "spec": {
        "nodeLabels": {"gpu.example.com/model": "a100"},
        "nodeTaints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
        "tolerations": [{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
    },
}
CPU_FLAVOR = {"metadata": {"name": "cpu"}, "spec": {"nodeLabels": {"pool": "cpu"}}}


def catalog(slug: str) -> Karta:
    karta = catalog_definition(slug)
    assert karta is not None
    return karta


def made_up(name: str) -> Karta:
    return karta_from_dict(yaml.safe_load((ROOT / "tests" / "definitions" / f"{name}.yaml").read_text()))


def corpus(relative: str) -> dict[str, Any]:
    obj: dict[str, Any] = next(d for d in yaml.safe_load_all((CORPUS / relative).read_text()) if d)
    metadata = obj.setdefault("metadata", {})
    metadata.setdefault("namespace", "team-a")
    metadata["uid"] = UID
    metadata.setdefault("labels", {})["kueue.x-k8s.io/queue-name"] = "lq"
    return obj


def training_run() -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "TrainingRun",
        "metadata": {
            "name": "run-1",
            "namespace": "team-a",
            "uid": UID,
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
        },
        "spec": {
            "trainer": {
                "replicas": 2,
                "podLabels": {"app": "trainer"},
                "containers": [
                    {"name": "t", "image": "train:1", "resources": {"limits": {"nvidia.com/gpu": 4}}}
                ],
            },
            "launcher": {
                "metadata": {"labels": {"app": "launcher"}},
                "podSpec": {"containers": [{"name": "l", "image": "launch:1"}]},
            },
        },
    }


def admitted(workload: dict[str, Any], flavors: dict[str, str], **extra: Any) -> dict[str, Any]:
    """The Workload as Kueue leaves it once admitted: every PodSet on ``flavors`` (resource → flavor)."""
    out = copy.deepcopy(workload)
    out["status"] = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {"name": p["name"], "flavors": dict(flavors), "count": p["count"]}
                for p in out["spec"]["podSets"]
            ],
        },
        **extra,
    }
    return out


FLAVORS = {"a100": GPU_FLAVOR, "cpu": CPU_FLAVOR}

CASES = [
    ("kubeflow-org-pytorchjob-v1", "kubeflow-training-v1/pytorchjob-simple.yaml"),
    ("kubeflow-org-pytorchjob-v1", "kubeflow-training-v1/pytorchjob-elastic-imagenet.yaml"),
    ("jobset-x-k8s-io-jobset-v1alpha2", "jobset/pytorch-resnet.yaml"),
    ("jobset-x-k8s-io-jobset-v1alpha2", "jobset/paralleljobs.yaml"),
    ("ray-io-rayjob-v1", "kuberay/rayjob-sample.yaml"),
]


def _round_trip(karta: Karta, obj: dict[str, Any], flavor: str = "a100") -> None:
    assert eligibility(karta).eligible
    created = ComponentFactory(karta, obj, evaluator=EVALUATOR)
    held = suspend(created)  # what the webhook admits
    factory = ComponentFactory(karta, held, evaluator=EVALUATOR)
    assert is_suspended(factory)
    built = build_workload(factory)
    workload = admitted(built.obj, {"nvidia.com/gpu": flavor, "cpu": flavor})
    infos = admission_infos(workload, FLAVORS)
    running = start(factory, workload, infos)
    assert running != held
    running_factory = ComponentFactory(karta, running, evaluator=EVALUATOR)
    assert not is_suspended(running_factory)
    # every PodSet's pods now carry the flavor's node labels and tolerations, and Kueue's labels
    rebuilt = build_workload(running_factory)
    for pod_set in rebuilt.obj["spec"]["podSets"]:
        template = pod_set["template"]
        spec = template["spec"]
        affinity = spec.get("affinity", {}).get("nodeAffinity")
        if pod_set["count"] == 0:  # nothing in the object to write into
            continue
        (key, value), *_ = FLAVORS[flavor]["spec"]["nodeLabels"].items()
        if "nodeSelector" in spec:
            assert spec["nodeSelector"][key] == value
            for toleration in FLAVORS[flavor]["spec"].get("tolerations", []):
                assert toleration in spec["tolerations"]
        else:  # a fragmented pod spec: the node labels as a required node affinity
            terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            assert all(
                {"key": key, "operator": "In", "values": [value]} in t["matchExpressions"] for t in terms
            )
        labels = template.get("metadata", {}).get("labels", {})
        assert labels.get("kueue.x-k8s.io/podset") == pod_set["name"]
        assert labels.get("kueue.x-k8s.io/cluster-queue-name") == "cq"
    # the same Workload still describes the running workload (tolerations ignored once admitted)
    assert equivalent(workload, rebuilt, admitted=True)
    # writing the admission again changes nothing (a controller restarted before it saw the write)
    assert start(running_factory, workload, infos) == running
    # eviction: suspended, templates as at creation: the object the webhook admitted
    stopped = stop(running_factory, workload)
    assert stopped == held
    # from the values start saved on the object, also when the Workload is gone
    assert RESTORE_ANNOTATION in running["metadata"]["annotations"]
    assert stop(running_factory, None) == held
    # from the Workload's PodSet templates when the object lost the saved values
    unsaved = copy.deepcopy(running)
    del unsaved["metadata"]["annotations"][RESTORE_ANNOTATION]
    if not unsaved["metadata"]["annotations"]:
        del unsaved["metadata"]["annotations"]
    assert stop(ComponentFactory(karta, unsaved, evaluator=EVALUATOR), workload) == held
    assert stop(ComponentFactory(karta, stopped, evaluator=EVALUATOR), workload) == held
    assert equivalent(
        workload, build_workload(ComponentFactory(karta, stopped, evaluator=EVALUATOR)), admitted=False
    )


@pytest.mark.parametrize(("slug", "manifest"), CASES)
def test_round_trip_on_the_catalog_and_the_corpus(slug: str, manifest: str) -> None:
    _round_trip(catalog(slug), corpus(manifest))


def test_round_trip_on_a_crd_kueue_does_not_know() -> None:
    _round_trip(made_up("example-com-trainingrun-v1"), training_run(), "cpu")


def test_the_workload_follows_kueues_contract() -> None:
    factory = ComponentFactory(
        catalog("kubeflow-org-pytorchjob-v1"),
        corpus("kubeflow-training-v1/pytorchjob-simple.yaml"),
        evaluator=EVALUATOR,
    )
    built = build_workload(factory, label_keys_to_copy=["kueue.x-k8s.io/queue-name"])
    metadata = built.obj["metadata"]
    assert metadata["name"] == workload_name("PyTorchJob", "kubeflow.org", "pytorch-simple", UID)
    assert metadata["name"].startswith("pytorchjob-pytorch-simple-")
    assert metadata["namespace"] == "kubeflow"
    assert metadata["ownerReferences"] == [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "name": "pytorch-simple",
            "uid": UID,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert metadata["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
    assert metadata["labels"]["kueue.x-k8s.io/job-uid"] == UID
    assert metadata["labels"]["kueue.x-k8s.io/queue-name"] == "lq"
    assert metadata["labels"]["app.kubernetes.io/managed-by"] == "karta"
    assert built.obj["spec"]["queueName"] == "lq"
    assert [(p["name"], p["count"]) for p in built.obj["spec"]["podSets"]] == [("master", 1), ("worker", 1)]
    assert pod_set_members(built.obj) == built.members
    assert set(built.members) == {"master", "worker"}


def test_elastic_minimum_is_not_sent_and_partial_admission_is_refused() -> None:
    karta = catalog("kubeflow-org-pytorchjob-v1")
    factory = ComponentFactory(
        karta, corpus("kubeflow-training-v1/pytorchjob-elastic-imagenet.yaml"), evaluator=EVALUATOR
    )
    built = build_workload(factory)
    assert all("minCount" not in p for p in built.obj["spec"]["podSets"])
    # no Master in this manifest: no PodSet of an empty template (Kueue's schema requires containers)
    assert [p["name"] for p in built.obj["spec"]["podSets"]] == ["worker"]
    workload = admitted(built.obj, {"cpu": "cpu"})
    workload["status"]["admission"]["podSetAssignments"][-1]["count"] = 0
    with pytest.raises(KueueError, match="no write-back path for replicas"):
        start(factory, workload, admission_infos(workload, FLAVORS))


def test_kueue_name_rule_matches_kueues_own_test_cases() -> None:
    # pkg/controller/jobframework/workload_names_test.go (Kueue v0.17.0)
    assert workload_name("Job", "batch", "name", "uid") == "job-name-ef3a1"
    long = (
        "marketing-campaign-autumn-2024-region-north-america-department-digital-strategy-sub-department-"
        "social-media-engagement-tracker-and-analytics-dashboard-v2-final-revision-by-engineering-team-lead-"
        "senior-architect-validation-checked-approved-by-legal-and-ops-dept"
    )
    assert workload_name("Job", "batch", long, "uid", short=True) == (
        "job-marketing-campaign-autumn-2024-region-north-america-d-218b8"
    )
    assert workload_name("Job", "batch", long, "uid").endswith("-approved-by-l-218b8")
    assert len(workload_name("Job", "batch", long, "uid")) == 253


def test_ineligible_definitions_say_which_field() -> None:
    dynamo = eligibility(catalog("nvidia-com-dynamographdeployment-v1alpha1"))
    assert not dynamo.eligible
    assert dynamo.reason is not None and "suspendDefinition.suspendActions" in dynamo.reason
    data = yaml.safe_load((ROOT / "tests" / "definitions" / "example-com-trainingrun-v1.yaml").read_text())
    trainer = data["spec"]["structureDefinition"]["childComponents"][0]
    del trainer["specDefinition"]["fragmentedPodSpecDefinition"]["nodeAffinityPath"]
    result = eligibility(karta_from_dict(data))
    assert result.reason == (
        "component trainer's fragmentedPodSpecDefinition has no nodeAffinityPath: the admitted "
        "flavor's node labels cannot be written into its pods"
    )
    del data["spec"]["structureDefinition"]["rootComponent"]["suspendDefinition"]["resumeActions"]
    assert "resumeActions" in (eligibility(karta_from_dict(data)).reason or "")
    fine = eligibility(made_up("example-com-trainingrun-v1"))
    assert fine.eligible and any("no tolerations field" in n for n in fine.notes)


def test_a_node_selector_key_set_to_another_value_is_a_conflict_as_kueue_reports_it() -> None:
    karta = catalog("kubeflow-org-pytorchjob-v1")
    obj = corpus("kubeflow-training-v1/pytorchjob-simple.yaml")
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] = {
        "gpu.example.com/model": "h100"
    }
    factory = ComponentFactory(
        karta, suspend(ComponentFactory(karta, obj, evaluator=EVALUATOR)), evaluator=EVALUATOR
    )
    workload = admitted(build_workload(factory).obj, {"nvidia.com/gpu": "a100"})
    with pytest.raises(KueueError) as caught:
        start(factory, workload, admission_infos(workload, FLAVORS))
    assert str(caught.value) == (
        "component worker: invalid admission check PodSetUpdate: conflict for "
        "nodeSelector: conflict for key=gpu.example.com/model, value1=h100, value2=a100"
    )


def test_admission_check_updates_merge_and_conflict() -> None:
    karta = catalog("kubeflow-org-pytorchjob-v1")
    factory = ComponentFactory(
        karta, corpus("kubeflow-training-v1/pytorchjob-simple.yaml"), evaluator=EVALUATOR
    )
    built = build_workload(factory).obj
    update = {
        "name": "worker",
        "labels": {"team": "a"},
        "annotations": {"provisioned": "yes"},
        "nodeSelector": {"zone": "z1"},
        "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
    }
    workload = admitted(
        built, {"cpu": "cpu"}, admissionChecks=[{"name": "prov", "state": "Ready", "podSetUpdates": [update]}]
    )
    worker = {i.name: i for i in admission_infos(workload, FLAVORS)}["worker"]
    assert worker.node_selector == {"pool": "cpu", "zone": "z1"}
    assert worker.labels["team"] == "a" and worker.labels["kueue.x-k8s.io/podset"] == "worker"
    assert worker.annotations == {"provisioned": "yes"}
    assert worker.tolerations == ({"key": "spot", "operator": "Exists", "effect": "NoSchedule"},)
    update["nodeSelector"] = {"pool": "gpu"}
    with pytest.raises(KueueError) as caught:
        admission_infos(workload, FLAVORS)
    assert str(caught.value).endswith(
        "in admission check 'prov': invalid admission check PodSetUpdate: conflict for nodeSelector: "
        "conflict for key=pool, value1=cpu, value2=gpu"
    )


def test_unknown_flavor_and_unadmitted_workload() -> None:
    factory = ComponentFactory(
        catalog("kubeflow-org-pytorchjob-v1"),
        corpus("kubeflow-training-v1/pytorchjob-simple.yaml"),
        evaluator=EVALUATOR,
    )
    built = build_workload(factory).obj
    with pytest.raises(KueueError, match="not admitted"):
        admission_infos(built, FLAVORS)
    with pytest.raises(KueueError, match=r"ResourceFlavor spot .* not known"):
        admission_infos(admitted(built, {"cpu": "spot"}), FLAVORS)
    assert [i.name for i in restore_infos(built)] == ["master", "worker"]


def test_fragmented_pod_spec_refuses_tolerations() -> None:
    karta = made_up("example-com-trainingrun-v1")
    factory = ComponentFactory(
        karta, suspend(ComponentFactory(karta, training_run(), evaluator=EVALUATOR)), evaluator=EVALUATOR
    )
    workload = admitted(build_workload(factory).obj, {"nvidia.com/gpu": "a100"})
    with pytest.raises(
        KueueError, match="component trainer: the admission of PodSet trainer brings tolerations"
    ):
        start(factory, workload, admission_infos(workload, FLAVORS))


def test_no_queue_label_and_no_uid_are_errors() -> None:
    karta = catalog("kubeflow-org-pytorchjob-v1")
    obj = corpus("kubeflow-training-v1/pytorchjob-simple.yaml")
    del obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    with pytest.raises(KueueError, match=r"no kueue\.x-k8s\.io/queue-name label"):
        build_workload(ComponentFactory(karta, obj, evaluator=EVALUATOR))
    obj = corpus("kubeflow-training-v1/pytorchjob-simple.yaml")
    del obj["metadata"]["uid"]
    with pytest.raises(KueueError, match=r"no metadata\.uid"):
        build_workload(ComponentFactory(karta, obj, evaluator=EVALUATOR))


def test_priority_from_the_label_or_the_pods() -> None:
    karta = catalog("kubeflow-org-pytorchjob-v1")
    obj = corpus("kubeflow-training-v1/pytorchjob-simple.yaml")
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["priorityClassName"] = "high"
    factory = ComponentFactory(karta, obj, evaluator=EVALUATOR)
    assert priority_class_ref(factory) == {
        "group": "scheduling.k8s.io",
        "kind": "PriorityClass",
        "name": "high",
    }
    built = build_workload(factory, priority=1000)
    assert built.obj["spec"]["priority"] == 1000
    assert built.obj["spec"]["priorityClassRef"]["name"] == "high"
    assert "priorityClassRef" not in build_workload(factory).obj["spec"]
    obj["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "urgent"
    assert priority_class_ref(ComponentFactory(karta, obj, evaluator=EVALUATOR)) == {
        "group": "kueue.x-k8s.io",
        "kind": "WorkloadPriorityClass",
        "name": "urgent",
    }


def test_a_changed_workload_is_not_equivalent() -> None:
    karta = catalog("kubeflow-org-pytorchjob-v1")
    obj = corpus("kubeflow-training-v1/pytorchjob-simple.yaml")
    first = build_workload(ComponentFactory(karta, obj, evaluator=EVALUATOR))
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 3
    second = build_workload(ComponentFactory(karta, obj, evaluator=EVALUATOR))
    assert equivalent(first.obj, first, admitted=False)
    assert not equivalent(first.obj, second, admitted=False)


def test_finished_from_the_definitions_status() -> None:
    karta = made_up("example-com-trainingrun-v1")
    obj = training_run()
    assert finished_condition(ComponentFactory(karta, obj, evaluator=EVALUATOR)) is None
    obj["status"] = {"phase": "Done"}
    assert finished_condition(ComponentFactory(karta, obj, evaluator=EVALUATOR), observed_generation=2) == {
        "type": "Finished",
        "status": "True",
        "reason": "Succeeded",
        "message": "the workload is Completed",
        "observedGeneration": 2,
    }
    obj["status"] = {"phase": "Broken"}
    condition = finished_condition(ComponentFactory(karta, obj, evaluator=EVALUATOR))
    assert condition is not None and condition["reason"] == "Failed"
    pytorch = corpus("kubeflow-training-v1/pytorchjob-simple.yaml")
    pytorch["status"] = {
        "conditions": [
            {"type": "Created", "status": "True", "message": "created"},
            {"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded", "message": "job done"},
        ]
    }
    done = finished_condition(
        ComponentFactory(catalog("kubeflow-org-pytorchjob-v1"), pytorch, evaluator=EVALUATOR)
    )
    assert done is not None and (done["reason"], done["message"]) == ("Succeeded", "job done")


def test_admission_check_annotations_on_a_made_up_crd_are_written_and_removed() -> None:
    karta = made_up("example-com-trainingrun-v1")
    held = suspend(ComponentFactory(karta, training_run(), evaluator=EVALUATOR))
    factory = ComponentFactory(karta, held, evaluator=EVALUATOR)
    built = build_workload(factory)
    assert built.members == {"trainer": (("trainer", ""),), "launcher": (("launcher", ""),)}
    updates = [
        {
            "name": name,
            "annotations": {"provisioned": "yes"},
            "labels": {"team": "a"},
            "nodeSelector": {"zone": "z1"},
        }
        for name in ("trainer", "launcher")
    ]
    workload = admitted(
        built.obj,
        {"cpu": "cpu"},
        admissionChecks=[{"name": "prov", "state": "Ready", "podSetUpdates": updates}],
    )
    running = start(factory, workload, admission_infos(workload, FLAVORS))
    trainer, launcher = running["spec"]["trainer"], running["spec"]["launcher"]
    assert running["spec"]["paused"] is False
    assert trainer["podAnnotations"] == {"provisioned": "yes"}
    assert trainer["podLabels"]["team"] == "a" and trainer["podLabels"]["app"] == "trainer"
    assert trainer["nodeAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "pool", "operator": "In", "values": ["cpu"]},
                        {"key": "zone", "operator": "In", "values": ["z1"]},
                    ]
                }
            ]
        }
    }
    assert launcher["podSpec"]["nodeSelector"] == {"pool": "cpu", "zone": "z1"}
    assert launcher["metadata"]["annotations"] == {"provisioned": "yes"}
    assert launcher["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "launcher"
    assert stop(ComponentFactory(karta, running, evaluator=EVALUATOR), workload) == held


def test_node_affinity_terms_each_gain_the_flavor_and_a_contrary_term_conflicts() -> None:
    karta = made_up("example-com-trainingrun-v1")
    obj = training_run()
    terms = [
        {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["amd64"]}]},
        {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["arm64"]}]},
    ]
    obj["spec"]["trainer"]["nodeAffinity"] = {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
    }
    held = suspend(ComponentFactory(karta, obj, evaluator=EVALUATOR))
    factory = ComponentFactory(karta, held, evaluator=EVALUATOR)
    workload = admitted(build_workload(factory).obj, {"cpu": "cpu"})
    running = start(factory, workload, admission_infos(workload, FLAVORS))
    written = running["spec"]["trainer"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert [t["matchExpressions"][-1] for t in written["nodeSelectorTerms"]] == [
        {"key": "pool", "operator": "In", "values": ["cpu"]}
    ] * 2
    assert stop(ComponentFactory(karta, running, evaluator=EVALUATOR), workload) == held
    terms[0]["matchExpressions"].append({"key": "pool", "operator": "In", "values": ["gpu"]})
    factory = ComponentFactory(
        karta, suspend(ComponentFactory(karta, obj, evaluator=EVALUATOR)), evaluator=EVALUATOR
    )
    workload = admitted(build_workload(factory).obj, {"cpu": "cpu"})
    with pytest.raises(KueueError) as caught:
        start(factory, workload, admission_infos(workload, FLAVORS))
    assert str(caught.value) == (
        "component trainer: invalid admission check PodSetUpdate: conflict for nodeSelector: "
        "conflict for key=pool, value1=gpu, value2=cpu"
    )


def test_sub_group_pod_sets_write_into_every_instance_they_stand_for() -> None:
    obj = corpus("kubeflow-training-v1/pytorchjob-simple.yaml")
    karta_data = yaml.safe_load(
        (ROOT / "tests" / "definitions" / "pytorchjob-one-component.yaml").read_text()
    )
    karta_data["spec"]["structureDefinition"]["rootComponent"]["suspendDefinition"] = {
        "suspendActions": [{"path": ".spec.runPolicy.suspend", "value": "true"}],
        "resumeActions": [{"path": ".spec.runPolicy.suspend", "value": "false"}],
    }
    karta = karta_from_dict(karta_data)
    held = suspend(ComponentFactory(karta, obj, evaluator=EVALUATOR))
    factory = ComponentFactory(karta, held, evaluator=EVALUATOR)
    built = build_workload(factory)
    # Master and Worker have the same template in this manifest: one PodSet stands for both
    assert built.members == {"replica": (("replica", "Master"), ("replica", "Worker"))}
    workload = admitted(built.obj, {"cpu": "cpu"})
    running = start(factory, workload, admission_infos(workload, FLAVORS))
    for replica in ("Master", "Worker"):
        template = running["spec"]["pytorchReplicaSpecs"][replica]["template"]
        assert template["spec"]["nodeSelector"] == {"pool": "cpu"}
        assert template["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "replica"
    assert stop(ComponentFactory(karta, running, evaluator=EVALUATOR), workload) == held


def test_a_workload_karta_did_not_make_is_refused() -> None:
    with pytest.raises(KueueError, match="not a Workload karta made"):
        pod_set_members({"metadata": {"name": "wl"}, "spec": {}})


def _pod(phase: str, *, ready: bool = False, terminating: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "p"}
    if terminating:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: dict[str, Any] = {"phase": phase}
    if ready:
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    return {"metadata": metadata, "status": status}


def test_active_and_ready_pods() -> None:
    workload = {"spec": {"podSets": [{"name": "a", "count": 1}, {"name": "b", "count": 2}]}}
    assert not is_active([]) and not is_active([_pod("Succeeded"), _pod("Failed")])
    assert is_active([_pod("Succeeded"), _pod("Running", terminating=True)])
    assert is_active([_pod("Pending")])
    ready = [_pod("Running", ready=True), _pod("Running", ready=True), _pod("Succeeded")]
    assert pods_ready(ready, workload)
    assert not pods_ready([*ready[:2], _pod("Running")], workload)
    assert not pods_ready([*ready[:2], _pod("Running", ready=True, terminating=True)], workload)


def test_without_saved_values_or_workload_a_stop_only_suspends() -> None:
    karta = catalog("kubeflow-org-pytorchjob-v1")
    held = suspend(
        ComponentFactory(karta, corpus("kubeflow-training-v1/pytorchjob-simple.yaml"), evaluator=EVALUATOR)
    )
    factory = ComponentFactory(karta, held, evaluator=EVALUATOR)
    workload = admitted(build_workload(factory).obj, {"cpu": "cpu"})
    running = start(factory, workload, admission_infos(workload, FLAVORS))
    del running["metadata"]["annotations"][RESTORE_ANNOTATION]
    stopped = stop(ComponentFactory(karta, running, evaluator=EVALUATOR), None)
    assert stopped["spec"]["runPolicy"]["suspend"] is True
    worker = stopped["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    assert worker["spec"]["nodeSelector"] == {"pool": "cpu"}  # Kueue: "unable to restore pod templates"
