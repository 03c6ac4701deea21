"""The runtime's event-to-key mapper: owners of an object that a part reconciles."""

from __future__ import annotations

from typing import Any

from karta.controller.runtime.mappers import owner_keys
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
