"""Pod-side selectors of the built-ins against pods labelled the way each operator labels them.

The labels below are the operators' (see the comment at the top of each definition); each case checks
that a pod lands on the right component and instance, and for alpha-format definitions that it falls
into the right keyed gang with the right minimum.
"""

from __future__ import annotations

from typing import Any

import pytest
from catalog_view import CORPUS, definition_for, documents, evaluator, workload_file

from karta.catalog import catalog_by_gvk
from karta.extract import ComponentFactory
from karta.extract.pods import PodQuerier
from karta.gang import StructureSummary, compute_gang_plan, infer_pod_component

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


def _pod(name: str, labels: dict[str, str], owner: dict[str, Any] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "ns", "labels": labels}
    if owner is not None:
        metadata["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"containers": []}}


def _corpus(name: str, index: int = 0) -> dict[str, Any]:
    return documents(workload_file(name))[index]


def _place(doc: dict[str, Any], pod: dict[str, Any]) -> tuple[str, str]:
    karta = definition_for(doc)
    assert karta is not None
    factory = ComponentFactory(karta, doc, evaluator=evaluator())
    querier = PodQuerier(pod, evaluator=evaluator())
    name = infer_pod_component(StructureSummary(karta), querier)
    component = factory.component(name)
    return name, querier.matching_instance_id(component.definition, component.instance_ids())


CASES: list[tuple[str, int, dict[str, str], str, str]] = [
    (
        "kubeflow-training-v1/pytorchjob-simple.yaml",
        0,
        {"training.kubeflow.org/job-name": "pytorch-simple", "training.kubeflow.org/replica-type": "master"},
        "master",
        "",
    ),
    (
        "kubeflow-training-v1/pytorchjob-simple.yaml",
        0,
        {"training.kubeflow.org/job-name": "pytorch-simple", "training.kubeflow.org/replica-type": "worker"},
        "worker",
        "",
    ),
    (
        "kubeflow-training-v1/tfjob-dist-mnist-chief-ps-worker.yaml",
        0,
        {"training.kubeflow.org/replica-type": "ps"},
        "ps",
        "",
    ),
    (
        "kubeflow-training-v1/mpijob-v1-tensorflow-mnist.yaml",
        0,
        {"training.kubeflow.org/replica-type": "launcher"},
        "launcher",
        "",
    ),
    (
        "mpi-operator-v2beta1/pi.yaml",
        0,
        {"training.kubeflow.org/job-role": "launcher", "training.kubeflow.org/operator-name": "mpi-operator"},
        "launcher",
        "",
    ),
    (
        "mpi-operator-v2beta1/pi.yaml",
        0,
        {"training.kubeflow.org/job-role": "worker", "training.kubeflow.org/replica-index": "1"},
        "worker",
        "",
    ),
    (
        "jobset/paralleljobs.yaml",
        0,
        {"jobset.sigs.k8s.io/jobset-name": "paralleljobs", "jobset.sigs.k8s.io/replicatedjob-name": "driver"},
        "replicatedjob",
        "driver",
    ),
    (
        "kuberay/raycluster-sample.yaml",
        0,
        {"ray.io/cluster": "raycluster-kuberay", "ray.io/node-type": "head", "ray.io/group": "headgroup"},
        "head",
        "",
    ),
    (
        "kuberay/raycluster-sample.yaml",
        0,
        {"ray.io/cluster": "raycluster-kuberay", "ray.io/node-type": "worker", "ray.io/group": "workergroup"},
        "worker",
        "workergroup",
    ),
    (
        "lws/lws-sample.yaml",
        0,
        {"leaderworkerset.sigs.k8s.io/group-index": "1", "leaderworkerset.sigs.k8s.io/worker-index": "0"},
        "leader",
        "",
    ),
    (
        "lws/lws-sample.yaml",
        0,
        {"leaderworkerset.sigs.k8s.io/group-index": "1", "leaderworkerset.sigs.k8s.io/worker-index": "3"},
        "worker",
        "",
    ),
    (
        "kserve/isvc-sklearn-v2.yaml",
        0,
        {"serving.kserve.io/inferenceservice": "sklearn-irisv2", "component": "predictor"},
        "predictor",
        "",
    ),
    (
        "kserve/llmisvc-dp-ep-deepseek-multinode.yaml",
        0,
        {"app.kubernetes.io/component": "llminferenceservice-workload-leader"},
        "main",
        "",
    ),
    (
        "kserve/llmisvc-dp-ep-deepseek-multinode.yaml",
        0,
        {"app.kubernetes.io/component": "llminferenceservice-workload-worker"},
        "worker",
        "",
    ),
    (
        "kserve/llmisvc-pd-opt-125m-cpu.yaml",
        0,
        {"app.kubernetes.io/component": "llminferenceservice-workload-prefill"},
        "prefill",
        "",
    ),
    (
        "dynamo/dgd-v1beta1-vllm-disagg.yaml",
        0,
        {"nvidia.com/dynamo-component": "VllmPrefillWorker"},
        "component",
        "VllmPrefillWorker",
    ),
    (
        "dynamo/dgd-v1alpha1-vllm-disagg.yaml",
        0,
        {"nvidia.com/dynamo-component": "Frontend"},
        "service",
        "Frontend",
    ),
    (
        "grove/pcs-multi-node-disaggregated.yaml",
        0,
        {
            "app.kubernetes.io/part-of": "multinode-disaggregated",
            "grove.io/podcliqueset-replica-index": "0",
            "grove.io/podclique": "multinode-disaggregated-0-dworker",
        },
        "clique",
        "dworker",
    ),
    (
        "grove/pcs-multi-node-disaggregated.yaml",
        0,
        {
            "app.kubernetes.io/part-of": "multinode-disaggregated",
            "grove.io/podcliqueset-replica-index": "0",
            "grove.io/podclique": "multinode-disaggregated-0-prefill-1-pleader",
        },
        "clique",
        "pleader",
    ),
    (
        "volcano/vcjob-tf-dist-mnist.yaml",
        0,
        {"volcano.sh/job-name": "tensorflow-dist-mnist", "volcano.sh/task-spec": "worker"},
        "task",
        "worker",
    ),
    ("spark-operator/spark-pi.yaml", 0, {"spark-role": "executor"}, "executor", ""),
    (
        "milvus/milvus-cluster-resources.yaml",
        0,
        {"app.kubernetes.io/instance": "my-release", "app.kubernetes.io/component": "querynode"},
        "querynode",
        "querynode",  # one instance named after the component when the Milvus runs it (issue 24)
    ),
    (
        "knative/helloworld-go.yaml",
        0,
        {"serving.knative.dev/revision": "helloworld-go-00001"},
        "revision",
        "",
    ),
]


@needs_corpus
@pytest.mark.parametrize(
    ("name", "index", "labels", "component", "instance"), CASES, ids=[f"{c[0]}:{c[3]}" for c in CASES]
)
def test_operator_labelled_pod_is_placed(
    name: str, index: int, labels: dict[str, str], component: str, instance: str
) -> None:
    assert _place(_corpus(name, index), _pod("p", labels)) == (component, instance)


@needs_corpus
def test_jobset_one_gang_for_every_replicated_job() -> None:
    """One gang for the JobSet (KAI's whole-JobSet minAvailable: workers 1 x 4 + driver 1 x 1), known
    before any pod exists; the pods of every replicated job are its members."""
    doc = _corpus("jobset/paralleljobs.yaml")
    karta = definition_for(doc)
    assert karta is not None
    pods = [_pod(f"w{i}", {"jobset.sigs.k8s.io/replicatedjob-name": "workers"}) for i in range(4)] + [
        _pod("d0", {"jobset.sigs.k8s.io/replicatedjob-name": "driver"})
    ]
    without = compute_gang_plan(
        ComponentFactory(karta, doc, evaluator=evaluator()), (), evaluator=evaluator()
    )
    assert [(g.name, g.min_member, g.members) for g in without.gangs] == [("jobset", 5, ())]
    plan = compute_gang_plan(ComponentFactory(karta, doc, evaluator=evaluator()), pods, evaluator=evaluator())
    assert [(g.name, g.min_member, sorted(g.members)) for g in plan.gangs] == [
        ("jobset", 5, ["d0", "w0", "w1", "w2", "w3"])
    ]
    assert plan.diagnostics == ()


def test_sandbox_gang_keyed_by_owner_uid() -> None:
    """Conformance case C9 on the built-in: adopted (non-controller) pods join their Sandbox's gang."""
    karta = catalog_by_gvk("agents.x-k8s.io", "v1beta1", "Sandbox")
    assert karta is not None
    sandbox = {
        "apiVersion": "agents.x-k8s.io/v1beta1",
        "kind": "Sandbox",
        "metadata": {"name": "s", "uid": "U"},
        "spec": {"podTemplate": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }
    owner = {"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "name": "s", "uid": "U"}
    pods = [
        _pod("a", {"agents.x-k8s.io/sandbox-name-hash": "h1"}, {**owner, "controller": True}),
        _pod("b", {"other": "x"}, owner),
    ]
    plan = compute_gang_plan(
        ComponentFactory(karta, sandbox, evaluator=evaluator()), pods, evaluator=evaluator()
    )
    assert [(g.name, g.alpha_keys, g.min_member, g.members) for g in plan.gangs] == [
        ("sandbox", ("U",), 1, ("a", "b"))
    ]


def test_sandbox_suspend_and_resume_write_operating_mode() -> None:
    karta = catalog_by_gvk("agents.x-k8s.io", "v1beta1", "Sandbox")
    assert karta is not None
    factory = ComponentFactory(
        karta,
        {"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "metadata": {"name": "s"}, "spec": {}},
        evaluator=evaluator(),
    )
    factory.root().suspend()
    assert factory.obj["spec"]["operatingMode"] == "Suspended"
    assert factory.component("agent").scales() is not None
    assert factory.component("agent").scales()[""].replicas == 0  # type: ignore[index]
    factory.root().resume()
    assert factory.obj["spec"]["operatingMode"] == "Running"


# Suspending is the transition of a workload that has started: before its operator's first status a
# suspend request still reads Initializing (issue 11), so these objects carry a running status.
_STARTED_STATUS: dict[str, dict[str, Any]] = {
    "batch/v1 Job": {"startTime": "2026-01-01T00:00:00Z", "active": 1, "ready": 1},
    "jobset/pytorch-resnet.yaml": {
        "restarts": 0,
        "replicatedJobsStatus": [
            {"name": "workers", "ready": 1, "succeeded": 0, "failed": 0, "active": 1, "suspended": 0}
        ],
    },
}


@needs_corpus
@pytest.mark.parametrize(
    ("name", "path", "suspended"),
    [
        ("batch/v1 Job", ("spec", "suspend"), True),
        ("jobset/pytorch-resnet.yaml", ("spec", "suspend"), True),
    ],
)
def test_suspend_writes_the_operator_field(name: str, path: tuple[str, ...], suspended: bool) -> None:
    if name.endswith(".yaml"):
        doc = _corpus(name)
    else:
        doc = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"containers": []}}},
        }
    if name in _STARTED_STATUS:
        doc["status"] = _STARTED_STATUS[name]
    karta = definition_for(doc)
    assert karta is not None
    factory = ComponentFactory(karta, doc, evaluator=evaluator())
    factory.root().suspend()
    node: Any = factory.obj
    for key in path:
        node = node[key]
    assert node is suspended
    status = factory.root().status()
    assert status is not None and "Suspending" in [str(s) for s in status.matched]


@needs_corpus
def test_pytorchjob_suspend_writes_run_policy_and_is_suspending_once_started() -> None:
    # Suspend writes spec.runPolicy.suspend. Before the operator's first status the job is still
    # Initializing (issue 11 rule); once it has written one, the unacknowledged request is Suspending.
    doc = _corpus("kubeflow-training-v1/pytorchjob-simple.yaml")
    karta = definition_for(doc)
    assert karta is not None
    factory = ComponentFactory(karta, doc, evaluator=evaluator())
    factory.root().suspend()
    assert factory.obj["spec"]["runPolicy"]["suspend"] is True
    status = factory.root().status()
    assert status is not None and [str(s) for s in status.matched] == ["Initializing"]
    conditions = [{"type": "Created", "status": "True"}, {"type": "Running", "status": "True"}]
    factory.obj["status"] = {"conditions": conditions}
    started = ComponentFactory(karta, factory.obj, evaluator=evaluator()).root().status()
    assert started is not None and [str(s) for s in started.matched] == ["Suspending", "Running"]


@needs_corpus
def test_rayjob_suspend_writes_spec_suspend_and_reads_suspending_once_the_operator_ran() -> None:
    """KubeRay moves only an Initializing or Running RayJob to Suspending (rayjob_controller.go,
    updateStatusToSuspendingIfNeeded); with no status yet the object is not decided: Initializing."""
    doc = _corpus("kuberay/rayjob-sample.yaml")
    karta = definition_for(doc)
    assert karta is not None
    factory = ComponentFactory(karta, doc, evaluator=evaluator())
    factory.root().suspend()
    assert factory.obj["spec"]["suspend"] is True
    status = factory.root().status()
    assert status is not None and [str(s) for s in status.matched] == ["Initializing"]
    running = {**factory.obj, "status": {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}}
    status = ComponentFactory(karta, running, evaluator=evaluator()).root().status()
    assert status is not None and [str(s) for s in status.matched] == ["Suspending"]
