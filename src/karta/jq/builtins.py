"""The table of jq builtin functions (name -> arities) and the compile-time name check.

The table is the builtin set of jq 1.8 (the libjq engine karta evaluates with), so that
:func:`compile_check` reports exactly the calls the engine would refuse to compile. It owns:

* :data:`BUILTIN_ARITIES` and :func:`is_builtin`;
* :func:`compile_check`: the first undefined function (``<name>/<arity> is not defined``),
  undefined variable (``$<name> is not defined``) or unknown label in a syntax tree, resolving
  user ``def``s, their parameters, ``as`` bindings and ``reduce``/``foreach`` variables by jq's
  lexical scoping rules.
"""

from __future__ import annotations

from typing import Final

from karta.jq import syntax
from karta.jq.safety import direct_children, pattern_keys, pattern_variables

__all__ = ["BUILTIN_ARITIES", "PREDEFINED_VARIABLES", "compile_check", "is_builtin"]

BUILTIN_ARITIES: Final[dict[str, tuple[int, ...]]] = {
    "IN": (1, 2),
    "INDEX": (1, 2),
    "JOIN": (2, 3, 4),
    "abs": (0,),
    "acos": (0,),
    "acosh": (0,),
    "add": (0, 1),
    "all": (0, 1, 2),
    "any": (0, 1, 2),
    "arrays": (0,),
    "ascii_downcase": (0,),
    "ascii_upcase": (0,),
    "asin": (0,),
    "asinh": (0,),
    "atan": (0,),
    "atan2": (2,),
    "atanh": (0,),
    "booleans": (0,),
    "bsearch": (1,),
    "builtins": (0,),
    "capture": (1, 2),
    "cbrt": (0,),
    "ceil": (0,),
    "combinations": (0, 1),
    "contains": (1,),
    "copysign": (2,),
    "cos": (0,),
    "cosh": (0,),
    "debug": (0, 1),
    "del": (1,),
    "delpaths": (1,),
    "drem": (2,),
    "empty": (0,),
    "endswith": (1,),
    "env": (0,),
    "erf": (0,),
    "erfc": (0,),
    "error": (0, 1),
    "exp": (0,),
    "exp10": (0,),
    "exp2": (0,),
    "explode": (0,),
    "expm1": (0,),
    "fabs": (0,),
    "fdim": (2,),
    "finites": (0,),
    "first": (0, 1),
    "flatten": (0, 1),
    "floor": (0,),
    "fma": (3,),
    "fmax": (2,),
    "fmin": (2,),
    "fmod": (2,),
    "format": (1,),
    "frexp": (0,),
    "from_entries": (0,),
    "fromdate": (0,),
    "fromdateiso8601": (0,),
    "fromjson": (0,),
    "fromstream": (1,),
    "gamma": (0,),
    "get_jq_origin": (0,),
    "get_prog_origin": (0,),
    "get_search_list": (0,),
    "getpath": (1,),
    "gmtime": (0,),
    "group_by": (1,),
    "gsub": (2, 3),
    "halt": (0,),
    "halt_error": (0, 1),
    "has": (1,),
    "have_decnum": (0,),
    "have_literal_numbers": (0,),
    "hypot": (2,),
    "implode": (0,),
    "in": (1,),
    "index": (1,),
    "indices": (1,),
    "infinite": (0,),
    "input": (0,),
    "input_filename": (0,),
    "input_line_number": (0,),
    "inputs": (0,),
    "inside": (1,),
    "isempty": (1,),
    "isfinite": (0,),
    "isinfinite": (0,),
    "isnan": (0,),
    "isnormal": (0,),
    "iterables": (0,),
    "j0": (0,),
    "j1": (0,),
    "jn": (2,),
    "join": (1,),
    "keys": (0,),
    "keys_unsorted": (0,),
    "last": (0, 1),
    "ldexp": (2,),
    "length": (0,),
    "lgamma": (0,),
    "lgamma_r": (0,),
    "limit": (2,),
    "localtime": (0,),
    "log": (0,),
    "log10": (0,),
    "log1p": (0,),
    "log2": (0,),
    "logb": (0,),
    "ltrim": (0,),
    "ltrimstr": (1,),
    "map": (1,),
    "map_values": (1,),
    "match": (1, 2),
    "max": (0,),
    "max_by": (1,),
    "min": (0,),
    "min_by": (1,),
    "mktime": (0,),
    "modf": (0,),
    "modulemeta": (0,),
    "nan": (0,),
    "nearbyint": (0,),
    "nextafter": (2,),
    "nexttoward": (2,),
    "normals": (0,),
    "not": (0,),
    "now": (0,),
    "nth": (1, 2),
    "nulls": (0,),
    "numbers": (0,),
    "objects": (0,),
    "path": (1,),
    "paths": (0, 1),
    "pick": (1,),
    "pow": (2,),
    "range": (1, 2, 3),
    "recurse": (0, 1, 2),
    "remainder": (2,),
    "repeat": (1,),
    "reverse": (0,),
    "rindex": (1,),
    "rint": (0,),
    "round": (0,),
    "rtrim": (0,),
    "rtrimstr": (1,),
    "scalars": (0,),
    "scalb": (2,),
    "scalbln": (2,),
    "scan": (1, 2),
    "select": (1,),
    "setpath": (2,),
    "significand": (0,),
    "sin": (0,),
    "sinh": (0,),
    "skip": (2,),
    "sort": (0,),
    "sort_by": (1,),
    "split": (1, 2),
    "splits": (1, 2),
    "sqrt": (0,),
    "startswith": (1,),
    "stderr": (0,),
    "strflocaltime": (1,),
    "strftime": (1,),
    "strings": (0,),
    "strptime": (1,),
    "sub": (2, 3),
    "tan": (0,),
    "tanh": (0,),
    "test": (1, 2),
    "tgamma": (0,),
    "to_entries": (0,),
    "toboolean": (0,),
    "todate": (0,),
    "todateiso8601": (0,),
    "tojson": (0,),
    "tonumber": (0,),
    "tostream": (0,),
    "tostring": (0,),
    "transpose": (0,),
    "trim": (0,),
    "trimstr": (1,),
    "trunc": (0,),
    "truncate_stream": (1,),
    "type": (0,),
    "unique": (0,),
    "unique_by": (1,),
    "until": (2,),
    "utf8bytelength": (0,),
    "values": (0,),
    "walk": (1,),
    "while": (2,),
    "with_entries": (1,),
    "y0": (0,),
    "y1": (0,),
    "yn": (2,),
}

PREDEFINED_VARIABLES: Final = frozenset({"ENV", "__loc__"})


def is_builtin(name: str, arity: int) -> bool:
    """True if ``name/arity`` is a jq builtin."""
    return arity in BUILTIN_ARITIES.get(name, ())


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
