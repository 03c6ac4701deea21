"""Status mapping (section 8 of the format): ``extract_status`` and its result records."""

from __future__ import annotations

from karta.status.extract import extract_status, generated_status_fn
from karta.status.result import (
    EVALUATION_ORDER,
    PRIMARY_PRECEDENCE,
    Condition,
    StatusResult,
    primary_status,
)

__all__ = [
    "EVALUATION_ORDER",
    "PRIMARY_PRECEDENCE",
    "Condition",
    "StatusResult",
    "extract_status",
    "generated_status_fn",
    "primary_status",
]
