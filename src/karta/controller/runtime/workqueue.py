"""A rate-limited work queue and the workers that drain it (client-go's workqueue semantics).

:class:`WorkQueue` holds keys, not objects: a key added many times before a worker takes it is
processed once (``dirty``); a key is never processed by two workers at once (``processing``: an
add during processing is kept and handed out again after :meth:`~WorkQueue.done`). Delayed adds
(:meth:`~WorkQueue.add_after`) wait in a heap; :meth:`~WorkQueue.add_rate_limited` delays by the
key's own exponential back-off (``base_delay * 2**failures``, capped at ``max_delay``) until
:meth:`~WorkQueue.forget`. :meth:`~WorkQueue.shutdown` wakes every waiting worker; with
``drain=True`` the workers finish what is queued first.

:func:`run_workers` runs ``reconcile(key)`` on ``workers`` threads until the stop event: success
forgets the key's back-off (a returned number of seconds re-adds it after that long), an
exception re-adds it rate-limited and is counted (``controller_runtime_reconcile_errors_total``)
and logged with the key. The queue metrics are controller-runtime's names. On Linux each worker
thread lowers its own CPU priority by :data:`WORKER_NICENESS` (a thread's nice value is its own
there): reconciles and the expressions they evaluate, a hostile definition's included, take the
CPU after the admission process, the probes and the scrapes, which stay at the process's priority.
Measured with ``bench/controller.py --admission`` (docs/controller/pod-binding.md).
"""

from __future__ import annotations

import heapq
import itertools
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from karta.controller.runtime.logs import logger
from karta.controller.runtime.metrics import Metrics

__all__ = ["WORKER_NICENESS", "WorkQueue", "lower_thread_priority", "run_workers", "start_workers"]

WORKER_NICENESS = 10

K = TypeVar("K", bound=Hashable)
_LOG = logger("workqueue")


class WorkQueue(Generic[K]):
    def __init__(
        self,
        name: str,
        metrics: Metrics | None = None,
        *,
        base_delay: float = 0.005,
        max_delay: float = 300.0,
    ) -> None:
        self.name = name
        self.metrics = metrics
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._cond = threading.Condition()
        self._queue: list[K] = []
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._added_at: dict[K, float] = {}
        self._delayed: list[tuple[float, int, K]] = []
        self._seq = itertools.count()
        self._failures: dict[K, int] = {}
        self._shutting_down = False
        self._drain = False

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    def _depth(self) -> None:
        if self.metrics is not None:
            self.metrics.workqueue_depth.labels(name=self.name).set(len(self._queue))

    def add(self, key: K) -> None:
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: K) -> None:
        if self._shutting_down:
            return
        if self.metrics is not None:
            self.metrics.workqueue_adds.labels(name=self.name).inc()
        if key in self._dirty:
            return
        self._dirty.add(key)
        self._added_at.setdefault(key, time.monotonic())
        if key in self._processing:
            return
        self._queue.append(key)
        self._depth()
        self._cond.notify()

    def add_after(self, key: K, delay: float) -> None:
        if delay <= 0:
            self.add(key)
            return
        with self._cond:
            if self._shutting_down:
                return
            heapq.heappush(self._delayed, (time.monotonic() + delay, next(self._seq), key))
            self._cond.notify()

    def add_rate_limited(self, key: K) -> None:
        with self._cond:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
        if self.metrics is not None:
            self.metrics.workqueue_retries.labels(name=self.name).inc()
        self.add_after(key, min(self.base_delay * (2**failures), self.max_delay))

    def forget(self, key: K) -> None:
        with self._cond:
            self._failures.pop(key, None)

    def failures(self, key: K) -> int:
        with self._cond:
            return self._failures.get(key, 0)

    def _promote_locked(self) -> float | None:
        """Move due delayed keys into the queue; seconds until the next one (None: none)."""
        now = time.monotonic()
        while self._delayed and self._delayed[0][0] <= now:
            _, _, key = heapq.heappop(self._delayed)
            self._add_locked(key)
        return self._delayed[0][0] - now if self._delayed else None

    def get(self, timeout: float | None = None) -> K | None:
        """The next key (now being processed), or None on shutdown or after ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                wait = self._promote_locked()
                if self._queue:
                    key = self._queue.pop(0)
                    self._processing.add(key)
                    self._dirty.discard(key)
                    added = self._added_at.pop(key, None)
                    if self.metrics is not None and added is not None:
                        self.metrics.workqueue_queue_duration.labels(name=self.name).observe(
                            time.monotonic() - added
                        )
                    self._depth()
                    return key
                if self._shutting_down and (not self._drain or not self._processing):
                    return None
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    wait = left if wait is None else min(wait, left)
                self._cond.wait(wait)

    def done(self, key: K) -> None:
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty:
                self._queue.append(key)
                self._depth()
                self._cond.notify()
            elif self._shutting_down:
                self._cond.notify_all()

    def shutdown(self, *, drain: bool = False) -> None:
        with self._cond:
            self._shutting_down = True
            self._drain = drain
            self._delayed.clear()
            if not drain:
                self._queue.clear()
                self._dirty.clear()
            self._cond.notify_all()

    @property
    def shutting_down(self) -> bool:
        with self._cond:
            return self._shutting_down


def start_workers(
    queue: WorkQueue[K],
    reconcile: Callable[[K], float | None],
    *,
    workers: int,
    stop: threading.Event,
    controller: str,
    metrics: Metrics | None = None,
) -> threading.Thread:
    """:func:`run_workers` on a daemon thread of its own, started (join it after ``stop``)."""
    thread = threading.Thread(
        target=run_workers,
        args=(queue, reconcile),
        kwargs={"workers": workers, "stop": stop, "controller": controller, "metrics": metrics},
        name=f"{controller}-workers",
        daemon=True,
    )
    thread.start()
    return thread


def run_workers(
    queue: WorkQueue[K],
    reconcile: Callable[[K], float | None],
    *,
    workers: int,
    stop: threading.Event,
    controller: str,
    metrics: Metrics | None = None,
    drain_timeout: float = 30.0,
    niceness: int = WORKER_NICENESS,
) -> None:
    """Drain ``queue`` with ``reconcile`` on ``workers`` threads until ``stop``; then shut the
    queue down (finishing the reconciles in flight, up to ``drain_timeout`` seconds). Each worker
    runs ``niceness`` below the process's CPU priority (:func:`lower_thread_priority`)."""

    def work() -> None:
        lower_thread_priority(niceness)
        while True:
            key = queue.get()
            if key is None:
                return
            started = time.monotonic()
            try:
                requeue = reconcile(key)
            except Exception as exc:
                if metrics is not None:
                    metrics.reconcile_errors.labels(controller=controller).inc()
                    metrics.reconcile_total.labels(controller=controller, result="error").inc()
                _LOG.warning(
                    "reconcile failed; retrying",
                    extra={"controller": controller, "key": str(key), "error": str(exc)},
                    exc_info=not _expected(exc),
                )
                queue.done(key)
                queue.add_rate_limited(key)
                continue
            finally:
                if metrics is not None:
                    elapsed = time.monotonic() - started
                    metrics.reconcile_time.labels(controller=controller).observe(elapsed)
                    metrics.workqueue_work_duration.labels(name=queue.name).observe(elapsed)
            queue.forget(key)
            queue.done(key)
            if metrics is not None:
                result = "requeue" if requeue is not None else "success"
                metrics.reconcile_total.labels(controller=controller, result=result).inc()
            if requeue is not None:
                queue.add_after(key, requeue)

    threads = [
        threading.Thread(target=work, name=f"{controller}-worker-{i}", daemon=True) for i in range(workers)
    ]
    for thread in threads:
        thread.start()
    stop.wait()
    queue.shutdown()
    deadline = time.monotonic() + drain_timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def _expected(exc: Exception) -> bool:
    from karta.errors import KartaError

    return isinstance(exc, KartaError)


def lower_thread_priority(niceness: int) -> None:
    """Raise the calling thread's nice value by ``niceness`` (at most 19), on Linux, where a
    thread's priority is its own; elsewhere, or where the system refuses, nothing happens (lowering
    a priority needs no privilege, but a sandbox may forbid it)."""
    if niceness <= 0 or sys.platform != "linux":
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + niceness))
    except OSError:
        _LOG.debug("cannot lower a worker thread's priority", exc_info=True)
