"""``kli gang TYPE/NAME`` against the real API server: the workload and its pods read from the
cluster (owner chains, as ``kli describe``), rendered for KAI and Volcano, checked against reviewed
goldens (the workload's UID normalised), and identical to rendering the same object from a file."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import Training


def normalised(text: str, training: Training, obj: dict[str, Any]) -> str:
    return text.replace(obj["metadata"]["uid"], "<UID>").replace(training.namespace, "<NS>")


@pytest.mark.parametrize("backend", ["kai", "volcano"])
def test_gang_pytorchjob(
    kli: Callable[..., Any], golden: Callable[[str, str], None], training: Training, backend: str
) -> None:
    r = kli(
        "gang",
        "pytorchjob/pytorch-dist-mnist-nccl",
        "--backend",
        backend,
        "-n",
        training.namespace,
        "--kubeconfig",
        training.kubeconfig,
    )
    assert r.code == 0, r.err
    assert r.err == ""
    golden(f"gang-pytorchjob-{backend}.yaml", normalised(r.out, training, training.pytorchjob))


def test_gang_live_equals_file_mode(kli: Callable[..., Any], training: Training, tmp_path: Any) -> None:
    live = kli(
        "gang",
        "pytorchjob",
        "pytorch-dist-mnist-nccl",
        "--backend",
        "kai",
        "-n",
        training.namespace,
        "--kubeconfig",
        training.kubeconfig,
    )
    got = training.cluster.get(
        f"/apis/kubeflow.org/v1/namespaces/{training.namespace}/pytorchjobs/pytorch-dist-mnist-nccl"
    ).json()
    manifest = tmp_path / "pt.json"
    manifest.write_text(json.dumps(got))
    offline = kli("gang", "-f", str(manifest), "--backend", "kai")
    assert live.code == offline.code == 0, (live.err, offline.err)
    assert live.out == offline.out


def test_gang_of_a_jobset_binds_the_live_pods(
    kli: Callable[..., Any], golden: Callable[[str, str], None], training: Training
) -> None:
    # One gang for the whole JobSet (sized from the spec); the live pods get its binding patches
    r = kli(
        "gang",
        "jobset/paralleljobs",
        "--backend",
        "volcano",
        "-n",
        training.namespace,
        "--kubeconfig",
        training.kubeconfig,
    )
    assert r.code == 0, r.err
    golden("gang-jobset-volcano.yaml", normalised(r.out, training, training.jobset))
    patches = kli(
        "gang",
        "jobset/paralleljobs",
        "--backend",
        "volcano",
        "--pod-patches",
        "-o",
        "json",
        "-n",
        training.namespace,
        "--kubeconfig",
        training.kubeconfig,
    )
    assert patches.code == 0, patches.err
    items = json.loads(patches.out)["items"]
    assert "paralleljobs-workers-0-0" in [i["metadata"]["name"] for i in items]
    assert {i["metadata"]["namespace"] for i in items} == {training.namespace}


def test_gang_not_found(kli: Callable[..., Any], training: Training) -> None:
    r = kli(
        "gang",
        "pytorchjob/nope",
        "--backend",
        "kai",
        "-n",
        training.namespace,
        "--kubeconfig",
        training.kubeconfig,
    )
    assert (r.code, r.out) == (3, "")
    assert 'PyTorchJob "nope" not found' in r.err
