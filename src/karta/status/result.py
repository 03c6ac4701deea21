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


class _ResultBuilder:
    """Same slots as :class:`StatusResult`, assignable: built here, then relabelled."""

    __slots__ = StatusResult.__slots__  # the same names in the same order

    def __init__(
        self,
        phase: str | None,
        conditions: list[Condition],
        matched: list[ResourceStatus],
        primary: ResourceStatus,
        diagnostics: list[Finding],
    ) -> None:
        self.phase = phase
        self.conditions = conditions
        self.matched = matched
        self.primary = primary
        self.diagnostics = diagnostics


def new_status_result(
    phase: str | None,
    conditions: list[Condition],
    matched: list[ResourceStatus],
    primary: ResourceStatus,
    diagnostics: list[Finding],
) -> StatusResult:
    """``StatusResult(...)`` for the extraction hot path: the same object, its fields stored by
    plain slot assignments on an object of a layout-identical class, which then takes the
    dataclass as its class (the frozen dataclass's ``__init__`` calls ``object.__setattr__`` per
    field, several times slower)."""
    result: Any = _ResultBuilder(phase, conditions, matched, primary, diagnostics)
    result.__class__ = StatusResult
    return result  # type: ignore[no-any-return]
