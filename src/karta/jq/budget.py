"""Budgets of untrusted evaluation, and the meter that enforces them in-process.

Owns :class:`Budget`, the public record of what the expressions of one object may spend (with the
defaults), :class:`Meter`, one object's spending (steps, memory, the deadline, the output cap),
the per-thread *current meter* that the metered fast path and the value operations of
:mod:`karta.jq.operations` charge (:func:`current`, :func:`install`), the capped walk that sizes
values whose tree is larger than their Python size because subtrees are shared
(:meth:`Meter.walk`), and :class:`Exceeded`, the internal exception a breach raises. It is not a
:class:`~karta.jq._values.JqFail`, so ``try``, ``?`` and ``//`` cannot catch it; the evaluator turns
it into :class:`~karta.errors.JqBudgetError` naming the expression and the budget.

How the budgets are spent (the evaluator and the sandbox apply them; see docs/architecture/jq-engines.md):

* ``time_ms``: wall time of all expressions of one object together (``Evaluator.session``).
  The metered fast path checks the deadline whenever a tank of :data:`TANK` steps is used up;
  the sandbox worker gets what is left, and is killed when it passes.
* ``steps``: the metered fast path charges one step per node evaluation and one per output
  (:mod:`karta.jq.fastpath`), and walks, comparisons and copies charge the elements they visit.
* ``memory_bytes``: the metered fast path charges the estimated size of every string, array and
  object it builds (strings one byte per character, arrays :data:`LIST_SLOT` bytes per element,
  objects :data:`DICT_SLOT` per entry); the sandbox worker may grow its address space by this much
  per request (``RLIMIT_AS``).
* ``output_bytes``: no single string, array or object built on the metered fast path, and no
  result list, may be larger than this (JSON size, estimated by :meth:`Meter.walk`); the worker
  refuses to send a larger reply.

With no meter installed (trusted evaluation) nothing is charged: :func:`current` is None and every
guard is a single attribute read.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from karta._records import record

__all__ = [
    "DEFAULT_BUDGET",
    "DICT_SLOT",
    "LIST_SLOT",
    "TANK",
    "Budget",
    "Exceeded",
    "Meter",
    "current",
    "install",
    "local",
]

#: Steps between two deadline checks on the metered fast path.
TANK = 1024
#: Estimated bytes per array element and per object entry of a value the fast path builds.
LIST_SLOT = 8
DICT_SLOT = 48
_BASE = 56  # the header of any container or string


@record(slots=True)
class Budget:
    """What the expressions of one object may spend when the definition is untrusted.

    ``time_ms``: wall time of every expression of one object together (default 2 s).
    ``memory_bytes``: memory the expressions may allocate (default 256 MiB): estimated on the fast
    path, the worker's address-space growth (``RLIMIT_AS``) in libjq.
    ``output_bytes``: the largest value (JSON size) an expression may build or return, and the
    largest reply of the worker (default 16 MiB).
    ``steps``: node evaluations, outputs and elements visited on the fast path (default 10 million,
    about a second of work).
    """

    time_ms: int = 2000
    memory_bytes: int = 256 << 20
    output_bytes: int = 16 << 20
    steps: int = 10_000_000

    def __post_init__(self) -> None:
        for name in ("time_ms", "memory_bytes", "output_bytes", "steps"):
            value = getattr(self, name)
            if value.__class__ is not int or value <= 0:
                raise ValueError(f"Budget.{name} must be a positive integer, not {value!r}")


DEFAULT_BUDGET = Budget()


class Exceeded(Exception):
    """A budget breach inside an evaluation (the evaluator adds the expression)."""

    def __init__(self, budget: str, detail: str) -> None:
        super().__init__(detail)
        self.budget = budget
        self.detail = detail


class Meter:
    """The spending of one object (or one evaluation outside a session) against a :class:`Budget`.

    Charging is inlined by the hot callers as ``m.fuel -= n; if m.fuel < 0: m.refill()``: ``fuel``
    is what is left of the current tank, so the totals and the deadline are only looked at once
    per :data:`TANK` steps. ``built`` counts the arrays and objects built: results of an
    evaluation that built none are parts of the input (or scalars, or strings charged when made)
    and need no walk. ``deadline`` (``time.monotonic``) is set by the evaluator for each
    evaluation, with ``per_evaluation_ms`` the evaluation's own time limit when that is what
    the deadline stems from (0: the object's time budget).
    """

    __slots__ = ("budget", "built", "deadline", "fuel", "memory", "per_evaluation_ms", "spent", "tank")

    def __init__(self, budget: Budget = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self.spent = 0  # steps of the tanks used before the current one
        steps = budget.steps
        self.tank = self.fuel = TANK if steps > TANK else steps
        self.memory = 0
        self.built = 0
        self.deadline = float("inf")
        self.per_evaluation_ms = 0

    @property
    def steps(self) -> int:
        """Steps charged so far."""
        return self.spent + self.tank - self.fuel

    def refill(self) -> None:
        """Account for the used tank; raise when the steps or the time are over budget."""
        spent = self.spent + self.tank - self.fuel
        self.spent = spent
        left = self.budget.steps - spent
        if left < 0:
            self.tank = self.fuel = 0
            raise Exceeded("steps", f"steps budget exceeded ({self.budget.steps} per object)")
        self.tank = self.fuel = TANK if left > TANK else left
        if time.monotonic() > self.deadline:
            raise Exceeded("time", self.timeout_message())

    def timeout_message(self) -> str:
        """What passing the deadline says (docs/spec/format.md#limits: a deadline-exceeded cause)."""
        if self.per_evaluation_ms:
            return f"context deadline exceeded (evaluation took longer than {self.per_evaluation_ms} ms)"
        return f"context deadline exceeded (time budget of {self.budget.time_ms} ms per object used up)"

    def charge(self, steps: int) -> None:
        self.fuel -= steps
        if self.fuel < 0:
            self.refill()

    def alloc(self, nbytes: int) -> None:
        """Charge building ``nbytes`` (estimated), before it is built; also one step per 64 bytes,
        so that large copies reach the deadline check."""
        self.memory += nbytes
        if self.memory > self.budget.memory_bytes:
            raise Exceeded("memory", f"memory budget exceeded ({self.budget.memory_bytes} bytes per object)")
        self.fuel -= nbytes >> 6
        if self.fuel < 0:
            self.refill()

    def output(self, size: int) -> None:
        """Refuse a value of ``size`` bytes (JSON size, estimated) over the output cap."""
        if size > self.budget.output_bytes:
            raise Exceeded(
                "output",
                f"output budget exceeded (a value of more than {self.budget.output_bytes} bytes)",
            )

    def string(self, length: int) -> None:
        """Check and charge a new string of ``length`` characters, before it is built."""
        self.output(length)
        self.alloc(_BASE + length)

    def array(self, length: int) -> None:
        """Check and charge a new array of ``length`` elements (its elements are charged
        where they were built)."""
        self.output(length)
        self.built += 1
        self.alloc(_BASE + LIST_SLOT * length)

    def object(self, length: int) -> None:
        """Check and charge a new object of ``length`` entries."""
        self.output(length)
        self.built += 1
        self.alloc(_BASE + DICT_SLOT * length)

    def walk(self, value: Any, cap: int | None = None) -> int:
        """The JSON size of ``value`` as a tree (estimated: strings and keys their length plus
        quotes, other scalars four bytes, containers their brackets and separators), counting a
        shared subtree as often as it occurs, without visiting it more than once; raises the
        output breach when it passes ``cap`` (default: the output budget). Charges one step per
        distinct array or object visited, and one per 16 bytes of the tree: the cost of the walk
        and of the rendering, comparison or copy that follows it."""
        limit = self.budget.output_bytes if cap is None else cap
        size = _tree_size(value, limit, self)
        self.charge(min(size, limit) >> 4)
        if size > limit:
            self.output(size if cap is None else self.budget.output_bytes + 1)
        return size


def _scalar_size(x: Any) -> int:
    return len(x) + 2 if x.__class__ is str else 4


def _tree_size(value: Any, limit: int, meter: Meter) -> int:
    """Post-order over the distinct containers of ``value`` (memoised by identity: the value is
    alive, so identities are stable), each size capped just over ``limit``."""
    cls = value.__class__
    if cls is not list and cls is not dict:
        return _scalar_size(value)
    over = limit + 1
    memo: dict[int, int] = {}
    stack = [value]
    visited = 0
    while stack:
        x = stack[-1]
        key = id(x)
        if key in memo:
            stack.pop()
            continue
        children = x if x.__class__ is list else x.values()
        pending = [c for c in children if (c.__class__ is list or c.__class__ is dict) and id(c) not in memo]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        size = 2 + len(x)
        for c in children:
            cc = c.__class__
            if cc is list or cc is dict:
                size += memo[id(c)]
            elif cc is str:
                size += len(c) + 2
            else:
                size += 4
        if x.__class__ is dict:
            for k in x:
                size += len(k) + 3
        memo[key] = size if size < over else over
        visited += 1
        if visited >= TANK:
            meter.charge(visited)
            visited = 0
        if size >= over and x is not value:
            return over  # no need to finish: the whole is over the limit too
    meter.charge(visited)
    return memo[id(value)]


class _Current(threading.local):
    meter: Meter | None = None


_CURRENT = _Current()


def current() -> Meter | None:
    """The meter of the evaluation running on this thread, or None (trusted evaluation)."""
    return _CURRENT.meter


def install(meter: Meter | None) -> Meter | None:
    """Make ``meter`` this thread's current meter; returns the previous one (to restore)."""
    previous = _CURRENT.meter
    _CURRENT.meter = meter
    return previous


def local() -> _Current:
    """The per-thread holder itself (``.meter``), for the closures that read it on every call."""
    return _CURRENT
