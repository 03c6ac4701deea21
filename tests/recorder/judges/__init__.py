"""Judges: the state of an object from its OPERATOR'S OWN fields, one function per kind, written
from the operator's documentation and source (each cites the file and function it follows) and
never importing karta. The answer is one of karta's primary statuses (README "Statuses") plus why.

Rules shared by every judge (the README "Statuses" rules, applied to what the operator wrote):
- nothing decided yet (no status, or only what the operator writes before deciding) is
  Initializing;
- ``status.observedGeneration`` below ``metadata.generation``: the operator has not acted on the
  latest spec yet; its verdicts (Completed, Failed, Degraded) do not count and the state is
  Initializing unless the spec asks for suspension;
- replicated kinds (Deployment, StatefulSet): ready below desired after a create or a scale-up is
  Initializing (the workload has not reached what was asked); ready at or above desired is
  Running.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["STATUSES", "Judge", "Judged", "conditions", "is_true", "stale", "status_of"]

# README "Statuses": the primary statuses, in precedence order.
STATUSES = (
    "Failed",
    "Completed",
    "Suspending",
    "Resuming",
    "Suspended",
    "Degraded",
    "Running",
    "Initializing",
    "Undefined",
)


@dataclass(frozen=True)
class Judged:
    status: str
    why: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"a judge answered {self.status!r}, not one of {', '.join(STATUSES)}")

    def to_dict(self) -> dict[str, str]:
        return {"status": self.status, "why": self.why}


Judge = Callable[[Mapping[str, Any]], Judged]


def status_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    status = obj.get("status")
    return dict(status) if isinstance(status, Mapping) else {}


def conditions(obj: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The status conditions by type (the last one of a type wins)."""
    found = status_of(obj).get("conditions")
    out: dict[str, dict[str, Any]] = {}
    for cond in found if isinstance(found, list) else []:
        if isinstance(cond, Mapping) and isinstance(cond.get("type"), str):
            out[cond["type"]] = dict(cond)
    return out


def is_true(conds: Mapping[str, Mapping[str, Any]], kind: str) -> bool:
    return (conds.get(kind) or {}).get("status") == "True"


def stale(obj: Mapping[str, Any]) -> bool:
    """``status.observedGeneration`` (an integer) below ``metadata.generation``."""
    observed = status_of(obj).get("observedGeneration")
    meta = obj.get("metadata")
    generation = meta.get("generation") if isinstance(meta, Mapping) else None
    return (
        isinstance(observed, int)
        and isinstance(generation, int)
        and not isinstance(observed, bool)
        and observed < generation
    )
