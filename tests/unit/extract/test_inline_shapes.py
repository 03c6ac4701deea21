"""The shape tests that generated extraction inlines (karta.extract.compiled._shape_test) accept
exactly the plain JSON values the checkers of karta.extract.convert accept, and never a value the
checkers reject (subclasses of dict or str are declined, so that the general code converts them)."""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

import pytest

from karta.extract import convert as C
from karta.extract.compiled import _shape_test
from karta.jq.codegen import Emitter

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
    C.STRING_MAP,
    C.STRING,
]


class Text(str):
    pass


ODD = [1, "s", True, 2.5, [], {}, [1], {"a": 1}, Text("t"), OrderedDict(a="b")]


def value_for(shape: Any, rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.06:
        return None
    if r < 0.12:
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


def _plain(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is dict and all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return not isinstance(value, str) or type(value) is str


def _inline(shape: Any) -> Any:
    e = Emitter()
    with e.block("def accepts(v):"):
        _shape_test(e, shape, "v")
        e.line("return True")
    return e.build("accepts")


@pytest.mark.parametrize("seed", range(3))
def test_inline_shape_tests_agree_with_the_checkers(seed: int) -> None:
    rng = random.Random(seed)
    tests = {id(shape): _inline(shape) for shape in SHAPES}
    accepted = rejected = declined = 0
    for _ in range(1500):
        shape = rng.choice(SHAPES)
        value = value_for(shape, rng)
        if value is None:
            continue
        checker_ok = C._checker_for(shape)(value) is None
        inline_ok = tests[id(shape)](value) is True
        if inline_ok:
            assert checker_ok, (shape, value)
        elif checker_ok:
            assert not _plain(value), (shape, value)  # only unusual values are declined
            declined += 1
        accepted += inline_ok
        rejected += not checker_ok
    assert accepted > 100 and rejected > 100 and declined > 0
