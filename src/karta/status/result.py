"""Status results: the Condition and StatusResult records, the fixed orders, the primary status.

Owns the two orders of section 8 of the format: the fixed evaluation order of the mapping keys
(8.2, also the order of ``matched``) and the precedence that picks the one primary status (8.6, R4).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from karta.model.findings import Finding
from karta.model.types import ResourceStatus

#: Mapping keys in the fixed evaluation order of section 8.2, with the status each one stands for.
EVALUATION_ORDER: tuple[tuple[str, ResourceStatus], ...] = (
    ("resuming", ResourceStatus.RESUMING),
    ("suspending", ResourceStatus.SUSPENDING),
    ("suspended", ResourceStatus.SUSPENDED),
    ("running", ResourceStatus.RUNNING),
    ("failed", ResourceStatus.FAILED),
    ("completed", ResourceStatus.COMPLETED),
    ("initializing", ResourceStatus.INITIALIZING),
    ("degraded", ResourceStatus.DEGRADED),
)

#: Precedence of section 8.6: the first status present in the matched set is the primary one.
PRIMARY_PRECEDENCE: tuple[ResourceStatus, ...] = (
    ResourceStatus.FAILED,
    ResourceStatus.COMPLETED,
    ResourceStatus.SUSPENDING,
    ResourceStatus.RESUMING,
    ResourceStatus.SUSPENDED,
    ResourceStatus.DEGRADED,
    ResourceStatus.RUNNING,
    ResourceStatus.INITIALIZING,
    ResourceStatus.UNDEFINED,
)


def primary_status(matched: Iterable[ResourceStatus]) -> ResourceStatus:
    """The canonical single status of a matched set (section 8.6); ``Undefined`` for an empty set."""
    present = set(matched)
    for status in PRIMARY_PRECEDENCE:
        if status in present:
            return status
    return ResourceStatus.UNDEFINED


@dataclass(frozen=True, slots=True)
class Condition:
    """One condition read from the workload (section 8.2 step 2); absent fields read as ``""``."""

    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "status": self.status, "reason": self.reason, "message": self.message}


@dataclass(frozen=True, slots=True)
class StatusResult:
    """The normalised status of one component.

    ``phase`` is None when there is no phase definition or its path yields nothing; ``matched`` is
    in the fixed order of section 8.2 (``[Undefined]`` when nothing matched); ``diagnostics`` holds
    the matcher failures that R3 isolates instead of raising.
    """

    phase: str | None
    conditions: list[Condition] = field(default_factory=list)
    matched: list[ResourceStatus] = field(default_factory=lambda: [ResourceStatus.UNDEFINED])
    primary: ResourceStatus = ResourceStatus.UNDEFINED
    diagnostics: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "conditions": [c.to_dict() for c in self.conditions],
            "matched": [s.value for s in self.matched],
            "primary": self.primary.value,
        }


_new = object.__new__
_set_result_fields = tuple(
    getattr(StatusResult, name).__set__
    for name in ("phase", "conditions", "matched", "primary", "diagnostics")
)


def new_status_result(
    phase: str | None,
    conditions: list[Condition],
    matched: list[ResourceStatus],
    primary: ResourceStatus,
    diagnostics: list[Finding],
) -> StatusResult:
    """``StatusResult(...)`` for the extraction hot path: the same object, built through the slot
    descriptors in about half the time of the frozen dataclass's ``__init__``."""
    s0, s1, s2, s3, s4 = _set_result_fields
    result: StatusResult = _new(StatusResult)
    s0(result, phase)
    s1(result, conditions)
    s2(result, matched)
    s3(result, primary)
    s4(result, diagnostics)
    return result
