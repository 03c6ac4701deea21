"""Hand-made bombs through every offline ``kli`` command, in a child under a memory limit (issue 9):
each expression class as a status matcher (and the environment canary in the pod template too),
each hostile object through the catalog-like definition, and component chains at and beyond the
documented depth. Every run must end as harness.Outcome.problems() describes."""

from __future__ import annotations

import copy

import pytest

from tests.hostile import bombs
from tests.hostile.harness import CANARY_NAME, assert_all_fine, run_cases

EXPRESSIONS = list(bombs.expression_bombs())


@pytest.mark.parametrize(("name", "expression"), EXPRESSIONS, ids=[n for n, _ in EXPRESSIONS])
def test_expression_bombs_in_a_status_matcher(name: str, expression: str) -> None:
    karta = bombs.definition(matchers=[expression])
    assert_all_fine(run_cases(bombs.cases_for(name, karta, bombs.OBJECT, backends=("volcano",))))


def test_four_endless_matchers_share_one_budget_per_object() -> None:
    karta = bombs.definition(matchers=["until(false; .) | true"] * 4)
    cases = bombs.cases_for("until-x4", karta, bombs.OBJECT, seconds=15.0)
    assert_all_fine(run_cases(cases))


def test_the_environment_is_empty_for_definitions() -> None:
    template = (
        f'{{metadata: {{labels: {{a: ($ENV.{CANARY_NAME} // "none"), b: (env.{CANARY_NAME} // "none")}}}}, '
        "spec: .spec.template.spec}"
    )
    karta = bombs.definition(template=template, phase=f'$ENV.{CANARY_NAME} // "none"')
    assert_all_fine(run_cases(bombs.cases_for("env-template", karta, bombs.OBJECT)))


OBJECTS = list(bombs.hostile_objects())


@pytest.mark.parametrize(("name", "obj"), OBJECTS, ids=[n for n, _ in OBJECTS])
def test_hostile_objects(name: str, obj: str) -> None:
    karta = bombs.definition(matchers=['.status.phase == "Running"', ".spec.deep | tostring | length > 0"])
    assert_all_fine(run_cases(bombs.cases_for(name, karta, obj)))


@pytest.mark.parametrize("depth", [20, 500])
def test_component_chains(depth: int) -> None:
    karta = bombs.component_chain(depth)
    obj = copy.deepcopy(bombs.OBJECT)
    assert_all_fine(run_cases(bombs.cases_for(f"chain-{depth}", karta, obj)))
