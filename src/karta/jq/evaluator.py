"""Evaluation of jq expressions on plain JSON data, and writing back through path expressions.

The :class:`Evaluator` is the single entry point every other layer uses. Per expression text it
keeps one *plan* (parsed once, process-wide cache): the fast-path closures when the expression is
inside the subset, otherwise libjq. Untrusted expressions (``trusted=False``) that the fast path
cannot run and :func:`karta.jq.safety.is_bounded` cannot prove bounded run in the killable worker
of :mod:`karta.jq.sandbox`, under the evaluator's time limit. Trusted expressions (the built-in
catalog) run in-process; the time limit is not enforced for them (libjq cannot be interrupted).

Results of the fast path share structure with the input (no copies on the read path): treat
them as read-only, or pass ``copy_results=True`` to get fresh, fully normalised values (what libjq
returns: integral floats as ints). Top-level scalar results are always normalised.

Serialising the input for libjq costs more than most fast-path evaluations. Inside
``with evaluator.session(obj):`` the serialised text of ``obj`` is computed once and reused for
every libjq evaluation on that very object (identity); the object must not be mutated while the
session is open. Outside a session every libjq evaluation serialises its input.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from karta.errors import JqError, JqParseError, JqResultLimitError, JqRuntimeError, WriteBackError
from karta.jq import _libjq, sandbox
from karta.jq import syntax as A
from karta.jq._values import JqFail, json_type, normalise_output
from karta.jq.codegen import generate, generated_cache, split_iteration
from karta.jq.fastpath import EMPTY_ENV, Compiled, Unsupported, compile_node, run_paths
from karta.jq.parser import parse
from karta.jq.safety import is_bounded

DEFAULT_MAX_RESULTS = 1000
DEFAULT_TIMEOUT_MS = 10_000

PathElem = str | int
_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class Plan:
    """How one expression text is evaluated (shared by all evaluators)."""

    expression: str
    node: A.Node | None  # None: our parser rejects what libjq accepts (evaluated by libjq)
    fast: Compiled | None
    bounded: bool

    @property
    def engine(self) -> str:
        return "fast" if self.fast is not None else "libjq"


@lru_cache(maxsize=4096)
def plan_for(expression: str) -> Plan:
    """Parse and compile ``expression`` once (raises JqParseError / JqCompileError)."""
    try:
        node = parse(expression)
    except JqParseError as exc:
        try:
            _libjq.compile_program(expression)
        except JqError:
            raise exc from None
        return Plan(expression, None, None, False)
    try:
        fast: Compiled | None = compile_node(node)
    except (Unsupported, RecursionError):  # outside the subset, or a chain too long for the closures
        fast = None
    if fast is not None:
        return Plan(expression, node, fast, True)
    _libjq.compile_program(expression)  # compile errors surface here, in-process and safe
    return Plan(expression, node, None, _bounded(node))


@dataclass(frozen=True, slots=True)
class IterationSplit:
    """``P[] | S`` (or ``P | .[] | S``, ``P[].a.b``) with a single-valued, variable-free ``S``:
    the outputs are ``[S(x) for x in outputs of P[]]``, so expressions with the same ``P[]`` can
    share its items. ``key`` stands for the ``P[]`` node: equal nodes (positions aside) get the same
    key, and a small int hashes much faster than a syntax tree."""

    key: int
    items: Compiled
    each: Callable[[Any], Any]


_split_keys: dict[A.Node, int] = {}
_split_numbers = itertools.count()  # never reused, so clearing the table cannot make keys collide


@lru_cache(maxsize=4096)
def iteration_split(expression: str) -> IterationSplit | None:
    """The split of a fast-path expression into shared items and a per-item function, or None."""
    plan = plan_for(expression)
    if plan.fast is None or plan.node is None:
        return None
    parts = split_iteration(plan.node)
    if parts is None:
        return None
    items_node, each_node = parts
    try:
        items, each = compile_node(items_node), compile_node(each_node)
    except (Unsupported, RecursionError):
        return None
    if each.fn is None:
        return None
    key = _split_keys.get(items_node)
    if key is None:
        if len(_split_keys) >= 4096:
            _split_keys.clear()
        key = _split_keys[items_node] = next(_split_numbers)
    return IterationSplit(key, items, each.fn)


def _bounded(node: A.Node) -> bool:
    try:
        return bool(is_bounded(node))
    except Exception:  # a checker gap must not turn into an evaluation error
        return False


def _runtime_error(expression: str, detail: str) -> JqRuntimeError:
    return JqRuntimeError(
        f"JQ execution error for expression '{expression}': {detail}", expression=expression
    )


def _limit_error(expression: str, limit: int) -> JqResultLimitError:
    return JqResultLimitError(
        f"JQ execution error for expression '{expression}': query results exceed the allowed number {limit}",
        expression=expression,
    )


class Evaluator:
    """Evaluates jq expressions with the format's limits (section 3.4).

    Create one and reuse it: plans are cached by expression text. ``trusted`` is True for
    built-in definitions; untrusted expressions that cannot be proven bounded are evaluated in a
    killable worker process with ``timeout_ms``. ``fast_path=False`` sends every expression to
    libjq (the reference engine; used by benchmarks and differential checks).
    """

    def __init__(
        self,
        *,
        max_results: int = DEFAULT_MAX_RESULTS,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        trusted: bool = False,
        copy_results: bool = False,
        fast_path: bool = True,
    ) -> None:
        self.max_results = max_results
        self.fast_path = fast_path
        self.timeout_ms = timeout_ms
        self.trusted = trusted
        self.copy_results = copy_results
        self._session_obj: Any = None
        self._session_text: str | None = None
        self._session_depth = 0

    # --- reading ---------------------------------------------------------------------------------

    def evaluate(self, expression: str, data: Any) -> list[Any]:
        """All outputs of ``expression`` on ``data``, in order (section 3.3)."""
        plan = plan_for(expression)
        fast = plan.fast if self.fast_path else None
        if fast is not None:
            generated = generated_cache.get(expression, _MISSING)
            if generated is _MISSING:
                generated = generate(expression, plan.node) if plan.node is not None else None
            out = None
            if generated is not None:
                try:
                    out = generated(data)
                except (JqFail, RecursionError):
                    out = None  # the closures give the exact result or error
            if out is None:
                try:
                    out = fast.many(data, EMPTY_ENV)
                except JqFail as exc:
                    raise _runtime_error(expression, exc.message) from None
                except RecursionError:
                    raise _runtime_error(expression, "input nested too deeply") from None
            if len(out) > self.max_results:
                raise _limit_error(expression, self.max_results)
            if self.copy_results:
                return [normalise_output(x) for x in out]
            if float in map(type, out):  # a C-level scan; most results hold no float
                for i, x in enumerate(out):
                    if x.__class__ is float:
                        out[i] = normalise_output(x)
            return out
        return self._run_libjq(plan, expression, data)

    def evaluate_shared(self, expression: str, data: Any, shared: dict[int, list[Any] | None]) -> list[Any]:
        """``evaluate(expression, data)``, sharing the items of ``P[]`` between expressions of
        the shape ``P[] | S`` (see :class:`IterationSplit`) through ``shared``, which the caller
        keeps for this one ``data`` object (and drops when the object changes). Falls back to
        ``evaluate`` for everything else, and whenever anything fails, so errors are the same."""
        if not self.fast_path or self.copy_results or type(self).evaluate is not Evaluator.evaluate:
            return self.evaluate(expression, data)
        split = iteration_split(expression)
        if split is None:
            return self.evaluate(expression, data)
        key = split.key
        if key in shared:
            items = shared[key]
        else:
            try:
                items = split.items.many(data, EMPTY_ENV)
            except (JqFail, RecursionError):
                items = None
            shared[key] = items
        if items is None or len(items) > self.max_results:
            return self.evaluate(expression, data)
        each = split.each
        try:
            out = [each(x) for x in items]
        except (JqFail, RecursionError):
            return self.evaluate(expression, data)
        if float in map(type, out):
            for i, x in enumerate(out):
                if x.__class__ is float:
                    out[i] = normalise_output(x)
        return out

    @property
    def inlinable(self) -> bool:
        """True when generated code may stand in for ``evaluate`` (the fast path, uncopied
        results, no subclass overriding ``evaluate``): extraction plans check this."""
        return self.fast_path and not self.copy_results and type(self).evaluate is Evaluator.evaluate

    def engine_of(self, expression: str) -> str:
        """``fast``, ``libjq`` or ``sandbox``: where ``evaluate`` would run ``expression``."""
        plan = plan_for(expression)
        if plan.fast is not None and self.fast_path:
            return "fast"
        return "libjq" if self.trusted or plan.bounded else "sandbox"

    @contextmanager
    def session(self, obj: Any) -> Iterator[Evaluator]:
        """Reuse the serialised text of ``obj`` for every libjq evaluation on it (not re-entrant
        for different objects; ``obj`` must not be mutated meanwhile)."""
        if self._session_depth and self._session_obj is not obj:
            raise ValueError("an evaluator session is already open for another object")
        if not self._session_depth:
            self._session_obj, self._session_text = obj, None
        self._session_depth += 1
        try:
            yield self
        finally:
            self._session_depth -= 1
            if not self._session_depth:
                self._session_obj, self._session_text = None, None

    def _text(self, data: Any) -> str:
        if self._session_depth and data is self._session_obj:
            if self._session_text is None:
                self._session_text = _libjq.to_json_text(data)
            return self._session_text
        return _libjq.to_json_text(data)

    def _run_libjq(self, plan: Plan, expression: str, data: Any) -> list[Any]:
        text = self._text(data)
        if self.trusted or plan.bounded:
            return _libjq.run_text(expression, text, max_results=self.max_results)
        return sandbox.run(expression, text, max_results=self.max_results, timeout_ms=self.timeout_ms)

    # --- paths and writing -----------------------------------------------------------------------

    def paths(self, expression: str, data: Any) -> list[list[PathElem]]:
        """The locations ``path(expression)`` selects in ``data`` (section 9)."""
        plan = plan_for(expression)
        if plan.fast is not None and self.fast_path:
            try:
                found = run_paths(plan.fast, data)
            except JqFail as exc:
                raise _runtime_error(expression, exc.message) from None
            except Unsupported:
                pass
            else:
                if len(found) > self.max_results:
                    raise _limit_error(expression, self.max_results)
                return found
        wrapped = f"path({expression})"
        wrapped_plan = Plan(wrapped, None, None, plan.bounded)
        try:
            results = self._run_libjq(wrapped_plan, wrapped, data)
        except JqResultLimitError:
            raise _limit_error(expression, self.max_results) from None
        except JqRuntimeError as exc:
            if type(exc) is not JqRuntimeError:
                raise
            raise _runtime_error(expression, _detail(exc)) from None
        return [list(p) for p in results]

    def assign(self, expression: str, data: Any, value: Any) -> Any:
        """``(expression) = value`` on a copy of ``data`` (section 9.1)."""
        paths = self.paths(expression, data)
        result = copy_json(data)
        for path in paths:
            result = setpath(result, path, copy_json(value))
        return result

    def assign_zip(self, expression: str, data: Any, values: Sequence[Any]) -> Any:
        """Set the i-th location of ``path(expression)`` to ``values[i]`` (section 9.1)."""
        paths = self.paths(expression, data)
        if len(paths) != len(values):
            raise WriteBackError(
                f"array length mismatch: expected {len(paths)} values but got {len(values)} "
                f"(path '{expression}')"
            )
        result = copy_json(data)
        for path, value in zip(paths, values, strict=True):
            result = setpath(result, path, copy_json(value))
        return result


def _detail(exc: JqRuntimeError) -> str:
    text = str(exc)
    marker = "': "
    return text.split(marker, 1)[1] if marker in text else text


def copy_json(value: Any) -> Any:
    """A deep copy of plain JSON data (much faster than ``copy.deepcopy``)."""
    cls = value.__class__
    if cls is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if cls is list:
        return [copy_json(v) for v in value]
    return value


def setpath(data: Any, path: Sequence[PathElem], value: Any) -> Any:
    """jq's ``setpath``: create missing objects/arrays, pad arrays with null; mutates containers."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, str):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise WriteBackError(f'cannot index {json_type(data)} with "{head}"')
        data[head] = setpath(data.get(head), rest, value)
        return data
    if isinstance(head, bool) or not isinstance(head, int):
        raise WriteBackError(f"invalid path component {head!r}")
    if data is None:
        data = []
    if not isinstance(data, list):
        raise WriteBackError(f"cannot index {json_type(data)} with number")
    index = head
    if index < 0:
        index += len(data)
        if index < 0:
            raise WriteBackError("out of bounds negative array index")
    while len(data) <= index:
        data.append(None)
    data[index] = setpath(data[index], rest, value)
    return data
