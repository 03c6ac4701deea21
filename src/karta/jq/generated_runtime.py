"""What generated code reads when it runs, and how a cached generated function's constants are
made again: everything of the generated code that :mod:`karta.jq.codegen` (the generator) is not
needed for, so that a command running cached code (karta._codegen's definition cache) never
imports the generators.

:data:`BASE_NAMESPACE` is the namespace every generated function starts from. :func:`restore`
makes a function's constants again from their *recipes* (plain data, kept beside its code):
``("value", data)`` (JSON-like data, kept as is), ``("enum", module, class, member)`` (a member of
an enum of karta), ``("binary", op)`` (an operator of :data:`karta.jq.operations.BINARY_OPS`),
``("builtin", name, arity)`` (a value builtin's function) and ``("closure", jq text, variables,
attribute)`` (an attribute of the fast-path closure of a jq text, compiled with those variables
bound). A generator whose code holds objects of its own passes ``extra``, which resolves its own
recipes (:mod:`karta.extract.cached`: a conversion target's checker). Nothing else is accepted; a
recipe that no longer resolves raises ValueError.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from karta.jq._values import JqFail
from karta.jq.fastpath.core import EMPTY_ENV, until_error, value_function
from karta.jq.operations import BINARY_OPS, index_value, iterate_value

__all__ = ["BASE_NAMESPACE", "expression_key", "load_function", "load_table", "plain_recipe", "restore"]


def _iterate(v: Any) -> Any:
    cls = v.__class__
    if cls is list:
        return v
    if cls is dict:
        return iterate_value(v)
    # Generated code reports no error (the closures re-run for the message): no message to build,
    # and ``.[]?`` on a missing field is common.
    raise JqFail("Cannot iterate")


def _entry_keys(v: Any) -> list[Any]:
    """``to_entries[] | .key`` without the entries; anything else is left to the closures."""
    cls = v.__class__
    if cls is dict:
        return sorted(v)
    if cls is list:
        return list(range(len(v)))
    raise JqFail("to_entries of a scalar")


_UNSET: Any = object()  # a memoised binding not computed yet (Emitter.memoise)


class _Stop(Exception):
    """Raised by generated code to leave every loop of a short-circuiting builtin at once
    (``any(g; c)``, ``first(f)``); never escapes the function that raises it."""


BASE_NAMESPACE: dict[str, Any] = {
    "JqFail": JqFail,
    "_Stop": _Stop,
    "_UNSET": _UNSET,
    "_ENV": EMPTY_ENV,
    "_index": index_value,
    "_iterate": _iterate,
    "_entry_keys": _entry_keys,
    "_until_error": until_error,
}


_PLAIN_SCALARS = (str, int, float, bool, type(None))


def _plain(value: Any, depth: int = 0) -> bool:
    """JSON-like data only (exact classes; str keys), not too deep for marshal."""
    cls = value.__class__
    if cls in _PLAIN_SCALARS:
        return True
    if depth > 100:
        return False
    if cls is list or cls is tuple:
        return all(_plain(item, depth + 1) for item in value)
    if cls is dict:
        return all(key.__class__ is str and _plain(item, depth + 1) for key, item in value.items())
    return False


def plain_recipe(value: Any) -> tuple[Any, ...] | None:
    """The recipe of a constant needing no name: plain data (kept as is) or an enum member."""
    if _plain(value):
        return ("value", value)
    import enum

    if isinstance(value, enum.Enum):
        cls = value.__class__
        if "<" not in cls.__qualname__ and "." not in cls.__qualname__:
            return ("enum", cls.__module__, cls.__qualname__, value.name)
    return None


def restore(recipes: Any, extra: Callable[[tuple[Any, ...]], Any] | None = None) -> dict[str, Any]:
    """The constants a generated function's namespace held, made again from their recipes
    (:attr:`Emitter.recipes`, read back from karta._codegen's definition cache); raises
    ValueError for anything that is not a recipe, or one that no longer resolves (the caller
    generates instead). ``extra`` resolves the recipes this module does not know (raising
    ValueError for anything it does not know either)."""
    import importlib

    if recipes.__class__ is not dict:
        raise ValueError("not a recipe table")
    out: dict[str, Any] = {}
    for name, recipe in recipes.items():
        if name.__class__ is not str or recipe.__class__ is not tuple or not recipe:
            raise ValueError(f"not a recipe: {name!r}")
        tag, args = recipe[0], recipe[1:]
        if tag == "value" and len(args) == 1 and _plain(args[0]):
            value = args[0]
        elif tag == "enum" and len(args) == 3 and all(a.__class__ is str for a in args):
            module, qualname, member = args
            if not module.startswith("karta."):
                raise ValueError(f"enum outside karta: {module}")
            loaded = sys.modules.get(module) or importlib.import_module(module)
            value = getattr(loaded, qualname)[member]
        elif tag == "binary" and len(args) == 1 and args[0] in BINARY_OPS:
            value = BINARY_OPS[args[0]]
        elif tag == "builtin" and len(args) == 2 and args[0].__class__ is str and args[1].__class__ is int:
            from karta.jq.builtin_table import fast_of  # the table is for this recipe alone

            fast = fast_of(args[0], args[1])
            if fast is None or fast.kind != "value":
                raise ValueError(f"not a value builtin: {args[0]}/{args[1]}")
            value = value_function(fast)
        elif tag == "closure" and len(args) == 3 and args[0].__class__ is str and args[1].__class__ is tuple:
            from karta.jq.fastpath import compile_node
            from karta.jq.fastpath.core import Scope, compile_child
            from karta.jq.parser import parse

            text, names, attr = args
            if attr not in ("fn", "one", "many", "gen") or not all(n.__class__ is str for n in names):
                raise ValueError(f"not a closure recipe: {recipe!r}")
            node = parse(text)
            compiled = compile_child(node, Scope(frozenset(names))) if names else compile_node(node)
            value = getattr(compiled, attr)
            if value is None:
                raise ValueError(f"no {attr} for {text}")
        elif extra is not None:
            value = extra(recipe)
        else:
            raise ValueError(f"not a recipe: {recipe!r}")
        out[name] = value
    return out


def load_function(
    key: str,
    fixed: dict[str, Any],
    name: str,
    what: str,
    extra: Callable[[tuple[Any, ...]], Any] | None = None,
) -> Any:
    """The function ``name`` of the definition cache's entry ``key``, run in
    :data:`BASE_NAMESPACE`, the generator's ``fixed`` names and the constants its recipes make
    again (``extra``: see :func:`restore`); None for a miss, or an entry whose constants do not
    resolve or whose code does not define ``name`` (then the caller generates it, and the entry
    is written again)."""
    from karta import _codegen as codegen

    entry = codegen.load_definition(key)
    if entry is None:
        return None
    code, recipes, source = entry
    try:
        namespace = dict(BASE_NAMESPACE)
        namespace.update(fixed)
        namespace.update(restore(recipes, extra))
        namespace["__source__"] = source
        codegen.run_code(code, source, namespace, what=what)
        fn = namespace.get(name)
    except Exception:  # a foreign or outdated entry: generate
        return None
    return fn if callable(fn) else None


def expression_key(expression: str) -> str | None:
    """The definition cache's key of the generated function of a jq ``expression`` (its text is
    all the function depends on), or None when the cache is off."""
    from karta import _codegen as codegen

    return codegen.definition_key("jq", expression)


def load_table(key: str, what: str) -> dict[str, Callable[[Any], list[Any]]] | None:
    """The functions of many expressions by text that the definition cache's entry ``key`` holds
    (:func:`karta.jq.codegen.generate_table` wrote it), or None for a miss or an entry that is not
    such a table (then the caller generates it, and the entry is written again)."""
    table = load_function(key, {}, "table", what)
    if table is None:
        return None
    try:
        functions = table()
    except Exception:  # a foreign entry: generate
        return None
    if functions.__class__ is not dict or not all(
        text.__class__ is str and callable(fn) for text, fn in functions.items()
    ):
        return None
    return functions
