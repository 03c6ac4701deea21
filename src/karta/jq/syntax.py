"""The jq syntax tree: the contract between the parser, the safety checks and the fast path.

(Named ``syntax``, not ``ast``, so that running a script from this folder does not shadow the
standard library's ``ast``.)

Every node is an immutable dataclass. ``pos`` is the 0-based character offset of the node's first
token in the expression text (it is not part of equality). The parser desugars a few shorthands so
that consumers see fewer shapes:

* ``.a``, ``."a"``, ``.["a"]`` and ``.a?`` become :class:`Index` (plus :class:`Try` for ``?``);
* ``.a.b`` is ``Index(Index(Identity, "a"), "b")``; ``$x.a`` is ``Index(Var("x"), "a")``;
* ``{a}`` becomes ``{"a": .a}``, ``{$x}`` becomes ``{"x": $x}``, ``{"a"}`` becomes ``{"a": .a}``;
* ``x?`` becomes ``Try(x, None)``;
* ``"abc"`` without interpolation, ``true``, ``false`` and ``null`` become :class:`Literal`;
* ``-x`` becomes :class:`Neg`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import Field, FrozenInstanceError, dataclass, field
from typing import Any, ClassVar, Final, TypeAlias, dataclass_transform

from karta import _codegen as codegen

JSONScalar: TypeAlias = bool | int | float | str | None

#: The names the parser reads as :class:`Literal` values rather than calls (jq's keywords
#: ``true``, ``false``, ``null``; they are not builtins). Consumers that meet them as a
#: :class:`Call` in a tree built by hand treat them the same way.
KEYWORD_CONSTANTS: Final[dict[str, JSONScalar]] = {"true": True, "false": False, "null": None}

# --- the node machinery -------------------------------------------------------------------------
#
# The nodes behave exactly like ``@dataclass(frozen=True, slots=True)`` classes (same __init__,
# __repr__, __eq__, __hash__, __match_args__, immutability, pickling, and ``dataclasses.fields()``)
# but are built without the decorator: it costs ~0.5 ms per class (several exec() calls each), and
# this module is on the start-up path of ``kli validate``. All ``__init__`` methods are generated
# as one source, compiled at the end of the module (through :mod:`karta._codegen`);
# ``__dataclass_fields__`` is built on first use.

_FieldSpec: TypeAlias = tuple[str, Any, bool, bool, str]  # name, default, compare, kw_only, type
_NO_DEFAULT: Any = object()
_set = object.__setattr__


class _DataclassFields:
    """``__dataclass_fields__`` computed on first access, from a dataclass mirror of the class."""

    def __get__(self, obj: object, owner: type[Any]) -> dict[str, Field[Any]]:
        fields: dict[str, Field[Any]] | None = owner.__dict__.get("_dataclass_fields")
        if fields is None:
            namespace: dict[str, Any] = {"__annotations__": {}}
            for name, default, compare, kw_only, annotation in owner._field_specs:
                namespace["__annotations__"][name] = annotation
                if default is _NO_DEFAULT:
                    namespace[name] = field(compare=compare, kw_only=kw_only)
                else:
                    namespace[name] = field(default=default, compare=compare, kw_only=kw_only)
            mirror: type[Any] = dataclass(frozen=True)(type(owner.__name__, (), namespace))
            fields = dict(mirror.__dataclass_fields__)
            type.__setattr__(owner, "_dataclass_fields", fields)
        return fields


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class _NodeMeta(type):
    """Turns annotated fields into ``__slots__`` and records them (with defaults) per class."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> _NodeMeta:
        specs: list[_FieldSpec] = []
        for base in bases:
            specs.extend(getattr(base, "_field_specs", ()))
        own = []
        for attr, annotation in namespace.get("__annotations__", {}).items():
            if str(annotation).startswith("ClassVar"):
                continue
            default = namespace.pop(attr, _NO_DEFAULT)
            compare, kw_only = True, False
            if isinstance(default, Field):
                compare, kw_only, default = default.compare, bool(default.kw_only), default.default
            specs.append((attr, default, compare, kw_only, str(annotation)))
            own.append(attr)
        namespace["__slots__"] = tuple(own)
        cls = super().__new__(mcs, name, bases, namespace)
        type.__setattr__(cls, "_field_specs", tuple(specs))
        type.__setattr__(cls, "__match_args__", tuple(s[0] for s in specs if not s[3]))
        compared = [s[0] for s in specs if s[2]]
        key: Callable[[Any], tuple[Any, ...]] = _no_key
        if len(compared) > 1:
            key = operator.attrgetter(*compared)
        elif compared:
            key = _single_key(compared[0])
        type.__setattr__(cls, "_key", key)
        _PENDING.append(cls)
        return cls


def _single_key(name: str) -> Callable[[Any], tuple[Any, ...]]:
    get = operator.attrgetter(name)
    return lambda node: (get(node),)


def _no_key(node: Any) -> tuple[Any, ...]:
    return ()


_PENDING: list[type[Any]] = []


class _Frozen(metaclass=_NodeMeta):
    """Value semantics shared by every node class (what the dataclass decorator would generate)."""

    _field_specs: ClassVar[tuple[_FieldSpec, ...]]
    _key: ClassVar[Callable[[Any], tuple[Any, ...]]]
    __dataclass_fields__: ClassVar[Any] = _DataclassFields()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(type(self)._key(self) == type(self)._key(other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(type(self)._key(self))

    def __repr__(self) -> str:
        inner = ", ".join(f"{s[0]}={getattr(self, s[0])!r}" for s in self._field_specs)
        return f"{type(self).__qualname__}({inner})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self) -> list[Any]:
        return [getattr(self, s[0]) for s in self._field_specs]

    def __setstate__(self, state: list[Any]) -> None:
        for spec, value in zip(self._field_specs, state, strict=False):
            _set(self, spec[0], value)


def _compile_inits(classes: list[type[Any]]) -> None:
    """Give every class its dataclass-style ``__init__``, all compiled from one generated source
    (plain closures under ``KARTA_CODEGEN=off``, or if generating fails outside ``strict``)."""
    inits: dict[type[Any], Callable[..., None]] | None = None
    if codegen.enabled():
        try:
            inits = _generated_inits(classes)
        except Exception as exc:
            codegen.failed("syntax tree __init__ methods", exc)
    for cls in classes:
        init = inits[cls] if inits is not None else _plain_init(cls)
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        init.__annotations__ = {spec[0]: spec[4] for spec in cls._field_specs} | {"return": None}
        cls.__init__ = init
    classes.clear()


def _generated_inits(classes: list[type[Any]]) -> dict[type[Any], Callable[..., None]]:
    lines: list[str] = []
    defaults: dict[str, Any] = {"_set": _set}
    for i, cls in enumerate(classes):
        positional: list[str] = []
        keyword: list[str] = []
        body: list[str] = []
        for name, default, _compare, kw_only, _annotation in cls._field_specs:
            param = name
            if default is not _NO_DEFAULT:
                defaults[f"_d{i}_{name}"] = default
                param = f"{name}=_d{i}_{name}"
            (keyword if kw_only else positional).append(param)
            body.append(f"    _set(self, {name!r}, {name})")
        params = ["self", *positional] + (["*", *keyword] if keyword else [])
        lines.append(f"def _init{i}({', '.join(params)}):")
        lines.extend(body or ["    pass"])
    namespace = dict(defaults)
    codegen.compile_source("\n".join(lines), namespace, what="syntax tree __init__ methods")
    return {cls: namespace[f"_init{i}"] for i, cls in enumerate(classes)}


def _plain_init(cls: type[Any]) -> Callable[..., None]:
    """The same ``__init__`` as a closure over the field specs (slower; no generated code)."""
    specs: tuple[_FieldSpec, ...] = cls._field_specs
    positional = [s for s in specs if not s[3]]
    keyword = [s for s in specs if s[3]]
    own = cls.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(positional):
            given = f"{len(args) + 1} were given"
            raise TypeError(f"{own}.__init__() takes {len(positional) + 1} positional arguments but {given}")
        for index, (name, default, *_rest) in enumerate(positional + keyword):
            if index < len(args):
                if name in kwargs:
                    raise TypeError(f"{own}.__init__() got multiple values for argument '{name}'")
                value = args[index]
            elif name in kwargs:
                value = kwargs.pop(name)
            elif default is not _NO_DEFAULT:
                value = default
            else:
                raise TypeError(f"{own}.__init__() missing required argument: '{name}'")
            _set(self, name, value)
        if kwargs:
            raise TypeError(f"{own}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")

    import inspect  # only without generated code: inspect is not cheap to import

    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD)]
    for name, default, _compare, kw_only, annotation in positional + keyword:
        params.append(
            P(
                name,
                P.KEYWORD_ONLY if kw_only else P.POSITIONAL_OR_KEYWORD,
                default=P.empty if default is _NO_DEFAULT else default,
                annotation=annotation,
            )
        )
    __init__.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
    return __init__


# --- the nodes ----------------------------------------------------------------------------------


class Node(_Frozen):
    pos: int = field(default=0, compare=False, kw_only=True)


class Identity(Node):
    """``.``"""


class RecurseAll(Node):
    """``..`` (recursive descent)."""


class Literal(Node):
    """A number, a string without interpolation, ``true``, ``false`` or ``null``."""

    value: JSONScalar


class Index(Node):
    """``target[index]``; field access is an Index whose index is a string Literal."""

    target: Node
    index: Node


class Slice(Node):
    """``target[start:end]``; either bound may be absent."""

    target: Node
    start: Node | None
    end: Node | None


class Iterate(Node):
    """``target[]``"""

    target: Node


class Var(Node):
    """``$name`` (also ``$ENV`` and ``$__loc__``); ``name`` is without the ``$``."""

    name: str


class Format(Node):
    """``@base64`` and friends used as a filter; ``name`` without the ``@``."""

    name: str


class StringInterp(Node):
    """A string with ``\\(...)`` parts; ``fmt`` is the ``@format`` prefix, if any."""

    parts: tuple[str | Node, ...]
    fmt: str | None = None


class ArrayCons(Node):
    """``[body]``; ``body`` is None for ``[]``."""

    body: Node | None


class ObjectEntry(_Frozen):
    key: Node
    value: Node


class ObjectCons(Node):
    """``{k: v, ...}`` with shorthands desugared (see module docstring)."""

    entries: tuple[ObjectEntry, ...]


class Pipe(Node):
    left: Node
    right: Node


class Comma(Node):
    left: Node
    right: Node


class Binary(Node):
    """``op`` is one of ``+ - * / % == != < <= > >= and or //``."""

    op: str
    left: Node
    right: Node


class Neg(Node):
    """Unary minus."""

    operand: Node


class Assign(Node):
    """``op`` is one of ``= |= += -= *= /= %= //=``."""

    op: str
    left: Node
    right: Node


class If(Node):
    """``if cond then then (elif c then t)* (else e)? end``; ``else_`` None means ``.``."""

    cond: Node
    then: Node
    elifs: tuple[tuple[Node, Node], ...] = ()
    else_: Node | None = None


class Try(Node):
    """``try body (catch handler)?``; ``body?`` is ``Try(body, None)``."""

    body: Node
    catch: Node | None = None


class VarPattern(_Frozen):
    name: str


class ArrayPattern(_Frozen):
    elements: tuple[Pattern, ...]


class ObjectPatternEntry(_Frozen):
    """``key`` is a Node (a string Literal for ``a:``, an expression for ``(e):``);
    ``key_var`` is set for ``$name`` keys (``{$a}`` or ``{$a: pattern}``); ``pattern`` may be None
    only when ``key_var`` is set."""

    key: Node | None
    key_var: str | None
    pattern: Pattern | None


class ObjectPattern(_Frozen):
    entries: tuple[ObjectPatternEntry, ...]


Pattern: TypeAlias = VarPattern | ArrayPattern | ObjectPattern


class Bind(Node):
    """``source as p1 ?// p2 ... | body``"""

    source: Node
    patterns: tuple[Pattern, ...]
    body: Node


class Reduce(Node):
    """``reduce source as pattern (init; update)``"""

    source: Node
    pattern: Pattern
    init: Node
    update: Node


class Foreach(Node):
    """``foreach source as pattern (init; update; extract?)``"""

    source: Node
    pattern: Pattern
    init: Node
    update: Node
    extract: Node | None = None


class FuncDef(Node):
    """``def name(params): body; rest``; ``$p`` parameters keep their ``$`` in ``params``."""

    name: str
    params: tuple[str, ...]
    body: Node
    rest: Node


class Call(Node):
    """A call of a builtin or user function: ``name`` or ``name(a; b)``."""

    name: str
    args: tuple[Node, ...] = ()


class Label(Node):
    """``label $name | body``"""

    name: str
    body: Node


class Break(Node):
    """``break $name``"""

    name: str


class ModuleDirective(Node):
    """``import``/``include``/``module`` directives; kept so the safety check can reject them."""

    directive: str
    path: str
    body: Node | None = None


_compile_inits(_PENDING)


def split_iteration(node: Node) -> tuple[Node, Node] | None:
    """(``P[]``, ``S``) for ``P | .[] | S``, ``(P | .[]) | S``, ``P[] | S`` and ``P[].a.b``:
    the outputs are those of ``S`` on each output of ``P[]``, so expressions with equal ``P[]``
    can share one loop."""
    if isinstance(node, Pipe):
        left, right = node.left, node.right
        if isinstance(right, Pipe) and _is_iterate_dot(right.left):
            return Iterate(left), right.right
        if isinstance(left, Pipe) and _is_iterate_dot(left.right):
            return Iterate(left.left), right
        if isinstance(left, Iterate):
            return left, right
        return None
    keys: list[Node] = []
    while isinstance(node, Index) and isinstance(node.index, Literal) and type(node.index.value) is str:
        keys.append(node.index)
        node = node.target
    if not keys or not isinstance(node, Iterate):
        return None
    each: Node = Identity()
    for key in reversed(keys):
        each = Index(each, key)
    return node, each


def _is_iterate_dot(node: Node) -> bool:
    return isinstance(node, Iterate) and isinstance(node.target, Identity)


def library_call(node: Node) -> Node | None:
    """The body of a call of a builtin jq defines in its own library (jq's and gojq's
    ``builtin.jq``) that karta's fast path runs through that definition, or None: ``IN(s)`` is
    ``any(s == .; .)`` and ``IN(src; s)`` is ``any(src == s; .)``. The fast path and the code
    generator compile the body, so a status matcher using ``IN`` gets its generated function
    (and a definition cache entry) instead of falling back to libjq."""
    if not isinstance(node, Call) or node.name != "IN":
        return None
    if len(node.args) == 1:
        return Call("any", (Binary("==", node.args[0], Identity()), Identity()))
    if len(node.args) == 2:
        return Call("any", (Binary("==", node.args[0], node.args[1]), Identity()))
    return None
