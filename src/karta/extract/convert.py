"""Typed conversion of jq results (docs/spec/format.md#typed-results).

Results stay plain JSON data. Each target type is checked loosely, at the field level that the
Kubernetes type defines (objects are objects, arrays arrays, strings strings), the way the original's
JSON round trip into Go types would reject them. ``null`` is accepted at every level, as Go's JSON
decoder does, and a top-level ``null`` becomes the empty value of the target.

The depth is bounded on purpose, because every pod template of every object passes through here
(a measured 5-10x saving on a JobSet-like object): a PodTemplateSpec checks its ObjectMeta (labels
and annotations are string maps) and its PodSpec fields; the containers, affinity and resources
inside a PodSpec are only checked to be objects. The fragment targets (Container,
ResourceRequirements, affinities, resource claims) are checked one level down themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from karta import _codegen as codegen
from karta._identity import IdentityCache
from karta.errors import ConversionError
from karta.extract import trim as trimming
from karta.jq import json_type

# A shape is one of the markers below, a dict of field -> shape (an object whose known fields are
# checked), or a one-element tuple ``(item_shape,)`` (an array whose items are checked).
STRING: Final = "string"
OBJECT: Final = "object"
ARRAY: Final = "array"
STRING_MAP: Final = "map[string]string"
QUANTITY_MAP: Final = "map[string]Quantity"

Shape = Any

_STRINGS: Shape = (STRING,)
_OBJECTS: Shape = (OBJECT,)

RESOURCE_REQUIREMENTS: Shape = {
    "limits": QUANTITY_MAP,
    "requests": QUANTITY_MAP,
    "claims": _OBJECTS,
}
CONTAINER: Shape = {
    "name": STRING,
    "image": STRING,
    "command": ARRAY,
    "args": ARRAY,
    "workingDir": STRING,
    "ports": _OBJECTS,
    "env": _OBJECTS,
    "envFrom": _OBJECTS,
    "resources": OBJECT,
    "resizePolicy": _OBJECTS,
    "restartPolicy": STRING,
    "volumeMounts": _OBJECTS,
    "volumeDevices": _OBJECTS,
    "livenessProbe": OBJECT,
    "readinessProbe": OBJECT,
    "startupProbe": OBJECT,
    "lifecycle": OBJECT,
    "terminationMessagePath": STRING,
    "terminationMessagePolicy": STRING,
    "imagePullPolicy": STRING,
    "securityContext": OBJECT,
}
OBJECT_META: Shape = {
    "name": STRING,
    "generateName": STRING,
    "namespace": STRING,
    "uid": STRING,
    "resourceVersion": STRING,
    "labels": STRING_MAP,
    "annotations": STRING_MAP,
    "ownerReferences": _OBJECTS,
    "finalizers": _STRINGS,
    "managedFields": _OBJECTS,
}
NODE_AFFINITY: Shape = {
    "requiredDuringSchedulingIgnoredDuringExecution": OBJECT,
    "preferredDuringSchedulingIgnoredDuringExecution": _OBJECTS,
}
POD_AFFINITY: Shape = {
    "requiredDuringSchedulingIgnoredDuringExecution": _OBJECTS,
    "preferredDuringSchedulingIgnoredDuringExecution": _OBJECTS,
}
POD_RESOURCE_CLAIM: Shape = {"name": STRING, "resourceClaimName": STRING, "resourceClaimTemplateName": STRING}
POD_SPEC: Shape = {
    "containers": _OBJECTS,
    "initContainers": _OBJECTS,
    "ephemeralContainers": _OBJECTS,
    "volumes": _OBJECTS,
    "nodeSelector": STRING_MAP,
    "nodeName": STRING,
    "affinity": OBJECT,
    "tolerations": _OBJECTS,
    "schedulerName": STRING,
    "priorityClassName": STRING,
    "serviceAccountName": STRING,
    "restartPolicy": STRING,
    "hostname": STRING,
    "subdomain": STRING,
    "resourceClaims": _OBJECTS,
    "imagePullSecrets": _OBJECTS,
    "securityContext": OBJECT,
    "topologySpreadConstraints": _OBJECTS,
    "readinessGates": _OBJECTS,
    "hostAliases": _OBJECTS,
    "resources": OBJECT,
}
POD_TEMPLATE_SPEC: Shape = {"metadata": OBJECT_META, "spec": POD_SPEC}


_Problem = tuple[str, str, Any]  # (field path, expected JSON type, offending value)
_Checker = Callable[[Any], "_Problem | None"]

# Leaf codes of a compiled object shape: checked inline, without a call per field.
_LEAF_STRING, _LEAF_OBJECT, _LEAF_ARRAY, _NESTED = 0, 1, 2, 3


def _compile(shape: Shape) -> _Checker:
    """Turn a shape into a checker function; done once per shape at import time."""
    if isinstance(shape, dict):
        return _object_checker(shape)
    if isinstance(shape, tuple):
        return _array_checker(shape[0])
    leaf = {STRING: _check_string, OBJECT: _check_object, ARRAY: _check_array}.get(shape)
    if leaf is not None:
        return leaf
    if shape == STRING_MAP:
        return _check_string_map
    if shape == QUANTITY_MAP:
        return _check_quantity_map
    raise AssertionError(f"unknown shape {shape!r}")  # pragma: no cover


def _object_checker(shape: dict[str, Shape]) -> _Checker:
    table: dict[str, tuple[int, _Checker | None]] = {}
    for key, sub in shape.items():
        code = (
            {STRING: _LEAF_STRING, OBJECT: _LEAF_OBJECT, ARRAY: _LEAF_ARRAY}.get(sub)
            if isinstance(sub, str)
            else None
        )
        table[key] = (code, None) if code is not None else (_NESTED, _compile(sub))

    def check(value: Any) -> _Problem | None:
        if not isinstance(value, dict):
            return ("", "object", value)
        for key, item in value.items():
            entry = table.get(key)
            if entry is None or item is None:
                continue
            code, checker = entry
            if code == _LEAF_STRING:
                if not isinstance(item, str):
                    return (f".{key}", "string", item)
            elif code == _LEAF_OBJECT:
                if not isinstance(item, dict):
                    return (f".{key}", "object", item)
            elif code == _LEAF_ARRAY:
                if not isinstance(item, list):
                    return (f".{key}", "array", item)
            else:
                assert checker is not None
                problem = checker(item)
                if problem is not None:
                    return (f".{key}{problem[0]}", problem[1], problem[2])
        return None

    return check


def _array_checker(item_shape: Shape) -> _Checker:
    if item_shape == OBJECT:

        def check_objects(value: Any) -> _Problem | None:
            if not isinstance(value, list):
                return ("", "array", value)
            for index, item in enumerate(value):
                if item is not None and not isinstance(item, dict):
                    return (f"[{index}]", "object", item)
            return None

        return check_objects
    if item_shape == STRING:

        def check_strings(value: Any) -> _Problem | None:
            if not isinstance(value, list):
                return ("", "array", value)
            for index, item in enumerate(value):
                if item is not None and not isinstance(item, str):
                    return (f"[{index}]", "string", item)
            return None

        return check_strings
    item_checker = _compile(item_shape)

    def check(value: Any) -> _Problem | None:
        if not isinstance(value, list):
            return ("", "array", value)
        for index, item in enumerate(value):
            if item is not None:
                problem = item_checker(item)
                if problem is not None:
                    return (f"[{index}]{problem[0]}", problem[1], problem[2])
        return None

    return check


# --- generated checkers ------------------------------------------------------------------------------
#
# Every pod template of every object passes through the object and array checkers, so each such
# shape is compiled once (at import) into one generated function that walks the value with the
# nested shapes inlined: no call per field or per item. It visits fields and items in the same
# order as the composed checkers above and reports the same first problem.

_LEAF_TYPES = {STRING: "str", OBJECT: "dict", ARRAY: "list"}
_LEAF_NAMES = {STRING: "string", OBJECT: "object", ARRAY: "array"}


class _Gen:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.tables: dict[str, dict[str, int]] = {}

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def check(self, shape: Shape, var: str, where: str, indent: int, level: int) -> None:
        """Lines returning the first problem of ``var`` (not None) against ``shape``."""
        if isinstance(shape, str) and shape in _LEAF_TYPES:
            # The exact-class test first: no call for the common case.
            leaf = _LEAF_TYPES[shape]
            self.emit(indent, f"if {var}.__class__ is not {leaf} and not isinstance({var}, {leaf}):")
            self.emit(indent + 1, f'return ({where}, "{_LEAF_NAMES[shape]}", {var})')
        elif shape in (STRING_MAP, QUANTITY_MAP):
            self.emit(indent, f"if not isinstance({var}, dict):")
            self.emit(indent + 1, f'return ({where}, "object", {var})')
            k, x = f"k{level}", f"x{level}"
            self.emit(indent, f"for {k}, {x} in {var}.items():")
            if shape == STRING_MAP:
                self.emit(
                    indent + 1,
                    f"if {x}.__class__ is not str and {x} is not None and not isinstance({x}, str):",
                )
                self.emit(indent + 2, f'return ({where} + "." + {k}, "string", {x})')
            else:
                test = f"isinstance({x}, bool) or not isinstance({x}, str | int | float)"
                self.emit(indent + 1, f"if {x} is not None and ({test}):")
                self.emit(indent + 2, f'return ({where} + "." + {k}, "quantity", {x})')
        elif isinstance(shape, tuple):
            self.emit(indent, f"if not isinstance({var}, list):")
            self.emit(indent + 1, f'return ({where}, "array", {var})')
            x = f"x{level}"
            # The index is only needed for a problem: the first item that is this very object.
            self.emit(indent, f"for {x} in {var}:")
            self.emit(indent + 1, f"if {x} is not None:")
            self.check(
                shape[0], x, f'{where} + "[" + str(_first_index({var}, {x})) + "]"', indent + 2, level + 1
            )
        elif isinstance(shape, dict):
            self.emit(indent, f"if not isinstance({var}, dict):")
            self.emit(indent + 1, f'return ({where}, "object", {var})')
            table_name = f"T{len(self.tables)}"
            table: dict[str, int] = {}
            self.tables[table_name] = table
            branches: list[Shape] = []
            for key, sub in shape.items():
                if sub not in branches:  # fields of one shape share a branch
                    branches.append(sub)
                table[key] = branches.index(sub)
            k, x, c = f"k{level}", f"x{level}", f"c{level}"
            self.emit(indent, f"for {k}, {x} in {var}.items():")
            self.emit(indent + 1, f"{c} = {table_name}.get({k})")
            self.emit(indent + 1, f"if {c} is None or {x} is None:")
            self.emit(indent + 2, "continue")
            for number, sub in enumerate(branches):
                self.emit(indent + 1, f"{'if' if number == 0 else 'elif'} {c} == {number}:")
                self.check(sub, x, f'{where} + "." + {k}', indent + 2, level + 1)
        else:  # pragma: no cover
            raise AssertionError(f"unknown shape {shape!r}")


def _first_index(items: list[Any], item: Any) -> int:
    for index, candidate in enumerate(items):
        if candidate is item:
            return index
    raise AssertionError("not an item")  # pragma: no cover


def _generated_checker(shape: Shape) -> _Checker:
    gen = _Gen()
    gen.emit(0, "def check(v):")
    gen.check(shape, "v", '""', 1, 0)
    gen.emit(1, "return None")
    namespace: dict[str, Any] = {"_first_index": _first_index, **gen.tables}
    codegen.compile_source("\n".join(gen.lines), namespace, what=f"shape checker {_shape_name(shape)}")
    checker: _Checker = namespace["check"]
    return checker


def _shape_name(shape: Shape) -> str:
    if isinstance(shape, tuple):
        return f"[]{_shape_name(shape[0])}"
    if isinstance(shape, dict):
        return "{" + ", ".join(list(shape)[:3]) + (", ...}" if len(shape) > 3 else "}")
    return str(shape)


def _check_string(value: Any) -> _Problem | None:
    return None if isinstance(value, str) else ("", "string", value)


def _check_object(value: Any) -> _Problem | None:
    return None if isinstance(value, dict) else ("", "object", value)


def _check_array(value: Any) -> _Problem | None:
    return None if isinstance(value, list) else ("", "array", value)


def _check_string_map(value: Any) -> _Problem | None:
    if not isinstance(value, dict):
        return ("", "object", value)
    for key, item in value.items():
        if item is not None and not isinstance(item, str):
            return (f".{key}", "string", item)
    return None


def _check_quantity_map(value: Any) -> _Problem | None:
    if not isinstance(value, dict):
        return ("", "object", value)
    for key, item in value.items():
        if item is not None and (isinstance(item, bool) or not isinstance(item, str | int | float)):
            return (f".{key}", "quantity", item)
    return None


def shape_error(value: Any, shape: Shape) -> str | None:
    """Why ``value`` does not have ``shape`` (a short text naming the field), or None when it does."""
    if value is None:
        return None
    return _describe(_checker_for(shape)(value))


def _build_checker(shape: Shape) -> _Checker:
    """The checker of ``shape``: generated for objects and arrays (composed under
    ``KARTA_CODEGEN=off``), the leaf function otherwise."""
    checker: _Checker | None = None
    if isinstance(shape, dict | tuple) and codegen.enabled():
        try:
            checker = _generated_checker(shape)
        except Exception as exc:  # the composed checker reports the same problems
            codegen.failed(f"shape checker {_shape_name(shape)}", exc)
    if checker is None:
        checker = _compile(shape)
    return checker


_checker_for: IdentityCache[Shape, _Checker] = IdentityCache(_build_checker, size=256)
_composed_for: IdentityCache[Shape, _Checker] = IdentityCache(_compile, size=256)


def _deferred_checker(target: TargetType) -> _Checker:
    """The checker of ``target`` until its generated one is due (:func:`karta._codegen.due`): the
    composed checker on the first use, then the generated one, which replaces it on ``target``."""
    uses = 0

    def check(value: Any) -> _Problem | None:
        nonlocal uses
        if not codegen.due(uses):
            uses += 1
            return _composed_for(target.shape)(value)
        checker = _checker_for(target.shape)
        object.__setattr__(target, "_check", checker)
        return checker(value)

    return check


def _describe(problem: _Problem | None) -> str | None:
    if problem is None:
        return None
    where, expected, value = problem
    return f"{where or '.'}: expected {expected}, got {json_type(value)}"


def conversion_error(index: int, type_name: str, detail: str) -> ConversionError:
    return ConversionError(f"failed to convert object at index {index} to type {type_name}: {detail}")


@dataclass(frozen=True, slots=True)
class TargetType:
    """One conversion target of section 4: its name in messages, its shape and its empty value."""

    name: str
    shape: Shape
    empty: Callable[[], Any]
    _check: _Checker = field(init=False, repr=False, compare=False)
    # The Kubernetes struct the value is trimmed to (karta.extract.trim: ``PodSpec``,
    # ``[]Container``), None for a target that is none (strings, string maps).
    trim_to: str | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        generated = isinstance(self.shape, dict | tuple) and codegen.enabled()
        check = _checker_for(self.shape) if not generated or codegen.due(0) else _deferred_checker(self)
        object.__setattr__(self, "_check", check)
        object.__setattr__(self, "trim_to", trimming.descriptor_of(self.name))

    def convert(self, value: Any, index: int) -> Any:
        """The converted result at position ``index``; ``null`` becomes the empty value."""
        if value is None:
            return self.empty()
        problem = self._check(value)
        if problem is not None:
            raise conversion_error(index, self.name, _describe(problem) or "")
        return value if self.trim_to is None else self._trimmed(value, index)

    def convert_all(self, values: Sequence[Any]) -> list[Any]:
        out = list(values)
        if self.shape is STRING:
            for value in out:
                if value.__class__ is not str:
                    break
            else:
                return out
        check = self._check
        for index, value in enumerate(out):
            if value is None:
                out[index] = self.empty()
            else:
                problem = check(value)
                if problem is not None:
                    raise conversion_error(index, self.name, _describe(problem) or "")
                if self.trim_to is not None:
                    out[index] = self._trimmed(value, index)
        return out

    def _trimmed(self, value: Any, index: int) -> Any:
        """``value`` (checked, not None) trimmed to the Kubernetes struct of the target (the
        general path; the generated extraction code trims in its shape tests)."""
        assert self.trim_to is not None
        try:
            return trimming.trimmer(self.trim_to)(value)
        except trimming.Mismatch as mismatch:
            raise conversion_error(index, self.name, mismatch.describe()) from None


def _empty_string() -> str:
    return ""


STRING_TYPE = TargetType("string", STRING, _empty_string)
STRING_MAP_TYPE = TargetType("map[string]string", STRING_MAP, dict)
POD_TEMPLATE_SPEC_TYPE = TargetType("PodTemplateSpec", POD_TEMPLATE_SPEC, dict)
POD_SPEC_TYPE = TargetType("PodSpec", POD_SPEC, dict)
OBJECT_META_TYPE = TargetType("ObjectMeta", OBJECT_META, dict)
CONTAINER_TYPE = TargetType("Container", CONTAINER, dict)
CONTAINERS_TYPE = TargetType("[]Container", (CONTAINER,), list)
RESOURCE_REQUIREMENTS_TYPE = TargetType("ResourceRequirements", RESOURCE_REQUIREMENTS, dict)
RESOURCE_CLAIMS_TYPE = TargetType("[]PodResourceClaim", (POD_RESOURCE_CLAIM,), list)
POD_AFFINITY_TYPE = TargetType("PodAffinity", POD_AFFINITY, dict)
NODE_AFFINITY_TYPE = TargetType("NodeAffinity", NODE_AFFINITY, dict)


def is_empty(value: Any) -> bool:
    """Empty in the sense of write-back and fragment records: null, ``""``, ``{}`` or ``[]``."""
    return value is None or ((isinstance(value, str | dict | list)) and not value)
