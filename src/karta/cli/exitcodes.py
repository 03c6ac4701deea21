"""Documented exit codes of ``kli`` (docs/spec/format.md#kli-exit-codes)."""

from __future__ import annotations

OK = 0
# generic, cluster or authentication failure (a list refused; with get --all-types, every list
# refused: nothing could be listed; with get on several contexts, no cluster listed, unless they
# all failed with another code); validation found problems
FAILURE = 1
USAGE = 2  # bad flag or argument, unreadable or unparseable input
NOT_FOUND = 3  # workload not found
NO_DEFINITION = 4  # no Karta definition covers the type
