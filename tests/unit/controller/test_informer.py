"""The informer's cache and its indexes, fed list results and watch events directly."""

from __future__ import annotations

from typing import Any

from karta.kube.informer import Informer, owner_uids
from karta.kube.resources import ResourceType

PODGROUPS = ResourceType(
    group="scheduling.x-k8s.io", version="v1alpha1", kind="PodGroup", plural="podgroups", namespaced=True
)


def _obj(name: str, *owners: str, rv: str = "1") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": rv,
            "ownerReferences": [{"uid": u, "kind": "Job", "name": u} for u in owners],
        }
    }


def _informer() -> tuple[Informer, list[tuple[str, str]]]:
    informer = Informer(client=None, rtype=PODGROUPS)  # type: ignore[arg-type]  # never runs
    seen: list[tuple[str, str]] = []
    informer.add_handler(lambda kind, obj, _old: seen.append((kind, obj["metadata"]["name"])))
    return informer, seen


def _names(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def test_index_follows_lists_and_events() -> None:
    informer, seen = _informer()
    informer.add_index("owner", owner_uids)
    informer.replace([_obj("a", "u1"), _obj("b", "u1", "u2")])
    assert informer.synced.is_set()
    assert _names(informer.by_index("owner", "u1")) == ["a", "b"]
    assert _names(informer.by_index("owner", "u2")) == ["b"]

    informer.record("MODIFIED", _obj("a", "u2", rv="2"))  # owner changed
    assert _names(informer.by_index("owner", "u1")) == ["b"]
    assert _names(informer.by_index("owner", "u2")) == ["a", "b"]

    informer.record("DELETED", _obj("b", "u1", "u2", rv="3"))
    assert informer.by_index("owner", "u1") == []
    assert _names(informer.by_index("owner", "u2")) == ["a"]
    assert informer.get("ns/b") is None

    informer.record("ADDED", _obj("c", "u3"))
    assert _names(informer.by_index("owner", "u3")) == ["c"]
    assert seen == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b"), ("ADDED", "c")]


def test_relist_rebuilds_the_index_and_reports_differences() -> None:
    informer, seen = _informer()
    informer.add_index("owner", owner_uids)
    informer.replace([_obj("a", "u1"), _obj("b", "u1")])
    seen.clear()
    # After a 410: "a" changed owner, "b" is gone, "c" appeared, all while the watch was down.
    informer.replace([_obj("a", "u2", rv="5"), _obj("c", "u1")])
    assert _names(informer.by_index("owner", "u1")) == ["c"]
    assert _names(informer.by_index("owner", "u2")) == ["a"]
    assert sorted(seen) == [("ADDED", "c"), ("DELETED", "b"), ("MODIFIED", "a")]


def test_index_added_after_objects_covers_them() -> None:
    informer, _ = _informer()
    informer.replace([_obj("a", "u1")])
    informer.add_index("owner", owner_uids)
    assert _names(informer.by_index("owner", "u1")) == ["a"]
    assert informer.by_index("owner", "nobody") == []


def test_owner_uids_ignores_malformed_references() -> None:
    obj = {"metadata": {"ownerReferences": [{"uid": "u"}, {"kind": "Job"}, "junk", {"uid": ""}]}}
    assert owner_uids(obj) == ["u"]
    assert owner_uids({}) == []
