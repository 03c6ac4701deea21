"""Status mapping (docs/spec/format.md#status): ``extract_status`` and its result records.

Names are resolved lazily (PEP 562): importing the package, or one light module of it, costs nothing
until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "extract_status": "karta.status.extract",
    "generated_status_fn": "karta.status.extract",
    "EVALUATION_ORDER": "karta.status.result",
    "PRIMARY_PRECEDENCE": "karta.status.result",
    "Condition": "karta.status.result",
    "StatusResult": "karta.status.result",
    "primary_status": "karta.status.result",
}

__all__ = [
    "EVALUATION_ORDER",
    "PRIMARY_PRECEDENCE",
    "Condition",
    "StatusResult",
    "extract_status",
    "generated_status_fn",
    "primary_status",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.status.extract import extract_status, generated_status_fn
    from karta.status.result import (
        EVALUATION_ORDER,
        PRIMARY_PRECEDENCE,
        Condition,
        StatusResult,
        primary_status,
    )
