"""Control flow of the fast path: ``if``, ``try``/``?``, ``as`` bindings with destructuring,
``reduce`` and ``foreach``.

Owns the outputs ``try`` keeps before an error, destructuring with jq's errors, and the variables
each construct binds (the compile-time :class:`~karta.jq.fastpath.core.Scope`). ``label``/``break``
and ``?//`` alternatives are left to libjq. Metered, these build nothing of their own (a binding
copies the small variable map): the wrapper of each node charges its evaluations and outputs, which
bounds ``as`` fan-out and the ``reduce``/``foreach`` loops (their sources are charged nodes). A
budget breach is not a :class:`~karta.jq._values.JqFail`: ``try`` does not catch it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from karta.jq import syntax as A
from karta.jq._values import JqFail, truthy, type_name
from karta.jq.fastpath.core import (
    Compiled,
    Env,
    Path,
    PathOut,
    Scope,
    Unsupported,
    compile_child,
    no_paths,
    single_valued,
)
from karta.jq.operations import dumps, index_value

__all__ = ["c_bind", "c_foreach", "c_if", "c_reduce", "c_try"]


def c_if(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.If)
    cond = compile_child(node.cond, scope)
    then = compile_child(node.then, scope)
    if node.elifs:
        (c2, t2), rest = node.elifs[0], node.elifs[1:]
        otherwise = compile_child(A.If(c2, t2, rest, node.else_), scope)
    elif node.else_ is not None:
        otherwise = compile_child(node.else_, scope)
    else:
        otherwise = compile_child(A.Identity(), scope)
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

        return single_valued(one, paths=paths)
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


def c_try(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Try)
    body = compile_child(node.body, scope)
    handler = compile_child(node.catch, scope) if node.catch is not None else None
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
    return Compiled(many, gen=gen, paths=no_paths("try/catch"))


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


def c_bind(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Bind)
    if len(node.patterns) != 1:
        raise Unsupported("?// alternative patterns")
    pattern = node.patterns[0]
    source = compile_child(node.source, scope)
    body = compile_child(node.body, scope.with_names(_pattern_names(pattern)))
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

        return single_valued(one, paths=paths)

    def many(v: Any, env: Env) -> list[Any]:
        out: list[Any] = []
        for x in smany(v, env):
            out += bmany(v, bind(x, env))
        return out

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for x in sgen(v, env):
            yield from bgen(v, bind(x, env))

    return Compiled(many, gen=gen, paths=paths)


def c_reduce(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Reduce)
    source = compile_child(node.source, scope)
    init = compile_child(node.init, scope)
    update = compile_child(node.update, scope.with_names(_pattern_names(node.pattern)))
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


def c_foreach(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Foreach)
    source = compile_child(node.source, scope)
    init = compile_child(node.init, scope)
    inner = scope.with_names(_pattern_names(node.pattern))
    update = compile_child(node.update, inner)
    extract = compile_child(node.extract, inner) if node.extract is not None else None
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
