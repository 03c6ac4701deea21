"""``kli describe TYPE/NAME`` against the real API server: a corpus PyTorchJob and JobSet whose pods
the test wrote as their operators would (owner references, operator labels, statuses), checked
exactly against reviewed goldens for table, json and yaml (AGE and timestamps normalised)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from .conftest import Training

AGE = re.compile(r"age: \S+$", re.M)


def table(text: str) -> str:
    return AGE.sub("age: <AGE>", text)


def view(data: dict[str, Any]) -> dict[str, Any]:
    assert isinstance(data["createdAt"], str) and data["createdAt"].endswith("Z")
    assert data["namespace"].startswith("karta-cli-")
    out = {**data, "createdAt": "<CREATED>", "namespace": "<NS>"}
    if "gangScope" in data:  # its reason names the namespace
        out["gangScope"] = json.loads(json.dumps(data["gangScope"]).replace(data["namespace"], "<NS>"))
    return out


def header_ns(text: str, training: Training) -> str:
    """The generated namespace, in the header and the Gang scope line, as ``<NS>``."""
    return text.replace(training.namespace, "<NS>")


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (("pytorchjob/pytorch-dist-mnist-nccl",), "pytorchjob"),
        (("pytorchjobs.kubeflow.org", "pytorch-dist-mnist-nccl"), "pytorchjob"),
        (("jobset/paralleljobs",), "jobset"),
    ],
)
def test_describe_table(
    kli: Callable[..., Any],
    golden: Callable[[str, str], None],
    training: Training,
    args: tuple[str, ...],
    name: str,
) -> None:
    r = kli("describe", *args, "-n", training.namespace, "--kubeconfig", training.kubeconfig)
    assert r.code == 0, r.err
    assert r.err == ""
    golden(f"describe-{name}.txt", header_ns(table(r.out), training))


@pytest.mark.parametrize("name", ["pytorchjob/pytorch-dist-mnist-nccl", "jobset/paralleljobs"])
def test_describe_json_and_yaml(
    kli: Callable[..., Any], golden: Callable[[str, str], None], training: Training, name: str
) -> None:
    base = ("describe", name, "-n", training.namespace, "--kubeconfig", training.kubeconfig)
    as_json = kli(*base, "-o", "json")
    assert as_json.code == 0, as_json.err
    data = view(json.loads(as_json.out))
    golden(f"describe-{name.split('/')[0]}.json", json.dumps(data, indent=2) + "\n")
    as_yaml = kli(*base, "-o", "yaml")
    assert as_yaml.code == 0, as_yaml.err
    assert view(yaml.safe_load(as_yaml.out)) == data


def test_pod_limit_shows_unhealthy_first(kli: Callable[..., Any], training: Training) -> None:
    r = kli(
        "describe",
        "pytorchjob/pytorch-dist-mnist-nccl",
        "--pod-limit",
        "1",
        "-n",
        training.namespace,
        "--kubeconfig",
        training.kubeconfig,
    )
    assert r.code == 0, r.err
    worker = r.out.split("`-- worker")[1].split("\n\n")[0]
    assert "pytorch-dist-mnist-nccl-worker-2    Pending (Unschedulable)" in worker
    assert "worker-0" not in worker and "worker-1" not in worker
    assert worker.rstrip().endswith("`-- ... and 2 more (1 unhealthy shown)")


def test_component_limit(kli: Callable[..., Any], training: Training) -> None:
    r = kli(
        "describe",
        "jobset/paralleljobs",
        "--component-limit",
        "1",
        "-n",
        training.namespace,
        "--kubeconfig",
        training.kubeconfig,
    )
    assert r.code == 0, r.err
    # workers misses a pod, the driver is complete: workers is the one kept
    assert "|-- workers" in r.out and "|-- driver" not in r.out
    assert "... and 1 more component(s) (1 of 2 not shown; --component-limit 0 shows all)" in r.out


def test_not_found_and_not_installed(kli: Callable[..., Any], training: Training) -> None:
    r = kli("describe", "pytorchjob", "nope", "-n", training.namespace, "--kubeconfig", training.kubeconfig)
    assert (r.code, r.out) == (3, "")
    assert f'error: PyTorchJob "nope" not found in namespace "{training.namespace}"' in r.err
    r = kli("describe", "sandbox/x", "-n", training.namespace, "--kubeconfig", training.kubeconfig)
    assert r.code == 3, r.err
    assert "Sandbox is not installed in this cluster" in r.err


def test_no_definition(kli: Callable[..., Any], training: Training) -> None:
    r = kli(
        "describe", "configmap/x", "-n", training.namespace, "--kubeconfig", training.kubeconfig, "-o", "json"
    )
    assert r.code == 4
    assert json.loads(r.out) == {
        "error": "no_definition_for_type",
        "gvk": "/v1, Kind=ConfigMap",
        "message": "no Karta definition covers this workload type",
        "hint": '"kli definitions" lists the types Karta covers; '
        "apply a Karta definition to the cluster to cover this one",
    }
    r = kli("describe", "configmap/x", "-n", training.namespace, "--kubeconfig", training.kubeconfig)
    assert (r.code, r.out) == (4, "")
    assert "no Karta definition covers ConfigMap (v1)" in r.err


def test_type_alone_describes_every_workload_of_it(kli: Callable[..., Any], training: Training) -> None:
    """As ``kubectl describe TYPE``: every workload of the type in the namespace (issue 12)."""
    r = kli("describe", "pytorchjob", "-n", training.namespace, "--kubeconfig", training.kubeconfig)
    assert r.code == 0, r.err
    assert r.out.startswith(f"PyTorchJob/{training.pytorchjob['metadata']['name']}   ")
    r = kli("describe", "pytorchjob", "--kubeconfig", training.kubeconfig, "-n", "kube-public")
    assert (r.code, r.out) == (0, "")
    assert "No workloads found in namespace kube-public." in r.err
    r = kli("describe", "pytorchjob", "x", "-l", "a=b", "--kubeconfig", training.kubeconfig)
    assert r.code == 2 and "-l and -A go with TYPE alone" in r.err
