"""Noisy definitions are quarantined: the process's one record of definitions whose evaluations
breach their budget too often (docs/controller/quarantine.md).

Every part that evaluates a definition's expressions (the gang reconciler, the platform metrics,
pod admission and the escaped-pod pass) asks :meth:`Quarantine.holds` before it evaluates, and
tells :meth:`Quarantine.breached` of every :class:`~karta.errors.JqBudgetError` it meets. A
definition whose evaluations breach their budget ``breaches`` times within ``window`` seconds is
quarantined: no part evaluates it any more (its workloads keep what was last written or computed
for them) until the definition changes, that is until its Karta has a new generation (or is
another object of the same name: another UID). A definition from the ``--definitions-dir``
directory changes only with the process.

The record is the runtime's, shared by every part; the Karta operator reads it (:meth:`for_karta`)
and owns what the cluster sees: the Karta's condition ``Degraded=True``, reason
:data:`BUDGET_EXCEEDED` (the expression and the budget in the message), and a Warning event. That
condition is also read back (:func:`degraded_message`): a Karta whose condition says
``BudgetExceeded`` for its current generation is quarantined in every replica, and after a restart,
until it changes. :meth:`listen` hears every quarantine and every lift (the operator requeues the
Karta).

Built-in definitions run trusted, without budgets, so they never breach one; should one report a
breach all the same, it is counted and logged as a warning, never quarantined.

Metrics: ``karta_definition_budget_breaches_total{definition,budget}`` (every breach counted) and
``karta_definition_quarantined{definition}`` (1 while quarantined, 0 once lifted).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from karta.controller.runtime.logs import logger
from karta.controller.runtime.metrics import Metrics
from karta.definitions import StoredDefinition
from karta.errors import JqBudgetError

__all__ = [
    "BUDGET_EXCEEDED",
    "DEFAULT_BREACHES",
    "DEFAULT_WINDOW_S",
    "DEGRADED",
    "WITHIN_BUDGET",
    "Quarantine",
    "Quarantined",
    "budget_error",
    "definition_version",
    "degraded_message",
]

DEGRADED: Final = "Degraded"
BUDGET_EXCEEDED: Final = "BudgetExceeded"
WITHIN_BUDGET: Final = "WithinBudget"
DEFAULT_BREACHES: Final = 5
DEFAULT_WINDOW_S: Final = 60.0
_MAX_EXPRESSION: Final = 300  # characters of the expression quoted in messages
_LOG = logger("quarantine")

Version = tuple[Any, ...]


def definition_version(definition: StoredDefinition) -> Version:
    """What changes when the definition does: a cluster Karta's UID and generation (its status
    writes keep them; a spec edit or a new object changes them), else the definition object."""
    meta = definition.karta.metadata
    if definition.origin == "cluster":
        return (definition.origin, definition.name, meta.uid, meta.generation)
    return (definition.origin, definition.source, id(definition.karta))


def budget_error(exc: BaseException | None) -> JqBudgetError | None:
    """The budget breach ``exc`` is or was raised from (its causes and contexts), else None."""
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, JqBudgetError):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def degraded_message(conditions: Iterable[Any], generation: int | None) -> str | None:
    """The message of a Karta's ``Degraded=True`` condition with reason ``BudgetExceeded`` among
    ``conditions`` when it was written for ``generation`` (the quarantine as the cluster records it)."""
    for condition in conditions:
        if not isinstance(condition, Mapping) or condition.get("type") != DEGRADED:
            continue
        if condition.get("status") != "True" or condition.get("reason") != BUDGET_EXCEEDED:
            return None
        if generation is not None and condition.get("observedGeneration") != generation:
            return None
        return str(condition.get("message") or "")
    return None


@dataclass(frozen=True)
class Quarantined:
    """One quarantined definition: what breached last, how often, since when (wall clock)."""

    definition: str
    origin: str
    version: Version
    expression: str
    budget: str
    breaches: int
    since: float
    message: str

    @property
    def generation(self) -> int | None:
        value = self.version[3] if self.origin == "cluster" and len(self.version) > 3 else None
        return value if isinstance(value, int) else None


def _message(name: str, exc: JqBudgetError, breaches: int, window: float) -> str:
    expression = " ".join(exc.expression.split())
    if len(expression) > _MAX_EXPRESSION:
        expression = expression[:_MAX_EXPRESSION] + "..."
    budget = exc.budget or "evaluation"
    return (
        f"definition {name} is not evaluated any more: its expressions breached the {budget} budget "
        f"{breaches} times within {window:g}s (last: {budget} budget, expression {expression!r}); "
        "its workloads keep their group objects; change the Karta (a new generation) to lift it"
    )


class Quarantine:
    """The breach counter and the quarantined definitions (see the module docstring); thread-safe.

    ``breaches`` 0 turns quarantine off (breaches are still counted)."""

    def __init__(
        self,
        *,
        breaches: int = DEFAULT_BREACHES,
        window: float = DEFAULT_WINDOW_S,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.breaches = breaches
        self.window = window
        self.metrics = metrics
        self.clock = clock
        self._lock = threading.Lock()
        self._recent: dict[tuple[str, str], tuple[Version, deque[float]]] = {}
        self._held: dict[tuple[str, str], Quarantined] = {}
        self._listeners: list[Callable[[Quarantined, bool], None]] = []

    def listen(self, callback: Callable[[Quarantined, bool], None]) -> None:
        """Call ``callback(entry, quarantined)`` when a definition is quarantined (True) or lifted."""
        with self._lock:
            self._listeners.append(callback)

    # -- the parts' side --------------------------------------------------------------------------
    def holds(self, definition: StoredDefinition) -> bool:
        """Whether ``definition`` is quarantined (never a built-in one): by this record, or by its
        Karta's condition for the current generation. A record of an older version is lifted."""
        if definition.trusted:
            return False
        key = (definition.origin, definition.name)
        version = definition_version(definition)
        with self._lock:
            entry = self._held.get(key)
        if entry is not None:
            if entry.version == version:
                return True
            self._lift(key, entry)
        status = definition.karta.status
        if definition.origin != "cluster" or status is None:
            return False
        message = degraded_message(status.conditions, definition.karta.metadata.generation)
        if message is None:
            return False
        adopted = Quarantined(
            definition=definition.name,
            origin=definition.origin,
            version=version,
            expression="",
            budget="",
            breaches=0,
            since=time.time(),
            message=message,
        )
        with self._lock:
            if key in self._held:
                return True
            self._held[key] = adopted
        _LOG.warning(
            "definition quarantined (its Karta says BudgetExceeded for this generation)",
            extra={"definition": definition.name},
        )
        self._quarantined(adopted, True)
        return True

    def breached(self, definition: StoredDefinition, exc: BaseException, *, part: str = "") -> bool:
        """Count the budget breach ``exc`` (or the one it was raised from) of ``definition``;
        whether it was one. The breach that makes ``breaches`` within ``window`` quarantines it."""
        found = budget_error(exc)
        if found is None:
            return False
        budget = found.budget or "evaluation"
        if self.metrics is not None:
            self.metrics.definition_budget_breaches.labels(definition=definition.name, budget=budget).inc()
        if definition.trusted:
            _LOG.warning(
                "a built-in definition breached a budget; built-in definitions are never quarantined",
                extra={"definition": definition.name, "budget": budget, "part": part, "error": str(found)},
            )
            return True
        if self.breaches <= 0:
            return True
        key = (definition.origin, definition.name)
        version = definition_version(definition)
        now = self.clock()
        entry: Quarantined | None = None
        with self._lock:
            if key in self._held and self._held[key].version == version:
                return True
            recent = self._recent.get(key)
            if recent is None or recent[0] != version:
                recent = self._recent[key] = (version, deque())
            times = recent[1]
            times.append(now)
            while times and times[0] < now - self.window:
                times.popleft()
            if len(times) >= self.breaches:
                entry = Quarantined(
                    definition=definition.name,
                    origin=definition.origin,
                    version=version,
                    expression=found.expression,
                    budget=budget,
                    breaches=len(times),
                    since=time.time(),
                    message=_message(definition.name, found, len(times), self.window),
                )
                self._held[key] = entry
                del self._recent[key]
        if entry is not None:
            _LOG.warning(
                "definition quarantined: its evaluations breach their budget",
                extra={
                    "definition": definition.name,
                    "budget": budget,
                    "breaches": entry.breaches,
                    "part": part,
                    "expression": entry.expression[:_MAX_EXPRESSION],
                },
            )
            self._quarantined(entry, True)
        return True

    # -- the operator's side ----------------------------------------------------------------------
    def for_karta(self, name: str, *, uid: str | None, generation: int | None) -> Quarantined | None:
        """The quarantine of the cluster Karta ``name`` at this UID and generation; a record of
        another one is lifted (the Karta changed)."""
        key = ("cluster", name)
        with self._lock:
            entry = self._held.get(key)
        if entry is None:
            return None
        if entry.version == ("cluster", name, uid, generation):
            return entry
        self._lift(key, entry)
        return None

    def forget(self, name: str, origin: str = "cluster") -> None:
        """The definition is gone (its Karta deleted): its record and its breaches go too."""
        key = (origin, name)
        with self._lock:
            entry = self._held.get(key)
            self._recent.pop(key, None)
        if entry is not None:
            self._lift(key, entry)

    def quarantined(self) -> list[Quarantined]:
        with self._lock:
            return sorted(self._held.values(), key=lambda e: (e.origin, e.definition))

    # -- bookkeeping ------------------------------------------------------------------------------
    def _lift(self, key: tuple[str, str], entry: Quarantined) -> None:
        with self._lock:
            if self._held.get(key) is not entry:
                return  # lifted meanwhile
            del self._held[key]
        _LOG.info("quarantine lifted: the definition changed", extra={"definition": entry.definition})
        self._quarantined(entry, False)

    def _quarantined(self, entry: Quarantined, held: bool) -> None:
        if self.metrics is not None:
            self.metrics.definition_quarantined.labels(definition=entry.definition).set(1 if held else 0)
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(entry, held)
            except Exception:
                _LOG.exception("quarantine listener failed", extra={"definition": entry.definition})
