"""The operator's pure decisions (docs/spec/format.md#operator-conditions, #index-labels): root GVK and index
labels of any object, the validator text, the three conditions and their transitions, the CRD records, the
catalog install plan."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
import yaml
from tests.hang_guard import HANG_GUARD_S

from karta.catalog import CATALOG_DATA_DIR, catalog_slugs
from karta.controller.parts.catalog_install import plan
from karta.controller.parts.kartas.operator import (
    Condition,
    KartaOperator,
    crd_not_found_message,
    desired_conditions,
    merge_conditions,
    validation_text,
)
from karta.controller.runtime.crds import CRDIndex, CRDRecord, slim_crd, trim_crd
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.metrics import Metrics
from karta.definitions import MANAGED_BY, catalog_objects, index_labels, root_gvk
from karta.kube.client import KubeClient
from karta.kube.config import ClusterConfig
from karta.model import GVK


def _job(**kind: str) -> dict[str, Any]:
    doc = copy.deepcopy(yaml.safe_load((CATALOG_DATA_DIR / "batch-job-v1.yaml").read_text()))
    if kind:
        doc["spec"]["structureDefinition"]["rootComponent"]["kind"] = kind
    return dict(doc)


# ----------------------------------------------------------------------------- GVK and labels


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"spec": None},
        {"spec": []},
        {"spec": {"structureDefinition": "x"}},
        {"spec": {"structureDefinition": {"rootComponent": {"kind": "Job"}}}},
        {
            "spec": {
                "structureDefinition": {"rootComponent": {"kind": {"group": 1, "version": "v1", "kind": "J"}}}
            }
        },
        {
            "spec": {
                "structureDefinition": {"rootComponent": {"kind": {"group": "", "version": "", "kind": "J"}}}
            }
        },
        {"spec": {"structureDefinition": {"rootComponent": {"kind": {"version": "v1", "kind": ""}}}}},
    ],
)
def test_root_gvk_of_hostile_shapes_is_none(obj: dict[str, Any]) -> None:
    assert root_gvk(obj) is None
    assert index_labels(root_gvk(obj)) == {}


def test_root_gvk_and_index_labels() -> None:
    gvk = root_gvk(_job())
    assert gvk == GVK("batch", "v1", "Job")
    assert index_labels(gvk) == {
        "run.ai/karta-group": "batch",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Job",
    }
    core = root_gvk(
        {"spec": {"structureDefinition": {"rootComponent": {"kind": {"version": "v1", "kind": "Pod"}}}}}
    )
    assert index_labels(core) == {
        "run.ai/karta-group": "",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Pod",
    }


def test_a_value_no_label_can_hold_is_left_out() -> None:
    long_group = "a" * 60 + ".example.com"  # a valid API group, too long for a label value
    assert index_labels(GVK(long_group, "v1", "Widget")) == {
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Widget",
    }


# ----------------------------------------------------------------------------------- validator


def test_validation_text_of_a_valid_definition_is_empty() -> None:
    assert validation_text(_job()) == ("", [])


def test_validation_text_is_the_validators_messages_joined_by_newlines() -> None:
    doc = _job()
    root = doc["spec"]["structureDefinition"]["rootComponent"]
    root["scaleDefinition"] = {"replicasPath": "[..]", "minReplicasPath": "del(.a)"}
    root["ownerRef"] = "nobody"
    text, _ = validation_text(doc)
    lines = text.split("\n")
    assert "root component cannot have owner ref" in lines
    assert any("recursive descent operator '..' is not allowed" in line for line in lines)
    assert any("del function is not allowed" in line for line in lines)
    assert not text.startswith("invalid karta")


def test_validation_text_of_unreadable_definitions() -> None:
    doc = _job()
    doc["spec"]["structureDefinition"]["rootComponent"]["name"] = {"not": "a name"}
    text, _ = validation_text(doc)
    assert text
    assert validation_text({"kind": "Pod", "apiVersion": "v1"})[0]
    assert validation_text({})[0]


def test_validation_of_a_hostile_definition_is_bounded() -> None:
    doc = _job()
    doc["spec"]["structureDefinition"]["childComponents"] = [
        {
            "name": f"c{i}",
            "ownerRef": f"c{i - 1}" if i else "job",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
        }
        for i in range(20_000)
    ]
    doc["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {
        "replicasPath": "(" * 5000 + "." + ")" * 5000
    }
    started = time.monotonic()
    text, _ = validation_text(doc)
    assert text
    assert time.monotonic() - started < HANG_GUARD_S


# ---------------------------------------------------------------------------------- conditions


def _types(conditions: list[Condition]) -> list[tuple[str, str, str]]:
    return [(c.type, c.status, c.reason) for c in conditions]


def test_desired_conditions() -> None:
    gvk = GVK("example.com", "v1", "Widget")
    assert _types(desired_conditions("", gvk, served=True)) == [
        ("Validated", "True", "ValidationSucceeded"),
        ("CRDExists", "True", "CRDFound"),
        ("Ready", "True", "Ready"),
    ]
    failed = desired_conditions("component name is empty", gvk, served=False)
    assert _types(failed) == [
        ("Validated", "False", "ValidationFailed"),
        ("CRDExists", "False", "CRDNotFound"),
        ("Ready", "False", "NotReady"),
    ]
    assert failed[0].message == "component name is empty"
    assert failed[1].message == "CRD for example.com/Widget not found or does not serve version v1"
    assert failed[1].message == crd_not_found_message(gvk)
    assert failed[2].message == "Validated and CRDExists must both be True"
    assert _types(desired_conditions("", gvk, served=False))[2] == ("Ready", "False", "NotReady")
    assert _types(desired_conditions("bad", gvk, served=True))[2] == ("Ready", "False", "NotReady")


def test_a_root_without_kind_keeps_the_default_crd_condition() -> None:
    crd = desired_conditions("", None, served=False)[1]
    assert (crd.status, crd.reason, crd.message) == (
        "False",
        "Pending",
        "Condition has not been evaluated yet",
    )


def test_a_long_validator_text_fits_the_crds_message_limit() -> None:
    assert len(desired_conditions("x" * 40_000, None, served=False)[0].message) == 32768


def test_merge_sets_every_condition_with_the_generation() -> None:
    merged = merge_conditions(
        None, desired_conditions("", GVK("", "v1", "Pod"), served=True), generation=3, now="T1"
    )
    assert [c["type"] for c in merged] == ["Validated", "CRDExists", "Ready"]
    assert all(c["observedGeneration"] == 3 and c["lastTransitionTime"] == "T1" for c in merged)
    assert set(merged[0]) == {
        "type",
        "status",
        "reason",
        "message",
        "lastTransitionTime",
        "observedGeneration",
    }


def test_the_transition_time_moves_only_when_the_status_does() -> None:
    gvk = GVK("example.com", "v1", "Widget")
    first = merge_conditions([], desired_conditions("bad", gvk, served=False), generation=1, now="T1")
    # another message, same status: the time stays
    second = merge_conditions(first, desired_conditions("worse", gvk, served=False), generation=2, now="T2")
    assert [c["lastTransitionTime"] for c in second] == ["T1", "T1", "T1"]
    assert second[0]["message"] == "worse" and second[0]["observedGeneration"] == 2
    # the CRD appears: CRDExists flips, the others keep their time
    third = merge_conditions(second, desired_conditions("worse", gvk, served=True), generation=2, now="T3")
    assert [c["lastTransitionTime"] for c in third] == ["T1", "T3", "T1"]
    # nothing changes: the same list
    assert (
        merge_conditions(third, desired_conditions("worse", gvk, served=True), generation=2, now="T4")
        == third
    )


def test_merge_keeps_other_conditions_and_drops_garbage() -> None:
    existing = [
        "garbage",
        {"no": "type"},
        {"type": "Custom", "status": "True", "reason": "Mine", "message": "", "lastTransitionTime": "T0"},
        {"type": "Ready", "status": "False", "reason": "Pending", "message": "", "lastTransitionTime": "T0"},
    ]
    merged = merge_conditions(
        existing, desired_conditions("", GVK("", "v1", "Pod"), served=True), generation=None, now="T1"
    )
    assert [c["type"] for c in merged] == ["Custom", "Ready", "Validated", "CRDExists"]
    assert merged[0] == existing[2]
    assert "observedGeneration" not in merged[1]
    assert merge_conditions({"not": "a list"}, [], generation=1) == []


def test_the_legacy_condition_name_is_read() -> None:
    legacy = [
        {"type": "KartaValidated", "status": "True", "reason": "X", "message": "", "lastTransitionTime": "T0"}
    ]
    merged = merge_conditions(legacy, desired_conditions("", None, served=False), generation=1, now="T1")
    validated = next(c for c in merged if c["type"] == "Validated")
    assert validated["lastTransitionTime"] == "T0"


# --------------------------------------------------------------------------------- CRD records


def _crd(**over: Any) -> dict[str, Any]:
    crd: dict[str, Any] = {
        "metadata": {"name": "widgets.example.com", "managedFields": [{"huge": "x" * 1000}]},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [
                {"name": "v1", "served": True, "schema": {"openAPIV3Schema": {"type": "object"}}},
                {"name": "v2", "served": False},
                {"name": "v3"},
            ],
        },
        "status": {"conditions": [{"type": "Established", "status": "True"}]},
    }
    crd.update(over)
    return crd


def test_a_crd_is_trimmed_to_its_record() -> None:
    record = trim_crd(_crd())
    assert record == CRDRecord("widgets.example.com", "example.com", "Widget", frozenset({"v1"}), True)
    assert record is not None and record.serves("v1") and not record.serves("v2") and not record.serves("v3")


def test_a_crd_not_yet_established_serves_nothing() -> None:
    record = trim_crd(_crd(status={}))
    assert record is not None and not record.serves("v1")


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"metadata": "x", "spec": {}},
        {"metadata": {"name": "a"}, "spec": {"group": "g"}},
        {"metadata": {}, "spec": []},
    ],
)
def test_what_is_not_a_crd_has_no_record(obj: dict[str, Any]) -> None:
    assert trim_crd(obj) is None


def test_hostile_versions_and_conditions_are_ignored() -> None:
    record = trim_crd(
        _crd(
            status={"conditions": "x"},
            spec={**_crd()["spec"], "versions": [1, {"name": 2, "served": True}, None]},
        )
    )
    assert record is not None and record.served == frozenset() and not record.established


def test_slim_crd_keeps_name_version_and_record_and_accepts_its_own_output() -> None:
    crd = _crd()
    crd["metadata"]["resourceVersion"] = "7"
    slim = slim_crd(crd)
    assert slim is not None and slim["metadata"] == {"name": "widgets.example.com", "resourceVersion": "7"}
    assert slim["record"] == trim_crd(crd) and slim_crd(slim) is slim
    assert slim_crd({"metadata": {"name": "x"}}) is None


def test_the_crd_index_follows_lists_and_events_and_reports_changes() -> None:
    changes: list[tuple[str, str]] = []
    index = CRDIndex(client=None, on_change=lambda g, k: changes.append((g, k)))  # type: ignore[arg-type]
    first = _crd()
    first["metadata"]["resourceVersion"] = "1"
    index.informer.replace([slim for slim in [slim_crd(first)] if slim is not None])
    assert index.synced.is_set() and index.crd_serves("example.com", "v1", "Widget")
    assert changes == [("example.com", "Widget")]
    changes.clear()
    second = _crd(spec={**_crd()["spec"], "versions": [{"name": "v2", "served": True}]})
    second["metadata"]["resourceVersion"] = "2"
    slim = slim_crd(second)
    assert slim is not None
    index.informer.record("MODIFIED", slim)
    assert index.crd_serves("example.com", "v2", "Widget") and not index.crd_serves(
        "example.com", "v1", "Widget"
    )
    assert changes == [("example.com", "Widget")]
    changes.clear()
    index.informer.replace([])  # a re-list after the CRD went away
    assert index.records() == [] and changes == [("example.com", "Widget")]
    assert index.is_crd_kind("example.com", "Widget")  # never a built-in after that


# ---------------------------------------------------------------------------- catalog install


def test_the_catalog_objects_are_labelled_as_ours() -> None:
    objects = catalog_objects()
    assert [o["metadata"]["name"] for o in objects] == catalog_slugs()
    for obj in objects:
        assert obj["apiVersion"] == "run.ai/v1alpha1" and obj["kind"] == "Karta"
        assert obj["metadata"]["labels"][MANAGED_BY] == "karta"
        assert obj["metadata"]["labels"]["run.ai/karta-kind"] == root_gvk(obj).kind  # type: ignore[union-attr]
        assert "status" not in obj


def test_the_install_plan_never_overwrites_a_users_karta() -> None:
    wanted = catalog_objects()
    mine = _job()
    mine["metadata"] = {"name": "my-jobs"}
    squatter = _job(group="example.com", version="v1", kind="Other")
    squatter["metadata"] = {"name": "core-pod-v1"}
    ours = next(o for o in wanted if o["metadata"]["name"] == "apps-deployment-v1")
    deleting = _job(group="apps", version="v1", kind="StatefulSet")
    deleting["metadata"] = {"name": "old", "deletionTimestamp": "2026-01-01T00:00:00Z"}
    result = plan([mine, squatter, ours, deleting], wanted)
    assert "batch-job-v1" in result.skipped and "my-jobs" in result.skipped["batch-job-v1"]
    assert "core-pod-v1" in result.skipped
    assert "apps-deployment-v1" in result.applied  # ours: applied again
    assert "apps-statefulset-v1" in result.applied  # the other claim is being deleted
    assert sorted([*result.applied, *result.skipped]) == sorted(catalog_slugs())


# ------------------------------------------------------------------ watching (no API server)


def _operator() -> KartaOperator:
    client = KubeClient(ClusterConfig(server="https://127.0.0.1:1"))  # never contacted here
    return KartaOperator(client, events=EventRecorder(client), metrics=Metrics())


def _drain(operator: KartaOperator) -> set[str]:
    keys = set()
    while (key := operator.queue.get(timeout=0)) is not None:
        keys.add(key)
        operator.queue.done(key)
    return keys


def test_kartas_are_queued_and_a_crd_change_queues_its_kind() -> None:
    operator = _operator()
    labelled = _job(group="example.com", version="v1", kind="Widget")
    labelled["metadata"] = {
        "name": "by-labels",
        "labels": {"run.ai/karta-group": "example.com", "run.ai/karta-kind": "Widget"},
        "resourceVersion": "1",
    }
    unlabelled = _job(group="example.com", version="v2", kind="Widget")
    unlabelled["metadata"] = {"name": "by-root", "resourceVersion": "1"}
    other = _job()
    other["metadata"] = {"name": "other", "resourceVersion": "1"}
    operator.kartas.replace([labelled, unlabelled, other, {"metadata": {"name": "junk"}}])
    assert _drain(operator) == {"by-labels", "by-root", "other", "junk"}
    operator._crd_changed("example.com", "Widget")
    assert _drain(operator) == {"by-labels", "by-root"}
    operator._crd_changed("example.com", "Gadget")
    assert _drain(operator) == set()


def test_the_gauge_counts_kartas_per_condition() -> None:
    operator = _operator()
    gvk = GVK("example.com", "v1", "Widget")
    operator._record("a", desired_conditions("", gvk, served=True))
    operator._record("b", desired_conditions("bad", gvk, served=True))
    operator._record("b", desired_conditions("bad", gvk, served=False))  # replaces b's
    registry = operator.metrics.registry

    def value(condition: str, status: str) -> float | None:
        return registry.get_sample_value("karta_definitions", {"condition": condition, "status": status})

    assert (value("Ready", "True"), value("Ready", "False")) == (1, 1)
    assert (value("CRDExists", "True"), value("CRDExists", "False")) == (1, 1)
    operator._forget("b")
    assert (value("Validated", "True"), value("Validated", "False")) == (1, 0)


def test_a_karta_is_validated_once_per_generation() -> None:
    operator = _operator()
    obj = _job()
    obj["metadata"] = {"name": "jobs", "uid": "u-1", "generation": 1}
    assert operator._validation(obj, obj["metadata"]) == ""
    broken = copy.deepcopy(obj)
    broken["spec"]["structureDefinition"]["rootComponent"]["ownerRef"] = "x"
    assert operator._validation(broken, broken["metadata"]) == ""  # same generation: the text it had
    broken["metadata"]["generation"] = 2
    assert operator._validation(broken, broken["metadata"]) == "root component cannot have owner ref"
    operator._karta_changed("DELETED", broken, None)
    assert operator._validated == {}
    anonymous = copy.deepcopy(broken)
    del anonymous["metadata"]["uid"]
    assert operator._validation(anonymous, anonymous["metadata"]) == "root component cannot have owner ref"
    assert operator._validated == {}
