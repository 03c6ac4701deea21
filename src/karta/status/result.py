"""Status results: the Condition and StatusResult records, the fixed orders, the primary status.

Owns the two orders of docs/spec/format.md#status: the fixed evaluation order of the mapping keys
(8.2, also the order of ``matched``) and the precedence that picks the one primary status (8.6, R4),
and the stale-status rule (:func:`staleness`): a status whose ``observedGeneration`` is below the
object's ``metadata.generation`` describes an older spec. The matched set stays what the mappings
say; the result is flagged ``stale`` and its primary status ignores the verdicts about that older
spec (Degraded, Completed, Failed), Initializing when nothing else matched.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any

from karta._records import record
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


def primary_status(matched: Iterable[ResourceStatus], *, stale: bool = False) -> ResourceStatus:
    """The canonical single status of a matched set (section 8.6); ``Undefined`` for an empty set.

    With ``stale`` (see :func:`staleness`), Degraded, Completed and Failed do not count: they judge
    a spec the operator has not acted on yet. When they were all that matched, the primary status
    is Initializing; a set that matched nothing (``[Undefined]``) stays Undefined.
    """
    present = set(matched)
    if stale:
        kept = present - STALE_IGNORED
        if not kept and present:
            return ResourceStatus.INITIALIZING
        present = kept
    for status in PRIMARY_PRECEDENCE:
        if status in present:
            return status
    return ResourceStatus.UNDEFINED


#: The statuses a stale primary ignores: verdicts about a spec the operator has not acted on yet.
STALE_IGNORED: frozenset[ResourceStatus] = frozenset(
    {ResourceStatus.DEGRADED, ResourceStatus.COMPLETED, ResourceStatus.FAILED}
)


def staleness(obj: Any) -> tuple[int, int] | None:
    """``(status.observedGeneration, metadata.generation)`` when both are integers and the first is
    below the second (the status describes an older spec), else None."""
    if obj.__class__ is not dict:
        return None
    status = obj.get("status")
    if status.__class__ is not dict:
        return None
    observed = status.get("observedGeneration")
    if observed.__class__ is not int:  # bool, float, string or absent: no claim
        return None
    meta = obj.get("metadata")
    if meta.__class__ is not dict:
        return None
    generation = meta.get("generation")
    if generation.__class__ is not int or observed >= generation:
        return None
    return observed, generation


def is_stale(obj: Any) -> bool:
    """Whether ``obj``'s status is stale (:func:`staleness`)."""
    return staleness(obj) is not None


@record(slots=True)
class Condition:
    """One condition read from the workload (section 8.2 step 2); absent fields read as ``""``."""

    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "status": self.status, "reason": self.reason, "message": self.message}


@record(slots=True)
class StatusResult:
    """The normalised status of one component.

    ``phase`` is None when there is no phase definition or its path yields nothing; ``matched`` is
    in the fixed order of section 8.2 (``[Undefined]`` when nothing matched); ``diagnostics`` holds
    the matcher failures that R3 isolates instead of raising; ``stale`` says the status describes
    an older spec (:func:`staleness`), and ``primary`` then follows the stale rule of
    :func:`primary_status`.
    """

    phase: str | None
    conditions: list[Condition] = field(default_factory=list)
    matched: list[ResourceStatus] = field(default_factory=lambda: [ResourceStatus.UNDEFINED])
    primary: ResourceStatus = ResourceStatus.UNDEFINED
    diagnostics: list[Finding] = field(default_factory=list)
    stale: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{phase, conditions, matched, primary}``, plus ``stale: true`` when stale."""
        out: dict[str, Any] = {
            "phase": self.phase,
            "conditions": [c.to_dict() for c in self.conditions],
            "matched": [s.value for s in self.matched],
            "primary": self.primary.value,
        }
        if self.stale:
            out["stale"] = True
        return out


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
        stale: bool,
    ) -> None:
        self.phase = phase
        self.conditions = conditions
        self.matched = matched
        self.primary = primary
        self.diagnostics = diagnostics
        self.stale = stale


def new_status_result(
    phase: str | None,
    conditions: list[Condition],
    matched: list[ResourceStatus],
    primary: ResourceStatus,
    diagnostics: list[Finding],
    stale: bool = False,
) -> StatusResult:
    """``StatusResult(...)`` for the extraction hot path: the same object, its fields stored by
    plain slot assignments on an object of a layout-identical class, which then takes the
    dataclass as its class (the frozen dataclass's ``__init__`` calls ``object.__setattr__`` per
    field, several times slower)."""
    result: Any = _ResultBuilder(phase, conditions, matched, primary, diagnostics, stale)
    result.__class__ = StatusResult
    return result  # type: ignore[no-any-return]
