"""The compiled-filter type of the fast path and the combinators every part of it builds with.

Owns :class:`Compiled` (the four entry points described in :mod:`karta.jq.fastpath`), the type
aliases of those entry points, :class:`Unsupported`, the compile-time :class:`Scope`, and the
dispatch :func:`compile_child` that the node compilers call for their children (the table of
node compilers is filled by :mod:`karta.jq.fastpath.driver`). The combinators: a single-valued
filter from its ``one`` (:func:`single_valued`), the product of two or n filters' outputs
(:func:`product2`, :func:`product_n`), a function over a filter's outputs (:func:`map_outputs`),
and the errors of path mode (:func:`invalid_path`, :func:`no_paths`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from karta.jq import syntax as A
from karta.jq._values import JqFail, dumps

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
    "no_paths",
    "product2",
    "product_n",
    "short_text",
    "single_valued",
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
    text = dumps(value)
    if len(text) > 30:
        text = text[:27] + "..."
    return JqFail(f"Invalid path expression with result {text}")


# --- compiling ----------------------------------------------------------------------------------------


class Scope:
    """Names bound at a point of the program (variables only; user functions are unsupported)."""

    __slots__ = ("names",)

    def __init__(self, names: frozenset[str] = frozenset()) -> None:
        self.names = names

    def with_names(self, names: Sequence[str]) -> Scope:
        return Scope(self.names | frozenset(names))


Handler = Callable[[Any, Scope], Compiled]

#: Node class -> its compiler; filled once by :mod:`karta.jq.fastpath.driver`.
HANDLERS: dict[type, Handler] = {}


def compile_child(node: A.Node, scope: Scope) -> Compiled:
    """Compile one node (the node compilers call this for their children)."""
    handler = HANDLERS.get(type(node))
    if handler is None:
        raise Unsupported(type(node).__name__)
    return handler(node, scope)


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
    text = dumps(x)
    return text if len(text) <= 30 else text[:27] + "..."
