"""``@record``: :func:`dataclasses.dataclass` for the library's plain records, at a fraction of the
start-up cost.

Why: a ``@dataclass(frozen=True, slots=True)`` class costs ~0.4 ms to define on CPython 3.11, six
``exec`` calls of generated source (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``), and a one-object ``kli`` command defines some fifty of them
before it has read its input: a fifth of its run time (``bench/offline.py``). ``@record`` gives
the same classes without executing anything when the class is defined:

* ``__init__`` is generated (one ``compile``, through :mod:`karta._codegen`) on the first
  instantiation of the class, so a class a command never instantiates costs nothing more;
* ``__eq__``, ``__hash__``, ``__repr__``, ``__setattr__`` and ``__delattr__`` (frozen) are shared
  functions reading the class's field table;
* ``__dataclass_fields__`` and ``__dataclass_params__`` (so :func:`dataclasses.fields`,
  :func:`dataclasses.replace`, :func:`dataclasses.asdict` and :func:`dataclasses.is_dataclass`
  work, and a ``@dataclass`` may subclass a record) are built on first use, from a real dataclass
  mirror of the fields (building it is one ``@dataclass``: :func:`replace` is
  :func:`dataclasses.replace` for a record without it, for code a one-object command runs).

What it supports is what the library uses, with dataclass's semantics: ``frozen`` (default True),
``slots``, ``eq``, ``repr``; fields with defaults, ``field(default=..., default_factory=...,
compare=..., repr=..., kw_only=...)``, ``ClassVar`` annotations (not fields), inheritance from
other records (base fields first, a redefined field keeps its place), ``__post_init__``, and
``__match_args__``. Anything else (``order``, ``InitVar``, ``KW_ONLY``, ``init=False`` fields,
a real dataclass as a base) is a TypeError when the class is defined: use ``@dataclass`` there.
Errors dataclass reports when a class is defined (a non-default field after a default one, a
mutable default, a non-frozen record inheriting a frozen one) are reported the same way. One
difference is visible to introspection only: until its first instantiation a record's
``__init__`` is the shared placeholder, so :func:`inspect.signature` of the class says
``(*args, **kwargs)``; from then on it is dataclass's signature (under ``KARTA_CODEGEN=off``, the
closure's ``(*args, **kwargs)``).
``tests/unit/test_records.py`` compares every behaviour with the real dataclass.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, field
from typing import Any, NamedTuple, TypeVar, dataclass_transform, overload

from karta import _codegen as codegen

__all__ = ["field_names", "record", "replace"]

T = TypeVar("T", bound=type[Any])
R = TypeVar("R")

_set = object.__setattr__
_FACTORY: Any = type("_Factory", (), {"__repr__": lambda self: "<factory>"})()


class _Spec(NamedTuple):
    """One field: the parts of a :class:`dataclasses.Field` a record uses."""

    name: str
    default: Any  # MISSING: none
    factory: Any  # MISSING: none
    compare: bool
    repr: bool
    kw_only: bool
    annotation: Any


@overload
def record(cls: T, /) -> T: ...


@overload
def record(
    *, frozen: bool = True, slots: bool = False, eq: bool = True, repr: bool = True
) -> Callable[[T], T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(
    cls: T | None = None,
    /,
    *,
    frozen: bool = True,
    slots: bool = False,
    eq: bool = True,
    repr: bool = True,
) -> T | Callable[[T], T]:
    """A dataclass-like record class (see the module docstring); ``frozen`` by default."""

    def wrap(cls: T) -> T:
        return _build(cls, frozen=frozen, slots=slots, eq=eq, repr_=repr)

    return wrap if cls is None else wrap(cls)


def _build(cls: T, *, frozen: bool, slots: bool, eq: bool, repr_: bool) -> T:
    specs: dict[str, _Spec] = {}
    for base in reversed(cls.__mro__[1:]):
        if "__dataclass_fields__" in base.__dict__ and "_record_specs" not in base.__dict__:
            raise TypeError(f"{cls.__qualname__}: a @record cannot inherit the dataclass {base.__qualname__}")
        for spec in base.__dict__.get("_record_specs", ()):
            specs[spec.name] = spec
        if base.__dict__.get("_record_frozen") and not frozen:
            raise TypeError("cannot inherit non-frozen dataclass from a frozen one")
        if base.__dict__.get("_record_frozen") is False and frozen and base.__dict__.get("_record_specs"):
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    own: list[str] = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 (own, unevaluated)
        text = annotation if isinstance(annotation, str) else repr(annotation)
        if text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar")):
            continue
        if text.startswith(("InitVar", "dataclasses.InitVar", "KW_ONLY", "dataclasses.KW_ONLY")):
            raise TypeError(f"{cls.__qualname__}.{name}: @record does not support {text}; use @dataclass")
        specs[name] = _spec(cls, name, annotation)
        own.append(name)
    table = tuple(specs.values())
    _check_order(cls, table)
    namespace = dict(cls.__dict__)
    if slots:
        inherited = {s for base in cls.__mro__[1:] for s in base.__dict__.get("__slots__", ())}
        namespace["__slots__"] = tuple(n for n in specs if n not in inherited)
        for name in specs:
            namespace.pop(name, None)
        namespace.pop("__dict__", None)
        namespace.pop("__weakref__", None)
    else:
        for name in own:  # dataclass leaves a default as the class attribute, a field() not
            value = namespace.get(name, MISSING)
            if isinstance(value, Field):
                if value.default is MISSING:
                    namespace.pop(name)
                else:
                    namespace[name] = value.default
    namespace["_record_specs"] = table
    namespace["_record_frozen"] = frozen
    namespace["__match_args__"] = tuple(s.name for s in table if not s.kw_only)
    compared = [s.name for s in table if s.compare]
    key = operator.attrgetter(*compared) if len(compared) > 1 else _single_key(compared)
    namespace["_record_key"] = staticmethod(key)
    if "__init__" not in cls.__dict__:
        namespace["__init__"] = _lazy_init
    if repr_ and "__repr__" not in cls.__dict__:
        namespace["__repr__"] = _repr
    if eq:
        if "__eq__" not in cls.__dict__:
            namespace["__eq__"] = _eq
        class_hash = cls.__dict__.get("__hash__", MISSING)
        explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in cls.__dict__))
        if not explicit_hash:  # dataclass's rule: frozen and eq hash the fields, eq alone is unhashable
            namespace["__hash__"] = _hash if frozen else None
    if frozen:
        namespace["__setattr__"] = _frozen_setattr
        namespace["__delattr__"] = _frozen_delattr
        if slots:
            namespace["__getstate__"] = _getstate
            namespace["__setstate__"] = _setstate
    namespace["__dataclass_fields__"] = _Mirror("__dataclass_fields__")
    namespace["__dataclass_params__"] = _Mirror("__dataclass_params__")
    if not slots:  # in place, as dataclass does (zero-argument super() keeps its class)
        for name, value in namespace.items():
            if cls.__dict__.get(name, MISSING) is not value:
                type.__setattr__(cls, name, value)
        for name in [n for n in cls.__dict__ if n not in namespace]:
            type.__delattr__(cls, name)
        return cls
    metaclass: Any = type(cls)
    built: T = metaclass(cls.__name__, cls.__bases__, namespace)
    built.__qualname__ = cls.__qualname__
    return built


def _spec(cls: type[Any], name: str, annotation: Any) -> _Spec:
    value = cls.__dict__.get(name, MISSING)
    if isinstance(value, Field):
        if not value.init:
            raise TypeError(f"{cls.__qualname__}.{name}: @record does not support init=False; use @dataclass")
        kw_only = value.kw_only is True
        default, factory, compare, shown = value.default, value.default_factory, value.compare, value.repr
    else:
        default, factory, compare, shown, kw_only = value, MISSING, True, True, False
    if isinstance(default, list | dict | set):
        raise ValueError(
            f"mutable default {type(default)} for field {name} is not allowed: use default_factory"
        )
    return _Spec(name, default, factory, compare, shown, kw_only, annotation)


def _check_order(cls: type[Any], table: tuple[_Spec, ...]) -> None:
    seen_default = False
    for spec in table:
        if spec.kw_only:
            continue
        if spec.default is not MISSING or spec.factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {spec.name!r} follows default argument")


def _single_key(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _obj: ()
    get = operator.attrgetter(names[0])
    return lambda obj: (get(obj),)


# --- the shared methods ---------------------------------------------------------------------------


def _lazy_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """The first instantiation of a record class generates its ``__init__`` (for the class that
    defines the fields: a subclass that adds none shares it) and runs it."""
    owner = next(c for c in type(self).__mro__ if "_record_specs" in c.__dict__)
    init = owner.__dict__["__init__"]
    if init is _lazy_init:
        init = _make_init(owner)
        type.__setattr__(owner, "__init__", init)
    init(self, *args, **kwargs)


def _make_init(cls: type[Any]) -> Callable[..., None]:
    specs: tuple[_Spec, ...] = cls.__dict__["_record_specs"]
    frozen: bool = cls.__dict__["_record_frozen"]
    namespace: dict[str, Any] = {"_set": _set, "_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for i, spec in enumerate(specs):
        param, value = spec.name, spec.name
        if spec.factory is not MISSING:
            namespace[f"_f{i}"] = spec.factory
            param = f"{spec.name}=_FACTORY"
            value = f"_f{i}() if {spec.name} is _FACTORY else {spec.name}"
        elif spec.default is not MISSING:
            namespace[f"_d{i}"] = spec.default
            param = f"{spec.name}=_d{i}"
        (keyword if spec.kw_only else positional).append(param)
        body.append(
            f"    _set(self, {spec.name!r}, {value})" if frozen else f"    self.{spec.name} = {value}"
        )
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    params = ["self", *positional] + (["*", *keyword] if keyword else [])
    source = "\n".join([f"def __init__({', '.join(params)}):", *(body or ["    pass"])])
    init: Callable[..., None] | None = None
    if codegen.enabled():
        try:
            codegen.compile_source(source, namespace, what=f"record {cls.__qualname__}.__init__")
            init = namespace["__init__"]
        except Exception as exc:
            codegen.failed(f"record {cls.__qualname__}.__init__", exc)
    if init is None:  # KARTA_CODEGEN=off, or the generation failed: the same __init__ as a closure
        init = _plain_init(cls, specs, frozen)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {s.name: s.annotation for s in specs} | {"return": None}  # as dataclass's
    return init


def _plain_init(cls: type[Any], specs: tuple[_Spec, ...], frozen: bool) -> Callable[..., None]:
    positional = [s for s in specs if not s.kw_only]
    keyword = {s.name: s for s in specs if s.kw_only}
    own = cls.__qualname__
    post_init = hasattr(cls, "__post_init__")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(positional):
            given = f"{len(args) + 1} were given"
            raise TypeError(f"{own}.__init__() takes {len(positional) + 1} positional arguments but {given}")
        unknown = [k for k in kwargs if k not in keyword and all(s.name != k for s in positional)]
        if unknown:
            raise TypeError(f"{own}.__init__() got an unexpected keyword argument '{unknown[0]}'")
        for index, spec in enumerate(specs):
            if not spec.kw_only and index < len(args):
                if spec.name in kwargs:
                    raise TypeError(f"{own}.__init__() got multiple values for argument '{spec.name}'")
                value = args[index]
            elif spec.name in kwargs:
                value = kwargs[spec.name]
            elif spec.factory is not MISSING:
                value = spec.factory()
            elif spec.default is not MISSING:
                value = spec.default
            else:
                raise TypeError(f"{own}.__init__() missing 1 required argument: '{spec.name}'")
            if frozen:
                _set(self, spec.name, value)
            else:
                setattr(self, spec.name, value)
        if post_init:
            self.__post_init__()

    return __init__


def _repr(self: Any) -> str:
    shown = ", ".join(f"{s.name}={getattr(self, s.name)!r}" for s in type(self)._record_specs if s.repr)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> object:
    if other.__class__ is self.__class__:
        key = self._record_key
        return bool(key(self) == key(other))
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(type(self)._record_key(self))


def _frozen_setattr(self: Any, name: str, value: object) -> None:
    if type(self).__dict__.get("_record_specs") is not None or name in _names(self):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self: Any, name: str) -> None:
    if type(self).__dict__.get("_record_specs") is not None or name in _names(self):
        raise FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _names(obj: Any) -> set[str]:
    return {s.name for s in type(obj)._record_specs}


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, s.name) for s in type(self)._record_specs]


def _setstate(self: Any, state: list[Any]) -> None:
    for spec, value in zip(type(self)._record_specs, state, strict=False):
        _set(self, spec.name, value)


class _Mirror:
    """``__dataclass_fields__`` and ``__dataclass_params__``, built on first access from a real
    dataclass with the same fields: what :mod:`dataclasses`' functions read, and what a
    ``@dataclass`` subclass of a record reads from its base."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, obj: object, owner: type[Any]) -> Any:
        mirror: type[Any] | None = owner.__dict__.get("_record_mirror")
        if mirror is None:
            mirror = _mirror(owner)
            type.__setattr__(owner, "_record_mirror", mirror)
        return getattr(mirror, self.attribute)


def _mirror(owner: type[Any]) -> type[Any]:
    namespace: dict[str, Any] = {"__annotations__": {}}
    for spec in owner._record_specs:
        namespace["__annotations__"][spec.name] = spec.annotation
        kwargs: dict[str, Any] = {"compare": spec.compare, "repr": spec.repr, "kw_only": spec.kw_only}
        if spec.factory is not MISSING:
            kwargs["default_factory"] = spec.factory
        elif spec.default is not MISSING:
            kwargs["default"] = spec.default
        namespace[spec.name] = field(**kwargs)
    frozen = bool(owner._record_frozen)
    mirror: type[Any] = dataclasses.dataclass(frozen=frozen)(type(owner.__name__, (), namespace))
    return mirror


def field_names(cls: type[Any]) -> tuple[str, ...]:
    """The field names of the record class ``cls`` in order: what ``[f.name for f in
    dataclasses.fields(cls)]`` gives, without building the class's dataclass mirror (~1 ms)."""
    specs: tuple[_Spec, ...] = getattr(cls, "_record_specs")  # noqa: B009 (every record has it)
    return tuple(spec.name for spec in specs)


def replace(obj: R, /, **changes: Any) -> R:
    """:func:`dataclasses.replace` for a record (a new instance, ``changes`` over the fields of
    ``obj``, through ``__init__`` and so ``__post_init__``), without building the class's dataclass
    mirror (a ``@dataclass`` of its fields, ~1 ms a class): a record has no ``init=False`` field,
    so every field is an ``__init__`` argument, and an unknown name is ``__init__``'s TypeError."""
    cls = type(obj)
    specs: tuple[_Spec, ...] = getattr(cls, "_record_specs")  # noqa: B009 (every record has it)
    for spec in specs:
        if spec.name not in changes:
            changes[spec.name] = getattr(obj, spec.name)
    return cls(**changes)
