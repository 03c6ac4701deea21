"""One definition resolution everywhere (issue 8): every command that resolves a definition picks
the same one for a workload whether it reads the object from the cluster (TYPE/NAME) or from a
manifest file (-f), with cluster Kartas in play.

Two situations, each checked through ``get``, ``describe`` (live and -f), ``inspect -f`` and
``gang`` (live and -f):

- a cluster Karta replacing the built-in PyTorchJob definition (precedence cluster > catalog);
- a kind served at v1 and v2 whose only definition is for v1: the v2 object resolves through the
  other-version rule both ways (and is read at the definition's version live).

And ``--definition NAME`` (issue 12) picks the named definition alike in every command that takes
it, the built-in a cluster Karta overrides included (with a warning that its kind resolves to the
cluster Karta); ``kli definitions NAME`` shows that built-in, marked overridden.

The cluster Kartas are removed afterwards, so other tests see the catalog as before.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import CATALOG_DATA_DIR

from .conftest import Training, _wait_served, ensure_karta_crd

GROUP = "agree.karta.test"
WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": version,
                "served": True,
                "storage": version == "v2",
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
            for version in ("v2", "v1")
        ],
    },
}
WIDGET_KARTA = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": f"agree-widget-v1-{uuid.uuid4().hex[:4]}"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "widget",
                "kind": {"group": GROUP, "version": "v1", "kind": "Widget"},
                "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                "scaleDefinition": {"replicasPath": ".spec.replicas"},
                "statusDefinition": {
                    "phaseDefinition": {"path": ".status.phase"},
                    "statusMappings": {"running": [{"byPhase": "Running"}]},
                },
            }
        },
        "optimizationInstructions": {"gangScheduling": {"podGroup": {"name": "widget"}}},
    },
}


@pytest.fixture
def agreeing(training: Training) -> Iterator[dict[str, Any]]:
    """The cluster Kartas and the Widget of this test; removed afterwards."""
    cluster = training.cluster
    ensure_karta_crd(cluster)
    cluster.ensure_crd(copy.deepcopy(WIDGET_CRD))
    _wait_served(cluster, f"/apis/{GROUP}/v1")
    pytorch = yaml.safe_load((CATALOG_DATA_DIR / "kubeflow-org-pytorchjob-v1.yaml").read_text())
    pytorch["metadata"] = {"name": f"agree-pytorchjob-{uuid.uuid4().hex[:4]}"}
    names = []
    for karta in (pytorch, WIDGET_KARTA):
        answer = cluster.post("/apis/run.ai/v1alpha1/kartas", karta)
        assert answer.status == 201, answer.body
        names.append(karta["metadata"]["name"])
    template = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    widget = {
        "apiVersion": f"{GROUP}/v2",
        "kind": "Widget",
        "metadata": {"name": "w1"},
        "spec": {"replicas": 2, "template": template},
    }
    answer = cluster.post(f"/apis/{GROUP}/v2/namespaces/{training.namespace}/widgets", widget)
    assert answer.status == 201, answer.body
    try:
        yield {"pytorch": names[0], "widget": names[1]}
    finally:
        for name in names:
            cluster.delete(f"/apis/run.ai/v1alpha1/kartas/{name}")
        cluster.delete(f"/apis/{GROUP}/v2/namespaces/{training.namespace}/widgets/w1")


def _manifest(training: Training, path: str, tmp_path: Path, name: str) -> str:
    obj = training.cluster.get(path).json()
    file = tmp_path / f"{name}.json"
    file.write_text(json.dumps(obj))
    return str(file)


PYTORCHJOB = "/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs/pytorch-dist-mnist-nccl"
WIDGET = f"/apis/{GROUP}/v2/namespaces/{{ns}}/widgets/w1"


@pytest.mark.parametrize(
    ("which", "token", "path"),
    [("pytorch", "pytorchjob/pytorch-dist-mnist-nccl", PYTORCHJOB), ("widget", "widget/w1", WIDGET)],
)
def test_every_command_resolves_a_workload_alike_live_and_from_a_file(
    kli: Callable[..., Any],
    training: Training,
    agreeing: dict[str, str],
    tmp_path: Path,
    which: str,
    token: str,
    path: str,
) -> None:
    expected = agreeing[which]
    flags = ("--kubeconfig", training.kubeconfig, "-n", training.namespace)
    manifest = _manifest(training, path.format(ns=training.namespace), tmp_path, which)

    got = kli("get", *token.split("/"), "-o", "json", *flags)
    assert got.code == 0, got.err
    assert (json.loads(got.out)["definition"], json.loads(got.out)["origin"]) == (expected, "cluster")

    for args in ((token,), ("-f", manifest)):
        described = kli("describe", *args, "-o", "json", *flags)
        assert described.code == 0, (args, described.err)
        assert json.loads(described.out)["definition"] == expected, args

    inspected = kli("inspect", "-f", manifest, "-o", "json", *flags)
    assert inspected.code == 0, inspected.err
    assert json.loads(inspected.out)["definition"] == expected

    live = kli("gang", token, "--backend", "kai", "--pod-patches", *flags)
    offline = kli("gang", "-f", manifest, "--backend", "kai", *flags)
    assert live.code == 0 and offline.code == 0, (live.err, offline.err)
    rendered = kli("gang", token, "--backend", "volcano", *flags)
    assert rendered.code == 0, rendered.err
    from_file = kli("gang", "-f", manifest, "--backend", "volcano", *flags)
    if which == "pytorch":
        assert rendered.out == from_file.out  # current-format gang: the objects need no pods
    for out in (rendered.out, from_file.out):
        assert f"run.ai/karta-name: {expected}" in out


def test_definition_by_name_in_every_command(
    kli: Callable[..., Any], training: Training, agreeing: dict[str, str], tmp_path: Path
) -> None:
    flags = ("--kubeconfig", training.kubeconfig, "-n", training.namespace)
    token = "pytorchjob/pytorch-dist-mnist-nccl"
    manifest = _manifest(training, PYTORCHJOB.format(ns=training.namespace), tmp_path, "pytorch")
    builtin = "kubeflow-org-pytorchjob-v1"
    overridden = (
        f"using catalog definition {builtin} as asked; its kind resolves to cluster Karta "
        f"{agreeing['pytorch']} (overridden (by {agreeing['pytorch']}))"
    )
    for name in (agreeing["pytorch"], builtin):
        runs = {
            "describe -f": ("describe", "-f", manifest, "-o", "json"),
            "describe": ("describe", token, "-o", "json"),
            "inspect -f": ("inspect", "-f", manifest, "-o", "json"),
        }
        for what, argv in runs.items():
            r = kli(*argv, "--definition", name, *flags)
            assert r.code == 0, (what, name, r.err)
            assert json.loads(r.out)["definition"] == name, (what, name)
            if what != "inspect -f":  # inspect reports it among its diagnostics
                assert (overridden in r.err) == (name == builtin), (what, name, r.err)
        inspected = json.loads(kli(*runs["inspect -f"], "--definition", name, *flags).out)
        messages = [d["message"] for d in inspected["diagnostics"]]
        assert (overridden in messages) == (name == builtin), messages
        for argv in (("gang", token), ("gang", "-f", manifest)):
            r = kli(*argv, "--backend", "volcano", "--definition", name, *flags)
            assert r.code == 0, (argv, name, r.err)
            assert f"run.ai/karta-name: {name}" in r.out, (argv, name)
    r = kli("definitions", builtin, "--kubeconfig", training.kubeconfig)
    assert r.code == 0, r.err
    assert f"overridden (by {agreeing['pytorch']})" in r.out
    r = kli("inspect", "-f", manifest, "--definition", "kubeflow-org-pytorchjob", *flags)
    assert r.code == 4 and f"hint: did you mean {builtin}" in r.err
