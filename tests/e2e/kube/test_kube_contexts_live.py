"""karta.kube.contexts against two real control planes (the session's ``cluster`` and
``controllers_cluster``, merged into one kubeconfig as contexts ``east`` and ``west``) and a
context at a closed port: what the web view and ``kli get`` build on. Each cluster is reached
with its own client and credentials (each answers with its own namespaces), in parallel, and the
dead one is an error of its own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from karta.errors import ClusterUnreachableError
from karta.kube import ConfigOverrides, KubeClient, context_names, per_cluster, select_contexts

from ..kubehttp import KubeHTTP, closed_port, merged_kubeconfig


@pytest.fixture(scope="module")
def kubeconfig(
    cluster: KubeHTTP, controllers_cluster: KubeHTTP, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict[str, str]]]:
    """The merged kubeconfig, and a namespace made in each live cluster only (context → name)."""
    marks = {"east": f"only-east-{uuid.uuid4().hex[:6]}", "west": f"only-west-{uuid.uuid4().hex[:6]}"}
    live = {"east": cluster, "west": controllers_cluster}
    for name, kube in live.items():
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": marks[name]}}
        assert kube.post("/api/v1/namespaces", body).status == 201
    path = merged_kubeconfig(
        tmp_path_factory.mktemp("contexts-live") / "kubeconfig",
        {name: kube.kubeconfig for name, kube in live.items()},
        namespace="default",
        dead_port=closed_port(),
    )
    yield path, marks
    for name, kube in live.items():
        kube.delete(f"/api/v1/namespaces/{marks[name]}")


def test_each_cluster_answers_through_its_own_client(kubeconfig: tuple[Path, dict[str, str]]) -> None:
    path, marks = kubeconfig
    overrides = ConfigOverrides(kubeconfig=str(path))
    assert context_names(overrides) == ["dead", "east", "west"]
    targets = select_contexts(overrides, all_contexts=True)

    def namespaces(client: KubeClient) -> set[str]:
        listed = client.list("namespaces")
        return {str(item["metadata"]["name"]) for item in listed.items}

    results = {r.context: r for r in per_cluster(targets, namespaces)}
    assert set(results) == {"dead", "east", "west"}
    east, west = results["east"].value, results["west"].value
    assert east is not None and west is not None
    assert marks["east"] in east and marks["east"] not in west
    assert marks["west"] in west and marks["west"] not in east
    assert results["east"].server != results["west"].server
    dead = results["dead"]
    assert isinstance(dead.error, ClusterUnreachableError) and dead.value is None
    assert "Connection refused" in str(dead.error)
