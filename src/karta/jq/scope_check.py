"""The compile-time name check: what libjq would refuse to compile because a name is undefined.

Owns :func:`compile_check`: the first undefined function (``<name>/<arity> is not defined``),
undefined variable (``$<name> is not defined``) or unknown label in a syntax tree, resolving user
``def``s, their parameters, ``as`` bindings and ``reduce``/``foreach`` variables by jq's lexical
scoping rules. Builtins and predefined variables come from :mod:`karta.jq.builtin_table` (jq 1.8's
set, the libjq engine karta evaluates with). The walk is iterative, so it takes any tree the
parser builds. The model's expression validation reports the result as an error finding, and the
libjq engine raises it instead of compiling.

And :func:`gojq_check`: the first builtin, predefined variable or format that gojq, the engine of
the original implementation and KAI Scheduler (docs/spec/format.md#jq-dialect), does not define, in gojq's
own words (``function not defined: keys_unsorted/0``), with what to write instead. Every
evaluation refuses such an expression as a compile failure, as the original does, although
libjq could run it.
"""

from __future__ import annotations

from collections.abc import Callable

from karta.jq import syntax
from karta.jq.builtin_table import BUILTINS, FORMATS, GOJQ_HINTS, PREDEFINED_VARIABLES, is_builtin
from karta.jq.safety import direct_children, pattern_keys, pattern_variables

__all__ = ["compile_check", "free_variables", "gojq_check"]


class _Scope:
    """Functions (name/arity), variables and labels visible at a point of the tree."""

    __slots__ = ("funcs", "labels", "vars")

    def __init__(self, funcs: frozenset[tuple[str, int]], vars_: frozenset[str], labels: frozenset[str]):
        self.funcs = funcs
        self.vars = vars_
        self.labels = labels

    def with_vars(self, names: set[str] | frozenset[str]) -> _Scope:
        return _Scope(self.funcs, self.vars | names, self.labels) if names else self


def _children(node: syntax.Node, scope: _Scope) -> list[tuple[syntax.Node, _Scope]]:
    """The children of ``node`` with the scope each is checked in, in source order."""
    if isinstance(node, syntax.Label):
        return [(node.body, _Scope(scope.funcs, scope.vars, scope.labels | {node.name}))]
    if isinstance(node, syntax.FuncDef):
        own = (node.name, len(node.params))
        funcs = scope.funcs | {own}
        body_funcs = set(funcs)
        body_vars = set(scope.vars)
        for param in node.params:
            name = param[1:] if param.startswith("$") else param
            body_funcs.add((name, 0))
            if param.startswith("$"):
                body_vars.add(name)
        body_scope = _Scope(frozenset(body_funcs), frozenset(body_vars), scope.labels)
        return [(node.body, body_scope), (node.rest, _Scope(funcs, scope.vars, scope.labels))]
    if isinstance(node, syntax.Bind):
        out = [(node.source, scope)]
        out.extend((k, scope) for k in pattern_keys(node.patterns))
        out.append((node.body, scope.with_vars(pattern_variables(node.patterns))))
        return out
    if isinstance(node, syntax.Reduce | syntax.Foreach):
        out = [(node.source, scope)]
        out.extend((k, scope) for k in pattern_keys((node.pattern,)))
        out.append((node.init, scope))
        inner = scope.with_vars(pattern_variables((node.pattern,)))
        out.append((node.update, inner))
        if isinstance(node, syntax.Foreach) and node.extract is not None:
            out.append((node.extract, inner))
        return out
    return [(child, scope) for child in direct_children(node)]


def _problem(node: syntax.Node, scope: _Scope) -> str | None:
    if isinstance(node, syntax.Call):
        key = (node.name, len(node.args))
        if key not in scope.funcs and not is_builtin(*key):
            return f"{node.name}/{len(node.args)} is not defined"
    elif isinstance(node, syntax.Var):
        if node.name not in scope.vars and node.name not in PREDEFINED_VARIABLES:
            return f"${node.name} is not defined"
    elif isinstance(node, syntax.Break) and node.name not in scope.labels:
        return f"$*label-{node.name} is not defined"
    return None


def compile_check(node: syntax.Node, *, declared: frozenset[str] = frozenset()) -> str | None:
    """The compile error libjq would report for ``node`` (first in tree order), or None.

    ``declared``: variables bound around the whole expression (a definition's references,
    extension E3), defined everywhere in it.
    The caller raises ``failed to compile JQ expression '<e>': <detail>`` with the result.
    Import directives are not resolved (the safety check rejects them).
    """
    if isinstance(node, syntax.ModuleDirective):
        return None
    return _first(node, _problem, declared)


def free_variables(node: syntax.Node) -> frozenset[str]:
    """The variables ``node`` reads that nothing in it binds and jq does not predefine (``$x``
    outside any ``as $x``, ``reduce``/``foreach`` or ``def f($x)``): what must be bound around
    it (extension E3's references)."""
    found: set[str] = set()
    stack = [(node, _Scope(frozenset(), frozenset(), frozenset()))]
    while stack:
        n, scope = stack.pop()
        if isinstance(n, syntax.Var) and n.name not in scope.vars and n.name not in PREDEFINED_VARIABLES:
            found.add(n.name)
        stack.extend(_children(n, scope))
    return frozenset(found)


_PROCESS_HINT = (
    "definitions must not read or affect the evaluating process (docs/spec/format.md#expression-safety)"
)


def _gojq_problem(node: syntax.Node, scope: _Scope) -> str | None:
    """gojq's compile error for ``node`` and ours (what is missing, and what to write instead)."""
    if isinstance(node, syntax.Call):
        arity = len(node.args)
        builtin = BUILTINS.get(node.name)
        if builtin is None or (node.name, arity) in scope.funcs or not builtin.lacks_in_gojq(arity):
            return None
        theirs = (
            "input(s)/0 is not allowed"
            if node.name in ("input", "inputs")
            else (f"function not defined: {node.name}/{arity}")
        )
        return _gojq_detail(theirs, f"{node.name}/{arity}", GOJQ_HINTS.get(node.name, _PROCESS_HINT))
    if isinstance(node, syntax.Var):
        variable = PREDEFINED_VARIABLES.get(node.name)
        if variable is None or not variable.gojq_lacks or node.name in scope.vars:
            return None
        name = f"${node.name}"
        return _gojq_detail(f"variable not defined: {name}", name, GOJQ_HINTS.get(name, _PROCESS_HINT))
    fmt = node.name if isinstance(node, syntax.Format) else None
    if isinstance(node, syntax.StringInterp):
        fmt = node.fmt
    if fmt is not None and fmt not in FORMATS:
        name = f"@{fmt}"
        hint = GOJQ_HINTS.get(name, "use a format gojq has")
        return _gojq_detail(f"format not defined: {name}", name, hint)
    return None


def _gojq_detail(theirs: str, what: str, hint: str) -> str:
    return (
        f"{theirs} (karta: gojq, the jq of the original implementation and KAI Scheduler, has no {what}, "
        f"so they refuse this expression; hint: {hint})"
    )


def gojq_check(node: syntax.Node) -> str | None:
    """gojq's compile error for the first builtin, variable or format in ``node`` that gojq does
    not define (a user ``def`` of that name and arity is what gojq calls), with ours; or None.

    The caller raises ``failed to compile JQ expression '<e>': <detail>`` with the result."""
    if isinstance(node, syntax.ModuleDirective):
        return None
    return _first(node, _gojq_problem)


def _first(
    node: syntax.Node,
    problem_of: Callable[[syntax.Node, _Scope], str | None],
    declared: frozenset[str] = frozenset(),
) -> str | None:
    stack = [(node, _Scope(frozenset(), declared, frozenset()))]
    while stack:  # iterative pre-order: trees as deep as the parser allows
        n, scope = stack.pop()
        problem = problem_of(n, scope)
        if problem is not None:
            return problem
        stack.extend(reversed(_children(n, scope)))
    return None
