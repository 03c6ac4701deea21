"""Format extension E2 live (docs/format-extensions.md): a corpus Milvus on the real API server with
the pods its operator's Helm releases would run (etcd, MinIO, Kafka: no owner reference, the charts'
labels) next to a proxy pod the Milvus owns. ``kli describe milvus/NAME`` lists the dependencies'
pods with their readiness (one label-selector LIST each), and counts only the Milvus's own pods in
its resources and gang."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..kubehttp import KubeHTTP, load_manifests
from .conftest import RUNNING, UNSCHEDULABLE, _created, _wait_served, make_pod, new_namespace

TEMPLATE = {"spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}


def test_describe_lists_the_dependencies_pods(
    cluster: KubeHTTP, corpus: Path, kli: Callable[..., Any]
) -> None:
    namespace = new_namespace(cluster, "karta-e2")
    (crd,) = load_manifests(corpus / "crds" / "milvus.io_milvuses.yaml")
    cluster.ensure_crd(crd)
    _wait_served(cluster, "/apis/milvus.io/v1beta1")
    (milvus,) = load_manifests(corpus / "workloads" / "milvus" / "milvus-cluster-demo.yaml")
    milvus = _created(cluster, f"/apis/milvus.io/v1beta1/namespaces/{namespace}/milvuses", milvus)
    name = milvus["metadata"]["name"]
    pods: list[tuple[str, dict[str, Any] | None, dict[str, str], str | None, dict[str, Any]]] = [
        (f"{name}-etcd-0", None, {"app.kubernetes.io/instance": f"{name}-etcd"}, "n1", RUNNING),
        (f"{name}-minio-0", None, {"release": f"{name}-minio"}, None, UNSCHEDULABLE),
        (f"{name}-kafka-0", None, {"app.kubernetes.io/instance": f"{name}-kafka"}, "n1", RUNNING),
        (f"{name}-pulsar-0", None, {"release": f"{name}-pulsar"}, "n1", RUNNING),  # not used: kafka
        (
            f"{name}-milvus-proxy-0",
            milvus,
            {"app.kubernetes.io/instance": name, "app.kubernetes.io/component": "proxy"},
            "n1",
            RUNNING,
        ),
    ]
    for pod_name, owner, labels, node, status in pods:
        make_pod(
            cluster,
            namespace,
            name=pod_name,
            owner=owner,
            labels=labels,
            template=TEMPLATE,
            node=node,
            status=status,
        )
    r = kli(
        "describe", f"milvus/{name}", "-n", namespace, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"
    )
    assert r.code == 0, r.err
    data = json.loads(r.out)
    components = {c["name"]: c for c in data["components"]}
    assert [p["name"] for p in components["etcd"]["pods"]] == [f"{name}-etcd-0"]
    assert components["etcd"]["replicas"] == {"desired": 1, "current": 1, "ready": 1}
    assert components["minio"]["replicas"] == {"desired": 1, "current": 1, "ready": 0}
    assert components["minio"]["pods"][0]["reason"] == "Unschedulable"
    assert [p["name"] for p in components["kafka"]["pods"]] == [f"{name}-kafka-0"]
    assert "pulsar" not in components  # msgStreamType kafka: no pulsar release is listed
    assert [p["name"] for p in components["proxy"]["pods"]] == [f"{name}-milvus-proxy-0"]
    assert data["resources"]["pods"] == 5  # the Milvus's own components only
    assert data["gang"]["pods"] == 1
    text = kli("describe", f"milvus/{name}", "-n", namespace, "--kubeconfig", str(cluster.kubeconfig))
    assert text.code == 0, text.err
    assert f"{name}-etcd-0" in text.out and f"{name}-kafka-0" in text.out
