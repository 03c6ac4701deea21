"""``kli definitions`` against the real API server (17.3, 17.7, R15): a cluster Karta replaces the
catalog entry for its root GVK (and ``kli describe`` then uses it), cluster Kartas without correct
``run.ai/karta-*`` labels are reported as not visible to KAI Scheduler."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from karta.catalog import CATALOG_DATA_DIR

from ..kubehttp import KubeHTTP
from .conftest import Training, ensure_karta_crd

KARTAS = "/apis/run.ai/v1alpha1/kartas"


def _catalog(file_name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((CATALOG_DATA_DIR / file_name).read_text())
    return copy.deepcopy(doc)


@pytest.fixture(scope="module")
def kartas(cluster: KubeHTTP) -> Iterator[dict[str, str]]:
    """Our PyTorchJob Karta (correct labels), one without labels and one with a wrong label."""
    ensure_karta_crd(cluster)
    tag = uuid.uuid4().hex[:6]
    names = {"pytorch": f"my-pytorchjob-{tag}", "bare": f"unlabelled-{tag}", "wrong": f"mislabelled-{tag}"}
    pytorch = _catalog("kubeflow-org-pytorchjob-v1.yaml")
    pytorch["metadata"] = {
        "name": names["pytorch"],
        "labels": {
            "run.ai/karta-group": "kubeflow.org",
            "run.ai/karta-version": "v1",
            "run.ai/karta-kind": "PyTorchJob",
        },
    }
    bodies = [pytorch]
    for key, labels in (("bare", {}), ("wrong", {"run.ai/karta-group": "example.karta.test"})):
        body = _catalog("batch-job-v1.yaml")
        body["metadata"] = {"name": names[key], "labels": labels}
        kind = {"group": "example.karta.test", "version": "v1", "kind": f"Widget{key.capitalize()}{tag}"}
        body["spec"]["structureDefinition"]["rootComponent"]["kind"] = kind
        if key == "wrong":
            body["metadata"]["labels"].update({"run.ai/karta-version": "v1", "run.ai/karta-kind": "Gadget"})
        bodies.append(body)
    for body in bodies:
        answer = cluster.post(KARTAS, body)
        assert answer.status == 201, answer.body
    yield {**names, "tag": tag}
    for name in names.values():
        cluster.delete(f"{KARTAS}/{name}")


def test_cluster_karta_replaces_the_catalog_entry(
    kli: Callable[..., Any], cluster: KubeHTTP, kartas: dict[str, str]
) -> None:
    kubeconfig = str(cluster.kubeconfig)
    r = kli("definitions", "--kubeconfig", kubeconfig)
    assert r.code == 0, r.err
    rows = {line.split()[0]: line.split() for line in r.out.splitlines()[1:]}
    # not a terminal: nothing is cut (issue 12), KIND keeps its version and group
    assert rows[kartas["pytorch"]][1:4] == ["PyTorchJob.v1.kubeflow.org", "cluster", "ok"]
    assert "kubeflow-org-pytorchjob-v1" not in rows  # overridden: shown by name or with --all
    assert rows["batch-job-v1"][2:4] == ["catalog", "ok"]
    r = kli("definitions", "--group", "kubeflow.org", "--kind", "PyTorchJob", "--kubeconfig", kubeconfig)
    assert r.code == 0, r.err
    name = kartas["pytorch"]
    assert r.out == (
        f"NAME{' ' * (len(name) - 1)}KIND                         ORIGIN    STATUS   COMPONENTS\n"
        f"{name}   PyTorchJob.v1.kubeflow.org   cluster   ok       pytorchjob, master, worker\n"
    )
    r = kli("definitions", "--kind", "PyTorchJob", "--all", "--kubeconfig", kubeconfig)
    assert [line.split()[:4] for line in r.out.splitlines()[1:]] == [
        ["kubeflow-org-pytorchjob-v1", "PyTorchJob.v1.kubeflow.org", "catalog", "overridden"],
        [name, "PyTorchJob.v1.kubeflow.org", "cluster", "ok"],
    ]
    r = kli("definitions", name, "-o", "json", "--kubeconfig", kubeconfig)
    assert r.code == 0, r.err
    assert json.loads(r.out)["metadata"]["name"] == name


def test_kai_visibility_warnings(kli: Callable[..., Any], cluster: KubeHTTP, kartas: dict[str, str]) -> None:
    r = kli("definitions", "-o", "json", "--kubeconfig", str(cluster.kubeconfig))
    assert r.code == 0, r.err
    names = {item["metadata"]["name"] for item in json.loads(r.out)["items"]}
    assert {kartas["pytorch"], kartas["bare"], kartas["wrong"]} <= names
    warnings = [line for line in r.err.splitlines() if kartas["tag"] in line]
    tag = kartas["tag"]
    assert sorted(warnings) == [
        f"warning: cluster Karta {kartas['wrong']} is not visible to KAI Scheduler: "
        f'label run.ai/karta-kind is "Gadget", expected "WidgetWrong{tag}"',
        f"warning: cluster Karta {kartas['bare']} is not visible to KAI Scheduler: "
        "label run.ai/karta-group is missing; label run.ai/karta-version is missing; "
        "label run.ai/karta-kind is missing",
    ]
    assert not any(kartas["pytorch"] in line for line in r.err.splitlines())


def test_describe_uses_the_cluster_definition(
    kli: Callable[..., Any], training: Training, kartas: dict[str, str]
) -> None:
    r = kli(
        "describe",
        "pytorchjob/pytorch-dist-mnist-nccl",
        "-n",
        training.namespace,
        "--kubeconfig",
        training.kubeconfig,
    )
    assert r.code == 0, r.err
    assert f"definition: {kartas['pytorch']} (cluster)" in r.out.splitlines()[0]
    assert "`-- worker" in r.out and "2/3 ready" in r.out


def test_definitions_without_a_cluster(kli: Callable[..., Any]) -> None:
    r = kli("definitions", "--group", "kubeflow.org", "--kind", "pytorchjob")
    assert r.code == 0, r.err
    assert (  # not a terminal: KIND keeps its version and group
        "kubeflow-org-pytorchjob-v1   PyTorchJob.v1.kubeflow.org   catalog   ok       "
        "pytorchjob, master, worker" in r.out
    )
    assert r.err == ""
