"""jq for Karta: parsing, safety checks, and evaluation (fast path, libjq, sandbox).

Public surface (everything else in this package is private):

* :class:`Evaluator` – ``evaluate``, ``paths``, ``assign``, ``assign_zip``;
* :func:`setpath` – jq's ``setpath`` on plain data.
"""

from __future__ import annotations

from karta.jq.evaluator import DEFAULT_MAX_RESULTS, DEFAULT_TIMEOUT_MS, Evaluator, setpath

__all__ = ["DEFAULT_MAX_RESULTS", "DEFAULT_TIMEOUT_MS", "Evaluator", "setpath"]
