"""Mapping a workload's own phase and condition names onto the status vocabulary (section 8.1).

Names are compared after lower-casing and dropping everything but letters and digits, so
``Succeeded``, ``SUCCEEDED`` and ``succeeded`` map alike. Only names whose meaning is clear are
mapped; the rest are left to a human (the draft lists them in a TODO).
"""

from __future__ import annotations

import re

from karta.model.validate_status import STATUS_KEYS

__all__ = ["COMMON_CONDITIONS", "COMMON_PHASES", "STATUS_KEYS", "status_key"]


_BY_NAME: dict[str, str] = {}
for _key, _names in {
    "initializing": (
        "pending created creating initializing initialising initialized starting provisioning queued "
        "waiting scheduling scheduled deploying inqueue new submitted accepted"
    ),
    "running": "running ready active serving available healthy deployed started",
    "completed": "succeeded success successful completed complete finished done",
    "failed": "failed failure error errored aborted crashed invalid",
    "degraded": "degraded unhealthy partiallyavailable",
    "suspended": "suspended paused",
    "suspending": "suspending pausing",
    "resuming": "resuming unpausing",
}.items():
    for _name in _names.split():
        _BY_NAME[_name] = _key

# used when the schema declares a phase string without enum values, or none at all
COMMON_PHASES: tuple[str, ...] = ("Pending", "Running", "Succeeded", "Failed")
# used when the schema declares conditions (their types are never enumerated in a CRD)
COMMON_CONDITIONS: tuple[str, ...] = ("Created", "Running", "Ready", "Succeeded", "Failed", "Suspended")


def status_key(name: str) -> str | None:
    """The ``statusMappings`` key a phase or condition name stands for, or None when unclear."""
    return _BY_NAME.get(re.sub(r"[^a-z0-9]", "", name.lower()))
