"""Generated status functions: one straight-line Python function per status definition.

:func:`compile_status` emits the phase path, the conditions path and every matcher of the fixed
evaluation order (8.2) into one function through :class:`karta.jq.codegen.Emitter`. It returns
``(phase, conditions, matched, primary)``, or None whenever anything is not plainly valid (a jq
error anywhere, including a ``byExpression`` matcher, a result over the limit, a phase or
conditions result of the wrong type); the caller then runs the general code, which produces the
exact result, diagnostics or error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from karta.jq.codegen import Emitter
from karta.jq.evaluator import plan_for
from karta.model.types import ConditionsDefinition, PhaseDefinition, ResourceStatus
from karta.status.result import Condition, primary_status

__all__ = ["StatusFn", "compile_status"]

StatusFn = Callable[[Any, int], "tuple[Any, ...] | None"]

# (byPhase or "", byConditions as (type, status, reason), the program of byExpression or None,
# its expectedResult)
Matcher = tuple[str, tuple[tuple[str, str, str], ...], str | None, str]


def compile_status(
    *,
    phase: PhaseDefinition | None,
    conditions: ConditionsDefinition | None,
    mappings: Sequence[tuple[str, ResourceStatus, Sequence[Matcher]]],
    uses_conditions: bool,
    read_condition: Callable[[Any, tuple[str, str, str, str]], Condition],
) -> StatusFn | None:
    """The generated status function of one definition, or None when an expression is outside
    the fast path."""
    try:
        return _build(phase, conditions, mappings, uses_conditions, read_condition)
    except Exception:  # Unsupported, a parse error, a generator gap: the general code runs
        return None


def _outputs(e: Emitter, expression: str, src: str) -> str:
    plan = plan_for(expression)
    if plan.fast is None or plan.node is None:
        raise ValueError(f"not on the fast path: {expression}")
    out = e.tmp("r")
    e.line(f"{out} = []")
    e.emit(plan.node, src, lambda x: e.line(f"{out}.append({x})"))
    e.line(f"if len({out}) > limit: return None")
    return out


def _build(
    phase: PhaseDefinition | None,
    conditions: ConditionsDefinition | None,
    mappings: Sequence[tuple[str, ResourceStatus, Sequence[Matcher]]],
    uses_conditions: bool,
    read_condition: Callable[[Any, tuple[str, str, str, str]], Condition],
) -> StatusFn:
    e = Emitter()
    e.namespace.update(_read=read_condition, _primary=primary_status)
    with e.block("def status(v, limit):"):
        with e.block("try:"):
            e.line("phase = None")
            if phase is not None:
                r = _outputs(e, phase.path, "v")
                with e.block(f"if {r}:"):
                    e.line(f"phase = {r}[0]")
                    e.line('if phase is None: phase = ""')
                    e.line("elif phase.__class__ is not str: return None")
            e.line("conds = []")
            if conditions is not None:
                names = e.const(
                    (
                        conditions.type_field_name,
                        conditions.status_field_name,
                        conditions.reason_field_name,
                        conditions.message_field_name,
                    )
                )
                r = _outputs(e, conditions.path, "v")
                with e.block(f"for res in {r}:"):
                    e.line("if res is None: continue")
                    e.line("if res.__class__ is not list: return None")
                    with e.block("for item in res:"):
                        e.line("if item is None: continue")
                        e.line("if item.__class__ is not dict: return None")
                        e.line(f"conds.append(_read(item, {names}))")
            # The last duplicate type wins.
            e.line("by_type = {c.type: c for c in conds}" if uses_conditions else "by_type = {}")
            e.line("matched = []")
            for _, status, matchers in mappings:
                e.line("ok = False")
                for by_phase, by_conditions, program, expected in matchers:
                    tests = []
                    if by_phase:
                        tests.append(f"phase == {by_phase!r}")
                    for ctype, cstatus, reason in by_conditions:
                        c = f"by_type.get({ctype!r})"
                        tests.append(f"{c} is not None")
                        if cstatus:
                            tests.append(f"{c}.status == {cstatus!r}")
                        if reason:
                            tests.append(f"{c}.reason == {reason!r}")
                    with e.block(f"if not ok and {' and '.join(tests) or 'True'}:"):
                        if program is None:
                            e.line("ok = True")
                        else:
                            r = _outputs(e, program, "v")
                            e.line(f"ok = bool({r}) and {r}[0] == {expected!r}")
                e.line(f"if ok: matched.append({e.const(status)})")
        with e.block("except (JqFail, RecursionError):"):
            e.line("return None")
        e.line(f"if not matched: matched.append({e.const(ResourceStatus.UNDEFINED)})")
        e.line("primary = matched[0] if len(matched) == 1 else _primary(matched)")
        e.line("return (phase, conds, matched, primary)")
    fn: StatusFn = e.build("status")
    return fn
