"""``karta-controller --ui`` against the real API server (in-process, ``build()``): the web view the
controller serves lists a PyTorchJob with the group objects its gang reconciler created (the gang
state's ``groupObjects``), and its workload page names them; the view refuses writes."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.controller.main import build
from karta.controller.options import Options
from karta.ui import UiServer

from ..kubehttp import KubeHTTP
from .gangs_support import client_for, eventually, install_crds, new_namespace, pytorchjob, wait_served

SERVED = [("kubeflow.org", "v1", "PyTorchJob"), ("scheduling.k8s.io", "v1beta1", "Workload")]


@pytest.fixture
def ns(cluster: KubeHTTP, corpus: Path) -> Iterator[str]:
    install_crds(cluster, corpus, ("kubeflow.org_pytorchjobs.yaml",))
    name = new_namespace(cluster)
    yield name
    cluster.delete(f"/api/v1/namespaces/{name}")


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


def test_the_controllers_view_shows_the_group_objects_it_made(
    cluster: KubeHTTP, ns: str, tmp_path: Path
) -> None:
    client = client_for(cluster)
    wait_served(client, SERVED)
    options = Options(
        backend="workload-api",
        gang_scope="all",  # predates the opt-in scope (issue 22)
        namespaces=(ns,),
        metrics_bind_address="0",
        health_probe_bind_address="0",
        definitions_dir=tmp_path,
        cluster_definitions=False,
        shutdown_timeout=15.0,
        ui=True,
        ui_bind_address="127.0.0.1:0",
    )
    controller = build(options, client)
    server = controller.parts["ui-server"]
    assert isinstance(server, UiServer)
    controller.manager.start()
    try:
        job = client.create(pytorchjob("ui-train", workers=2), namespace=ns)

        def row() -> dict[str, Any] | None:
            items = _get(f"{server.url}api/workloads?namespace={ns}")["items"]
            found = [r for r in items if r["uid"] == job["metadata"]["uid"]]
            return found[0] if found and found[0]["gang"] and found[0]["gang"]["groupObjects"] else None

        found = eventually(row, what="the row with the reconciler's group objects")
        assert found["kind"] == "PyTorchJob" and found["gang"]["minMember"] == 3
        where = f"{server.url}api/workload?id={urllib.request.quote(found['id'], safe='')}"

        def with_workload() -> dict[str, Any] | None:
            # the Workload and its PodGroups arrive through watches of their own, in any order
            detail: dict[str, Any] = _get(where)
            objects = detail["groupObjects"]
            assert any(g.startswith("Workload/ui-train") for g in objects), objects  # the last one is shown
            return detail

        eventually(with_workload, what="the workload page to list the Workload object")
        request = urllib.request.Request(f"{server.url}api/workloads", method="POST", data=b"{}")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 405
    finally:
        controller.manager.shutdown()
        client.close()
