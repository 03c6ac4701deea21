"""The jq evaluators definitions are read with: one per trust level, shared by every consumer (``kli``,
the web view, the controller's parts).

An :class:`~karta.jq.Evaluator` holds no per-definition state (plans are cached by expression text,
budgets per object in a session of the calling thread), so a definition needs only the right trust:
built-in definitions run trusted, every other one under the per-object budget. :func:`evaluator_for`
gives the process's evaluator for a definition (or for ``trusted=``); :class:`EvaluatorPool` is the
pool behind it, for a caller that needs evaluators of its own options.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from karta.jq import Evaluator

__all__ = ["POOL", "EvaluatorPool", "Trusted", "evaluator_for"]


class Trusted(Protocol):
    """Anything that says whether its expressions are trusted (a stored definition)."""

    @property
    def trusted(self) -> bool: ...


class EvaluatorPool:
    """One :class:`~karta.jq.Evaluator` per trust level, created on first use with ``options``
    (the evaluator's keyword arguments, ``trusted`` aside); safe from any thread."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._lock = threading.Lock()
        self._by_trust: dict[bool, Evaluator] = {}

    def get(self, definition: Trusted | None = None, *, trusted: bool | None = None) -> Evaluator:
        """The evaluator for ``definition`` (its ``trusted``), or for ``trusted`` itself."""
        trust = bool(definition.trusted if definition is not None else trusted)
        found = self._by_trust.get(trust)
        if found is None:
            from karta.jq import Evaluator

            with self._lock:
                found = self._by_trust.get(trust)
                if found is None:
                    found = self._by_trust[trust] = Evaluator(trusted=trust, **self._options)
        return found


POOL = EvaluatorPool(decoded=True)
"""The process's evaluators, for objects karta decoded (``kli``'s files, the API client's answers,
the webhook's reviews): ``decoded`` (:class:`karta.jq.Evaluator`), they read each object as it is,
its numbers beyond 2**53 converted by its decoder (:func:`karta.jq._values.decoded_input`). An
object built in Python goes to an evaluator of default options (``Evaluator()``), which checks it."""


def evaluator_for(definition: Trusted | None = None, *, trusted: bool | None = None) -> Evaluator:
    """The process's evaluator for ``definition`` (or for ``trusted``): :data:`POOL`."""
    return POOL.get(definition, trusted=trusted)
