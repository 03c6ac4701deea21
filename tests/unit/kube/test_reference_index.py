"""The controller's references (extension E3) from the shared cache
(:class:`karta.kube.reference_index.ReferenceIndex`): bindings from the cache with no API
read, None until a referenced kind's cache synced, a missing object a note and null, a forbidden
kind reported (never missing), and the index: a change of a referenced object re-queues exactly
the workloads that read it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from karta.errors import ApiError, ReferenceLimitError, UnknownResourceTypeError
from karta.jq import Evaluator
from karta.kube.cache import SharedCache
from karta.kube.client import KubeClient
from karta.kube.reference_index import ReferenceIndex
from karta.kube.resources import ResourceType
from karta.model import Karta, load_karta
from karta.references import ReferenceLimits

HERE = Path(__file__).resolve().parents[1] / "cli" / "references"
TEMPLATES = ResourceType("example.com", "v1", "RunTemplate", "runtemplates")
CONFIGMAPS = ResourceType("", "v1", "ConfigMap", "configmaps")


class _Discovery:
    def for_gvk(self, group: str, version: str, kind: str) -> ResourceType:
        for r in (TEMPLATES, CONFIGMAPS):
            if r.gvk == (group, version, kind):
                return r
        raise UnknownResourceTypeError(f"the server doesn't serve kind {kind}")


class _Client:
    """Discovery only: a read through the API would fail the test."""

    discovery = _Discovery()


def _karta() -> Karta:
    result = load_karta(yaml.safe_load((HERE / "definition.yaml").read_text()), strict=True)
    assert result.karta is not None
    return result.karta


KARTA = _karta()
WORKLOAD = yaml.safe_load((HERE / "workload.yaml").read_text())
REFS = list(yaml.safe_load_all((HERE / "refs.yaml").read_text()))


def _run(name: str, template: str) -> dict[str, Any]:
    obj = copy.deepcopy(WORKLOAD)
    obj["metadata"]["name"] = name
    obj["spec"]["templateRef"]["name"] = template
    return obj


def _setup() -> tuple[SharedCache, ReferenceIndex, list[object]]:
    cache = SharedCache(client=cast(KubeClient, _Client()), start=False)
    changed: list[object] = []
    index = ReferenceIndex(cast(KubeClient, _Client()), cache, on_change=changed.append)
    return cache, index, changed


def _informer(cache: SharedCache, plural: str) -> Any:
    return next(i for k, i in cache.informers().items() if k.plural == plural)


def _fill(cache: SharedCache) -> None:
    _informer(cache, "runtemplates").replace([copy.deepcopy(o) for o in REFS if o["kind"] == "RunTemplate"])
    _informer(cache, "configmaps").replace([copy.deepcopy(o) for o in REFS if o["kind"] == "ConfigMap"])


def test_bound_from_the_cache_once_synced() -> None:
    cache, index, _ = _setup()
    assert index.resolve("run1", KARTA, WORKLOAD, Evaluator()) is None  # nothing synced yet
    _fill(cache)
    resolution = index.resolve("run1", KARTA, WORKLOAD, Evaluator())
    assert resolution is not None and not resolution.problems
    assert resolution.bindings["runtime"]["spec"]["nodes"] == 3
    assert [c["metadata"]["name"] for c in resolution.bindings["configs"]] == ["c1"]  # namespace team only
    evaluator = resolution.evaluator(Evaluator())
    assert evaluator.evaluate("($runtime.spec.nodes // 1) + (.spec.extraNodes // 0)", WORKLOAD) == [4]


def test_a_change_requeues_exactly_the_readers() -> None:
    cache, index, changed = _setup()
    index.resolve("a", KARTA, _run("a", "big"), Evaluator())
    _fill(cache)
    index.resolve("a", KARTA, _run("a", "big"), Evaluator())
    index.resolve("b", KARTA, _run("b", "small"), Evaluator())
    changed.clear()
    edited = copy.deepcopy(next(o for o in REFS if o["kind"] == "RunTemplate"))
    edited["spec"]["nodes"] = 5
    edited["metadata"]["resourceVersion"] = "9"
    _informer(cache, "runtemplates").record("MODIFIED", edited)
    assert changed == ["a"]
    changed.clear()
    _informer(cache, "runtemplates").record(
        "ADDED",
        {
            "apiVersion": "example.com/v1",
            "kind": "RunTemplate",
            "metadata": {"name": "small", "namespace": "team"},
        },
    )
    assert changed == ["b"]
    changed.clear()
    index.forget("a")
    _informer(cache, "runtemplates").record("DELETED", edited)
    assert changed == []  # "a" reads nothing any more


def test_missing_is_a_note_and_null() -> None:
    cache, index, _ = _setup()
    index.resolve("x", KARTA, _run("x", "gone"), Evaluator())
    _fill(cache)
    resolution = index.resolve("x", KARTA, _run("x", "gone"), Evaluator())
    assert resolution is not None
    assert resolution.bindings["runtime"] is None
    assert [p.kind for p in resolution.problems] == ["note"]
    assert "RunTemplate/gone not found in namespace team" in resolution.problems[0].message
    assert not resolution.errors


def test_a_forbidden_kind_is_reported_never_missing() -> None:
    cache, index, changed = _setup()
    index.resolve("x", KARTA, WORKLOAD, Evaluator())
    _informer(cache, "configmaps").replace([])
    informer = _informer(cache, "runtemplates")
    informer.on_error(ApiError('runtemplates.example.com is forbidden: User "karta" cannot list', status=403))
    assert changed == ["x"]  # its readers are told at once
    resolution = index.resolve("x", KARTA, WORKLOAD, Evaluator())
    assert resolution is not None
    assert [(p.reference, p.kind) for p in resolution.errors] == [("runtime", "forbidden")]
    assert (
        "reference 'runtime' (RunTemplate example.com/v1): reading is forbidden"
        in resolution.errors[0].message
    )
    # RBAC fixed: the informer lists (no error for three retries); the reference is read again.
    for kind in index._kinds.values():
        kind.failed_at -= 4 * cache.retry_s
    informer.replace([copy.deepcopy(o) for o in REFS if o["kind"] == "RunTemplate"])
    healed = index.resolve("x", KARTA, WORKLOAD, Evaluator())
    assert healed is not None and not healed.errors
    assert healed.bindings["runtime"]["metadata"]["name"] == "big"


def test_a_kind_not_served_is_an_error() -> None:
    doc = yaml.safe_load((HERE / "definition.yaml").read_text())
    doc["spec"]["structureDefinition"]["references"][0]["gvk"]["kind"] = "Nope"
    loaded = load_karta(doc, strict=True)
    assert loaded.karta is not None
    cache, index, _ = _setup()
    index.resolve("x", loaded.karta, WORKLOAD, Evaluator())
    _informer(cache, "configmaps").replace([])
    resolution = index.resolve("x", loaded.karta, WORKLOAD, Evaluator())
    assert resolution is not None
    assert [p.kind for p in resolution.errors] == ["error"]
    assert "doesn't serve kind Nope" in resolution.errors[0].message


def test_one_cache_reference_per_kind() -> None:
    cache, index, _ = _setup()
    for name in ("a", "b", "c"):
        index.resolve(name, KARTA, _run(name, "big"), Evaluator())
    held = cache.keys()
    assert sorted(k.plural for k in held) == ["configmaps", "runtemplates"]
    assert set(held.values()) == {1}
    index.close()
    assert cache.keys() == {}


def _binder_setup(tmp_path: Path, references: ReferenceIndex | None) -> tuple[Any, Any]:
    from karta.controller.parts.pod_binding.admission import PodBinder
    from karta.controller.runtime.owners import OwnerCache
    from karta.definitions import DefinitionStore
    from karta.model.gvk import GVK

    tmp_path.mkdir(parents=True)
    (tmp_path / "trainrun.yaml").write_text((HERE / "definition.yaml").read_text())
    store = DefinitionStore.load(include_catalog=False, user_directory=tmp_path)
    stored = store.definition_for(GVK("example.com", "v1", "TrainRun"))
    binder = PodBinder(
        store=lambda: store,
        owners=OwnerCache(cast(KubeClient, _Client())),
        backend="coscheduling",
        references=references,
    )
    return binder, stored


def test_pod_binding_reads_references_from_the_cache_only(tmp_path: Path) -> None:
    """The admission path: no API read (the client has none); a cache not synced, or no cache,
    is a failure with reason ``references`` (unknown data); once synced the gang is the
    runtime's (3 nodes + 1 extra)."""
    import pytest

    from karta.controller.parts.pod_binding.admission import BindingFailure
    from karta.controller.runtime.owners import OwnerWalk

    cache, index, _ = _setup()
    walk = OwnerWalk((), copy.deepcopy(WORKLOAD) | {"metadata": {**WORKLOAD["metadata"], "uid": "u1"}})
    binder, stored = _binder_setup(tmp_path / "a", index)
    with pytest.raises(BindingFailure) as failed:
        binder.bind(walk, stored, [])
    assert failed.value.reason == "references"
    assert "has not synced yet" in failed.value.message
    _fill(cache)
    binding = binder.bind(walk, stored, [])
    [group] = binding.objects
    assert group["spec"]["minMember"] == 4
    without, stored = _binder_setup(tmp_path / "b", None)
    with pytest.raises(BindingFailure, match="no cache of referenced objects"):
        without.bind(walk, stored, [])


def _every_config() -> Karta:
    """The test definition with its ConfigMap list made selector-less (``list: {}``: every
    ConfigMap of the workload's namespace, as the KServe definition lists runtimes)."""
    doc = yaml.safe_load((HERE / "definition.yaml").read_text())
    for ref in doc["spec"]["structureDefinition"]["references"]:
        if "list" in ref:
            ref["list"] = {}
    result = load_karta(doc, strict=True)
    assert result.karta is not None
    return result.karta


def test_a_list_without_a_selector_is_every_object_of_the_namespace_bounded() -> None:
    cache, index, changed = _setup()
    karta = _every_config()
    index.resolve("run1", karta, WORKLOAD, Evaluator())
    many = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"m{i}", "namespace": "team"}}
        for i in range(5)
    ]
    _informer(cache, "runtemplates").replace([copy.deepcopy(o) for o in REFS if o["kind"] == "RunTemplate"])
    _informer(cache, "configmaps").replace(
        [*(copy.deepcopy(o) for o in REFS if o["kind"] == "ConfigMap"), *many]
    )
    resolution = index.resolve("run1", karta, WORKLOAD, Evaluator())
    assert resolution is not None and not resolution.problems
    names = sorted(c["metadata"]["name"] for c in resolution.bindings["configs"])
    assert "c1" in names and {f"m{i}" for i in range(5)} <= set(names)
    assert all(c["metadata"]["namespace"] == "team" for c in resolution.bindings["configs"])
    # any ConfigMap of the namespace re-queues the reader (it is one of "every object")
    changed.clear()
    _informer(cache, "configmaps").record(
        "ADDED", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new", "namespace": "team"}}
    )
    assert changed == ["run1"]
    # over the limit: reported, having taken at most one object past it from the cache
    small = ReferenceIndex(cast(KubeClient, _Client()), cache, limits=ReferenceLimits(list_objects=2))
    with pytest.raises(ReferenceLimitError, match="matches 3 objects; at most 2 are allowed"):
        small.resolve(None, karta, WORKLOAD, Evaluator())


# --- warm-up: the referenced kinds watched from when the definition is loaded --------------------


def test_warm_takes_every_referenced_kind_before_any_workload() -> None:
    import time

    cache, index, _ = _setup()
    assert cache.keys() == {}
    assert index.warm(KARTA) == [("example.com", "v1", "RunTemplate"), ("", "v1", "ConfigMap")]
    held = cache.keys()
    assert sorted(k.plural for k in held) == ["configmaps", "runtemplates"]
    started = time.monotonic()
    assert index.wait_synced(KARTA, started + 0.2) == ["RunTemplate example.com/v1", "ConfigMap v1"]
    assert 0.15 <= time.monotonic() - started < 2  # bounded by the deadline
    _fill(cache)
    assert index.wait_synced(KARTA, time.monotonic()) == []
    assert index.resolve("run1", KARTA, WORKLOAD, Evaluator()) is not None  # no first-use wait
    index.warm(KARTA)
    assert set(cache.keys().values()) == {1}  # warming again takes nothing more


def test_wait_synced_never_waits_on_a_failing_kind() -> None:
    import time

    cache, index, _ = _setup()
    index.warm(KARTA)
    _informer(cache, "configmaps").replace([])
    _informer(cache, "runtemplates").on_error(ApiError("runtemplates is forbidden", status=403))
    started = time.monotonic()
    assert index.wait_synced(KARTA, started + 5) == []  # forbidden: reported by resolve, not waited on
    assert time.monotonic() - started < 1
    resolution = index.resolve("x", KARTA, WORKLOAD, Evaluator())
    assert resolution is not None and [p.kind for p in resolution.errors] == ["forbidden"]


def test_admission_waits_for_the_sync_within_its_budget(tmp_path: Path) -> None:
    """A pod whose referenced kinds are still listing waits for them (bounded by the answer's
    deadline less the reserve) and gets the runtime's gang; a kind that does not sync in time is
    a failure naming it and the wait, never a wait past the budget."""
    import threading
    import time

    import pytest

    from karta.controller.parts.pod_binding.admission import (
        REFERENCES_RESERVE_S,
        BindingFailure,
        ReferenceWarmup,
    )
    from karta.controller.runtime.owners import OwnerWalk

    cache, index, _ = _setup()
    walk = OwnerWalk((), copy.deepcopy(WORKLOAD) | {"metadata": {**WORKLOAD["metadata"], "uid": "u1"}})
    binder, stored = _binder_setup(tmp_path / "a", index)
    warmup = ReferenceWarmup(binder)
    warmup.warm_once()  # the definition loaded: its kinds watched before any pod
    assert warmup.warmed == {("example.com", "v1", "RunTemplate"), ("", "v1", "ConfigMap")}
    held = cache.keys()
    assert sorted(k.plural for k in held) == ["configmaps", "runtemplates"]
    started = time.monotonic()
    with pytest.raises(BindingFailure) as failed:
        binder.bind(walk, stored, [], deadline=started + REFERENCES_RESERVE_S + 0.3)
    waited = time.monotonic() - started
    assert 0.25 <= waited < REFERENCES_RESERVE_S  # waited, and left the reserve
    assert failed.value.reason == "references"
    assert "RunTemplate example.com/v1" in failed.value.message and "waited" in failed.value.message
    timer = threading.Timer(0.3, _fill, args=(cache,))
    timer.start()
    try:
        binding = binder.bind(walk, stored, [], deadline=time.monotonic() + 4.0)
    finally:
        timer.join()
    [group] = binding.objects
    assert group["spec"]["minMember"] == 4


def test_the_warmup_part_stops_at_once_and_warms_again_when_poked(tmp_path: Path) -> None:
    """A part of the controller: ``run`` ends as soon as ``stop`` is set (a shutdown waits for
    it), and a poke (new definitions) warms again at once, not at the next retry."""
    import threading
    import time

    from karta.controller.parts.pod_binding.admission import ReferenceWarmup

    _cache, index, _ = _setup()
    binder, _stored = _binder_setup(tmp_path / "a", index)
    warmup = ReferenceWarmup(binder, retry_s=60.0)
    rounds: list[float] = []
    warm_once = warmup.warm_once
    warmup.warm_once = lambda: (rounds.append(time.monotonic()), warm_once())[-1]  # type: ignore[method-assign]
    stop = threading.Event()
    thread = threading.Thread(target=warmup.run, args=(stop,))
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while not rounds and time.monotonic() < deadline:
            time.sleep(0.01)
        warmup.poke()
        while len(rounds) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(rounds) == 2  # poked: again at once, not after 60 s
    finally:
        stopped = time.monotonic()
        stop.set()
        thread.join(5)
    assert not thread.is_alive() and time.monotonic() - stopped < 1
    assert ("example.com", "v1", "RunTemplate") in warmup.warmed
