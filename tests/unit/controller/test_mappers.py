"""The runtime's event-to-key mappers: owners of an object that a part reconciles, and the
workloads of a namespace whose scope label changed."""

from __future__ import annotations

from typing import Any

from karta.controller.runtime.mappers import label_changed, namespace_keys, owner_keys
from karta.model.gvk import GVK, GroupKind

JOB = GVK("batch", "v1", "Job")
RECONCILED = {GroupKind("batch", "Job"): JOB}


def _obj(*refs: Any, namespace: str = "ml") -> dict[str, Any]:
    return {"metadata": {"name": "pg", "namespace": namespace, "ownerReferences": list(refs)}}


def test_each_reconciled_owner_is_a_key_in_the_objects_namespace() -> None:
    obj = _obj(
        {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "1", "controller": True},
        {"apiVersion": "batch/v2", "kind": "Job", "name": "other", "uid": "2"},  # any served version
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "3"},  # not reconciled
    )
    assert owner_keys(obj, RECONCILED) == [(JOB, "ml", "train"), (JOB, "ml", "other")]


def test_hostile_or_missing_references_give_nothing() -> None:
    assert owner_keys({}, RECONCILED) == []
    assert owner_keys({"metadata": "x"}, RECONCILED) == []
    assert owner_keys({"metadata": {"ownerReferences": "x"}}, RECONCILED) == []
    assert owner_keys(_obj("x", 3, None, {"apiVersion": "batch/v1", "kind": "Job"}), RECONCILED) == []
    assert owner_keys(_obj({"apiVersion": "batch/v1", "kind": "Job", "name": "t"}), {}) == []


LABEL = "karta.run.ai/gang-scheduling"


def _ns(name: str, value: str | None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {LABEL: value} if value else {}}}


def test_label_changed_only_for_that_label() -> None:
    assert label_changed(_ns("a", "enabled"), None, LABEL)  # a new namespace that carries it
    assert not label_changed(_ns("a", None), None, LABEL)
    assert label_changed(_ns("a", "enabled"), _ns("a", None), LABEL)
    assert label_changed(_ns("a", None), _ns("a", "opt-in"), LABEL)
    other = {"metadata": {"name": "a", "labels": {LABEL: "enabled", "team": "x"}}}
    assert not label_changed(other, _ns("a", "enabled"), LABEL)
    assert not label_changed({"metadata": "x"}, {}, LABEL)


def test_namespace_keys_are_the_namespaces_workloads() -> None:
    workloads = [
        (JOB, {"metadata": {"namespace": "ml", "name": "a"}}),
        (JOB, {"metadata": {"namespace": "other", "name": "b"}}),
        (JOB, {"metadata": {"namespace": "ml", "name": "c"}}),
        (JOB, {"metadata": "hostile"}),
        (JOB, {"metadata": {"namespace": "ml"}}),  # no name
    ]
    assert namespace_keys(_ns("ml", "enabled"), workloads) == [(JOB, "ml", "a"), (JOB, "ml", "c")]
    assert namespace_keys({"metadata": {}}, workloads) == []
    assert namespace_keys({}, workloads) == []
