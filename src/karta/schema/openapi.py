"""Looking object paths up in a custom resource's OpenAPI v3 schema (a structural schema).

:func:`resolve` follows a path (:data:`karta.schema.paths.Path`) step by step from the
``openAPIV3Schema`` and ends in one :class:`Outcome`: ``found`` (the schema of the value there),
``missing`` (a field the schema does not have, with a close name when there is one), ``mismatch``
(a step the schema's type rules out: a field of a list or of a string, an index of an object, an
iteration over something that is neither a list nor a map) or ``stopped`` (the schema does not say
what is there: ``x-kubernetes-preserve-unknown-fields``, ``additionalProperties: true``, no type,
a computed key of an object with fixed fields). ``stopped`` is never a pass: the check reports it
as a note.

The API server's own rules fill in what a CRD schema leaves out: the root's (and every
``x-kubernetes-embedded-resource``'s) ``apiVersion``, ``kind`` and ``metadata``, whose fields are
ObjectMeta's (:data:`OBJECT_META`). Schema paths are written from the CRD's root
(``spec.versions[v1].schema.openAPIV3Schema.properties.spec.properties.replicas``) so that a user
can find them in the file. The schema is hostile input: a part of the wrong type counts as absent,
and the walk is linear in the path's length.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Literal

from karta.schema.paths import Path, Step

__all__ = ["OBJECT_META", "Outcome", "json_type", "resolve", "type_name"]

_STRING: dict[str, Any] = {"type": "string"}
_STRING_MAP: dict[str, Any] = {"type": "object", "additionalProperties": _STRING}
_BOOLEAN: dict[str, Any] = {"type": "boolean"}


def _objects(**fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "object", "properties": fields}}


_OWNER_REFERENCES = _objects(
    apiVersion=_STRING,
    kind=_STRING,
    name=_STRING,
    uid=_STRING,
    controller=_BOOLEAN,
    blockOwnerDeletion=_BOOLEAN,
)
_MANAGED_FIELDS = _objects(
    manager=_STRING,
    operation=_STRING,
    apiVersion=_STRING,
    time=_STRING,
    fieldsType=_STRING,
    fieldsV1={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    subresource=_STRING,
)

#: ObjectMeta as the API server keeps it (k8s.io/apimachinery meta/v1 ObjectMeta's JSON fields).
OBJECT_META: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": _STRING,
        "generateName": _STRING,
        "namespace": _STRING,
        "selfLink": _STRING,
        "uid": _STRING,
        "resourceVersion": _STRING,
        "generation": {"type": "integer"},
        "creationTimestamp": _STRING,
        "deletionTimestamp": _STRING,
        "deletionGracePeriodSeconds": {"type": "integer"},
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
        "ownerReferences": _OWNER_REFERENCES,
        "finalizers": {"type": "array", "items": _STRING},
        "managedFields": _MANAGED_FIELDS,
    },
}
_RESOURCE_FIELDS: dict[str, dict[str, Any]] = {
    "apiVersion": _STRING,
    "kind": _STRING,
    "metadata": OBJECT_META,
}
_SCALARS = ("string", "integer", "number", "boolean")
_MAX_SUGGESTED = 10_000  # property names compared for "did you mean" (a hostile schema may have more)


@dataclass(frozen=True)
class Outcome:
    """Where a path ends in the schema; ``at`` is how many steps were followed (the failing step
    is ``path[at]`` for ``missing``, ``mismatch`` and ``stopped``)."""

    kind: Literal["found", "missing", "mismatch", "stopped"]
    where: str  # the schema path of the last schema reached
    at: int
    schema: dict[str, Any] | None = None  # for found
    reason: str = ""  # for missing, mismatch and stopped


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _props(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def type_name(schema: dict[str, Any]) -> str:
    """The schema's JSON type (``int-or-string`` for ``x-kubernetes-int-or-string``), or ``""``."""
    if schema.get("x-kubernetes-int-or-string") is True:
        return "int-or-string"
    t = schema.get("type")
    if isinstance(t, str):
        return t if t in (*_SCALARS, "object", "array") else ""
    if _props(schema) or isinstance(schema.get("additionalProperties"), dict):
        return "object"
    return ""


def json_type(value: Any) -> str:
    """The OpenAPI type name of a JSON value (``integer`` for integral numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _preserves(schema: dict[str, Any]) -> bool:
    return schema.get("x-kubernetes-preserve-unknown-fields") is True


def _field(
    schema: dict[str, Any], where: str, name: str, *, resource: bool
) -> tuple[dict[str, Any], str] | str:
    """The schema of field ``name`` (and its path), or why there is none (``missing:``,
    ``mismatch:`` or ``stopped:`` and a reason)."""
    props = _props(schema)
    implicit = resource or schema.get("x-kubernetes-embedded-resource") is True
    if implicit and name == "metadata":
        given = _dict(props.get("metadata"))
        if given is not None and _props(given):  # a CRD that spells ObjectMeta out
            return given, f"{where}.properties.metadata"
        return OBJECT_META, f"{where}.properties.metadata (ObjectMeta)"
    sub = _dict(props.get(name))
    if sub is not None:
        return sub, f"{where}.properties.{name}"
    if implicit and name in _RESOURCE_FIELDS:
        return _RESOURCE_FIELDS[name], f"{where}.properties.{name}"
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return extra, f"{where}.additionalProperties"
    if extra is True or _preserves(schema):
        return (
            "stopped:x-kubernetes-preserve-unknown-fields"
            if _preserves(schema)
            else "stopped:additionalProperties: true"
        )
    kind = type_name(schema)
    if kind == "object":
        names = [k for k in list(props)[:_MAX_SUGGESTED] if isinstance(k, str) and len(k) <= 253]
        close = difflib.get_close_matches(name[:253], names, n=1, cutoff=0.6)
        hint = f"; did you mean {_shown(close[0])}?" if close else ""
        if not props:
            return "missing:it declares no fields (the API server drops every field under it)"
        return f"missing:it has no field {_shown(name)}{hint}"
    if kind in (*_SCALARS, "int-or-string", "array"):
        return f"mismatch:it is {_a(kind)}, which has no fields"
    return "stopped:the schema does not say what it holds (no type)"


def _shown(name: str) -> str:
    """A field name for a message: quoted, printable, at most 80 characters."""
    return repr(name[:80]) + ("..." if len(name) > 80 else "")


def _a(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def _step(
    schema: dict[str, Any], where: str, step: Step, *, resource: bool
) -> tuple[dict[str, Any], str] | str:
    if step.kind == "field":
        return _field(schema, where, step.name, resource=resource)
    kind = type_name(schema)
    items = _dict(schema.get("items"))
    extra = schema.get("additionalProperties")
    if kind == "array":
        if items is None:
            return "stopped:the list's items have no schema"
        return items, f"{where}.items"
    if step.kind == "index":
        if kind in ("object", *_SCALARS, "int-or-string"):
            return f"mismatch:it is {_a(kind)}, not a list: an index is an error"
        return "stopped:the schema does not say what it holds (no type)"
    if isinstance(extra, dict) and not _props(schema):
        return extra, f"{where}.additionalProperties"
    if step.kind == "key":
        if isinstance(extra, dict):
            return extra, f"{where}.additionalProperties"
        return "stopped:a computed key is not checked against fixed fields"
    if step.kind == "entry" and kind == "object" and _props(schema):
        return "stopped:the values of an object's fixed fields (to_entries) are not checked one by one"
    # each
    if kind == "object" and _props(schema):
        return "mismatch:it is an object with fixed fields, not a list or a map (its values are unrelated)"
    if _preserves(schema) or extra is True:
        return (
            "stopped:x-kubernetes-preserve-unknown-fields"
            if _preserves(schema)
            else "stopped:additionalProperties: true"
        )
    if kind in (*_SCALARS, "int-or-string"):
        return f"mismatch:it is {_a(kind)}, not a list or a map: iterating it is an error"
    if kind == "object":
        return "missing:it declares no fields (the API server drops every field under it)"
    return "stopped:the schema does not say what it holds (no type)"


def resolve(root: dict[str, Any], path: Path, *, where: str) -> Outcome:
    """Follow ``path`` from the resource's ``openAPIV3Schema`` ``root`` (at schema path ``where``)."""
    schema, here = root, where
    for i, step in enumerate(path):
        nxt = _step(schema, here, step, resource=i == 0)
        if isinstance(nxt, str):
            kind, _, reason = nxt.partition(":")
            return Outcome(kind, here, i, reason=reason)  # type: ignore[arg-type]
        schema, here = nxt
    return Outcome("found", here, len(path), schema=schema)
