"""The gang's owner on the real API server (issue 27 item 3): the topmost workload of the owner
chain WITH gang instructions owns the gang. A Katib Experiment (no gang instructions: it only
contains its Trials) owns a Trial whose runSpec is a PyTorchJob (1 master, 2 workers); the Trial
owns the PyTorchJob, as Katib's trial controller and the training operator make them (the owner
references of ``tests/e2e/cli/test_describe_owner_tree.py``). The test creates the PyTorchJob's
pods; the API server calls the in-process controller's pod webhook (coscheduling), which binds
each pod to the Trial's gang (label ``scheduling.x-k8s.io/pod-group``), the one PodGroup of the
namespace, owned by the Trial, minimum 3; the gang reconciler writes the same one for the Trial
and none for the PyTorchJob. Before, the webhook's top owner was the Experiment, which has no
gang: the pods were left unbound."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from karta.definitions import DefinitionStore
from karta.kube import TopLevel

from ..kubehttp import KubeHTTP, controller_ref, load_manifests, ok, wait
from . import pods_support as bind

pytestmark = pytest.mark.slow

LOCAL_CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def _serve(kube: KubeHTTP, path: Path) -> None:
    (crd,) = load_manifests(path)
    kube.ensure_crd(crd)
    storage = next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))
    wait(
        f"{crd['metadata']['name']} served",
        lambda: kube.get(f"/apis/{crd['spec']['group']}/{storage}").status == 200,
    )


def _created(kube: KubeHTTP, path: str, body: dict[str, Any]) -> dict[str, Any]:
    return ok(kube.post(path, body), 201)


def test_an_experiments_trial_owns_the_gang_its_pods_are_bound_to(
    controllers_cluster: KubeHTTP, corpus: Path, tmp_path: Path
) -> None:
    kube = controllers_cluster
    for path in (
        LOCAL_CORPUS / "crds" / "kubeflow.org_experiments.yaml",
        LOCAL_CORPUS / "crds" / "kubeflow.org_trials.yaml",
        corpus / "crds" / "kubeflow.org_pytorchjobs.yaml",
        corpus / "crds" / "scheduling.x-k8s.io_podgroups.yaml",
    ):
        _serve(kube, path)
    ns = bind.namespace(kube, "gang-owner")
    (run,) = load_manifests(corpus / "workloads" / "kubeflow-training-v1" / "pytorchjob-mnist-nccl-gpu.yaml")
    name = "random-x7k2p"
    run["metadata"] = {"name": name, "namespace": ns}
    run["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 2
    try:
        with bind.running_controller(kube, tmp_path, backend="coscheduling", namespaces=(ns,)) as (
            controller,
            ca,
        ):
            experiment = _created(
                kube,
                f"/apis/kubeflow.org/v1beta1/namespaces/{ns}/experiments",
                {
                    "apiVersion": "kubeflow.org/v1beta1",
                    "kind": "Experiment",
                    "metadata": {"name": "random"},
                    "spec": {
                        "objective": {"type": "maximize", "goal": 0.99, "objectiveMetricName": "accuracy"},
                        "algorithm": {"algorithmName": "random"},
                        "parallelTrialCount": 1,
                        "maxTrialCount": 1,
                        "parameters": [
                            {
                                "name": "lr",
                                "parameterType": "double",
                                "feasibleSpace": {"min": "0.01", "max": "0.05"},
                            }
                        ],
                        "trialTemplate": {
                            "primaryContainerName": "pytorch",
                            "trialParameters": [{"name": "learningRate", "reference": "lr"}],
                            "trialSpec": copy.deepcopy(run),
                        },
                    },
                },
            )
            labels = {"katib.kubeflow.org/experiment": "random"}
            trial = _created(
                kube,
                f"/apis/kubeflow.org/v1beta1/namespaces/{ns}/trials",
                {
                    "apiVersion": "kubeflow.org/v1beta1",
                    "kind": "Trial",
                    "metadata": {
                        "name": name,
                        "labels": labels,
                        "ownerReferences": [controller_ref(experiment)],
                    },
                    "spec": {
                        "objective": {"type": "maximize", "goal": 0.99, "objectiveMetricName": "accuracy"},
                        "parameterAssignments": [{"name": "lr", "value": "0.01"}],
                        "primaryContainerName": "pytorch",
                        "runSpec": run,
                    },
                },
            )
            job = copy.deepcopy(run)
            job["metadata"] = {"name": name, "labels": labels, "ownerReferences": [controller_ref(trial)]}
            job = _created(kube, f"/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs", job)
            with bind.registered_webhook(kube, url=bind.webhook_url(controller), ca=ca, namespaces=(ns,)):
                bind.wait_webhook_active(kube, controller, ns)
                specs = job["spec"]["pytorchReplicaSpecs"]
                made = []
                for role, index in (("master", 0), ("worker", 0), ("worker", 1)):
                    template = specs[role.capitalize()]["template"]
                    pod = {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {
                            "name": f"{name}-{role}-{index}",
                            "labels": {
                                **template.get("metadata", {}).get("labels", {}),
                                "training.kubeflow.org/job-name": name,
                                "training.kubeflow.org/replica-type": role,
                                "training.kubeflow.org/replica-index": str(index),
                                "katib.kubeflow.org/trial": name,
                                **labels,
                            },
                            "ownerReferences": [controller_ref(job)],
                        },
                        "spec": copy.deepcopy(template["spec"]),
                    }
                    made.append(_created(kube, f"/api/v1/namespaces/{ns}/pods", pod))
            groups_path = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"
            (group,) = ok(kube.get(groups_path), 200)["items"]
            assert group["metadata"]["ownerReferences"][0]["uid"] == trial["metadata"]["uid"]
            assert group["spec"]["minMember"] == 3
            for pod in made:
                assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == group["metadata"]["name"]
            # the gang reconciler's rule agrees: a gang for the Trial, none for the PyTorchJob
            store = DefinitionStore.offline(user_directory=None)
            gangs = TopLevel.of(controller.client, store, gangs=True)
            assert gangs.is_top_level(trial) and not gangs.is_top_level(job)
            owner = gangs.top_owner(job)
            assert owner is not None and (owner.kind, owner.name) == ("Trial", name)
    finally:
        kube.delete(f"/api/v1/namespaces/{ns}")
