"""jq for Karta: parsing, safety checks, and evaluation (fast path, libjq, sandbox).

Public surface (everything else in this package is private):

* :class:`Evaluator` – ``evaluate``, ``paths``, ``assign``, ``assign_zip``, ``session``,
  ``open_session`` (a :class:`Session`: one object's budget);
* :class:`BoundEvaluator` – an evaluator with ``$name`` bound in every expression (references);
* :class:`Budget` – what untrusted expressions may spend per object (``DEFAULT_BUDGET``);
* :func:`setpath` – jq's ``setpath`` on plain data;
* :func:`parse` – expression text to :mod:`karta.jq.syntax` (raises ``JqParseError``);
* :func:`check_safety`, :class:`SafetyIssue`, :func:`is_assignable`, :func:`is_bounded` – static
  checks of a parsed expression;
* :func:`json_type` – the JSON type name of a value, for messages;
* the limits' defaults ``DEFAULT_MAX_RESULTS`` and ``DEFAULT_TIMEOUT_MS``.

Names are resolved lazily (PEP 562): validating a definition needs only the parser and the safety
checks, so importing ``karta.jq.parser`` must not pay for the evaluator, the fast path and libjq.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "DEFAULT_MAX_RESULTS": "karta.jq.evaluator",
    "DEFAULT_TIMEOUT_MS": "karta.jq.evaluator",
    "DEFAULT_BUDGET": "karta.jq.budget",
    "Budget": "karta.jq.budget",
    "Evaluator": "karta.jq.evaluator",
    "BoundEvaluator": "karta.jq.bound",
    "Session": "karta.jq.evaluator",
    "setpath": "karta.jq.evaluator",
    "parse": "karta.jq.parser",
    "SafetyIssue": "karta.jq.safety",
    "check_safety": "karta.jq.safety",
    "is_assignable": "karta.jq.safety",
    "is_bounded": "karta.jq.safety",
    "json_type": "karta.jq._values",
}

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_TIMEOUT_MS",
    "BoundEvaluator",
    "Budget",
    "Evaluator",
    "SafetyIssue",
    "Session",
    "check_safety",
    "is_assignable",
    "is_bounded",
    "json_type",
    "parse",
    "setpath",
]


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


__dir__ = lazy_dir(_EXPORTS, globals())


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.jq._values import json_type
    from karta.jq.bound import BoundEvaluator
    from karta.jq.budget import DEFAULT_BUDGET, Budget
    from karta.jq.evaluator import DEFAULT_MAX_RESULTS, DEFAULT_TIMEOUT_MS, Evaluator, Session, setpath
    from karta.jq.parser import parse
    from karta.jq.safety import SafetyIssue, check_safety, is_assignable, is_bounded
