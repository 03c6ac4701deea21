"""Quarantine of noisy definitions (issue 21 item 7), offline: the breach counter, its window, the
lifting by a new generation, built-in definitions never quarantined, the Karta's condition; every
part that evaluates asks it (platform metrics, gang reconciler, pod binding); and neither a
scrape of the platform metrics nor their count evaluates anything."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest

from karta import report
from karta.controller.parts import gangs as gangs_module
from karta.controller.parts import platform as platform_module
from karta.controller.parts.kartas.operator import KartaOperator, degraded_condition
from karta.controller.parts.pod_binding.admission import BindingFailure, PodBinder
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import OwnerCache, OwnerWalk
from karta.controller.runtime.quarantine import (
    BUDGET_EXCEEDED,
    DEGRADED,
    Quarantine,
    budget_error,
    definition_version,
)
from karta.definitions import DefinitionStore, StoredDefinition
from karta.errors import ExtractionError, JqBudgetError, JqTimeoutError
from karta.kube import KubeClient
from karta.kube.config import ClusterConfig
from karta.kube.tracker import Coverage
from karta.kube.workloads import CoveredType
from karta.model.gvk import GroupKind
from karta.model.types import KartaStatus

from .test_gangs_reconcile import JOBS, Rig, _applied, _job, _rig
from .test_platform import _fill, _part

SPIN = "until(false; .) | true"


def _catalog_job() -> StoredDefinition:
    return DefinitionStore.offline(user_directory=None).definition_for(JOBS.gvk)


def _cluster(
    generation: int = 1, *, uid: str = "karta-uid", conditions: tuple[dict[str, Any], ...] = ()
) -> StoredDefinition:
    """The catalog's Job definition as a cluster Karta (untrusted) at ``generation``."""
    base = _catalog_job().karta
    meta = base.metadata.model_copy(update={"name": "my-jobs", "uid": uid, "generation": generation})
    karta = base.model_copy(update={"metadata": meta, "status": KartaStatus(conditions=conditions)})
    return StoredDefinition(karta=karta, origin="cluster", source="cluster", trusted=False)


def _breach(budget: str = "time") -> JqBudgetError:
    if budget == "time":
        return JqTimeoutError("the evaluation ran past its deadline", expression=SPIN)
    return JqBudgetError(f"the {budget} budget", expression=SPIN, budget=budget)


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _quarantine(**kwargs: Any) -> tuple[Quarantine, Metrics, _Clock, list[tuple[str, bool]]]:
    metrics, clock = Metrics(), _Clock()
    q = Quarantine(metrics=metrics, clock=clock, **kwargs)
    heard: list[tuple[str, bool]] = []
    q.listen(lambda entry, held: heard.append((entry.definition, held)))
    return q, metrics, clock, heard


def _gauge(metrics: Metrics, name: str = "my-jobs") -> float | None:
    return metrics.registry.get_sample_value("karta_definition_quarantined", {"definition": name})


def _breaches(metrics: Metrics, name: str = "my-jobs", budget: str = "time") -> float | None:
    return metrics.registry.get_sample_value(
        "karta_definition_budget_breaches_total", {"definition": name, "budget": budget}
    )


# ----------------------------------------------------------------------------- the record


def test_k_breaches_within_the_window_quarantine_the_definition() -> None:
    q, metrics, clock, heard = _quarantine(breaches=3, window=60.0)
    d = _cluster()
    for _ in range(2):
        assert q.breached(d, _breach())
        clock.now += 10
    assert not q.holds(d) and heard == []
    assert q.breached(d, ExtractionError("cannot extract"), part="test") is False  # not a breach
    assert not q.holds(d)
    assert q.breached(d, _breach(), part="test")
    assert q.holds(d)
    assert heard == [("my-jobs", True)]
    assert _gauge(metrics) == 1 and _breaches(metrics) == 3
    (entry,) = q.quarantined()
    assert (entry.budget, entry.expression, entry.breaches, entry.generation) == ("time", SPIN, 3, 1)
    assert "time budget" in entry.message and SPIN in entry.message
    assert q.for_karta("my-jobs", uid="karta-uid", generation=1) == entry


def test_breaches_older_than_the_window_do_not_count() -> None:
    q, _, clock, _ = _quarantine(breaches=3, window=60.0)
    d = _cluster()
    for _ in range(10):  # one every 31 s: never three within 60 s
        q.breached(d, _breach())
        clock.now += 31
    assert not q.holds(d)
    q.breached(d, _breach())
    clock.now += 1
    q.breached(d, _breach())
    assert q.holds(d)


def test_a_new_generation_lifts_the_quarantine_and_starts_counting_again() -> None:
    q, metrics, _, heard = _quarantine(breaches=2, window=60.0)
    first = _cluster(1)
    q.breached(first, _breach("memory"))
    q.breached(first, _breach("memory"))
    assert q.holds(first)
    fixed = _cluster(2)
    assert not q.holds(fixed)  # the Karta changed: lifted
    assert heard == [("my-jobs", True), ("my-jobs", False)]
    assert _gauge(metrics) == 0 and q.quarantined() == []
    q.breached(fixed, _breach())
    assert not q.holds(fixed)  # one breach of the new generation
    # The operator's side lifts too, and a new object of the same name is another definition.
    q.breached(fixed, _breach())
    assert q.holds(fixed)
    assert q.for_karta("my-jobs", uid="other-uid", generation=2) is None  # another object: lifted
    assert not q.holds(_cluster(2, uid="other-uid"))


def test_a_deleted_karta_is_forgotten() -> None:
    q, metrics, _, heard = _quarantine(breaches=1)
    q.breached(_cluster(), _breach())
    q.forget("my-jobs")
    assert q.quarantined() == [] and _gauge(metrics) == 0 and heard[-1] == ("my-jobs", False)


def test_a_status_write_is_not_a_change() -> None:
    q, _, _, _ = _quarantine(breaches=1)
    q.breached(_cluster(3), _breach())
    written = _cluster(3, conditions=({"type": "Ready", "status": "True"},))  # same generation
    assert definition_version(written) == definition_version(_cluster(3))
    assert q.holds(written)


def test_built_in_definitions_are_never_quarantined_but_their_breaches_are_visible(
    caplog: pytest.LogCaptureFixture,
) -> None:
    q, metrics, _, heard = _quarantine(breaches=1)
    builtin = _catalog_job()
    assert builtin.trusted
    with caplog.at_level(logging.WARNING):
        assert q.breached(builtin, _breach())
    assert not q.holds(builtin) and heard == []
    assert _breaches(metrics, builtin.name) == 1
    assert "never quarantined" in caplog.text


def test_zero_breaches_turns_quarantine_off() -> None:
    q, metrics, _, _ = _quarantine(breaches=0)
    d = _cluster()
    for _ in range(20):
        q.breached(d, _breach())
    assert not q.holds(d) and _breaches(metrics) == 20


def test_the_karta_condition_of_this_generation_quarantines_in_every_replica() -> None:
    degraded = {
        "type": DEGRADED,
        "status": "True",
        "reason": BUDGET_EXCEEDED,
        "message": "spins",
        "observedGeneration": 4,
    }
    q, metrics, _, heard = _quarantine()
    assert q.holds(_cluster(4, conditions=(degraded,)))
    assert heard == [("my-jobs", True)] and _gauge(metrics) == 1
    assert not q.holds(_cluster(5, conditions=(degraded,)))  # written for an older generation
    lifted = {**degraded, "status": "False", "reason": "WithinBudget"}
    assert not _quarantine()[0].holds(_cluster(4, conditions=(lifted,)))


def test_the_breach_is_found_in_the_causes() -> None:
    breach = _breach()
    try:
        try:
            raise breach
        except JqBudgetError as exc:
            raise ExtractionError("cannot extract the replicas") from exc
    except ExtractionError as wrapped:
        assert budget_error(wrapped) is breach
    assert budget_error(ValueError("x")) is None


# ----------------------------------------------------------------------------- the operator


def test_the_degraded_condition() -> None:
    assert degraded_condition(None, None) is None  # never quarantined: no condition
    held = degraded_condition("breached the time budget", [])
    assert held is not None and (held.type, held.status, held.reason) == (DEGRADED, "True", BUDGET_EXCEEDED)
    was = [{"type": DEGRADED, "status": "True", "reason": BUDGET_EXCEEDED, "message": "m"}]
    lifted = degraded_condition(None, was)
    assert lifted is not None and (lifted.status, lifted.reason) == ("False", "WithinBudget")


def test_the_operator_hears_quarantines_and_reads_them() -> None:
    client = KubeClient(ClusterConfig(server="https://127.0.0.1:1"))  # never contacted here
    q = Quarantine(breaches=1)
    operator = KartaOperator(client, events=EventRecorder(client), metrics=Metrics(), quarantine=q)
    q.breached(_cluster(2), _breach())
    assert operator.queue.get(timeout=0) == "my-jobs"
    meta = {"name": "my-jobs", "uid": "karta-uid", "generation": 2}
    message = operator._quarantine_message("my-jobs", meta, 2, [])
    assert message is not None and SPIN in message
    # A new generation: lifted, unless the condition of that generation says otherwise.
    assert operator._quarantine_message("my-jobs", {**meta, "generation": 3}, 3, []) is None
    written = [
        {
            "type": DEGRADED,
            "status": "True",
            "reason": BUDGET_EXCEEDED,
            "message": "kept",
            "observedGeneration": 3,
        }
    ]
    assert operator._quarantine_message("my-jobs", {**meta, "generation": 3}, 3, written) == "kept"


# ----------------------------------------------------------------------------- the parts


def test_a_scrape_evaluates_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    part = _part("workload-api")
    calls: list[str] = []
    real = platform_module.evaluator_for
    monkeypatch.setattr(platform_module, "evaluator_for", lambda d: calls.append(d.name) or real(d))
    _fill(part, drain=False)
    registry = CollectorRegistry()
    registry.register(part)
    part.refresh()  # the part's count, as its thread makes it (the workers did not run)
    text = generate_latest(registry).decode()
    assert calls == []  # nothing evaluated by the count nor by the scrape
    assert "karta_workloads{" not in text  # no status computed yet: not counted by status
    gpus = 'karta_workload_gpus_requested{group="batch",kind="Job",namespace="ns",phase="pending"} 4.0'
    assert gpus in text  # what needs no expression is counted at once
    part.drain()  # the workers' turn
    assert calls
    calls.clear()
    text = generate_latest(registry).decode()
    assert 'karta_workloads{group="batch",kind="Job",namespace="ns",status="Running"} 1.0' in text
    assert calls == []


def test_the_platform_metrics_quarantine_a_noisy_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    part = _part("workload-api")
    part.quarantine = Quarantine(breaches=2)
    jobs = part._types[GroupKind("batch", "Job")]
    jobs.definition = _cluster(1)
    evaluated: list[str] = []

    def breaching(karta: Any, obj: Any, **_: Any) -> str:
        if obj["kind"] != "Job":
            return "Running"
        evaluated.append(obj["metadata"]["name"])
        raise _breach()

    monkeypatch.setattr(report, "primary_status", breaching)
    _fill(part)
    assert sorted(evaluated) == ["big", "fits"]  # two breaches: quarantined
    assert part.quarantine.holds(jobs.definition)
    more = copy.deepcopy(jobs.informers[None].get("ns/fits"))
    assert more is not None
    more["metadata"]["resourceVersion"] = "2"
    jobs.informers[None].informer.record("MODIFIED", more)
    part.drain()
    assert sorted(evaluated) == ["big", "fits"]  # not evaluated again while quarantined
    assert {c.status for c in part.counts() if c.kind == "Job"} == {"Undefined"}
    # A new generation of the Karta: lifted, evaluated again.
    monkeypatch.setattr(report, "primary_status", lambda *a, **k: "Running")
    new = _cluster(2)
    store = part.definitions.store
    pods = part._types[GroupKind("", "Pod")]
    covered = {
        gk: CoveredType(t.resource, new if gk == GroupKind("batch", "Job") else t.definition, ())
        for gk, t in part._types.items()
        if t is not pods
    }
    covered[GroupKind("", "Pod")] = CoveredType(pods.resource, pods.definition, ())
    part._coverage(Coverage(store=store, types=covered, resources=()))  # as the tracker hands it
    part.drain()
    assert not part.quarantine.holds(new)
    assert {c.status for c in part.counts() if c.kind == "Job"} == {"Running"}


def _quarantined_rig() -> tuple[Rig, StoredDefinition]:
    rig = _rig()
    definition = _cluster(1)
    store = rig.store.with_cluster([definition.karta])
    rig.coverage(store)
    (used,) = [w.definition for w in rig.gangs._types.values()]
    assert used is not None and used.origin == "cluster"
    return rig, used


def test_the_gang_reconciler_leaves_a_quarantined_definitions_objects_as_they_are() -> None:
    rig, used = _quarantined_rig()
    rig.job(_job())
    rig.reconcile()
    assert _applied(rig), "written while not quarantined"
    kept = copy.deepcopy(rig.api.objects)
    for _ in range(5):
        rig.gangs.quarantine.breached(used, _breach(), part="test")
    rig.job(_job(parallelism=6))
    assert rig.reconcile() is None
    assert rig.api.written() == [] and rig.api.objects == kept  # nothing updated nor deleted
    # The Karta changes (generation 2): reconciled again.
    rig.coverage(rig.store.with_cluster([_cluster(2).karta]))
    rig.reconcile()
    assert ("Workload", "train") in _applied(rig)


def test_the_gang_reconciler_tells_the_quarantine_of_its_breaches(monkeypatch: pytest.MonkeyPatch) -> None:
    rig, used = _quarantined_rig()
    calls: list[int] = []

    def spinning(*_: Any, **__: Any) -> Any:
        calls.append(1)
        raise _breach()

    monkeypatch.setattr(gangs_module, "compute_gang_plan", spinning)
    rig.job(_job())
    rig.reconcile()
    assert rig.api.events() == ["GangRenderFailed"]  # a breach fails the render, as before
    for _ in range(4):  # the default: five breaches within a minute
        assert not rig.gangs.quarantine.holds(used)
        rig.reconcile()
    assert rig.gangs.quarantine.holds(used)
    rig.reconcile()
    assert len(calls) == 5 and rig.api.calls == []  # not evaluated any more, nothing said or written


def test_pod_binding_does_not_evaluate_a_quarantined_definition() -> None:
    client = KubeClient(ClusterConfig(server="https://127.0.0.1:1"))
    q = Quarantine(breaches=1)
    definition = _cluster(1)
    binder = PodBinder(
        store=lambda: DefinitionStore.offline(user_directory=None),
        owners=OwnerCache(client),
        backend="workload-api",
        quarantine=q,
    )
    q.breached(definition, _breach())
    walk = OwnerWalk(links=(), top=_job())
    with pytest.raises(BindingFailure) as failure:
        binder.bind(walk, definition, [])
    assert failure.value.reason == "quarantined"


def test_options_and_defaults() -> None:
    from karta.controller.options import parse

    options, _ = parse([])
    assert (options.quarantine_budget_breaches, options.quarantine_window) == (5, 60.0)
    options, _ = parse(["--quarantine-budget-breaches=0", "--quarantine-window=30s"])
    assert (options.quarantine_budget_breaches, options.quarantine_window) == (0, 30.0)
    with pytest.raises(SystemExit):
        parse(["--quarantine-budget-breaches=-1"])
