"""The fast path: compiles the common subset of the jq AST into Python closures over plain data.

Owns the subset's semantics (gojq flavour: objects iterate in sorted key order, integral numbers
behave as ints, ``a // b`` suppresses errors of ``a``). Anything outside the subset raises
:class:`Unsupported` at compile time and the evaluator falls back to libjq.

Every compiled node offers up to four entry points:

* ``many(v, env) -> list`` — all outputs, evaluated eagerly (the hot path);
* ``one(v, env) -> value`` — only for nodes that always yield exactly one output; composing these
  avoids building lists (``.spec.replicas // 1`` never allocates more than its result list);
* ``gen(v, env) -> iterator`` — lazy outputs, used where jq stops early (``first``, ``limit``,
  ``any``/``all``, ``isempty``) or must keep the outputs produced before an error (``try``, ``?``,
  ``//``). Eager evaluation raises exactly when lazy evaluation would raise at some point, so the
  lazy form is only consulted after an eager attempt failed or where jq short-circuits;
* ``paths(v, path, env) -> list[(path, value)]`` — jq's ``path(f)`` mode. ``path`` is ``None`` for
  values that are not locations (a literal, a computed value); using such a value as a path is
  the error ``Invalid path expression with result ...``, raised where jq raises it.

Outputs share structure with the input (no copies): callers must treat results as read-only.
Integral floats inside returned containers are left as they are (``3.0 == 3`` in Python); the
evaluator normalises top-level scalars.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from karta.jq import syntax as A
from karta.jq._builtins import (
    BINARY_OPS,
    SIMPLE_0,
    SIMPLE_1,
    TYPE_SELECTORS,
    Unsupported,
    add_all,
    format_fn,
    from_entries,
    getpath_value,
    index_value,
    iterate_value,
    num_result,
    slice_value,
    to_entries,
)
from karta.jq._values import (
    JqFail,
    compare,
    describe,
    dumps,
    equal,
    is_number,
    norm_number,
    sort_key,
    tostring,
    truthy,
    type_name,
)

__all__ = ["Compiled", "JqFail", "Unsupported", "compile_node"]

Env = dict[str, Any]
Path = tuple[Any, ...] | None
PathOut = list[tuple[Path, Any]]
ManyFn = Callable[[Any, Env], list[Any]]
OneFn = Callable[[Any, Env], Any]
GenFn = Callable[[Any, Env], Iterator[Any]]
PathFn = Callable[[Any, Path, Env], PathOut]
ValueFn = Callable[[Any], Any]

EMPTY_ENV: Env = {}


class Compiled:
    """One compiled jq filter (see the module docstring for the entry points).

    ``fn`` is set for single-output filters that do not read variables (``.a.b``, ``keys``, ``.``):
    ``fn(v) == one(v, env)``, one call cheaper, which the combinators use in their inner loops.
    """

    __slots__ = ("fn", "gen", "is_path", "many", "one", "paths")

    def __init__(
        self,
        many: ManyFn,
        *,
        one: OneFn | None = None,
        gen: GenFn | None = None,
        paths: PathFn | None = None,
        fn: ValueFn | None = None,
    ) -> None:
        self.many = many
        self.one = one
        self.fn = fn
        self.gen: GenFn = gen if gen is not None else _gen_from_many(many)
        self.is_path = paths is not None
        self.paths: PathFn = paths if paths is not None else _value_paths(many)


def _gen_from_many(many: ManyFn) -> GenFn:
    def gen(v: Any, env: Env) -> Iterator[Any]:
        # A real generator: errors surface on the first ``next``, where callers catch them.
        yield from many(v, env)

    return gen


def _value_paths(many: ManyFn) -> PathFn:
    """Path mode of a node that is not a path expression: its outputs are not locations."""

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        return [(None, x) for x in many(v, env)]

    return paths


def _single(one: OneFn, *, paths: PathFn | None = None, fn: ValueFn | None = None) -> Compiled:
    if fn is not None:
        f = fn

        def many_fn(v: Any, env: Env) -> list[Any]:
            return [f(v)]

        return Compiled(many_fn, one=one, paths=paths, fn=fn)

    def many(v: Any, env: Env) -> list[Any]:
        return [one(v, env)]

    return Compiled(many, one=one, paths=paths)


def _identity_fn(v: Any) -> Any:
    return v


def invalid_path(value: Any) -> JqFail:
    text = dumps(value)
    if len(text) > 30:
        text = text[:27] + "..."
    return JqFail(f"Invalid path expression with result {text}")


# --- the compiler ------------------------------------------------------------------------------------


class _Scope:
    """Names bound at a point of the program (variables only; user functions are unsupported)."""

    __slots__ = ("names",)

    def __init__(self, names: frozenset[str] = frozenset()) -> None:
        self.names = names

    def with_names(self, names: Sequence[str]) -> _Scope:
        return _Scope(self.names | frozenset(names))


def compile_node(node: A.Node) -> Compiled:
    """Compile ``node``; raises :class:`Unsupported` when it is outside the subset."""
    return _compile(node, _Scope())


def _compile(node: A.Node, scope: _Scope) -> Compiled:
    handler = _HANDLERS.get(type(node))
    if handler is None:
        raise Unsupported(type(node).__name__)
    return handler(node, scope)


def _c_identity(node: A.Node, scope: _Scope) -> Compiled:
    def one(v: Any, env: Env) -> Any:
        return v

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        return [(path, v)]

    return _single(one, paths=paths, fn=_identity_fn)


def _c_literal(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Literal)
    value = node.value
    if value.__class__ is float:
        value = norm_number(float(value))

    def one(v: Any, env: Env) -> Any:
        return value

    def fn(v: Any) -> Any:
        return value

    paths: PathFn | None = None
    if value is None:

        def null_paths(v: Any, path: Path, env: Env) -> PathOut:
            return [(path, None)]

        paths = null_paths
    return _single(one, paths=paths, fn=fn)


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


def _c_index(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Index)
    base, keys = _field_chain(node)
    if keys:
        get = _chain_one(keys)
        ks = tuple(keys)
        bc = _compile(base, scope)

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

            return _single(one, paths=chain_paths, fn=get)
        if bc.fn is not None:
            bfn = bc.fn

            def fn_b(v: Any) -> Any:
                return get(bfn(v))

            def one_fb(v: Any, env: Env) -> Any:
                return get(bfn(v))

            return _single(one_fb, paths=chain_paths, fn=fn_b)
        if bc.one is not None:
            bone = bc.one

            def one_b(v: Any, env: Env) -> Any:
                return get(bone(v, env))

            return _single(one_b, paths=chain_paths)
        bmany, bgen = bc.many, bc.gen

        def many(v: Any, env: Env) -> list[Any]:
            return [get(x) for x in bmany(v, env)]

        def gen(v: Any, env: Env) -> Iterator[Any]:
            for x in bgen(v, env):
                yield get(x)

        return Compiled(many, gen=gen, paths=chain_paths)

    target = _compile(node.target, scope)
    index = _compile(node.index, scope)
    # jq evaluates the index (outer loop) on the input of the whole expression, then the target.
    return _product2(
        index,
        target,
        lambda k, t: index_value(t, k),
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


def _product2(
    outer: Compiled,
    inner: Compiled,
    combine: Callable[[Any, Any], Any],
    *,
    paths: PathFn | None = None,
) -> Compiled:
    """Outputs ``combine(o, i)`` for each output o of ``outer`` (outer loop) and i of ``inner``."""
    oone, ione = outer.one, inner.one
    if oone is not None and ione is not None:

        def one(v: Any, env: Env) -> Any:
            return combine(oone(v, env), ione(v, env))

        return _single(one, paths=paths)
    omany, imany, ogen, igen = outer.many, inner.many, outer.gen, inner.gen

    def many(v: Any, env: Env) -> list[Any]:
        os_ = omany(v, env)
        if not os_:
            return []
        is_ = imany(v, env)
        return [combine(o, i) for o in os_ for i in is_]

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for o in ogen(v, env):
            for i in igen(v, env):
                yield combine(o, i)

    return Compiled(many, gen=gen, paths=paths)


def _c_slice(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Slice)
    target = _compile(node.target, scope)
    start = _compile(node.start, scope) if node.start is not None else _compile(A.Literal(None), scope)
    end = _compile(node.end, scope) if node.end is not None else _compile(A.Literal(None), scope)
    # Order: end outermost, then start, then the target (as jq generates it).
    bounds = _product2(end, start, lambda e, s: (s, e))
    return _product2(bounds, target, lambda se, t: slice_value(t, se[0], se[1]), paths=_no_paths("slice"))


def _no_paths(what: str) -> PathFn:
    def paths(v: Any, path: Path, env: Env) -> PathOut:
        raise Unsupported(f"path mode of {what}")

    return paths


def _c_iterate(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Iterate)
    target = _compile(node.target, scope)

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        out: PathOut = []
        for p, x in target.paths(v, path, env):
            if p is None:
                raise JqFail("Invalid path expression near attempt to iterate through " + _short(x))
            cls = x.__class__
            if cls is list:
                out.extend(((*p, i), y) for i, y in enumerate(x))
            elif cls is dict:
                out.extend(((*p, k), x[k]) for k in sorted(x))
            else:
                raise JqFail(f"Cannot iterate over {describe(x)}")
        return out

    if target.fn is not None:
        if target.fn is _identity_fn:

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


def _short(x: Any) -> str:
    text = dumps(x)
    return text if len(text) <= 30 else text[:27] + "..."


def _c_var(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Var)
    name = node.name
    if name not in scope.names:
        raise Unsupported(f"${name}")

    def one(v: Any, env: Env) -> Any:
        return env[name]

    return _single(one)


def _c_pipe(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Pipe)
    left = _compile(node.left, scope)
    right = _compile(node.right, scope)
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

        return _single(one_fn, paths=paths, fn=fn)
    if lone is not None and rone is not None:

        def one(v: Any, env: Env) -> Any:
            return rone(lone(v, env), env)

        return _single(one, paths=paths)
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

        def many_rfn(v: Any, env: Env) -> list[Any]:
            return [rfn(x) for x in lmany(v, env)]

        def gen_rfn(v: Any, env: Env) -> Iterator[Any]:
            for x in lgen(v, env):
                yield rfn(x)

        return Compiled(many_rfn, gen=gen_rfn, paths=paths)
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


def _c_comma(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Comma)
    left = _compile(node.left, scope)
    right = _compile(node.right, scope)
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


def _until_error(gen: Iterator[Any]) -> list[Any]:
    out: list[Any] = []
    try:
        for x in gen:
            out.append(x)
    except JqFail:
        pass
    return out


def _c_binary(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Binary)
    op = node.op
    left = _compile(node.left, scope)
    right = _compile(node.right, scope)
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

        return _single(one2, fn=fn2)
    # jq: the right operand is the outer loop.
    return _product2(right, left, lambda r, lv: fn(lv, r))


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

        single = _single(alt_one, fn=alt_fn)
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
                outs = _until_error(lgen(v, env))
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


def _c_neg(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Neg)
    operand = _compile(node.operand, scope)

    def neg(x: Any) -> Any:
        if not is_number(x):
            raise JqFail(f"{describe(x)} cannot be negated")
        return num_result(-x)

    return _map_outputs(operand, neg)


def _map_outputs(src: Compiled, fn: Callable[[Any], Any], *, paths: PathFn | None = None) -> Compiled:
    sone = src.one
    if sone is not None:

        def one(v: Any, env: Env) -> Any:
            return fn(sone(v, env))

        return _single(one, paths=paths)
    smany, sgen = src.many, src.gen

    def many(v: Any, env: Env) -> list[Any]:
        return [fn(x) for x in smany(v, env)]

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for x in sgen(v, env):
            yield fn(x)

    return Compiled(many, gen=gen, paths=paths)


def _c_array(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.ArrayCons)
    if node.body is None:

        def empty_one(v: Any, env: Env) -> Any:
            return []

        return _single(empty_one)
    body = _compile(node.body, scope)
    bmany = body.many

    def one(v: Any, env: Env) -> Any:
        return bmany(v, env)

    return _single(one)


def _c_object(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.ObjectCons)
    parts: list[tuple[Compiled, Compiled]] = []
    for entry in node.entries:
        parts.append((_compile(entry.key, scope), _compile(entry.value, scope)))
    if all(k.one is not None and val.one is not None for k, val in parts):
        ones = [(k.one, val.one) for k, val in parts]

        def one(v: Any, env: Env) -> Any:
            out: dict[str, Any] = {}
            for kf, vf in ones:
                assert kf is not None and vf is not None
                key = kf(v, env)
                if key.__class__ is not str:
                    raise JqFail(f"Object keys must be strings, not {type_name(key)}")
                out[key] = vf(v, env)
            return out

        return _single(one)

    flat: list[Compiled] = [c for pair in parts for c in pair]

    def build(values: Sequence[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i in range(0, len(values), 2):
            key = values[i]
            if key.__class__ is not str:
                raise JqFail(f"Object keys must be strings, not {type_name(key)}")
            out[key] = values[i + 1]
        return out

    return _product_n(flat, build)


def _product_n(operands: list[Compiled], build: Callable[[Sequence[Any]], Any]) -> Compiled:
    """Cartesian product with the first operand as the outermost loop."""

    def many(v: Any, env: Env) -> list[Any]:
        lists: list[list[Any]] = []
        for c in operands:
            outs = c.many(v, env)
            if not outs:
                return []
            lists.append(outs)
        return [build(combo) for combo in itertools.product(*lists)]

    def gen(v: Any, env: Env) -> Iterator[Any]:
        def rec(i: int, acc: list[Any]) -> Iterator[Any]:
            if i == len(operands):
                yield build(acc)
                return
            for x in operands[i].gen(v, env):
                yield from rec(i + 1, [*acc, x])

        return rec(0, [])

    return Compiled(many, gen=gen)


def _c_string(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.StringInterp)
    fmt = format_fn(node.fmt) if node.fmt is not None else tostring
    pieces: list[str | Compiled] = [p if isinstance(p, str) else _compile(p, scope) for p in node.parts]
    compiled = [p for p in pieces if not isinstance(p, str)]
    if all(c.one is not None for c in compiled):

        def one(v: Any, env: Env) -> Any:
            out: list[str] = []
            for p in pieces:
                if isinstance(p, str):
                    out.append(p)
                else:
                    assert p.one is not None
                    out.append(fmt(p.one(v, env)))
            return "".join(out)

        return _single(one)

    # jq loops over the last interpolation outermost.
    reversed_ops = list(reversed(compiled))

    def build(values: Sequence[Any]) -> str:
        vals = list(reversed(values))
        out: list[str] = []
        j = 0
        for p in pieces:
            if isinstance(p, str):
                out.append(p)
            else:
                out.append(fmt(vals[j]))
                j += 1
        return "".join(out)

    return _product_n(reversed_ops, build)


def _c_format(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Format)
    fn = format_fn(node.name)

    def one(v: Any, env: Env) -> Any:
        return fn(v)

    return _single(one)


def _c_if(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.If)
    cond = _compile(node.cond, scope)
    then = _compile(node.then, scope)
    if node.elifs:
        (c2, t2), rest = node.elifs[0], node.elifs[1:]
        otherwise = _compile(A.If(c2, t2, rest, node.else_), scope)
    elif node.else_ is not None:
        otherwise = _compile(node.else_, scope)
    else:
        otherwise = _compile(A.Identity(), scope)
    cone, cmany, cgen = cond.one, cond.many, cond.gen
    tone, eone = then.one, otherwise.one
    tpaths, epaths = then.paths, otherwise.paths

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        out: PathOut = []
        for c in cmany(v, env):
            out += tpaths(v, path, env) if truthy(c) else epaths(v, path, env)
        return out

    if cone is not None and tone is not None and eone is not None:

        def one(v: Any, env: Env) -> Any:
            c = cone(v, env)
            return tone(v, env) if c is not None and c is not False else eone(v, env)

        return _single(one, paths=paths)
    tmany, emany, tgen, egen = then.many, otherwise.many, then.gen, otherwise.gen

    def many(v: Any, env: Env) -> list[Any]:
        out: list[Any] = []
        for c in cmany(v, env):
            out += tmany(v, env) if truthy(c) else emany(v, env)
        return out

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for c in cgen(v, env):
            yield from (tgen(v, env) if truthy(c) else egen(v, env))

    return Compiled(many, gen=gen, paths=paths)


def _c_try(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Try)
    body = _compile(node.body, scope)
    handler = _compile(node.catch, scope) if node.catch is not None else None
    bmany, bgen = body.many, body.gen

    def many(v: Any, env: Env) -> list[Any]:
        try:
            return bmany(v, env)
        except JqFail:
            pass
        out: list[Any] = []
        try:
            for x in bgen(v, env):
                out.append(x)
        except JqFail as exc:
            if handler is not None:
                out += handler.many(exc.value, env)
        return out

    def gen(v: Any, env: Env) -> Iterator[Any]:
        it = bgen(v, env)
        while True:
            try:
                x = next(it)
            except StopIteration:
                return
            except JqFail as exc:
                if handler is not None:
                    yield from handler.gen(exc.value, env)
                return
            yield x

    bpaths = body.paths
    if handler is None:

        def paths(v: Any, path: Path, env: Env) -> PathOut:
            try:
                return bpaths(v, path, env)
            except JqFail:
                raise Unsupported("partial outputs of try in path mode") from None

        return Compiled(many, gen=gen, paths=paths)
    return Compiled(many, gen=gen, paths=_no_paths("try/catch"))


def _bind_pattern(pattern: A.Pattern, value: Any, env: Env) -> Env:
    if isinstance(pattern, A.VarPattern):
        new = dict(env)
        new[pattern.name] = value
        return new
    if isinstance(pattern, A.ArrayPattern):
        if value is not None and value.__class__ is not list:
            raise JqFail(f"Cannot index {type_name(value)} with number")
        for i, sub in enumerate(pattern.elements):
            env = _bind_pattern(sub, index_value(value, i), env)
        return env
    for entry in pattern.entries:
        if entry.key_var is not None:
            key: Any = entry.key_var
        else:
            assert isinstance(entry.key, A.Literal)
            key = entry.key.value
        if key.__class__ is not str:
            raise JqFail(f"Cannot index {type_name(value)} with {type_name(key)}")
        if value is not None and value.__class__ is not dict:
            raise JqFail(f"Cannot index {type_name(value)} with {dumps(key)}")
        field = index_value(value, key)
        if entry.key_var is not None:
            env = dict(env)
            env[entry.key_var] = field
        if entry.pattern is not None:
            env = _bind_pattern(entry.pattern, field, env)
    return env


def _pattern_names(pattern: A.Pattern) -> list[str]:
    if isinstance(pattern, A.VarPattern):
        return [pattern.name]
    if isinstance(pattern, A.ArrayPattern):
        return [n for p in pattern.elements for n in _pattern_names(p)]
    names: list[str] = []
    for entry in pattern.entries:
        if entry.key_var is None and not (
            isinstance(entry.key, A.Literal) and entry.key.value.__class__ is str
        ):
            raise Unsupported("computed keys in object patterns")
        if entry.key_var is not None:
            names.append(entry.key_var)
        if entry.pattern is not None:
            names.extend(_pattern_names(entry.pattern))
    return names


def _c_bind(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Bind)
    if len(node.patterns) != 1:
        raise Unsupported("?// alternative patterns")
    pattern = node.patterns[0]
    source = _compile(node.source, scope)
    body = _compile(node.body, scope.with_names(_pattern_names(pattern)))
    smany, sgen, bmany, bgen, bpaths = source.many, source.gen, body.many, body.gen, body.paths
    sone, bone = source.one, body.one
    if isinstance(pattern, A.VarPattern):
        name = pattern.name

        def bind(x: Any, env: Env) -> Env:
            new = dict(env)
            new[name] = x
            return new

    else:

        def bind(x: Any, env: Env) -> Env:
            return _bind_pattern(pattern, x, env)

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        out: PathOut = []
        for x in smany(v, env):
            out += bpaths(v, path, bind(x, env))
        return out

    if sone is not None and bone is not None:

        def one(v: Any, env: Env) -> Any:
            return bone(v, bind(sone(v, env), env))

        return _single(one, paths=paths)

    def many(v: Any, env: Env) -> list[Any]:
        out: list[Any] = []
        for x in smany(v, env):
            out += bmany(v, bind(x, env))
        return out

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for x in sgen(v, env):
            yield from bgen(v, bind(x, env))

    return Compiled(many, gen=gen, paths=paths)


def _c_reduce(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Reduce)
    source = _compile(node.source, scope)
    init = _compile(node.init, scope)
    update = _compile(node.update, scope.with_names(_pattern_names(node.pattern)))
    pattern = node.pattern

    def many(v: Any, env: Env) -> list[Any]:
        out: list[Any] = []
        for state in init.many(v, env):
            for x in source.many(v, env):
                outs = update.many(state, _bind_pattern(pattern, x, env))
                state = outs[-1] if outs else None
            out.append(state)
        return out

    return Compiled(many)


def _c_foreach(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Foreach)
    source = _compile(node.source, scope)
    init = _compile(node.init, scope)
    inner = scope.with_names(_pattern_names(node.pattern))
    update = _compile(node.update, inner)
    extract = _compile(node.extract, inner) if node.extract is not None else None
    pattern = node.pattern

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for state in init.gen(v, env):
            for x in source.gen(v, env):
                benv = _bind_pattern(pattern, x, env)
                for s in update.gen(state, benv):
                    state = s
                    if extract is None:
                        yield s
                    else:
                        yield from extract.gen(s, benv)

    def many(v: Any, env: Env) -> list[Any]:
        return list(gen(v, env))

    return Compiled(many, gen=gen)


# --- function calls -----------------------------------------------------------------------------------


def _c_call(node: A.Node, scope: _Scope) -> Compiled:
    assert isinstance(node, A.Call)
    name, nargs = node.name, len(node.args)
    if nargs == 0:
        if name in ("true", "false", "null"):
            return _c_literal(A.Literal({"true": True, "false": False, "null": None}[name]), scope)
        if name in SIMPLE_0:
            fn0 = SIMPLE_0[name]

            def one0(v: Any, env: Env) -> Any:
                return fn0(v)

            return _single(one0, fn=fn0)
        if name in TYPE_SELECTORS:
            return _selector(TYPE_SELECTORS[name])
        if name == "empty":
            return _empty()
        if name == "error":
            return _error(None)
        if name == "first":
            return _c_index(A.Index(A.Identity(), A.Literal(0)), scope)
        if name == "last":
            return _c_index(A.Index(A.Identity(), A.Literal(-1)), scope)
        raise Unsupported(f"{name}/0")
    args = [_compile(a, scope) for a in node.args]
    key = f"{name}/{nargs}"
    builder = _CALLS.get(key)
    if builder is not None:
        return builder(args)
    if nargs == 1 and name in SIMPLE_1:
        fn1 = SIMPLE_1[name]
        return _product2(args[0], _c_identity(node, scope), lambda a, v: fn1(v, a))
    raise Unsupported(key)


def _selector(test: Callable[[Any], bool]) -> Compiled:
    def many(v: Any, env: Env) -> list[Any]:
        return [v] if test(v) else []

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        return [(path, v)] if test(v) else []

    return Compiled(many, paths=paths)


def _empty() -> Compiled:
    def many(v: Any, env: Env) -> list[Any]:
        return []

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        return []

    return Compiled(many, paths=paths)


def _error(message: Compiled | None) -> Compiled:
    def many(v: Any, env: Env) -> list[Any]:
        if message is None:
            raise JqFail(v)
        for m in message.many(v, env):
            raise JqFail(m)
        return []

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        return many(v, env)  # raises or yields nothing

    return Compiled(many, paths=paths)


def _select(args: list[Compiled]) -> Compiled:
    cond = args[0]
    cone, cmany, cgen = cond.one, cond.many, cond.gen
    if cone is not None:

        def many1(v: Any, env: Env) -> list[Any]:
            c = cone(v, env)
            return [v] if c is not None and c is not False else []

        def paths1(v: Any, path: Path, env: Env) -> PathOut:
            c = cone(v, env)
            return [(path, v)] if c is not None and c is not False else []

        return Compiled(many1, paths=paths1)

    def many(v: Any, env: Env) -> list[Any]:
        return [v for c in cmany(v, env) if truthy(c)]

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for c in cgen(v, env):
            if truthy(c):
                yield v

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        return [(path, v) for c in cmany(v, env) if truthy(c)]

    return Compiled(many, gen=gen, paths=paths)


def _map(args: list[Compiled]) -> Compiled:
    f = args[0]
    fone, fmany = f.one, f.many
    if fone is not None:

        def one1(v: Any, env: Env) -> Any:
            return [fone(x, env) for x in iterate_value(v)]

        return _single(one1)

    def one(v: Any, env: Env) -> Any:
        out: list[Any] = []
        for x in iterate_value(v):
            out += fmany(x, env)
        return out

    return _single(one)


def _map_values(args: list[Compiled]) -> Compiled:
    f = args[0]

    def first_of(x: Any, env: Env) -> tuple[bool, Any]:
        for y in f.gen(x, env):
            return True, y
        return False, None

    def one(v: Any, env: Env) -> Any:
        cls = v.__class__
        if cls is dict:
            out: dict[str, Any] = {}
            for k in sorted(v):
                ok, y = first_of(v[k], env)
                if ok:
                    out[k] = y
            return out
        if cls is list:
            arr: list[Any] = []
            for x in v:
                ok, y = first_of(x, env)
                if ok:
                    arr.append(y)
            return arr
        raise JqFail(f"Cannot iterate over {describe(v)}")

    return _single(one)


def _with_entries(args: list[Compiled]) -> Compiled:
    mapped = _map(args)
    assert mapped.one is not None
    mone = mapped.one

    def one(v: Any, env: Env) -> Any:
        return from_entries(mone(to_entries(v), env))

    return _single(one)


def _by_keys(f: Compiled, v: Any, env: Env) -> list[tuple[tuple[Any, ...], Any]]:
    if v.__class__ is not list:
        raise JqFail(f"Cannot index {type_name(v)} with number")
    return [(sort_key(f.many(x, env)), x) for x in v]


def _sort_by(args: list[Compiled]) -> Compiled:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        pairs = _by_keys(f, v, env)
        pairs.sort(key=lambda p: p[0])
        return [x for _, x in pairs]

    return _single(one)


def _group_by(args: list[Compiled]) -> Compiled:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        pairs = _by_keys(f, v, env)
        pairs.sort(key=lambda p: p[0])
        groups: list[list[Any]] = []
        last: Any = object()
        for k, x in pairs:
            if groups and k == last:
                groups[-1].append(x)
            else:
                groups.append([x])
                last = k
        return groups

    return _single(one)


def _unique_by(args: list[Compiled]) -> Compiled:
    grouped = _group_by(args)
    assert grouped.one is not None
    gone = grouped.one

    def one(v: Any, env: Env) -> Any:
        return [g[0] for g in gone(v, env)]

    return _single(one)


def _minmax_by(args: list[Compiled], *, want_max: bool) -> Compiled:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        pairs = _by_keys(f, v, env)
        if not pairs:
            return None
        best = pairs[0]
        for p in pairs[1:]:
            if (p[0] >= best[0]) if want_max else (p[0] < best[0]):
                best = p
        return best[1]

    return _single(one)


def _first_of(args: list[Compiled]) -> Compiled:
    f = args[0]

    def many(v: Any, env: Env) -> list[Any]:
        for x in f.gen(v, env):
            return [x]
        return []

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        try:
            return f.paths(v, path, env)[:1]
        except JqFail:
            raise Unsupported("errors after the first path of first(f)") from None

    return Compiled(many, paths=paths)


def _last_of(args: list[Compiled]) -> Compiled:
    f = args[0]

    def many(v: Any, env: Env) -> list[Any]:
        outs = f.many(v, env)
        return outs[-1:]

    return Compiled(many)


def _limit(args: list[Compiled]) -> Compiled:
    n_c, f = args

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for n in n_c.gen(v, env):
            # jq 1.8 compares the count with its total order, then subtracts from it.
            if compare(n, 0) <= 0:
                if equal(n, 0):
                    continue
                raise JqFail("limit doesn't support negative count")
            if not is_number(n):
                # The subtraction happens per item of f: an empty f yields nothing, no error.
                for _ in f.gen(v, env):
                    raise JqFail(f"{describe(n)} and number (1) cannot be subtracted")
                continue
            for count, x in enumerate(f.gen(v, env), start=1):
                yield x
                if compare(count, n) >= 0:
                    break

    def many(v: Any, env: Env) -> list[Any]:
        return list(gen(v, env))

    return Compiled(many, gen=gen)


def _isempty(args: list[Compiled]) -> Compiled:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        for _ in f.gen(v, env):
            return False
        return True

    return _single(one)


def _any_all(args: list[Compiled], *, is_any: bool) -> Compiled:
    if len(args) == 1:
        gen_c: Compiled | None = None
        cond = args[0]
    else:
        gen_c, cond = args

    cfn = cond.fn
    if gen_c is None and cfn is not None:
        # The common ``any(.field > 0)``: one condition output per item, no generator per item.
        def one_fn(v: Any, env: Env) -> Any:
            for x in iterate_value(v):
                c = cfn(x)
                if (c is not None and c is not False) == is_any:
                    return is_any
            return not is_any

        return _single(one_fn)

    def one(v: Any, env: Env) -> Any:
        source = iterate_value(v) if gen_c is None else gen_c.gen(v, env)
        for x in source:
            for c in cond.gen(x, env):
                if truthy(c) == is_any:
                    return is_any
        return not is_any

    return _single(one)


def _add_of(args: list[Compiled]) -> Compiled:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        return add_all(f.many(v, env))

    return _single(one)


def _error1(args: list[Compiled]) -> Compiled:
    return _error(args[0])


def _getpath(args: list[Compiled]) -> Compiled:
    p_c = args[0]

    def many(v: Any, env: Env) -> list[Any]:
        return [getpath_value(v, p) for p in p_c.many(v, env)]

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        out: PathOut = []
        for p in p_c.many(v, env):
            if path is None:
                raise invalid_path(v)
            value = getpath_value(v, p)
            out.append(((*path, *p), value))
        return out

    return Compiled(many, paths=paths)


_CALLS: dict[str, Callable[[list[Compiled]], Compiled]] = {
    "select/1": _select,
    "map/1": _map,
    "map_values/1": _map_values,
    "with_entries/1": _with_entries,
    "sort_by/1": _sort_by,
    "group_by/1": _group_by,
    "unique_by/1": _unique_by,
    "min_by/1": lambda a: _minmax_by(a, want_max=False),
    "max_by/1": lambda a: _minmax_by(a, want_max=True),
    "first/1": _first_of,
    "last/1": _last_of,
    "limit/2": _limit,
    "isempty/1": _isempty,
    "any/1": lambda a: _any_all(a, is_any=True),
    "all/1": lambda a: _any_all(a, is_any=False),
    "any/2": lambda a: _any_all(a, is_any=True),
    "all/2": lambda a: _any_all(a, is_any=False),
    "add/1": _add_of,
    "error/1": _error1,
    "getpath/1": _getpath,
}


_HANDLERS: dict[type, Callable[[Any, _Scope], Compiled]] = {
    A.Identity: _c_identity,
    A.Literal: _c_literal,
    A.Index: _c_index,
    A.Slice: _c_slice,
    A.Iterate: _c_iterate,
    A.Var: _c_var,
    A.Pipe: _c_pipe,
    A.Comma: _c_comma,
    A.Binary: _c_binary,
    A.Neg: _c_neg,
    A.ArrayCons: _c_array,
    A.ObjectCons: _c_object,
    A.StringInterp: _c_string,
    A.Format: _c_format,
    A.If: _c_if,
    A.Try: _c_try,
    A.Bind: _c_bind,
    A.Reduce: _c_reduce,
    A.Foreach: _c_foreach,
    A.Call: _c_call,
}


def run_paths(compiled: Compiled, data: Any) -> list[list[Any]]:
    """``[path(f)]`` on ``data``; raises :class:`JqFail` for invalid paths."""
    out: list[list[Any]] = []
    for p, x in compiled.paths(data, (), EMPTY_ENV):
        if p is None:
            raise invalid_path(x)
        out.append(list(p))
    return out
