"""Prometheus metrics, named like controller-runtime's where one exists, plus karta's own.

One :class:`Metrics` per controller process (its own registry, so tests may run several in one
interpreter). Served on ``--metrics-bind-address`` at ``/metrics`` by the manager.

controller-runtime names (labels as there): ``workqueue_depth``, ``workqueue_adds_total``,
``workqueue_retries_total``, ``workqueue_queue_duration_seconds``,
``workqueue_work_duration_seconds`` (label ``name``: the queue), ``controller_runtime_reconcile_total``
(``controller``, ``result``: success|error|requeue), ``controller_runtime_reconcile_errors_total``,
``controller_runtime_reconcile_time_seconds`` (``controller``), ``leader_election_master_status``
(``name``). karta's own are prefixed ``karta_``: see the attributes, and the platform metrics
(``karta_workloads``, ``karta_workload_gpus_requested``, ``karta_gang_pods_pending``), a collector
of :mod:`karta.controller.parts.platform` registered here by ``build()``. The quarantine's
(``karta_definition_budget_breaches_total``, ``karta_definition_quarantined``) are set by
:mod:`karta.controller.runtime.quarantine`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from karta.controller.runtime.logs import logger

__all__ = ["Metrics", "merge_families"]

_LOG = logger("metrics")

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_QUEUE_BUCKETS = (1e-05, 1e-04, 0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)


class Metrics:
    """Every metric of the controller, registered in ``registry``."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        r = self.registry = registry or CollectorRegistry()
        # controller-runtime's work queue metrics (label: the queue's name).
        self.workqueue_depth = Gauge(
            "workqueue_depth", "Current depth of the work queue.", ["name"], registry=r
        )
        self.workqueue_adds = Counter(
            "workqueue_adds", "Adds handled by the work queue.", ["name"], registry=r
        )
        self.workqueue_retries = Counter(
            "workqueue_retries",
            "Retries (rate-limited re-adds) handled by the work queue.",
            ["name"],
            registry=r,
        )
        self.workqueue_queue_duration = Histogram(
            "workqueue_queue_duration_seconds",
            "How long an item stays in the work queue before being processed.",
            ["name"],
            buckets=_QUEUE_BUCKETS,
            registry=r,
        )
        self.workqueue_work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long processing an item from the work queue takes.",
            ["name"],
            buckets=_QUEUE_BUCKETS,
            registry=r,
        )
        # controller-runtime's reconcile metrics (label: the controller, e.g. karta or gang/<kind>).
        self.reconcile_total = Counter(
            "controller_runtime_reconcile",
            "Reconciliations per controller and result (success, error, requeue).",
            ["controller", "result"],
            registry=r,
        )
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors",
            "Reconciliation errors per controller.",
            ["controller"],
            registry=r,
        )
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of reconciliations per controller.",
            ["controller"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.leader = Gauge(
            "leader_election_master_status", "1 while this process holds the lease.", ["name"], registry=r
        )
        # karta's own.
        self.gang_objects = Counter(
            "karta_gang_objects",
            "Group objects written per backend and outcome (applied, unchanged, deleted, replaced, failed).",
            ["backend", "outcome"],
            registry=r,
        )
        self.gang_immutable_changes = Counter(
            "karta_gang_immutable_changes",
            "Changes to immutable fields of group objects that were reported, not forced.",
            ["backend"],
            registry=r,
        )
        self.gang_render_errors = Counter(
            "karta_gang_render_errors",
            "Workloads whose gang plan or rendering failed (nothing was written).",
            ["group", "kind"],
            registry=r,
        )
        self.kueue_actions = Counter(
            "karta_kueue_actions",
            "What the Kueue part did to workloads and Workloads (created, updated, deleted, started, "
            "stopped, released, finished, failed-to-start, finalizer-dropped).",
            ["action"],
            registry=r,
        )
        self.webhook_requests = Counter(
            "karta_webhook_requests",
            "Admission requests per webhook and outcome (allowed, patched, denied, error).",
            ["webhook", "outcome"],
            registry=r,
        )
        self.webhook_latency = Histogram(
            "karta_webhook_latency_seconds",
            "Time to answer one admission request.",
            ["webhook"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.unbound_pods = Counter(
            "karta_unbound_pods",
            "Pods admitted without a gang binding (an error, a timeout or the webhook unreachable).",
            ["reason"],
            registry=r,
        )
        self.child_restarts = Counter(
            "karta_child_process_restarts",
            "Restarts of a child process of the controller after it exited (e.g. admission).",
            ["name"],
            registry=r,
        )
        self.kartas = Gauge(
            "karta_definitions",
            "Karta objects per condition (Ready, Validated, CRDExists) and value.",
            ["condition", "status"],
            registry=r,
        )
        # Quarantine (docs/controller/quarantine.md, runtime/quarantine.py).
        self.definition_budget_breaches = Counter(
            "karta_definition_budget_breaches",
            "Evaluations of a definition's expressions that breached their per-object budget, per "
            "definition and budget (time, memory, output, steps).",
            ["definition", "budget"],
            registry=r,
        )
        self.definition_quarantined = Gauge(
            "karta_definition_quarantined",
            "1 while the definition is quarantined (its evaluations breached their budget too often: "
            "no part evaluates it until its Karta changes), 0 once lifted.",
            ["definition"],
            registry=r,
        )

        self._sources: list[Callable[[], str | None]] = []

    def add_source(self, source: Callable[[], str | None]) -> None:
        """Another process's exposition (e.g. the admission child's), read at every scrape and
        merged into this one (:func:`merge_families`); None: nothing to add this time. A source
        must answer quickly: the scrape waits for it."""
        self._sources.append(source)

    def exposition(self) -> bytes:
        """The text format Prometheus scrapes."""
        others = []
        for source in self._sources:
            try:
                text = source()
            except Exception:  # a broken source never costs the scrape its own metrics
                _LOG.exception("metrics source failed")
                continue
            if text:
                others.append(text)
        if not others:
            return generate_latest(self.registry)
        families = list(self.registry.collect())
        for text in others:
            try:
                families = merge_families(families, text_string_to_metric_families(text))
            except ValueError as exc:
                _LOG.warning("unreadable metrics from another process", extra={"error": str(exc)})
        return generate_latest(_Families(list(families)))


class _Families:
    """A fixed list of families, in :func:`generate_latest`'s collector shape."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)


def merge_families(ours: Iterable[Metric], theirs: Iterable[Metric]) -> list[Metric]:
    """One exposition from two processes' families: families of the same name become one (ours
    first, in order), samples with the same name and labels are summed. ``theirs`` is parsed text
    (format 0.0.4), in which a counter's or histogram's ``_created`` samples come as a gauge family
    of their own: those are dropped (they are optional), so that no sample name is exposed by two
    families. A family of the same name but
    another type is not merged (ours is kept, the conflict logged)."""
    theirs = list(theirs)  # parsed first: unreadable text raises before anything is merged
    merged: dict[str, Metric] = {}
    for family in ours:
        merged[family.name] = _copy(family, family.samples)
    with_created = {f.name + "_created" for f in theirs if f.type in ("counter", "histogram", "summary")}
    for family in theirs:
        if family.type == "gauge" and family.name in with_created:
            continue
        mine = merged.get(family.name)
        if mine is None:
            merged[family.name] = _copy(family, family.samples)
            continue
        if mine.type != family.type:
            _LOG.warning(
                "metric family of another type in the other process; not merged",
                extra={"metric": family.name, "ours": mine.type, "theirs": family.type},
            )
            continue
        index = {(s.name, _labels(s)): i for i, s in enumerate(mine.samples)}
        for sample in family.samples:
            key = (sample.name, _labels(sample))
            at = index.get(key)
            if at is None:
                index[key] = len(mine.samples)
                mine.samples.append(sample)
                continue
            old = mine.samples[at]
            value = (
                min(old.value, sample.value) if sample.name.endswith("_created") else old.value + sample.value
            )
            mine.samples[at] = old._replace(value=value)
    return list(merged.values())


def _copy(family: Metric, samples: Iterable[Sample]) -> Metric:
    copy = Metric(family.name, family.documentation, family.type, family.unit)
    copy.samples = list(samples)
    return copy


def _labels(sample: Sample) -> frozenset[tuple[str, str]]:
    return frozenset(sample.labels.items())
