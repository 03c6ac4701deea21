"""The syntax tree as jq program text: faithfully, or as the program libjq runs for gojq semantics.

Owns :func:`to_jq` (a tree of :mod:`karta.jq.syntax` back to jq text that parses to an equal
tree: operators printed by precedence, so chains stay flat and only real nesting adds
parentheses) and :func:`gojq_program` (the same text with the rewrites that make libjq compute
what gojq computes, docs/spec/format.md#jq-dialect, R11). Both walk the tree iteratively, so they print any
tree the parser builds, however long its chains.

The gojq rewrites (only where a name means the builtin, not a user ``def`` or parameter):

* **Sorted objects.** gojq keeps no insertion order: every object iterates, serialises and prints
  in ascending key order. libjq keeps insertion order, so every node that can build an object
  whose keys are not already in order is followed by a sort of its result: object construction
  (unless its keys are string literals in ascending order), ``+`` chains, ``*`` chains and
  assignments (deeply), and the builtins the builtin table marks ``builds_objects``
  (``from_entries``, ``with_entries``, ``add``, ``INDEX``, ``capture``; deeply ``setpath``,
  ``pick``, ``fromjson``, ``fromstream``, ``match``, ...). The replacement of ``sub``/``gsub``
  (``sorted_argument``) sees its capture object sorted. Inputs are serialised with sorted keys
  (:mod:`karta.jq._libjq`), so by induction every object libjq iterates or prints is in gojq's
  order; ``keys_unsorted`` equals ``keys``.
* **No environment.** ``env`` and ``$ENV`` are ``{}``: gojq as a library reads no environment
  (the original and KAI Scheduler configure none), and definitions must not depend on the
  evaluating process (14.2).
* **Number literals** are printed canonically (``1.0`` as ``1``, ``1e2`` as ``100``): libjq keeps
  the text of a literal and would print ``1.0`` through ``tostring``, gojq prints ``1``.
* **``a // b`` as the fast path evaluates it**: an error in ``a`` ends ``a`` (its outputs so far
  count) instead of failing the expression; libjq 1.8 propagates it. A chain ``a1 // ... // an``
  is printed flat: ``. as $in | [[(a1)? | truthy], ...] | map(select(. != [])) | if . == [] then
  $in | an else .[0][] end``. Programs that take paths (``takes_paths``: ``path``, ``del``,
  ``pick``; assignments) keep jq's ``//``, which is a path expression. (gojq's ``//`` propagates
  the error too; the fast path's reading is karta's, and this keeps the two engines alike:
  docs/architecture/jq-engines.md.)

Helper functions are defined in front of the program (``_karta_sorted``, ``_karta_sorted_deep``),
and the ``//`` form binds ``$_karta_in``; user functions, parameters and variables whose names
start with ``_karta_`` are renamed so that they can neither shadow nor be shadowed by them.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Final

from karta.jq import syntax
from karta.jq._values import number_text
from karta.jq.builtin_table import BUILTINS
from karta.jq.safety import _walk, pattern_variables

__all__ = ["HELPERS", "gojq_program", "to_jq"]

_SORTED: Final = "_karta_sorted"
_DEEP: Final = "_karta_sorted_deep"

HELPERS: Final = (
    f'def {_SORTED}: if type == "object" then . as $o | reduce keys[] as $k ({{}}; '
    f"setpath([$k]; $o[$k])) else . end; "
    f'def {_DEEP}: if type == "object" then . as $o | reduce keys[] as $k ({{}}; '
    f'setpath([$k]; $o[$k] | {_DEEP})) elif type == "array" then map({_DEEP}) else . end; '
)
"""The jq definitions :func:`gojq_program` puts in front of every program."""

_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Precedence levels (higher binds tighter), as the parser reads them.
_BINDING: Final = 0  # def, label, as: extend to the end of the pipe
_PIPE: Final = 1
_COMMA: Final = 2
_ALT: Final = 3
_ASSIGN: Final = 4
_OR: Final = 5
_AND: Final = 6
_COMPARE: Final = 7
_ADD: Final = 8
_MUL: Final = 9
_TERM: Final = 9.5  # self-delimited (``if ... end``, ``reduce``, ``try``): any operand, no suffix
_POSTFIX: Final = 10

_BINARY_LEVELS: Final = {
    "//": _ALT,
    "or": _OR,
    "and": _AND,
    "==": _COMPARE,
    "!=": _COMPARE,
    "<": _COMPARE,
    "<=": _COMPARE,
    ">": _COMPARE,
    ">=": _COMPARE,
    "+": _ADD,
    "-": _ADD,
    "*": _MUL,
    "/": _MUL,
    "%": _MUL,
}
_RIGHT_ASSOC: Final = frozenset({_PIPE, _ALT})
_NON_ASSOC: Final = frozenset({_ASSIGN, _COMPARE})

# Suffixes (``.a``, ``[0]``, ``[]``, ``?``) can follow these unparenthesised.
_POSTFIXABLE: Final = (
    syntax.Identity,
    syntax.Var,
    syntax.Call,
    syntax.ArrayCons,
    syntax.ObjectCons,
    syntax.Index,
    syntax.Slice,
    syntax.Iterate,
)


class _Scope:
    """User functions and parameters (name, arity) and variables visible at a point."""

    __slots__ = ("funcs", "vars")

    def __init__(self, funcs: frozenset[tuple[str, int]], vars_: frozenset[str]) -> None:
        self.funcs = funcs
        self.vars = vars_

    def with_vars(self, names: set[str]) -> _Scope:
        return _Scope(self.funcs, self.vars | names) if names else self

    def with_funcs(self, keys: set[tuple[str, int]]) -> _Scope:
        return _Scope(self.funcs | keys, self.vars)


_EMPTY_SCOPE: Final = _Scope(frozenset(), frozenset())


class _Visit:
    """Print ``node`` where its context needs at least ``level`` (parenthesised below it)."""

    __slots__ = ("chain", "level", "node", "scope")

    def __init__(self, node: syntax.Node, scope: _Scope, level: float, chain: str = "") -> None:
        self.node = node
        self.scope = scope
        self.level = level
        self.chain = chain  # "+" or "*": the left operand of the same chain (sorted by the chain's top)


_Item = str | _Visit


def to_jq(node: syntax.Node) -> str:
    """jq text of ``node`` that parses back to an equal tree (positions aside)."""
    return _Printer(gojq=False).run(node)


def gojq_program(node: syntax.Node) -> str:
    """The program libjq runs for ``node`` so that its results are gojq's (module docstring)."""
    printer = _Printer(gojq=True)
    printer.takes_paths = any(_takes_paths(n) for n in _walk(node))
    return HELPERS + printer.run(node)


def _takes_paths(node: syntax.Node) -> bool:
    if isinstance(node, syntax.Assign):
        return True
    if not isinstance(node, syntax.Call):
        return False
    builtin = BUILTINS.get(node.name)
    return builtin is not None and len(node.args) in builtin.takes_paths


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)


def _interp_text(text: str) -> str:
    """A literal part of an interpolated string, without the quotes."""
    return json.dumps(text, ensure_ascii=True)[1:-1]


def _user_name(name: str) -> str:
    """A user function or parameter name, renamed off the helpers' prefix."""
    return "_karta_user" + name if name.startswith("_karta_") else name


def _sorted_literal_keys(node: syntax.ObjectCons) -> bool:
    keys = []
    for entry in node.entries:
        key = entry.key
        if not (isinstance(key, syntax.Literal) and isinstance(key.value, str)):
            return False
        keys.append(key.value)
    return all(a < b for a, b in itertools.pairwise(keys))


def _chain_operands(node: syntax.Binary, ops: tuple[str, ...]) -> list[syntax.Node]:
    """The operands of the left-nested chain of ``ops`` that ``node`` tops (iteratively)."""
    out: list[syntax.Node] = []
    current: syntax.Node = node
    while isinstance(current, syntax.Binary) and current.op in ops:
        out.append(current.right)
        current = current.left
    out.append(current)
    return out


def _never_object(node: syntax.Node) -> bool:
    """Statically not an object (so a chain holding it cannot yield one)."""
    if isinstance(node, syntax.Literal):
        return node.value is not None
    return isinstance(node, syntax.ArrayCons | syntax.StringInterp | syntax.Format | syntax.Neg)


class _Printer:
    __slots__ = ("gojq", "out", "takes_paths")

    def __init__(self, *, gojq: bool) -> None:
        self.gojq = gojq
        self.takes_paths = False
        self.out: list[str] = []

    def run(self, node: syntax.Node) -> str:
        stack: list[_Item] = [_Visit(node, _EMPTY_SCOPE, _BINDING)]
        out = self.out
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
                continue
            items = self.expand(item)
            stack.extend(reversed(items))
        return "".join(out)

    # --- one node ------------------------------------------------------------------------------

    def expand(self, visit: _Visit) -> list[_Item]:
        node, scope = visit.node, visit.scope
        parts, level = self.parts(node, scope, visit.chain)
        sort = self.result_sort(visit) if self.gojq else ""
        if sort:
            # ``node | sort`` is a pipe: parenthesised wherever more than a pipe is needed.
            if level < _COMMA:
                parts = ["(", *parts, ")"]
            parts = [*parts, f" | {sort}"]
            level = _PIPE
        if level < visit.level:
            return ["(", *parts, ")"]
        return parts

    def result_sort(self, visit: _Visit) -> str:
        """The helper that sorts the result of ``visit.node`` (gojq mode), or ``""``."""
        node, scope = visit.node, visit.scope
        if isinstance(node, syntax.ObjectCons):
            return "" if _sorted_literal_keys(node) else _SORTED
        if isinstance(node, syntax.Binary):
            if visit.chain == node.op or node.op not in ("+", "*"):
                return ""
            operands = _chain_operands(node, ("+", "-") if node.op == "+" else ("*", "/", "%"))
            if any(_never_object(x) for x in operands):
                return ""
            return _SORTED if node.op == "+" else _DEEP
        if isinstance(node, syntax.Assign):
            return _DEEP
        if isinstance(node, syntax.Call):
            if (node.name, len(node.args)) in scope.funcs:
                return ""
            builtin = BUILTINS.get(node.name)
            builds = None if builtin is None else builtin.builds_objects.get(len(node.args))
            if builds is not None:
                return _SORTED if builds == "shallow" else _DEEP
        return ""

    def parts(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        """The items printing ``node`` unparenthesised, and the level they bind at."""
        method: Callable[[syntax.Node, _Scope, str], tuple[list[_Item], float]] | None = getattr(
            self, f"_{type(node).__name__}", None
        )
        if method is None:
            raise TypeError(f"cannot print {type(node).__name__}")
        return method(node, scope, chain)

    # --- the node kinds ------------------------------------------------------------------------

    def _Identity(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        return ["."], _POSTFIX

    def _RecurseAll(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        return [".."], _POSTFIX

    def _Literal(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Literal)
        value = node.value
        if value is None or isinstance(value, bool):
            return ["null" if value is None else ("true" if value else "false")], _POSTFIX
        if isinstance(value, str):
            return [_string(value)], _POSTFIX
        text = number_text(value)
        if self.gojq and isinstance(value, float) and "e" in text:
            # libjq keeps a literal's text (``1E-7`` through ``tostring``); a computed double
            # prints as gojq and the fast path print it (``1e-07``).
            return [f"({text} + 0)"], _POSTFIX
        return [text], (_ADD if text.startswith("-") else _POSTFIX)

    def _Var(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Var)
        if self.gojq and node.name == "ENV" and "ENV" not in scope.vars:
            return ["{}"], _POSTFIX
        return [f"${self._name(node.name)}"], _POSTFIX

    def _Format(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Format)
        return [f"@{node.name}"], _POSTFIX

    def _Break(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Break)
        return [f"break ${node.name}"], _POSTFIX

    def _target(self, target: syntax.Node, scope: _Scope) -> list[_Item]:
        """The target of a suffix; ``.`` is left out (``.a``, ``.[0]``)."""
        if isinstance(target, syntax.Identity):
            return []
        if isinstance(target, _POSTFIXABLE) or (isinstance(target, syntax.Try) and target.catch is None):
            return [_Visit(target, scope, _POSTFIX)]
        return ["(", _Visit(target, scope, _BINDING), ")"]

    def _Index(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Index)
        target = self._target(node.target, scope)
        index = node.index
        if isinstance(index, syntax.Literal) and isinstance(index.value, str) and _IDENT.match(index.value):
            return [*target, f".{index.value}"], _POSTFIX
        dot = "." if not target else ""
        return [*target, f"{dot}[", _Visit(index, scope, _PIPE), "]"], _POSTFIX

    def _Slice(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Slice)
        target = self._target(node.target, scope)
        items: list[_Item] = [*target, "." if not target else "", "["]
        if node.start is not None:
            items.append(_Visit(node.start, scope, _PIPE))
        items.append(":")
        if node.end is not None:
            items.append(_Visit(node.end, scope, _PIPE))
        items.append("]")
        return items, _POSTFIX

    def _Iterate(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Iterate)
        target = self._target(node.target, scope)
        return [*target, ".[]" if not target else "[]"], _POSTFIX

    def _Try(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Try)
        if node.catch is None:
            target = self._target(node.body, scope)
            return [*target, ".?" if not target else "?"], _POSTFIX
        return [
            "try ",
            *self._term(node.body, scope),
            " catch ",
            *self._term(node.catch, scope),
        ], _TERM

    def _term(self, node: syntax.Node, scope: _Scope) -> list[_Item]:
        """A postfix term (``try`` bodies, ``reduce`` and ``as`` sources)."""
        if isinstance(node, _POSTFIXABLE) or (isinstance(node, syntax.Try) and node.catch is None):
            return [_Visit(node, scope, _POSTFIX)]
        return ["(", _Visit(node, scope, _BINDING), ")"]

    def _Neg(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Neg)
        # ``-x`` takes ``* / %`` to its right, as the parser reads it; as an operand it binds like ``+``.
        return ["-", _Visit(node.operand, scope, _MUL)], _ADD

    def _StringInterp(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.StringInterp)
        items: list[_Item] = [f"@{node.fmt} " if node.fmt else "", '"']
        for part in node.parts:
            if isinstance(part, str):
                items.append(_interp_text(part))
            else:
                items.extend(["\\(", _Visit(part, scope, _PIPE), ")"])
        items.append('"')
        return items, _POSTFIX

    def _ArrayCons(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.ArrayCons)
        if node.body is None:
            return ["[]"], _POSTFIX
        return ["[", _Visit(node.body, scope, _PIPE), "]"], _POSTFIX

    def _ObjectCons(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.ObjectCons)
        items: list[_Item] = ["{"]
        for i, entry in enumerate(node.entries):
            if i:
                items.append(", ")
            key = entry.key
            if isinstance(key, syntax.Literal) and isinstance(key.value, str):
                items.append(_string(key.value))
            else:
                items.extend(["(", _Visit(key, scope, _PIPE), ")"])
            items.extend([": ", *self._term(entry.value, scope)])
        items.append("}")
        return items, _POSTFIX

    def _Pipe(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Pipe)
        # The right side extends to the end, as ``def``, ``label`` and ``as`` do: never parenthesised.
        return [_Visit(node.left, scope, _COMMA), " | ", _Visit(node.right, scope, _BINDING)], _PIPE

    def _Comma(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Comma)
        return [_Visit(node.left, scope, _COMMA), ", ", _Visit(node.right, scope, _ALT)], _COMMA

    def _Binary(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Binary)
        if node.op == "//" and self.gojq and not self.takes_paths:
            return self._alternatives(node, scope), _BINDING
        level = _BINARY_LEVELS[node.op]
        return self._infix(node.op, level, node.left, node.right, scope, _chain_of(node)), level

    def _alternatives(self, node: syntax.Binary, scope: _Scope) -> list[_Item]:
        """``a1 // ... // an`` with errors of ``a1`` .. ``a(n-1)`` ending them (module docstring)."""
        operands: list[syntax.Node] = []
        current: syntax.Node = node
        while isinstance(current, syntax.Binary) and current.op == "//":
            operands.append(current.left)
            current = current.right
        inner = scope.with_vars({"_karta_in"})
        items: list[_Item] = [". as $_karta_in | ["]
        for i, operand in enumerate(operands):
            items.extend(
                [
                    ", [(" if i else "[(",
                    _Visit(operand, inner, _BINDING),
                    ")? | select(. != null and . != false)]",
                ]
            )
        items.extend(
            [
                "] | map(select(. != [])) | if . == [] then $_karta_in | ",
                _Visit(current, inner, _PIPE),
                " else .[0][] end",
            ]
        )
        return items

    def _Assign(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Assign)
        return self._infix(node.op, _ASSIGN, node.left, node.right, scope, ""), _ASSIGN

    def _infix(
        self, op: str, level: float, left: syntax.Node, right: syntax.Node, scope: _Scope, chain: str
    ) -> list[_Item]:
        if level in _RIGHT_ASSOC:
            left_level, right_level = level + 0.5, level
        elif level in _NON_ASSOC:
            left_level, right_level = level + 0.5, level + 0.5
        else:
            left_level, right_level = level, level + 0.5
        left_chain = chain if isinstance(left, syntax.Binary) and _chain_of(left) == chain else ""
        return [_Visit(left, scope, left_level, left_chain), f" {op} ", _Visit(right, scope, right_level)]

    def _If(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.If)
        items: list[_Item] = ["if ", _Visit(node.cond, scope, _PIPE)]
        items.extend([" then ", _Visit(node.then, scope, _PIPE)])
        for cond, then in node.elifs:
            items.extend([" elif ", _Visit(cond, scope, _PIPE), " then ", _Visit(then, scope, _PIPE)])
        if node.else_ is not None:
            items.extend([" else ", _Visit(node.else_, scope, _PIPE)])
        items.append(" end")
        return items, _TERM

    def _pattern(self, pattern: syntax.Pattern, scope: _Scope) -> list[_Item]:
        """A destructuring pattern; its key expressions see ``scope``."""
        items: list[_Item] = []
        stack: list[syntax.Pattern | str] = [pattern]
        while stack:
            p = stack.pop()
            if isinstance(p, str):
                items.append(p)
            elif isinstance(p, syntax.VarPattern):
                items.append(f"${self._name(p.name)}")
            elif isinstance(p, syntax.ArrayPattern):
                todo: list[syntax.Pattern | str] = ["["]
                for i, element in enumerate(p.elements):
                    todo.extend([", "] if i else [])
                    todo.append(element)
                todo.append("]")
                stack.extend(reversed(todo))
            else:
                # Object patterns print their key expressions as visits: flush what is pending.
                items.extend(self._object_pattern(p, scope))
        return items

    def _object_pattern(self, pattern: syntax.ObjectPattern, scope: _Scope) -> list[_Item]:
        items: list[_Item] = ["{"]
        for i, entry in enumerate(pattern.entries):
            if i:
                items.append(", ")
            if entry.key_var is not None and self._name(entry.key_var) != entry.key_var:
                items.append(f"{_string(entry.key_var)}: ${self._name(entry.key_var)}")  # key kept
            elif entry.key_var is not None:
                items.append(f"${entry.key_var}")
            elif isinstance(entry.key, syntax.Literal) and isinstance(entry.key.value, str):
                items.append(_string(entry.key.value))
            elif entry.key is not None:
                items.extend(["(", _Visit(entry.key, scope, _PIPE), ")"])
            if entry.pattern is not None:
                items.extend([": ", *self._pattern(entry.pattern, scope)])
        items.append("}")
        return items

    def _Bind(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Bind)
        items: list[_Item] = [*self._term(node.source, scope), " as "]
        for i, pattern in enumerate(node.patterns):
            if i:
                items.append(" ?// ")
            items.extend(self._pattern(pattern, scope))
        inner = scope.with_vars(pattern_variables(node.patterns))
        items.extend([" | ", _Visit(node.body, inner, _BINDING)])
        return items, _BINDING

    def _Reduce(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Reduce)
        return self._fold("reduce", node.source, node.pattern, (node.init, node.update), scope), _TERM

    def _Foreach(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Foreach)
        parts = (node.init, node.update) if node.extract is None else (node.init, node.update, node.extract)
        return self._fold("foreach", node.source, node.pattern, parts, scope), _TERM

    def _fold(
        self,
        word: str,
        source: syntax.Node,
        pattern: syntax.Pattern,
        parts: tuple[syntax.Node, ...],
        scope: _Scope,
    ) -> list[_Item]:
        """``reduce``/``foreach SOURCE as PATTERN (INIT; UPDATE[; EXTRACT])``: the pattern's
        variables are visible after the init."""
        inner = scope.with_vars(pattern_variables((pattern,)))
        items: list[_Item] = [
            f"{word} ",
            *self._term(source, scope),
            " as ",
            *self._pattern(pattern, scope),
            " (",
        ]
        for i, part in enumerate(parts):
            items.extend(["; "] if i else [])
            items.append(_Visit(part, scope if i == 0 else inner, _PIPE))
        items.append(")")
        return items

    def _name(self, name: str) -> str:
        return _user_name(name) if self.gojq else name

    def _FuncDef(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.FuncDef)
        own = (node.name, len(node.params))
        outer = scope.with_funcs({own})
        body_funcs = {own}
        body_vars = set()
        params = []
        for param in node.params:
            name = param[1:] if param.startswith("$") else param
            body_funcs.add((name, 0))
            if param.startswith("$"):
                body_vars.add(name)
                params.append("$" + self._name(name))
            else:
                params.append(self._name(name))
        body_scope = scope.with_funcs(body_funcs).with_vars(body_vars)
        head = f"def {self._name(node.name)}" + (f"({'; '.join(params)})" if params else "") + ": "
        body = _Visit(node.body, body_scope, _PIPE)
        return [head, body, "; ", _Visit(node.rest, outer, _BINDING)], _BINDING

    def _Call(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Call)
        key = (node.name, len(node.args))
        user = key in scope.funcs
        if not node.args and node.name in syntax.KEYWORD_CONSTANTS and not user:
            return [node.name], _POSTFIX
        if self.gojq and key == ("env", 0) and not user:
            return ["{}"], _POSTFIX
        name = self._name(node.name) if user else node.name
        if not node.args:
            return [name], _POSTFIX
        builtin = None if user or not self.gojq else BUILTINS.get(node.name)
        sorted_arg = None if builtin is None else builtin.sorted_argument.get(len(node.args))
        items: list[_Item] = [name, "("]
        for i, arg in enumerate(node.args):
            if i:
                items.append("; ")
            if i == sorted_arg:
                items.extend([f"{_SORTED} | ", _Visit(arg, scope, _COMMA)])
            else:
                items.append(_Visit(arg, scope, _PIPE))
        items.append(")")
        return items, _POSTFIX

    def _Label(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        assert isinstance(node, syntax.Label)
        return [f"label ${node.name} | ", _Visit(node.body, scope, _BINDING)], _BINDING

    def _ModuleDirective(self, node: syntax.Node, scope: _Scope, chain: str) -> tuple[list[_Item], float]:
        raise TypeError("module directives cannot be printed (karta resolves no modules)")


def _chain_of(node: syntax.Binary) -> str:
    """Which object-building chain a binary node belongs to: ``+`` (with ``-``), ``*`` (with
    ``/``, ``%``), or ``""``."""
    if node.op in ("+", "-"):
        return "+"
    if node.op in ("*", "/", "%"):
        return "*"
    return ""
