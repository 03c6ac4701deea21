"""Evaluation of jq expressions on plain JSON data, and writing back through path expressions.

The :class:`Evaluator` is the single entry point every other layer uses. Per expression text it
keeps one *plan* (parsed once, process-wide cache): the fast-path closures when the expression is
inside the subset, otherwise libjq.

Trusted expressions (``trusted=True``: the built-in catalog) run in-process, unmetered: generated
code where there is some, the fast-path closures, libjq for the rest (the time limit is not
enforced for them; libjq cannot be interrupted).

Untrusted expressions (cluster Kartas, user files, ``--definition``; the default) run under a
:class:`~karta.jq.budget.Budget` that is enforced, never inferred: inside the subset, on the
*metered* fast path (:func:`karta.jq.fastpath.compile_node` with ``metered=True``: closures only,
every node charging the meter, ``$ENV`` and ``env`` empty), in-process; everything else in the
killable worker of :mod:`karta.jq.sandbox` (always: no expression is "bounded" enough for
libjq in-process), with the time left, the memory cap and the output cap. The extraction plans
and the generated status functions never stand in for an untrusted evaluator
(:attr:`Evaluator.inlinable`). A breach raises :class:`~karta.errors.JqBudgetError` (``time``:
:class:`~karta.errors.JqTimeoutError`) naming the expression and the budget.

Budgets are per object. ``with evaluator.session(obj):`` (or a :class:`Session` from
:meth:`Evaluator.open_session`, entered whenever the object is evaluated, as the component factory
and the pod querier do) spends one budget for every expression evaluated inside it, on this
thread; a breach spends it all, so the rest of that object fails fast, and the next session
starts afresh. Outside a session every evaluation has a budget of its own. The time budget counts
the wall time spent inside evaluations of the session, capped per evaluation by ``timeout_ms``
(docs/spec/format.md#limits); starting a sandbox worker is not charged to it.

Results of the fast path share structure with the input (no copies on the read path): treat
them as read-only, or pass ``copy_results=True`` to get fresh, fully normalised values (what libjq
returns: integral floats as ints). Top-level scalar results are always normalised.

Serialising the input for libjq costs more than most fast-path evaluations. Inside a session the
serialised text of its object is computed once and reused for every libjq evaluation on that very
object (identity); the object must not be mutated while the session is in use. Outside a session
every libjq evaluation serialises its input.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from types import TracebackType
from typing import TYPE_CHECKING, Any

from karta import _codegen as codegen
from karta._records import record
from karta.errors import (
    JqBudgetError,
    JqCompileError,
    JqParseError,
    JqResultLimitError,
    JqRuntimeError,
    JqTimeoutError,
    WriteBackError,
)
from karta.jq import budget, operations
from karta.jq import syntax as A
from karta.jq._values import JqFail, as_input, json_type, normalise_output
from karta.jq.budget import DEFAULT_BUDGET, Budget, Exceeded, Meter
from karta.jq.fastpath import EMPTY_ENV, Compiled, Unsupported
from karta.jq.fastpath.core import Env

if TYPE_CHECKING:
    from karta.jq.codegen import GeneratedFn

_CURRENT = budget.local()
_monotonic = time.monotonic

DEFAULT_MAX_RESULTS = 1000
DEFAULT_TIMEOUT_MS = 10_000

PathElem = str | int
_MISSING: Any = object()


@record(slots=True)
class Plan:
    """How one expression text is evaluated (shared by all evaluators).

    ``node`` is None when our parser rejects the text (``parse_error``): libjq decides, and when
    it rejects it too, ``parse_error`` is what the evaluation raises."""

    expression: str
    node: A.Node | None
    fast: Compiled | None
    parse_error: JqParseError | None = None

    @property
    def engine(self) -> str:
        return "fast" if self.fast is not None else "libjq"


@lru_cache(maxsize=4096)
def plan_for(expression: str) -> Plan:
    """Parse and compile ``expression`` once (raises JqCompileError for undefined names, and for
    the builtins, variables and formats gojq lacks: :func:`karta.jq.scope_check.gojq_check`).

    Never compiles with libjq: libjq folds constants while it compiles (``"x" * 1e9`` allocates a
    gigabyte then), so an untrusted expression is only ever compiled by libjq in a sandbox worker;
    trusted ones are compiled when first run.

    The parser, the checks and the compiler are imported here, when a first expression is not
    served by generated code (the definition cache's, :mod:`karta._codegen`): a command that finds
    every expression there imports none of them."""
    from karta.jq.fastpath.driver import compile_node
    from karta.jq.parser import parse
    from karta.jq.scope_check import compile_check, gojq_check

    try:
        node = parse(expression)
    except JqParseError as exc:
        return Plan(expression, None, None, exc)
    except (ValueError, RecursionError) as exc:  # ValueError: a number literal of over 4300 digits
        error = JqParseError(f"failed to parse JQ expression '{expression}': {exc}", expression=expression)
        return Plan(expression, None, None, error)
    missing = gojq_check(node)  # what the original cannot compile is refused here too, as it words it
    if missing is not None:
        message = f"failed to compile JQ expression '{expression}': {missing}"
        raise JqCompileError(message, expression=expression)
    try:
        fast: Compiled | None = compile_node(node)
    except (Unsupported, RecursionError):  # outside the subset, or a chain too long for the closures
        fast = None
    if fast is not None:
        return Plan(expression, node, fast)
    detail = compile_check(node)
    if detail is not None:
        raise JqCompileError(
            f"failed to compile JQ expression '{expression}': {detail}", expression=expression
        )
    return Plan(expression, node, None)


_used_once: set[str] = set()  # expressions evaluated once (trusted): generated on the next use

# karta.jq.codegen's table of generated functions, bound here when the generator is first needed
# (an expression's second use): a command on one object never generates code, so never imports it
generated_cache: dict[str, GeneratedFn | None] = {}


def _generated_on_reuse(expression: str, node: A.Node | None) -> GeneratedFn | None:
    """The generated function of ``expression`` from its second evaluation on (the first runs the
    closures; see :func:`karta._codegen.due`), or None."""
    if node is None:
        return None
    if not codegen.due(expression in _used_once):
        if len(_used_once) >= 4096:
            _used_once.clear()
        _used_once.add(expression)
        return None
    global generated_cache
    from karta.jq.codegen import generate, generated_cache

    return generate(expression, node)


@lru_cache(maxsize=4096)
def metered_for(expression: str) -> Compiled | None:
    """The metered compilation of ``expression`` (untrusted evaluation), or None outside the
    fast path (which metered also takes ``$ENV`` and ``env``, as ``{}``); compile errors raise,
    as :func:`plan_for` raises them."""
    plan = plan_for(expression)
    if plan.node is None:
        return None
    from karta.jq.fastpath.driver import compile_node

    try:
        return compile_node(plan.node, metered=True)
    except (Unsupported, RecursionError):
        return None


@record(slots=True)
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
    parts = A.split_iteration(plan.node)
    if parts is None:
        return None
    items_node, each_node = parts
    from karta.jq.fastpath.driver import compile_node

    try:
        items, each = compile_node(items_node), compile_node(each_node)
    except (Unsupported, RecursionError):
        return None
    if each.fn is None:
        return None
    return IterationSplit(_split_key(items_node), items, each.fn)


@lru_cache(maxsize=4096)
def metered_split(expression: str) -> IterationSplit | None:
    """:func:`iteration_split` on the metered fast path (the same keys)."""
    if iteration_split(expression) is None:
        return None
    plan = plan_for(expression)
    assert plan.node is not None
    parts = A.split_iteration(plan.node)
    assert parts is not None
    items_node, each_node = parts
    from karta.jq.fastpath.driver import compile_node

    try:
        items, each = compile_node(items_node, metered=True), compile_node(each_node, metered=True)
    except Unsupported:
        return None
    if each.fn is None:
        return None
    return IterationSplit(_split_key(items_node), items, each.fn)


def _split_key(items_node: A.Node) -> int:
    key = _split_keys.get(items_node)
    if key is None:
        if len(_split_keys) >= 4096:
            _split_keys.clear()
        key = _split_keys[items_node] = next(_split_numbers)
    return key


def _shared_outputs(
    split: IterationSplit, data: Any, shared: dict[int, list[Any] | None], limit: int
) -> list[Any] | None:
    """The outputs of a split expression, its items taken from (or put into) ``shared``; None
    when anything fails or there are too many (the caller evaluates the usual way)."""
    key = split.key
    if key in shared:
        items = shared[key]
    else:
        try:
            items = split.items.many(data, EMPTY_ENV)
        except (JqFail, RecursionError):
            items = None
        shared[key] = items
    if items is None or len(items) > limit:
        return None
    each = split.each
    try:
        return [each(x) for x in items]
    except (JqFail, RecursionError):
        return None


def _runtime_error(expression: str, detail: str) -> JqRuntimeError:
    return JqRuntimeError(
        f"JQ execution error for expression '{expression}': {detail}", expression=expression
    )


def _limit_error(expression: str, limit: int) -> JqResultLimitError:
    return JqResultLimitError(
        f"JQ execution error for expression '{expression}': query results exceed the allowed number {limit}",
        expression=expression,
    )


def _budget_error(expression: str, kind: str, detail: str) -> JqBudgetError:
    message = f"JQ execution error for expression '{expression}': {detail}"
    if kind == "time":
        return JqTimeoutError(message, expression=expression)
    return JqBudgetError(message, expression=expression, budget=kind)


class Session:
    """The budget of one object, and its serialised text for libjq.

    Made by :meth:`Evaluator.open_session`; ``with session:`` makes it the evaluator's current
    session on this thread (sessions nest: the innermost is current), as often as needed: every
    evaluation while it is current spends its one budget. Not for use by two threads at once.
    """

    __slots__ = ("_entered", "breach", "evaluator", "meter", "obj", "text", "time_left", "view")

    def __init__(self, evaluator: Evaluator, obj: Any) -> None:
        self.evaluator = evaluator
        self.obj = obj
        self.view: Any = _MISSING  # obj as the engine reads it (:meth:`input`), once computed
        self.text: str | None = None
        self.meter = Meter(evaluator.budget)
        self.time_left = evaluator.budget.time_ms / 1000.0  # seconds of evaluation left
        self.breach: tuple[str, str] | None = None  # (budget, detail) once one was exceeded
        self._entered: list[list[Session]] = []  # the thread stacks it was pushed on, innermost last

    def input(self) -> Any:
        """The object as every engine reads it (:func:`karta.jq._values.as_input`: integers
        beyond 2**53 as the original's doubles), converted once per session: ``obj`` itself
        unless it holds such an integer (always, for a ``decoded`` evaluator)."""
        view = self.view
        if view is _MISSING:
            obj = self.obj
            view = self.view = obj if self.evaluator.decoded else as_input(obj)
        return view

    def spent(self, breach: JqBudgetError) -> JqBudgetError:
        """Record ``breach``: every later evaluation in this session fails with its budget."""
        if self.breach is None:
            text, prefix = str(breach), f"JQ execution error for expression '{breach.expression}': "
            self.breach = (breach.budget, text[len(prefix) :] if text.startswith(prefix) else text)
        return breach

    def __enter__(self) -> Session:
        stack = self.evaluator._local.stack
        stack.append(self)
        self._entered.append(stack)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack = self._entered.pop()
        if stack[-1] is self:
            stack.pop()
        else:  # exited out of order: remove it wherever it is
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is self:
                    del stack[i]
                    break


class _Local(threading.local):
    stack: list[Session]

    def __init__(self) -> None:
        self.stack = []


class Evaluator:
    """Evaluates jq expressions with the format's limits (section 3.4).

    Create one and reuse it (from any number of threads): plans are cached by expression text.
    ``trusted`` is True for built-in definitions; untrusted expressions run under ``budget``
    (per object, see :meth:`session`; default :data:`karta.jq.budget.DEFAULT_BUDGET`), each
    evaluation also under ``timeout_ms``. ``fast_path=False`` sends every expression to libjq
    (the reference engine; used by benchmarks and differential checks).

    Numbers beyond 2**53 are the original's doubles (docs/spec/format.md#jq-dialect). ``decoded=False`` (the
    default, for objects built in Python): each object is checked once per session
    (:func:`karta.jq._values.as_input`, a few microseconds) and read through a converted copy when
    it holds such a number. ``decoded=True``: every object comes from one of karta's decoders
    (:func:`karta.jq._values.decoded_input`: ``kli``'s file readers, the API client, the
    webhook), which converted it where the bytes were read, so the evaluator reads it as it is
    (what ``kli``, the web view and the controller use: :data:`karta.definitions.POOL`).
    """

    def __init__(
        self,
        *,
        max_results: int = DEFAULT_MAX_RESULTS,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        trusted: bool = False,
        copy_results: bool = False,
        fast_path: bool = True,
        budget: Budget = DEFAULT_BUDGET,
        decoded: bool = False,
    ) -> None:
        self.max_results = max_results
        self.decoded = decoded
        self.fast_path = fast_path
        self.timeout_ms = timeout_ms
        self.trusted = trusted
        self.copy_results = copy_results
        self.budget = budget
        self._local = _Local()

    # --- sessions --------------------------------------------------------------------------------

    def _current(self) -> Session | None:
        stack = self._local.stack
        return stack[-1] if stack else None

    def open_session(self, obj: Any) -> Session:
        """A session for ``obj``: the current one when it is for this very object (one budget per
        object, however many layers open one), else a fresh budget. Enter it to use it."""
        current = self._current()
        if current is not None and current.obj is obj:
            return current
        return Session(self, obj)

    @contextmanager
    def session(self, obj: Any) -> Iterator[Evaluator]:
        """Evaluate ``obj`` under one budget, reusing its serialised text for libjq, until the
        block ends (``obj`` must not be mutated meanwhile)."""
        with self.open_session(obj):
            yield self

    # --- reading ---------------------------------------------------------------------------------

    def evaluate(self, expression: str, data: Any) -> list[Any]:
        """All outputs of ``expression`` on ``data``, in order (section 3.3)."""
        data = self.input_of(data)
        if not self.trusted:
            return self._evaluate_untrusted(expression, data)
        plan = plan_for(expression)
        fast = plan.fast if self.fast_path else None
        if fast is not None:
            try:
                generated = generated_cache.get(expression, _MISSING)
                if generated is _MISSING:
                    generated = _generated_on_reuse(expression, plan.node)
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
            except (ArithmeticError, ValueError) as exc:  # a gap in the number handling: jq's kind of error
                raise _runtime_error(expression, str(exc)) from None
            if len(out) > self.max_results:
                raise _limit_error(expression, self.max_results)
            if self.copy_results:
                return [normalise_output(x) for x in out]
            if float in map(type, out):  # a C-level scan; most results hold no float
                for i, x in enumerate(out):
                    if x.__class__ is float:
                        out[i] = normalise_output(x)
            return out
        return self._libjq(plan, expression, data)

    def _libjq(self, plan: Plan, expression: str, data: Any) -> list[Any]:
        """Trusted: libjq in-process (our parser's error when libjq rejects the text too)."""
        from karta.jq import _libjq  # imported when first needed: most catalog expressions never are

        try:
            return _libjq.run_text(expression, self._text(data), max_results=self.max_results)
        except (JqParseError, JqCompileError):
            if plan.parse_error is not None:
                raise plan.parse_error from None
            raise

    def _evaluate_untrusted(self, expression: str, data: Any, session: Session | None = None) -> list[Any]:
        compiled = metered_for(expression) if self.fast_path else None
        if session is None:
            session = self._untrusted_session(data)
        if compiled is None:
            return self._sandboxed(expression, data, session, plan_for(expression).parse_error)
        out: list[Any] = self._metered(expression, session, compiled.many, data)
        return out

    def _metered(self, expression: str, session: Session, run: Callable[[Any, Env], Any], data: Any) -> Any:
        """``run(data, env)`` under the session's meter: the deadline, the result cap, the output
        cap on results that may share subtrees, and every breach as :class:`JqBudgetError` (which
        spends the session). ``run`` may return None (the caller falls back), or a list."""
        started = _monotonic()
        meter = session.meter
        left = session.time_left
        per_evaluation = self.timeout_ms / 1000.0
        if per_evaluation < left:
            meter.deadline = started + per_evaluation
            meter.per_evaluation_ms = self.timeout_ms
        else:
            meter.deadline = started + left
            meter.per_evaluation_ms = 0
        current = _CURRENT
        previous = current.meter
        current.meter = meter
        try:
            if session.breach is not None:
                raise Exceeded(*session.breach)
            if left <= 0:
                raise Exceeded("time", meter.timeout_message())
            built = meter.built
            out = run(data, EMPTY_ENV)
            if out is not None:
                if len(out) > self.max_results:
                    raise _limit_error(expression, self.max_results)
                if meter.built != built:  # arrays or objects were built: results may share subtrees
                    meter.walk(out)
                if self.copy_results:
                    return [normalise_output(x) for x in out]
                if float in map(type, out):
                    for i, x in enumerate(out):
                        if x.__class__ is float:
                            out[i] = normalise_output(x)
            return out
        except JqFail as exc:
            try:
                message = _fail_message(exc)
            except Exceeded as breach:
                raise session.spent(_budget_error(expression, breach.budget, breach.detail)) from None
            raise _runtime_error(expression, message) from None
        except Exceeded as breach:
            raise session.spent(_budget_error(expression, breach.budget, breach.detail)) from None
        except RecursionError:
            raise _runtime_error(expression, "input nested too deeply") from None
        except MemoryError:
            raise session.spent(
                _budget_error(expression, "memory", "memory budget exceeded (out of memory)")
            ) from None
        except (ArithmeticError, ValueError, TypeError) as exc:  # a gap in the operations: jq's kind of error
            raise _runtime_error(expression, str(exc)) from None
        finally:
            current.meter = previous
            session.time_left -= _monotonic() - started

    def _sandboxed(
        self, expression: str, data: Any, session: Session, parse_error: JqParseError | None = None
    ) -> list[Any]:
        """``expression`` on ``data`` in a sandbox worker, spending the session's time."""
        started = time.monotonic()
        try:
            if session.breach is not None:
                raise _budget_error(expression, *session.breach)
            return self._run_sandboxed(expression, data, session)
        except JqBudgetError as exc:
            raise session.spent(exc) from None
        except (JqParseError, JqCompileError):
            if parse_error is not None:
                raise parse_error from None
            raise
        finally:
            session.time_left -= time.monotonic() - started

    def _deadline(self, session: Session, started: float) -> tuple[float, str]:
        """The deadline of one evaluation in ``session`` and the message for passing it."""
        meter = session.meter
        if self.timeout_ms < session.time_left * 1000.0:
            meter.per_evaluation_ms = self.timeout_ms
            return started + self.timeout_ms / 1000.0, meter.timeout_message()
        meter.per_evaluation_ms = 0
        return started + session.time_left, meter.timeout_message()

    def _run_sandboxed(self, expression: str, data: Any, session: Session) -> list[Any]:
        text = self._text(data, session)
        started = time.monotonic()  # serialising the input is charged, the worker's start is not
        deadline, reason = self._deadline(session, started)
        if session.time_left <= 0:
            raise _budget_error(expression, "time", reason)

        def refund(seconds: float) -> None:  # starting a worker is not charged to the object
            session.time_left += seconds

        from karta.jq import sandbox  # imported when first needed (subprocess, signals, the worker)

        return sandbox.run(
            expression,
            text,
            max_results=self.max_results,
            timeout_ms=max(1, int((deadline - started) * 1000)),
            limits=sandbox.Limits(
                memory_bytes=self.budget.memory_bytes,
                output_bytes=self.budget.output_bytes,
                timeout_message=reason,
            ),
            on_startup=refund,
        )

    def evaluate_shared(
        self,
        expression: str,
        data: Any,
        shared: dict[int, list[Any] | None],
        *,
        session: Session | None = None,
    ) -> list[Any]:
        """``evaluate(expression, data)``, sharing the items of ``P[]`` between expressions of
        the shape ``P[] | S`` (see :class:`IterationSplit`) through ``shared``, which the caller
        keeps for this one ``data`` object (and drops when the object changes). Falls back to
        ``evaluate`` for everything else, and whenever anything fails, so errors are the same.
        Untrusted, the same on the metered fast path. ``session``: evaluate in it as if it were
        entered (what the component factory does for every path of its object)."""
        data = self.input_of(data, session)
        if not self.fast_path or self.copy_results or type(self).evaluate is not Evaluator.evaluate:
            return self._evaluate_in(session, expression, data)
        if not self.trusted:
            return self._shared_untrusted(expression, data, shared, session or self._untrusted_session(data))
        split = iteration_split(expression)
        out = None if split is None else _shared_outputs(split, data, shared, self.max_results)
        if out is None:
            return self._evaluate_in(session, expression, data)
        if float in map(type, out):
            for i, x in enumerate(out):
                if x.__class__ is float:
                    out[i] = normalise_output(x)
        return out

    def _evaluate_in(self, session: Session | None, expression: str, data: Any) -> list[Any]:
        if session is None:
            return self.evaluate(expression, data)
        with session:
            return self.evaluate(expression, data)

    def _shared_untrusted(
        self, expression: str, data: Any, shared: dict[int, list[Any] | None], session: Session
    ) -> list[Any]:
        split = metered_split(expression)
        if split is None:
            return self._evaluate_untrusted(expression, data, session)
        limit = self.max_results

        def run(v: Any, env: Env) -> list[Any] | None:
            return _shared_outputs(split, v, shared, limit)

        out: list[Any] | None = self._metered(expression, session, run, data)
        return self._evaluate_untrusted(expression, data, session) if out is None else out

    @property
    def inlinable(self) -> bool:
        """True when generated code may stand in for ``evaluate`` (trusted, the fast path,
        uncopied results, no subclass overriding ``evaluate``): extraction plans check this.
        Never for untrusted evaluators: their expressions run metered."""
        return (
            self.trusted
            and self.fast_path
            and not self.copy_results
            and type(self).evaluate is Evaluator.evaluate
        )

    @property
    def parameters(self) -> tuple[tuple[str, ...], tuple[Any, ...]] | None:
        """(names, values) of the variables a definition's generated functions take as
        parameters to stand in for this evaluator (extension E3: its references, bound as
        ``$<name>``), or None when they may not stand in. None here: generated code stands in for
        a plain evaluator without parameters when :attr:`inlinable` holds
        (:class:`~karta.jq.bound.BoundEvaluator` overrides it)."""
        return None

    def engine_of(self, expression: str) -> str:
        """``fast``, ``libjq`` or ``sandbox``: where ``evaluate`` would run ``expression``
        (``fast`` is the metered fast path for untrusted evaluators)."""
        if self.trusted:
            return "fast" if plan_for(expression).fast is not None and self.fast_path else "libjq"
        return "fast" if self.fast_path and metered_for(expression) is not None else "sandbox"

    def input_of(self, data: Any, session: Session | None = None) -> Any:
        """``data`` as every engine reads it: numbers beyond 2**53 as the original's doubles
        (docs/spec/format.md#jq-dialect, :func:`karta.jq._values.as_input`). The one place inputs enter:
        every evaluation calls it, and so does whoever hands an object to generated code. In a
        session for ``data`` (``session``, else the current one) it is converted once. The object
        itself when the evaluator is ``decoded`` (its decoder converted it)."""
        if self.decoded:
            return data
        if session is None:
            stack = self._local.stack
            session = stack[-1] if stack else None
        if session is not None:
            if data is session.obj:
                return session.input()
            if data is session.view:
                return data
        return as_input(data)

    def _text(self, data: Any, session: Session | None = None) -> str:
        if session is None:
            session = self._current()
        if session is not None and (data is session.obj or data is session.view):
            if session.text is None:
                session.text = _json_text(session.input())
            return session.text
        return _json_text(data)

    # --- paths and writing -----------------------------------------------------------------------

    def paths(self, expression: str, data: Any) -> list[list[PathElem]]:
        """The locations ``path(expression)`` selects in ``data`` (section 9)."""
        data = self.input_of(data)
        plan = plan_for(expression)
        if self.fast_path:
            if self.trusted:
                from karta.jq.fastpath.driver import run_paths

                try:
                    if plan.fast is None:
                        raise Unsupported(expression)
                    found = run_paths(plan.fast, data)
                except JqFail as exc:
                    raise _runtime_error(expression, exc.message) from None
                except Unsupported:
                    pass
                else:
                    if len(found) > self.max_results:
                        raise _limit_error(expression, self.max_results)
                    return found
            else:
                compiled = metered_for(expression)
                if compiled is not None:
                    located = self._paths_metered(expression, compiled, data)
                    if located is not None:
                        return located
        wrapped = f"path({expression})"
        try:
            if self.trusted:
                from karta.jq import _libjq

                results = _libjq.run_text(wrapped, self._text(data), max_results=self.max_results)
            else:
                results = self._evaluate_untrusted_libjq(wrapped, data)
        except JqResultLimitError:
            raise _limit_error(expression, self.max_results) from None
        except (JqParseError, JqCompileError):
            if plan.parse_error is not None:
                raise plan.parse_error from None
            raise
        except JqRuntimeError as exc:
            if type(exc) is not JqRuntimeError:
                raise
            raise _runtime_error(expression, _detail(exc)) from None
        return [list(p) for p in results]

    def _untrusted_session(self, data: Any) -> Session:
        stack = self._local.stack
        return stack[-1] if stack else Session(self, data)

    def _evaluate_untrusted_libjq(self, expression: str, data: Any) -> list[Any]:
        return self._sandboxed(expression, data, self._untrusted_session(data))

    def _paths_metered(self, expression: str, compiled: Compiled, data: Any) -> list[list[PathElem]] | None:
        from karta.jq.fastpath.driver import run_paths

        def run(v: Any, env: Env) -> list[list[PathElem]] | None:
            try:
                return run_paths(compiled, v)
            except Unsupported:
                return None

        found: list[list[PathElem]] | None = self._metered(
            expression, self._untrusted_session(data), run, data
        )
        return found

    def assign(self, expression: str, data: Any, value: Any) -> Any:
        """``(expression) = value`` on a copy of ``data`` (section 9.1)."""
        paths = self._writable_paths(expression, data)
        result = copy_json(data)
        for path in paths:
            result = setpath(result, path, copy_json(value))
        return result

    def assign_zip(self, expression: str, data: Any, values: Sequence[Any]) -> Any:
        """Set the i-th location of ``path(expression)`` to ``values[i]`` (section 9.1)."""
        paths = self._writable_paths(expression, data)
        if len(paths) != len(values):
            raise WriteBackError(
                f"array length mismatch: expected {len(paths)} values but got {len(values)} "
                f"(path '{expression}')"
            )
        result = copy_json(data)
        for path, value in zip(paths, values, strict=True):
            result = setpath(result, path, copy_json(value))
        return result

    def _writable_paths(self, expression: str, data: Any) -> list[list[PathElem]]:
        """``paths``; untrusted, refusing a path that would pad an array past the output budget
        (``getpath([1e9])`` is a path: writing through it would build a billion nulls)."""
        paths = self.paths(expression, data)
        if not self.trusted:
            limit = self.budget.output_bytes // budget.LIST_SLOT
            for path in paths:
                for elem in path:
                    if elem.__class__ is int and elem > limit:
                        raise _budget_error(
                            expression,
                            "output",
                            f"output budget exceeded (writing array index {elem} would build an array "
                            f"of more than {self.budget.output_bytes} bytes)",
                        )
        return paths


def _fail_message(exc: JqFail) -> str:
    """``exc.message``, rendering a non-string error value through the guarded ``tojson`` (the
    current meter walks it first)."""
    value = exc.value
    if value.__class__ is str:
        return str(value)
    if value is None:
        return "null (null)"
    return f"{operations.dumps(value)} (not a string)"


def _json_text(data: Any) -> str:
    """The input text for libjq (:func:`karta.jq._libjq.to_json_text`: sorted keys, big integers,
    deep values, all without recursion)."""
    from karta.jq import _libjq

    return _libjq.to_json_text(data)


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
