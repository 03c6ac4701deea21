"""``karta-controller --ui``: the flags, the read-only rules it adds to the controller's RBAC, and
``build()`` wiring the web view's source and server (served on the address given)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from karta.catalog import catalog_definitions
from karta.controller.main import build
from karta.controller.options import Options, parse
from karta.controller.rbac import controller_rbac, ui_rules
from karta.render import BACKENDS
from karta.ui import ClusterSource, UiServer

from .pods_support import FakeCluster


def test_the_ui_flags() -> None:
    options, _ = parse([])
    assert (options.ui, options.ui_bind_address) == (False, ":8082")
    options, _ = parse(["--ui", "--ui-bind-address", "127.0.0.1:9000"])
    assert (options.ui, options.ui_bind_address) == (True, "127.0.0.1:9000")


def test_the_ui_reads_and_never_writes() -> None:
    rules = ui_rules(catalog_definitions())
    assert all(set(r["verbs"]) <= {"get", "list", "watch"} for r in rules)
    covered = {(g, res) for r in rules for g in r["apiGroups"] for res in r["resources"]}
    assert {("", "pods"), ("", "events"), ("batch", "jobs"), ("kubeflow.org", "pytorchjobs")} <= covered
    assert ("", "services") not in covered and ("apps", "replicasets") in covered  # owners: get only
    for backend in BACKENDS.values():
        assert {(backend.api_group, res) for res in backend.resources} <= covered
    without = controller_rbac(Options(), catalog_definitions()).cluster_rules
    with_ui = controller_rbac(Options(ui=True), catalog_definitions()).cluster_rules
    assert with_ui[: len(without)] == without and with_ui[len(without) :] == rules


def test_build_adds_the_source_and_the_server(tmp_path: Path) -> None:
    cluster = FakeCluster()
    options = Options(
        ui=True, ui_bind_address="127.0.0.1:0", cluster_definitions=False, definitions_dir=tmp_path
    )
    controller = build(options, cluster.client)
    server, source = controller.parts["ui-server"], controller.parts["ui-source"]
    assert isinstance(server, UiServer) and isinstance(source, ClusterSource)
    assert server.allowed_hosts is None  # reached through a port-forward or a proxy, by any name
    server.start()
    try:
        with urllib.request.urlopen(f"{server.url}api/facets", timeout=10) as answer:
            assert json.loads(answer.read())["count"] == 0
    finally:
        server.close()
    assert (
        "ui-server"
        not in build(Options(cluster_definitions=False, definitions_dir=tmp_path), cluster.client).parts
    )
