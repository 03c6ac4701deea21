"""A Ray cluster without worker groups (head only) is a valid KubeRay object: the whole extracted view
(components, scales, pod templates, gang) of every lifecycle snapshot of the three KubeRay
definitions must build, not only the root status that test_lifecycle checks. The head-only flows of
their lifecycle files failed with ``Cannot iterate over null`` at ``.workerGroupSpecs[].groupName``."""

from __future__ import annotations

import pytest
from catalog_view import extract_view
from test_lifecycle import LIFECYCLE, Step, _definitions, load_steps

RAY_DEFINITIONS = ("ray-io-raycluster-v1", "ray-io-rayjob-v1", "ray-io-rayservice-v1")

STEPS = [step for name in RAY_DEFINITIONS for step in load_steps(LIFECYCLE / f"{name}.yaml")]


@pytest.mark.parametrize("step", STEPS, ids=[s.id for s in STEPS])
def test_ray_snapshot_extracts(step: Step) -> None:
    view = extract_view(_definitions()[step.file], step.obj)
    workers = next(c for c in view["components"] if c["name"] == "worker")
    if "head-only" in step.flow:
        assert workers["instances"] == []
        assert view["desiredPods"] == 1
    else:
        assert [i["id"] for i in workers["instances"]]


def test_every_ray_definition_has_a_head_only_flow() -> None:
    assert {s.file for s in STEPS if "head-only" in s.flow} == set(RAY_DEFINITIONS)
