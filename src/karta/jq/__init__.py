"""jq for Karta: parsing, safety checks, and evaluation (fast path, libjq, sandbox).

Public surface (everything else in this package is private):

* :class:`Evaluator` – ``evaluate``, ``paths``, ``assign``, ``assign_zip``, ``session``;
* :func:`setpath` – jq's ``setpath`` on plain data;
* :func:`parse` – expression text to :mod:`karta.jq.ast` (raises ``JqParseError``);
* the limits' defaults ``DEFAULT_MAX_RESULTS`` and ``DEFAULT_TIMEOUT_MS``.
"""

from __future__ import annotations

from karta.jq.evaluator import DEFAULT_MAX_RESULTS, DEFAULT_TIMEOUT_MS, Evaluator, setpath
from karta.jq.parser import parse

__all__ = ["DEFAULT_MAX_RESULTS", "DEFAULT_TIMEOUT_MS", "Evaluator", "parse", "setpath"]
