"""Code generation: fast-path jq ASTs turned into straight-line Python source, ``exec``-ed once.

The closures of :mod:`karta.jq.fastpath` pay one Python call per node per value. This module
emits one Python function per expression instead (or, through :class:`Emitter`, one function for
many expressions: the extraction plans of :mod:`karta.extract.compiled`), in continuation-passing
style: every node is emitted with a continuation that receives the name of a variable holding one
output, so ``.[]`` becomes a ``for`` loop, ``,`` two blocks, ``|`` nesting, and a field chain a few
``if`` lines. Common shapes are emitted natively (field chains, ``.[]``, ``to_entries[] | .key``,
``//``, comparisons, ``and``/``or``, ``if``, literals, array and object construction, and the
builtins the builtin table marks ``native``: ``select``, ``any``/``all``, ``length`` and the other
single-value builtins); every other node that the fast path compiles is embedded as its closure,
so the generated code covers exactly the fast path.

The contract, pinned by differential tests: a generated function returns exactly the outputs the
closures return, or raises :class:`JqFail` (or ``RecursionError``). It never produces a value
where the closures fail, but it may fail where they succeed or fail differently; callers then
re-run the closures, which produce the exact result or error. Errors are therefore never reported
from generated code.

Sources are compiled through :mod:`karta._codegen` (tracebacks and debuggers show them;
``KARTA_CODEGEN`` turns generation off, dumps it, or makes a failed generation raise). The
generator raises nothing but its declines: :class:`Unsupported` (outside the fast path),
``RecursionError`` while emitting a tree too deep for it, and :class:`karta._codegen.Declined`
for a source beyond Python's compiler limits (100 nested ``if`` or ``//``: too many levels of
indentation); :func:`generate` and the extraction and status generators report all three as
declines, and the closures run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from karta import _codegen as codegen
from karta.jq import syntax as A
from karta.jq._values import norm_number
from karta.jq.builtin_table import BUILTINS, fast_of
from karta.jq.fastpath import Compiled, Unsupported, compile_node
from karta.jq.fastpath.calls import value_function
from karta.jq.fastpath.core import Scope, compile_child
from karta.jq.generated_runtime import BASE_NAMESPACE, expression_key, load_function, plain_recipe, restore
from karta.jq.operations import BINARY_OPS, MAX_EXACT
from karta.jq.printer import to_jq
from karta.jq.syntax import split_iteration  # here for the generators; the evaluator needs it without them

__all__ = [
    "Emitter",
    "GeneratedFn",
    "fast_node",
    "generate",
    "generate_table",
    "generated_cache",
    "is_single",
    "restore",
    "split_iteration",
]

GeneratedFn = Callable[[Any], list[Any]]
Continuation = Callable[[str], None]

# a pathological expression (nested commas) stays with the closures; KServe's status table is ~4,500
_MAX_LINES = 6000


_TO_ENTRIES_ITER = A.Iterate(A.Call("to_entries"))
_DOT_KEY = A.Index(A.Identity(), A.Literal("key"))
_COMPARISONS = {"<": "<", "<=": "<=", ">": ">", ">=": ">="}
_INT_ARITHMETIC = ("+", "-", "*")


def is_single(node: A.Node) -> bool:
    """True when ``node`` always yields exactly one output (or fails) on any input, statically."""
    if isinstance(node, A.Identity | A.Literal | A.ArrayCons | A.Format | A.Var):
        return True
    if isinstance(node, A.Bind):
        return is_single(node.source) and is_single(node.body)
    if isinstance(node, A.Index):
        return is_single(node.target) and is_single(node.index)
    if isinstance(node, A.Pipe):
        return is_single(node.left) and is_single(node.right)
    if isinstance(node, A.Neg):
        return is_single(node.operand)
    if isinstance(node, A.Binary):
        return is_single(node.left) and is_single(node.right)
    if isinstance(node, A.ObjectCons):
        return all(is_single(e.key) and is_single(e.value) for e in node.entries)
    if isinstance(node, A.Call):
        if not node.args and node.name in A.KEYWORD_CONSTANTS:
            return True
        fast = fast_of(node.name, len(node.args))
        if fast is not None and fast.kind == "value" and node.args:
            return all(is_single(a) for a in node.args)  # one call per output of the argument
        return fast is not None and fast.single
    return False


_CONSTANTS = frozenset({"true", "false", "null"})


def _total_call(name: str, *, on_array: bool) -> bool:
    """True when ``name/0`` never fails on any input (on any array, with ``on_array``): the
    builtin table's ``total``, and the constants."""
    builtin = BUILTINS.get(name)
    total = "" if builtin is None else builtin.total
    return name in _CONSTANTS or total == "any" or (on_array and total == "array")


def cannot_fail(node: A.Node, *, on_array: bool = False) -> bool:
    """True when ``node`` never raises a jq error on any input (on any array, with ``on_array``),
    statically; conservative (False when unsure). ``E // F`` never fails when ``F`` cannot (jq
    drops ``E``'s errors), nor does ``E?``; field access, arithmetic and most builtins can."""
    if isinstance(node, A.Identity | A.Literal | A.Var):
        return True
    if isinstance(node, A.Try):
        return node.catch is None
    if isinstance(node, A.ArrayCons):
        return node.body is None or cannot_fail(node.body, on_array=on_array)
    if isinstance(node, A.Pipe):
        left = node.left
        return cannot_fail(left, on_array=on_array) and cannot_fail(
            node.right, on_array=isinstance(left, A.ArrayCons)
        )
    if isinstance(node, A.Comma):
        return cannot_fail(node.left, on_array=on_array) and cannot_fail(node.right, on_array=on_array)
    if isinstance(node, A.Binary):
        if node.op == "//":
            return cannot_fail(node.right, on_array=on_array)
        if node.op in ("==", "!=", "and", "or"):
            return cannot_fail(node.left, on_array=on_array) and cannot_fail(node.right, on_array=on_array)
        return False
    if isinstance(node, A.ObjectCons):
        return all(
            isinstance(entry.key, A.Literal) and entry.key.value.__class__ is str and cannot_fail(entry.value)
            for entry in node.entries
        )
    if isinstance(node, A.Call):
        body = A.library_call(node)
        if body is not None:
            return cannot_fail(body, on_array=on_array)
        args = node.args
        if node.name == "select" and len(args) == 1:
            return cannot_fail(args[0], on_array=on_array)
        if node.name in ("any", "all") and len(args) == 1:  # any(f): any(.[]; f)
            return on_array and cannot_fail(args[0])
        if node.name in ("any", "all") and len(args) == 2:
            return cannot_fail(args[0], on_array=on_array) and cannot_fail(args[1])
        return not args and _total_call(node.name, on_array=on_array)
    return False


def _collects(node: A.Node) -> bool:
    """``[...]``, ``[...] | f`` or ``[...] | f // g``: the collections the matchers of a status
    definition repeat (``[.status.conditions[]? | select(.status == "True") | .type] | any(...)``),
    memoised like a binding when evaluated on the memo root (see :meth:`Emitter.memoise`)."""
    if isinstance(node, A.Binary) and node.op == "//":
        node = node.left
    if isinstance(node, A.Pipe):
        node = node.left
    return isinstance(node, A.ArrayCons) and node.body is not None


def _all_or_nothing(node: A.Node) -> bool:
    """True when ``node`` either fails before its first output or yields all of them: a single
    node, or ``E[]`` of a single ``E`` (a non-iterable fails before any element)."""
    if isinstance(node, A.Iterate):
        return is_single(node.target)
    return is_single(node)


class Emitter:
    """Accumulates the source of one generated function.

    ``emit(node, src, k)`` writes the statements that evaluate ``node`` on the variable ``src``
    and call the continuation ``k`` (which writes more statements) once per output, with the name
    of a variable holding it. Raises :class:`Unsupported` for nodes the fast path cannot compile.
    """

    def __init__(self, *, recipes: bool = False) -> None:
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = dict(BASE_NAMESPACE)
        self._depth = 0
        self._count = 0
        self._consts: dict[tuple[type, Any], str] = {}
        # Common subexpressions: (source variable, field name) -> the variable holding the field,
        # for fields read in an enclosing block or earlier in the same one (so always assigned
        # when read again). Each block forgets what it added when it closes.
        self._fields: dict[tuple[str, str], str] = {}
        self._scopes: list[list[tuple[str, str]]] = [[]]
        # Source variables with a field in _fields, by count: each is a dict or null, since reading
        # a field of anything else fails (index_value), so a further field is read without the
        # class test.
        self._indexed: dict[str, int] = {}
        # jq variables bound by ``E as $name | ...`` in the code emitted so far: name -> the
        # Python variable holding the value (final, like every variable passed to a continuation).
        self._vars: dict[str, str] = {}
        # Memoised bindings (see memoise): (jq text of the source, bound variables) -> variable.
        self._memo_root: str | None = None
        self._memo_at = (0, 0)  # (line index, depth) of the declarations
        self._memo: dict[tuple[str, frozenset[tuple[str, str]]], str] = {}
        # Memoised bindings of a source that cannot fail, computed where first used instead of
        # where bound (see _bind): variable -> (source, input variable, the jq variables bound
        # around the binding); and those already computed in the current block or an enclosing one.
        self._lazy: dict[str, tuple[A.Node, str, dict[str, str]]] = {}
        self._ready: set[str] = set()
        # Variables known to hold a Python bool (a comparison, and/or, any/all, a boolean
        # literal): their truth is tested as they are, not as ``x is not None and x is not False``.
        self._bools: set[str] = set()
        self._computing: A.Node | None = None  # the collection being memoised (see emit)
        self._memo_vars: dict[str, dict[str, str]] = {}  # memo variable -> the jq variables it reads
        # Parameters of the function bound to jq variables (bind_parameters): fixed for the call,
        # so a binding that reads them is memoised like one that reads only the input.
        self._parameters: set[str] = set()
        self._ready_scopes: list[list[str]] = [[]]
        # How to make each constant again without generating (karta._codegen's definition cache):
        # name -> recipe (plain data, see restore); None once a constant has none, or when not
        # asked for (``recipes``: a closure's recipe prints and parses its jq again).
        self.recipes: dict[str, Any] | None = {} if recipes else None
        self.source = ""
        self.code: Any = None

    # --- plumbing ------------------------------------------------------------------------------

    def line(self, text: str) -> None:
        if len(self.lines) >= _MAX_LINES:
            raise Unsupported("generated function too large")
        self.lines.append("    " * self._depth + text)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        self.line(header)
        self._depth += 1
        self.line("pass")
        self._scopes.append([])
        self._ready_scopes.append([])
        try:
            yield
        finally:
            for key in self._scopes.pop():
                del self._fields[key]
                self._indexed[key[0]] -= 1
            self._ready.difference_update(self._ready_scopes.pop())
            self._depth -= 1

    def tmp(self, prefix: str = "t") -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def const(self, value: Any, recipe: tuple[Any, ...] | None = None) -> str:
        """A name bound to ``value`` in the function's namespace; ``recipe`` says how
        :func:`restore` makes it again (plain data and enum members need none)."""
        key = (value.__class__, value if value.__class__ in (str, int, bool, type(None)) else id(value))
        name = self._consts.get(key)
        if name is None:
            name = f"K{len(self.namespace)}"
            self.namespace[name] = value
            self._consts[key] = name
            if self.recipes is not None:
                if recipe is None:
                    recipe = plain_recipe(value)
                if recipe is None:
                    self.recipes = None
                else:
                    self.recipes[name] = recipe
        return name

    def memoise(self, root: str) -> None:
        """From here on, a binding ``E as $x | ...`` of a single-valued ``E`` evaluated on
        ``root`` (a variable never reassigned: the function's input) whose bound variables are
        themselves memoised is computed once per call, on first use, and shared by every later
        binding of the same source: the matchers of a status definition repeat the same
        bindings (``[.status.conditions[]?] as $cs | ...``). The declarations (``= _UNSET``) go
        here, at the current line and depth; ``E`` is deterministic on the fast path (no
        environment, input or clock), so its value is the same at every use."""
        self._memo_root = root
        self._memo_at = (len(self.lines), self._depth)

    def bind_parameters(self, names: Sequence[str]) -> str:
        """Bind the jq variables ``names`` (a definition's references, read as ``$<name>``:
        extension E3) to parameters of the function being generated, in order: the text to append
        to its parameter list (``, _ref0, _ref1``; empty without names). The caller passes each
        variable's value (the input as every engine reads it, :meth:`Evaluator.input_of`)."""
        params = ""
        for i, name in enumerate(names):
            var = f"_ref{i}"
            self._vars[name] = var
            self._parameters.add(var)
            params += f", {var}"
        return params

    def build(self, name: str, *, what: str = "") -> Any:
        """Compile the accumulated lines (one ``def``) and return the function called ``name``.

        ``what`` says what the function computes, for tracebacks and dumps (:mod:`karta._codegen`).
        """
        if self._memo:
            at, depth = self._memo_at
            self.lines[at:at] = ["    " * depth + f"{var} = _UNSET" for var in self._memo.values()]
        source = "\n".join(self.lines)
        self.namespace["__source__"] = self.source = source
        self.code = codegen.compile_source(source, self.namespace, what=what or name)
        return self.namespace[name]

    # --- nodes ---------------------------------------------------------------------------------

    def emit(self, node: A.Node, src: str, k: Continuation) -> None:
        if src == self._memo_root and node is not self._computing and _collects(node):
            memo = self._memo_var(node, src)
            if memo is not None:
                if memo not in self._ready:
                    outer, self._computing = self._computing, node
                    try:
                        self._compute(memo, node, src)
                    finally:
                        self._computing = outer
                k(memo)
                return
        if isinstance(node, A.Identity):
            k(src)
        elif isinstance(node, A.Literal):
            self._literal(node.value, k)
        elif isinstance(node, A.Index):
            self._index(node, src, k)
        elif isinstance(node, A.Iterate):
            self._iterate(node, src, k)
        elif isinstance(node, A.Pipe):
            self._pipe(node, src, k)
        elif isinstance(node, A.Comma):
            self.emit(node.left, src, k)
            self.emit(node.right, src, k)
        elif isinstance(node, A.Binary):
            self._binary(node, src, k)
        elif isinstance(node, A.ArrayCons):
            self._array(node, src, k)
        elif isinstance(node, A.ObjectCons):
            self._object(node, src, k)
        elif isinstance(node, A.If):
            self._if(node.cond, node.then, list(node.elifs), node.else_, src, k)
        elif isinstance(node, A.Var) and node.name in self._vars:
            k(self._force(self._vars[node.name]))
        elif isinstance(node, A.Try) and node.catch is None and _all_or_nothing(node.body):
            self._try(node.body, src, k)
        elif not (
            (isinstance(node, A.Bind) and self._bind(node, src, k))
            or (isinstance(node, A.Call) and self._call(node, src, k))
        ):
            self._closure(node, src, k)

    def truthy(self, var: str) -> str:
        """A Python test of jq truth (neither null nor false) of the value in ``var``."""
        return var if var in self._bools else f"({var} is not None and {var} is not False)"

    def falsy(self, var: str) -> str:
        return f"not {var}" if var in self._bools else f"({var} is None or {var} is False)"

    def _literal(self, value: Any, k: Continuation) -> None:
        if value.__class__ is float:
            value = norm_number(float(value))
        # Bound to a variable: a literal used as a value (``1 is None``) draws a SyntaxWarning.
        out = self.tmp()
        if value.__class__ is bool:
            self._bools.add(out)
        text = repr(value) if value is None or value.__class__ in (bool, int, str) else self.const(value)
        self.line(f"{out} = {text}")
        k(out)

    def _compiled(self, node: A.Node) -> Compiled:
        """The fast-path closure of ``node``, compiled with the variables bound around it
        (raises Unsupported outside the subset, a free variable among it)."""
        if not self._vars:
            return compile_node(node)
        return compile_child(node, Scope(frozenset(self._vars)))

    def _env(self) -> str:
        """The environment to call an embedded closure with: the bound variables, by name."""
        if not self._vars:
            return "_ENV"
        for var in self._vars.values():
            self._force(var)
        return "{" + ", ".join(f"{name!r}: {var}" for name, var in self._vars.items()) + "}"

    def _closure_recipe(self, node: A.Node, attr: str) -> tuple[Any, ...] | None:
        """The recipe of an attribute of ``node``'s fast-path closure: its jq text (which must
        parse back to ``node``) and the variables bound around it."""
        if self.recipes is None:
            return None
        from karta.jq.parser import parse
        from karta.jq.printer import to_jq

        try:
            text = to_jq(node)
            if parse(text) != node:
                return None
        except Exception:  # a tree the printer or parser cannot round-trip: not cached
            return None
        return ("closure", text, tuple(sorted(self._vars)), attr)

    def _closure(self, node: A.Node, src: str, k: Continuation) -> None:
        """Embed the fast-path closure of ``node`` (raises Unsupported outside the subset)."""
        compiled = self._compiled(node)
        out = self.tmp()
        if compiled.fn is not None:
            self.line(f"{out} = {self.const(compiled.fn, self._closure_recipe(node, 'fn'))}({src})")
            k(out)
            return
        if compiled.one is not None:
            one = self.const(compiled.one, self._closure_recipe(node, "one"))
            self.line(f"{out} = {one}({src}, {self._env()})")
            k(out)
            return
        many = self.const(compiled.many, self._closure_recipe(node, "many"))
        with self.block(f"for {out} in {many}({src}, {self._env()}):"):
            k(out)

    def _try(self, body: A.Node, src: str, k: Continuation) -> None:
        """``body?`` for a body that fails before its first output or not at all: its outputs,
        or none (the closures keep the outputs before an error; there are none)."""
        outs = self.tmp("a")
        self.line(f"{outs} = []")
        with self.block("try:"):
            self.emit(body, src, lambda x: self.line(f"{outs}.append({x})"))
        with self.block("except JqFail:"):
            self.line(f"{outs} = []")
        x = self.tmp("x")
        with self.block(f"for {x} in {outs}:"):
            k(x)

    def _bind(self, node: A.Bind, src: str, k: Continuation) -> bool:
        """``E as $name | body``: the body once per output of ``E``, ``$name`` a Python variable.
        Destructuring patterns are left to the closures (False)."""
        if len(node.patterns) != 1 or not isinstance(node.patterns[0], A.VarPattern):
            return False
        name = node.patterns[0].name
        memo = self._memo_var(node.source, src)

        def with_value(x: str) -> None:
            outer = self._vars.get(name)
            self._vars[name] = x
            try:
                self.emit(node.body, src, k)
            finally:
                if outer is None:
                    del self._vars[name]
                else:
                    self._vars[name] = outer

        if memo is None:
            self.emit(node.source, src, with_value)
            return True
        if cannot_fail(node.source):
            # Nothing to report if it is never used (it cannot fail), so computed on first use:
            # a matcher's bindings then cost nothing when its first test is false.
            self._lazy.setdefault(memo, (node.source, src, self._memo_vars[memo]))
        elif memo not in self._ready:
            self._compute(memo, node.source, src)
        with_value(memo)
        return True

    def _compute(self, memo: str, source: A.Node, src: str) -> None:
        with self.block(f"if {memo} is _UNSET:"):
            self.emit(source, src, lambda x: self.line(f"{memo} = {x}"))
        self._ready.add(memo)
        self._ready_scopes[-1].append(memo)

    def _force(self, var: str) -> str:
        """``var``, computed first if it is a lazy binding not yet computed on this path."""
        lazy = self._lazy.get(var)
        if lazy is not None and var not in self._ready:
            source, src, bound = lazy
            outer, self._vars = self._vars, bound
            try:
                self._compute(var, source, src)
            finally:
                self._vars = outer
        return var

    def _memo_var(self, source: A.Node, src: str) -> str | None:
        """The variable memoising ``source`` on ``src`` (see :meth:`memoise`), or None."""
        if src != self._memo_root or not is_single(source):
            return None
        text = to_jq(source)
        # The variables the source may read (its text names them: a superset, which only makes
        # the key more specific); the others do not change its value, so bindings of the same
        # source under different enclosing bindings share one variable.
        used = {name: var for name, var in self._vars.items() if re.search(rf"\${name}\b", text)}
        memoised = set(self._memo.values()) | self._parameters
        if any(var not in memoised for var in used.values()):
            return None  # bound per item of a loop, or per output: not fixed for the call
        key = (text, frozenset(used.items()))
        var = self._memo.get(key)
        if var is None:
            var = self._memo[key] = self.tmp("mb")
            self._memo_vars[var] = used
        return var

    def _get(self, src: str, key: Any) -> str:
        if key.__class__ is str:
            known = self._fields.get((src, key))
            if known is not None:
                return known
            out = self.tmp()
            k = repr(key)
            if self._indexed.get(src):
                self.line(f"{out} = None if {src} is None else {src}.get({k})")
            else:
                self.line(f"if {src}.__class__ is dict: {out} = {src}.get({k})")
                self.line(f"elif {src} is None: {out} = None")
                self.line(f"else: {out} = _index({src}, {k})")
            # A variable passed on to a continuation is final: never reassigned afterwards.
            self._fields[(src, key)] = out
            self._scopes[-1].append((src, key))
            self._indexed[src] = self._indexed.get(src, 0) + 1
        else:
            out = self.tmp()
            self.line(f"{out} = _index({src}, {self.const(key)})")
        return out

    def _index(self, node: A.Index, src: str, k: Continuation) -> None:
        index = node.index
        if isinstance(index, A.Literal) and (
            index.value.__class__ is str or index.value.__class__ in (int, float)
        ):
            key = index.value
            self.emit(node.target, src, lambda t: k(self._get(t, key)))
            return

        # jq evaluates the index (outer loop) on the input of the whole expression, then the target.
        def with_key(key_var: str) -> None:
            def with_target(t: str) -> None:
                out = self.tmp()
                self.line(f"{out} = _index({t}, {key_var})")
                k(out)

            self.emit(node.target, src, with_target)

        self.emit(index, src, with_key)

    def _items(self, src: str) -> str:
        """The iterable of ``src[]``: a list as it is (no call), anything else through _iterate."""
        if not src.isidentifier():
            t = self.tmp()
            self.line(f"{t} = {src}")
            src = t
        return f"({src} if {src}.__class__ is list else _iterate({src}))"

    def _iterate(self, node: A.Iterate, src: str, k: Continuation) -> None:
        def each(t: str) -> None:
            x = self.tmp("x")
            with self.block(f"for {x} in {self._items(t)}:"):
                k(x)

        self.emit(node.target, src, each)

    def _pipe(self, node: A.Pipe, src: str, k: Continuation) -> None:
        if node.left == _TO_ENTRIES_ITER and node.right == _DOT_KEY:
            x = self.tmp("x")
            with self.block(f"for {x} in _entry_keys({src}):"):
                k(x)
            return
        self.emit(node.left, src, lambda x: self.emit(node.right, x, k))

    def _binary(self, node: A.Binary, src: str, k: Continuation) -> None:
        op = node.op
        if op == "//":
            self._alternative(node, src, k)
            return
        if op in ("and", "or"):
            self._logic(node.left, node.right, src, k, is_and=op == "and")
            return
        fn = BINARY_OPS.get(op)
        if fn is None:
            raise Unsupported(f"operator {op}")
        right = node.right

        # jq: the right operand is the outer loop.
        def with_right(r: str) -> None:
            def with_left(left: str) -> None:
                out = self.tmp()
                if op in _INT_ARITHMETIC:
                    # Two ints: Python's exact result while it is one jq keeps exact.
                    general = f"{self.const(fn, ('binary', op))}({left}, {r})"
                    with self.block(f"if {left}.__class__ is int and {r}.__class__ is int:"):
                        self.line(f"{out} = {left} {op} {r}")
                        self.line(f"if not {-MAX_EXACT} <= {out} <= {MAX_EXACT}: {out} = {general}")
                    with self.block("else:"):
                        self.line(f"{out} = {general}")
                else:
                    self.line(f"{out} = {self._binary_expr(op, left, r, right)}")
                    if op in ("==", "!=") or op in _COMPARISONS:
                        self._bools.add(out)  # a comparison yields a boolean
                k(out)

            self.emit(node.left, src, with_left)

        self.emit(right, src, with_right)

    def _binary_expr(self, op: str, left: str, r: str, right: A.Node) -> str:
        literal = right.value if isinstance(right, A.Literal) else None
        if op in ("==", "!=") and literal.__class__ is str:
            # equal(a, "s") holds only for the string "s".
            test = f"({left}.__class__ is str and {left} == {r})"
            return test if op == "==" else f"not {test}"
        if op in ("==", "!=") and isinstance(right, A.Literal) and right.value is None:
            return f"({left} is None)" if op == "==" else f"({left} is not None)"  # null equals null only
        if op in ("==", "!=") and literal.__class__ is bool:
            # true equals true only (not 1: Python's 1 == True is not jq's), false false only.
            return f"({left} is {literal})" if op == "==" else f"({left} is not {literal})"
        if op in ("==", "!=") and literal.__class__ is int and -MAX_EXACT < literal < MAX_EXACT:
            # An int equals a small int literal exactly when Python says so (a huge int is not
            # near it, however jq rounds it); anything else through the general operator.
            general = f"{self.const(BINARY_OPS[op], ('binary', op))}({left}, {r})"
            return f"({left} {op} {r} if {left}.__class__ is int else {general})"
        if op in _COMPARISONS and literal.__class__ is int:
            general = f"{self.const(BINARY_OPS[op], ('binary', op))}({left}, {r})"
            return f"({left} {_COMPARISONS[op]} {r} if {left}.__class__ is int else {general})"
        return f"{self.const(BINARY_OPS[op], ('binary', op))}({left}, {r})"

    def _alternative(self, node: A.Binary, src: str, k: Continuation) -> None:
        left, right = node.left, node.right
        if is_single(left):
            value = self.tmp("a")
            self.line(f"{value} = None")
            with self.block("try:"):
                self.emit(left, src, lambda x: self.line(f"{value} = {x}"))
            with self.block("except JqFail:"):
                self.line(f"{value} = None")
            if is_single(right):
                with self.block(f"if {value} is None or {value} is False:"):
                    self.emit(right, src, lambda x: self.line(f"{value} = {x}"))
                k(value)
                return

            def right_or_value(k: Continuation) -> None:
                with self.block(f"if {value} is None or {value} is False:"):
                    self.emit(right, src, k)
                with self.block("else:"):
                    k(value)

            self._merged(right_or_value, False, k)
            return
        outs, good = self.tmp("a"), self.tmp("g")
        self.line(f"{outs} = []")
        with self.block("try:"):
            self.emit(left, src, lambda x: self.line(f"{outs}.append({x})"))
        with self.block("except JqFail:"):
            # Exactly what the closures keep: the outputs produced before the error.
            gen = self.const(self._compiled(left).gen, self._closure_recipe(left, "gen"))
            self.line(f"{outs} = _until_error({gen}({src}, {self._env()}))")
        self.line(f"{good} = [x for x in {outs} if x is not None and x is not False]")

        def produce(k: Continuation) -> None:
            with self.block(f"if {good}:"):
                x = self.tmp("x")
                with self.block(f"for {x} in {good}:"):
                    k(x)
            with self.block("else:"):
                self.emit(right, src, k)

        self._merged(produce, False, k)

    def _merged(
        self,
        produce: Callable[[Continuation], None],
        single: bool,
        k: Continuation,
        *,
        booleans: bool = False,
    ) -> None:
        """Run ``produce`` (which emits branches, each calling its continuation) and emit ``k``
        once, after the branches: the value in one variable when ``single`` (each path that does
        not fail yields exactly one output), else the outputs collected in order. Emitting ``k``
        in every branch instead doubles the code at each ``and``, ``or``, ``if`` or ``//``, and a
        binding (``... as $x | rest``) puts the rest of the expression in that continuation."""
        if single:
            out = self.tmp("m")
            self.line(f"{out} = None")
            produce(lambda x: self.line(f"{out} = {x}"))
            if booleans:  # every branch yields a boolean (and/or)
                self._bools.add(out)
            k(out)
            return
        outs, x = self.tmp("m"), self.tmp("x")
        self.line(f"{outs} = []")
        produce(lambda y: self.line(f"{outs}.append({y})"))
        with self.block(f"for {x} in {outs}:"):
            k(x)

    def _logic(self, left: A.Node, right: A.Node, src: str, k: Continuation, *, is_and: bool) -> None:
        def produce(k: Continuation) -> None:
            def with_left(x: str) -> None:
                short = self.falsy(x) if is_and else self.truthy(x)
                with self.block(f"if {short}:"):
                    self._literal(not is_and, k)
                with self.block("else:"):

                    def with_right(r: str) -> None:
                        out = self.tmp()
                        self.line(f"{out} = {self.truthy(r)}")
                        self._bools.add(out)
                        k(out)

                    self.emit(right, src, with_right)

            self.emit(left, src, with_left)

        self._merged(produce, is_single(left) and is_single(right), k, booleans=True)

    def _array(self, node: A.ArrayCons, src: str, k: Continuation) -> None:
        out = self.tmp("arr")
        self.line(f"{out} = []")
        if node.body is not None:
            self.emit(node.body, src, lambda x: self.line(f"{out}.append({x})"))
        k(out)

    def _object(self, node: A.ObjectCons, src: str, k: Continuation) -> None:
        entries = list(node.entries)
        pairs: list[tuple[str, str]] = []

        # The first entry is the outermost loop: key, then value, then the next entry.
        def entry(i: int) -> None:
            if i == len(entries):
                out = self.tmp("obj")
                self.line(f"{out} = {{{', '.join(f'{key}: {value}' for key, value in pairs)}}}")
                k(out)
                return

            def with_key(key: str) -> None:
                literal = entries[i].key
                if not (isinstance(literal, A.Literal) and literal.value.__class__ is str):
                    self.line(f"if {key}.__class__ is not str: raise JqFail('object key')")

                def with_value(value: str) -> None:
                    pairs.append((key, value))
                    entry(i + 1)
                    pairs.pop()

                self.emit(entries[i].value, src, with_value)

            self.emit(entries[i].key, src, with_key)

        entry(0)

    def _if(
        self,
        cond: A.Node,
        then: A.Node,
        elifs: list[tuple[A.Node, A.Node]],
        else_: A.Node | None,
        src: str,
        k: Continuation,
    ) -> None:
        def produce(k: Continuation) -> None:
            def with_cond(c: str) -> None:
                with self.block(f"if {self.truthy(c)}:"):
                    self.emit(then, src, k)
                with self.block("else:"):
                    if elifs:
                        (next_cond, next_then), *rest = elifs
                        self._if(next_cond, next_then, rest, else_, src, k)
                    elif else_ is not None:
                        self.emit(else_, src, k)
                    else:
                        k(src)

            self.emit(cond, src, with_cond)

        parts = [cond, then, *(n for pair in elifs for n in pair), *([] if else_ is None else [else_])]
        self._merged(produce, all(is_single(n) for n in parts), k)

    def _call(self, node: A.Call, src: str, k: Continuation) -> bool:
        """Emit the builtins the table marks ``native``; False for the others (embedded as closures)."""
        name, args = node.name, node.args
        if not args and name in A.KEYWORD_CONSTANTS:
            self._literal(A.KEYWORD_CONSTANTS[name], k)
            return True
        fast = fast_of(name, len(args))
        if name == "not" and fast is not None and fast.native:  # a boolean, tested as one
            out = self.tmp()
            self.line(f"{out} = {self.falsy(src)}")
            self._bools.add(out)
            k(out)
            return True
        if fast is None or not fast.native:
            return False
        if fast.kind == "value" and len(args) == 1:
            fn1 = self.const(value_function(fast), ("builtin", name, len(args)))

            literal = args[0].value if isinstance(args[0], A.Literal) else None
            method = name if name in ("startswith", "endswith") and literal.__class__ is str else None

            # f(v, a) for every output a of the argument, evaluated on the input.
            def with_argument(a: str) -> None:
                out = self.tmp()
                if method is not None:
                    # A string and a literal string: Python's test (code points are jq's); anything
                    # else through the builtin, which raises as jq does.
                    self.line(f"{out} = {src}.{method}({a}) if {src}.__class__ is str else {fn1}({src}, {a})")
                    self._bools.add(out)
                else:
                    self.line(f"{out} = {fn1}({src}, {a})")
                k(out)

            self.emit(args[0], src, with_argument)
            return True
        if fast.kind == "value":
            fn = value_function(fast)
            out = self.tmp()
            if fast.inline:
                recipe = ("builtin", name, len(args))
                fields = {"x": src, "fn": self.const(fn, recipe) if "{fn}" in fast.inline else ""}
                self.line(f"{out} = {fast.inline.format(**fields)}")
            else:
                self.line(f"{out} = {self.const(fn, ('builtin', name, len(args)))}({src})")
            k(out)
            return True
        inline: Callable[[tuple[A.Node, ...], str, Continuation], bool] = getattr(
            self, f"_inline_{fast.impl}"
        )
        return inline(args, src, k)

    # --- builders emitted inline (``Fast.native`` in the builtin table) ---------------------------

    def _inline_empty(self, args: tuple[A.Node, ...], src: str, k: Continuation) -> bool:
        return True  # no output

    def _inline_first(self, args: tuple[A.Node, ...], src: str, k: Continuation) -> bool:
        self._index(A.Index(A.Identity(), A.Literal(0)), src, k)
        return True

    def _inline_last(self, args: tuple[A.Node, ...], src: str, k: Continuation) -> bool:
        self._index(A.Index(A.Identity(), A.Literal(-1)), src, k)
        return True

    def _inline_first_of(self, args: tuple[A.Node, ...], src: str, k: Continuation) -> bool:
        # The first output only: the closures stop there (an error after it is not raised).
        out, found = self.tmp("a"), self.tmp("f")
        self.line(f"{out} = None")
        self.line(f"{found} = False")
        with self.block("try:"):

            def with_value(x: str) -> None:
                self.line(f"{out} = {x}")
                self.line(f"{found} = True")
                self.line("raise _Stop")

            self.emit(args[0], src, with_value)
        with self.block("except _Stop:"):
            pass
        with self.block(f"if {found}:"):
            k(out)
        return True

    def _inline_last_of(self, args: tuple[A.Node, ...], src: str, k: Continuation) -> bool:
        outs = self.tmp("a")
        self.line(f"{outs} = []")
        self.emit(args[0], src, lambda x: self.line(f"{outs}.append({x})"))
        last = self.tmp()
        with self.block(f"if {outs}:"):
            self.line(f"{last} = {outs}[-1]")
            k(last)
        return True

    def _inline_select(self, args: tuple[A.Node, ...], src: str, k: Continuation) -> bool:
        def with_cond(c: str) -> None:
            with self.block(f"if {self.truthy(c)}:"):
                k(src)

        self.emit(args[0], src, with_cond)
        return True

    def _inline_in_of(self, args: tuple[A.Node, ...], src: str, k: Continuation) -> bool:
        """``IN``: jq's own definition (``any(s == .; .)``, :func:`karta.jq.syntax.library_call`)."""
        body = A.library_call(A.Call("IN", args))
        if body is None:
            return False
        self.emit(body, src, k)
        return True

    def _inline_any_of(self, args: tuple[A.Node, ...], src: str, k: Continuation) -> bool:
        return self._quantifier(args, src, k, is_any=True)

    def _inline_all_of(self, args: tuple[A.Node, ...], src: str, k: Continuation) -> bool:
        return self._quantifier(args, src, k, is_any=False)

    def _quantifier(self, args: tuple[A.Node, ...], src: str, k: Continuation, *, is_any: bool) -> bool:
        if len(args) == 2 or not is_single(args[0]):
            # ``any(g; c)``, or a condition with several outputs: stop at the first decisive one
            # (the closures are lazy: nothing after it is evaluated, an error after it is not raised).
            generator, cond = (args[0], args[1]) if len(args) == 2 else (None, args[0])
            out = self.tmp()
            self.line(f"{out} = {not is_any!r}")
            with self.block("try:"):

                def with_item(x: str) -> None:
                    def with_cond(c: str) -> None:
                        test = self.truthy(c) if is_any else self.falsy(c)
                        self.line(f"if {test}: raise _Stop")

                    self.emit(cond, x, with_cond)

                if generator is None:
                    x = self.tmp("x")
                    with self.block(f"for {x} in {self._items(src)}:"):
                        with_item(x)
                else:
                    self.emit(generator, src, with_item)
            with self.block("except _Stop:"):
                self.line(f"{out} = {is_any!r}")
            self._bools.add(out)
            k(out)
            return True
        out, x = self.tmp(), self.tmp("x")
        self.line(f"{out} = {not is_any!r}")
        with self.block(f"for {x} in {self._items(src)}:"):

            def with_cond(c: str) -> None:
                with self.block(f"if {self.truthy(c) if is_any else self.falsy(c)}:"):
                    self.line(f"{out} = {is_any!r}")
                    self.line("break")

            self.emit(args[0], x, with_cond)
        self._bools.add(out)
        k(out)
        return True


#: Generated functions by expression text (None: outside the fast path); read by the evaluator.
generated_cache: dict[str, GeneratedFn | None] = {}
_CACHE_SIZE = 4096


def fast_node(expression: str, names: Sequence[str] = ()) -> A.Node:
    """The syntax tree of ``expression`` for a generator, with the jq variables ``names`` bound
    around it (a definition's references, :meth:`Emitter.bind_parameters`); raises
    :class:`Unsupported` when it is outside the fast path, and the evaluator's
    :class:`~karta.errors.JqError` when it does not compile. An expression that reads a name is
    checked as the evaluator binds it (:func:`karta.jq.bound.rewrite`): the same plan, the same
    checks and errors as the bound evaluation the generated function stands in for."""
    from karta.jq.evaluator import plan_for

    if names:
        from karta.jq.bound import bound_names, rewrite

        read = bound_names(expression, frozenset(names))
        if read:
            bound = plan_for(rewrite(expression, read))
            if bound.fast is None:
                raise Unsupported(f"not on the fast path: {expression}")
            from karta.jq.parser import parse_cached

            return parse_cached(expression)
    plan = plan_for(expression)
    if plan.fast is None or plan.node is None:
        raise Unsupported(f"not on the fast path: {expression}")
    return plan.node


def generate(expression: str, node: A.Node) -> GeneratedFn | None:
    """The generated function of a fast-path expression (cached by text, in this process and in
    karta._codegen's definition cache, where a later process reads it instead of generating), or
    None when the expression is outside the fast path, under ``KARTA_CODEGEN=off``, or when
    generating failed (which raises instead under ``KARTA_CODEGEN=strict``). Called from an
    expression's second use (karta.jq.evaluator): its first runs the closures its plan has
    compiled anyway, which costs less than reading its code."""
    try:
        return generated_cache[expression]
    except KeyError:
        pass
    fn: GeneratedFn | None = None
    what = f"jq {expression}"
    if codegen.enabled():
        try:
            key = expression_key(expression)
            fn = None if key is None else load_function(key, {}, "run", what)
            if fn is None:
                emitter = Emitter(recipes=key is not None)
                with emitter.block("def run(v):"):
                    emitter.line("out = []")
                    emitter.emit(node, "v", lambda x: emitter.line(f"out.append({x})"))
                    emitter.line("return out")
                fn = emitter.build("run", what=what)
                if key is not None and emitter.recipes is not None:
                    codegen.store_definition(key, emitter.code, emitter.recipes, emitter.source)
        except (Unsupported, RecursionError) as exc:  # outside the fast path, or too deep
            codegen.declined(what, exc)
        except Exception as exc:
            codegen.failed(what, exc)
    if len(generated_cache) >= _CACHE_SIZE:
        generated_cache.clear()
    generated_cache[expression] = fn
    return fn


def generate_table(expressions: Sequence[str], *, key: str | None, what: str) -> dict[str, GeneratedFn]:
    """The generated functions of many expressions, by text, from one source (one function per
    expression, and ``table()`` returning them by text), kept under ``key`` in karta._codegen's
    definition cache (None: not kept), where a later process reads the whole table at once
    (:func:`karta.jq.generated_runtime.load_table`) instead of parsing and generating: the
    pod-side expressions of a definition (:mod:`karta.extract.pods`).

    Each function is :func:`generate`'s for its expression (the same contract: the closures'
    outputs, or JqFail). An expression our parser rejects, that the checks refuse, outside the
    fast path, or whose code is declined (beyond Python's compiler limits too: the others are
    generated without it), has no function (its evaluation takes the general path); so has every
    one when generating fails (which raises under ``KARTA_CODEGEN=strict``) or under
    ``KARTA_CODEGEN=off``."""
    if not codegen.enabled():
        return {}
    try:
        try:
            return _table(expressions, key, what)
        except codegen.Declined as exc:  # one of them beyond the compiler's limits: find which
            codegen.declined(what, exc)
            kept = [text for text in expressions if _compiles_alone(text, what)]
            return _table(kept, key, what)
    except (Unsupported, RecursionError, codegen.Declined) as exc:  # too large, or too deep
        codegen.declined(what, exc)
    except Exception as exc:
        codegen.failed(what, exc)
    return {}


def _compiles_alone(text: str, what: str) -> bool:
    try:
        _table([text], None, what)
    except codegen.Declined:
        return False
    return True


def _table(expressions: Sequence[str], key: str | None, what: str) -> dict[str, GeneratedFn]:
    """:func:`generate_table`'s work; raises Declined for a source beyond the compiler's limits."""
    from karta.errors import JqError
    from karta.jq.evaluator import plan_for

    emitter = Emitter(recipes=key is not None)
    names: dict[str, str] = {}
    for text in expressions:
        if text in names:
            continue
        try:
            plan = plan_for(text)
        except JqError as exc:  # refused by the checks: the evaluation reports it
            codegen.declined(f"jq {text}", exc)
            continue
        if plan.node is None or plan.fast is None:  # libjq's, or a parse error to report
            continue
        # what a declined expression added is dropped (its constants' names stay unused)
        lines, consts, recipes = len(emitter.lines), dict(emitter._consts), emitter.recipes
        saved = None if recipes is None else dict(recipes)
        name = f"run_{len(names)}"
        try:
            with emitter.block(f"def {name}(v):"):
                emitter.line("out = []")
                emitter.emit(plan.node, "v", lambda x: emitter.line(f"out.append({x})"))
                emitter.line("return out")
        except (Unsupported, RecursionError) as exc:  # outside the fast path, or too deep
            del emitter.lines[lines:]
            emitter._consts, emitter.recipes = consts, saved
            codegen.declined(f"jq {text}", exc)
            continue
        names[text] = name
    with emitter.block("def table():"):
        emitter.line("return {" + ", ".join(f"{text!r}: {name}" for text, name in names.items()) + "}")
    table: dict[str, GeneratedFn] = emitter.build("table", what=what)()
    if key is not None and emitter.recipes is not None:
        codegen.store_definition(key, emitter.code, emitter.recipes, emitter.source)
    return table
