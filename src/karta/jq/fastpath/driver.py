"""The compile driver of the fast path: which module compiles which node kind, and the entry points.

Owns :func:`compile_node` (a syntax tree to :class:`~karta.jq.fastpath.core.Compiled`, or
:class:`~karta.jq.fastpath.core.Unsupported`) and :func:`run_paths` (``[path(f)]``). Node kinds
without a compiler here (``..``, assignment, ``def``, ``label``, module directives) are outside the
subset.
"""

from __future__ import annotations

from typing import Any

from karta.jq import syntax as A
from karta.jq.fastpath import calls, construct, control, operators, paths
from karta.jq.fastpath.core import EMPTY_ENV, HANDLERS, Compiled, Scope, compile_child, invalid_path

__all__ = ["compile_node", "run_paths"]

HANDLERS.update(
    {
        A.Identity: paths.c_identity,
        A.Index: paths.c_index,
        A.Slice: paths.c_slice,
        A.Iterate: paths.c_iterate,
        A.Literal: construct.c_literal,
        A.Var: construct.c_var,
        A.ArrayCons: construct.c_array,
        A.ObjectCons: construct.c_object,
        A.StringInterp: construct.c_string,
        A.Format: construct.c_format,
        A.Pipe: operators.c_pipe,
        A.Comma: operators.c_comma,
        A.Binary: operators.c_binary,
        A.Neg: operators.c_neg,
        A.If: control.c_if,
        A.Try: control.c_try,
        A.Bind: control.c_bind,
        A.Reduce: control.c_reduce,
        A.Foreach: control.c_foreach,
        A.Call: calls.c_call,
    }
)


def compile_node(node: A.Node, *, metered: bool = False) -> Compiled:
    """Compile ``node``; raises :class:`~karta.jq.fastpath.core.Unsupported` outside the subset.
    ``metered``: the untrusted form, charging the current meter (:mod:`karta.jq.budget`)."""
    return compile_child(node, Scope(metered=metered))


def run_paths(compiled: Compiled, data: Any) -> list[list[Any]]:
    """``[path(f)]`` on ``data``; raises :class:`JqFail` for invalid paths."""
    out: list[list[Any]] = []
    for p, x in compiled.paths(data, (), EMPTY_ENV):
        if p is None:
            raise invalid_path(x)
        out.append(list(p))
    return out
