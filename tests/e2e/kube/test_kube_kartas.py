"""Karta definitions read from the real API server (docs/spec/format.md#definition-sources): merged over the
catalog, collisions, limited RBAC through impersonation (warnings, never crashes), the CRD missing, an
undecodable object, and an unreachable server."""

from __future__ import annotations

import copy
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from karta.catalog import CATALOG_DATA_DIR
from karta.kube import ClusterConfig, ConfigOverrides, KubeClient, load_definitions, read_cluster_kartas
from karta.kube.kartas import CRD_MISSING
from karta.model import GVK

from ..kubehttp import KubeHTTP
from .conftest import PrivateControlPlane

KARTAS = "/apis/run.ai/v1alpha1/kartas"


def _karta(name: str, *, group: str, version: str, kind: str) -> dict[str, Any]:
    doc = yaml.safe_load((CATALOG_DATA_DIR / "batch-job-v1.yaml").read_text())
    doc = copy.deepcopy(doc)
    doc["metadata"] = {"name": name}
    doc["spec"]["structureDefinition"]["rootComponent"]["kind"] = {
        "group": group,
        "version": version,
        "kind": kind,
    }
    return doc


@pytest.fixture(scope="module")
def cluster_kartas(
    cluster: KubeHTTP, kube: KubeClient, karta_crd: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """Three Kartas of ours: two claim one made-up GVK (duplicates), one for a made-up batch kind."""
    tag = uuid.uuid4().hex[:6]
    widget = f"Widget{tag}"
    names = {"a": f"widget-a-{tag}", "b": f"widget-b-{tag}", "job": f"my-job-{tag}"}
    bodies = [
        _karta(names["a"], group="example.karta.test", version="v1", kind=widget),
        _karta(names["b"], group="example.karta.test", version="v1", kind=widget),
        _karta(names["job"], group="batch", version="v1", kind=f"Job{tag}"),
    ]
    for body in bodies:
        kube.create(body)
    yield {"tag": tag, "widget": widget, "names": names}
    for name in names.values():
        kube.delete("kartas.run.ai", name)


def test_read_cluster_kartas(kube: KubeClient, cluster_kartas: dict[str, Any]) -> None:
    read = read_cluster_kartas(kube, chunk_size=1)  # paged, one object per page
    assert read.available
    ours = set(cluster_kartas["names"].values())
    assert ours <= set(read.names)
    karta = read.kartas[read.names.index(cluster_kartas["names"]["a"])]
    assert karta.root_gvk is not None and karta.root_gvk.kind == cluster_kartas["widget"]
    assert not [w for w in read.warnings if cluster_kartas["tag"] in w]


def test_cluster_definitions_merge_over_the_catalog(kube: KubeClient, cluster_kartas: dict[str, Any]) -> None:
    store = load_definitions(kube)
    widget = GVK("example.karta.test", "v1", cluster_kartas["widget"])
    a, b = cluster_kartas["names"]["a"], cluster_kartas["names"]["b"]
    resolution = store.resolution(widget)
    assert resolution is not None
    assert [(e.definition.name, e.text) for e in resolution.listings] == [
        (a, "ok"),
        (b, f"ignored (duplicate of {a})"),
    ]
    assert all(e.definition.origin == "cluster" and not e.definition.trusted for e in resolution.listings)
    assert [d.name for d in store.by_gvk(*widget)] == [a]  # not ambiguous: a is older or first by name
    assert not store.is_ambiguous(widget)
    assert not [w for w in store.warnings if cluster_kartas["widget"] in w]  # only where it is resolved
    (note,) = store.notes_for(widget)
    claim = f"2 cluster Karta definitions claim example.karta.test/v1, Kind={cluster_kartas['widget']}"
    assert note.startswith(f"{claim}: using {a} (")
    assert note.endswith(f"); ignoring {b} as a duplicate")
    (mine,) = store.by_gvk("batch", "v1", f"Job{cluster_kartas['tag']}")
    assert mine.origin == "cluster"
    claimed = {d.gvk for d in store.definitions if d.origin == "cluster"}
    untouched = [d for d in store.definitions if d.origin == "catalog" and d.gvk not in claimed]
    # (other e2e tests may have put a cluster Karta over every built-in one)
    assert all(store.by_gvk(*d.gvk) == [d] for d in untouched if d.gvk)


def test_cluster_definition_replaces_the_catalog_entry(kube: KubeClient, karta_crd: dict[str, Any]) -> None:
    name = f"cronjob-override-{uuid.uuid4().hex[:6]}"
    kube.create(_karta(name, group="batch", version="v1", kind="CronJob"))
    try:
        store = load_definitions(kube)
        resolution = store.resolution(GVK("batch", "v1", "CronJob"))  # other tests' Kartas may claim it too
        assert resolution is not None and resolution.used is not None and resolution.used.origin == "cluster"
        assert name in {e.definition.name for e in resolution.listings if e.status in ("ok", "ignored")}
        assert "batch-cronjob-v1" not in {d.name for d in store.visible()}
        catalog = store.by_name("batch-cronjob-v1")
        assert catalog is not None and store.listing_of(catalog).status == "overridden"
    finally:
        kube.delete("kartas.run.ai", name)


# ---------------------------------------------------------------------------------- RBAC


def _grant(kube: KubeClient, *, subject: dict[str, str], tag: str) -> None:
    role = f"karta-reader-{tag}"
    kube.apply({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": role},
        "rules": [{"apiGroups": ["run.ai"], "resources": ["kartas"], "verbs": ["get", "list", "watch"]}],
    })  # fmt: skip
    kube.apply({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", **subject}],
    })  # fmt: skip


def _as(cluster: KubeHTTP, user: str, *groups: str) -> KubeClient:
    return KubeClient.from_config(
        ConfigOverrides(kubeconfig=str(cluster.kubeconfig), as_user=user, as_groups=groups)
    )


def _eventually_available(client: KubeClient) -> Any:
    deadline = time.monotonic() + 30  # RBAC grants reach the authorizer's cache shortly after
    while True:
        read = read_cluster_kartas(client)
        if read.available or time.monotonic() > deadline:
            return read
        time.sleep(0.2)


def test_user_without_permission_gets_a_warning_not_a_crash(
    cluster: KubeHTTP, cluster_kartas: dict[str, Any]
) -> None:
    alice = _as(cluster, f"alice-{cluster_kartas['tag']}")
    read = read_cluster_kartas(alice)
    assert not read.available and read.kartas == []
    (warning,) = read.warnings
    assert "not allowed to list Karta definitions" in warning and "permission" in warning
    assert warning.endswith("showing built-in definitions only")
    store = load_definitions(alice)  # still usable: the built-in definitions
    assert store.by_gvk("batch", "v1", "Job")[0].origin == "catalog"
    assert warning in store.warnings


def test_user_and_group_with_permission_read_the_kartas(
    cluster: KubeHTTP, kube: KubeClient, cluster_kartas: dict[str, Any]
) -> None:
    tag = cluster_kartas["tag"]
    _grant(kube, subject={"kind": "User", "name": f"bob-{tag}"}, tag=f"u-{tag}")
    _grant(kube, subject={"kind": "Group", "name": f"readers-{tag}"}, tag=f"g-{tag}")
    for client in (_as(cluster, f"bob-{tag}"), _as(cluster, f"carol-{tag}", f"readers-{tag}")):
        read = _eventually_available(client)
        assert read.available, read.warnings
        assert set(cluster_kartas["names"].values()) <= set(read.names)
        with pytest.raises(Exception, match="forbidden"):  # nothing else was granted
            client.list("configmaps", namespace="default")


# ----------------------------------------------------------- a cluster without the Karta CRD


def test_crd_missing_then_an_undecodable_object_is_skipped(
    private_control_plane: PrivateControlPlane,
) -> None:
    client = private_control_plane.client()
    read = read_cluster_kartas(client)
    assert (read.available, read.kartas, read.warnings) == (False, [], [CRD_MISSING])
    assert load_definitions(client).warnings == [CRD_MISSING]

    # A permissive stand-in for the CRD lets the server store what our loader cannot decode.
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "kartas.run.ai"},
        "spec": {
            "group": "run.ai", "scope": "Cluster",
            "names": {"plural": "kartas", "singular": "karta", "kind": "Karta", "listKind": "KartaList"},
            "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}],
        },
    }  # fmt: skip
    client.create(crd)
    deadline = time.monotonic() + 60
    while not read_cluster_kartas(client).available:
        assert time.monotonic() < deadline, "the stand-in CRD was not served in time"
        time.sleep(0.2)
    client.request_json("POST", KARTAS, body=_karta("good", group="batch", version="v1", kind="Job"))
    broken = _karta("broken", group="batch", version="v1", kind="Job")
    broken["spec"]["structureDefinition"]["rootComponent"] = "not a component"
    client.request_json("POST", KARTAS, body=broken)

    read = read_cluster_kartas(client)
    assert read.available and read.names == ["good"]
    (warning,) = read.warnings
    assert warning.startswith("skipping the cluster Karta broken: ")
    store = load_definitions(client)
    assert [d.origin for d in store.by_gvk("batch", "v1", "Job")] == ["cluster"]
    assert warning in store.warnings
    client.close()


def test_unreachable_server_is_a_warning() -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = KubeClient(ClusterConfig(server=f"https://127.0.0.1:{port}", insecure_skip_tls_verify=True))
    read = read_cluster_kartas(client)
    (warning,) = read.warnings
    assert warning.startswith("could not read Karta definitions from the cluster: cannot reach")
    assert warning.endswith("; showing built-in definitions only")
