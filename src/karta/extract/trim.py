"""Extracted values trimmed to the Kubernetes schema of their target type [compat].

The original converts each pod template, pod spec, metadata and fragment into its typed Kubernetes
struct through JSON (docs/spec/format.md#typed-results), and a struct keeps only its own fields: a Pod's
``apiVersion``, ``kind`` and ``status`` under ``podTemplateSpecPath: .``, Knative's
``containerConcurrency`` in a PodSpec, KServe's ``modelFormat``/``storageUri`` in a container are
gone from what it hands on (a Kueue Workload, a PodGroup's template), and what it hands on is what
the API server accepts. We do the same with the field tree generated from the Kubernetes OpenAPI of
the pinned version (:mod:`karta.extract._k8s_fields`, written by
:mod:`karta.extract._k8s_fields_build`).

A known field of the wrong JSON type is a conversion error in the original (its JSON decoder
refuses it), so where trimming descends into a field that holds a struct, an array of structs or a
map of structs and finds another JSON type, it reports it as the shape checks of
:mod:`karta.extract.convert` do (``null`` stays accepted everywhere, and stays as it is). Scalar
fields are not descended into and keep the loose checks.

Fast: the field tree is compiled once per struct into closures holding the struct's field set and
its struct-holding fields; a value without unknown fields is walked without a copy and returned as
it is (the same object), and only the objects and arrays on the path to a dropped field are copied
(shallowly): the input is never modified.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from karta.extract import _k8s_fields
from karta.jq import json_type

Trim = Callable[[Any], Any]

_DICTS = frozenset({dict})  # the one class every item of an array of plain structs has
_chain = chain.from_iterable


class Mismatch(Exception):
    """A field that holds structs has another JSON type: where (a path below the value), what was
    expected, and the value."""

    def __init__(self, where: str, expected: str, value: Any) -> None:
        super().__init__(where)
        self.where = where
        self.expected = expected
        self.value = value

    def within(self, prefix: str) -> Mismatch:
        self.where = prefix + self.where
        return self

    def describe(self) -> str:
        """The detail of the conversion error, worded as the shape checks word theirs."""
        return f"{self.where or '.'}: expected {self.expected}, got {json_type(self.value)}"


def _struct(known: frozenset[str], nested_keys: frozenset[str], nested: dict[str, Trim]) -> Trim:
    """The trimming of one struct: ``nested`` maps each of ``nested_keys`` to the trimming of what
    the field holds (filled after this call, for recursive structs)."""
    if not nested_keys:
        return _leaf_struct(known)

    def trim(value: Any) -> Any:
        if value.__class__ is not dict and not isinstance(value, dict):
            raise Mismatch("", "object", value)
        out: dict[str, Any] | None = None
        source = value
        if not known.issuperset(value):  # the set methods: no key view built
            source = out = {key: item for key, item in value.items() if key in known}
        if nested_keys.isdisjoint(source):  # no field that holds structs: done
            return value if out is None else out
        try:
            for key in nested_keys.intersection(source):
                item = source[key]
                if item is None:
                    continue
                trimmed = nested[key](item)
                if trimmed is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = trimmed
        except Mismatch:
            raise _first_mismatch(source, nested) from None
        return value if out is None else out

    return trim


def _leaf_struct(known: frozenset[str]) -> Trim:
    """:func:`_struct` of a struct none of whose fields holds structs (an emptyDir, a key
    selector): one set test."""

    def trim(value: Any) -> Any:
        if value.__class__ is not dict and not isinstance(value, dict):
            raise Mismatch("", "object", value)
        if known.issuperset(value):
            return value
        return {key: item for key, item in value.items() if key in known}

    return trim


def _first_mismatch(source: dict[str, Any], nested: dict[str, Trim]) -> Mismatch:
    """The mismatch of the first field in the object's own order (the set walk of :func:`_struct`
    has none), so the message does not depend on hashing."""
    for key, item in source.items():
        trim = nested.get(key)
        if trim is None or item is None:
            continue
        try:
            trim(item)
        except Mismatch as mismatch:
            return mismatch.within(f".{key}")
    raise AssertionError("no mismatch")  # pragma: no cover


def _array(item_trim: Trim) -> Trim:
    """The trimming of an array of what ``item_trim`` trims (a copy when an item is trimmed)."""

    def trim(value: Any) -> Any:
        if value.__class__ is not list and not isinstance(value, list):
            raise Mismatch("", "array", value)
        return _each(value, enumerate(value), item_trim, "[{}]")

    return trim


def _map(value_trim: Trim) -> Trim:
    """The trimming of a string map of what ``value_trim`` trims."""

    def trim(value: Any) -> Any:
        if value.__class__ is not dict and not isinstance(value, dict):
            raise Mismatch("", "object", value)
        return _each(value, value.items(), value_trim, ".{}")

    return trim


def _each(value: Any, entries: Iterable[tuple[Any, Any]], item_trim: Trim, where: str) -> Any:
    """``value`` (a list or dict) with each non-null item of ``entries`` (index or key, item)
    trimmed: itself when no item changed, else a shallow copy; a mismatch is placed at
    ``where`` (formatted with the index or key)."""
    out: Any = None
    for at, item in entries:
        if item is None:
            continue
        try:
            trimmed = item_trim(item)
        except Mismatch as mismatch:
            raise mismatch.within(where.format(at)) from None
        if trimmed is not item:
            if out is None:
                out = value.copy()
            out[at] = trimmed
    return value if out is None else out


def _struct_array(
    known: frozenset[str],
    nested_keys: frozenset[str],
    item_trim: Trim,
    plain: tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]] = ({}, {}),
) -> Trim:
    """:func:`_array` of a struct, in one loop: the items that are plain objects are passed
    inline, without a call each, and the others trimmed by ``item_trim``; a mismatch runs the
    general walk again, which places it. An item is plain when every field is known and each
    that holds structs holds plain ones: ``plain`` maps a field holding a struct (a volume's
    ``emptyDir``, ``configMap``) and one holding an array of structs to the fields of that struct
    that hold none (its other fields: trimmed by the call)."""
    general = _array(item_trim)
    flat = known - nested_keys
    one, many = plain

    def is_plain(item: dict[str, Any]) -> bool:
        for key, field in item.items():
            if key in flat or field is None:
                if key in known:
                    continue
                return False
            fields = one.get(key)
            if fields is not None:
                if field.__class__ is dict and fields.issuperset(field):
                    continue
                return False
            fields = many.get(key)
            if fields is None or field.__class__ is not list:
                return False
            if not (_DICTS.issuperset(map(type, field)) and fields.issuperset(_chain(field))):
                return False
        return True

    def trim(value: Any) -> Any:
        if value.__class__ is not list:
            return general(value)
        out: list[Any] | None = None
        try:
            for at, item in enumerate(value):
                if item.__class__ is dict and (
                    (known.issuperset(item) and nested_keys.isdisjoint(item)) or is_plain(item)
                ):
                    continue
                if item is None:
                    continue
                trimmed = item_trim(item)
                if trimmed is not item:
                    if out is None:
                        out = value.copy()
                    out[at] = trimmed
        except Mismatch:
            return general(value)
        return value if out is None else out

    return trim


class _Compiler:
    """Closures of the generated field tree, one per struct (shared by every field that holds it)."""

    def __init__(self, structs: dict[str, tuple[str, dict[str, str]]]) -> None:
        self.structs = structs
        self.done: dict[str, Trim] = {}

    def descriptor(self, text: str) -> Trim:
        if text.startswith("[]"):
            item = text[2:]
            if item in self.structs:
                fields, held = self.structs[item]
                return _struct_array(
                    frozenset(fields.split()), frozenset(held), self.struct(item), self.plain(held)
                )
            return _array(self.descriptor(item))
        if text.startswith("{}"):
            return _map(self.descriptor(text[2:]))
        return self.struct(text)

    def plain(self, held: dict[str, str]) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
        """The tables of :func:`_struct_array`'s plain items: a struct's fields that hold a
        struct, and those that hold an array of structs, each to that struct's fields that hold
        no structs."""
        one: dict[str, frozenset[str]] = {}
        many: dict[str, frozenset[str]] = {}
        for key, desc in held.items():
            table, name = (many, desc[2:]) if desc[:2] == "[]" else (one, desc)
            if name in self.structs:
                fields, nested = self.structs[name]
                table[key] = frozenset(fields.split()) - frozenset(nested)
        return one, many

    def struct(self, name: str) -> Trim:
        done = self.done.get(name)
        if done is not None:
            return done
        fields, held = self.structs[name]
        # The closures of its fields are built on their first use (most structs of the tree are
        # never met), which also ends the recursion of a struct that holds itself.
        nested = _Lazy(self, held)
        trim = self.done[name] = _struct(frozenset(fields.split()), frozenset(held), nested)
        return trim


class _Lazy(dict[str, Trim]):
    """A struct's field -> trimming table, filled on each field's first use."""

    def __init__(self, compiler: _Compiler, held: dict[str, str]) -> None:
        super().__init__()
        self.compiler = compiler
        self.held = held

    def __missing__(self, field: str) -> Trim:
        trim = self[field] = self.compiler.descriptor(self.held[field])
        return trim

    def get(self, field: str, default: Any = None) -> Any:
        return self[field] if field in self.held else default


_COMPILER = _Compiler(_k8s_fields.STRUCTS)


def descriptor_of(target_name: str) -> str | None:
    """The field-tree descriptor of a conversion target (``PodSpec``, ``[]Container``), or None
    for a target that is not a Kubernetes struct (strings, string maps)."""
    base = target_name.removeprefix("[]")
    struct = _k8s_fields.ROOTS.get(base)
    if struct is None:
        return None
    return struct if base == target_name else "[]" + struct


def is_struct(name: Any) -> bool:
    """Whether ``name`` names a struct of the field tree (a definition-cache recipe is checked)."""
    return name.__class__ is str and name in _k8s_fields.STRUCTS


def is_descriptor(text: Any) -> bool:
    """Whether ``text`` is a descriptor of the field tree: ``Name``, ``[]D`` or ``{}D``."""
    if text.__class__ is not str:
        return False
    while text[:2] in ("[]", "{}"):
        text = text[2:]
    return is_struct(text)


def fields_of(struct: str) -> tuple[frozenset[str], dict[str, str]]:
    """A struct's field names and its struct-holding fields (field -> descriptor), for the
    generated shape tests that trim as they check (:mod:`karta.extract.compiled`)."""
    names, held = _k8s_fields.STRUCTS[struct]
    known = _KNOWN.get(struct)
    if known is None:
        known = _KNOWN[struct] = frozenset(names.split())
    return known, held


def flat_of(struct: str) -> frozenset[str]:
    """The names of a struct's fields that hold no structs (one set per struct): an object whose
    keys are all among them is kept as it is, in one test."""
    flat = _FLAT.get(struct)
    if flat is None:
        known, held = fields_of(struct)
        flat = _FLAT[struct] = known.difference(held)
    return flat


_KNOWN: dict[str, frozenset[str]] = {}
_FLAT: dict[str, frozenset[str]] = {}


def trimmer(descriptor: str) -> Trim:
    """The trimming of what ``descriptor`` describes (``PodSpec``, ``[]Container``, ``{}Name``):
    its argument (not None) itself when nothing must be dropped, else a trimmed copy;
    :class:`Mismatch` when a struct-holding field has another JSON type. Built on first use
    (every ``kli`` command imports the targets), then kept."""
    trim = _TRIMS.get(descriptor)
    if trim is None:
        trim = _TRIMS[descriptor] = _COMPILER.descriptor(descriptor)
    return trim


_TRIMS: dict[str, Trim] = {}
_QUIET: dict[str, Trim] = {}


def quiet(descriptor: str) -> Trim:
    """:func:`trimmer` returning None instead of raising, for the generated extraction code,
    which declines a value the general code then converts with its messages (one function per
    descriptor: the generated code's constants)."""
    done = _QUIET.get(descriptor)
    if done is not None:
        return done
    trim = trimmer(descriptor)

    def trimmed_or_none(value: Any) -> Any:
        try:
            return trim(value)
        except Mismatch:
            return None

    _QUIET[descriptor] = trimmed_or_none
    return trimmed_or_none


def restore(before: Any, after: Any, descriptor: str) -> Any:
    """``after`` (a value written back where ``before`` was) with the fields of ``before`` that
    its Kubernetes struct lacks put back, at every level of ``descriptor`` [fix]: trimming
    applies to what karta hands to consumers, not to the user's object, so a read-modify-write
    round trip keeps KServe's ``modelFormat`` in a container. Fields the struct has are written
    as given (absent ones stay absent: section 9.2); list items are matched by their ``name``
    where the struct has one, else by position. ``after`` itself when nothing is put back, else a
    copy of the objects on the way (the restored values are deep copies: nothing aliases
    ``before``)."""
    if descriptor[:2] == "[]":
        if before.__class__ is not list or after.__class__ is not list:
            return after
        return _restore_items(before, after, descriptor[2:])
    if descriptor[:2] == "{}":
        if before.__class__ is not dict or after.__class__ is not dict:
            return after
        return _restore_entries(before, after, ((key, before.get(key)) for key in after), descriptor[2:])
    if before.__class__ is not dict or after.__class__ is not dict:
        return after
    known, held = fields_of(descriptor)
    out: dict[str, Any] | None = None
    for key, value in before.items():
        if key not in known and key not in after:
            if out is None:
                out = dict(after)
            out[key] = copy.deepcopy(value)
    pairs = ((key, before.get(key)) for key in held if key in after)
    merged = _restore_entries(before, after if out is None else out, pairs, None, held)
    return merged


def _restore_entries(
    before: Any,
    after: dict[str, Any],
    pairs: Iterable[tuple[str, Any]],
    descriptor: str | None,
    held: dict[str, str] | None = None,
) -> Any:
    """``after`` with each ``(key, previous value)`` of ``pairs`` restored (:func:`restore`) into
    ``after[key]``, by ``descriptor`` or by ``held[key]``; a copy when one changed."""
    out: dict[str, Any] | None = None
    for key, previous in pairs:
        value = after[key]
        if previous is None or value is None:
            continue
        descriptor_here = held[key] if held is not None else descriptor
        assert descriptor_here is not None
        restored = restore(previous, value, descriptor_here)
        if restored is not value:
            if out is None:
                out = dict(after)
            out[key] = restored
    return after if out is None else out


def _restore_items(before: list[Any], after: list[Any], struct: str) -> list[Any]:
    by_name = "name" in fields_of(struct)[0]
    named: dict[Any, Any] = {}
    if by_name:
        named = {item["name"]: item for item in before if item.__class__ is dict and "name" in item}
    out: list[Any] | None = None
    for index, value in enumerate(after):
        if value.__class__ is not dict:
            continue
        name = value.get("name") if by_name else None
        if name.__class__ is str and name in named:
            previous = named[name]
        elif index < len(before) and (not by_name or name is None):
            previous = before[index]
        else:
            continue
        if previous is None:
            continue
        restored = restore(previous, value, struct)
        if restored is not value:
            if out is None:
                out = list(after)
            out[index] = restored
    return after if out is None else out
