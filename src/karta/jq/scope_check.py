"""The compile-time name check: what libjq would refuse to compile because a name is undefined.

Owns :func:`compile_check`: the first undefined function (``<name>/<arity> is not defined``),
undefined variable (``$<name> is not defined``) or unknown label in a syntax tree, resolving user
``def``s, their parameters, ``as`` bindings and ``reduce``/``foreach`` variables by jq's lexical
scoping rules. Builtins and predefined variables come from :mod:`karta.jq.builtin_table` (jq 1.8's
set, the libjq engine karta evaluates with).
"""

from __future__ import annotations

from karta.jq import syntax
from karta.jq.builtin_table import PREDEFINED_VARIABLES, is_builtin
from karta.jq.safety import direct_children, pattern_keys, pattern_variables

__all__ = ["compile_check"]


class _Undefined(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class _Scope:
    """Functions (name/arity), variables and labels visible at a point of the tree."""

    __slots__ = ("funcs", "labels", "vars")

    def __init__(self, funcs: frozenset[tuple[str, int]], vars_: frozenset[str], labels: frozenset[str]):
        self.funcs = funcs
        self.vars = vars_
        self.labels = labels

    def with_vars(self, names: set[str] | frozenset[str]) -> _Scope:
        return _Scope(self.funcs, self.vars | names, self.labels) if names else self


def _check(node: syntax.Node, scope: _Scope) -> None:
    if isinstance(node, syntax.Call):
        key = (node.name, len(node.args))
        if key not in scope.funcs and not is_builtin(*key):
            raise _Undefined(f"{node.name}/{len(node.args)} is not defined")
        for arg in node.args:
            _check(arg, scope)
    elif isinstance(node, syntax.Var):
        if node.name not in scope.vars and node.name not in PREDEFINED_VARIABLES:
            raise _Undefined(f"${node.name} is not defined")
    elif isinstance(node, syntax.Break):
        if node.name not in scope.labels:
            raise _Undefined(f"$*label-{node.name} is not defined")
    elif isinstance(node, syntax.Label):
        _check(node.body, _Scope(scope.funcs, scope.vars, scope.labels | {node.name}))
    elif isinstance(node, syntax.FuncDef):
        own = (node.name, len(node.params))
        funcs = scope.funcs | {own}
        body_funcs = set(funcs)
        body_vars = set(scope.vars)
        for param in node.params:
            name = param[1:] if param.startswith("$") else param
            body_funcs.add((name, 0))
            if param.startswith("$"):
                body_vars.add(name)
        _check(node.body, _Scope(frozenset(body_funcs), frozenset(body_vars), scope.labels))
        _check(node.rest, _Scope(funcs, scope.vars, scope.labels))
    elif isinstance(node, syntax.Bind):
        _check(node.source, scope)
        for k in pattern_keys(node.patterns):
            _check(k, scope)
        _check(node.body, scope.with_vars(pattern_variables(node.patterns)))
    elif isinstance(node, syntax.Reduce | syntax.Foreach):
        _check(node.source, scope)
        for k in pattern_keys((node.pattern,)):
            _check(k, scope)
        _check(node.init, scope)
        inner = scope.with_vars(pattern_variables((node.pattern,)))
        _check(node.update, inner)
        if isinstance(node, syntax.Foreach) and node.extract is not None:
            _check(node.extract, inner)
    else:
        for child in direct_children(node):
            _check(child, scope)


def compile_check(node: syntax.Node) -> str | None:
    """The compile error libjq would report for ``node`` (first in tree order), or None.

    The caller raises ``failed to compile JQ expression '<e>': <detail>`` with the result.
    Import directives are not resolved (the safety check rejects them).
    """
    if isinstance(node, syntax.ModuleDirective):
        return None
    try:
        _check(node, _Scope(frozenset(), frozenset(), frozenset()))
    except _Undefined as exc:
        return exc.detail
    except RecursionError:
        return "expression is nested too deeply"
    return None
