"""``kli rbac``: rules per API group, plurals from CRDs or guessed, backends, binding, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from karta.model.names import plural_guess

CRDS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "crds"


def rules_of(text: str) -> list[dict[str, object]]:
    docs = list(yaml.safe_load_all(text))
    assert docs[0]["kind"] == "ClusterRole"
    return list(docs[0]["rules"])


def test_catalog_definitions_and_backend(kli) -> None:
    r = kli("rbac", "kubeflow-org-pytorchjob-v1", "batch-job-v1", "--backend", "kai", "--backend", "kueue")
    assert r.code == 0, r.err
    assert r.out.startswith("# For the workloads of: batch-job-v1, kubeflow-org-pytorchjob-v1\n")
    assert "# pytorchjobs.kubeflow.org: plural of PyTorchJob guessed (lower-cased kind + s)" in r.out
    assert "jobs.batch" not in r.out  # built-in plurals are not guesses worth a comment
    read = ["get", "list", "watch"]
    assert rules_of(r.out) == [
        # pods and their owners (every pod of the namespace is walked), Events (kli describe)
        {"apiGroups": [""], "resources": ["events", "pods"], "verbs": read},
        {"apiGroups": ["apps"], "resources": ["replicasets", "statefulsets"], "verbs": read},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": read},
        {"apiGroups": ["kubeflow.org"], "resources": ["pytorchjobs"], "verbs": read},
        {"apiGroups": ["run.ai"], "resources": ["kartas"], "verbs": read},
        # Kueue's queue state (kli get's QUEUE column, kli describe's Queue line, kli ui's queue page)
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["clusterqueues", "localqueues", "workloads"],
            "verbs": read,
        },
        # a pending Workload's position (Kueue's visibility API), read-only
        {
            "apiGroups": ["visibility.kueue.x-k8s.io"],
            "resources": ["localqueues/pendingworkloads"],
            "verbs": ["get"],
        },
        {
            "apiGroups": ["scheduling.run.ai"],
            "resources": ["podgroups"],
            "verbs": [*read, "create", "update", "patch", "delete"],
        },
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads"],
            "verbs": [*read, "create", "update", "patch", "delete"],
        },
    ]
    assert len(list(yaml.safe_load_all(r.out))) == 1  # no binding without --service-account


@pytest.mark.skipif(not CRDS.is_dir(), reason="shared corpus not found")
def test_plural_from_crd_and_binding(kli) -> None:
    crd = str(CRDS / "milvus.io_milvuses.yaml")
    r = kli(
        "rbac",
        "milvus-io-milvus-v1beta1",
        "--crd",
        crd,
        "--service-account",
        "ai/reader",
        "--name",
        "milvus-view",
    )
    assert r.code == 0, r.err
    assert "guessed" not in r.out
    role, binding = yaml.safe_load_all(r.out)
    assert {"apiGroups": ["milvus.io"], "resources": ["milvuses"], "verbs": ["get", "list", "watch"]} in role[
        "rules"
    ]
    assert role["metadata"]["name"] == "milvus-view"
    assert binding["kind"] == "ClusterRoleBinding"
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "milvus-view",
    }
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "reader", "namespace": "ai"}]


def test_the_kinds_a_workload_is_made_of(kli) -> None:
    """Components' kinds and additionalChildKinds, and what the definitions of those kinds name in
    turn: a Milvus's Deployments own ReplicaSets; a TrainJob's JobSet owns Jobs, and it reads its runtime."""
    r = kli("rbac", "milvus-io-milvus-v1beta1", "trainer-kubeflow-org-trainjob-v1alpha1", "-o", "json")
    assert r.code == 0, r.err
    rules = {rule["apiGroups"][0]: rule["resources"] for rule in json.loads(r.out)["items"][0]["rules"]}
    assert rules[""] == ["events", "pods"]
    assert rules["apps"] == ["deployments", "replicasets", "statefulsets"]
    assert rules["batch"] == ["jobs"]
    assert rules["jobset.x-k8s.io"] == ["jobsets"]
    # the TrainJob reads its runtime (extension E3): both runtime kinds, read-only
    assert rules["trainer.kubeflow.org"] == ["clustertrainingruntimes", "trainingruntimes", "trainjobs"]
    r = kli("rbac", "apps-deployment-v1")
    assert "replicasets" in rules_of(r.out)[1]["resources"]  # its additionalChildKinds


def test_definition_file_and_json(kli, examples: Path) -> None:
    r = kli(
        "rbac",
        str(examples / "definitions/example-dev-jobgroup-v1.yaml"),
        "--backend",
        "workload-api",
        "-o",
        "json",
    )
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["kind"] == "List" and [i["kind"] for i in data["items"]] == ["ClusterRole"]
    groups = [rule["apiGroups"][0] for rule in data["items"][0]["rules"]]
    assert "example.dev" in groups and "scheduling.k8s.io" in groups


def test_errors(kli, tmp_path: Path) -> None:
    r = kli("rbac", "no-such-definition")
    assert r.code == 4 and "no Karta definition named 'no-such-definition'" in r.err
    assert kli("rbac").code == 2
    r = kli("rbac", "batch-job-v1", "--service-account", "reader")
    assert r.code == 2 and "expected NAMESPACE/NAME" in r.err
    assert kli("rbac", "batch-job-v1", "--backend", "slurm").code == 2
    bad = tmp_path / "notcrd.yaml"
    bad.write_text("kind: Pod\n")
    r = kli("rbac", "batch-job-v1", "--crd", str(bad))
    assert r.code == 2 and "holds no CustomResourceDefinition" in r.err


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("PyTorchJob", "pytorchjobs"),
        ("Milvus", "milvuses"),
        ("NIMCache", "nimcaches"),
        ("Policy", "policies"),
        ("Gateway", "gateways"),
        ("Box", "boxes"),
    ],
)
def test_plural_guess(kind: str, plural: str) -> None:
    assert plural_guess(kind) == plural
