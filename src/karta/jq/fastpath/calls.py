"""Builtin calls in the fast path: the dispatch from ``name/arity`` to a compiled call, and the
builders of the builtins that take filters (``select``, ``map``, ``sort_by``, ``limit``, ...).

Which builtin runs how is said by the builtin table (:mod:`karta.jq.builtin_table`, ``fast``):
a value function of :mod:`karta.jq.operations` applied to the input (and to each output of the
argument), a selector, or a builder of this module, found by its name (``Fast.impl``) when this
module is imported. Every other call raises :class:`~karta.jq.fastpath.core.Unsupported`, except,
metered, the builtins that read the environment (``env``), which are ``{}``.

Budgets (:mod:`karta.jq.budget`): the arguments are compiled nodes, which charge the meter
themselves (a builder's loop over the input's elements calls them once per element); what the
builders build is charged before it is built: ``map`` and ``sort_by``/``group_by``/``unique_by``
an array of the input's length, ``map_values`` an array or object of it, ``with_entries`` its
entries (through :mod:`karta.jq.operations`); the sort keys of ``sort_by``, ``group_by``,
``unique_by``, ``min_by`` and ``max_by`` are walked first (:func:`~karta.jq.operations.sort_key`),
as ``limit``'s count is compared (:func:`~karta.jq.operations.compare`). ``add(f)``,
``first``/``last``, ``isempty``, ``any``/``all``, ``select``, ``error``, ``empty`` and ``getpath``
build nothing beyond what their value functions charge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from karta.jq import budget
from karta.jq import syntax as A
from karta.jq._values import JqFail, is_number, truthy, type_name
from karta.jq.builtin_table import BUILTINS
from karta.jq.fastpath.construct import c_literal, no_environment
from karta.jq.fastpath.core import (
    Compiled,
    Env,
    Path,
    PathOut,
    Scope,
    Unsupported,
    compile_child,
    invalid_path,
    product2,
    single_valued,
    value_function,
)
from karta.jq.fastpath.paths import c_identity, c_index
from karta.jq.operations import (
    BINARY_OPS,
    add_all,
    compare,
    describe,
    equal,
    from_entries,
    getpath_value,
    iterate_value,
    sort_key,
    to_entries,
)

__all__ = ["SUPPORTED", "c_call", "value_function"]

CallBuilder = Callable[[list[Compiled]], Compiled]


def c_call(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Call)
    name, nargs = node.name, len(node.args)
    if nargs == 0:
        if name in A.KEYWORD_CONSTANTS:
            return c_literal(A.Literal(A.KEYWORD_CONSTANTS[name]), scope)
        builder = _CALLS.get((name, 0))
        if builder is None:
            builtin = BUILTINS.get(name)
            if (
                scope.metered
                and builtin is not None
                and builtin.effect == "environment"
                and 0 in builtin.arities
            ):
                return no_environment()
            raise Unsupported(f"{name}/0")
        return builder([])
    args = [compile_child(a, scope) for a in node.args]
    builder = _CALLS.get((name, nargs))
    if builder is None:
        raise Unsupported(f"{name}/{nargs}")
    return builder(args)


def _value0(fn0: Callable[[Any], Any]) -> CallBuilder:
    def build(args: list[Compiled]) -> Compiled:
        def one0(v: Any, env: Env) -> Any:
            return fn0(v)

        return single_valued(one0, fn=fn0)

    return build


def _value1(fn1: Callable[[Any, Any], Any]) -> CallBuilder:
    def build(args: list[Compiled]) -> Compiled:
        return product2(
            outer=args[0], inner=c_identity(A.Identity(), Scope()), combine=lambda a, v: fn1(v, a)
        )

    return build


def _selector_builder(test: Callable[[Any], bool]) -> CallBuilder:
    def build(args: list[Compiled]) -> Compiled:
        return _selector(test)

    return build


def _selector(test: Callable[[Any], bool]) -> Compiled:
    def many(v: Any, env: Env) -> list[Any]:
        return [v] if test(v) else []

    def paths(v: Any, path: Path, env: Env) -> PathOut:
        return [(path, v)] if test(v) else []

    return Compiled(many, paths=paths)


def _empty_filter() -> Compiled:
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


def select(args: list[Compiled]) -> Compiled:
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


_METER = budget.local()


def _charge_array(n: int) -> None:
    m = _METER.meter
    if m is not None:
        m.array(n)


def map_each(args: list[Compiled]) -> Compiled:
    f = args[0]
    fone, fmany = f.one, f.many
    if fone is not None:

        def one1(v: Any, env: Env) -> Any:
            items = iterate_value(v)
            _charge_array(len(items))
            return [fone(x, env) for x in items]

        return single_valued(one1)

    def one(v: Any, env: Env) -> Any:
        out: list[Any] = []
        for x in iterate_value(v):
            out += fmany(x, env)
        _charge_array(len(out))
        return out

    return single_valued(one)


def map_values(args: list[Compiled]) -> Compiled:
    f = args[0]

    def first_of(x: Any, env: Env) -> tuple[bool, Any]:
        for y in f.gen(x, env):
            return True, y
        return False, None

    def one(v: Any, env: Env) -> Any:
        cls = v.__class__
        if cls is dict or cls is list:
            m = _METER.meter
            if m is not None:
                (m.object if cls is dict else m.array)(len(v))
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

    return single_valued(one)


def with_entries(args: list[Compiled]) -> Compiled:
    mapped = map_each(args)
    assert mapped.one is not None
    mone = mapped.one

    def one(v: Any, env: Env) -> Any:
        return from_entries(mone(to_entries(v), env))

    return single_valued(one)


def _by_keys(f: Compiled, v: Any, env: Env) -> list[tuple[tuple[Any, ...], Any]]:
    if v.__class__ is not list:
        raise JqFail(f"Cannot index {type_name(v)} with number")
    _charge_array(len(v))
    return [(sort_key(f.many(x, env)), x) for x in v]


def sort_by(args: list[Compiled]) -> Compiled:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        pairs = _by_keys(f, v, env)
        pairs.sort(key=lambda p: p[0])
        return [x for _, x in pairs]

    return single_valued(one)


def group_by(args: list[Compiled]) -> Compiled:
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

    return single_valued(one)


def unique_by(args: list[Compiled]) -> Compiled:
    grouped = group_by(args)
    assert grouped.one is not None
    gone = grouped.one

    def one(v: Any, env: Env) -> Any:
        return [g[0] for g in gone(v, env)]

    return single_valued(one)


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

    return single_valued(one)


def first_of(args: list[Compiled]) -> Compiled:
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


def last_of(args: list[Compiled]) -> Compiled:
    f = args[0]

    def many(v: Any, env: Env) -> list[Any]:
        outs = f.many(v, env)
        return outs[-1:]

    return Compiled(many)


def limit(args: list[Compiled]) -> Compiled:
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


def isempty(args: list[Compiled]) -> Compiled:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        for _ in f.gen(v, env):
            return False
        return True

    return single_valued(one)


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

        return single_valued(one_fn)

    def one(v: Any, env: Env) -> Any:
        source = iterate_value(v) if gen_c is None else gen_c.gen(v, env)
        for x in source:
            for c in cond.gen(x, env):
                if truthy(c) == is_any:
                    return is_any
        return not is_any

    return single_valued(one)


def add_of(args: list[Compiled]) -> Compiled:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        return add_all(f.many(v, env))

    return single_valued(one)


def error_of(args: list[Compiled]) -> Compiled:
    return _error(args[0])


def error(args: list[Compiled]) -> Compiled:
    return _error(None)


def empty(args: list[Compiled]) -> Compiled:
    return _empty_filter()


def first(args: list[Compiled]) -> Compiled:
    return c_index(_FIRST, Scope())


def last(args: list[Compiled]) -> Compiled:
    return c_index(_LAST, Scope())


_FIRST = A.Index(A.Identity(), A.Literal(0))
_LAST = A.Index(A.Identity(), A.Literal(-1))


def min_by(args: list[Compiled]) -> Compiled:
    return _minmax_by(args, want_max=False)


def max_by(args: list[Compiled]) -> Compiled:
    return _minmax_by(args, want_max=True)


def any_of(args: list[Compiled]) -> Compiled:
    return _any_all(args, is_any=True)


def all_of(args: list[Compiled]) -> Compiled:
    return _any_all(args, is_any=False)


_EQUAL = BINARY_OPS["=="]


def in_of(args: list[Compiled]) -> Compiled:
    """``IN(s)`` and ``IN(src; s)``: jq's library ``any(s == .; .)`` and ``any(src == s; .)``
    (:func:`karta.jq.syntax.library_call`), ``==``'s right operand the outer loop as in every
    binary operator; the first equal pair ends it, so a later error is never reached."""
    if len(args) == 1:
        source = args[0]

        def one(v: Any, env: Env) -> Any:
            return any(_EQUAL(x, v) for x in source.gen(v, env))

        return single_valued(one)
    left, right = args

    def one2(v: Any, env: Env) -> Any:
        for r in right.gen(v, env):
            for x in left.gen(v, env):
                if _EQUAL(x, r):
                    return True
        return False

    return single_valued(one2)


def getpath(args: list[Compiled]) -> Compiled:
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


def _resolve() -> dict[tuple[str, int], CallBuilder]:
    """``(name, arity)`` -> builder, for every arity the builtin table gives a ``fast`` entry."""
    builders: dict[str, Any] = globals()
    calls: dict[tuple[str, int], CallBuilder] = {}
    for builtin in BUILTINS.values():
        for arity, fast in builtin.fast.items():
            if fast.kind == "builder":
                calls[(builtin.name, arity)] = builders[fast.impl]
            elif fast.kind == "selector":
                calls[(builtin.name, arity)] = _selector_builder(value_function(fast))
            elif arity == 0:
                calls[(builtin.name, arity)] = _value0(value_function(fast))
            else:
                calls[(builtin.name, arity)] = _value1(value_function(fast))
    return calls


_CALLS: dict[tuple[str, int], CallBuilder] = _resolve()

#: Every ``(name, arity)`` the fast path compiles (read from the table; for tests and diagnostics).
SUPPORTED: frozenset[tuple[str, int]] = frozenset(_CALLS)
