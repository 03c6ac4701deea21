"""Suspend and resume (docs/spec/format.md#suspend): JSON-decode each action value, then Assign it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karta.errors import JqError, WriteBackError
from karta.jq import Evaluator
from karta.model.types import SuspendAction


def apply_actions(actions: Sequence[SuspendAction], obj: Any, *, evaluator: Evaluator, label: str) -> Any:
    """Apply ``actions`` in order to a copy of ``obj``; errors start with ``<label>[<i>]:``."""
    import orjson  # here, not at the top: kli start-up is budgeted (karta.jq._values)

    result = obj
    for index, action in enumerate(actions):
        prefix = f"{label}[{index}]:"
        try:
            value = orjson.loads(action.value)
        except orjson.JSONDecodeError as exc:
            raise WriteBackError(f"{prefix} value is not valid JSON: {action.value!r}: {exc}") from exc
        try:
            result = evaluator.assign(action.path, result, value)
        except (JqError, WriteBackError) as exc:
            raise WriteBackError(f"{prefix} failed to assign path '{action.path}': {exc}") from exc
    return result
