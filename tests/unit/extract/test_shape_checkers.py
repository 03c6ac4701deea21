"""The generated shape checkers of karta.extract.convert report exactly what the composed
checkers report (same first problem, same field path), on random values of every target shape."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karta.extract import convert as C

SHAPES = [
    C.POD_TEMPLATE_SPEC,
    C.POD_SPEC,
    C.OBJECT_META,
    C.CONTAINER,
    (C.CONTAINER,),
    C.RESOURCE_REQUIREMENTS,
    C.NODE_AFFINITY,
    C.POD_AFFINITY,
    (C.POD_RESOURCE_CLAIM,),
]
ODD = [1, "s", True, 2.5, [], {}, [1], {"a": 1}]


def value_for(shape: Any, rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.08:
        return None
    if r < 0.16:
        return rng.choice(ODD)
    if isinstance(shape, dict):
        keys = [*shape, "zz", "aa"]
        chosen = rng.sample(keys, rng.randint(0, min(6, len(keys))))
        return {k: value_for(shape.get(k, C.OBJECT), rng) for k in chosen}
    if isinstance(shape, tuple):
        return [value_for(shape[0], rng) for _ in range(rng.randint(0, 3))]
    if shape == C.STRING_MAP:
        return {f"k{i}": rng.choice(["v", "w", 3, None]) for i in range(rng.randint(0, 3))}
    if shape == C.QUANTITY_MAP:
        return {f"k{i}": rng.choice(["1", 2, 2.5, True, None, [1]]) for i in range(rng.randint(0, 3))}
    return {C.STRING: "x", C.OBJECT: {"q": 1}, C.ARRAY: [1]}[shape]


@pytest.mark.parametrize("seed", range(4))
def test_generated_checkers_agree_with_composed_ones(seed: int) -> None:
    rng = random.Random(seed)
    problems = 0
    for _ in range(1500):
        shape = rng.choice(SHAPES)
        value = value_for(shape, rng)
        if value is None:
            continue
        composed = C._compile(shape)(value)
        assert C._checker_for(shape)(value) == composed, (shape, value)
        problems += composed is not None
    assert problems > 100  # the values exercise the error paths too


def test_problem_paths_name_the_field_and_index() -> None:
    template = {"spec": {"containers": [{"name": "a"}, "oops"]}}
    assert C.shape_error(template, C.POD_TEMPLATE_SPEC) == ".spec.containers[1]: expected object, got string"
    container = {"env": [{"name": "x"}], "ports": [None, 3]}
    assert C.shape_error(container, C.CONTAINER) == ".ports[1]: expected object, got number"
    meta = {"labels": {"a": "1", "b": 2}}
    assert C.shape_error(meta, C.OBJECT_META) == ".labels.b: expected string, got number"
