"""The shared cache's wide mode (the controller with its web view): a request narrowed by namespace
or label selector is served from the one informer of its type, filtered in the process, as the
server would select; and the label selectors matched in the process."""

from __future__ import annotations

from typing import Any

import pytest

from karta.kube.cache import OWNER_INDEX, SharedCache
from karta.kube.resources import ResourceType
from karta.kube.selectors import label_matcher

PODGROUPS = ResourceType(
    group="scheduling.x-k8s.io", version="v1alpha1", kind="PodGroup", plural="podgroups", namespaced=True
)
OURS = "app.kubernetes.io/managed-by=karta"


def _obj(name: str, ns: str = "a", *, ours: bool = True, rv: str = "1", owner: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "resourceVersion": rv, "uid": f"{ns}-{name}"}
    if ours:
        meta["labels"] = {"app.kubernetes.io/managed-by": "karta"}
    if owner:
        meta["ownerReferences"] = [{"uid": owner, "kind": "Job", "name": owner}]
    return {"metadata": meta}


def _names(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objs)


@pytest.mark.parametrize(
    ("selector", "labels", "selected"),
    [
        ("", {}, True),
        ("a=b", {"a": "b"}, True),
        ("a==b", {"a": "c"}, False),
        ("a!=b", {}, True),
        ("a!=b", {"a": "b"}, False),
        ("a", {"a": ""}, True),
        ("!a", {"a": "x"}, False),
        ("a in (x, y),b", {"a": "y", "b": "1"}, True),
        ("a in (x,y)", {}, False),
        ("a notin (x,y)", {}, True),
        ("a notin (x,y)", {"a": "x"}, False),
        ("example.com/a=b,c=d", {"example.com/a": "b", "c": "d"}, True),
        ("example.com/a=b,c=d", {"example.com/a": "b"}, False),
    ],
)
def test_label_selectors_as_the_server_reads_them(
    selector: str, labels: dict[str, str], selected: bool
) -> None:
    assert label_matcher(selector)({"metadata": {"labels": labels}}) is selected


@pytest.mark.parametrize("selector", ["a in (x", "a)", "a=b=c", "a >= 1", "=b", "a in x"])
def test_a_selector_not_understood_is_refused(selector: str) -> None:
    with pytest.raises(ValueError):
        label_matcher(selector)


def test_hostile_labels_select_nothing() -> None:
    match = label_matcher(OURS)
    assert not match({"metadata": {"labels": ["junk"]}})
    assert not match({"metadata": "junk"})
    assert not match({})


def test_a_wide_cache_serves_narrow_requests_from_one_informer() -> None:
    cache = SharedCache(client=None, start=False, wide=True)  # type: ignore[arg-type]  # never runs
    seen: list[tuple[str, str]] = []
    ours = cache.watch(
        PODGROUPS,
        namespace="a",
        label_selector=OURS,
        indexes=(OWNER_INDEX,),
        handler=lambda kind, obj, _old: seen.append((kind, obj["metadata"]["name"])),
    )
    everything = cache.watch(PODGROUPS)
    assert len(cache.keys()) == 1 and ours.informer is everything.informer
    informer = everything.informer
    informer.replace(
        [_obj("mine", owner="j"), _obj("foreign", ours=False, owner="j"), _obj("elsewhere", "b", owner="j")]
    )
    assert _names(everything.objects()) == ["a/foreign", "a/mine", "b/elsewhere"]
    assert _names(ours.objects()) == ["a/mine"]
    assert _names(ours.by_index(OWNER_INDEX, "j")) == ["a/mine"]
    assert ours.get("a/foreign") is None and ours.get("b/elsewhere") is None and ours.get("a/mine")
    # starting and stopping to match are ADDED and DELETED, as a selected watch says
    informer.record("MODIFIED", _obj("foreign", rv="2"))
    informer.record("MODIFIED", _obj("mine", ours=False, rv="2"))
    informer.record("MODIFIED", _obj("foreign", rv="3"))
    informer.record("DELETED", _obj("elsewhere", "b"))
    informer.record("DELETED", _obj("foreign", rv="3"))
    assert seen == [
        ("ADDED", "mine"),
        ("ADDED", "foreign"),
        ("DELETED", "mine"),
        ("MODIFIED", "foreign"),
        ("DELETED", "foreign"),
    ]
    ours.release()
    assert cache.keys() == {next(iter(cache.keys())): 1}
    everything.release()
    assert cache.keys() == {}


def test_a_narrow_cache_keeps_one_informer_per_request() -> None:
    cache = SharedCache(client=None, start=False)  # type: ignore[arg-type]  # never runs
    cache.watch(PODGROUPS, namespace="a", label_selector=OURS)
    cache.watch(PODGROUPS)
    assert len(cache.keys()) == 2


def test_a_released_reference_stops_hearing_errors() -> None:
    cache = SharedCache(client=None, start=False)  # type: ignore[arg-type]  # never runs
    heard: list[str] = []
    first = cache.watch(PODGROUPS, on_error=lambda exc: heard.append("first"))
    cache.watch(PODGROUPS, on_error=lambda exc: heard.append("second"))
    first.release()
    (entry,) = cache._entries.values()
    cache._errors(entry, RuntimeError("refused"))  # type: ignore[arg-type]
    assert heard == ["second"]
