"""The web view's capacity page from the source (issue 28 item 3): the GPUs the Nodes can allocate
against those the watched pods request, bound and pending, per namespace; a number that could not
be read is None (never a zero) and ``partial`` says why: a refused pod watch, pods still being
listed, Nodes that cannot be listed. The events are applied as the source's thread applies them."""

from __future__ import annotations

from typing import Any, cast

import pytest

from karta import kube
from karta.definitions import DefinitionStore
from karta.kube import capacity as kube_capacity
from karta.kube.client import KubeClient
from karta.kube.owners import ReadFailure
from karta.kube.resources import ResourceType
from karta.ui import ClusterSource, RowStore
from karta.ui.source import _Watched

STORE = DefinitionStore.offline(user_directory=None)
PODS = ResourceType("", "v1", "Pod", "pods", verbs=("list", "watch"))


def _pod(name: str, namespace: str, gpus: int, node: str | None, phase: str = "Running") -> dict[str, Any]:
    container = {"name": "main", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"nodeName": node, "containers": [container]},
        "status": {"phase": phase if node else "Pending"},
    }


def _node(name: str, gpus: int) -> dict[str, Any]:
    allocatable = {"nvidia.com/gpu": str(gpus), "pods": "110"}
    return {"metadata": {"name": name}, "status": {"allocatable": allocatable}}


def _source(monkeypatch: pytest.MonkeyPatch, nodes: kube_capacity.Listed) -> ClusterSource:
    monkeypatch.setattr(kube, "list_nodes", lambda client, **_: nodes)
    source = ClusterSource(cast(KubeClient, object()), lambda: STORE, store=RowStore(), cluster="c")
    source._watched = [_Watched("pods", PODS)]
    return source


def test_gpus_per_namespace_against_the_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    source = _source(monkeypatch, kube_capacity.Listed([_node("a", 8), _node("b", 4)]))
    pods = [
        _pod("p1", "ml", 2, "a"),
        _pod("p2", "ml", 16, None),  # pending
        _pod("p3", "web", 0, "b"),  # no GPU: not counted
        _pod("p4", "ml", 4, "b", phase="Succeeded"),  # terminal: holds nothing
        _pod("p5", "rl", 1, "b"),
    ]
    source._apply([(0, 0, "ADDED", pod) for pod in pods])
    source._synced_indexes.add(0)
    read = source.capacity()
    assert read["partial"] == []
    totals = (read["nodes"], read["gpusAllocatable"], read["gpusRequested"], read["gpusPending"])
    assert totals == (2, 12, 3, 16)
    assert read["gpusFree"] == 9
    summary = "12 GPUs allocatable on 2 Nodes · 3 requested by bound pods · 16 pending · 9 free"
    assert read["summary"] == summary
    assert read["namespaces"] == [
        {"namespace": "ml", "pods": 2, "gpusRequested": 2, "gpusPending": 16},
        {"namespace": "rl", "pods": 1, "gpusRequested": 1, "gpusPending": 0},
    ]


def test_what_could_not_be_read_is_unknown_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = ReadFailure("nodes", "", "list", "forbidden", 'nodes is forbidden: User "ann"')
    source = _source(monkeypatch, kube_capacity.Listed(None, refused))
    source._apply([(0, 0, "ADDED", _pod("p1", "ml", 2, "a"))])
    read = source.capacity()  # the pods are still being listed
    assert read["gpusAllocatable"] is None and read["gpusFree"] is None and read["nodes"] is None
    assert read["gpusRequested"] == 2  # what was seen, said to be partial
    assert any("still being listed" in why for why in read["partial"])
    assert any("nodes" in why and "forbidden" in why and "unknown" in why for why in read["partial"])
    source._apply([(0, 0, "ERROR", "pods is forbidden: cannot list pods at the cluster scope")])
    read = source.capacity()
    assert read["gpusRequested"] is None and read["gpusPending"] is None and read["namespaces"] == []
    assert read["summary"] == "allocatable GPUs unknown · GPUs requested by pods unknown"
    assert any("cannot watch" in why and "forbidden" in why for why in read["partial"])
    source._watched = []  # Pod not covered at all
    assert any("not watched" in why for why in source.capacity()["partial"])
