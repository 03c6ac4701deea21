"""Deep component chains (issue 9): the gang walks are iterative, so even a definition nobody
validated (a 5,000-deep chain) computes without RecursionError and with the recursion's results;
the workload tree, validated first, handles the documented depth and refuses an instance
explosion (offline, instance counts along a chain multiply) instead of running for hours."""

from __future__ import annotations

import time
from typing import Any

import pytest
from gang_builders import POD_KIND, component, karta, pts
from tests.hang_guard import HANG_GUARD_S

from karta.errors import ExtractionError, GangError, ValidationError
from karta.extract import ComponentFactory, build_tree
from karta.extract.tree import MAX_TREE_NODES
from karta.gang import StructureSummary, compute_gang_plan, subtree_desired, subtree_scale
from karta.gang.compiled import compiled_gang, subtree_counts
from karta.jq import Evaluator
from karta.model.validate_structure import MAX_COMPONENT_DEPTH

EV = Evaluator(trusted=True)


def chain(depth: int, *, scaled: bool = True, gang: bool = True) -> Any:
    children = [component(f"c{i}", f"c{i - 1}" if i > 1 else "root") for i in range(1, depth + 1)]
    if scaled:
        for i, child in enumerate(children):
            child["scaleDefinition"] = {"replicasPath": "2" if i % 2 else "1"}
    children[-1].update(kind=POD_KIND, specDefinition=pts(".spec.template"))
    return karta(
        component("root"),
        *children,
        gang={"podGroup": {"name": "g", "subGroups": [{"componentName": "c1"}]}} if gang else None,
    )


def expected_scale(depth: int) -> int:
    return 2 ** (depth // 2)  # the product of 1, 2, 1, 2, ... along the chain


@pytest.mark.parametrize("depth", [MAX_COMPONENT_DEPTH, 5000])  # 5,000: far past Python's recursion limit
def test_gang_arithmetic_on_a_deep_chain_never_recurses(depth: int) -> None:
    definition = chain(depth)
    factory = ComponentFactory(definition, {"spec": {"template": {}}}, evaluator=EV)
    summary = StructureSummary(definition)
    start = time.perf_counter()
    assert subtree_scale(factory, "c1", summary=summary) == expected_scale(depth)
    assert subtree_desired(factory, "c1", summary=summary) == expected_scale(depth)
    compiled = compiled_gang(definition)
    assert compiled is not None
    assert subtree_counts(factory, compiled.sub_groups[0].tree) == (expected_scale(depth),) * 2
    assert time.perf_counter() - start < HANG_GUARD_S


def test_by_counting_on_a_deep_chain() -> None:
    definition = chain(5000, scaled=False, gang=False)
    factory = ComponentFactory(definition, {"spec": {"template": {}}}, evaluator=EV)
    assert subtree_scale(factory, "c1") == 1


def test_a_cycle_is_still_reported_by_the_iterative_walks() -> None:
    definition = karta(
        component("root"),
        component("a", "b", scaleDefinition={"replicasPath": "1"}),
        component("b", "a", scaleDefinition={"replicasPath": "1"}),
    )
    factory = ComponentFactory(definition, {}, evaluator=EV)
    with pytest.raises(GangError, match="ownership cycle detected involving component a"):
        subtree_scale(factory, "a")


def test_the_gang_plan_at_the_depth_limit() -> None:
    definition = chain(MAX_COMPONENT_DEPTH)
    factory = ComponentFactory(definition, {"spec": {"template": {}}}, evaluator=EV)
    (gang,) = compute_gang_plan(factory).gangs
    assert gang.sub_groups[0].min_member == expected_scale(MAX_COMPONENT_DEPTH)


def test_the_tree_at_the_depth_limit_and_beyond() -> None:
    factory = ComponentFactory(chain(MAX_COMPONENT_DEPTH), {"spec": {"template": {}}}, evaluator=EV)
    tree = build_tree(factory)
    depth, nodes = 0, tree.children
    while nodes:
        depth += 1
        nodes = nodes[0].instances[0].children
    assert depth == MAX_COMPONENT_DEPTH
    assert tree.to_dict()["children"][0]["name"] == "c1"
    deeper = ComponentFactory(chain(MAX_COMPONENT_DEPTH + 1), {"spec": {"template": {}}}, evaluator=EV)
    with pytest.raises(ValidationError, match="33 owner levels below the root"):
        build_tree(deeper)


def test_an_instance_explosion_is_an_error_not_hours() -> None:
    # five levels of 20 instances each: 20**5 = 3.2 million instance nodes offline
    children = []
    for i in range(1, 6):
        children.append(
            component(
                f"c{i}",
                f"c{i - 1}" if i > 1 else "root",
                instanceIdPath=".spec.ids[]",
                podSelector={
                    "componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": f"c{i}"},
                    "componentInstanceSelector": {"idPath": ".metadata.labels.id"},
                },
            )
        )
    children[-1].update(kind=POD_KIND, specDefinition=pts(".spec.templates[]"))
    definition = karta(component("root"), *children)
    obj = {"spec": {"ids": [f"i{n}" for n in range(20)], "templates": [{}] * 20}}
    factory = ComponentFactory(definition, obj, evaluator=EV)
    start = time.perf_counter()
    with pytest.raises(ExtractionError, match=f"more than {MAX_TREE_NODES:,} instance nodes"):
        build_tree(factory)
    assert time.perf_counter() - start < HANG_GUARD_S
