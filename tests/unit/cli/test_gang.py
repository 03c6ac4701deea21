"""``kli gang -f``: YAML ready for kubectl apply, the JSON List, per-pod patches, definition
resolution, warnings on stderr, exit codes, and byte-identical output for identical input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

WORKLOAD = "workloads/pytorchjob-train-7.yaml"
PODS = "pods/pytorchjob-train-7-pods.yaml"
DEFINITION = "definitions/kubeflow-org-pytorchjob-v1.yaml"
UID = "6d1e0c7a-51f2-4c2e-9a55-0b3d00000007"
TRAIN_7_PODS = [
    "train-7-master-0",
    "train-7-worker-0",
    "train-7-worker-1",
    "train-7-worker-2",
    "train-7-worker-3",
]


def _args(examples: Path, *extra: str, definition: bool = True) -> list[str]:
    args = ["gang", "-f", str(examples / WORKLOAD)]
    if definition:
        args += ["--definition", str(examples / DEFINITION)]
    return [*args, *extra]


def test_kai_preview_yaml(kli: Callable[..., Any], examples: Path) -> None:
    result = kli(*_args(examples, "--backend", "kai"))
    assert result.code == 0, result.err
    (group,) = list(yaml.safe_load_all(result.out))
    assert group["metadata"]["name"] == f"pg-{UID}-job"
    assert group["spec"] == {
        "queue": "team-a",
        "minSubGroup": 2,
        "subGroups": [{"name": "master", "minMember": 1}, {"name": "worker", "minMember": 4}],
    }
    assert result.err == ""


def test_multi_document_yaml_and_json_list(kli: Callable[..., Any], examples: Path) -> None:
    result = kli(*_args(examples, "--backend", "workload-api", "--k8s-version", "1.36"))
    assert result.code == 0, result.err
    docs = list(yaml.safe_load_all(result.out))
    assert [(d["apiVersion"], d["kind"]) for d in docs] == [
        ("scheduling.k8s.io/v1alpha2", "Workload"),
        ("scheduling.k8s.io/v1alpha2", "PodGroup"),
    ]
    assert "\n---\n" in result.out
    assert result.err.startswith("warning: Workload API has no sub-groups")
    as_json = kli(*_args(examples, "--backend", "workload-api", "--k8s-version", "1.36", "-o", "json"))
    data = orjson.loads(as_json.out)
    assert (data["apiVersion"], data["kind"]) == ("v1", "List")
    assert data["items"] == docs


def test_options_reach_the_renderers(kli: Callable[..., Any], examples: Path) -> None:
    result = kli(*_args(examples, "--backend", "volcano", "--queue", "default", "--min-resources"))
    (group,) = list(yaml.safe_load_all(result.out))
    assert group["spec"] == {
        "minMember": 5,
        "minTaskMember": {"master": 1, "worker": 4},
        "queue": "default",
        "minResources": {"nvidia.com/gpu": "33"},
    }
    result = kli(*_args(examples, "--backend", "coscheduling", "--schedule-timeout", "300"))
    (group,) = list(yaml.safe_load_all(result.out))
    assert group["spec"] == {"minMember": 5, "scheduleTimeoutSeconds": 300}


def test_pod_patches_are_kubectl_patch_commands_of_mutable_fields(
    kli: Callable[..., Any], examples: Path
) -> None:
    import shlex

    result = kli(*_args(examples, "--backend", "kai", "--pods", str(examples / PODS), "--pod-patches"))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    commands = [shlex.split(line) for line in lines]
    assert [c[:4] for c in commands] == [["kubectl", "patch", "pod", p] for p in TRAIN_7_PODS]
    assert {tuple(c[4:8]) for c in commands} == {("-n", "ml-team", "--type=merge", "-p")}
    assert orjson.loads(commands[3][8]) == {
        "metadata": {
            "annotations": {"pod-group-name": f"pg-{UID}-job"},
            "labels": {"kai.scheduler/subgroup-name": "worker"},
        }
    }
    # schedulerName is immutable on existing pods: said on stderr, never in a patch
    assert "schedulerName" not in result.out
    (warning,) = result.err.splitlines()
    assert warning.startswith('warning: spec.schedulerName: "kai-scheduler" is left out of the patches: ')
    assert "immutable once a pod exists" in warning and ", ".join(TRAIN_7_PODS) in warning


def test_pod_patches_as_a_list_of_partial_pods(kli: Callable[..., Any], examples: Path) -> None:
    pods = str(examples / PODS)
    for output in ("json", "yaml"):
        result = kli(
            *_args(examples, "--backend", "coscheduling", "--pods", pods, "--pod-patches", "-o", output)
        )
        assert result.code == 0, result.err
        data = yaml.safe_load(result.out)
        assert (data["apiVersion"], data["kind"]) == ("v1", "List")
        assert [i["metadata"]["name"] for i in data["items"]] == TRAIN_7_PODS
        assert data["items"][0] == {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "train-7-master-0",
                "namespace": "ml-team",
                "labels": {"scheduling.x-k8s.io/pod-group": "train-7-job"},
            },
        }


def test_pod_patches_of_the_workload_api_are_none(kli: Callable[..., Any], examples: Path) -> None:
    # spec.schedulingGroup is the whole binding, and it is immutable
    # (docs/spec/gang-backends.md#workload-api-v1beta1)
    pods = str(examples / PODS)
    result = kli(*_args(examples, "--backend", "workload-api", "--pods", pods, "--pod-patches"))
    assert (result.code, result.out) == (0, "")
    assert 'spec.schedulingGroup: {"podGroupName": "train-7-job"} is left out of the patches' in result.err


def test_pods_that_already_have_the_scheduler_are_not_warned_about(
    kli: Callable[..., Any], examples: Path, tmp_path: Path
) -> None:
    docs = [d for d in yaml.safe_load_all((examples / PODS).read_text()) if d]
    for doc in docs:
        doc["spec"]["schedulerName"] = "volcano"
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump_all(docs))
    result = kli(*_args(examples, "--backend", "volcano", "--pods", str(pods), "--pod-patches"))
    assert (result.code, result.err) == (0, "")
    assert len(result.out.splitlines()) == len(TRAIN_7_PODS)


def test_pod_patches_without_pods_say_so(kli: Callable[..., Any], examples: Path) -> None:
    result = kli(*_args(examples, "--backend", "volcano", "--pod-patches"))
    assert (result.code, result.out) == (0, "")
    assert "no pod patches: the workload has no pods; pass them with --pods" in result.err
    result = kli(*_args(examples, "--backend", "kueue", "--pods", str(examples / PODS), "--pod-patches"))
    assert (result.code, result.out) == (0, "")
    assert "Kueue's own integration binds the pods" in result.err


DOTTED = "llama-3.1-8b-instruct-fp8-l4-model"


def _dotted(examples: Path, tmp_path: Path) -> Path:
    obj = yaml.safe_load((examples / WORKLOAD).read_text())
    obj["metadata"]["name"] = DOTTED
    path = tmp_path / "dotted.yaml"
    path.write_text(yaml.safe_dump(obj))
    return path


@pytest.mark.parametrize(
    ("backend", "names"),
    [
        ("coscheduling", [f"{DOTTED}-job"]),
        ("volcano", [f"{DOTTED}-job"]),
        ("workload-api", [DOTTED, f"{DOTTED}-job"]),
        ("kueue", [f"pytorchjob-{DOTTED}"]),
        ("kai", [f"pg-{UID}-job"]),
    ],
)
def test_dotted_workload_names_render_for_every_backend(
    kli: Callable[..., Any], examples: Path, tmp_path: Path, backend: str, names: list[str]
) -> None:
    path = _dotted(examples, tmp_path)
    result = kli("gang", "-f", str(path), "--definition", str(examples / DEFINITION), "--backend", backend)
    assert result.code == 0, result.err
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(result.out)] == names


@pytest.mark.parametrize(
    ("backend", "extra", "names"),
    [
        ("coscheduling", [], ["my.group"]),
        ("volcano", [], ["my.group"]),
        ("kai", ["--kai-managed"], ["my.group"]),
        ("workload-api", [], [DOTTED, "my.group"]),
        ("workload-api", ["--k8s-version", "1.35"], ["my.group"]),
        ("workload-api", ["--composite"], [DOTTED, "my.group", "my.group-master", "my.group-worker"]),
        ("kueue", [], ["my.group"]),
    ],
)
def test_name_names_the_group_object(
    kli: Callable[..., Any], examples: Path, tmp_path: Path, backend: str, extra: list[str], names: list[str]
) -> None:
    path = _dotted(examples, tmp_path)
    args = ["gang", "-f", str(path), "--definition", str(examples / DEFINITION), "--backend", backend]
    result = kli(*args, *extra, "--name", "my.group", "--pods", str(examples / PODS), "-o", "json")
    assert result.code == 0, result.err
    assert [d["metadata"]["name"] for d in orjson.loads(result.out)["items"]] == names
    patches = kli(*args, *extra, "--name", "my.group", "--pods", str(examples / PODS), "--pod-patches")
    if backend in ("coscheduling", "volcano", "kai"):  # the pods point at the named object
        assert "my.group" in patches.out.splitlines()[0]


@pytest.mark.parametrize(
    ("backend", "name", "message"),
    [
        ("volcano", "Train_7", 'group name "Train_7" is not a DNS-1123 subdomain'),
        ("workload-api", "-x", 'group name "-x" is not a DNS-1123 subdomain'),
        ("kueue", "a" * 254, "has 254 characters; at most 253"),
        ("coscheduling", "a" * 64, "has 64 characters; at most 63 (it is also written as a pod label value)"),
        ("kai", "x", "KAI names the PodGroups it creates itself"),
    ],
)
def test_invalid_names_are_usage_errors(
    kli: Callable[..., Any], examples: Path, backend: str, name: str, message: str
) -> None:
    result = kli(*_args(examples, "--backend", backend, "--name", name))
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith("error: --name: ")
    assert message in result.err


def test_catalog_definition_is_resolved_by_gvk(kli: Callable[..., Any], examples: Path) -> None:
    result = kli(*_args(examples, "--backend", "kai", definition=False))
    assert result.code == 0, result.err
    (group,) = list(yaml.safe_load_all(result.out))
    # the catalog's PyTorchJob gang is one group named after the kind, without sub-groups
    assert group["metadata"]["name"] == f"pg-{UID}-pytorchjob"
    assert group["spec"]["minMember"] == 5


def test_kai_managed_mode_says_what_to_do_with_the_workload(kli: Callable[..., Any], examples: Path) -> None:
    result = kli(*_args(examples, "--backend", "kai", "--kai-managed"))
    assert result.code == 0
    assert "kai.scheduler/skip-podgrouper=true" in result.err


def test_output_is_byte_identical(kli: Callable[..., Any], examples: Path) -> None:
    for backend in ("kai", "workload-api", "volcano", "coscheduling", "kueue"):
        args = _args(examples, "--backend", backend, "--pods", str(examples / PODS))
        assert kli(*args).out == kli(*args).out


def test_type_name_needs_a_cluster(kli: Callable[..., Any]) -> None:
    result = kli("gang", "pytorchjob/train-7", "--backend", "kai")
    assert result.code == 1
    assert result.out == ""
    assert "no cluster configured" in result.err


def test_type_name_and_file_do_not_combine(kli: Callable[..., Any], examples: Path) -> None:
    result = kli("gang", "pytorchjob/train-7", "-f", "x.yaml", "--backend", "kai")
    assert result.code == 2
    assert "cannot be combined with -f" in result.err
    result = kli("gang", "pytorchjob/train-7", "--pods", "p.yaml", "--backend", "kai")
    assert result.code == 2
    assert "--pods goes with -f FILE" in result.err


def test_file_is_required(kli: Callable[..., Any]) -> None:
    result = kli("gang", "--backend", "kai")
    assert result.code == 2
    assert "or -f FILE" in result.err


def test_backend_is_required_and_checked(kli: Callable[..., Any], examples: Path) -> None:
    assert kli("gang", "-f", str(examples / WORKLOAD)).code == 2
    result = kli("gang", "-f", str(examples / WORKLOAD), "--backend", "yunikorn")
    assert result.code == 2
    assert "yunikorn" in result.err


def test_render_errors_exit_1(kli: Callable[..., Any], examples: Path, tmp_path: Path) -> None:
    obj = yaml.safe_load((examples / WORKLOAD).read_text())
    del obj["metadata"]["uid"]
    path = tmp_path / "no-uid.yaml"
    path.write_text(yaml.safe_dump(obj))
    result = kli("gang", "-f", str(path), "--backend", "kai")
    assert result.code == 1
    assert result.err.startswith(f"error: cannot render kai objects for {path}: KAI names its PodGroups")
    # the other backends render, and warn that garbage collection needs the UID
    result = kli("gang", "-f", str(path), "--backend", "volcano")
    assert result.code == 0
    assert "no metadata.uid" in result.err


def test_no_definition_exits_4(kli: Callable[..., Any], tmp_path: Path) -> None:
    path = tmp_path / "thing.yaml"
    path.write_text("apiVersion: example.org/v1\nkind: Thing\nmetadata: {name: t}\n")
    result = kli("gang", "-f", str(path), "--backend", "kai")
    assert result.code == 4
    assert "no Karta definition covers Thing" in result.err


def test_definition_without_gang_instructions(kli: Callable[..., Any], tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, uid: u}\n"
        "spec: {replicas: 2, template: {spec: {containers: [{name: c}]}}}\n"
    )
    result = kli("gang", "-f", str(path), "--backend", "volcano")
    assert result.code == 1
    assert "has no gang-scheduling instructions" in result.err


@pytest.mark.parametrize("backend", ["kai", "volcano"])
def test_alpha_gangs_without_pods_say_why_nothing_is_printed(
    kli: Callable[..., Any], tmp_path: Path, backend: str
) -> None:
    path = tmp_path / "sandbox.yaml"  # the catalog's Sandbox: one alpha gang per owning Sandbox's UID
    path.write_text(
        "apiVersion: agents.x-k8s.io/v1beta1\nkind: Sandbox\nmetadata: {name: sb, uid: u}\n"
        "spec:\n  podTemplate: {spec: {containers: [{name: c, image: i}]}}\n"
    )
    result = kli("gang", "-f", str(path), "--backend", backend)
    assert result.code == 0
    assert result.out == ""
    assert "alpha-format gangs are found from pods; pass --pods" in result.err


@pytest.mark.parametrize(("backend", "name"), [("kai", "pg-u-jobset"), ("volcano", "js-jobset")])
def test_a_jobset_is_one_gang_before_any_pod(
    kli: Callable[..., Any], tmp_path: Path, backend: str, name: str
) -> None:
    path = tmp_path / "jobset.yaml"
    path.write_text(
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js, uid: u}\n"
        "spec:\n  replicatedJobs:\n"
        "  - {name: leader, template: {spec: {template: {spec: {containers: [{name: c}]}}}}}\n"
        "  - {name: workers, replicas: 2, template: {spec: {parallelism: 3,"
        " template: {spec: {containers: [{name: c}]}}}}}\n"
    )
    result = kli("gang", "-f", str(path), "--backend", backend)
    assert result.code == 0, result.err
    (group,) = list(yaml.safe_load_all(result.out))
    assert group["kind"] == "PodGroup"
    assert (group["metadata"]["name"], group["spec"]["minMember"]) == (name, 7)  # 1 x 1 + 2 x 3


def _gang_page(examples: Path) -> str:
    """The reference page of ``kli gang`` (docs/reference/commands/gang.md), whose examples these are."""
    return (examples.parent / "docs" / "reference" / "commands" / "gang.md").read_text()


def test_docs_example_is_the_real_output(kli: Callable[..., Any], examples: Path) -> None:
    block = _gang_page(examples).split("--backend kai\n", 1)[1].split("```", 1)[0]
    assert kli(*_args(examples, "--backend", "kai")).out == block


def test_docs_pod_patches_example_is_the_real_output(kli: Callable[..., Any], examples: Path) -> None:
    page = _gang_page(examples)
    block = page.split("--pods examples/pods/pytorchjob-train-7-pods.yaml --pod-patches\n", 1)[1]
    shown = [line.strip() for line in block.split("```", 1)[0].splitlines()]
    result = kli(*_args(examples, "--backend", "volcano", "--pods", str(examples / PODS), "--pod-patches"))
    assert result.code == 0, result.err
    assert shown[:2] == result.out.splitlines()[:2]
    assert shown[2] == "..."
    (warning,) = result.err.splitlines()
    assert warning == shown[3]


CORPUS_WORKLOADS = Path("../shared/corpus/workloads")


@pytest.mark.skipif(not CORPUS_WORKLOADS.is_dir(), reason=f"shared corpus not found at {CORPUS_WORKLOADS}")
@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        # One PodGroup per LWS group of 4 (issue 22), not one of 12 for the whole set.
        ("lws/lws-sample.yaml", [(f"leaderworkerset-sample-leaderworkerset-{i}", 4) for i in range(3)]),
        # InOrder: one per replicated job, the workers' before their pods exist.
        (
            "jobset/startup-driver-ready.yaml",
            [("startup-driver-ready-jobset-driver", 1), ("startup-driver-ready-jobset-workers", 4)],
        ),
        ("jobset/paralleljobs.yaml", [("paralleljobs-jobset", 5)]),
        ("grove/pcs-multi-node-disaggregated.yaml", [("multinode-disaggregated-podcliqueset-0", 8)]),
    ],
)
def test_catalog_gangs_per_replica_of_the_corpus(
    kli: Callable[..., Any], manifest: str, expected: list[tuple[str, int]]
) -> None:
    result = kli("gang", "-f", str(CORPUS_WORKLOADS / manifest), "--backend", "volcano")
    assert result.code == 0, result.err
    groups = [doc for doc in yaml.safe_load_all(result.out) if doc]
    assert [(g["kind"], g["metadata"]["name"], g["spec"]["minMember"]) for g in groups] == [
        ("PodGroup", name, minimum) for name, minimum in expected
    ]


VOLCANO = (
    Path(__file__).resolve().parents[4] / "shared" / "corpus" / "workloads" / "volcano" / "vcjob-mpi.yaml"
)


def test_kueue_says_when_karta_controller_would_not_queue_the_kind(
    kli: Callable[..., Any], examples: Path
) -> None:
    """issue 25: a definition karta-controller's Kueue part does not manage (no suspend actions on
    the root: karta.kueue.eligibility) gets a warning naming the definition and the field."""
    volcano = kli("gang", "--backend", "kueue", "--queue", "team", "-f", str(VOLCANO))
    assert volcano.code == 0, volcano.err
    assert (
        "warning: karta-controller --kueue does not queue workloads of definition "
        "batch-volcano-sh-job-v1alpha1: the root component job has no "
        "suspendDefinition.suspendActions: karta cannot hold the workload until Kueue admits it"
    ) in volcano.err
    pytorch = kli(*_args(examples, "--backend", "kueue"))
    assert pytorch.code == 0, pytorch.err
    assert "does not queue" not in pytorch.err
