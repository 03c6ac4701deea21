"""Conformance runner for extraction: kinds ``extract``, ``scale``, ``status``, ``writeback``,
``suspend`` and ``tree`` (docs/spec/format.md#conformance; R1, R3-R7)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from tests.conformance._cases import (
    Case,
    assert_json_equal,
    assert_keys_in_order,
    assert_subset,
    evaluator,
    expect_error,
    finding_matches,
    karta_of,
    params,
    plain,
)

_SCALE_KEYS = ("replicas", "minReplicas", "maxReplicas")


def _factory(case: Case) -> Any:
    from karta.extract import ComponentFactory

    return ComponentFactory(karta_of(case), copy.deepcopy(case["object"]), evaluator=evaluator(case))


def _check_scales(actual: Mapping[str, Any] | None, expected: Mapping[str, Any], what: str) -> None:
    assert_keys_in_order(actual, expected, what)
    assert actual is not None
    for instance_id, scale in expected.items():
        full = {key: scale.get(key) for key in _SCALE_KEYS}
        got = plain(actual[instance_id])
        got = {key: got.get(key) for key in _SCALE_KEYS} if isinstance(got, Mapping) else got
        assert_json_equal(got, full, f"{what}[{instance_id!r}]")


def _check_status(result: Any, expected: Mapping[str, Any]) -> None:
    assert result is not None, "status: got None (no statusDefinition?)"
    if "matched" in expected:
        assert_json_equal([plain(s) for s in result.matched], expected["matched"], "matched statuses")
    if "primary" in expected:
        assert_json_equal(plain(result.primary), expected["primary"], "primary status")
    if "conditions" in expected:
        assert_subset([plain(c) for c in result.conditions], expected["conditions"], "conditions")
    diagnostics = list(result.diagnostics)
    wanted = expected.get("diagnostics") or []
    listing = [f"{d.message} @ {d.location}" for d in diagnostics]
    for spec in wanted:
        assert any(finding_matches(d, spec) for d in diagnostics), (
            f"no diagnostic matches {spec!r}: {listing}"
        )
    if not wanted:
        assert not diagnostics, f"unexpected diagnostics: {listing}"


# --- extract / scale -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", params("extract"))
def test_extract(case: Case) -> None:
    factory = _factory(case)
    if "error" in case:
        with expect_error(case["error"]):
            getattr(factory.component(case["component"]), case["call"])()
        return
    component = factory.component(case["component"])
    for method, expected in case["expect"].items():
        actual = getattr(component, method)()
        if method == "instance_ids":
            assert_json_equal(list(actual), expected, "instance ids")
        elif method == "status":
            _check_status(actual, expected)
        elif method == "scales":
            _check_scales(actual, expected, "scales")
        else:
            assert_keys_in_order(actual, expected, method)
            assert_subset(actual, expected, method)


@pytest.mark.parametrize("case", params("scale"))
def test_scale(case: Case) -> None:
    component = _factory(case).component(case["component"])
    if "error" in case:
        with expect_error(case["error"]):
            component.scales()
        return
    _check_scales(component.scales(), case["expect"], "scales")


# --- status ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", params("status"))
def test_status(case: Case) -> None:
    from karta.model import ResourceStatus
    from karta.status import extract_status, primary_status

    if "primary_of" in case:
        primary = primary_status([ResourceStatus(s) for s in case["primary_of"]])
        assert_json_equal(plain(primary), case["expect"]["primary"], "primary status")
        return
    definition = karta_of(case).root.status_definition
    assert definition is not None, "the root has no statusDefinition"
    obj = copy.deepcopy(case["object"])
    strict = bool(case.get("strict", False))
    if "error" in case:
        with expect_error(case["error"]):
            extract_status(definition, obj, evaluator=evaluator(case), strict=strict)
        return
    _check_status(extract_status(definition, obj, evaluator=evaluator(case), strict=strict), case["expect"])


# --- write-back and suspend ------------------------------------------------------------------------


def _deep_merge(base: Any, extra: Any) -> Any:
    if isinstance(base, Mapping) and isinstance(extra, Mapping):
        merged = dict(base)
        for key, value in extra.items():
            merged[key] = _deep_merge(base.get(key), value)
        return merged
    return copy.deepcopy(extra)


@pytest.mark.parametrize("case", params("writeback"))
def test_writeback(case: Case) -> None:
    factory = _factory(case)
    component = factory.component(case["component"])
    if "read" in case:
        current = getattr(component, case["read"])()
        assert current is not None, f"{case['read']}() returned None"
        values: dict[str, Any] = {key: copy.deepcopy(plain(value)) for key, value in current.items()}
    else:
        values = copy.deepcopy(case["values"])
    for key, extra in (case.get("merge") or {}).items():
        values[key] = _deep_merge(values.get(key, {}), extra)
    for key, value in (case.get("replace") or {}).items():
        values[key] = copy.deepcopy(value)
    update = getattr(component, f"update_{case['update']}")
    if "error" in case:
        with expect_error(case["error"]):
            update(values)
        return
    update(values)
    assert_json_equal(factory.obj, case["expect_object"], "object after write-back")


@pytest.mark.parametrize("case", params("suspend"))
def test_suspend(case: Case) -> None:
    factory = _factory(case)
    for index, step in enumerate(case["steps"]):
        action = getattr(factory.component(case["component"]), step["op"])
        if "error" in step:
            with expect_error(step["error"]):
                action()
            continue
        action()
        assert_json_equal(factory.obj, step["expect_object"], f"object after step {index} ({step['op']})")


# --- tree ------------------------------------------------------------------------------------------


def _annotate(node: Any, component: str | None = None) -> Any:
    """Add ``node`` (the displayed name) to every instance of the tree's JSON form."""
    if isinstance(node, dict):
        if "instances" in node and isinstance(node["instances"], list):
            for instance in node["instances"]:
                if isinstance(instance, dict):
                    base = instance.get("instanceKey")
                    base = base if base is not None else node.get("name")
                    replica = instance.get("replicaKey")
                    instance["node"] = f"{base}[{replica}]" if replica is not None else base
        for value in node.values():
            _annotate(value)
    elif isinstance(node, list):
        for value in node:
            _annotate(value)
    return node


@pytest.mark.parametrize("case", params("tree"))
def test_tree(case: Case) -> None:
    from karta.extract import build_tree

    pods = copy.deepcopy(case["pods"]) if "pods" in case else None
    if "error" in case:
        with expect_error(case["error"]):
            build_tree(_factory(case), pods)
        return
    tree = build_tree(_factory(case), pods)
    assert_subset(_annotate(plain(tree)), case["expect"], "tree")
