"""Operators of the fast path: ``|``, ``,``, arithmetic and comparisons, ``//``, ``and``/``or`` and
unary minus.

Owns their evaluation order (jq loops over the right operand of a binary operator outermost),
gojq's ``//`` (errors of the left side count as no output), and the specialisations of ``|`` for
single-valued sides (no lists built) and of ``to_entries[] | .key``. Metered, the wrapper of each
node charges its evaluations and outputs (``,`` and ``|`` build only output lists); the operators
are the functions of :mod:`karta.jq.operations`, which charge what they build and walk (``+``,
``-``, ``*`` and ``/`` on strings, arrays and objects; ``==`` and ``<`` on arrays and objects).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from karta.jq import syntax as A
from karta.jq._values import JqFail, is_number, truthy
from karta.jq.fastpath.core import (
    Compiled,
    Env,
    Path,
    PathFn,
    PathOut,
    Scope,
    Unsupported,
    compile_child,
    map_outputs,
    product2,
    single_valued,
    until_error,
)
from karta.jq.operations import BINARY_OPS, describe, num_result

__all__ = ["c_binary", "c_comma", "c_neg", "c_pipe", "until_error"]


def c_pipe(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Pipe)
    left = compile_child(node.left, scope)
    right = compile_child(node.right, scope)
    piped = _pipe(left, right)
    if node.left == _TO_ENTRIES_ITER and node.right == _DOT_KEY:
        return _entry_keys(piped)
    return piped


_TO_ENTRIES_ITER = A.Iterate(A.Call("to_entries"))
_DOT_KEY = A.Index(A.Identity(), A.Literal("key"))


def _entry_keys(generic: Compiled) -> Compiled:
    """``to_entries[] | .key`` without building the entries: sorted keys, or array indices."""
    generic_many = generic.many

    def many(v: Any, env: Env) -> list[Any]:
        cls = v.__class__
        if cls is dict:
            return sorted(v)
        if cls is list:
            return list(range(len(v)))
        return generic_many(v, env)  # raises to_entries' own error

    return Compiled(many, gen=generic.gen, paths=generic.paths if generic.is_path else None)


def _pipe(left: Compiled, right: Compiled) -> Compiled:
    lpaths, rpaths = left.paths, right.paths
    paths: PathFn | None = None
    if left.is_path or right.is_path:

        def pipe_paths(v: Any, path: Path, env: Env) -> PathOut:
            out: PathOut = []
            for p, x in lpaths(v, path, env):
                out.extend(rpaths(x, p, env))
            return out

        paths = pipe_paths
    lone, rone = left.one, right.one
    lfn, rfn = left.fn, right.fn
    if lfn is not None and rfn is not None:

        def fn(v: Any) -> Any:
            return rfn(lfn(v))

        def one_fn(v: Any, env: Env) -> Any:
            return rfn(lfn(v))

        return single_valued(one_fn, paths=paths, fn=fn)
    if lone is not None and rone is not None:

        def one(v: Any, env: Env) -> Any:
            return rone(lone(v, env), env)

        return single_valued(one, paths=paths)
    rmany, lgen, rgen = right.many, left.gen, right.gen
    if lfn is not None:

        def many_lfn(v: Any, env: Env) -> list[Any]:
            return rmany(lfn(v), env)

        def gen_lfn(v: Any, env: Env) -> Iterator[Any]:
            yield from rgen(lfn(v), env)

        return Compiled(many_lfn, gen=gen_lfn, paths=paths)
    if lone is not None:

        def many1(v: Any, env: Env) -> list[Any]:
            return rmany(lone(v, env), env)

        def gen1(v: Any, env: Env) -> Iterator[Any]:
            yield from rgen(lone(v, env), env)

        return Compiled(many1, gen=gen1, paths=paths)
    lmany = left.many
    if rfn is not None:
        return map_outputs(left, rfn, paths=paths)
    if rone is not None:

        def many_r1(v: Any, env: Env) -> list[Any]:
            return [rone(x, env) for x in lmany(v, env)]

        def gen_r1(v: Any, env: Env) -> Iterator[Any]:
            for x in lgen(v, env):
                yield rone(x, env)

        return Compiled(many_r1, gen=gen_r1, paths=paths)

    def many(v: Any, env: Env) -> list[Any]:
        out: list[Any] = []
        for x in lmany(v, env):
            out += rmany(x, env)
        return out

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for x in lgen(v, env):
            yield from rgen(x, env)

    return Compiled(many, gen=gen, paths=paths)


def c_comma(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Comma)
    left = compile_child(node.left, scope)
    right = compile_child(node.right, scope)
    lmany, rmany, lgen, rgen = left.many, right.many, left.gen, right.gen
    lpaths, rpaths = left.paths, right.paths

    def many(v: Any, env: Env) -> list[Any]:
        return lmany(v, env) + rmany(v, env)

    def gen(v: Any, env: Env) -> Iterator[Any]:
        yield from lgen(v, env)
        yield from rgen(v, env)

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        return lpaths(v, path, env) + rpaths(v, path, env)

    return Compiled(many, gen=gen, paths=paths)


def c_binary(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Binary)
    op = node.op
    left = compile_child(node.left, scope)
    right = compile_child(node.right, scope)
    if op == "//":
        return _alternative(left, right)
    if op in ("and", "or"):
        return _logic(left, right, is_and=op == "and")
    fn = BINARY_OPS.get(op)
    if fn is None:
        raise Unsupported(f"operator {op}")
    lfn, rfn = left.fn, right.fn
    if lfn is not None and rfn is not None:
        # Both sides single-valued: no product loop; the right operand still goes first.
        def fn2(v: Any) -> Any:
            r = rfn(v)
            return fn(lfn(v), r)

        def one2(v: Any, env: Env) -> Any:
            r = rfn(v)
            return fn(lfn(v), r)

        return single_valued(one2, fn=fn2)
    # jq: the right operand is the outer loop.
    return product2(outer=right, inner=left, combine=lambda r, lv: fn(lv, r))


def _alternative(left: Compiled, right: Compiled) -> Compiled:
    lone, lmany, lgen, rmany, rgen = left.one, left.many, left.gen, right.many, right.gen
    rone = right.one

    lfn, rfn = left.fn, right.fn
    single: Compiled | None = None
    if lfn is not None and rfn is not None:
        # ``.a.b // literal``: single-valued, so it composes without lists.
        def alt_fn(v: Any) -> Any:
            try:
                x = lfn(v)
            except JqFail:
                return rfn(v)
            if x is not None and x is not False:
                return x
            return rfn(v)

        def alt_one(v: Any, env: Env) -> Any:
            return alt_fn(v)

        single = single_valued(alt_one, fn=alt_fn)
    if lone is not None and rone is not None:

        def one_fast(v: Any, env: Env) -> list[Any]:
            try:
                x = lone(v, env)
            except JqFail:
                return [rone(v, env)]
            if x is not None and x is not False:
                return [x]
            return [rone(v, env)]

        many = one_fast
    else:

        def many(v: Any, env: Env) -> list[Any]:
            try:
                outs = lmany(v, env)
            except JqFail:
                outs = until_error(lgen(v, env))
            good = [x for x in outs if x is not None and x is not False]
            return good if good else rmany(v, env)

    def gen(v: Any, env: Env) -> Iterator[Any]:
        found = False
        it = lgen(v, env)
        while True:
            try:
                x = next(it)
            except (StopIteration, JqFail):
                break
            if x is not None and x is not False:
                found = True
                yield x
        if not found:
            yield from rgen(v, env)

    lpaths, rpaths = left.paths, right.paths

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        try:
            outs = lpaths(v, path, env)
        except JqFail:
            outs = []
        good = [(p, x) for p, x in outs if x is not None and x is not False]
        return good if good else rpaths(v, path, env)

    if single is not None:
        return Compiled(single.many, one=single.one, gen=gen, paths=paths, fn=single.fn)
    return Compiled(many, gen=gen, paths=paths)


def _logic(left: Compiled, right: Compiled, *, is_and: bool) -> Compiled:
    lmany, rmany, lgen, rgen = left.many, right.many, left.gen, right.gen

    def many(v: Any, env: Env) -> list[Any]:
        out: list[Any] = []
        rights: list[Any] | None = None
        for x in lmany(v, env):
            if truthy(x) != is_and:
                out.append(not is_and)
                continue
            if rights is None:
                rights = [truthy(r) for r in rmany(v, env)]
            out += rights
        return out

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for x in lgen(v, env):
            if truthy(x) != is_and:
                yield not is_and
                continue
            for r in rgen(v, env):
                yield truthy(r)

    return Compiled(many, gen=gen)


def c_neg(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Neg)
    operand = compile_child(node.operand, scope)

    def neg(x: Any) -> Any:
        if not is_number(x):
            raise JqFail(f"{describe(x)} cannot be negated")
        return num_result(-x)

    return map_outputs(operand, neg)
