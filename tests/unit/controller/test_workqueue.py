"""The work queue: dedup, one worker per key, delayed and rate-limited adds, shutdown."""

from __future__ import annotations

import os
import threading

from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.workqueue import WORKER_NICENESS, WorkQueue, run_workers


def test_a_key_added_many_times_is_processed_once() -> None:
    q: WorkQueue[str] = WorkQueue("t")
    for _ in range(5):
        q.add("a")
    q.add("b")
    assert len(q) == 2
    assert q.get(0) == "a" and q.get(0) == "b" and q.get(0) is None


def test_an_add_during_processing_comes_back_after_done_never_to_a_second_worker() -> None:
    q: WorkQueue[str] = WorkQueue("t")
    q.add("a")
    assert q.get(0) == "a"
    q.add("a")
    assert q.get(0) is None  # still processing: not handed out again
    q.done("a")
    assert q.get(0) == "a"


def test_rate_limited_adds_back_off_exponentially_until_forgotten() -> None:
    q: WorkQueue[str] = WorkQueue("t", base_delay=0.01, max_delay=0.04)
    for expected in (1, 2, 3, 4):
        q.add_rate_limited("a")
        assert q.failures("a") == expected
        assert q.get(5) == "a"
        q.done("a")
    q.forget("a")
    assert q.failures("a") == 0


def test_delayed_adds_wait() -> None:
    q: WorkQueue[str] = WorkQueue("t")
    q.add_after("a", 0.05)
    assert q.get(0) is None
    assert q.get(5) == "a"


def test_shutdown_wakes_waiting_workers() -> None:
    q: WorkQueue[str] = WorkQueue("t")
    got: list[str | None] = []
    t = threading.Thread(target=lambda: got.append(q.get()))
    t.start()
    q.shutdown()
    t.join(5)
    assert got == [None]


def test_workers_retry_failures_and_count_them() -> None:
    metrics = Metrics()
    q: WorkQueue[str] = WorkQueue("t", metrics, base_delay=0.001)
    stop = threading.Event()
    calls: list[str] = []
    concurrent: list[int] = []
    active = {"n": 0}
    lock = threading.Lock()

    def reconcile(key: str) -> float | None:
        with lock:
            active["n"] += 1
            concurrent.append(active["n"])
        try:
            calls.append(key)
            if calls.count(key) < 3:
                raise RuntimeError("not yet")
            if len(calls) >= 3:
                stop.set()
            return None
        finally:
            with lock:
                active["n"] -= 1

    q.add("a")
    runner = threading.Thread(
        target=run_workers,
        args=(q, reconcile),
        kwargs={"workers": 3, "stop": stop, "controller": "t", "metrics": metrics},
    )
    runner.start()
    runner.join(30)
    assert calls == ["a", "a", "a"] and max(concurrent) == 1
    text = metrics.exposition().decode()
    assert 'controller_runtime_reconcile_errors_total{controller="t"} 2.0' in text
    assert 'controller_runtime_reconcile_total{controller="t",result="success"} 1.0' in text
    assert 'workqueue_retries_total{name="t"} 2.0' in text


def test_workers_run_below_the_process_priority_and_other_threads_keep_theirs() -> None:
    """Reconciles (and the expressions they evaluate) yield the CPU to admission, probes and
    scrapes: each worker thread lowers its own priority, nobody else's."""
    queue: WorkQueue[str] = WorkQueue("nice")
    seen: list[int] = []
    stop = threading.Event()

    def reconcile(_key: str) -> None:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        stop.set()

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    queue.add("k")
    run_workers(queue, reconcile, workers=1, stop=stop, controller="nice")
    assert seen == [min(19, before + WORKER_NICENESS)]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
