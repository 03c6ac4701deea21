"""Conformance runner for pod-side evaluation and gangs: kinds ``pod_query``, ``effective_member``,
``gang_scale`` and ``gang_plan`` (docs/spec/format.md#conformance; R8)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from tests.conformance._cases import (
    Case,
    assert_json_equal,
    check_error,
    evaluator,
    expect_error,
    finding_matches,
    karta_of,
    params,
    plain,
)


def _factory(case: Case) -> Any:
    from karta.extract import ComponentFactory

    return ComponentFactory(karta_of(case), copy.deepcopy(case["object"]), evaluator=evaluator(case))


# --- pod_query -------------------------------------------------------------------------------------


def _pod_call(case: Case) -> Any:
    from karta.extract import PodQuerier
    from karta.model import ComponentDefinition, PodGroupMember

    querier = PodQuerier(copy.deepcopy(case["pod"]), evaluator=evaluator(case))
    op = case["op"]
    if op in ("extract_group_keys", "passes_filters"):
        return getattr(querier, op)(PodGroupMember.model_validate(case["member"]))
    component = ComponentDefinition.model_validate(case["component"])
    if op == "matching_instance_id":
        return querier.matching_instance_id(component, list(case["instance_ids"]))
    return getattr(querier, op)(component)


@pytest.mark.parametrize("case", params("pod_query"))
def test_pod_query(case: Case) -> None:
    if "error" in case:
        with expect_error(case["error"]):
            _pod_call(case)
        return
    assert_json_equal(_pod_call(case), case["expect"], case["op"])


# --- gang_scale ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", params("gang_scale"))
def test_gang_scale(case: Case) -> None:
    from karta.gang import subtree_scale

    args: tuple[Any, ...] = (case["instance_id"],) if "instance_id" in case else ()
    factory = _factory(case)
    if "error" in case:
        with expect_error(case["error"]):
            subtree_scale(factory, case["component"], *args)
        return
    assert_json_equal(subtree_scale(factory, case["component"], *args), case["expect"], "subtree_scale")


# --- effective_member ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", params("effective_member"))
def test_effective_member(case: Case) -> None:
    from karta.extract import PodQuerier
    from karta.gang import StructureSummary, effective_member, infer_pod_component

    factory = _factory(case)
    summary = StructureSummary(factory.karta)
    querier = PodQuerier(copy.deepcopy(case["pod"]), evaluator=factory.evaluator)
    if "error" in case:
        with expect_error(case["error"]):
            effective_member(summary, querier, infer_pod_component(summary, querier))
        return
    expected = case["expect"]
    component = infer_pod_component(summary, querier)
    assert component == expected["component"], f"inferred component {component!r}"
    member = effective_member(summary, querier, component)
    if "effective" in expected and expected["effective"] is None:
        assert member is None, f"expected no effective member, got {member!r}"
        return
    assert member is not None, "expected an effective member, got None"
    assert member.effective_component == expected["effective_component"], member
    assert member.pod_group_name == expected["pod_group"], member
    if "group_keys" in expected:
        assert_json_equal(querier.extract_group_keys(member.member), expected["group_keys"], "group keys")


# --- gang_plan -------------------------------------------------------------------------------------

_GANG_FIELDS = ("name", "min_member", "min_sub_group", "members", "alpha_keys")
_SUB_GROUP_FIELDS = ("name", "component", "min_member", "desired", "members")


def _check_gang(gang: Any, expected: Mapping[str, Any], uid: str, where: str) -> None:
    from karta.gang import flat_min, kai_alpha_pod_group_name, kai_pod_group_name

    for field in _GANG_FIELDS:
        if field in expected:
            assert_json_equal(plain(getattr(gang, field)), expected[field], f"{where}.{field}")
    if "flat_min" in expected:
        assert_json_equal(flat_min(gang), expected["flat_min"], f"{where}.flat_min")
    if "topology" in expected:
        topology = gang.topology.to_dict() if gang.topology is not None else None
        assert_json_equal(topology, expected["topology"], f"{where}.topology")
    if "kai_name" in expected:
        keys = gang.alpha_keys
        name = kai_pod_group_name(uid, gang.name) if keys is None else kai_alpha_pod_group_name(uid, keys)
        assert name == expected["kai_name"], f"{where}: KAI name {name!r}"
    if "sub_groups" in expected:
        subs = list(gang.sub_groups)
        names = [s.name for s in subs]
        assert len(subs) == len(expected["sub_groups"]), f"{where}.sub_groups: got {names}"
        for i, (sub, want) in enumerate(zip(subs, expected["sub_groups"], strict=True)):
            for field in _SUB_GROUP_FIELDS:
                if field in want:
                    assert_json_equal(
                        plain(getattr(sub, field)), want[field], f"{where}.sub_groups[{i}].{field}"
                    )


@pytest.mark.parametrize("case", params("gang_plan"))
def test_gang_plan(case: Case) -> None:
    from karta.gang import compute_gang_plan

    factory = _factory(case)
    pods = copy.deepcopy(case.get("pods") or [])
    if "error" in case:
        with expect_error(case["error"]):
            compute_gang_plan(factory, pods)
        return
    if "error_or_diagnostic" in case:
        spec = case["error_or_diagnostic"]
        try:
            plan = compute_gang_plan(factory, pods)
        except Exception as exc:
            check_error(exc, spec)
            return
        listing = [f"{d.message} @ {d.location}" for d in plan.diagnostics]
        assert any(finding_matches(d, {"contains": spec}) for d in plan.diagnostics), (
            f"neither raised nor a diagnostic containing {spec!r}: {listing}"
        )
        return
    plan = compute_gang_plan(factory, pods)
    uid = str((case["object"].get("metadata") or {}).get("uid", ""))
    expected = case["expect"]["gangs"]
    names = [g.name for g in plan.gangs]
    assert len(plan.gangs) == len(expected), f"gangs: got {names}, expected {len(expected)}"
    for i, (gang, want) in enumerate(zip(plan.gangs, expected, strict=True)):
        _check_gang(gang, want, uid, f"gangs[{i}]")
    assert not plan.diagnostics, [f"{d.message} @ {d.location}" for d in plan.diagnostics]
