"""The wire schema as seen by the loader and the writer: field aliases, nesting, required fields.

:mod:`karta.model.types` declares the shapes; this module answers the questions the CRD schema
answers and the model classes do not: which camelCase keys exist at each level (for unknown-field
reporting, R17), which of them the CRD marks required, and which fields the writer always emits.
"""

from __future__ import annotations

import types as _pytypes
import typing

from karta._records import record
from karta.model import types as t
from karta.model.base import Model


@record(slots=True)
class WireField:
    """One field of a model as it appears on the wire."""

    name: str  # the Python attribute
    alias: str  # the camelCase key
    model: type[Model] | None  # the nested model, for an object or a list of objects
    is_list: bool  # a list (tuple) of ``model``
    optional: bool  # ``None`` is the "unset" value


def _unwrap(annotation: object) -> tuple[type[Model] | None, bool, bool]:
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, _pytypes.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        annotation = args[0] if len(args) == 1 else annotation
        origin = typing.get_origin(annotation)
    if origin is tuple:
        item = typing.get_args(annotation)[0]
        if isinstance(item, type) and issubclass(item, Model):
            return item, True, optional
        return None, True, optional
    if isinstance(annotation, type) and issubclass(annotation, Model):
        return annotation, False, optional
    return None, False, optional


_WIRE_FIELDS: dict[type[Model], dict[str, WireField]] = {}


def wire_fields(model: type[Model]) -> dict[str, WireField]:
    """The fields of ``model`` keyed by alias, in declaration order."""
    cached = _WIRE_FIELDS.get(model)
    if cached is not None:
        return cached
    out: dict[str, WireField] = {}
    for name, info in model.model_fields.items():
        alias = info.alias or name
        sub, is_list, optional = _unwrap(info.annotation)
        out[alias] = WireField(name=name, alias=alias, model=sub, is_list=is_list, optional=optional)
    _WIRE_FIELDS[model] = out
    return out


# Properties the CRD schema marks required (section 2.1), by model.
REQUIRED: dict[type[Model], tuple[str, ...]] = {
    t.KartaSpec: ("structureDefinition",),
    t.StructureDefinition: ("rootComponent",),
    t.ComponentDefinition: ("name",),
    t.GroupVersionKind: ("group", "version", "kind"),
    t.PhaseDefinition: ("path",),
    t.ConditionsDefinition: ("path",),
    t.StatusDefinition: ("statusMappings",),
    t.SuspendDefinition: ("suspendActions", "resumeActions"),
    t.SuspendAction: ("path", "value"),
    t.ComponentInstanceSelector: ("idPath",),
    t.ReplicaSelector: ("keyPath",),
    t.ExternalPods: ("matchLabelsExpression",),
    t.Reference: ("name", "gvk"),
    t.LookupReference: ("nameExpression",),
    t.ReferenceRequirement: ("key", "operator"),
    t.ConditionMatcher: ("type",),
    t.ExpressionMatcher: ("expression", "expectedResult"),
    t.PodGroup: ("name",),
    t.GangSplit: ("componentName", "by"),
    t.SubGroup: ("componentName",),
    t.AlphaPodGroup: ("name", "members"),
    t.PodGroupMember: ("componentName",),
    t.TopologyConstraint: ("topologyName", "requiredTopologyLevel", "preferredTopologyLevel"),
}

# Fields the writer emits even when they hold their default (besides the required ones).
ALWAYS_WRITTEN: dict[type[Model], tuple[str, ...]] = {
    t.Karta: ("apiVersion", "kind", "metadata", "spec"),
    t.KartaSpec: ("optimizationInstructions",),
    t.ConditionsDefinition: ("typeFieldName", "statusFieldName", "messageFieldName", "reasonFieldName"),
}

# Standard Kubernetes ObjectMeta keys: never reported as unknown under ``metadata``.
OBJECT_META_KEYS = frozenset(
    {
        "name",
        "namespace",
        "labels",
        "annotations",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "managedFields",
        "ownerReferences",
        "finalizers",
        "generateName",
        "selfLink",
        "deletionGracePeriodSeconds",
    }
)


def join_path(base: str, key: str | int) -> str:
    """Extend a JSON field path: ``a.b``, ``a[0]``, and ``a["odd key"]`` for keys that need quoting."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    if key.isascii() and key.isidentifier():  # the common case, and what the check below means for ASCII
        return f"{base}.{key}" if base else key
    if key and all(ch.isalnum() or ch == "_" for ch in key) and not key[0].isdigit():
        return f"{base}.{key}" if base else key
    quoted = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{base}["{quoted}"]'
