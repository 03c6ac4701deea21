"""Semantic lint of status definitions and suspend/resume actions (R2).

Owns: matchers that use a missing phase or conditions definition (errors: they can never match),
empty matchers, empty mappings, unused phase/conditions definitions and suspend/resume values that
are not JSON text (warnings, as R2 says: "the rest are warnings"; such a value fails at apply time).
"""

from __future__ import annotations

import orjson

from karta.model.findings import Finding, Severity
from karta.model.types import ComponentDefinition, Karta, StatusDefinition
from karta.model.validate_structure import action_lists, component_paths

STATUS_KEYS: tuple[str, ...] = (  # statusMappings keys in the order of section 2.1
    "initializing",
    "running",
    "completed",
    "failed",
    "degraded",
    "suspended",
    "suspending",
    "resuming",
)


def _status(comp: ComponentDefinition, status: StatusDefinition, path: str) -> list[Finding]:
    findings: list[Finding] = []
    name = comp.name
    mappings = path + ".statusMappings"
    uses_phase = uses_conditions = False
    total = 0
    for key in STATUS_KEYS:
        for i, matcher in enumerate(getattr(status.status_mappings, key)):
            total += 1
            where = f"{mappings}.{key}[{i}]"
            label = f"status mapping {key}[{i}] of component '{name}'"
            if matcher.by_phase:
                uses_phase = True
                if status.phase_definition is None:
                    findings.append(
                        Finding(Severity.ERROR, f"{label} uses byPhase but has no phaseDefinition", where)
                    )
            if matcher.by_conditions:
                uses_conditions = True
                if status.conditions_definition is None:
                    findings.append(
                        Finding(
                            Severity.ERROR,
                            f"{label} uses byConditions but has no conditionsDefinition",
                            where,
                        )
                    )
            if not matcher.by_phase and not matcher.by_conditions and matcher.by_expression is None:
                findings.append(
                    Finding(Severity.WARNING, f"{label}: empty status matcher always matches", where)
                )
    if total == 0:
        findings.append(
            Finding(
                Severity.WARNING,
                f"statusDefinition of component '{name}': statusMappings is empty "
                "(the status is always Undefined)",
                mappings,
            )
        )
    if status.phase_definition is not None and not uses_phase:
        findings.append(
            Finding(
                Severity.WARNING,
                f"phaseDefinition of component '{name}' is not used by any status matcher (no byPhase)",
                path + ".phaseDefinition",
            )
        )
    if status.conditions_definition is not None and not uses_conditions:
        findings.append(
            Finding(
                Severity.WARNING,
                f"conditionsDefinition of component '{name}' is not used by any status matcher "
                "(no byConditions)",
                path + ".conditionsDefinition",
            )
        )
    return findings


def _json_error(text: str) -> str | None:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return str(exc)
    return None


def check_status(karta: Karta) -> list[Finding]:
    """R2 over every component that has a status definition, root first."""
    findings: list[Finding] = []
    for path, comp in component_paths(karta):
        if comp.status_definition is not None:
            findings.extend(_status(comp, comp.status_definition, path + ".statusDefinition"))
    return findings


def check_action_values(karta: Karta) -> list[Finding]:
    """R2 (warning): every suspend/resume ``value`` should be JSON text (``"true"``, ``"0"``, ``'"x"'``)."""
    findings: list[Finding] = []
    for path, comp, alias, actions in action_lists(karta):
        for i, action in enumerate(actions):
            reason = _json_error(action.value)
            if reason is not None:
                findings.append(
                    Finding(
                        Severity.WARNING,
                        f"{alias}[{i}] of component '{comp.name}': value is not valid JSON "
                        f"({action.value!r}: {reason}); write JSON text, for example 'true' or "
                        "'\"Suspended\"'",
                        f"{path}.suspendDefinition.{alias}[{i}].value",
                    )
                )
    return findings
