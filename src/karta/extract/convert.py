"""Typed conversion of jq results (section 4 of the format).

Results stay plain JSON data. Each target type is checked loosely, at the field level that the
Kubernetes type defines (objects are objects, arrays arrays, strings strings), the way the original's
JSON round trip into Go types would reject them. ``null`` is accepted at every level, as Go's JSON
decoder does, and a top-level ``null`` becomes the empty value of the target.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from karta.errors import ConversionError

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
    "claims": ({"name": STRING, "request": STRING},),
}
_ENV_VAR: Shape = {"name": STRING, "value": STRING, "valueFrom": OBJECT}
CONTAINER: Shape = {
    "name": STRING,
    "image": STRING,
    "command": _STRINGS,
    "args": _STRINGS,
    "workingDir": STRING,
    "ports": _OBJECTS,
    "env": (_ENV_VAR,),
    "envFrom": _OBJECTS,
    "resources": RESOURCE_REQUIREMENTS,
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
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": _OBJECTS},
    "preferredDuringSchedulingIgnoredDuringExecution": _OBJECTS,
}
POD_AFFINITY: Shape = {
    "requiredDuringSchedulingIgnoredDuringExecution": _OBJECTS,
    "preferredDuringSchedulingIgnoredDuringExecution": _OBJECTS,
}
AFFINITY: Shape = {
    "nodeAffinity": NODE_AFFINITY,
    "podAffinity": POD_AFFINITY,
    "podAntiAffinity": POD_AFFINITY,
}
POD_RESOURCE_CLAIM: Shape = {"name": STRING, "resourceClaimName": STRING, "resourceClaimTemplateName": STRING}
POD_SPEC: Shape = {
    "containers": (CONTAINER,),
    "initContainers": (CONTAINER,),
    "ephemeralContainers": _OBJECTS,
    "volumes": _OBJECTS,
    "nodeSelector": STRING_MAP,
    "nodeName": STRING,
    "affinity": AFFINITY,
    "tolerations": _OBJECTS,
    "schedulerName": STRING,
    "priorityClassName": STRING,
    "serviceAccountName": STRING,
    "restartPolicy": STRING,
    "hostname": STRING,
    "subdomain": STRING,
    "resourceClaims": (POD_RESOURCE_CLAIM,),
    "imagePullSecrets": _OBJECTS,
    "securityContext": OBJECT,
    "topologySpreadConstraints": _OBJECTS,
    "readinessGates": _OBJECTS,
    "hostAliases": _OBJECTS,
    "resources": RESOURCE_REQUIREMENTS,
}
POD_TEMPLATE_SPEC: Shape = {"metadata": OBJECT_META, "spec": POD_SPEC}


def shape_error(value: Any, shape: Shape, where: str = "") -> str | None:
    """Why ``value`` does not have ``shape`` (a short text naming the field), or None when it does."""
    if value is None:
        return None
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return _mismatch(where, "object", value)
        for key, item in value.items():
            sub = shape.get(key)
            if sub is not None and item is not None:
                problem = shape_error(item, sub, f"{where}.{key}")
                if problem is not None:
                    return problem
        return None
    if isinstance(shape, tuple):
        if not isinstance(value, list):
            return _mismatch(where, "array", value)
        item_shape = shape[0]
        for index, item in enumerate(value):
            problem = shape_error(item, item_shape, f"{where}[{index}]")
            if problem is not None:
                return problem
        return None
    if shape == STRING:
        return None if isinstance(value, str) else _mismatch(where, "string", value)
    if shape == OBJECT:
        return None if isinstance(value, dict) else _mismatch(where, "object", value)
    if shape == STRING_MAP:
        if not isinstance(value, dict):
            return _mismatch(where, "object", value)
        for key, item in value.items():
            if item is not None and not isinstance(item, str):
                return _mismatch(f"{where}.{key}", "string", item)
        return None
    if shape == QUANTITY_MAP:
        if not isinstance(value, dict):
            return _mismatch(where, "object", value)
        for key, item in value.items():
            if item is not None and (isinstance(item, bool) or not isinstance(item, str | int | float)):
                return _mismatch(f"{where}.{key}", "quantity", item)
        return None
    raise AssertionError(f"unknown shape {shape!r}")  # pragma: no cover


def json_type(value: Any) -> str:
    """The JSON type name of a plain value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _mismatch(where: str, expected: str, value: Any) -> str:
    return f"{where or '.'}: expected {expected}, got {json_type(value)}"


def conversion_error(index: int, type_name: str, detail: str) -> ConversionError:
    return ConversionError(f"failed to convert object at index {index} to type {type_name}: {detail}")


@dataclass(frozen=True, slots=True)
class TargetType:
    """One conversion target of section 4: its name in messages, its shape and its empty value."""

    name: str
    shape: Shape
    empty: Callable[[], Any]

    def convert(self, value: Any, index: int) -> Any:
        """The converted result at position ``index``; ``null`` becomes the empty value."""
        if value is None:
            return self.empty()
        problem = shape_error(value, self.shape)
        if problem is not None:
            raise conversion_error(index, self.name, problem)
        return value

    def convert_all(self, values: Sequence[Any]) -> list[Any]:
        return [self.convert(value, index) for index, value in enumerate(values)]


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
