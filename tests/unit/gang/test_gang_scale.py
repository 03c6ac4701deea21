"""Subtree scale and desired: every worked example of docs/spec/format.md#subtree-scale (C7, 20.8)."""

from __future__ import annotations

from typing import Any

import pytest
from gang_builders import component, karta, make_factory, pts

from karta.errors import GangError
from karta.extract import ComponentFactory
from karta.extract.types import Scale
from karta.gang import StructureSummary, effective_desired, effective_min, subtree_desired, subtree_scale


def scale(replicas: str, minimum: str | None = None) -> dict[str, Any]:
    out = {"replicasPath": replicas}
    if minimum is not None:
        out["minReplicasPath"] = minimum
    return {"scaleDefinition": out}


def master_worker(root_scale: bool = True) -> ComponentFactory:
    root = component("R", **(scale('"2"') if root_scale else {}))
    k = karta(
        root,
        component("worker", "R", specDefinition=pts(".spec.w"), **scale('"4"')),
        component("master", "R", specDefinition=pts(".spec.m"), **scale('"1"')),
    )
    return make_factory(k, {"spec": {}})


def test_master_worker_rows() -> None:
    factory = master_worker()
    assert subtree_scale(factory, "R") == 10
    assert subtree_scale(factory, "worker") == 4
    assert subtree_scale(factory, "master") == 1
    assert subtree_scale(master_worker(root_scale=False), "R") == 5


@pytest.mark.parametrize(("minimum", "expected"), [("3", 3), ("0", 5), ("null", 5)])
def test_single_leaf_prefers_min_replicas(minimum: str, expected: int) -> None:
    factory = make_factory(karta(component("leaf", specDefinition=pts(".spec"), **scale("5", minimum))), {})
    assert subtree_scale(factory, "leaf") == expected


def test_single_leaf_without_scale_when_others_have_one_is_zero() -> None:
    k = karta(component("R", **scale("1")), component("leaf", "R", specDefinition=pts(".spec")))
    assert subtree_scale(make_factory(k, {}), "leaf") == 0
    assert subtree_scale(make_factory(k, {}), "R") == 1


LIST_OBJ = {
    "spec": {
        "components": [
            {"name": "indexer", "replicas": 3},
            {"name": "processor", "replicas": 3, "minReplicas": 2},
        ]
    }
}
MAP_OBJ = {"spec": {"services": {"processor": {"replicas": 3, "minReplicas": 2}, "indexer": {"replicas": 3}}}}


def multi_instance(from_map: bool) -> ComponentFactory:
    if from_map:
        fields: dict[str, Any] = {
            "instanceIdPath": ".spec.services | keys[]",
            "scaleDefinition": {
                "replicasPath": ".spec.services[].replicas",
                "minReplicasPath": ".spec.services[].minReplicas",
            },
        }
        obj = MAP_OBJ
    else:
        fields = {
            "instanceIdPath": ".spec.components[].name",
            "scaleDefinition": {
                "replicasPath": ".spec.components[].replicas",
                "minReplicasPath": ".spec.components[].minReplicas",
            },
        }
        obj = LIST_OBJ
    leaf = component(
        "svc",
        specDefinition=pts(".spec.x"),
        podSelector={"componentInstanceSelector": {"idPath": ".metadata.labels.svc"}},
        **fields,
    )
    return make_factory(karta(leaf), obj)


@pytest.mark.parametrize("from_map", [False, True])
def test_multi_instance_leaf(from_map: bool) -> None:
    factory = multi_instance(from_map)
    assert subtree_scale(factory, "svc") == 5
    assert subtree_scale(factory, "svc", "indexer") == 3
    assert subtree_scale(factory, "svc", instance_id="processor") == 2
    assert subtree_desired(factory, "svc") == 6
    with pytest.raises(GangError, match="instance id non-existent not found"):
        subtree_scale(factory, "svc", "non-existent")


def test_counting_mode() -> None:
    two = karta(
        component("root"),
        component("a", "root", specDefinition=pts(".a")),
        component("b", "root", specDefinition=pts(".b")),
    )
    assert subtree_scale(make_factory(two, {}), "root") == 2
    cluster = karta(
        component("cluster"),
        component("job-group", "cluster"),
        component("worker", "job-group", specDefinition=pts(".w")),
        component("master", "job-group", specDefinition=pts(".m")),
        component("storage", "cluster", specDefinition=pts(".s")),
    )
    factory = make_factory(cluster, {})
    assert [subtree_scale(factory, c) for c in ("cluster", "job-group", "worker")] == [3, 2, 1]
    assert subtree_desired(factory, "cluster") == 3


def test_counting_mode_multi_instance() -> None:
    k = karta(
        component("root"),
        component(
            "jobs",
            "root",
            specDefinition=pts(".spec.jobs[].template"),
            instanceIdPath=".spec.jobs[].name",
            podSelector={"componentInstanceSelector": {"idPath": ".metadata.labels.job"}},
        ),
    )
    factory = make_factory(k, {"spec": {"jobs": [{"name": "a"}, {"name": "b"}]}})
    assert subtree_scale(factory, "jobs") == 2
    assert subtree_scale(factory, "root") == 2
    assert subtree_scale(factory, "jobs", "b") == 1
    with pytest.raises(GangError, match="instance id c not found"):
        subtree_scale(factory, "jobs", "c")


@pytest.mark.parametrize("mode_has_scale", [True, False])
def test_empty_instance_id_is_an_error(mode_has_scale: bool) -> None:
    factory = (
        master_worker()
        if mode_has_scale
        else make_factory(karta(component("x", specDefinition=pts("."))), {})
    )
    with pytest.raises(GangError, match="instance id is empty"):
        subtree_scale(factory, factory.karta.root.name, "")


def test_unknown_component() -> None:
    with pytest.raises(GangError, match="component ghost not found"):
        subtree_scale(master_worker(), "ghost")


def test_summary_can_be_shared() -> None:
    factory = master_worker()
    summary = StructureSummary(factory.karta)
    assert subtree_scale(factory, "R", summary=summary) == 10
    assert subtree_desired(factory, "R", summary=summary) == 10


@pytest.mark.parametrize(
    ("value", "eff_min", "eff_desired"),
    [
        (None, 0, 0),
        (Scale(), 0, 0),
        (Scale(replicas=5, min_replicas=3), 3, 5),
        (Scale(replicas=5, min_replicas=0), 5, 5),
        (Scale(replicas=0, min_replicas=2), 2, 2),
        (Scale(replicas=-1, min_replicas=-1), 0, 0),
    ],
)
def test_effective_values(value: Scale | None, eff_min: int, eff_desired: int) -> None:
    assert (effective_min(value), effective_desired(value)) == (eff_min, eff_desired)


def test_elastic_desired_differs_from_min() -> None:
    k = karta(
        component("R"),
        component("worker", "R", specDefinition=pts(".w"), **scale('"4"', '"2"')),
        component("master", "R", specDefinition=pts(".m"), **scale('"1"')),
    )
    factory = make_factory(k, {})
    assert (subtree_scale(factory, "R"), subtree_desired(factory, "R")) == (3, 5)
