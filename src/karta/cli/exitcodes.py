"""Documented exit codes of ``kli`` (karta-format.md section 17.2)."""

from __future__ import annotations

OK = 0
FAILURE = 1  # generic, cluster or authentication failure; validation found problems
USAGE = 2  # bad flag or argument, unreadable or unparseable input
NOT_FOUND = 3  # workload not found
NO_DEFINITION = 4  # no Karta definition covers the type
