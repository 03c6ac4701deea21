"""A small validator for the structural OpenAPI subset the Karta CRD uses, for the offline tests.

Owns :func:`structural_errors`: it checks a JSON value against a CRD ``openAPIV3Schema`` the way the
API server does for our keywords (nulls pruned first, unknown fields reported as with
``fieldValidation=Strict``, ``type``, ``required``, ``properties``, ``additionalProperties``,
``items``, ``minItems``, ``minLength``, ``maxLength``, ``minProperties``, ``minimum``, ``enum``,
``pattern``, list types ``map``/``set``/``atomic`` and the CEL rules of the Karta CRD, which are
interpreted by a table of their Python equivalents). Messages follow the API server's wording so
the offline and the e2e tests can share expected substrings. An unsupported keyword is an error of
the test, never silently ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_CEL: dict[str, Callable[[dict[str, Any]], bool]] = {
    "has(self.keyPath) || has(self.matchLabels)": lambda o: "keyPath" in o or "matchLabels" in o,
    "!has(self.value) || has(self.keyPath)": lambda o: "value" not in o or "keyPath" in o,
}

_KNOWN = {
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "minLength",
    "maxLength",
    "minProperties",
    "minimum",
    "enum",
    "pattern",
    "format",
    "default",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-validations",
}

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def prune_nulls(value: Any) -> Any:
    """The value without ``null`` object members (the API server prunes them before validation)."""
    if isinstance(value, dict):
        return {k: prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [prune_nulls(v) for v in value]
    return value


def structural_errors(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Every violation of ``schema`` by ``value`` as ``<path>: <message>`` (empty when valid)."""
    out: list[str] = []
    _check(schema, prune_nulls(value), path, out)
    return out


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _check(schema: dict[str, Any], value: Any, path: str, out: list[str]) -> None:
    unknown = set(schema) - _KNOWN
    if unknown:
        raise AssertionError(f"unsupported schema keywords at {path}: {sorted(unknown)}")
    typ = schema.get("type")
    if typ is not None and not _TYPES[typ](value):
        out.append(f"{path}: Invalid value: {json.dumps(value)}: {path} in body must be of type {typ}")
        return
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: Unsupported value: {json.dumps(value)}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            out.append(
                f"{path}: Invalid value: {path} in body should be at least {schema['minLength']} chars long"
            )
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{path}: Too long: may not be more than {schema['maxLength']} bytes")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{path}: Invalid value: {path} in body should match '{schema['pattern']}'")
    if isinstance(value, int) and "minimum" in schema and value < schema["minimum"]:
        out.append(
            f"{path}: Invalid value: {path} in body should be greater than or equal to {schema['minimum']}"
        )
    if isinstance(value, dict):
        _check_object(schema, value, path, out)
    if isinstance(value, list):
        _check_array(schema, value, path, out)


def _check_object(schema: dict[str, Any], value: dict[str, Any], path: str, out: list[str]) -> None:
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        out.append(
            f"{path}: Invalid value: {path} in body should have at least {schema['minProperties']} properties"
        )
    for key in schema.get("required", ()):
        if key not in value:
            out.append(f"{_join(path, key)}: Required value")
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key, item in value.items():
        here = _join(path, key)
        if props is not None and key in props:
            _check(props[key], item, here, out)
        elif isinstance(extra, dict):
            _check(extra, item, here, out)
        elif props is not None:
            out.append(f'unknown field "{here}"')
    for rule in schema.get("x-kubernetes-validations", ()):
        if not _CEL[rule["rule"]](value):
            out.append(f'{path}: Invalid value: "object": {rule["message"]}')


def _check_array(schema: dict[str, Any], value: list[Any], path: str, out: list[str]) -> None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        least = schema["minItems"]
        out.append(f"{path}: Invalid value: {len(value)}: {path} in body should have at least {least} items")
    items = schema.get("items")
    if items is not None:
        for i, item in enumerate(value):
            _check(items, item, _join(path, i), out)
    kind = schema.get("x-kubernetes-list-type")
    seen: set[str] = set()
    for i, item in enumerate(value):
        if kind == "map" and isinstance(item, dict):
            key = json.dumps({k: item.get(k) for k in schema["x-kubernetes-list-map-keys"]}, sort_keys=True)
        elif kind == "set":
            key = json.dumps(item, sort_keys=True)
        else:
            continue
        if key in seen:
            out.append(f"{_join(path, i)}: Duplicate value: {key}")
        seen.add(key)
