"""karta.kube against the real API server: configuration, discovery and type tokens, get, paged list."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from karta.errors import ApiError, UnknownResourceTypeError
from karta.kube import ConfigOverrides, KubeClient

from ..kubehttp import KubeHTTP


def _cm(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}}


def test_client_from_kubeconfig_reads_the_context(cluster: KubeHTTP, kube: KubeClient) -> None:
    assert kube.config.server == cluster.server
    assert kube.namespace == "default"
    ns = kube.get("namespaces", "default")
    assert ns["kind"] == "Namespace" and ns["apiVersion"] == "v1"


def test_namespace_flag_and_context_override(cluster: KubeHTTP, namespace: str) -> None:
    ctx = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig), namespace=namespace))
    assert ctx.namespace == namespace
    created = ctx.create(_cm("in-flag-ns"))
    assert created["metadata"]["namespace"] == namespace
    with pytest.raises(Exception, match='context "nope" does not exist'):
        KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig), context="nope"))


@pytest.mark.parametrize(
    ("token", "gvk", "namespaced"),
    [
        ("pods", ("", "v1", "Pod"), True),
        ("pod", ("", "v1", "Pod"), True),
        ("po", ("", "v1", "Pod"), True),
        ("Pod", ("", "v1", "Pod"), True),
        ("cm", ("", "v1", "ConfigMap"), True),
        ("ns", ("", "v1", "Namespace"), False),
        ("deploy", ("apps", "v1", "Deployment"), True),
        ("deployments.apps", ("apps", "v1", "Deployment"), True),
        ("deployment.apps", ("apps", "v1", "Deployment"), True),
        ("Deployment.apps", ("apps", "v1", "Deployment"), True),
        ("deployments.v1.apps", ("apps", "v1", "Deployment"), True),
        ("jobs.batch", ("batch", "v1", "Job"), True),
        ("cj", ("batch", "v1", "CronJob"), True),
        ("crd", ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"), False),
        ("clusterroles.rbac.authorization.k8s.io", ("rbac.authorization.k8s.io", "v1", "ClusterRole"), False),
    ],
)
def test_type_tokens_resolve_like_kubectl(
    kube: KubeClient, token: str, gvk: tuple[str, str, str], namespaced: bool
) -> None:
    rtype = kube.discovery.resolve(token)
    assert rtype.gvk == gvk
    assert rtype.namespaced is namespaced


def test_unknown_token_is_a_clear_error(kube: KubeClient) -> None:
    with pytest.raises(UnknownResourceTypeError, match='the server doesn\'t have a resource type "flubbers"'):
        kube.discovery.resolve("flubbers")
    with pytest.raises(UnknownResourceTypeError):
        kube.discovery.resolve("deployments.v9.apps")


def test_custom_resources_are_discovered_after_install(
    kube: KubeClient, corpus_crd: Callable[[str], dict[str, Any]], karta_crd: dict[str, Any]
) -> None:
    corpus_crd("jobset.x-k8s.io_jobsets.yaml")
    rtype = kube.discovery.resolve("jobsets.jobset.x-k8s.io")
    assert rtype.gvk == ("jobset.x-k8s.io", "v1alpha2", "JobSet") and rtype.namespaced
    assert kube.discovery.resolve("jobset").plural == "jobsets"
    krt = kube.discovery.resolve("krt")
    assert (krt.gvk, krt.namespaced) == (("run.ai", "v1alpha1", "Karta"), False)
    assert kube.discovery.resolve("kartas.run.ai") == krt
    assert kube.discovery.serves("run.ai", "v1alpha1", "Karta")
    assert kube.discovery.serves("apps", "v1", "Deployment")
    assert not kube.discovery.serves("run.ai", "v1", "Karta")


def test_get_fills_type_and_not_found_is_an_api_error(kube: KubeClient, namespace: str) -> None:
    name = f"get-{uuid.uuid4().hex[:6]}"
    kube.create(_cm(name), namespace=namespace)
    got = kube.get("cm", name, namespace=namespace)
    assert (got["apiVersion"], got["kind"], got["metadata"]["name"]) == ("v1", "ConfigMap", name)
    meta = kube.get("cm", name, namespace=namespace, metadata_only=True)
    assert meta["kind"] == "PartialObjectMetadata" and "data" not in meta
    with pytest.raises(ApiError) as info:
        kube.get("cm", "does-not-exist", namespace=namespace)
    assert (info.value.status, info.value.reason) == (404, "NotFound")


@pytest.fixture(scope="module")
def many_configmaps(kube: KubeClient, namespace: str) -> tuple[str, int]:
    """1,200 labelled ConfigMaps in the session namespace (created once for the module)."""
    label = f"batch-{uuid.uuid4().hex[:6]}"
    count = 1200
    rtype = kube.discovery.resolve("configmaps")
    for i in range(count):
        body = _cm(f"{label}-{i:04d}", batch=label)
        kube.request_json("POST", rtype.collection_path(namespace), body=body)
    return label, count


def test_paging_over_1200_objects_in_chunks_of_500(
    kube: KubeClient, namespace: str, many_configmaps: tuple[str, int]
) -> None:
    label, count = many_configmaps
    pages = list(kube.iter_pages("configmaps", namespace=namespace, label_selector=f"batch={label}"))
    assert [len(p.items) for p in pages] == [500, 500, 200]
    assert all(p.continue_token for p in pages[:-1]) and not pages[-1].continue_token

    listed = kube.list("cm", namespace=namespace, label_selector=f"batch={label}", chunk_size=500)
    assert listed.pages == 3
    names = [o["metadata"]["name"] for o in listed.items]
    assert len(names) == len(set(names)) == count
    assert all(o["kind"] == "ConfigMap" and o["apiVersion"] == "v1" for o in listed.items)
    assert int(listed.resource_version) > 0

    unpaged = kube.list("cm", namespace=namespace, label_selector=f"batch={label}", chunk_size=0)
    assert unpaged.pages == 1 and len(unpaged.items) == count

    everywhere = kube.list("cm", label_selector=f"batch={label}", chunk_size=500, metadata_only=True)
    assert len(everywhere.items) == count  # all namespaces; metadata only
    assert everywhere.items[0]["kind"] == "PartialObjectMetadata"


def test_negative_chunk_size_is_rejected(kube: KubeClient) -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        kube.list("cm", chunk_size=-1)
