"""The two ways a definition runs, for tests comparing them: ``GENERATED`` (the generated Python
for extraction and status where a definition allows it) and ``GENERAL`` (never the generated code:
every expression through the jq evaluator)."""

from __future__ import annotations

from karta.jq import Evaluator


class GeneralEvaluator(Evaluator):
    """Never runs generated extraction or status code."""

    @property
    def inlinable(self) -> bool:
        return False


GENERATED = Evaluator(trusted=True)
GENERAL = GeneralEvaluator(trusted=True)
