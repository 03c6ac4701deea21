"""Values and constructors of the fast path: literals, ``$variables``, ``[...]``, ``{...}``, string
interpolation and ``@format``s.

Owns the output order of constructors with generators inside (the first object entry, and the last
interpolation, is the outermost loop, as jq generates them) and the formats the fast path knows
(``@text``, ``@json``, ``@base64``). Metered (:mod:`karta.jq.budget`), ``[...]``, ``{...}`` and
string interpolation charge the array, object or string they build before building it (the
output cap and memory), the formats are the guarded ones of :mod:`karta.jq.operations`, and
``$ENV`` is ``{}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from karta.jq import budget
from karta.jq import syntax as A
from karta.jq._values import JqFail, norm_number, type_name
from karta.jq.builtin_table import PREDEFINED_VARIABLES
from karta.jq.fastpath.core import (
    Compiled,
    Env,
    Path,
    PathFn,
    PathOut,
    Scope,
    Unsupported,
    compile_child,
    product_n,
    single_valued,
)
from karta.jq.operations import base64_text, dumps, tostring

__all__ = ["c_array", "c_format", "c_literal", "c_object", "c_string", "c_var", "format_fn", "no_environment"]


def format_fn(name: str) -> Callable[[Any], str]:
    """The function of ``@name``; raises :class:`Unsupported` for the formats left to libjq."""
    if name == "text":
        return tostring
    if name == "json":
        return dumps
    if name == "base64":
        return base64_text
    raise Unsupported(f"format @{name}")


def c_literal(node: A.Node, scope: Scope) -> Compiled:
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
    return single_valued(one, paths=paths, fn=fn)


def c_var(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Var)
    name = node.name
    if name not in scope.names:
        variable = PREDEFINED_VARIABLES.get(name)
        if scope.metered and variable is not None and variable.effect == "environment":
            return no_environment()
        raise Unsupported(f"${name}")

    def one(v: Any, env: Env) -> Any:
        return env[name]

    return single_valued(one)


def no_environment() -> Compiled:
    """``$ENV`` and ``env`` of an untrusted definition: an empty object
    (docs/spec/format.md#expression-safety)."""

    def one(v: Any, env: Env) -> Any:
        return {}

    return single_valued(one)


_METER = budget.local()


def c_array(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.ArrayCons)
    if node.body is None:

        def empty_one(v: Any, env: Env) -> Any:
            return []

        return single_valued(empty_one)
    body = compile_child(node.body, scope)
    bmany = body.many
    if scope.metered:
        cur = _METER

        def metered_one(v: Any, env: Env) -> Any:
            out = bmany(v, env)
            m = cur.meter
            if m is not None:
                m.array(len(out))
            return out

        return single_valued(metered_one)

    def one(v: Any, env: Env) -> Any:
        return bmany(v, env)

    return single_valued(one)


def c_object(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.ObjectCons)
    parts: list[tuple[Compiled, Compiled]] = []
    for entry in node.entries:
        parts.append((compile_child(entry.key, scope), compile_child(entry.value, scope)))
    if all(k.one is not None and val.one is not None for k, val in parts):
        ones = [(k.one, val.one) for k, val in parts]

        charge = _charge_object if scope.metered else None

        def one(v: Any, env: Env) -> Any:
            if charge is not None:
                charge(len(ones))
            out: dict[str, Any] = {}
            for kf, vf in ones:
                assert kf is not None and vf is not None
                key = kf(v, env)
                if key.__class__ is not str:
                    raise JqFail(f"Object keys must be strings, not {type_name(key)}")
                out[key] = vf(v, env)
            return out

        return single_valued(one)

    flat: list[Compiled] = [c for pair in parts for c in pair]
    charge_built = _charge_object if scope.metered else None

    def build(values: Sequence[Any]) -> dict[str, Any]:
        if charge_built is not None:
            charge_built(len(values) // 2)
        out: dict[str, Any] = {}
        for i in range(0, len(values), 2):
            key = values[i]
            if key.__class__ is not str:
                raise JqFail(f"Object keys must be strings, not {type_name(key)}")
            out[key] = values[i + 1]
        return out

    return product_n(flat, build)


def _charge_object(entries: int) -> None:
    m = _METER.meter
    if m is not None:
        m.object(entries)


def _joined(parts: list[str]) -> str:
    """``"".join(parts)``, charged first when metered."""
    m = _METER.meter
    if m is not None:
        m.string(sum(map(len, parts)))
    return "".join(parts)


def c_string(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.StringInterp)
    fmt = format_fn(node.fmt) if node.fmt is not None else tostring
    pieces: list[str | Compiled] = [p if isinstance(p, str) else compile_child(p, scope) for p in node.parts]
    compiled = [p for p in pieces if not isinstance(p, str)]
    join = _joined if scope.metered else "".join
    if all(c.one is not None for c in compiled):

        def one(v: Any, env: Env) -> Any:
            out: list[str] = []
            for p in pieces:
                if isinstance(p, str):
                    out.append(p)
                else:
                    assert p.one is not None
                    out.append(fmt(p.one(v, env)))
            return join(out)

        return single_valued(one)

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
        return join(out)

    return product_n(reversed_ops, build)


def c_format(node: A.Node, scope: Scope) -> Compiled:
    assert isinstance(node, A.Format)
    fn = format_fn(node.name)

    def one(v: Any, env: Env) -> Any:
        return fn(v)

    return single_valued(one)
