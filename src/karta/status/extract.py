"""Status extraction (docs/spec/format.md#status): phase, conditions, matchers, matched set, primary,
and the stale flag (``status.observedGeneration`` below ``metadata.generation``; see
:func:`karta.status.result.staleness`).

A failing ``byExpression`` matcher does not match and is reported as a diagnostic (R3) unless
``strict=True``, which restores the original behaviour of aborting the whole extraction. "Failing"
is whatever the evaluation raises on a hostile object, not only a jq error: a ``RecursionError``
(nesting), ``OverflowError`` or ``ValueError`` (numbers), ``TypeError``, ``MemoryError`` or any
:class:`~karta.errors.KartaError` stays in its matcher. The one exception is
:class:`~karta.errors.JqBudgetError`: the time, memory or output budget is the object's, so a
breach ends the object's extraction. A phase or conditions path that fails the same way is a
:class:`~karta.errors.StatusError` naming the path (those are not matchers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from karta import _codegen as codegen
from karta._identity import IdentityCache
from karta.errors import JqBudgetError, KartaError, StatusError
from karta.jq import Evaluator, json_type
from karta.model.findings import Finding, Severity
from karta.model.types import (
    ConditionsDefinition,
    PhaseDefinition,
    ResourceStatus,
    StatusDefinition,
    StatusMatcher,
)
from karta.status.result import (
    EVALUATION_ORDER,
    Condition,
    StatusResult,
    is_stale,
    new_status_result,
    primary_status,
)

if TYPE_CHECKING:
    from karta.status.generated import StatusFn  # imported when first generating code

# One compiled matcher: (byPhase or "", byConditions as (type, status, reason) or (), the program of
# byExpression or None, its expectedResult). A matcher without parts always matches (8.3).
_Matcher = tuple[str, tuple[tuple[str, str, str], ...], str | None, str]


class _CompiledStatus:
    """What a status definition asks for, worked out once per definition object."""

    __slots__ = (
        "conditions",
        "definition",
        "generated",
        "key",
        "mappings",
        "names",
        "phase",
        "uses",
        "uses_conditions",
        "variants",
    )

    def __init__(self, definition: StatusDefinition, names: tuple[str, ...] = ()) -> None:
        self.definition = definition
        # A definition's references (extension E3): the ``$<name>`` the generated function takes
        # as parameters after the limit (with_names: one per tuple of names).
        self.names = names
        self.variants: dict[tuple[str, ...], _CompiledStatus] = {}
        self.phase = definition.phase_definition
        self.conditions = definition.conditions_definition
        mappings: list[tuple[str, ResourceStatus, tuple[_Matcher, ...]]] = []
        uses_conditions = False
        for key, status in EVALUATION_ORDER:
            matchers: tuple[StatusMatcher, ...] = getattr(definition.status_mappings, key)
            if not matchers:
                continue
            compiled: list[_Matcher] = []
            for matcher in matchers:
                by_conditions = tuple((c.type, c.status, c.reason) for c in matcher.by_conditions or ())
                uses_conditions = uses_conditions or bool(by_conditions)
                by_expression = matcher.by_expression
                program = None if by_expression is None else _program(by_expression.expression)
                expected = "" if by_expression is None else by_expression.expected_result
                compiled.append((matcher.by_phase or "", by_conditions, program, expected))
            mappings.append((key, status, tuple(compiled)))
        self.mappings = tuple(mappings)
        self.uses_conditions = uses_conditions
        self.generated: Any = _UNSET
        self.uses = 0  # calls of status_fn before the function was built
        self.key: str | None = None  # in the definition cache (karta.status.cached)

    def _cached(self) -> StatusFn | None:
        """The function the definition cache holds for this definition, or None (``key`` is set
        whenever the cache is in use, for the generator to write the entry)."""
        if not codegen.enabled():
            return None
        from karta.status import cached

        content: Any = cached.content(self.phase, self.conditions, self.mappings, self.uses_conditions)
        if self.names:
            content = {"status": content, "references": list(self.names)}
        key = self.key = codegen.definition_key("status", content)
        if key is None:
            return None
        what = "status" if self.phase is None else f"status (phase {self.phase.path})"
        return cached.load(key, _read_condition, _conditions, what)

    def status_fn(self) -> StatusFn | None:
        """The generated status function (built on the second use, see
        :func:`karta._codegen.due`), or None (then the general code runs)."""
        fn = self.generated
        if fn is _UNSET:
            if self.uses == 0:  # the first use: the function the definition cache holds, if any
                fn = self._cached()
                if fn is not None:
                    self.generated = fn
                    return fn
            if not codegen.due_for_cache(self.uses, self.key):
                self.uses += 1
                return None
            from karta.status.generated import compile_status

            fn = self.generated = compile_status(
                phase=self.phase,
                conditions=self.conditions,
                mappings=self.mappings,
                uses_conditions=self.uses_conditions,
                read_condition=_read_condition,
                interned=_conditions,
                key=self.key,
                names=self.names,
            )
        return fn  # type: ignore[no-any-return]

    def with_names(self, names: tuple[str, ...]) -> _CompiledStatus:
        """This definition's compiled status, its generated function taking ``names`` as
        parameters (itself without)."""
        found = self.variants.get(names, self) if names else self
        if found is self and names:
            found = self.variants[names] = _CompiledStatus(self.definition, names)
        return found


_UNSET: Any = object()


def _program(expression: str) -> str:
    # The comparison stays in Python so that quotes in expectedResult are compared literally (8.4).
    # A newline before the closing parenthesis keeps a trailing jq comment from swallowing it.
    return f"({expression}\n) | tostring" if "#" in expression else f"({expression}) | tostring"


# Keyed by identity (definitions are immutable).
_compiled_status: IdentityCache[StatusDefinition, _CompiledStatus] = IdentityCache(_CompiledStatus, size=1024)


def generated_status_fn(definition: StatusDefinition, names: tuple[str, ...] = ()) -> StatusFn | None:
    """The generated status function of ``definition`` (see :mod:`karta.status.generated`), or
    None. Called as ``fn(obj, max_results)`` where ``evaluator.inlinable`` holds, it returns the
    non-strict and strict result alike, or None: then :func:`extract_status` must run. With
    ``names`` (a definition's references, extension E3) it takes their values after
    ``max_results`` (``fn(obj, max_results, *values)``, :attr:`Evaluator.parameters`)."""
    return _compiled_status(definition).with_names(names).status_fn()


def extract_status(
    definition: StatusDefinition,
    obj: Any,
    *,
    evaluator: Evaluator,
    strict: bool = False,
    generated: bool = True,
) -> StatusResult:
    """Derive the normalised status of ``obj`` under ``definition`` (section 8.2).

    Raises :class:`StatusError` for a phase or conditions path that fails or yields the wrong type,
    and, with ``strict=True``, for a matcher whose expression fails. ``generated=False``: the
    caller already tried the generated function (:func:`generated_status_fn`) on ``obj``.
    """
    compiled = _compiled_status(definition)
    parameters = None if not generated or evaluator.inlinable else evaluator.parameters
    if generated and (evaluator.inlinable or parameters is not None):
        names, values = parameters or ((), ())
        fn = compiled.with_names(names).status_fn()
        if fn is not None:
            try:
                result = fn(evaluator.input_of(obj), evaluator.max_results, *values)
            except JqBudgetError:
                raise
            except Exception:  # the general code below reports it where it belongs
                result = None
            if result is not None:
                return result
    phase = _extract_phase(compiled.phase, obj, evaluator)
    conditions = _extract_conditions(compiled.conditions, obj, evaluator)
    # The last duplicate type wins.
    by_type = {c.type: c for c in conditions} if compiled.uses_conditions else {}

    matched: list[ResourceStatus] = []
    diagnostics: list[Finding] = []
    for key, status, matchers in compiled.mappings:
        for index, (by_phase, by_conditions, program, expected) in enumerate(matchers):
            if by_phase and phase != by_phase:
                continue
            if by_conditions and not _conditions_hold(by_conditions, by_type):
                continue
            if program is not None:
                try:
                    results = evaluator.evaluate(program, obj)
                    hit = bool(results) and results[0] == expected
                except JqBudgetError:
                    raise  # the object's budget, not this matcher's (module docstring)
                except Exception as exc:  # R3: whatever the cause, it stays in this matcher
                    message = f"failed to match status {key} (matcher {index}): {_reason(exc)}"
                    if strict:
                        raise StatusError(message) from exc
                    diagnostics.append(Finding(Severity.WARNING, message, f"statusMappings.{key}[{index}]"))
                    continue
                if not hit:
                    continue
            matched.append(status)
            break
    if not matched:
        matched = [ResourceStatus.UNDEFINED]
    # A stale status (observedGeneration < generation) keeps its matched set; only the primary changes.
    stale = is_stale(obj)
    if stale:
        primary = primary_status(matched, stale=True)
    else:
        primary = matched[0] if len(matched) == 1 else primary_status(matched)
    return new_status_result(phase, conditions, matched, primary, diagnostics, stale)


def _reason(exc: Exception) -> str:
    """An evaluation error as one clause: a karta error's own message, else what went wrong."""
    if isinstance(exc, KartaError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "the object is nested too deeply for this expression (RecursionError)"
    if isinstance(exc, MemoryError):
        return "the evaluation ran out of memory (MemoryError)"
    text = str(exc)
    text = text if len(text) <= 200 else text[:200] + "..."
    return f"the expression failed on this object ({type(exc).__name__}: {text})"


def _conditions_hold(entries: tuple[tuple[str, str, str], ...], conditions: Mapping[str, Condition]) -> bool:
    for ctype, status, reason in entries:
        condition = conditions.get(ctype)
        if condition is None:
            return False
        if status and status != condition.status:
            return False
        if reason and reason != condition.reason:
            return False
    return True


def _extract_phase(definition: PhaseDefinition | None, obj: Any, evaluator: Evaluator) -> str | None:
    if definition is None:
        return None
    try:
        results = evaluator.evaluate(definition.path, obj)
    except JqBudgetError:
        raise
    except Exception as exc:
        raise StatusError(f"failed to extract phase from path '{definition.path}': {_reason(exc)}") from exc
    if not results:
        return None
    first = results[0]
    if first is None:
        return ""
    if not isinstance(first, str):
        raise StatusError(
            f"failed to extract phase from path '{definition.path}': "
            f"expected a string, got {json_type(first)}"
        )
    return first


def _extract_conditions(
    definition: ConditionsDefinition | None, obj: Any, evaluator: Evaluator
) -> list[Condition]:
    if definition is None:
        return []
    try:
        results = evaluator.evaluate(definition.path, obj)
    except JqBudgetError:
        raise
    except Exception as exc:
        raise StatusError(
            f"failed to extract conditions from path '{definition.path}': {_reason(exc)}"
        ) from exc
    out: list[Condition] = []
    names = (
        definition.type_field_name,
        definition.status_field_name,
        definition.reason_field_name,
        definition.message_field_name,
    )
    for index, result in enumerate(results):
        if result is None:
            continue
        if not isinstance(result, list):
            raise StatusError(
                f"failed to extract conditions from path '{definition.path}': result {index} "
                f"is {json_type(result)}, expected an array of objects"
            )
        for item in result:
            if item is None:
                continue
            if not isinstance(item, dict):
                raise StatusError(
                    f"failed to extract conditions from path '{definition.path}': result {index} "
                    f"contains {json_type(item)}, expected an object"
                )
            out.append(_read_condition(item, names))
    return out


_CONDITION_CACHE_SIZE = 4096
_conditions: dict[tuple[str, str, str, str], Condition] = {}


def _read_condition(item: Mapping[str, Any], names: tuple[str, str, str, str]) -> Condition:
    # Conditions are immutable values: equal fields share one record (a bounded intern table).
    key = (
        _string_field(item, names[0]),
        _string_field(item, names[1]),
        _string_field(item, names[2]),
        _string_field(item, names[3]),
    )
    condition = _conditions.get(key)
    if condition is None:
        condition = Condition(type=key[0], status=key[1], reason=key[2], message=key[3])
        if len(_conditions) >= _CONDITION_CACHE_SIZE:
            _conditions.clear()
        _conditions[key] = condition
    return condition


def _string_field(item: Mapping[str, Any], name: str) -> str:
    if not name:
        return ""
    value = item.get(name)
    return value if isinstance(value, str) else ""
