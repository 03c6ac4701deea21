"""The compiled-filter type of the fast path and the combinators every part of it builds with.

Owns :class:`Compiled` (the four entry points described in :mod:`karta.jq.fastpath`), the type
aliases of those entry points, :class:`Unsupported`, the compile-time :class:`Scope` (bound
variables, and whether the compilation is *metered*), the dispatch :func:`compile_child` that the
node compilers call for their children (the table of node compilers is filled by
:mod:`karta.jq.fastpath.driver`), and :func:`metered`, the wrapper that makes a compiled node
charge the current meter (:mod:`karta.jq.budget`). The combinators: a single-valued filter from
its ``one`` (:func:`single_valued`), the product of two or n filters' outputs (:func:`product2`,
:func:`product_n`), a function over a filter's outputs (:func:`map_outputs`), and the errors of
path mode (:func:`invalid_path`, :func:`no_paths`), which show a bounded prefix of the value.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from karta.jq import budget, operations
from karta.jq import syntax as A
from karta.jq._values import JqFail
from karta.jq.operations import json_prefix

if TYPE_CHECKING:
    from karta.jq.builtin_table import Fast

__all__ = [
    "EMPTY_ENV",
    "Compiled",
    "Env",
    "GenFn",
    "Handler",
    "ManyFn",
    "OneFn",
    "Path",
    "PathFn",
    "PathOut",
    "Scope",
    "Unsupported",
    "ValueFn",
    "compile_child",
    "identity_fn",
    "invalid_path",
    "map_outputs",
    "metered",
    "no_paths",
    "product2",
    "product_n",
    "short_text",
    "single_valued",
    "until_error",
    "value_function",
]

Env = dict[str, Any]
Path = tuple[Any, ...] | None
PathOut = list[tuple[Path, Any]]
ManyFn = Callable[[Any, Env], list[Any]]
OneFn = Callable[[Any, Env], Any]
GenFn = Callable[[Any, Env], Iterator[Any]]
PathFn = Callable[[Any, Path, Env], PathOut]
ValueFn = Callable[[Any], Any]

EMPTY_ENV: Env = {}


class Unsupported(Exception):
    """The expression uses something outside the fast-path subset."""


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


def single_valued(one: OneFn, *, paths: PathFn | None = None, fn: ValueFn | None = None) -> Compiled:
    if fn is not None:
        f = fn

        def many_fn(v: Any, env: Env) -> list[Any]:
            return [f(v)]

        return Compiled(many_fn, one=one, paths=paths, fn=fn)

    def many(v: Any, env: Env) -> list[Any]:
        return [one(v, env)]

    return Compiled(many, one=one, paths=paths)


def identity_fn(v: Any) -> Any:
    return v


def invalid_path(value: Any) -> JqFail:
    text = json_prefix(value, 31)
    if len(text) > 30:
        text = text[:27] + "..."
    return JqFail(f"Invalid path expression with result {text}")


# --- compiling ----------------------------------------------------------------------------------------


class Scope:
    """Names bound at a point of the program (variables only; user functions are unsupported),
    and whether the program is compiled metered (untrusted: every node charges the meter,
    ``$ENV`` and ``env`` are ``{}``)."""

    __slots__ = ("metered", "names")

    def __init__(self, names: frozenset[str] = frozenset(), *, metered: bool = False) -> None:
        self.names = names
        self.metered = metered

    def with_names(self, names: Sequence[str]) -> Scope:
        return Scope(self.names | frozenset(names), metered=self.metered)


Handler = Callable[[Any, Scope], Compiled]

#: Node class -> its compiler; filled once by :mod:`karta.jq.fastpath.driver`.
HANDLERS: dict[type, Handler] = {}


def compile_child(node: A.Node, scope: Scope) -> Compiled:
    """Compile one node (the node compilers call this for their children); metered, every node
    but the constant-time leaves charges the meter (:func:`metered`)."""
    handler = HANDLERS.get(type(node))
    if handler is None:
        raise Unsupported(type(node).__name__)
    compiled = handler(node, scope)
    if scope.metered and not _is_leaf(node):
        return metered(compiled)
    return compiled


def _is_leaf(node: A.Node) -> bool:
    """``.``, a literal, a variable or a constant field chain ``.a.b[0]``: constant work per
    evaluation and no children, so the evaluation of the parent pays for it."""
    while isinstance(node, A.Index) and isinstance(node.index, A.Literal):
        node = node.target
    if isinstance(node, A.Call):
        return not node.args and node.name in A.KEYWORD_CONSTANTS
    return isinstance(node, A.Identity | A.Literal | A.Var)


def metered(c: Compiled) -> Compiled:
    """``c``, charging the current meter one step per evaluation (every entry point) and one per
    output; the tank check in :meth:`karta.jq.budget.Meter.refill` raises on a breach."""
    cur = budget.local()
    many, gen, paths, one, fn = c.many, c.gen, c.paths, c.one, c.fn

    def m_many(v: Any, env: Env) -> list[Any]:
        out = many(v, env)
        m = cur.meter
        if m is not None:
            m.fuel -= 1 + len(out)
            if m.fuel < 0:
                m.refill()
        return out

    def m_gen(v: Any, env: Env) -> Iterator[Any]:
        m = cur.meter
        if m is None:
            yield from gen(v, env)
            return
        m.charge(1)
        for x in gen(v, env):
            m.fuel -= 1
            if m.fuel < 0:
                m.refill()
            yield x

    def m_paths(v: Any, path: Path, env: Env) -> PathOut:
        out = paths(v, path, env)
        m = cur.meter
        if m is not None:
            m.charge(1 + len(out))
        return out

    m_one: OneFn | None = None
    if one is not None:
        f1 = one

        def m_one(v: Any, env: Env) -> Any:
            x = f1(v, env)
            m = cur.meter
            if m is not None:
                m.fuel -= 1
                if m.fuel < 0:
                    m.refill()
            return x

    m_fn: ValueFn | None = None
    if fn is not None:
        f0 = fn

        def m_fn(v: Any) -> Any:
            x = f0(v)
            m = cur.meter
            if m is not None:
                m.fuel -= 1
                if m.fuel < 0:
                    m.refill()
            return x

    wrapped = Compiled(m_many, one=m_one, gen=m_gen, paths=m_paths, fn=m_fn)
    wrapped.is_path = c.is_path
    return wrapped


# --- combinators --------------------------------------------------------------------------------------


def product2(
    *,
    outer: Compiled,
    inner: Compiled,
    combine: Callable[[Any, Any], Any],
    paths: PathFn | None = None,
) -> Compiled:
    """Outputs ``combine(o, i)`` for each output o of ``outer`` (outer loop) and i of ``inner``."""
    oone, ione = outer.one, inner.one
    if oone is not None and ione is not None:

        def one(v: Any, env: Env) -> Any:
            return combine(oone(v, env), ione(v, env))

        return single_valued(one, paths=paths)
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


def product_n(operands: list[Compiled], build: Callable[[Sequence[Any]], Any]) -> Compiled:
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


def map_outputs(src: Compiled, fn: Callable[[Any], Any], *, paths: PathFn | None = None) -> Compiled:
    sone = src.one
    if sone is not None:

        def one(v: Any, env: Env) -> Any:
            return fn(sone(v, env))

        return single_valued(one, paths=paths)
    smany, sgen = src.many, src.gen

    def many(v: Any, env: Env) -> list[Any]:
        return [fn(x) for x in smany(v, env)]

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for x in sgen(v, env):
            yield fn(x)

    return Compiled(many, gen=gen, paths=paths)


def no_paths(what: str) -> PathFn:
    def paths(v: Any, path: Path, env: Env) -> PathOut:
        raise Unsupported(f"path mode of {what}")

    return paths


def short_text(x: Any) -> str:
    text = json_prefix(x, 31)
    return text if len(text) <= 30 else text[:27] + "..."


# The two helpers generated code reads at run time (karta.jq.generated_runtime), kept here so that
# running cached generated code never imports the compiler's modules (calls, operators, ...).


def until_error(gen: Iterator[Any]) -> list[Any]:
    """The outputs produced before the first error (gojq's ``//`` and ``try`` keep them)."""
    out: list[Any] = []
    try:
        for x in gen:
            out.append(x)
    except JqFail:
        pass
    return out


def value_function(fast: Fast) -> Callable[..., Any]:
    """The function of :mod:`karta.jq.operations` that runs a ``value`` or ``selector`` builtin."""
    fn: Callable[..., Any] = getattr(operations, fast.impl)
    return fn
