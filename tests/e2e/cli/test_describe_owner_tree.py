"""Owner chains as one tree on the real API server (issue 27 item 3): a Katib Trial → PyTorchJob →
pods, a Tekton PipelineRun → TaskRuns → pods and a KubeVirt VirtualMachine → VirtualMachineInstance
→ virt-launcher pod. No operator runs: the test writes the child objects and pods with the
ownerReferences and labels their operators set, read from their source (the catalog definitions'
headers cite them):

- Katib v0.19.0 ``pkg/controller.v1beta1/trial/trial_controller.go`` ``reconcileJob``: the run
  object of ``spec.runSpec`` (here a PyTorchJob, the Trial's name) with the Trial as its controller
  (``SetControllerReference``); the training operator's pods are the PyTorchJob's, labelled
  ``training.kubeflow.org/replica-type`` and ``-index``, and Katib's pod webhook adds
  ``katib.kubeflow.org/trial``;
- Tekton ``pkg/reconciler/pipelinerun/pipelinerun.go`` ``createTaskRun``: one TaskRun per pipeline
  task, ``<run>-<task>``, controller the PipelineRun, labelled ``tekton.dev/pipelineRun`` and
  ``tekton.dev/pipelineTask``; ``pkg/pod/pod.go`` ``Build``: the pod ``<taskrun>-pod``, controller
  the TaskRun, labelled ``tekton.dev/taskRun``;
- KubeVirt v1.9.0 ``pkg/virt-controller/watch/vm.go``: the VMI of the VM's name from
  ``spec.template``, controller the VM; ``pkg/virt-controller/services/template.go``
  ``RenderLaunchManifest``: the ``virt-launcher-<vmi>-xxxxx`` pod, controller the VMI, labelled
  ``kubevirt.io=virt-launcher`` and ``kubevirt.io/created-by=<VMI uid>``.

``kli describe`` shows each as one tree (``Owner tree:``, ``ownerTree`` in ``-o json``); the web
view's workload page (``kli ui``'s JSON) carries the same tree and lists only the top-level
workloads; the gang is the topmost workload's of the chain with gang instructions: the Trial's
gang counts the PyTorchJob's pods, ``kli describe`` of the PyTorchJob says its pods are in the
Trial's gang, the gang reconciler's rule (:class:`karta.kube.TopLevel` with ``gangs``) makes no
gang for the PyTorchJob and one for a ScheduledSparkApplication's SparkApplication, and the pod
webhook's owner walk (:class:`karta.controller.runtime.owners.OwnerCache` with the controller's
readable kinds) reaches the Trial from a PyTorchJob pod. The CRDs come from tests/corpus and ../shared/corpus,
on a control plane of this module's own (the other tests' ``--all-types`` goldens never see them).
"""

from __future__ import annotations

import copy
import json
import os
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from karta.controller.runtime.owners import OwnerCache, readable_owner_kinds
from karta.definitions import DefinitionStore
from karta.kube import ConfigOverrides, KubeClient, TopLevel

from ..conftest import local_cluster
from ..kubehttp import KubeHTTP, controller_ref, load_manifests
from ..ui.kliui import get_json, kli_ui, rows, wait_for
from .conftest import RUNNING, UNSCHEDULABLE, Result, _created, _wait_served, make_pod, patch_status

LOCAL_CORPUS = Path(__file__).resolve().parents[2] / "corpus"
CRDS = (
    LOCAL_CORPUS / "crds" / "kubeflow.org_trials.yaml",
    LOCAL_CORPUS / "crds" / "tekton.dev_pipelineruns.yaml",
    LOCAL_CORPUS / "crds" / "tekton.dev_taskruns.yaml",
    LOCAL_CORPUS / "crds" / "kubevirt.io_virtualmachines.yaml",
    LOCAL_CORPUS / "crds" / "kubevirt.io_virtualmachineinstances.yaml",
    LOCAL_CORPUS / "crds" / "kubeflow.org_scheduledworkflows.yaml",
    LOCAL_CORPUS / "crds" / "sparkoperator.k8s.io_scheduledsparkapplications.yaml",
)
SHARED_CRDS = (
    "kubeflow.org_pytorchjobs.yaml",
    "argoproj.io_workflows.yaml",
    "sparkoperator.k8s.io_sparkapplications.yaml",
)


@dataclass
class Chains:
    cluster: KubeHTTP
    namespace: str
    trial: dict[str, Any]
    pytorchjob: dict[str, Any]
    pipelinerun: dict[str, Any]
    taskruns: list[dict[str, Any]]
    vm: dict[str, Any]
    vmi: dict[str, Any]
    launcher: dict[str, Any]
    swf: dict[str, Any]
    workflow: dict[str, Any]
    ssa: dict[str, Any]
    sparkapp: dict[str, Any]

    @property
    def kubeconfig(self) -> str:
        return str(self.cluster.kubeconfig)


@pytest.fixture(scope="module")
def own_cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[KubeHTTP]:
    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        yield request.getfixturevalue("cluster")
        return
    yield from local_cluster(tmp_path_factory, controllers=False)


@pytest.fixture(scope="module")
def chains(own_cluster: KubeHTTP, corpus: Path) -> Chains:
    cluster = own_cluster
    namespace = f"karta-owners-{uuid.uuid4().hex[:6]}"
    _created(
        cluster,
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
    )
    for path in (*CRDS, *(corpus / "crds" / name for name in SHARED_CRDS)):
        (crd,) = load_manifests(path)
        cluster.ensure_crd(crd)
        storage = next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))
        _wait_served(cluster, f"/apis/{crd['spec']['group']}/{storage}")
    return Chains(
        cluster,
        namespace,
        **_trial(cluster, namespace, corpus),
        **_pipeline(cluster, namespace),
        **_vm(cluster, namespace),
        **_scheduled(cluster, namespace),
    )


def _trial(cluster: KubeHTTP, namespace: str, corpus: Path) -> dict[str, Any]:
    """A Katib Trial whose runSpec is the corpus PyTorchJob (1 master, 2 workers), the PyTorchJob
    the trial controller creates from it, and its pods: master and worker 0 Running, worker 1
    Pending (Unschedulable)."""
    (run,) = load_manifests(corpus / "workloads" / "kubeflow-training-v1" / "pytorchjob-mnist-nccl-gpu.yaml")
    name = "random-x7k2p"
    run["metadata"] = {"name": name, "namespace": namespace}
    run["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 2
    trial_labels = {"katib.kubeflow.org/experiment": "random"}
    trial = {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Trial",
        "metadata": {"name": name, "labels": trial_labels},
        "spec": {
            "objective": {"type": "maximize", "goal": 0.99, "objectiveMetricName": "accuracy"},
            "parameterAssignments": [{"name": "lr", "value": "0.01"}],
            "primaryContainerName": "pytorch",
            "runSpec": run,
        },
    }
    base = f"/apis/kubeflow.org/v1beta1/namespaces/{namespace}/trials"
    trial = _created(cluster, base, trial)
    running = [
        {"type": "Created", "status": "True", "reason": "TrialCreated"},
        {"type": "Running", "status": "True", "reason": "TrialRunning"},
    ]
    patch_status(cluster, f"{base}/{name}", {"conditions": running})
    job = copy.deepcopy(run)
    job["metadata"] = {"name": name, "labels": trial_labels, "ownerReferences": [controller_ref(trial)]}
    jobs = f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs"
    job = _created(cluster, jobs, job)
    patch_status(
        cluster,
        f"{jobs}/{name}",
        {"conditions": [{"type": "Running", "status": "True", "reason": "PyTorchJobRunning"}]},
    )
    specs = job["spec"]["pytorchReplicaSpecs"]
    for role, index, node, status in (
        ("master", 0, "gpu-a", RUNNING),
        ("worker", 0, "gpu-b", RUNNING),
        ("worker", 1, None, UNSCHEDULABLE),
    ):
        make_pod(
            cluster,
            namespace,
            name=f"{name}-{role}-{index}",
            owner=job,
            labels={
                "training.kubeflow.org/job-name": name,
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-type": role,
                "training.kubeflow.org/replica-index": str(index),
                "katib.kubeflow.org/trial": name,
                **trial_labels,
            },
            template=specs[role.capitalize()]["template"],
            node=node,
            status=status,
        )
    return {"trial": trial, "pytorchjob": job}


def _pipeline(cluster: KubeHTTP, namespace: str) -> dict[str, Any]:
    """The corpus PipelineRun ``task-spec-pipeline`` (its Pipeline's two tasks), a TaskRun per task
    (the task's taskRef and params; Tekton resolves ``$(...)`` first, which changes nothing here)
    and the first one's pod Running (the second waits for its result: no pod yet)."""
    docs = load_manifests(LOCAL_CORPUS / "workloads" / "tekton" / "pipelinerun-taskrunspecs.yaml")
    (run,) = [d for d in docs if d["kind"] == "PipelineRun"]
    pipelines = f"/apis/tekton.dev/v1/namespaces/{namespace}/pipelineruns"
    run = _created(cluster, pipelines, run)
    name = run["metadata"]["name"]
    started = {"type": "Succeeded", "status": "Unknown", "reason": "Running", "message": "Tasks Completed: 0"}
    patch_status(cluster, f"{pipelines}/{name}", {"conditions": [started]})
    (pipeline,) = [d for d in docs if d["kind"] == "Pipeline"]
    taskruns = []
    path = f"/apis/tekton.dev/v1/namespaces/{namespace}/taskruns"
    for task in pipeline["spec"]["tasks"][:2]:
        labels = {"tekton.dev/pipelineRun": name, "tekton.dev/pipelineTask": task["name"]}
        body = {
            "apiVersion": "tekton.dev/v1",
            "kind": "TaskRun",
            "metadata": {
                "name": f"{name}-{task['name']}",
                "labels": labels,
                "ownerReferences": [controller_ref(run)],
            },
            "spec": {"taskRef": task["taskRef"], "params": task["params"]},
        }
        taskruns.append(_created(cluster, path, body))
    first = taskruns[0]
    patch_status(
        cluster,
        f"{path}/{first['metadata']['name']}",
        {
            "podName": f"{first['metadata']['name']}-pod",
            "conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "Running"}],
        },
    )
    running_pod(
        cluster,
        namespace,
        name=f"{first['metadata']['name']}-pod",
        owner=first,
        labels={**first["metadata"]["labels"], "tekton.dev/taskRun": first["metadata"]["name"]},
        template={"spec": {"containers": [{"name": "step-add", "image": "registry.example/step:1"}]}},
    )
    return {"pipelinerun": run, "taskruns": taskruns}


def _vm(cluster: KubeHTTP, namespace: str) -> dict[str, Any]:
    """The corpus VirtualMachine ``vm-cirros`` started (runStrategy Always), its VMI and the
    virt-launcher pod, Running."""
    (vm,) = load_manifests(LOCAL_CORPUS / "workloads" / "kubevirt" / "vm-cirros.yaml")
    vm["spec"]["runStrategy"] = "Always"
    vms = f"/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachines"
    vm = _created(cluster, vms, vm)
    name = vm["metadata"]["name"]
    patch_status(cluster, f"{vms}/{name}", {"printableStatus": "Running", "ready": True})
    template = vm["spec"]["template"]
    vmi = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {
            "name": name,
            "labels": template["metadata"]["labels"],
            "ownerReferences": [controller_ref(vm)],
        },
        "spec": template["spec"],
    }
    vmis = f"/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachineinstances"
    vmi = _created(cluster, vmis, vmi)
    patch_status(cluster, f"{vmis}/{name}", {"phase": "Running", "nodeName": "cpu-a"})
    launcher = running_pod(
        cluster,
        namespace,
        name=f"virt-launcher-{name}-q8xzt",
        owner=vmi,
        labels={
            **template["metadata"]["labels"],
            "kubevirt.io": "virt-launcher",
            "kubevirt.io/created-by": vmi["metadata"]["uid"],
        },
        template={
            "spec": {"containers": [{"name": "compute", "image": "quay.io/kubevirt/virt-launcher:v1.9.0"}]}
        },
    )
    return {"vm": vm, "vmi": vmi, "launcher": launcher}


def _scheduled(cluster: KubeHTTP, namespace: str) -> dict[str, Any]:
    """The corpus ScheduledWorkflow ``every-minute-cron`` with one run (an Argo Workflow and its
    pod) and the corpus ScheduledSparkApplication ``spark-pi-scheduled`` with one run (a
    SparkApplication, its driver pod and an executor the driver pod owns, as Spark sets it)."""
    (swf,) = load_manifests(LOCAL_CORPUS / "workloads" / "kubeflow-pipelines" / "every-minute-cron.yaml")
    swfs = f"/apis/kubeflow.org/v1beta1/namespaces/{namespace}/scheduledworkflows"
    # its CRD has no status subresource and requires status: the status is written with the object
    swf["status"] = {"conditions": [{"type": "Enabled", "status": "True", "reason": "Enabled"}]}
    swf = _created(cluster, swfs, swf)
    swf_name = swf["metadata"]["name"]
    run = f"{swf_name}-1-3611357000"  # KFP: <name>-<index>-<hash> (util/scheduled_workflow.go NewWorkflow)
    workflow = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {
            "name": run,
            "labels": {"scheduledworkflows.kubeflow.org/scheduledWorkflowName": swf_name},
            "ownerReferences": [controller_ref(swf)],
        },
        "spec": swf["spec"]["workflow"]["spec"],
        # no status subresource: the status the workflow controller writes once its pod runs
        "status": {
            "phase": "Running",
            "startedAt": "2026-01-01T00:00:00Z",
            "conditions": [{"type": "PodRunning", "status": "True"}],
            "nodes": {
                run: {"id": run, "name": run, "type": "Pod", "phase": "Running", "templateName": "whalesay"}
            },
        },
    }
    workflows = f"/apis/argoproj.io/v1alpha1/namespaces/{namespace}/workflows"
    workflow = _created(cluster, workflows, workflow)
    running_pod(
        cluster,
        namespace,
        name=f"{run}-whalesay-1234567890",
        owner=workflow,
        labels={"workflows.argoproj.io/workflow": run},
        template={"spec": {"containers": [{"name": "main", "image": "docker/whalesay"}]}},
    )
    (ssa,) = load_manifests(
        LOCAL_CORPUS / "workloads" / "spark-operator-scheduled" / "spark-pi-scheduled.yaml"
    )
    ssa["metadata"] = {"name": ssa["metadata"]["name"]}
    ssas = f"/apis/sparkoperator.k8s.io/v1beta2/namespaces/{namespace}/scheduledsparkapplications"
    ssa = _created(cluster, ssas, ssa)
    ssa_name = ssa["metadata"]["name"]
    patch_status(cluster, f"{ssas}/{ssa_name}", {"scheduleState": "Scheduled"})
    app_name = f"{ssa_name}-1767225600000000000"  # <name>-<unix nanoseconds> (createSparkApplication)
    app = {
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "SparkApplication",
        "metadata": {
            "name": app_name,
            "labels": {"sparkoperator.k8s.io/scheduled-app-name": ssa_name},
            "ownerReferences": [controller_ref(ssa)],
        },
        "spec": ssa["spec"]["template"],
    }
    apps = f"/apis/sparkoperator.k8s.io/v1beta2/namespaces/{namespace}/sparkapplications"
    app = _created(cluster, apps, app)
    patch_status(
        cluster,
        f"{apps}/{app_name}",
        {"applicationState": {"state": "RUNNING"}, "driverInfo": {"podName": f"{app_name}-driver"}},
    )
    spark = {
        "sparkoperator.k8s.io/app-name": app_name,
        "sparkoperator.k8s.io/launched-by-spark-operator": "true",
    }
    container = {
        "spec": {"containers": [{"name": "spark-kubernetes-driver", "image": "docker.io/apache/spark:4.0.4"}]}
    }
    driver = running_pod(
        cluster,
        namespace,
        name=f"{app_name}-driver",
        owner=app,
        labels={**spark, "spark-role": "driver"},
        template=container,
    )
    running_pod(
        cluster,
        namespace,
        name=f"{app_name}-exec-1",
        owner=driver,  # Spark's executors are the driver pod's
        labels={**spark, "spark-role": "executor", "spark-exec-id": "1"},
        template=container,
    )
    return {"swf": swf, "workflow": workflow, "ssa": ssa, "sparkapp": app}


def running_pod(
    cluster: KubeHTTP,
    namespace: str,
    *,
    name: str,
    owner: dict[str, Any],
    labels: dict[str, str],
    template: dict[str, Any],
) -> dict[str, Any]:
    """A pod of ``owner`` Running on the node cpu-a."""
    return make_pod(
        cluster,
        namespace,
        name=name,
        owner=owner,
        labels=labels,
        template=template,
        node="cpu-a",
        status=RUNNING,
    )


def describe(kli: Callable[..., Result], chains: Chains, target: str, *args: str) -> Result:
    result = kli("describe", target, "-n", chains.namespace, "--kubeconfig", chains.kubeconfig, *args)
    assert result.code == 0, result.err
    return result


def shape(node: dict[str, Any]) -> tuple[Any, ...]:
    """A tree node as ``(Kind/name, phases, gang, (ready, total), own pods, children)``."""
    return (
        f"{node['kind']}/{node['name']}",
        node["phases"],
        node["gang"],
        (node["pods"]["ready"], node["pods"]["total"]),
        node["ownPods"],
        tuple(shape(c) for c in node["children"]),
    )


# ------------------------------------------------------------------------------- kli describe


def test_a_trial_is_one_tree_and_owns_the_gang(kli: Callable[..., Result], chains: Chains) -> None:
    name = chains.trial["metadata"]["name"]
    data = json.loads(describe(kli, chains, f"trial/{name}", "-o", "json").out)
    tree = data["ownerTree"]
    assert tree["gangOwner"] == f"Trial/{name}"
    assert shape(tree["root"]) == (
        f"Trial/{name}",
        ["Running"],
        True,
        (2, 3),
        [],
        (
            (
                f"PyTorchJob/{name}",
                ["Running"],
                False,
                (2, 3),
                [f"{name}-master-0", f"{name}-worker-0", f"{name}-worker-1"],
                (),
            ),
        ),
    )
    # the gang is the Trial's: its pods are the PyTorchJob's, counted against the Trial's minimum
    assert data["gang"]["pods"] == 3 and "ownedBy" not in data["gang"]
    components = {c["name"]: c for c in data["components"]}
    assert components["master"]["replicas"] == {"desired": 1, "current": 1, "ready": 1}
    assert components["worker"]["replicas"] == {"desired": 2, "current": 2, "ready": 1}
    text = describe(kli, chains, f"trial/{name}").out
    section = text[text.index("Owner tree:") :].split("\n\n")[0].splitlines()
    assert [" ".join(line.split()) for line in section] == [
        "Owner tree:",
        f"Trial/{name} Running 2/3 pods ready gpu: 3 owns the gang",
        f"`-- PyTorchJob/{name} Running 2/3 pods ready gpu: 3",
    ]


def test_the_trials_pytorchjob_has_no_gang_of_its_own(kli: Callable[..., Result], chains: Chains) -> None:
    name = chains.pytorchjob["metadata"]["name"]
    data = json.loads(describe(kli, chains, f"pytorchjob/{name}", "-o", "json").out)
    assert data["ownedBy"] == f"Trial/{name}"
    assert data["gang"] == {
        "ownedBy": f"Trial/{name}",
        "text": f"in the gang of Trial/{name}, its topmost owner with gang instructions (none of its own)",
    }
    assert "gangScope" not in data and "ownerTree" not in data
    text = describe(kli, chains, f"pytorchjob/{name}").out
    assert (
        f"Gang: in the gang of Trial/{name}, its topmost owner with gang instructions (none of its own)\n"
        in text
    )
    assert f"Owned by: Trial/{name} (its top-level workload)\n" in text


def test_a_pipelinerun_is_one_tree(kli: Callable[..., Result], chains: Chains) -> None:
    name = chains.pipelinerun["metadata"]["name"]
    first, second = (t["metadata"]["name"] for t in chains.taskruns)
    data = json.loads(describe(kli, chains, f"pipelinerun/{name}", "-o", "json").out)
    assert data["ownerTree"]["gangOwner"] is None  # a pipeline has no gang: its tasks run as the DAG allows
    assert shape(data["ownerTree"]["root"]) == (
        f"PipelineRun/{name}",
        ["Running"],
        False,
        (1, 1),
        [],
        (
            (f"TaskRun/{first}", ["Running"], False, (1, 1), [f"{first}-pod"], ()),
            (f"TaskRun/{second}", ["Initializing"], False, (0, 0), [], ()),
        ),
    )
    text = describe(kli, chains, f"pipelinerun/{name}").out
    assert f"|-- TaskRun/{first}" in text and f"`-- TaskRun/{second}" in text


def test_a_virtual_machine_is_one_tree(kli: Callable[..., Result], chains: Chains) -> None:
    name = chains.vm["metadata"]["name"]
    launcher = chains.launcher["metadata"]["name"]
    data = json.loads(describe(kli, chains, f"vm/{name}", "-o", "json").out)
    assert shape(data["ownerTree"]["root"]) == (
        f"VirtualMachine/{name}",
        ["Running"],
        False,
        (1, 1),
        [],
        ((f"VirtualMachineInstance/{name}", ["Running"], False, (1, 1), [launcher], ()),),
    )
    # the VM's own component tree places the launcher pod too (its chain reaches the VM)
    assert [p["name"] for p in data["components"][0]["pods"]] == [launcher]
    vmi = json.loads(describe(kli, chains, f"vmi/{name}", "-o", "json").out)
    assert vmi["ownedBy"] == f"VirtualMachine/{name}"


def test_scheduled_runs_are_trees(kli: Callable[..., Result], chains: Chains) -> None:
    """A ScheduledWorkflow's Argo Workflow and a ScheduledSparkApplication's SparkApplication, the
    Spark executor placed through the driver pod that owns it. Neither schedule has gang
    instructions: they only contain the runs, and the SparkApplication, the topmost of its chain
    with gang instructions, owns its gang (issue 27 item 3; before, it was in none)."""
    swf, run = chains.swf["metadata"]["name"], chains.workflow["metadata"]["name"]
    data = json.loads(describe(kli, chains, f"scheduledworkflow/{swf}", "-o", "json").out)
    assert shape(data["ownerTree"]["root"]) == (
        f"ScheduledWorkflow/{swf}",
        ["Running"],
        False,
        (1, 1),
        [],
        ((f"Workflow/{run}", ["Running"], False, (1, 1), [f"{run}-whalesay-1234567890"], ()),),
    )
    ssa, app = chains.ssa["metadata"]["name"], chains.sparkapp["metadata"]["name"]
    data = json.loads(describe(kli, chains, f"scheduledsparkapplication/{ssa}", "-o", "json").out)
    assert shape(data["ownerTree"]["root"]) == (
        f"ScheduledSparkApplication/{ssa}",
        ["Running"],
        False,
        (2, 2),
        [],
        ((f"SparkApplication/{app}", ["Running"], True, (2, 2), [f"{app}-driver", f"{app}-exec-1"], ()),),
    )
    nested = json.loads(describe(kli, chains, f"sparkapplication/{app}", "-o", "json").out)
    assert nested["ownedBy"] == f"ScheduledSparkApplication/{ssa}"
    # the schedule has no gang instructions: the run owns its gang, counted as any other
    assert "ownedBy" not in nested["gang"] and nested["gang"]["pods"] == 2


# ------------------------------------------------------------------------------- the controller's rule


def test_the_controller_gives_the_gang_to_the_topmost_workload_with_gang_instructions(chains: Chains) -> None:
    """The display rule (top-level workloads), the gang reconciler's rule (the topmost workload of
    the chain with gang instructions) and the pod webhook's owner walk (the top owner of a pod,
    through the kinds the controller may read) agree with the tree."""
    store = DefinitionStore.offline(user_directory=None)
    with KubeClient.from_config(ConfigOverrides(kubeconfig=chains.kubeconfig)) as client:
        top_level = TopLevel.of(client, store)
        assert top_level.is_top_level(chains.trial) is True
        assert top_level.is_top_level(chains.pytorchjob) is False
        assert (
            top_level.is_top_level(chains.taskruns[0]) is False
            and top_level.is_top_level(chains.vmi) is False
        )
        owner = top_level.top_owner(chains.pytorchjob)
        assert owner is not None and (owner.kind, owner.name) == ("Trial", chains.trial["metadata"]["name"])
        walk = OwnerCache(client, readable=readable_owner_kinds(d.karta for d in store.definitions)).walk(
            client.get(
                client.discovery.for_gvk("", "v1", "Pod"),
                f"{owner.name}-worker-1",
                namespace=chains.namespace,
            )
        )
        assert walk.top is not None
        assert (walk.top["kind"], walk.top["metadata"]["name"]) == ("Trial", owner.name)
        gangs = TopLevel.of(client, store, gangs=True)
        assert gangs.is_top_level(chains.trial) and not gangs.is_top_level(chains.pytorchjob)
        assert top_level.is_top_level(chains.sparkapp) is False  # shown under its schedule
        assert gangs.is_top_level(chains.sparkapp) is True and gangs.top_owner(chains.sparkapp) is None


# ------------------------------------------------------------------------------- the web view


def test_the_web_view_shows_the_same_trees(
    kli: Callable[..., Result], chains: Chains, tmp_path: Path
) -> None:
    with kli_ui(Path(chains.kubeconfig), tmp_path, "-n", chains.namespace) as url:
        listed = wait_for(
            "the top-level workloads",
            lambda: (found := rows(url)) and len({r["kind"] for r in found}) >= 5 and found,
        )
        kinds = sorted(r["kind"] for r in listed)
        # the nested workloads are no rows of their own: they are in their owners' trees
        assert kinds == [
            "PipelineRun",
            "ScheduledSparkApplication",
            "ScheduledWorkflow",
            "Trial",
            "VirtualMachine",
        ], kinds
        for row in listed:
            target = f"{row['kind'].lower()}/{row['name']}"
            expected = json.loads(describe(kli, chains, target, "-o", "json").out)["ownerTree"]
            detail = get_json(f"{url}api/workload?id={urllib.request.quote(row['id'], safe='')}")
            assert detail["describe"]["ownerTree"] == expected, row["kind"]
        trial = next(r for r in listed if r["kind"] == "Trial")
        _page_shows_the_tree(url, trial, chains.pytorchjob["metadata"]["name"])


def _page_shows_the_tree(url: str, trial: dict[str, Any], job: str) -> None:
    """The Trial's workload page in headless Chromium: the Owner tree section, the PyTorchJob under
    the Trial, the Trial owning the gang."""
    from ..ui.browser import headless_chromium

    with headless_chromium() as browser:
        browser.get(f"{url}#/workload/{urllib.request.quote(trial['id'], safe='')}")
        tree = wait_for(
            "the owner tree",
            lambda: next(
                (
                    t
                    for t in browser.find_elements(
                        "css selector", "#detail-view ul.tree[aria-label='owner tree']"
                    )
                ),
                None,
            ),
        )
        lines = [line.strip() for line in tree.text.splitlines() if line.strip()]
        assert lines == [
            f"Trial/{trial['name']} Running · 2/3 pods ready, 3 GPU · owns the gang",
            f"PyTorchJob/{job} Running · 2/3 pods ready, 3 GPU",
        ], lines
        nested = tree.find_elements("css selector", "li ul[role='group'] li")
        assert [n.find_element("css selector", ".node-name").text for n in nested] == [f"PyTorchJob/{job}"]
