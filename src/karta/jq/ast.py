"""The jq syntax tree: the contract between the parser, the safety checks and the fast path.

Every node is an immutable dataclass. ``pos`` is the 0-based character offset of the node's first
token in the expression text (it is not part of equality). The parser desugars a few shorthands so
that consumers see fewer shapes:

* ``.a``, ``."a"``, ``.["a"]`` and ``.a?`` become :class:`Index` (plus :class:`Try` for ``?``);
* ``.a.b`` is ``Index(Index(Identity, "a"), "b")``; ``$x.a`` is ``Index(Var("x"), "a")``;
* ``{a}`` becomes ``{"a": .a}``, ``{$x}`` becomes ``{"x": $x}``, ``{"a"}`` becomes ``{"a": .a}``;
* ``x?`` becomes ``Try(x, None)``;
* ``"abc"`` without interpolation becomes :class:`Literal`;
* ``-x`` becomes :class:`Neg`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

JSONScalar: TypeAlias = bool | int | float | str | None


@dataclass(frozen=True, slots=True)
class Node:
    pos: int = field(default=0, compare=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class Identity(Node):
    """``.``"""


@dataclass(frozen=True, slots=True)
class RecurseAll(Node):
    """``..`` (recursive descent)."""


@dataclass(frozen=True, slots=True)
class Literal(Node):
    """A number, a string without interpolation, ``true``, ``false`` or ``null``."""

    value: JSONScalar


@dataclass(frozen=True, slots=True)
class Index(Node):
    """``target[index]``; field access is an Index whose index is a string Literal."""

    target: Node
    index: Node


@dataclass(frozen=True, slots=True)
class Slice(Node):
    """``target[start:end]``; either bound may be absent."""

    target: Node
    start: Node | None
    end: Node | None


@dataclass(frozen=True, slots=True)
class Iterate(Node):
    """``target[]``"""

    target: Node


@dataclass(frozen=True, slots=True)
class Var(Node):
    """``$name`` (also ``$ENV`` and ``$__loc__``); ``name`` is without the ``$``."""

    name: str


@dataclass(frozen=True, slots=True)
class Format(Node):
    """``@base64`` and friends used as a filter; ``name`` without the ``@``."""

    name: str


@dataclass(frozen=True, slots=True)
class StringInterp(Node):
    """A string with ``\\(...)`` parts; ``fmt`` is the ``@format`` prefix, if any."""

    parts: tuple[str | Node, ...]
    fmt: str | None = None


@dataclass(frozen=True, slots=True)
class ArrayCons(Node):
    """``[body]``; ``body`` is None for ``[]``."""

    body: Node | None


@dataclass(frozen=True, slots=True)
class ObjectEntry:
    key: Node
    value: Node


@dataclass(frozen=True, slots=True)
class ObjectCons(Node):
    """``{k: v, ...}`` with shorthands desugared (see module docstring)."""

    entries: tuple[ObjectEntry, ...]


@dataclass(frozen=True, slots=True)
class Pipe(Node):
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Comma(Node):
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Binary(Node):
    """``op`` is one of ``+ - * / % == != < <= > >= and or //``."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Neg(Node):
    """Unary minus."""

    operand: Node


@dataclass(frozen=True, slots=True)
class Assign(Node):
    """``op`` is one of ``= |= += -= *= /= %= //=``."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class If(Node):
    """``if cond then then (elif c then t)* (else e)? end``; ``else_`` None means ``.``."""

    cond: Node
    then: Node
    elifs: tuple[tuple[Node, Node], ...] = ()
    else_: Node | None = None


@dataclass(frozen=True, slots=True)
class Try(Node):
    """``try body (catch handler)?``; ``body?`` is ``Try(body, None)``."""

    body: Node
    catch: Node | None = None


@dataclass(frozen=True, slots=True)
class VarPattern:
    name: str


@dataclass(frozen=True, slots=True)
class ArrayPattern:
    elements: tuple[Pattern, ...]


@dataclass(frozen=True, slots=True)
class ObjectPatternEntry:
    """``key`` is a Node (a string Literal for ``a:``, an expression for ``(e):``);
    ``key_var`` is set for ``$name`` keys (``{$a}`` or ``{$a: pattern}``); ``pattern`` may be None
    only when ``key_var`` is set."""

    key: Node | None
    key_var: str | None
    pattern: Pattern | None


@dataclass(frozen=True, slots=True)
class ObjectPattern:
    entries: tuple[ObjectPatternEntry, ...]


Pattern: TypeAlias = VarPattern | ArrayPattern | ObjectPattern


@dataclass(frozen=True, slots=True)
class Bind(Node):
    """``source as p1 ?// p2 ... | body``"""

    source: Node
    patterns: tuple[Pattern, ...]
    body: Node


@dataclass(frozen=True, slots=True)
class Reduce(Node):
    """``reduce source as pattern (init; update)``"""

    source: Node
    pattern: Pattern
    init: Node
    update: Node


@dataclass(frozen=True, slots=True)
class Foreach(Node):
    """``foreach source as pattern (init; update; extract?)``"""

    source: Node
    pattern: Pattern
    init: Node
    update: Node
    extract: Node | None = None


@dataclass(frozen=True, slots=True)
class FuncDef(Node):
    """``def name(params): body; rest``; ``$p`` parameters keep their ``$`` in ``params``."""

    name: str
    params: tuple[str, ...]
    body: Node
    rest: Node


@dataclass(frozen=True, slots=True)
class Call(Node):
    """A call of a builtin or user function: ``name`` or ``name(a; b)``."""

    name: str
    args: tuple[Node, ...] = ()


@dataclass(frozen=True, slots=True)
class Label(Node):
    """``label $name | body``"""

    name: str
    body: Node


@dataclass(frozen=True, slots=True)
class Break(Node):
    """``break $name``"""

    name: str


@dataclass(frozen=True, slots=True)
class ModuleDirective(Node):
    """``import``/``include``/``module`` directives; kept so the safety check can reject them."""

    directive: str
    path: str
    body: Node | None = None
