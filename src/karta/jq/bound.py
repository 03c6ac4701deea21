"""Evaluation with variables bound around every expression: a definition's references
(extension E3, docs/format-extensions.md), ``$<name>`` in each of its expressions.

Owns :class:`BoundEvaluator`, an :class:`~karta.jq.Evaluator` whose expressions see ``$name`` for
every binding. It binds by rewriting, so that every engine karta has (the fast-path closures, the
generated code, libjq in-process and the sandbox worker, metered or not) runs the bindings with no
engine of its own to change: an expression ``E`` that reads ``$a`` and ``$b`` (its free variables,
:func:`karta.jq.scope_check.free_variables`) is evaluated as

    .[1] as $a | .[2] as $b | .[0] | (E
    )

on the input ``[data, a, b]``. The rewritten text is a plain expression: plans, generated
functions and the code cache are keyed by it, so they never mix with the unbound text's, and
nothing is recompiled per object (the values travel in the input, not in the text). An
expression that reads no binding is handed to the base evaluator untouched: it costs what it
costs unbound (``evaluate_shared`` falls back to :meth:`evaluate` for a subclass).
``inlinable`` is False (this class overrides ``evaluate``): a definition's generated extraction
and status functions made without the bindings never stand in for it. :attr:`parameters` gives
instead the (names, values) that the functions generated *with* the bindings as parameters take
(:meth:`karta.jq.codegen.Emitter.bind_parameters`: ``$name`` a Python variable, no rewriting, no
wrapped input), when the base evaluator is inlinable: a definition with references then runs on
the same fast path as one without (bench/references.py).

Write-back (``paths``, ``assign``) through an expression that reads a binding finds its paths
in the wrapped input and strips the leading ``0``: a path that leaves the object (into a bound
value) is a :class:`~karta.errors.WriteBackError`, never a write into the referenced object.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from karta.errors import JqError, WriteBackError
from karta.jq.evaluator import Evaluator, PathElem

__all__ = ["BoundEvaluator", "bound_names", "rewrite"]


@lru_cache(maxsize=4096)
def bound_names(expression: str, names: frozenset[str]) -> tuple[str, ...]:
    """The names of ``names`` that ``expression`` reads as free variables, sorted; () when it
    reads none or does not parse (the base evaluator reports the parse error)."""
    from karta.jq.parser import parse_cached
    from karta.jq.scope_check import free_variables

    try:
        node = parse_cached(expression)
    except Exception:
        return ()
    return tuple(sorted(free_variables(node) & names))


@lru_cache(maxsize=4096)
def rewrite(expression: str, names: tuple[str, ...]) -> str:
    """``expression`` with ``names`` bound from items 1.. of its input, item 0 its input."""
    head = "".join(f".[{i}] as ${name} | " for i, name in enumerate(names, start=1))
    return f"{head}.[0] | ({expression}\n)"  # the newline ends a trailing comment of the text


class BoundEvaluator(Evaluator):
    """``base``'s options, with ``bindings`` (name -> JSON value) bound as ``$name`` in every
    expression that reads them. Cheap to make (one per object and its fetched references)."""

    def __init__(self, base: Evaluator, bindings: Mapping[str, Any]) -> None:
        super().__init__(
            max_results=base.max_results,
            timeout_ms=base.timeout_ms,
            trusted=base.trusted,
            copy_results=base.copy_results,
            fast_path=base.fast_path,
            budget=base.budget,
            decoded=base.decoded,
        )
        self._local = base._local  # one session stack: a session opened on either is the other's
        self.base = base
        self.bindings = dict(bindings)
        self._names = frozenset(self.bindings)

    @property
    def parameters(self) -> tuple[tuple[str, ...], tuple[Any, ...]] | None:
        """(names sorted, values as every engine reads them) when the base is inlinable."""
        base = self.base
        if not base.inlinable:
            return None
        names = tuple(sorted(self.bindings))
        values = tuple(self.bindings[n] for n in names)
        if not base.decoded:  # as evaluate converts the wrapped input [data, *values]
            from karta.jq._values import as_input

            values = tuple(as_input(v) for v in values)
        return names, values

    def _bound(self, expression: str, data: Any) -> tuple[str, Any] | None:
        names = bound_names(expression, self._names) if self._names else ()
        if not names:
            return None
        return rewrite(expression, names), [data, *(self.bindings[n] for n in names)]

    def evaluate(self, expression: str, data: Any) -> list[Any]:
        bound = self._bound(expression, data)
        if bound is None:
            return super().evaluate(expression, data)
        try:
            return super().evaluate(*bound)
        except JqError as exc:
            raise _as_written(exc, bound[0], expression) from None

    def engine_of(self, expression: str) -> str:
        bound = self._bound(expression, None)
        return super().engine_of(expression if bound is None else bound[0])

    def paths(self, expression: str, data: Any) -> list[list[PathElem]]:
        bound = self._bound(expression, data)
        if bound is None:
            return super().paths(expression, data)
        out: list[list[PathElem]] = []
        try:
            found = super().paths(*bound)
        except JqError as exc:
            raise _as_written(exc, bound[0], expression) from None
        for path in found:
            if not path or path[0] != 0:
                names = ", ".join("$" + n for n in bound_names(expression, self._names))
                raise WriteBackError(
                    f"path '{expression}' leads into a referenced object ({names}): never written back"
                )
            out.append(path[1:])
        return out


def _as_written(exc: JqError, rewritten: str, expression: str) -> JqError:
    """``exc`` naming the expression as the definition wrote it, not its rewriting."""
    if exc.expression == rewritten:
        exc.expression = expression
        exc.args = (str(exc).replace(rewritten, expression), *exc.args[1:])
    return exc
