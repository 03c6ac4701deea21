"""The operator's CRD index against the real API server: large CRDs (the corpus's biggest, a few
megabytes of schema) are kept as small records only, paged lists included, and a served-version
change is seen."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from karta.controller.runtime.crds import CRDIndex, CRDRecord
from karta.kube import ConfigOverrides, KubeClient

from ..kubehttp import KubeHTTP, load_manifests
from .operator_support import CRDS, eventually, install_karta_crd, widget_crd

LARGE = "serving.kserve.io_inferenceservices.yaml"


@pytest.fixture(scope="module")
def index(cluster: KubeHTTP, corpus: Path) -> Iterator[tuple[CRDIndex, list[tuple[str, str]]]]:
    install_karta_crd(cluster)  # at least two CRDs: the list below is paged
    (crd,) = load_manifests(corpus / "crds" / LARGE)
    cluster.ensure_crd(crd)
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig)))
    changes: list[tuple[str, str]] = []
    crds = CRDIndex(client, on_change=lambda g, k: changes.append((g, k)))
    stop = threading.Event()
    thread = threading.Thread(target=crds.run, args=(stop,), daemon=True)
    thread.start()
    try:
        eventually(crds.synced.is_set, what="CRD index synced")
        yield crds, changes
    finally:
        stop.set()
        thread.join(10)
        client.close()


def test_large_crds_are_kept_as_records(
    cluster: KubeHTTP, index: tuple[CRDIndex, list[tuple[str, str]]], corpus: Path
) -> None:
    crds, _ = index
    (crd,) = load_manifests(corpus / "crds" / LARGE)
    assert len((corpus / "crds" / LARGE).read_bytes()) > 500_000
    records = {r.name: r for r in crds.records()}
    assert all(type(r) is CRDRecord for r in records.values())
    record = records[crd["metadata"]["name"]]
    served = {v["name"] for v in crd["spec"]["versions"] if v.get("served")}
    assert record.served == frozenset(served) and record.established
    assert crds.serves("serving.kserve.io", "v1beta1", "InferenceService")
    assert crds.is_crd_kind("serving.kserve.io", "InferenceService")
    assert crds.serves("batch", "v1", "Job")  # built in: through discovery
    assert not crds.serves("serving.kserve.io", "v9", "InferenceService")
    stored = cluster.get(CRDS).json()["items"]
    assert set(records) == {i["metadata"]["name"] for i in stored}


def test_a_paged_list_is_trimmed_page_by_page(
    cluster: KubeHTTP, index: tuple[CRDIndex, list[tuple[str, str]]]
) -> None:
    from karta.controller.runtime.crds import CRD_RESOURCE, _TrimmingListWatch

    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig)))
    try:
        listed = _TrimmingListWatch(client, CRD_RESOURCE, chunk_size=1)._list()
    finally:
        client.close()
    stored = cluster.get(CRDS).json()["items"]
    assert len(listed.items) == len(stored) > 1
    assert all(
        set(item) == {"metadata", "record"} and type(item["record"]) is CRDRecord for item in listed.items
    )
    assert listed.resource_version


def test_a_crd_appearing_changing_and_going_is_reported(
    cluster: KubeHTTP, index: tuple[CRDIndex, list[tuple[str, str]]]
) -> None:
    crds, changes = index
    kind = f"Sprocket{uuid.uuid4().hex[:6]}"
    definition = widget_crd("crds.karta.test", kind, versions=("v1", "v2"))
    path = f"{CRDS}/{definition['metadata']['name']}"
    changes.clear()
    cluster.ensure_crd(definition)
    try:
        eventually(lambda: crds.serves("crds.karta.test", "v2", kind), what="v2 served")
        assert ("crds.karta.test", kind) in changes
        changes.clear()
        current = cluster.get(path).json()
        current["spec"]["versions"][1]["served"] = False
        assert cluster.request("PUT", path, body=current).status == 200
        eventually(lambda: not crds.serves("crds.karta.test", "v2", kind), what="v2 no longer served")
        assert crds.serves("crds.karta.test", "v1", kind)
        assert ("crds.karta.test", kind) in changes
    finally:
        cluster.delete(path)
    eventually(lambda: not crds.serves("crds.karta.test", "v1", kind), what="the CRD gone")
    # a CRD's kind never counts as built in, even while discovery still lists it
    assert crds.is_crd_kind("crds.karta.test", kind)
