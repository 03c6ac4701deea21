"""Cluster Kartas that are invalid or claim one kind twice, on the real API server (issue 12):
``kli definitions`` marks them (STATUS, the ``resolution`` field, warnings), and every command on
that kind still works: an invalid Karta falls back to the built-in definition, duplicates resolve
to the one with Ready=True (then the oldest, then by name) with a one-line warning.

The Kartas are removed afterwards, so other tests see the catalog as before."""

from __future__ import annotations

import copy
import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import CATALOG_DATA_DIR

from .conftest import Training, ensure_karta_crd

KARTAS = "/apis/run.ai/v1alpha1/kartas"
PYTORCH = "kubeflow.org/v1, Kind=PyTorchJob"
JOBSET = "jobset.x-k8s.io/v1alpha2, Kind=JobSet"


def _catalog(slug: str, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = copy.deepcopy(yaml.safe_load((CATALOG_DATA_DIR / f"{slug}.yaml").read_text()))
    doc["metadata"] = {"name": name}
    return doc


def _ready(training: Training, name: str) -> None:
    """Ready=True on the Karta's status, as karta-controller writes it."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [
        {"type": t, "status": "True", "reason": r, "message": "set by the test", "lastTransitionTime": now,
         "observedGeneration": 1}
        for t, r in (("Validated", "ValidationSucceeded"), ("CRDExists", "CRDFound"), ("Ready", "Ready"))
    ]  # fmt: skip
    answer = training.cluster.request(
        "PATCH",
        f"{KARTAS}/{name}/status",
        body={"status": {"conditions": conditions}},
        content_type="application/merge-patch+json",
    )
    assert answer.status == 200, answer.body


@pytest.fixture(scope="module")
def kartas(training: Training) -> Iterator[dict[str, str]]:
    """Two PyTorchJob Kartas (the newer one Ready) and an invalid JobSet one."""
    cluster = training.cluster
    ensure_karta_crd(cluster)
    tag = uuid.uuid4().hex[:4]
    names = {"older": f"pt-older-{tag}", "ready": f"pt-ready-{tag}", "broken": f"js-broken-{tag}"}
    broken = _catalog("jobset-x-k8s-io-jobset-v1alpha2", names["broken"])
    conditions = broken["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"][
        "conditionsDefinition"
    ]
    conditions["path"] = ".status | ("  # cannot parse
    bodies = [
        _catalog("kubeflow-org-pytorchjob-v1", names["older"]),
        _catalog("kubeflow-org-pytorchjob-v1", names["ready"]),
        broken,
    ]
    for i, body in enumerate(bodies):
        if i == 1:
            time.sleep(1.1)  # creationTimestamp has a resolution of one second
        answer = cluster.post(KARTAS, body)
        assert answer.status == 201, answer.body
    _ready(training, names["ready"])
    yield names
    for name in names.values():
        cluster.delete(f"{KARTAS}/{name}")


def _flags(training: Training) -> tuple[str, ...]:
    return ("--kubeconfig", training.kubeconfig, "-n", training.namespace)


def test_duplicates_and_invalid_kartas_are_marked_in_definitions(
    kli: Callable[..., Any], training: Training, kartas: dict[str, str]
) -> None:
    kubeconfig = ("--kubeconfig", training.kubeconfig)
    r = kli("definitions", "--kind", "pytorchjob", *kubeconfig)
    assert r.code == 0, r.err
    rows = {line.split()[0]: line for line in r.out.splitlines()[1:]}
    assert rows[kartas["ready"]].split()[2:4] == ["cluster", "ok"]
    assert f"ignored (duplicate of {kartas['ready']})" in rows[kartas["older"]]
    assert "kubeflow-org-pytorchjob-v1" not in rows  # overridden: listed with --all
    duplicate = (
        f"warning: 2 cluster Karta definitions claim {PYTORCH}: using {kartas['ready']} (Ready=True); "
        f"ignoring {kartas['older']} as a duplicate"
    )
    assert duplicate in r.err.splitlines()

    r = kli("definitions", "--kind", "jobset", "-o", "json", *kubeconfig)
    assert r.code == 0, r.err
    items = {i["metadata"]["name"]: i["resolution"] for i in json.loads(r.out)["items"]}
    assert items[kartas["broken"]]["status"] == "invalid" and not items[kartas["broken"]]["valid"]
    assert items[kartas["broken"]]["usedInstead"] == "jobset-x-k8s-io-jobset-v1alpha2"
    assert items[kartas["broken"]]["problems"][0].startswith("failed to parse JQ expression '.status | ('")
    assert items["jobset-x-k8s-io-jobset-v1alpha2"]["status"] == "ok"
    invalid = [line for line in r.err.splitlines() if kartas["broken"] in line]
    assert invalid == [
        f"warning: cluster Karta {kartas['broken']} is invalid and not used for {JOBSET}: failed to "
        "parse JQ expression '.status | (' at 'spec.structureDefinition.rootComponent.statusDefinition."
        "conditionsDefinition.path': unexpected end of expression (line 1, column 12); using catalog "
        "definition jobset-x-k8s-io-jobset-v1alpha2 instead"
    ]


def test_the_builtin_a_cluster_karta_overrides_is_found_by_name(
    kli: Callable[..., Any], training: Training, kartas: dict[str, str]
) -> None:
    r = kli("definitions", "kubeflow-org-pytorchjob-v1", "--kubeconfig", training.kubeconfig)
    assert r.code == 0, r.err  # was exit 4: the cluster Karta hid the built-in's name
    assert f"overridden (by {kartas['ready']})" in r.out
    assert (
        f"warning: catalog definition kubeflow-org-pytorchjob-v1 is overridden by cluster Karta "
        f"{kartas['ready']}: workloads of its kind use that one"
    ) in r.err.splitlines()
    r = kli("definitions", "kubeflow-org-pytorchjob-v1", "-o", "yaml", "--kubeconfig", training.kubeconfig)
    assert yaml.safe_load(r.out)["metadata"]["name"] == "kubeflow-org-pytorchjob-v1"


def test_every_command_on_the_kinds_still_works(
    kli: Callable[..., Any], training: Training, kartas: dict[str, str], tmp_path: Path
) -> None:
    flags = _flags(training)
    note = f"2 cluster Karta definitions claim {PYTORCH}: using {kartas['ready']}"
    r = kli("get", "pytorchjob", "-o", "json", *flags)
    assert r.code == 0, r.err  # was exit 2 for everyone
    assert json.loads(r.out)["items"][0]["definition"] == kartas["ready"]
    assert [line for line in r.err.splitlines() if note in line] != []
    r = kli("describe", "pytorchjob/pytorch-dist-mnist-nccl", *flags)
    assert r.code == 0, r.err
    assert f"definition: {kartas['ready']} (cluster)" in r.out.splitlines()[0]
    assert note in r.err
    r = kli("gang", "pytorchjob/pytorch-dist-mnist-nccl", "--backend", "volcano", *flags)
    assert r.code == 0, r.err
    assert f"run.ai/karta-name: {kartas['ready']}" in r.out and note in r.err

    # the invalid JobSet Karta never blocks the built-in one
    r = kli("get", "jobset", "-o", "json", *flags)
    assert r.code == 0, r.err
    assert json.loads(r.out)["items"][0]["definition"] == "jobset-x-k8s-io-jobset-v1alpha2"
    assert f"cluster Karta {kartas['broken']} is invalid and not used" in r.err
    manifest = tmp_path / "jobset.json"
    obj = training.cluster.get(
        f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{training.namespace}/jobsets/paralleljobs"
    )
    manifest.write_text(json.dumps(obj.json()))
    for argv in (
        ("describe", "-f", str(manifest)),
        ("inspect", "-f", str(manifest)),
        ("describe", "jobset/paralleljobs"),
    ):
        r = kli(*argv, "-o", "json", *flags)
        assert r.code == 0, (argv, r.err)
        assert json.loads(r.out)["definition"] == "jobset-x-k8s-io-jobset-v1alpha2", argv
    # asked for by name, the invalid one is refused with its problem
    r = kli("inspect", "-f", str(manifest), "--definition", kartas["broken"], *flags)
    assert r.code == 1
    assert r.err.startswith(
        f"error: cluster Karta {kartas['broken']} is not a valid Karta definition: failed to parse"
    )
    assert (
        f"hint: 'kubectl get karta {kartas['broken']} -o yaml | kli validate -' shows every finding" in r.err
    )
