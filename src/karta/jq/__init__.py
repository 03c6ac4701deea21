"""jq for Karta: parsing, safety checks, and evaluation (fast path, libjq, sandbox).

Public surface (everything else in this package is private):

* :class:`Evaluator` – ``evaluate``, ``paths``, ``assign``, ``assign_zip``, ``session``;
* :func:`setpath` – jq's ``setpath`` on plain data;
* :func:`parse` – expression text to :mod:`karta.jq.ast` (raises ``JqParseError``);
* :func:`check_safety`, :class:`SafetyIssue`, :func:`is_assignable`, :func:`is_bounded` – static
  checks of a parsed expression;
* the limits' defaults ``DEFAULT_MAX_RESULTS`` and ``DEFAULT_TIMEOUT_MS``.
"""

from __future__ import annotations

from karta.jq.evaluator import DEFAULT_MAX_RESULTS, DEFAULT_TIMEOUT_MS, Evaluator, setpath
from karta.jq.parser import parse
from karta.jq.safety import SafetyIssue, check_safety, is_assignable, is_bounded

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_TIMEOUT_MS",
    "Evaluator",
    "SafetyIssue",
    "check_safety",
    "is_assignable",
    "is_bounded",
    "parse",
    "setpath",
]
