"""A definition's generated status function read from the definition cache of
:mod:`karta._codegen`, without the generator (:mod:`karta.status.generated`, which writes the
entries): a command that finds its definitions' functions there neither parses their jq nor
generates code, from the first object on.

The key is the status definition's content (:func:`content`: its phase and conditions paths and
field names and its matchers, canonical JSON) with the generator's fingerprint; the entry holds
the compiled code, its source (tracebacks) and a recipe for every constant of its namespace
(:mod:`karta.jq.generated_runtime`). The other names the function reads are
:func:`fixed_namespace`'s, the same for every status function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta.errors import JqBudgetError
from karta.jq.operations import tostring
from karta.model.types import ConditionsDefinition, PhaseDefinition, ResourceStatus
from karta.status.result import Condition, StatusResult, _ResultBuilder, is_stale, primary_status

if TYPE_CHECKING:
    from karta.status.generated import Matcher, StatusFn

__all__ = ["NO_OUTPUT", "content", "fixed_namespace", "load"]

ReadCondition = Callable[[Any, tuple[str, str, str, str]], Condition]
Interned = Mapping[tuple[str, str, str, str], Condition]

NO_OUTPUT: Any = object()  # a program without outputs (generated code compares against it)


def content(
    phase: PhaseDefinition | None,
    conditions: ConditionsDefinition | None,
    mappings: Sequence[tuple[str, ResourceStatus, Sequence[Matcher]]],
    uses_conditions: bool,
) -> Any:
    """Everything of a status definition its generated function depends on, as JSON data."""
    return {
        "phase": None if phase is None else phase.path,
        "conditions": None
        if conditions is None
        else [
            conditions.path,
            conditions.type_field_name,
            conditions.status_field_name,
            conditions.reason_field_name,
            conditions.message_field_name,
        ],
        "mappings": [
            [
                key,
                status.value,
                [[p, [list(c) for c in by], program, expected] for p, by, program, expected in ms],
            ]
            for key, status, ms in mappings
        ],
        "uses_conditions": uses_conditions,
    }


def fixed_namespace(read_condition: ReadCondition, interned: Interned) -> dict[str, Any]:
    """The names every generated status function reads besides its constants."""
    return {
        "_read": read_condition,
        "_C": interned,
        "_primary": primary_status,
        "_stale": is_stale,
        "_RB": _ResultBuilder,
        "_new": object.__new__,
        "_SR": StatusResult,
        "_NONE": NO_OUTPUT,
        "_tostring": tostring,
        "_BUDGET": JqBudgetError,
    }


def load(key: str, read_condition: ReadCondition, interned: Interned, what: str) -> StatusFn | None:
    """The function of the cache entry ``key``, or None (a miss, or an entry whose constants do
    not resolve: then the caller generates it and the entry is written again)."""
    from karta.jq.generated_runtime import load_function

    fn: StatusFn | None = load_function(key, fixed_namespace(read_condition, interned), "status", what)
    return fn
