"""Path expressions of the fast path: ``.``, indexing and field chains, slices and ``.[]``.

Owns their values and their path mode (``path(f)``): constant field chains (``.a.b.c``) compile to
one function with the null-safe dict reads inlined; a computed index loops over the index outputs
first, as jq does. Metered: constant field chains and ``.`` are leaves (constant work, paid for by
their parent); ``.[]`` and computed indices are charged per evaluation and output by their
wrapper; slices charge the copy they make (:func:`~karta.jq.operations.slice_value`); an array
index into an array (``.[[1]]``) charges the comparisons it makes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from karta.jq import syntax as A
from karta.jq._values import JqFail, is_number
from karta.jq.fastpath.core import (
    Compiled,
    Env,
    Path,
    PathFn,
    PathOut,
    Scope,
    compile_child,
    identity_fn,
    map_outputs,
    no_paths,
    product2,
    short_text,
    single_valued,
)
from karta.jq.operations import describe, dumps, index_value, iterate_value, slice_value

__all__ = ["c_identity", "c_index", "c_iterate", "c_slice"]


def c_identity(node: A.Node, scope: Scope) -> Compiled:
    def one(v: Any, env: Env) -> Any:
        return v

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        return [(path, v)]

    return single_valued(one, paths=paths, fn=identity_fn)


def _field_chain(node: A.Node) -> tuple[A.Node, list[Any]]:
    """Split ``base.k1.k2...`` (constant keys) into the base node and the key list."""
    keys: list[Any] = []
    while isinstance(node, A.Index) and isinstance(node.index, A.Literal):
        key = node.index.value
        if key.__class__ is not str and not is_number(key):
            break
        keys.append(key)
        node = node.target
    keys.reverse()
    return node, keys


def _chain_one(keys: list[Any]) -> Callable[[Any], Any]:
    if len(keys) == 1 and keys[0].__class__ is str:
        k0 = keys[0]

        def get1(v: Any) -> Any:
            if v.__class__ is dict:
                return v.get(k0)
            if v is None:
                return None
            return index_value(v, k0)

        return get1
    if len(keys) == 2 and all(k.__class__ is str for k in keys):
        ka, kb = keys

        def get2(v: Any) -> Any:
            if v.__class__ is dict:
                v = v.get(ka)
            elif v is None:
                return None
            else:
                return index_value(v, ka)
            if v.__class__ is dict:
                return v.get(kb)
            if v is None:
                return None
            return index_value(v, kb)

        return get2
    if len(keys) == 3 and all(k.__class__ is str for k in keys):
        first = _chain_one(keys[:2])
        kc = keys[2]

        def get3(v: Any) -> Any:
            v = first(v)
            if v.__class__ is dict:
                return v.get(kc)
            if v is None:
                return None
            return index_value(v, kc)

        return get3
    if all(k.__class__ is str for k in keys):
        ks = tuple(keys)

        def getn(v: Any) -> Any:
            for k in ks:
                if v.__class__ is dict:
                    v = v.get(k)
                elif v is None:
                    return None
                else:
                    return index_value(v, k)
            return v

        return getn
    ks = tuple(keys)

    def getmixed(v: Any) -> Any:
        for k in ks:
            v = index_value(v, k)
        return v

    return getmixed


def c_index(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Index)
    base, keys = _field_chain(node)
    if keys:
        get = _chain_one(keys)
        ks = tuple(keys)
        bc = compile_child(base, scope)

        def chain_paths(v: Any, path: Path, env: Env) -> PathOut:
            out: PathOut = []
            for p, x in bc.paths(v, path, env):
                for k in ks:
                    if p is None:
                        raise JqFail(f"Invalid path expression near attempt to access element {dumps(k)}")
                    x = index_value(x, k)
                    p = (*p, k)
                out.append((p, x))
            return out

        if isinstance(base, A.Identity):

            def one(v: Any, env: Env) -> Any:
                return get(v)

            return single_valued(one, paths=chain_paths, fn=get)
        if bc.fn is not None:
            bfn = bc.fn

            def fn_b(v: Any) -> Any:
                return get(bfn(v))

            def one_fb(v: Any, env: Env) -> Any:
                return get(bfn(v))

            return single_valued(one_fb, paths=chain_paths, fn=fn_b)
        if bc.one is not None:
            bone = bc.one

            def one_b(v: Any, env: Env) -> Any:
                return get(bone(v, env))

            return single_valued(one_b, paths=chain_paths)
        return map_outputs(bc, get, paths=chain_paths)

    target = compile_child(node.target, scope)
    index = compile_child(node.index, scope)
    # jq evaluates the index (outer loop) on the input of the whole expression, then the target.
    return product2(
        outer=index,
        inner=target,
        combine=lambda k, t: index_value(t, k),
        paths=_index_paths(target, index),
    )


def _index_paths(target: Compiled, index: Compiled) -> PathFn:
    def paths(v: Any, path: Path, env: Env) -> PathOut:
        out: PathOut = []
        for k in index.many(v, env):
            for p, x in target.paths(v, path, env):
                if p is None:
                    raise JqFail(f"Invalid path expression near attempt to access element {dumps(k)}")
                out.append(((*p, k), index_value(x, k)))
        return out

    return paths


def c_slice(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Slice)
    target = compile_child(node.target, scope)
    start = (
        compile_child(node.start, scope) if node.start is not None else compile_child(A.Literal(None), scope)
    )
    end = compile_child(node.end, scope) if node.end is not None else compile_child(A.Literal(None), scope)
    # Order: end outermost, then start, then the target (as jq generates it).
    bounds = product2(outer=end, inner=start, combine=lambda e, s: (s, e))
    return product2(
        outer=bounds,
        inner=target,
        combine=lambda se, t: slice_value(t, se[0], se[1]),
        paths=no_paths("slice"),
    )


def c_iterate(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Iterate)
    target = compile_child(node.target, scope)

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        out: PathOut = []
        for p, x in target.paths(v, path, env):
            if p is None:
                raise JqFail("Invalid path expression near attempt to iterate through " + short_text(x))
            cls = x.__class__
            if cls is list:
                out.extend(((*p, i), y) for i, y in enumerate(x))
            elif cls is dict:
                out.extend(((*p, k), x[k]) for k in sorted(x))
            else:
                raise JqFail(f"Cannot iterate over {describe(x)}")
        return out

    if target.fn is not None:
        if target.fn is identity_fn:

            def many_id(v: Any, env: Env) -> list[Any]:
                return iterate_value(v)

            return Compiled(many_id, paths=paths)
        tfn = target.fn

        def many_fn(v: Any, env: Env) -> list[Any]:
            return iterate_value(tfn(v))

        return Compiled(many_fn, paths=paths)
    if target.one is not None:
        tone = target.one

        def many1(v: Any, env: Env) -> list[Any]:
            return iterate_value(tone(v, env))

        return Compiled(many1, paths=paths)
    tmany, tgen = target.many, target.gen

    def many(v: Any, env: Env) -> list[Any]:
        out: list[Any] = []
        for x in tmany(v, env):
            out.extend(iterate_value(x))
        return out

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for x in tgen(v, env):
            yield from iterate_value(x)

    return Compiled(many, gen=gen, paths=paths)
