"""Status extraction (section 8 of the format): phase, conditions, matchers, matched set, primary.

A failing ``byExpression`` matcher does not match and is reported as a diagnostic (R3) unless
``strict=True``, which restores the original behaviour of aborting the whole extraction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karta.errors import JqError, StatusError
from karta.jq import Evaluator
from karta.model.findings import Finding, Severity
from karta.model.types import (
    ConditionMatcher,
    ConditionsDefinition,
    ExpressionMatcher,
    PhaseDefinition,
    ResourceStatus,
    StatusDefinition,
    StatusMatcher,
)
from karta.status.result import EVALUATION_ORDER, Condition, StatusResult, primary_status


def extract_status(
    definition: StatusDefinition, obj: Any, *, evaluator: Evaluator, strict: bool = False
) -> StatusResult:
    """Derive the normalised status of ``obj`` under ``definition`` (section 8.2).

    Raises :class:`StatusError` for a phase or conditions path that fails or yields the wrong type,
    and, with ``strict=True``, for a matcher whose expression fails.
    """
    phase = _extract_phase(definition.phase_definition, obj, evaluator)
    conditions = _extract_conditions(definition.conditions_definition, obj, evaluator)
    by_type = {c.type: c for c in conditions}  # the last duplicate type wins

    matched: list[ResourceStatus] = []
    diagnostics: list[Finding] = []
    mappings = definition.status_mappings
    for key, status in EVALUATION_ORDER:
        matchers: tuple[StatusMatcher, ...] = getattr(mappings, key)
        for index, matcher in enumerate(matchers):
            try:
                hit = _matches(matcher, phase, by_type, obj, evaluator)
            except JqError as exc:
                message = f"failed to match status {key} (matcher {index}): {exc}"
                if strict:
                    raise StatusError(message) from exc
                diagnostics.append(Finding(Severity.WARNING, message, f"statusMappings.{key}[{index}]"))
                continue
            if hit:
                matched.append(status)
                break
    if not matched:
        matched = [ResourceStatus.UNDEFINED]
    return StatusResult(
        phase=phase,
        conditions=conditions,
        matched=matched,
        primary=primary_status(matched),
        diagnostics=diagnostics,
    )


def _extract_phase(definition: PhaseDefinition | None, obj: Any, evaluator: Evaluator) -> str | None:
    if definition is None:
        return None
    try:
        results = evaluator.evaluate(definition.path, obj)
    except JqError as exc:
        raise StatusError(f"failed to extract phase from path '{definition.path}': {exc}") from exc
    if not results:
        return None
    first = results[0]
    if first is None:
        return ""
    if not isinstance(first, str):
        raise StatusError(
            f"failed to extract phase from path '{definition.path}': "
            f"expected a string, got {_json_type(first)}"
        )
    return first


def _extract_conditions(
    definition: ConditionsDefinition | None, obj: Any, evaluator: Evaluator
) -> list[Condition]:
    if definition is None:
        return []
    try:
        results = evaluator.evaluate(definition.path, obj)
    except JqError as exc:
        raise StatusError(f"failed to extract conditions from path '{definition.path}': {exc}") from exc
    out: list[Condition] = []
    for index, result in enumerate(results):
        if result is None:
            continue
        if not isinstance(result, list):
            raise StatusError(
                f"failed to extract conditions from path '{definition.path}': result {index} "
                f"is {_json_type(result)}, expected an array of objects"
            )
        for item in result:
            if item is None:
                continue
            if not isinstance(item, dict):
                raise StatusError(
                    f"failed to extract conditions from path '{definition.path}': result {index} "
                    f"contains {_json_type(item)}, expected an object"
                )
            out.append(_read_condition(item, definition))
    return out


def _read_condition(item: Mapping[str, Any], definition: ConditionsDefinition) -> Condition:
    return Condition(
        type=_string_field(item, definition.type_field_name),
        status=_string_field(item, definition.status_field_name),
        reason=_string_field(item, definition.reason_field_name),
        message=_string_field(item, definition.message_field_name),
    )


def _string_field(item: Mapping[str, Any], name: str) -> str:
    if not name:
        return ""
    value = item.get(name)
    return value if isinstance(value, str) else ""


def _matches(
    matcher: StatusMatcher,
    phase: str | None,
    conditions: Mapping[str, Condition],
    obj: Any,
    evaluator: Evaluator,
) -> bool:
    """All parts of one matcher must hold; a matcher without parts always matches (8.3)."""
    if matcher.by_phase and phase != matcher.by_phase:
        return False
    if matcher.by_conditions and not all(
        _condition_holds(entry, conditions) for entry in matcher.by_conditions
    ):
        return False
    return matcher.by_expression is None or _expression_holds(matcher.by_expression, obj, evaluator)


def _condition_holds(entry: ConditionMatcher, conditions: Mapping[str, Condition]) -> bool:
    condition = conditions.get(entry.type)
    if condition is None:
        return False
    if entry.status and entry.status != condition.status:
        return False
    return not (entry.reason and entry.reason != condition.reason)


def _expression_holds(matcher: ExpressionMatcher, obj: Any, evaluator: Evaluator) -> bool:
    # The comparison stays in Python so that quotes in expectedResult are compared literally (8.4).
    # A newline before the closing parenthesis keeps a trailing jq comment from swallowing it.
    expression = matcher.expression
    program = f"({expression}\n) | tostring" if "#" in expression else f"({expression}) | tostring"
    results = evaluator.evaluate(program, obj)
    return bool(results) and results[0] == matcher.expected_result


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
