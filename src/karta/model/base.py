"""The immutable model base of :mod:`karta.model.types`: a small, fast stand-in for pydantic.

pydantic cost ``kli validate`` about 120 ms of its 150 ms budget (importing it and building the
model classes), so the Karta types derive from :class:`Model` instead. It keeps the surface the
code and the tests use: keyword construction and :meth:`Model.model_validate` from plain data
(validated, by camelCase alias or by field name), ``model_construct``, ``model_copy``,
``model_fields`` (``alias``, ``annotation``, ``get_default``), ``model_extra`` for
``extra="allow"`` classes, value equality, hashing, and immutability.

Validation follows pydantic's lax mode for the annotations the model uses (``str``, ``int``,
``Any``, nested models, ``tuple[X, ...]``, ``dict[str, X]``, ``X | None``) and reports errors the
way pydantic does (``type``, ``loc`` by alias, ``msg``, ``input``), all of them, in field order:
:mod:`karta.model.load` turns them into findings.

Annotations are only strings at class creation (``from __future__ import annotations``); they are
evaluated on first use, per class, so defining the classes costs next to nothing.
"""

from __future__ import annotations

import copy
import re
import sys
import types as _pytypes
import typing
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, TypeVar, dataclass_transform

__all__ = ["FieldInfo", "Model", "ModelValidationError", "field", "to_camel"]

_M = TypeVar("_M", bound="Model")
_T = TypeVar("_T")

_MISSING: Any = object()


def to_camel(name: str) -> str:
    """``pod_template_spec_path`` -> ``podTemplateSpecPath`` (pydantic's ``to_camel`` for our names)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class _Factory:
    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


def field(*, default_factory: Callable[[], _T]) -> _T:
    """A field whose default is built per instance (``status_mappings: X = field(default_factory=X)``)."""
    return typing.cast(_T, _Factory(default_factory))


class ModelValidationError(ValueError):
    """Data that does not fit a model; :meth:`errors` lists every problem like pydantic does."""

    def __init__(self, model: str, errors: list[dict[str, Any]]) -> None:
        self._errors = errors
        lines = [f"{len(errors)} validation error{'s' if len(errors) != 1 else ''} for {model}"]
        for err in errors:
            lines.append(".".join(str(p) for p in err["loc"]) or "(root)")
            lines.append(f"  {err['msg']} [type={err['type']}, input_value={err['input']!r}]")
        super().__init__("\n".join(lines))

    def errors(self) -> list[dict[str, Any]]:
        return list(self._errors)


class FieldInfo:
    """What pydantic's ``FieldInfo`` tells about one field, for the code that inspects the schema."""

    __slots__ = ("_owner", "alias", "default", "default_factory", "name", "raw_annotation")

    def __init__(self, *, name: str, raw_annotation: str, default: Any, owner: type[Model]) -> None:
        self.name = name
        self.alias = to_camel(name)
        self.raw_annotation = raw_annotation
        self.default_factory: Callable[[], Any] | None = None
        self.default: Any = default
        if isinstance(default, _Factory):
            self.default_factory, self.default = default.factory, _MISSING
        self._owner = owner

    @property
    def annotation(self) -> Any:
        """The evaluated annotation (``str | None``, ``tuple[SubGroup, ...]``, ...)."""
        return self._owner._resolved()[self.name][0]

    def get_default(self, *, call_default_factory: bool = False) -> Any:
        if self.default_factory is not None:
            return self.default_factory() if call_default_factory else None
        return None if self.default is _MISSING else self.default

    def is_required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None

    def __repr__(self) -> str:
        return f"FieldInfo(name={self.name!r}, alias={self.alias!r}, annotation={self.raw_annotation!r})"


class _ModelFields:
    """``Model.model_fields``: a class-level mapping of field name to :class:`FieldInfo`."""

    def __get__(self, obj: object, owner: type[Model]) -> dict[str, FieldInfo]:
        return owner.__model_fields__


# --- validators: one small closure per annotation, built on first use --------------------------------

Loc = tuple[str | int, ...]
Errors = list[dict[str, Any]]
Validator = Callable[[Any, Loc, Errors], Any]

_INT_TEXT = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*(?:\.0+)?")
_TUPLE_INPUTS: tuple[type[Any], ...] = (
    list,
    tuple,
    set,
    frozenset,
    deque,
    _pytypes.GeneratorType,
    type({}.keys()),
    type({}.values()),
)


def _err(errors: Errors, kind: str, loc: Loc, msg: str, value: Any) -> Any:
    errors.append({"type": kind, "loc": loc, "msg": msg, "input": value})
    return _MISSING


def _v_any(value: Any, loc: Loc, errors: Errors) -> Any:
    return value


def _v_str(value: Any, loc: Loc, errors: Errors) -> Any:
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bytes | bytearray):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            msg = "Input should be a valid string, unable to parse raw data as a unicode string"
            return _err(errors, "string_unicode", loc, msg, value)
    return _err(errors, "string_type", loc, "Input should be a valid string", value)


def _v_int(value: Any, loc: Loc, errors: Errors) -> Any:
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return _err(errors, "finite_number", loc, "Input should be a finite number", value)
        if not value.is_integer():
            msg = "Input should be a valid integer, got a number with a fractional part"
            return _err(errors, "int_from_float", loc, msg, value)
        return int(value)
    if isinstance(value, str | bytes):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        text = text.strip()
        if _INT_TEXT.fullmatch(text):
            return int(text.split(".", 1)[0])
        msg = "Input should be a valid integer, unable to parse string as an integer"
        return _err(errors, "int_parsing", loc, msg, value)
    return _err(errors, "int_type", loc, "Input should be a valid integer", value)


def _key_loc(key: Any) -> str | int:
    if isinstance(key, int) and -(2**63) <= key < 2**63:
        return int(key)
    return key if isinstance(key, str) else str(key)


def _v_optional(inner: Validator) -> Validator:
    def check(value: Any, loc: Loc, errors: Errors) -> Any:
        return None if value is None else inner(value, loc, errors)

    return check


def _v_tuple(item: Validator) -> Validator:
    def check(value: Any, loc: Loc, errors: Errors) -> Any:
        if isinstance(value, str | bytes | bytearray | Mapping) or not isinstance(value, _TUPLE_INPUTS):
            return _err(errors, "tuple_type", loc, "Input should be a valid tuple", value)
        before = len(errors)
        out = tuple(item(v, (*loc, i), errors) for i, v in enumerate(value))
        return out if len(errors) == before else _MISSING

    return check


def _v_dict(item: Validator) -> Validator:
    def check(value: Any, loc: Loc, errors: Errors) -> Any:
        if not isinstance(value, Mapping):
            return _err(errors, "dict_type", loc, "Input should be a valid dictionary", value)
        before = len(errors)
        out = {}
        for key, v in value.items():
            where = (*loc, _key_loc(key))
            k = _v_str(key, (*where, "[key]"), errors)
            out[k] = item(v, where, errors)
        return out if len(errors) == before else _MISSING

    return check


def _v_model(model: type[Model]) -> Validator:
    def check(value: Any, loc: Loc, errors: Errors) -> Any:
        if isinstance(value, model):
            return value
        if not isinstance(value, Mapping):
            msg = f"Input should be a valid dictionary or instance of {model.__name__}"
            return _err(errors, "model_type", loc, msg, value)
        return model._validate_mapping(value, loc, errors)

    return check


def _validator(annotation: Any) -> Validator:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, _pytypes.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union annotation {annotation!r}")
        return _v_optional(_validator(args[0]))
    if origin is tuple:
        items = typing.get_args(annotation)
        if len(items) != 2 or items[1] is not Ellipsis:
            raise TypeError(f"unsupported tuple annotation {annotation!r}")
        return _v_tuple(_validator(items[0]))
    if origin is dict:
        key, value = typing.get_args(annotation)
        if key is not str:
            raise TypeError(f"unsupported dict annotation {annotation!r}")
        return _v_dict(_validator(value))
    if annotation is str:
        return _v_str
    if annotation is int:
        return _v_int
    if annotation is Any:
        return _v_any
    if isinstance(annotation, type) and issubclass(annotation, Model):
        return _v_model(annotation)
    raise TypeError(f"unsupported annotation {annotation!r}")


def _deep(value: Any, memo: dict[int, Any]) -> Any:
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, Model):
        return value.__deepcopy__(memo)
    if type(value) is tuple:
        return tuple(_deep(v, memo) for v in value)
    return copy.deepcopy(value, memo)


# --- the base class ----------------------------------------------------------------------------------


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
class Model:
    """Base of the Karta types: immutable, validated on construction, compared by value.

    Subclasses declare fields as annotated class attributes with a default (or
    ``field(default_factory=...)``). ``extra="allow"`` (a class keyword) keeps unknown keys in
    :attr:`model_extra`; otherwise they are ignored. ``__before__`` maps a field name to a function
    applied to the raw value before validation (pydantic's ``mode="before"`` field validators).
    """

    __model_fields__: ClassVar[dict[str, FieldInfo]] = {}
    __model_extra_allowed__: ClassVar[bool] = False
    __before__: ClassVar[dict[str, Callable[[Any], Any]]] = {}
    __model_resolved__: ClassVar[dict[str, tuple[Any, Validator]] | None] = None
    __model_lookup__: ClassVar[tuple[tuple[str, str, bool], ...]] = ()

    if typing.TYPE_CHECKING:
        model_fields: ClassVar[dict[str, FieldInfo]]
    else:
        model_fields = _ModelFields()

    def __init_subclass__(cls, *, extra: str = "ignore", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = dict(getattr(cls, "__model_fields__", {}))
        # not inspect.get_annotations: importing inspect costs more than the whole model
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
            text = annotation if isinstance(annotation, str) else repr(annotation)
            if name.startswith("_") or text.startswith(("ClassVar", "typing.ClassVar")):
                continue
            default = cls.__dict__.get(name, _MISSING)
            fields[name] = FieldInfo(name=name, raw_annotation=text, default=default, owner=cls)
            if isinstance(default, _Factory):
                delattr(cls, name)
        cls.__model_fields__ = fields
        cls.__model_extra_allowed__ = extra == "allow"
        cls.__model_resolved__ = None
        cls.__model_lookup__ = tuple((f.name, f.alias, f.is_required()) for f in fields.values())

    @classmethod
    def _resolved(cls) -> dict[str, tuple[Any, Validator]]:
        resolved = cls.__dict__.get("__model_resolved__")
        if resolved is None:
            resolved = {}
            for name, info in cls.__model_fields__.items():
                owner = info._owner
                namespace = vars(sys.modules[owner.__module__])
                annotation = eval(info.raw_annotation, namespace)
                resolved[name] = (annotation, _validator(annotation))
            cls.__model_resolved__ = resolved
        return resolved

    # --- construction ---

    def __init__(self, **data: Any) -> None:
        errors: Errors = []
        values, extra = type(self)._collect(data, (), errors)
        if errors:
            raise ModelValidationError(type(self).__name__, errors)
        self._set(values, extra)

    @classmethod
    def model_validate(cls: type[_M], obj: Any) -> _M:
        """Validate plain data (a mapping by alias or field name) or pass an instance through."""
        if isinstance(obj, cls):
            return obj
        errors: Errors = []
        if not isinstance(obj, Mapping):
            msg = f"Input should be a valid dictionary or instance of {cls.__name__}"
            raise ModelValidationError(
                cls.__name__, [{"type": "model_type", "loc": (), "msg": msg, "input": obj}]
            )
        result = cls._validate_mapping(obj, (), errors)
        if errors:
            raise ModelValidationError(cls.__name__, errors)
        return typing.cast(_M, result)

    @classmethod
    def _validate_mapping(cls, data: Mapping[Any, Any], loc: Loc, errors: Errors) -> Any:
        before = len(errors)
        values, extra = cls._collect(data, loc, errors)
        if len(errors) != before:
            return _MISSING
        instance = cls.__new__(cls)
        instance._set(values, extra)
        return instance

    @classmethod
    def _collect(cls, data: Mapping[Any, Any], loc: Loc, errors: Errors) -> tuple[dict[str, Any], Any]:
        resolved = cls.__dict__.get("__model_resolved__") or cls._resolved()
        before = cls.__before__
        values: dict[str, Any] = {}
        used: set[Any] = set()
        for name, alias, required in cls.__model_lookup__:
            key = alias
            value = data.get(alias, _MISSING)
            if value is _MISSING and name != alias:
                key, value = name, data.get(name, _MISSING)
            if value is _MISSING:
                if required:
                    _err(errors, "missing", (*loc, alias), "Field required", dict(data))
                else:
                    values[name] = cls.__model_fields__[name].get_default(call_default_factory=True)
                continue
            used.add(key)
            if name in before:
                value = before[name](value)
            values[name] = resolved[name][1](value, (*loc, key), errors)
        extra = None
        if cls.__model_extra_allowed__:
            extra = {}
            for k, v in data.items():
                if k in used:
                    continue
                if not isinstance(k, str):
                    _err(errors, "invalid_key", (*loc, _key_loc(k)), "Keys should be strings", k)
                extra[k] = v
        return values, extra

    def _set(self, values: dict[str, Any], extra: dict[Any, Any] | None) -> None:
        d = self.__dict__
        d.update(values)
        if self.__model_extra_allowed__:
            d["__model_extra__"] = extra if extra is not None else {}
        self.__model_post__()

    def __model_post__(self) -> None:
        """Hook after validation (pydantic's ``mode="after"`` validators); values may be replaced."""

    @classmethod
    def model_construct(cls: type[_M], **values: Any) -> _M:
        """An instance from trusted values by field name, without validation; absent ones default."""
        instance = cls.__new__(cls)
        fields = cls.__model_fields__
        by_alias = {f.alias: n for n, f in fields.items()}
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in values.items():
            name = key if key in fields else by_alias.get(key)
            if name is not None:
                known[name] = value
            else:
                extra[key] = value
        for name, info in fields.items():
            if name not in known:
                known[name] = info.get_default(call_default_factory=True)
        d = instance.__dict__
        d.update({n: known[n] for n in fields})
        if cls.__model_extra_allowed__:
            d["__model_extra__"] = extra
        return instance

    def model_copy(self: _M, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> _M:
        """A copy, with ``update`` applied by field name without validation."""
        clone = copy.deepcopy(self) if deep else copy.copy(self)
        if update:
            d = clone.__dict__
            if self.__model_extra_allowed__:
                d["__model_extra__"] = dict(d["__model_extra__"])
            for key, value in update.items():
                if key in self.__model_fields__:
                    d[key] = value
                elif self.__model_extra_allowed__:
                    d["__model_extra__"][key] = value
        return clone

    def __copy__(self: _M) -> _M:
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone

    def __deepcopy__(self: _M, memo: dict[int, Any]) -> _M:
        # Models are immutable: only the containers inside them need copying. Far cheaper than
        # copy's generic reduce/reconstruct path (the catalog hands out deep copies).
        clone = type(self).__new__(type(self))
        clone.__dict__.update({key: _deep(value, memo) for key, value in self.__dict__.items()})
        return clone

    @property
    def model_extra(self) -> dict[str, Any] | None:
        """The keys kept by an ``extra="allow"`` model; ``None`` for other models."""
        extra: dict[str, Any] | None = self.__dict__.get("__model_extra__")
        return extra

    def __getattr__(self, name: str) -> Any:
        extra = self.__dict__.get("__model_extra__")
        if extra is not None and name in extra:
            return extra[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # --- immutability and value semantics ---

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        d = self.__dict__
        return hash((type(self), *(d[name] for name in self.__model_fields__)))

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        d = self.__dict__
        yield from ((name, d[name]) for name in self.__model_fields__)
        yield from (self.__dict__.get("__model_extra__") or {}).items()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self)})"

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
