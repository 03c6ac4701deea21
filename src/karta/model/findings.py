"""Findings: what validation and lenient evaluation report instead of raising."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from karta._records import record

if TYPE_CHECKING:  # the JSON shapes, for type checkers; at run time plain dicts (no typing
    # ForwardRef compile per annotation on every start-up)
    from typing import TypedDict

    class FindingDict(TypedDict):
        """A finding in JSON output: ``severity`` is ``error``, ``warning`` or ``note``."""

        severity: str
        message: str
        location: str
else:
    FindingDict = dict


class Severity(StrEnum):
    """``note``: something a check could not decide (it says so instead of passing); like a
    warning it does not fail validation."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@record(slots=True)
class Finding:
    """One validation finding or evaluation diagnostic.

    ``location`` is a JSON field path into the definition
    (``spec.structureDefinition.childComponents[1].scaleDefinition.replicasPath``), or another
    precise place (``status.running[0]``); empty when the finding concerns the whole definition.
    """

    severity: Severity
    message: str
    location: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def to_dict(self) -> FindingDict:
        return {"severity": self.severity.value, "message": self.message, "location": self.location}
