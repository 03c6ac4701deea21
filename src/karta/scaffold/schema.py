"""Reading a custom resource's OpenAPI schema for what a Karta needs.

Finds, under ``spec``: PodTemplateSpec-shaped fields (an object with ``metadata`` and a ``spec``
holding ``containers``), PodSpec-shaped fields (``containers``: an array of objects with ``name``
and ``image``), the maps and arrays of objects that hold them (one instance per entry), the
replica-like integers next to them, and ``suspend`` booleans. Under ``status``: a ``conditions``
array of ``{type, status}`` objects and phase-like strings (``phase``, ``state``, ``...Phase``,
``...State``, ``...Status``) with their enum values. Pure: plain dicts in, dataclasses out.

The schema is hostile input: anything that is not the expected shape (a non-dict property, a
non-list ``enum`` or ``required``, a property name that is not text, or not valid Unicode) is
skipped, and the walk is linear in the schema's size: each enclosing object's replica-like
integers are read once, and a pod field keeps only the few it can name (:class:`Replicas`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from karta.scaffold.jqtext import jq_path

__all__ = [
    "REPLICA_NAMES",
    "PhaseField",
    "PodField",
    "ReplicaField",
    "Replicas",
    "SchemaAnalysis",
    "Segment",
    "analyse_schema",
]

_MAX_DEPTH = 40

# Replica-like integer names, most telling first (compared case-insensitively).
REPLICA_NAMES: tuple[str, ...] = (
    "replicas",
    "numReplicas",
    "numWorkers",
    "workers",
    "workerReplicas",
    "numNodes",
    "nodes",
    "parallelism",
    "instances",
    "numInstances",
    "numOfHosts",
    "size",
    "count",
)
_MIN_NAMES = ("minReplicas", "minAvailable", "minMember", "minSize")
_MAX_NAMES = ("maxReplicas", "maxSize")
_RANK = {n.lower(): i for i, n in enumerate(REPLICA_NAMES)}
_MIN_LOWER = frozenset(n.lower() for n in _MIN_NAMES)
_MAX_LOWER = frozenset(n.lower() for n in _MAX_NAMES)
_KEEP = 6  # pod-count candidates a pod field keeps: the one chosen and the others a TODO names

_PHASE_NAME = re.compile(r"^(phase|state)$|(Phase|State|Status)$")


@dataclass(frozen=True)
class Segment:
    """One step of a field path: the field ``name``, then optionally iterate its entries.

    ``iterate`` is ``"map"`` (an object of entries, instance id = key) or ``"array"`` (instance id
    = the entry's ``id_field``, else its index).
    """

    name: str
    iterate: Literal["map", "array"] | None = None
    id_field: str | None = None


@dataclass(frozen=True)
class ReplicaField:
    """A replica-like integer near a pod field; ``role`` is replicas, min or max."""

    segments: tuple[Segment, ...]
    role: Literal["replicas", "min", "max"]

    @property
    def name(self) -> str:
        return self.segments[-1].name


@dataclass(frozen=True)
class Replicas:
    """The replica-like integers of the objects enclosing a pod field, within one instance.

    ``counts``: pod-count candidates, best first (REPLICA_NAMES priority, then the nearest, then
    schema order), at most a few; ``total``: how many there are in all. ``minimum`` and
    ``maximum``: the nearest min- and max-like integers.
    """

    counts: tuple[ReplicaField, ...] = ()
    total: int = 0
    minimum: ReplicaField | None = None
    maximum: ReplicaField | None = None


@dataclass(frozen=True)
class PodField:
    """A PodTemplateSpec- or PodSpec-shaped field under ``.spec`` and what surrounds it."""

    segments: tuple[Segment, ...]  # from the resource root, starting with "spec"
    style: Literal["template", "podSpec"]
    replicas: Replicas
    metadata: tuple[Segment, ...] | None = None  # a sibling ObjectMeta of a PodSpec, if any

    @property
    def levels(self) -> tuple[Segment, ...]:
        """The segments that iterate (maps and arrays), outermost first."""
        return tuple(s for s in self.segments if s.iterate)

    @property
    def display(self) -> str:
        return jq_path(self.segments)


@dataclass(frozen=True)
class PhaseField:
    """A phase-like string under ``.status`` and its enum values (empty when not enumerated)."""

    segments: tuple[Segment, ...]
    values: tuple[str, ...]


@dataclass
class SchemaAnalysis:
    """Everything :func:`analyse_schema` found; lists are in schema (property) order."""

    pod_fields: list[PodField] = field(default_factory=list)
    suspend: tuple[Segment, ...] | None = None
    conditions: tuple[Segment, ...] | None = None
    phases: list[PhaseField] = field(default_factory=list)
    has_spec_schema: bool = False
    has_status_schema: bool = False


# --- shape tests ----------------------------------------------------------------------------------


def _props(schema: Any) -> dict[Any, Any]:
    if not isinstance(schema, dict):
        return {}
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _is_name(name: Any) -> bool:
    """Text a real object can hold as a key: a ``str`` (not YAML's ``1:``) without lone surrogates."""
    if not isinstance(name, str):
        return False
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _named(props: dict[Any, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The properties whose name is text and whose schema is an object, in schema order."""
    for name, sub in props.items():
        if isinstance(sub, dict) and _is_name(name):
            yield name, sub


def _type(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return None
    t = schema.get("type")
    if isinstance(t, str):
        return t
    if _props(schema):
        return "object"
    return None


def _object_items(schema: dict[str, Any]) -> dict[str, Any] | None:
    items = schema.get("items")
    if _type(schema) == "array" and isinstance(items, dict) and _props(items):
        return items
    return None


def _map_values(schema: dict[str, Any]) -> dict[str, Any] | None:
    values = schema.get("additionalProperties")
    if _type(schema) == "object" and isinstance(values, dict) and _props(values):
        return values
    return None


def is_pod_spec(schema: Any) -> bool:
    """A ``containers`` array whose items have ``name`` and ``image``."""
    containers = _props(schema).get("containers")
    if not isinstance(containers, dict):
        return False
    items = _object_items(containers)
    return items is not None and "name" in _props(items) and "image" in _props(items)


def is_pod_template(schema: Any) -> bool:
    """``metadata`` plus a PodSpec-shaped ``spec``."""
    props = _props(schema)
    return "metadata" in props and is_pod_spec(props.get("spec"))


def _id_field(items: dict[str, Any]) -> str | None:
    strings = [n for n, p in _named(_props(items)) if _type(p) == "string"]
    if "name" in strings:
        return "name"
    required = items.get("required")
    known = set(strings)
    first = [n for n in required if isinstance(n, str) and n in known] if isinstance(required, list) else []
    named = [n for n in [*first, *strings] if n.lower().endswith("name")]
    return named[0] if named else None


def _enum(schema: dict[str, Any]) -> tuple[str, ...]:
    values = schema.get("enum")
    if not isinstance(values, list):
        return ()
    return tuple(v for v in values if _is_name(v))


# --- the walk -------------------------------------------------------------------------------------


_FrameReplicas = tuple[list[tuple[int, ReplicaField]], int, ReplicaField | None, ReplicaField | None]


@dataclass
class _Frame:
    """An object enclosing a pod field, with its replica-like integers (read once, when asked)."""

    segments: tuple[Segment, ...]
    schema: dict[str, Any]
    _near: _FrameReplicas | None = None

    def replicas(self) -> _FrameReplicas:
        """The best pod-count candidates (with their rank), how many in all, the first min and max."""
        if self._near is None:
            counts: list[tuple[int, ReplicaField]] = []
            minimum = maximum = None
            for name, prop in _named(_props(self.schema)):
                if _type(prop) != "integer":
                    continue
                lower = name.lower()
                if lower in _MIN_LOWER:
                    minimum = minimum or ReplicaField((*self.segments, Segment(name)), "min")
                elif lower in _MAX_LOWER:
                    maximum = maximum or ReplicaField((*self.segments, Segment(name)), "max")
                elif lower in _RANK:
                    counts.append((_RANK[lower], ReplicaField((*self.segments, Segment(name)), "replicas")))
            total = len(counts)
            counts.sort(key=lambda c: c[0])  # stable: schema order among equal names
            self._near = (counts[:_KEEP], total, minimum, maximum)
        return self._near


def _replicas_near(frames: list[_Frame]) -> Replicas:
    """Replica-like integers of the enclosing objects (innermost first) within one instance."""
    found: list[tuple[int, int, ReplicaField]] = []
    total = 0
    minimum = maximum = None
    for depth, frame in enumerate(reversed(frames)):
        counts, count, low, high = frame.replicas()
        found.extend((rank, depth, r) for rank, r in counts)
        total += count
        minimum = minimum or low
        maximum = maximum or high
    found.sort(key=lambda t: (t[0], t[1]))
    return Replicas(tuple(r for _, _, r in found[:_KEEP]), total, minimum, maximum)


def _walk(
    schema: dict[str, Any],
    segments: tuple[Segment, ...],
    frames: list[_Frame],
    out: SchemaAnalysis,
    depth: int,
) -> None:
    if depth > _MAX_DEPTH:
        return
    frames = [*frames, _Frame(segments, schema)]
    near: Replicas | None = None  # shared by the pod fields of this object
    props = _props(schema)
    for name, sub in _named(props):
        here = (*segments, Segment(name))
        if is_pod_template(sub):
            near = near or _replicas_near(frames)
            out.pod_fields.append(PodField(here, "template", near))
            continue
        if is_pod_spec(sub):
            meta = props.get("metadata") if name != "metadata" else None
            metadata = (*segments, Segment("metadata")) if _type(meta) == "object" and _props(meta) else None
            near = near or _replicas_near(frames)
            out.pod_fields.append(PodField(here, "podSpec", near, metadata))
            continue
        if name == "suspend" and _type(sub) == "boolean" and not any(s.iterate for s in here):
            if out.suspend is None or len(here) < len(out.suspend):
                out.suspend = here
            continue
        items = _object_items(sub)
        if items is not None:
            seg = Segment(name, "array", _id_field(items))
            _walk(items, (*segments, seg), [], out, depth + 1)
            continue
        values = _map_values(sub)
        if values is not None:
            _walk(values, (*segments, Segment(name, "map")), [], out, depth + 1)
            continue
        if _type(sub) == "object" and _props(sub):
            _walk(sub, here, frames, out, depth + 1)


def _status(schema: dict[str, Any], out: SchemaAnalysis) -> None:
    props = _props(schema)
    conditions = props.get("conditions")
    if isinstance(conditions, dict):
        items = _object_items(conditions)
        if items is not None and "type" in _props(items) and "status" in _props(items):
            out.conditions = (Segment("status"), Segment("conditions"))
    for name, sub in _named(props):
        phase_like = _PHASE_NAME.search(name) is not None
        if _type(sub) == "string" and phase_like:
            out.phases.append(PhaseField((Segment("status"), Segment(name)), _enum(sub)))
        elif phase_like and _type(sub) == "object" and not _map_values(sub):
            for inner, prop in _named(_props(sub)):
                if _type(prop) == "string" and _PHASE_NAME.search(inner):
                    where = (Segment("status"), Segment(name), Segment(inner))
                    out.phases.append(PhaseField(where, _enum(prop)))


def analyse_schema(schema: dict[str, Any]) -> SchemaAnalysis:
    """Walk a custom resource's ``openAPIV3Schema`` (the whole object, with ``spec`` and ``status``)."""
    out = SchemaAnalysis()
    props = _props(schema)
    spec = props.get("spec")
    if isinstance(spec, dict) and _props(spec):
        out.has_spec_schema = True
        if is_pod_spec(spec):  # the resource's spec is itself a pod spec
            out.pod_fields.append(PodField((Segment("spec"),), "podSpec", Replicas()))
        else:
            _walk(spec, (Segment("spec"),), [], out, 0)
    status = props.get("status")
    if isinstance(status, dict) and _props(status):
        out.has_status_schema = True
        _status(status, out)
    return out
