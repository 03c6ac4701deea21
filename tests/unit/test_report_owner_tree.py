"""karta.report.owner_tree: a workload and the workloads it creates through other kinds as one tree
(issue 27 item 3), with the catalog's definitions (Katib Trial → PyTorchJob, Tekton PipelineRun →
TaskRuns, KubeVirt VirtualMachine → VirtualMachineInstance): nodes only through controller
references to a node and the parent's ``additionalChildKinds``, pods on the deepest node their chain
reaches, the gang on the root alone, cycles, foreign owners, missing parents and the depth and size
bounds; and the ``Owner tree:`` section of ``kli describe``'s text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from karta.cli.views.describe import _owner_tree
from karta.definitions import DefinitionStore, StoredDefinition
from karta.model import load_karta
from karta.report import build_owner_tree, child_kinds_of, owner_resolver, tree_kinds

STORE = DefinitionStore.offline(user_directory=None)
RESOLVE = owner_resolver(STORE)
GPU = ("nvidia.com/gpu",)


def obj(
    api_version: str,
    kind: str,
    name: str,
    *,
    owner: Mapping[str, Any] | None = None,
    controller: bool = True,
    uid: str | None = None,
    owner_uid: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid or f"uid-{kind}-{name}"}
    if owner is not None or owner_uid is not None:
        ref = {
            "apiVersion": owner["apiVersion"] if owner else "example.com/v1",
            "kind": owner["kind"] if owner else "Foreign",
            "name": owner["metadata"]["name"] if owner else "foreign",
            "uid": owner_uid or (owner["metadata"]["uid"] if owner else ""),
            "controller": controller,
        }
        meta["ownerReferences"] = [ref]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **extra}


def pod(name: str, owner: Mapping[str, Any], *, gpus: int = 0, ready: bool = True) -> dict[str, Any]:
    resources = {"requests": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return obj(
        "v1",
        "Pod",
        name,
        owner=owner,
        spec={"containers": [{"name": "c", "image": "i", "resources": resources}]},
        status={"phase": "Running" if ready else "Pending", "conditions": conditions},
    )


def definition(root: Mapping[str, Any]) -> StoredDefinition:
    found = RESOLVE(root)
    assert found is not None
    return found


def trial() -> dict[str, Any]:
    return obj(
        "kubeflow.org/v1beta1",
        "Trial",
        "t1",
        spec={"runSpec": {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "spec": {}}},
        status={"conditions": [{"type": "Running", "status": "True"}]},
    )


def test_a_katib_trial_owns_its_pytorchjob_and_the_gang() -> None:
    root = trial()
    job = obj(
        "kubeflow.org/v1",
        "PyTorchJob",
        "t1",
        owner=root,
        status={"conditions": [{"type": "Running", "status": "True"}]},
    )
    pods = [pod("t1-master-0", job, gpus=1), pod("t1-worker-0", job, gpus=1, ready=False)]
    tree = build_owner_tree(
        root, definition(root), objects=[job], pods=pods, resolve=RESOLVE, gpu_resources=GPU
    )
    assert tree.nested and tree.gang_owner == "Trial/t1"
    [child] = tree.root.children
    assert (child.kind, child.name, child.gang, child.phases) == ("PyTorchJob", "t1", False, ("Running",))
    assert [p.name for p in child.pods] == ["t1-master-0", "t1-worker-0"]
    assert tree.root.pods == []
    assert tree.root.totals() == (1, 2, 2)
    data = tree.to_dict()
    assert data["gangOwner"] == "Trial/t1"
    assert data["root"]["gang"] is True and data["root"]["children"][0]["gang"] is False
    assert data["root"]["pods"] == {"ready": 1, "total": 2} and data["root"]["gpus"] == 2
    assert data["root"]["children"][0]["ownPods"] == ["t1-master-0", "t1-worker-0"]


def test_a_pipelinerun_owns_its_taskruns_and_nothing_else() -> None:
    root = obj("tekton.dev/v1", "PipelineRun", "build")
    fetch = obj("tekton.dev/v1", "TaskRun", "build-fetch", owner=root)
    test = obj("tekton.dev/v1", "TaskRun", "build-test", owner=root)
    other_run = obj("tekton.dev/v1", "PipelineRun", "other")
    foreign = obj("tekton.dev/v1", "TaskRun", "other-fetch", owner=other_run)  # another run's
    not_controller = obj("tekton.dev/v1", "TaskRun", "adopted", owner=root, controller=False)
    service = obj("v1", "Service", "build-svc", owner=root)  # a core kind is never a node
    job = obj("batch/v1", "Job", "build-job", owner=root)  # not in the PipelineRun's child kinds
    dangling = obj("tekton.dev/v1", "TaskRun", "orphan", owner_uid="uid-gone")  # its parent is missing
    pods = [pod("build-fetch-pod", fetch), pod("build-test-pod", test)]
    tree = build_owner_tree(
        root,
        definition(root),
        objects=[test, fetch, foreign, not_controller, service, job, dangling],
        pods=pods,
        resolve=RESOLVE,
        gpu_resources=GPU,
    )
    assert [c.name for c in tree.root.children] == ["build-fetch", "build-test"]
    assert [[p.name for p in c.pods] for c in tree.root.children] == [["build-fetch-pod"], ["build-test-pod"]]
    assert tree.gang_owner is None  # the PipelineRun's definition has no gang instructions
    assert tree.omitted == 0


def test_a_virtual_machine_owns_its_instance_and_the_launcher_pod() -> None:
    root = obj("kubevirt.io/v1", "VirtualMachine", "vm", status={"printableStatus": "Running"})
    vmi = obj("kubevirt.io/v1", "VirtualMachineInstance", "vm", owner=root, status={"phase": "Running"})
    launcher = pod("virt-launcher-vm-abcde", vmi)
    tree = build_owner_tree(
        root, definition(root), objects=[vmi], pods=[launcher], resolve=RESOLVE, gpu_resources=GPU
    )
    [child] = tree.root.children
    assert (child.kind, child.phases, [p.name for p in child.pods]) == (
        "VirtualMachineInstance",
        ("Running",),
        ["virt-launcher-vm-abcde"],
    )
    assert tree.root.phases == ("Running",)


def test_a_pod_climbs_through_objects_that_are_not_nodes() -> None:
    """A Spark executor is owned by its driver pod: it lands on the driver's node; a pod whose
    chain reaches no node (an owner not given) stays on the root."""
    root = obj("sparkoperator.k8s.io/v1beta2", "ScheduledSparkApplication", "nightly")
    app = obj("sparkoperator.k8s.io/v1beta2", "SparkApplication", "nightly-1", owner=root)
    driver = pod("nightly-1-driver", app)
    executor = pod("nightly-1-exec-1", driver)
    stray = pod("stray", obj("apps/v1", "ReplicaSet", "unknown"))
    tree = build_owner_tree(
        root,
        definition(root),
        objects=[app],
        pods=[executor, driver, stray],
        resolve=RESOLVE,
        gpu_resources=GPU,
    )
    [child] = tree.root.children
    assert [p.name for p in child.pods] == ["nightly-1-driver", "nightly-1-exec-1"]
    assert [p.name for p in tree.root.pods] == ["stray"]


def test_cycles_end_where_they_meet_a_placed_object() -> None:
    root = obj("tekton.dev/v1", "PipelineRun", "loop", uid="R")
    # the root names its own TaskRun as its controller, the TaskRun names the root
    root["metadata"]["ownerReferences"] = [
        {"apiVersion": "tekton.dev/v1", "kind": "TaskRun", "name": "a", "uid": "A", "controller": True}
    ]
    a = obj("tekton.dev/v1", "TaskRun", "a", uid="A", owner=root)
    b = obj("tekton.dev/v1", "TaskRun", "b", uid="B", owner_uid="C")  # b and c own each other
    c = obj("tekton.dev/v1", "TaskRun", "c", uid="C", owner_uid="B")
    self_owned = obj("tekton.dev/v1", "TaskRun", "self", uid="S", owner_uid="S")
    looping = pod("looping", b)  # its chain loops b → c → b and reaches no node
    tree = build_owner_tree(
        root,
        definition(root),
        objects=[a, a, b, c, self_owned, root],
        pods=[looping],
        resolve=RESOLVE,
        gpu_resources=GPU,
    )
    assert [n.name for n in tree.nodes()] == ["loop", "a"]
    assert [p.name for p in tree.root.pods] == ["looping"]


NEST = """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: nest}
spec:
  structureDefinition:
    rootComponent: {name: nest, kind: {group: example.com, version: v1, kind: Nest}}
    additionalChildKinds: [{group: example.com, version: v1, kind: Nest}]
"""


def nesting() -> StoredDefinition:
    """A kind that owns objects of its own kind (hostile, or a recursive operator)."""
    karta = load_karta(NEST).karta
    assert karta is not None
    return StoredDefinition(karta=karta, origin="directory", source="test", trusted=False)


def chain(length: int) -> list[dict[str, Any]]:
    out = [obj("example.com/v1", "Nest", "n0")]
    for index in range(1, length):
        out.append(obj("example.com/v1", "Nest", f"n{index}", owner=out[-1]))
    return out


def test_depth_is_bounded_and_what_is_left_out_is_counted() -> None:
    nest = nesting()
    objects = chain(10)
    tree = build_owner_tree(
        objects[0],
        nest,
        objects=objects[1:],
        pods=[pod("deep", objects[-1])],
        resolve=lambda _o: nest,
        gpu_resources=GPU,
        status_of=lambda _d, _o: (("Running",), None),
        max_depth=3,
    )
    assert [n.name for n in tree.nodes()] == ["n0", "n1", "n2", "n3"]
    assert tree.omitted == 1  # n4; nothing below an omitted node is looked at
    assert [p.name for p in tree.root.pods] == ["deep"]  # its chain is deeper than the bound
    assert tree.to_dict()["omitted"] == 1


def test_size_is_bounded() -> None:
    nest = nesting()
    root = obj("example.com/v1", "Nest", "root")
    children = [obj("example.com/v1", "Nest", f"c{i}", owner=root) for i in range(10)]
    tree = build_owner_tree(
        root,
        nest,
        objects=children,
        pods=[],
        resolve=lambda _o: nest,
        gpu_resources=GPU,
        status_of=lambda _d, _o: ((), None),
        max_nodes=4,
    )
    assert len(tree.nodes()) == 4 and tree.omitted == 7


def test_a_node_whose_status_cannot_be_read_says_why() -> None:
    root = trial()
    job = obj("kubeflow.org/v1", "PyTorchJob", "t1", owner=root, status={"conditions": "not a list"})
    tree = build_owner_tree(
        root, definition(root), objects=[job], pods=[], resolve=RESOLVE, gpu_resources=GPU
    )
    [child] = tree.root.children
    assert child.error is not None or child.phases  # hostile status: a phase or a reason, never a raise


def test_without_owned_kinds_there_is_no_tree() -> None:
    job = obj("batch/v1", "Job", "train")
    assert tree_kinds(definition(job).karta) == frozenset()
    tree = build_owner_tree(
        job, definition(job), objects=[], pods=[pod("train-0", job)], resolve=RESOLVE, gpu_resources=GPU
    )
    assert not tree.nested
    assert [p.name for p in tree.root.pods] == ["train-0"]


def test_child_kinds_are_the_covered_additional_child_kinds() -> None:
    kinds = child_kinds_of(STORE, RESOLVE)
    assert kinds(trial()) == {("kubeflow.org", "PyTorchJob"), ("batch", "Job")}
    assert kinds(obj("tekton.dev/v1", "PipelineRun", "p")) == {("tekton.dev", "TaskRun")}  # CustomRun: none
    seldon = obj("machinelearning.seldon.io/v1", "SeldonDeployment", "s")
    assert kinds(seldon) == {("apps", "Deployment")}  # no HorizontalPodAutoscaler, no Service
    assert kinds(obj("example.com/v1", "Unknown", "u")) == frozenset()


@pytest.mark.parametrize("hostile", [None, "text", {"uid": 5}, {"ownerReferences": "x"}])
def test_hostile_metadata_is_no_node_and_no_error(hostile: Any) -> None:
    root = trial()
    bad: dict[str, Any] = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": hostile}
    tree = build_owner_tree(
        root, definition(root), objects=[bad], pods=[], resolve=RESOLVE, gpu_resources=GPU
    )
    assert not tree.nested


def test_the_text_section_shows_one_line_per_workload() -> None:
    root = trial()
    job = obj("kubeflow.org/v1", "PyTorchJob", "t1", owner=root, status={"conditions": []})
    tree = build_owner_tree(
        root,
        definition(root),
        objects=[job],
        pods=[pod("t1-master-0", job, gpus=2)],
        resolve=RESOLVE,
        gpu_resources=GPU,
    )
    lines = _owner_tree(tree.to_dict())
    assert lines[:2] == ["", "Owner tree:"]
    assert " ".join(lines[2].split()) == "Trial/t1 Running 1/1 pods ready gpu: 2 owns the gang"
    assert lines[3].startswith("`-- PyTorchJob/t1")
    assert "owns the gang" not in lines[3]
    assert _owner_tree(None) == [] and _owner_tree({"root": "x"}) == []


def test_revisions_are_no_nodes_and_pods_are_placed_through_them() -> None:
    """A NIMService's Deployment is a node, its ReplicaSet is not (a revision): the pod, owned by
    the ReplicaSet, lands on the Deployment through its walk's owners (``lineage``) or through the
    ReplicaSet when it is among the objects."""
    root = obj("apps.nvidia.com/v1alpha1", "NIMService", "llm")
    deployment = obj("apps/v1", "Deployment", "llm", owner=root)
    replicaset = obj("apps/v1", "ReplicaSet", "llm-5d9f", owner=deployment)
    server = pod("llm-5d9f-abcde", replicaset, gpus=1)
    assert ("apps", "ReplicaSet") not in tree_kinds(definition(deployment).karta)
    lineage = {
        "uid-Pod-llm-5d9f-abcde": ["uid-ReplicaSet-llm-5d9f", "uid-Deployment-llm", "uid-NIMService-llm"]
    }
    for objects, given in (([deployment], lineage), ([deployment, replicaset], None)):
        tree = build_owner_tree(
            root,
            definition(root),
            objects=objects,
            pods=[server],
            resolve=RESOLVE,
            gpu_resources=GPU,
            lineage=given,
        )
        assert [n.label for n in tree.nodes()] == ["NIMService/llm", "Deployment/llm"]
        assert [p.name for p in tree.root.children[0].pods] == ["llm-5d9f-abcde"]
        assert tree.root.totals() == (1, 1, 1)


def test_describe_live_carries_the_tree_and_the_owner_of_a_nested_workload() -> None:
    """``describe_live``: ``ownerTree`` when the workload owns a workload of another kind; a workload
    whose pods are in the gang of an owner above it (``gang_owner``: the topmost with gang
    instructions) reports that one's gang instead of one of its own, and no gang scope (the
    controller decides the scope, and the gang, on the gang's owner); a workload a top-level one
    owns without gang instructions (``owned_by`` alone: a Katib Experiment's Trial) owns its gang."""
    from karta.report import ScopeInput, describe_live

    root = trial()
    job = obj("kubeflow.org/v1", "PyTorchJob", "t1", owner=root, status={"conditions": []})
    pods = [pod("t1-master-0", job, gpus=1)]
    common: dict[str, Any] = {"events_read": True, "warnings": (), "gpu_resources": GPU}
    top = describe_live(definition(root), root, pods, (), owned=[job], resolve=RESOLVE, **common).report
    assert top["ownerTree"]["gangOwner"] == "Trial/t1" and "ownedBy" not in top
    assert "ownedBy" not in top["gang"]
    scope = ScopeInput({"karta.run.ai/gang-scheduling": "true"})
    nested = describe_live(
        definition(job),
        job,
        pods,
        (),
        owned_by="Trial/t1",
        gang_owner="Trial/t1",
        scope=scope,
        resolve=RESOLVE,
        **common,
    ).report
    assert nested["ownedBy"] == "Trial/t1"
    assert nested["gang"] == {
        "ownedBy": "Trial/t1",
        "text": "in the gang of Trial/t1, its topmost owner with gang instructions (none of its own)",
    }
    assert "gangScope" not in nested and "ownerTree" not in nested  # a PyTorchJob owns no other kind
    contained = describe_live(
        definition(root),
        root,
        pods,
        (),
        owned=[job],
        resolve=RESOLVE,
        owned_by="Experiment/random",
        scope=scope,
        **common,
    ).report
    assert (
        contained["ownedBy"] == "Experiment/random"
        and "pods" in contained["gang"]
        and "gangScope" in contained
    )
    assert contained["ownerTree"]["gangOwner"] == "Trial/t1"
    alone = describe_live(definition(job), job, pods, (), scope=scope, **common).report
    assert "ownedBy" not in alone and "gangScope" in alone and "pods" in alone["gang"]


def test_an_experiment_is_a_tree_three_levels_deep() -> None:
    """Katib Experiment → Trial → PyTorchJob → pods. The gang is the topmost owner's WITH gang
    instructions: the Experiment's definition has none (it only contains the Trial), so the Trial
    owns its gang and the PyTorchJob it owns is in it (issue 27 item 3; before, no node owned
    one)."""
    root = obj("kubeflow.org/v1beta1", "Experiment", "random")
    trial_ = trial()
    trial_["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "kubeflow.org/v1beta1",
            "kind": "Experiment",
            "name": "random",
            "uid": "uid-Experiment-random",
            "controller": True,
        }
    ]
    job = obj("kubeflow.org/v1", "PyTorchJob", "t1", owner=trial_)
    tree = build_owner_tree(
        root,
        definition(root),
        objects=[job, trial_],
        pods=[pod("t1-master-0", job)],
        resolve=RESOLVE,
        gpu_resources=GPU,
    )
    assert [(n.label, n.gang) for n in tree.nodes()] == [
        ("Experiment/random", False),
        ("Trial/t1", True),
        ("PyTorchJob/t1", False),
    ]
    assert tree.gang_owner is None and tree.root.totals() == (1, 1, 0)


def test_a_tree_whose_root_is_in_an_owners_gang_owns_none() -> None:
    """Describing a Trial whose pods are in the gang of a workload above it (``in_gang``: a Trial
    is never owned so, but the rule is the kind's, not Katib's): no node owns a gang."""
    root = trial()
    job = obj("kubeflow.org/v1", "PyTorchJob", "t1", owner=root)
    tree = build_owner_tree(
        root, definition(root), objects=[job], pods=[], resolve=RESOLVE, gpu_resources=GPU, in_gang=True
    )
    assert [(n.label, n.gang) for n in tree.nodes()] == [("Trial/t1", False), ("PyTorchJob/t1", False)]
    assert tree.gang_owner is None
