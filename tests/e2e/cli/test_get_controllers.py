"""``kli get`` with kube-controller-manager running: a Job and a Deployment whose ReplicaSet and Pods
the controllers create. ``--all-types`` shows the two workloads only (the ReplicaSet and the Pods are
nested under covered kinds); ``get pods`` lists the Pods themselves. Uses the shared
``controllers_cluster`` in a namespace of its own; the table omits definitions and origins, so other
tests' cluster Kartas cannot change it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from karta.kube import ConfigOverrides, KubeClient

from ..kubehttp import KubeHTTP
from .conftest import Result
from .getsupport import check_golden, normalise_table


def _pod_template(app: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {
            "restartPolicy": "Never" if app == "trainer" else "Always",
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": 1}}}
            ],
        },
    }


@pytest.fixture(scope="module")
def controlled(controllers_cluster: KubeHTTP) -> Iterator[tuple[str, str]]:
    """(kubeconfig, namespace) with a Job (parallelism 2) and a Deployment (3 replicas) whose pods exist."""
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(controllers_cluster.kubeconfig)))
    ns = f"get-ctl-{uuid.uuid4().hex[:6]}"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    client.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "trainer", "namespace": ns},
            "spec": {"parallelism": 2, "completions": 2, "template": _pod_template("trainer")},
        }
    )
    client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "server", "namespace": ns},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "server"}},
                "template": _pod_template("server"),
            },
        }
    )
    deadline = time.monotonic() + 60
    while True:
        pods = client.list("pods", namespace=ns).items
        job = client.get("jobs.batch", "trainer", namespace=ns)
        deployment = client.get("deployments.apps", "server", namespace=ns)
        if (
            len(pods) == 5
            and (job.get("status") or {}).get("active") == 2
            and (deployment.get("status") or {}).get("replicas") == 3
        ):
            break
        assert time.monotonic() < deadline, f"pods: {len(pods)}, job: {job.get('status')}"
        time.sleep(0.3)
    time.sleep(1)  # let the controllers settle the statuses they write
    client.close()
    yield str(controllers_cluster.kubeconfig), ns


def test_all_types_shows_only_the_workloads(kli: Callable[..., Result], controlled: tuple[str, str]) -> None:
    kubeconfig, ns = controlled
    result = kli("get", "--all-types", "-n", ns, "--kubeconfig", kubeconfig)
    assert result.code == 0, result.err
    check_golden(
        "get_controllers_all_types.txt",
        result.out,
        substitute=lambda s: normalise_table(s).replace(ns, "<ns>"),
    )
    assert "ReplicaSet" not in result.out and "Pod" not in result.out


def test_pods_and_replicasets_are_listed_by_type(
    kli: Callable[..., Result], controlled: tuple[str, str]
) -> None:
    kubeconfig, ns = controlled
    pods = kli("get", "pods", "-n", ns, "--kubeconfig", kubeconfig, "-o", "json")
    assert pods.code == 0, pods.err
    import json

    items = json.loads(pods.out)["items"]
    assert len(items) == 5, pods.out
    assert {i["kind"] for i in items} == {"Pod"} and all(i["gpus"] == 1 for i in items)
    replicasets = kli("get", "rs", "-n", ns, "--kubeconfig", kubeconfig, "-o", "json")
    assert replicasets.code == 0, replicasets.err
    (replicaset,) = json.loads(replicasets.out)["items"]
    assert replicaset["components"] == [{"name": "replicaset", "replicas": 3}]
