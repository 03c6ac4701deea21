"""Which paths of the workload object a jq expression reads, and what it yields: a static analysis.

:func:`analyse` runs a parsed expression (:mod:`karta.jq.syntax`) on abstract values instead of
JSON: :class:`Loc` is a value at a path of the object (``.spec.tasks[]``), :class:`Lit` a value the
expression computes (a literal, a comparison, ``length``), :class:`Arr` and :class:`Obj` arrays and
objects it builds, :class:`Entry` an entry of ``to_entries``, and :class:`Unknown` a value it cannot
follow. Every access of a :class:`Loc` is recorded (:attr:`Analysis.reads`), so that the schema
check (:mod:`karta.schema.check`) can look each one up; :attr:`Analysis.outputs` are the results,
whose shape it checks against what the field expects.

Builtins are followed through their ``flow`` record (:class:`karta.jq.builtin_table.Flow`); a
builtin without one, ``..``, ``getpath``, a recursion deeper than a few calls, or more alternatives
than :data:`MAX_VALUES` make an :class:`Unknown` and a note in :attr:`Analysis.unfollowed`: never a
silent pass. Alternatives are over-approximated (``a // b`` yields both sides, ``if`` every branch),
so every path the expression may read is looked up. The analysis is bounded: at most
:data:`MAX_STEPS` node evaluations per expression, beyond which the whole expression is not
followed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from karta.jq import syntax as A
from karta.jq.builtin_table import BUILTINS, Flow

__all__ = [
    "EACH",
    "ENTRY",
    "MAX_DEPTH",
    "MAX_STEPS",
    "MAX_VALUES",
    "Analysis",
    "Arr",
    "Entry",
    "Lit",
    "Loc",
    "Obj",
    "Path",
    "Step",
    "Unknown",
    "Value",
    "analyse",
    "path_text",
]

MAX_VALUES = 64  # distinct abstract values one node may yield before it is not followed
MAX_STEPS = 20_000  # node evaluations per expression
MAX_DEPTH = 64  # steps of one object path (a real object is far shallower)
_MAX_CALL_DEPTH = 8  # nested calls of user-defined functions
_MAX_REDUCE_ROUNDS = 3
_MAX_NOTED = 10  # places of one expression noted as not followed


class Step(NamedTuple):
    """One step of an object path: a ``field``, an array ``index``, ``each`` element or value
    (``[]``), a ``key`` computed by the expression (``.[$k]``), or the value of each ``entry`` of
    ``to_entries`` (which may enumerate an object's fixed fields on purpose)."""

    kind: Literal["field", "index", "each", "key", "entry"]
    name: str = ""
    position: int = 0


EACH = Step("each")
ENTRY = Step("entry")
_KEY = Step("key")

Path = tuple[Step, ...]


def path_text(path: Path) -> str:
    """``path`` as jq: ``.spec.tasks[].template``, ``.metadata.labels["a/b"]``, ``.[0]``, ``.x[$k]``."""
    out = []
    for step in path:
        if step.kind == "field":
            name = step.name
            out.append(f".{name}" if name.isidentifier() and name.isascii() else f"[{json.dumps(name)}]")
        elif step.kind == "index":
            out.append(f"[{step.position}]")
        elif step.kind == "each":
            out.append("[]")
        elif step.kind == "entry":
            out.append(" | to_entries[].value")
        else:
            out.append("[$key]")
    text = "".join(out)
    return text if text.startswith(".") else "." + text


@dataclass(frozen=True, slots=True)
class Loc:
    """A value at ``path`` in the workload object."""

    path: Path


@dataclass(frozen=True, slots=True)
class Lit:
    """A value the expression computes (not in the object): of JSON ``type`` when known (``""``
    otherwise), with its ``value`` when it is a known scalar (``has_value``)."""

    type: str = ""
    value: Any = None
    has_value: bool = False


@dataclass(frozen=True, slots=True)
class Arr:
    """An array the expression builds; ``items`` are what its elements may be."""

    items: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Obj:
    """An object the expression builds: what each literal key may hold; ``open`` when some key is
    computed (any other key may be there too)."""

    fields: tuple[tuple[str, tuple[Value, ...]], ...]
    open: bool = False

    def get(self, name: str) -> tuple[Value, ...] | None:
        for key, values in self.fields:
            if key == name:
                return values
        return None


@dataclass(frozen=True, slots=True)
class Entry:
    """An entry ``{key, value}`` of ``to_entries`` on the object value at ``path``."""

    path: Path


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value the analysis cannot follow (it may come from the object)."""

    reason: str


Value = Loc | Lit | Arr | Obj | Entry | Unknown

_NULL = Lit("null", None, True)
_BOOLEAN = Lit("boolean")
_NUMBER = Lit("number")
_STRING = Lit("string")
_ANY = Lit("")


@dataclass
class Analysis:
    """What :func:`analyse` found: ``reads`` (every object path accessed, with the character
    offset of the access in the expression, first occurrence), the possible ``outputs``, and
    ``unfollowed`` (offset, reason) for what it could not follow."""

    reads: dict[Path, int] = field(default_factory=dict)
    outputs: tuple[Value, ...] = ()
    unfollowed: list[tuple[int, str]] = field(default_factory=list)


class _GiveUp(Exception):
    pass


@dataclass(frozen=True)
class _Closure:
    """A user function (``def``) or a filter parameter, with the scope it was defined in."""

    node: A.Node
    env: _Env
    params: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Env:
    variables: dict[str, tuple[Value, ...]] = field(default_factory=dict)
    functions: dict[tuple[str, int], _Closure] = field(default_factory=dict)
    depth: int = 0

    def with_variables(self, bound: dict[str, tuple[Value, ...]]) -> _Env:
        return _Env({**self.variables, **bound}, self.functions, self.depth)

    def with_function(self, key: tuple[str, int], closure: _Closure) -> _Env:
        return _Env(self.variables, {**self.functions, key: closure}, self.depth)


def _unique(values: Iterable[Value]) -> tuple[Value, ...]:
    out = tuple(dict.fromkeys(values))
    if len(out) > MAX_VALUES:
        return (Unknown(f"more than {MAX_VALUES} alternatives"),)
    return out


def _literal(value: Any) -> Lit:
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return Lit("boolean", value, True)
    if isinstance(value, int | float):
        return Lit("number", value, True)
    return Lit("string", value, True)


class _Analyser:
    def __init__(self) -> None:
        self.result = Analysis()
        self.steps = 0

    # -- recording ----------------------------------------------------------------------------
    def read(self, path: Path, pos: int) -> Loc | Unknown:
        if len(path) > MAX_DEPTH:
            return self.unknown(pos, f"an object path deeper than {MAX_DEPTH} steps")
        self.result.reads.setdefault(path, pos)
        return Loc(path)

    def unknown(self, pos: int, reason: str) -> Unknown:
        noted = self.result.unfollowed
        if len(noted) < _MAX_NOTED and (pos, reason) not in noted:
            noted.append((pos, reason))
        return Unknown(reason)

    # -- values -------------------------------------------------------------------------------
    def access(self, target: Value, key: Lit | None, pos: int) -> list[Value]:
        """``target[key]`` (``key`` None: a key the expression computes)."""
        if isinstance(target, Loc):
            if key is not None and key.has_value and isinstance(key.value, str):
                return [self.read((*target.path, Step("field", key.value)), pos)]
            if (
                key is not None
                and key.has_value
                and isinstance(key.value, int)
                and not isinstance(key.value, bool)
            ):
                return [self.read((*target.path, Step("index", position=key.value)), pos)]
            if key is not None and key.type in ("null", "boolean", "object", "array"):
                return []  # an error in jq: no output
            return [self.read((*target.path, _KEY), pos)]
        if isinstance(target, Obj):
            if key is not None and key.has_value and isinstance(key.value, str):
                values = target.get(key.value)
                if values is None:
                    return [self.unknown(pos, "a computed key of a built object")] if target.open else [_NULL]
                return list(values)
            return [v for _, values in target.fields for v in values] + [_NULL]
        if isinstance(target, Arr):
            if key is not None and key.type == "string":
                return []  # an error in jq
            return [*target.items, _NULL]
        if isinstance(target, Entry):
            if key is not None and key.has_value and key.value == "key":
                return [_STRING]  # a map's keys (the check reads to_entries on lists and maps)
            if key is not None and key.has_value and key.value == "value":
                return [self.read((*target.path, ENTRY), pos)]
            return (
                [_NULL]
                if key is not None and key.has_value
                else [_ANY, self.read((*target.path, ENTRY), pos)]
            )
        if isinstance(target, Unknown):
            return [target]
        return [_ANY]  # a field of a computed value: not in the object

    def elements(self, target: Value, pos: int) -> list[Value]:
        """``target[]``: the elements of an array, the values of an object."""
        if isinstance(target, Loc):
            return [self.read((*target.path, EACH), pos)]
        if isinstance(target, Arr):
            return list(target.items)
        if isinstance(target, Obj):
            if target.open:
                return [
                    *(v for _, values in target.fields for v in values),
                    self.unknown(pos, "a computed key"),
                ]
            return [v for _, values in target.fields for v in values]
        if isinstance(target, Entry):
            return [_ANY, self.read((*target.path, ENTRY), pos)]
        if isinstance(target, Unknown):
            return [target]
        return [_ANY]

    def entries(self, target: Value, pos: int) -> list[Value]:
        """The entries of ``to_entries``."""
        if isinstance(target, Loc):
            self.read((*target.path, ENTRY), pos)
            return [Entry(target.path)]
        if isinstance(target, Unknown):
            return [target]
        values = tuple(self.elements(target, pos))
        key = _NUMBER if isinstance(target, Arr) else _STRING if isinstance(target, Obj) else _ANY
        return [Obj((("key", (key,)), ("value", _unique(values))))]

    # -- evaluation ---------------------------------------------------------------------------
    def run(self, node: A.Node, inputs: Iterable[Value], env: _Env) -> tuple[Value, ...]:
        out: list[Value] = []
        for value in inputs:
            out.extend(self.eval(node, value, env))
        return _unique(out)

    def eval(self, node: A.Node, value: Value, env: _Env) -> tuple[Value, ...]:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _GiveUp(f"the analysis took more than {MAX_STEPS} steps")
        return _unique(self._eval(node, value, env))

    def _eval(self, node: A.Node, v: Value, env: _Env) -> Iterable[Value]:
        pos = node.pos
        if isinstance(node, A.Identity):
            return [v]
        if isinstance(node, A.Literal):
            return [_literal(node.value)]
        if isinstance(node, A.Index):
            targets = self.eval(node.target, v, env)
            if isinstance(node.index, A.Literal):
                keys: tuple[Value, ...] = (_literal(node.index.value),)
            else:
                keys = self.eval(node.index, v, env)
            out: list[Value] = []
            for target in targets:
                for key in keys:
                    if isinstance(key, Unknown):
                        out.append(key)
                    else:
                        out.extend(self.access(target, key if isinstance(key, Lit) else None, pos))
            return out
        if isinstance(node, A.Slice):
            for bound in (node.start, node.end):
                if bound is not None:
                    self.eval(bound, v, env)
            return [t if isinstance(t, Loc | Arr | Unknown) else _ANY for t in self.eval(node.target, v, env)]
        if isinstance(node, A.Iterate):
            return [e for t in self.eval(node.target, v, env) for e in self.elements(t, pos)]
        if isinstance(node, A.Pipe):
            return self.run(node.right, self.eval(node.left, v, env), env)
        if isinstance(node, A.Comma):
            return [*self.eval(node.left, v, env), *self.eval(node.right, v, env)]
        if isinstance(node, A.Binary):
            return self._binary(node, v, env)
        if isinstance(node, A.Neg):
            self.eval(node.operand, v, env)
            return [_NUMBER]
        if isinstance(node, A.If):
            out = []
            self.eval(node.cond, v, env)
            out.extend(self.eval(node.then, v, env))
            for cond, then in node.elifs:
                self.eval(cond, v, env)
                out.extend(self.eval(then, v, env))
            out.extend(self.eval(node.else_, v, env) if node.else_ is not None else [v])
            return out
        if isinstance(node, A.Try):
            out = list(self.eval(node.body, v, env))
            if node.catch is not None:
                out.extend(self.eval(node.catch, _STRING, env))
            return out
        if isinstance(node, A.ArrayCons):
            return [Arr(self.eval(node.body, v, env) if node.body is not None else ())]
        if isinstance(node, A.ObjectCons):
            return [self._object(node, v, env)]
        if isinstance(node, A.StringInterp):
            for part in node.parts:
                if isinstance(part, A.Node):
                    self.eval(part, v, env)
            return [_STRING]
        if isinstance(node, A.Format):
            return [_STRING]
        if isinstance(node, A.Var):
            if node.name in env.variables:
                return env.variables[node.name]
            if node.name in ("ENV", "__loc__"):
                return [Lit("object")]
            return [self.unknown(pos, f"variable ${node.name}")]
        if isinstance(node, A.Bind):
            return self._bind(node, v, env)
        if isinstance(node, A.Reduce | A.Foreach):
            return self._fold(node, v, env)
        if isinstance(node, A.FuncDef):
            closure = _Closure(node.body, env, node.params)
            signature = (node.name, len(node.params))
            # The function sees itself (recursion) and the functions defined before it.
            inner = env.with_function(signature, closure)
            object.__setattr__(closure, "env", inner)
            return self.eval(node.rest, v, inner)
        if isinstance(node, A.Call):
            return self._call(node, v, env)
        if isinstance(node, A.Assign):
            self.eval(node.left, v, env)
            rhs_inputs = self.eval(node.left, v, env) if node.op != "=" else (v,)
            self.run(node.right, rhs_inputs, env)
            return [v]
        if isinstance(node, A.Label):
            return self.eval(node.body, v, env)
        if isinstance(node, A.Break):
            return []
        if isinstance(node, A.RecurseAll):
            return [self.unknown(pos, "recursive descent (..)")]
        return [self.unknown(pos, f"{type(node).__name__} is not followed")]

    def _binary(self, node: A.Binary, v: Value, env: _Env) -> list[Value]:
        left = self.eval(node.left, v, env)
        right = self.eval(node.right, v, env)
        op = node.op
        if op == "//":
            return [*left, *right]
        if op in ("and", "or", "==", "!=", "<", "<=", ">", ">="):
            return [_BOOLEAN]
        if op in ("-", "*", "/", "%"):
            return [_NUMBER]
        types = {x.type for x in (*left, *right) if isinstance(x, Lit) and x.type not in ("", "null")}
        return [Lit(types.pop())] if len(types) == 1 else [_ANY]

    def _object(self, node: A.ObjectCons, v: Value, env: _Env) -> Obj:
        fields: dict[str, list[Value]] = {}
        open_ = False
        for entry in node.entries:
            values = self.eval(entry.value, v, env)
            if isinstance(entry.key, A.Literal) and isinstance(entry.key.value, str):
                fields.setdefault(entry.key.value, []).extend(values)
            else:
                self.eval(entry.key, v, env)
                open_ = True
        return Obj(tuple((k, _unique(vs)) for k, vs in fields.items()), open_)

    # -- bindings -----------------------------------------------------------------------------
    def _bind(self, node: A.Bind, v: Value, env: _Env) -> list[Value]:
        out: list[Value] = []
        for source in self.eval(node.source, v, env):
            bound: dict[str, list[Value]] = {}
            for pattern in node.patterns:
                for name, values in self._destructure(pattern, source, v, env):
                    bound.setdefault(name, []).extend(values)
            if len(node.patterns) > 1:  # ?// : a variable absent from one alternative is null there
                for values in bound.values():
                    values.append(_NULL)
            out.extend(self.eval(node.body, v, env.with_variables({k: _unique(x) for k, x in bound.items()})))
        return out

    def _destructure(
        self, pattern: A.Pattern, source: Value, v: Value, env: _Env
    ) -> Iterator[tuple[str, list[Value]]]:
        if isinstance(pattern, A.VarPattern):
            yield pattern.name, [source]
        elif isinstance(pattern, A.ArrayPattern):
            for i, element in enumerate(pattern.elements):
                for item in self.access(source, _literal(i), 0):
                    yield from self._destructure(element, item, v, env)
        else:
            for entry in pattern.entries:
                if entry.key_var is not None:
                    key: Lit | None = _literal(entry.key_var)
                elif isinstance(entry.key, A.Literal) and isinstance(entry.key.value, str):
                    key = _literal(entry.key.value)
                else:
                    key = None
                    if entry.key is not None:
                        self.eval(entry.key, v, env)
                values = self.access(source, key, entry.key.pos if entry.key is not None else 0)
                if entry.key_var is not None:
                    yield entry.key_var, values
                if entry.pattern is not None:
                    for item in values:
                        yield from self._destructure(entry.pattern, item, v, env)

    def _fold(self, node: A.Reduce | A.Foreach, v: Value, env: _Env) -> list[Value]:
        state = list(self.eval(node.init, v, env))
        produced: list[Value] = []
        for source in self.eval(node.source, v, env):
            scope = env.with_variables(
                {k: _unique(x) for k, x in self._bound(node.pattern, source, v, env).items()}
            )
            for _ in range(_MAX_REDUCE_ROUNDS):
                new = self.run(node.update, state, scope)
                grown = _unique([*state, *new])
                if isinstance(node, A.Foreach):
                    extract = node.extract
                    produced.extend(self.run(extract, new, scope) if extract is not None else new)
                if grown == tuple(state):
                    break
                state = list(grown)
        return produced if isinstance(node, A.Foreach) else state

    def _bound(self, pattern: A.Pattern, source: Value, v: Value, env: _Env) -> dict[str, list[Value]]:
        bound: dict[str, list[Value]] = {}
        for name, values in self._destructure(pattern, source, v, env):
            bound.setdefault(name, []).extend(values)
        return bound

    # -- calls --------------------------------------------------------------------------------
    def _call(self, node: A.Call, v: Value, env: _Env) -> list[Value]:
        name, args, pos = node.name, node.args, node.pos
        if not args and name in A.KEYWORD_CONSTANTS:
            return [_literal(A.KEYWORD_CONSTANTS[name])]
        closure = env.functions.get((name, len(args)))
        if closure is not None:
            return self._call_closure(closure, args, v, env, pos)
        builtin = BUILTINS.get(name)
        flow = builtin.flow.get(len(args)) if builtin is not None else None
        if flow is None:
            return [self.unknown(pos, f"{name}/{len(args)} is not followed")]
        return self._flow(flow, args, v, env, pos)

    def _call_closure(
        self, closure: _Closure, args: tuple[A.Node, ...], v: Value, env: _Env, pos: int
    ) -> list[Value]:
        if env.depth >= _MAX_CALL_DEPTH:
            return [self.unknown(pos, f"calls nested more than {_MAX_CALL_DEPTH} deep")]
        scope = _Env(closure.env.variables, closure.env.functions, env.depth + 1)
        for param, arg in zip(closure.params, args, strict=True):
            if param.startswith("$"):
                values = self.eval(arg, v, env)
                scope = scope.with_variables({param[1:]: values})
                scope = scope.with_function((param[1:], 0), _Closure(A.Var(param[1:]), scope))
            else:
                scope = scope.with_function(
                    (param, 0), _Closure(arg, _Env(env.variables, env.functions, env.depth + 1))
                )
        return list(self.eval(closure.node, v, scope))

    def _flow(self, flow: Flow, args: tuple[A.Node, ...], v: Value, env: _Env, pos: int) -> list[Value]:
        outputs: list[tuple[Value, ...]] = []
        for i, (arg, where) in enumerate(zip(args, flow.args, strict=False)):
            if where == "e":
                inputs: tuple[Value, ...] = _unique(self.elements(v, pos))
            elif where == "n":
                inputs = _unique(self.entries(v, pos))
            elif where == "a" and i > 0:
                inputs = outputs[0]
            else:
                inputs = (v,)
            outputs.append(self.run(arg, inputs, env))
        out = flow.output
        if out == "value":
            return [Lit(flow.type)]
        if out == "has":
            if isinstance(v, Loc) and outputs:
                for key in outputs[0]:
                    if isinstance(key, Lit) and key.has_value and isinstance(key.value, str | int):
                        self.access(v, key, pos)
            return [_BOOLEAN]
        if out == "input":
            return [v]
        if out == "element":
            return self.elements(v, pos)
        if out == "argument":
            return list(outputs[-1]) if outputs else [v]
        if out == "map":
            return [Arr(outputs[0] if outputs else ())]
        if out == "entries":
            return [Arr(_unique(self.entries(v, pos)))]
        if out == "groups":
            return [Arr((Arr(_unique(self.elements(v, pos))),))]
        return []  # none


def analyse(node: A.Node) -> Analysis:
    """The object paths ``node`` reads and what it yields, on the workload object."""
    analyser = _Analyser()
    try:
        analyser.result.outputs = analyser.eval(node, Loc(()), _Env())
    except (_GiveUp, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, _GiveUp) else "the expression is nested too deeply"
        analyser.result.unfollowed.append((0, reason))
        analyser.result.outputs = (Unknown(reason),)
    return analyser.result
