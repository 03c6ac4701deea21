"""Generated status functions: one straight-line Python function per status definition.

:func:`compile_status` emits the phase path, the conditions path and every matcher of the fixed
evaluation order (8.2) into one function through :class:`karta.jq.codegen.Emitter`. It returns
the :class:`StatusResult` (without diagnostics; the stale flag and the stale primary rule as in
:mod:`karta.status.result`), or None whenever anything is not plainly valid (a jq error anywhere,
including a ``byExpression`` matcher, a result over the limit, a phase or conditions result of the
wrong type, or any exception a hostile object causes: deep nesting, huge numbers); the caller
then runs the general code, which produces the exact result, diagnostics or error. Only
:class:`~karta.errors.JqBudgetError` passes through: a budget is the object's.

Conditions are read inline and looked up in the intern table of :mod:`karta.status.extract`
(the reader runs for anything unusual); a ``byExpression`` program ``(E) | tostring`` evaluates
``E`` and converts only the first output, the one compared (``tostring`` never fails).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from karta import _codegen as codegen
from karta.errors import JqError
from karta.jq import syntax as A
from karta.jq.codegen import Emitter, fast_node, is_single
from karta.jq.fastpath import Unsupported
from karta.model.types import ConditionsDefinition, PhaseDefinition, ResourceStatus
from karta.status.cached import fixed_namespace
from karta.status.result import Condition, StatusResult, _ResultBuilder

__all__ = ["StatusFn", "compile_status"]

StatusFn = Callable[[Any, int], "StatusResult | None"]

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
    interned: Mapping[tuple[str, str, str, str], Condition],
    key: str | None = None,
    names: tuple[str, ...] = (),
) -> StatusFn | None:
    """The generated status function of one definition, or None when an expression is outside
    the fast path (or generating fails; see :mod:`karta._codegen`). ``interned`` is the table
    ``read_condition`` fills (read, never written here). ``key``: the definition cache's key of
    this definition (:mod:`karta.status.cached`), under which the function is kept. ``names``:
    the definition's references (extension E3), bound as ``$<name>`` to parameters after
    ``limit`` (called ``fn(obj, limit, *values)``)."""
    what = "status" if phase is None else f"status (phase {phase.path})"
    if not codegen.enabled():
        return None
    try:
        return _build(
            phase, conditions, mappings, uses_conditions, read_condition, interned, what, key, names
        )
    except (Unsupported, JqError, RecursionError) as exc:  # outside the fast path, invalid, too deep
        codegen.declined(what, exc)
    except Exception as exc:  # a generator gap: the general code runs (raises under strict)
        codegen.failed(what, exc)
    return None


def _node(expression: str, names: tuple[str, ...] = ()) -> A.Node:
    return fast_node(expression, names)


def _outputs(e: Emitter, node: A.Node, src: str) -> str:
    out = e.tmp("r")
    e.line(f"{out} = []")
    e.emit(node, src, lambda x: e.line(f"{out}.append({x})"))
    e.line(f"if len({out}) > limit: return None")
    return out


def _first_output(e: Emitter, node: A.Node, src: str) -> str:
    """A variable holding the first output of ``node`` or, without outputs, ``_NONE``."""
    if is_single(node):  # exactly one output (the function checks ``limit >= 1`` up front)
        out = e.tmp("y")
        e.emit(node, src, lambda x: e.line(f"{out} = {x}"))
        return out
    r = _outputs(e, node, src)
    out = e.tmp("y")
    e.line(f"{out} = {r}[0] if {r} else _NONE")
    return out


def _read_conditions(
    e: Emitter, conditions: ConditionsDefinition, uses_conditions: bool, references: tuple[str, ...] = ()
) -> None:
    names = (
        conditions.type_field_name,
        conditions.status_field_name,
        conditions.reason_field_name,
        conditions.message_field_name,
    )
    fields = [e.tmp("f") for _ in names]
    node = _node(conditions.path, references)
    if is_single(node):  # one result (the function checks ``limit >= 1`` up front)
        e.emit(node, "v", lambda x: e.line(f"res = {x}"))
        header = "if res is not None:"
    else:
        header = f"for res in {_outputs(e, node, 'v')}:"
    with e.block(header):
        if not is_single(node):
            e.line("if res is None: continue")
        e.line("if res.__class__ is not list: return None")
        with e.block("for item in res:"):
            e.line("if item is None: continue")
            e.line("if item.__class__ is not dict: return None")
            for name, var in zip(names, fields, strict=True):
                e.line(f"{var} = item.get({name!r}, '')" if name else f"{var} = ''")
            plain = " and ".join(f"{var}.__class__ is str" for var in fields if var)
            key = f"({', '.join(fields)},)"
            e.line(f"c = (_C.get({key}) if {plain} else None) or _read(item, {e.const(names)})")
            e.line("conds.append(c)")
            if uses_conditions:
                e.line("by_type[c.type] = c")  # the last duplicate type wins


def _build(
    phase: PhaseDefinition | None,
    conditions: ConditionsDefinition | None,
    mappings: Sequence[tuple[str, ResourceStatus, Sequence[Matcher]]],
    uses_conditions: bool,
    read_condition: Callable[[Any, tuple[str, str, str, str]], Condition],
    interned: Mapping[tuple[str, str, str, str], Condition],
    what: str,
    key: str | None = None,
    names: tuple[str, ...] = (),
) -> StatusFn:
    e = Emitter(recipes=key is not None)
    e.namespace.update(fixed_namespace(read_condition, interned))
    with e.block(f"def status(v, limit{e.bind_parameters(names)}):"):
        e.line("if limit < 1: return None")
        e.memoise("v")  # the matchers share their bindings (and the state tables repeat them)
        with e.block("try:"):
            e.line("phase = None")
            if phase is not None:
                first = _first_output(e, _node(phase.path, names), "v")
                with e.block(f"if {first} is not _NONE:"):
                    e.line(f"phase = {first}")
                    e.line('if phase is None: phase = ""')
                    e.line("elif phase.__class__ is not str: return None")
            e.line("conds = []")
            e.line("by_type = {}")
            if conditions is not None:
                _read_conditions(e, conditions, uses_conditions, names)
            e.line("matched = []")
            for _, status, matchers in mappings:
                if len(matchers) == 1 and matchers[0][2] is None:
                    # One matcher without an expression: a plain test.
                    test = " and ".join(_tests(e, matchers[0])) or "True"
                    e.line(f"if {test}: matched.append({e.const(status)})")
                    continue
                e.line("ok = False")
                for matcher in matchers:
                    program, expected = matcher[2], matcher[3]
                    tests = _tests(e, matcher)
                    with e.block(f"if not ok and {' and '.join(tests) or 'True'}:"):
                        if program is None:
                            e.line("ok = True")
                        else:
                            _expression_matches(e, _node(program, names), expected)
                e.line(f"if ok: matched.append({e.const(status)})")
        with e.block("except _BUDGET:"):
            e.line("raise")  # the object's budget ends its extraction (karta.status.extract)
        with e.block("except Exception:"):
            # Anything a hostile object makes the code raise (JqFail, RecursionError,
            # OverflowError, TypeError, MemoryError, ...): the general code reports it (R3).
            e.line("return None")
        e.line(f"if not matched: matched.append({e.const(ResourceStatus.UNDEFINED)})")
        # The stale rule (karta.status.result.staleness): the matched set stays, the primary changes.
        # staleness(v) is not None, inlined (no call per object).
        e.line("stale = False")
        with e.block("if v.__class__ is dict:"):
            e.line("s_ = v.get('status')")
            with e.block("if s_.__class__ is dict:"):
                e.line("og_ = s_.get('observedGeneration')")
                with e.block("if og_.__class__ is int:"):
                    e.line("md_ = v.get('metadata')")
                    with e.block("if md_.__class__ is dict:"):
                        e.line("g_ = md_.get('generation')")
                        e.line("stale = g_.__class__ is int and og_ < g_")
        with e.block("if stale:"):
            e.line("primary = _primary(matched, stale=True)")
        with e.block("else:"):
            e.line("primary = matched[0] if len(matched) == 1 else _primary(matched)")
        # new_status_result, inlined
        # its __init__ too: slot stores, no call frame
        e.line("result = _new(_RB)")
        values = ("phase", "conds", "matched", "primary", "[]", "stale")
        for slot, value in zip(_ResultBuilder.__slots__, values, strict=True):
            e.line(f"result.{slot} = {value}")
        e.line("result.__class__ = _SR")
        e.line("return result")
    fn: StatusFn = e.build("status", what=what)
    if key is not None and e.recipes is not None:
        codegen.store_definition(key, e.code, e.recipes, e.source)
    return fn


def _tests(e: Emitter, matcher: Matcher) -> list[str]:
    """The tests of a matcher's phase and conditions (all must hold)."""
    by_phase, by_conditions, _, _ = matcher
    tests = []
    if by_phase:
        tests.append(f"phase == {by_phase!r}")
    for ctype, cstatus, reason in by_conditions:
        c = e.tmp("c")
        tests.append(f"({c} := by_type.get({ctype!r})) is not None")
        if cstatus:
            tests.append(f"{c}.status == {cstatus!r}")
        if reason:
            tests.append(f"{c}.reason == {reason!r}")
    return tests


def _expression_matches(e: Emitter, node: A.Node, expected: str) -> None:
    """``ok`` = the first output of the program ``node`` is the string ``expected``."""
    if isinstance(node, A.Pipe) and node.right == _TOSTRING:
        first = _first_output(e, node.left, "v")
        text = (
            f"({first} if {first}.__class__ is str else 'true' if {first} is True "
            f"else 'false' if {first} is False else _tostring({first}))"
        )
        e.line(f"ok = {first} is not _NONE and {text} == {expected!r}")
        return
    first = _first_output(e, node, "v")
    e.line(f"ok = {first} is not _NONE and {first} == {expected!r}")


_TOSTRING = A.Call("tostring")
