"""Smallest objects a kind admits, and their variants, for tests/catalog/test_minimal_objects.py.

For a kind whose CRD is in the corpus (``crds/*.yaml``), the minimal object is generated from the
served version's OpenAPI v3 schema: apiVersion, kind, metadata {name, namespace} and, recursively,
only the ``required`` properties, each with the smallest valid value (see :func:`minimal_value`).

Variants then vary one optional list or map at a time, absent, empty ([] or {}) and null: every
optional array/object property of ``spec`` (and ``spec`` itself when the schema does not require it),
and, below those, every optional array/object property whose name the definition's jq expressions
mention (embedded pod templates and pod specs included). To reach a nested one its optional
ancestors are materialised with their own minimal value (``=minimal``: an array with one minimal
element, a map with one entry per key the jq paths read it by, or ``a``); a required list or map
that is empty in the minimal object is filled the same way (``=one``, ``=keys``), and a map with
several keys also appears with each key alone (``=only``). Required embedded pod templates and pod
specs get one container (:data:`CONTAINER`).

Kinds whose CRD is not in the corpus (and the built-in kinds) use hand-written minimal objects and
hand-written variant lists (:data:`HANDWRITTEN`), written from the kinds' API types.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from catalog_view import CORPUS, crd_files

from karta.catalog import CATALOG_DATA_DIR
from karta.model import Karta

CRDS = CORPUS / "crds"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

NAME = "minimal"
NAMESPACE = "default"
# The smallest container the API server admits (name and image; image is optional for the API but
# not for any kubelet); used wherever a schema requires an embedded pod template or pod spec.
CONTAINER: dict[str, Any] = {"name": "c", "image": "i"}
_MAX_DEPTH = 16


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Variant:
    name: str
    obj: dict[str, Any]


# --------------------------------------------------------------------------------------------------
# CRD lookup


@functools.cache
def _crd_index(group: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(kind, served version) -> openAPIV3Schema over the corpus CRDs of one API group (files are
    named ``<group>_<plural>[.<variant>].yaml``; only those are read, the corpus is 17 MB)."""
    index: dict[tuple[str, str], dict[str, Any]] = {}
    for path in crd_files(f"{group}_*.yaml"):
        with path.open("rb") as handle:
            for doc in yaml.load_all(handle, Loader=_Loader):
                if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                    continue
                spec = doc["spec"]
                if spec.get("group") != group:
                    continue
                for version in spec.get("versions") or []:
                    schema = (version.get("schema") or {}).get("openAPIV3Schema")
                    if version.get("served") and schema:
                        index[(spec["names"]["kind"], version["name"])] = schema
    return index


def crd_schema(group: str, kind: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 schema of a served version of a corpus CRD, or None."""
    return _crd_index(group).get((kind, version)) if group else None


# --------------------------------------------------------------------------------------------------
# Schema helpers


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    return schema.get("properties") or {}


def _is_object(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" or "properties" in schema or "additionalProperties" in schema


def _is_array(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "array"


def _is_map(schema: dict[str, Any]) -> bool:
    """An object keyed by free names (additionalProperties with a schema, no fixed properties)."""
    extra = schema.get("additionalProperties")
    return _is_object(schema) and not _properties(schema) and isinstance(extra, dict)


def is_pod_spec(schema: dict[str, Any]) -> bool:
    containers = _properties(schema).get("containers")
    return containers is not None and _is_array(containers)


def is_pod_template(schema: dict[str, Any]) -> bool:
    spec = _properties(schema).get("spec")
    return spec is not None and is_pod_spec(spec)


_STRING_CANDIDATES = ("a", "1", "a1", "a-b", "a.b", "1Gi", "0", "A", "a/b", "aa", "1s", "1m")
_FORMATS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "duration": "1s",
    "int-or-string": "1",
    "uri": "http://a",
}


def _string(schema: dict[str, Any]) -> str:
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    if schema.get("format") in _FORMATS:
        return _FORMATS[schema["format"]]
    candidates = ["a" * max(low, 1), *_STRING_CANDIDATES]
    pattern = schema.get("pattern")
    for candidate in candidates:
        if len(candidate) < low or (high is not None and len(candidate) > int(high)):
            continue
        try:
            if pattern is None or re.search(pattern, candidate):
                return candidate
        except re.error:  # an ECMA construct Python does not read: take the plain value
            return candidate
    return candidates[0]


def _number(schema: dict[str, Any]) -> int | float:
    value: int | float = 1
    if "minimum" in schema:
        value = schema["minimum"]
        if schema.get("exclusiveMinimum") is True:
            value += 1
    if "maximum" in schema and value > schema["maximum"]:
        value = schema["maximum"] - (1 if schema.get("exclusiveMaximum") is True else 0)
    return int(value) if schema.get("type") == "integer" else value


def minimal_value(schema: dict[str, Any], depth: int = 0) -> Any:
    """The smallest value the schema admits, filling only required properties."""
    if schema.get("enum"):
        return copy.deepcopy(schema["enum"][0])
    if schema.get("x-kubernetes-int-or-string"):
        return 1
    kind = schema.get("type")
    if kind == "string":
        return _string(schema)
    if kind in ("integer", "number"):
        return _number(schema)
    if kind == "boolean":
        return False
    if kind == "array":
        items = schema.get("items") or {}
        return [minimal_value(items, depth + 1) for _ in range(int(schema.get("minItems", 0)))]
    if is_pod_template(schema):
        return _required_pod_template(schema, depth)
    if _is_object(schema) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return _minimal_object(schema, depth)
    return {}


def _minimal_object(schema: dict[str, Any], depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH:
        return {}
    props = _properties(schema)
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        if name in props:
            out[name] = minimal_value(props[name], depth + 1)
        elif schema.get("x-kubernetes-preserve-unknown-fields"):
            out[name] = {}
    if is_pod_spec(schema):
        out["containers"] = [dict(CONTAINER)]
    return out


def _required_pod_template(schema: dict[str, Any], depth: int) -> dict[str, Any]:
    value = _minimal_object(schema, depth)
    value["spec"] = {
        **_minimal_object(_properties(schema)["spec"], depth + 1),
        "containers": [dict(CONTAINER)],
    }
    return value


def _present_value(schema: dict[str, Any], depth: int = 0, keys: tuple[str, ...] = ("a",)) -> Any:
    """The smallest value of a property that is set: an array gets one element, a map one entry
    per key of ``keys``."""
    if _is_array(schema):
        return [_present_value(schema.get("items") or {}, depth + 1)]
    if _is_map(schema):
        return {key: _present_value(schema["additionalProperties"], depth + 1) for key in keys}
    return minimal_value(schema, depth)


def minimal_object(schema: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": NAME, "namespace": NAMESPACE},
    }
    props = _properties(schema)
    for name in schema.get("required") or []:
        if name not in obj and name in props:
            obj[name] = minimal_value(props[name])
    return obj


# --------------------------------------------------------------------------------------------------
# Variants


_NAME_RE = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*"([^"]+)"\s*\]')


@dataclass(frozen=True)
class JqNames:
    """The field names a definition's jq expressions mention, and for each name the names written
    right after it (``.spec.pytorchReplicaSpecs.Master`` gives pytorchReplicaSpecs -> {Master}):
    the keys a map is read by."""

    names: frozenset[str]
    followers: dict[str, frozenset[str]]

    def keys_of(self, prop: str) -> list[str]:
        return sorted(self.followers.get(prop, ())) or ["a"]


def jq_names(karta: Karta) -> JqNames:
    """The names of every jq expression (and path) of the definition's spec."""
    names: set[str] = set()
    followers: dict[str, set[str]] = {}

    def walk(value: Any) -> None:
        if isinstance(value, str):
            previous: re.Match[str] | None = None
            for match in _NAME_RE.finditer(value):
                name = match.group(1) or match.group(2)
                names.add(name)
                if previous is not None and previous.end() == match.start():
                    followers.setdefault(previous.group(1) or previous.group(2), set()).add(name)
                previous = match
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    with (CATALOG_DATA_DIR / f"{karta.name}.yaml").open("rb") as handle:
        walk(yaml.load(handle, Loader=_Loader).get("spec"))
    return JqNames(frozenset(names), {k: frozenset(v) for k, v in followers.items()})


Path_ = tuple[str | int, ...]


def _get(obj: Any, path: Path_) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _with(obj: dict[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    parent = _get(out, path[:-1])
    if value is ABSENT:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = copy.deepcopy(value)
    return out


def _label(path: Path_) -> str:
    return ".".join("[]" if isinstance(k, int) else str(k) for k in path).replace(".[]", "[]")


def _empty(schema: dict[str, Any]) -> Any:
    return [] if _is_array(schema) else {}


def _is_container(schema: dict[str, Any]) -> bool:
    return _is_array(schema) or _is_object(schema) or bool(schema.get("x-kubernetes-preserve-unknown-fields"))


def schema_variants(schema: dict[str, Any], base: dict[str, Any], jq: JqNames) -> list[Variant]:
    """The minimal object, then each optional list/map (see the module docstring) absent, empty, null."""
    out: dict[str, Variant] = {NAME: Variant(NAME, base)}
    names = jq.names

    def add(name: str, obj: dict[str, Any]) -> None:
        if name not in out and all(v.obj != obj for v in out.values()):
            out[name] = Variant(name, obj)

    def walk(node: dict[str, Any], path: Path_, obj: dict[str, Any], depth: int) -> None:
        """``node`` is the schema of the object at ``path``, which exists in ``obj``."""
        if depth > _MAX_DEPTH:
            return
        here = _get(obj, path)
        if _is_map(node):
            for key in here if isinstance(here, dict) else []:
                walk(node["additionalProperties"], (*path, key), obj, depth + 1)
            return
        required = set(node.get("required") or [])
        for prop, sub in _properties(node).items():
            if not _is_container(sub) or (not path and prop != "spec"):
                continue
            top = path == ("spec",) or not path
            if prop not in names and not top:
                continue
            target = (*path, prop)
            if prop not in required:
                for label, value in (("absent", ABSENT), ("empty", _empty(sub)), ("null", None)):
                    add(f"{_label(target)}={label}", _with(obj, target, value))
                if prop not in names and path:
                    continue
                present = _with(obj, target, _present_value(sub, depth + 1, tuple(jq.keys_of(prop))))
                add(f"{_label(target)}=minimal", present)
            elif isinstance(here.get(prop), list) and not here[prop]:
                present = _with(obj, target, [_present_value(sub.get("items") or {}, depth + 1)])
                add(f"{_label(target)}=one", present)
            elif isinstance(here.get(prop), dict) and not here[prop] and _is_map(sub):
                present = _with(obj, target, _present_value(sub, depth + 1, tuple(jq.keys_of(prop))))
                add(f"{_label(target)}=keys", present)
            else:
                present = obj
            value = _get(present, target)
            if _is_map(sub) and isinstance(value, dict) and len(value) > 1:
                for key in value:  # each key alone (a PyTorchJob with a Master and no Worker)
                    add(f"{_label((*target, key))}=only", _with(present, target, {key: value[key]}))
            if isinstance(value, list) and value:
                walk(sub.get("items") or {}, (*target, 0), present, depth + 1)
            elif isinstance(value, dict):
                walk(sub, target, present, depth + 1)

    walk(schema, (), base, 0)
    return list(out.values())


def handwritten_variants(base: dict[str, Any], points: list[tuple[Path_, Any]]) -> list[Variant]:
    """The minimal object, then each listed optional list/map absent, empty and null."""
    out = [Variant(NAME, base)]
    for path, present in points:
        parent = copy.deepcopy(base)
        node: Any = parent
        for key in path[:-1]:  # materialise the ancestors the point needs
            if isinstance(node, dict) and not isinstance(node.get(key), dict | list):
                node[key] = {}
            node = node[key]
        empty: Any = [] if isinstance(present, list) else {}
        for label, value in (("absent", ABSENT), ("empty", empty), ("null", None), ("present", present)):
            obj = _with(parent, path, value)
            if all(v.obj != obj for v in out):
                out.append(Variant(f"{_label(path)}={label}", obj))
    return out


# --------------------------------------------------------------------------------------------------
# Hand-written minimal objects


def _meta(api_version: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        **fields,
    }


def _template() -> dict[str, Any]:
    return {"spec": {"containers": [dict(CONTAINER)]}}


_SELECTOR = {"matchLabels": {"app": "a"}}
_LABELLED = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [dict(CONTAINER)]}}
_POD_LISTS: list[tuple[Path_, Any]] = [
    (("spec", "template", "spec", "initContainers"), [dict(CONTAINER, name="init")]),
    (("spec", "template", "metadata"), {"labels": {"app": "a"}}),
]
_REPLICA = {"replicas": 1, "template": _template()}


def _training(
    api_version: str, kind: str, field: str, types: tuple[str, ...]
) -> tuple[dict[str, Any], list[Any]]:
    """Kubeflow training-operator v1 kinds: ``spec.<field>`` (a map of replica type to ReplicaSpec,
    every ReplicaSpec field optional) is required; runPolicy is optional."""
    points: list[tuple[Path_, Any]] = [(("spec", field), {types[0]: dict(_REPLICA)})]
    for replica_type in types:
        points.append((("spec", field, replica_type), dict(_REPLICA)))
        points.append((("spec", field, replica_type, "template"), _template()))
    points.append((("spec", "runPolicy"), {"suspend": False}))
    return _meta(api_version, kind, spec={field: {}}), points


# definition name -> (minimal object, [(path of an optional list/map, a present value)], reason)
HANDWRITTEN: dict[str, tuple[dict[str, Any], list[tuple[Path_, Any]], str]] = {
    # Built-in kinds (k8s.io/api): the required fields of their API types.
    "core-pod-v1": (
        _meta("v1", "Pod", spec={"containers": [dict(CONTAINER)]}),
        [
            (("spec", "initContainers"), [dict(CONTAINER, name="init")]),
            (("metadata", "labels"), {"app": "a"}),
        ],
        "built-in kind (core/v1 Pod: spec.containers required)",
    ),
    "apps-deployment-v1": (
        _meta("apps/v1", "Deployment", spec={"selector": _SELECTOR, "template": _LABELLED}),
        [*_POD_LISTS, (("spec", "strategy"), {"type": "RollingUpdate"})],
        "built-in kind (apps/v1 Deployment: spec.selector and spec.template required)",
    ),
    "apps-replicaset-v1": (
        _meta("apps/v1", "ReplicaSet", spec={"selector": _SELECTOR, "template": _LABELLED}),
        list(_POD_LISTS),
        "built-in kind (apps/v1 ReplicaSet: spec.selector required, template needed for pods)",
    ),
    "apps-statefulset-v1": (
        _meta("apps/v1", "StatefulSet", spec={"selector": _SELECTOR, "template": _LABELLED}),
        [*_POD_LISTS, (("spec", "volumeClaimTemplates"), [{"metadata": {"name": "v"}}])],
        "built-in kind (apps/v1 StatefulSet: spec.selector and spec.template required)",
    ),
    "apps-daemonset-v1": (
        _meta("apps/v1", "DaemonSet", spec={"selector": _SELECTOR, "template": _LABELLED}),
        [*_POD_LISTS, (("spec", "updateStrategy"), {"type": "OnDelete"})],
        "built-in kind (apps/v1 DaemonSet: spec.selector and spec.template required)",
    ),
    "batch-job-v1": (
        _meta(
            "batch/v1",
            "Job",
            spec={"template": {"spec": {"containers": [dict(CONTAINER)], "restartPolicy": "Never"}}},
        ),
        [
            (("spec", "template", "spec", "initContainers"), [dict(CONTAINER, name="init")]),
            (("spec", "selector"), _SELECTOR),
        ],
        "built-in kind (batch/v1 Job: spec.template with restartPolicy Never/OnFailure required)",
    ),
    "batch-cronjob-v1": (
        _meta(
            "batch/v1",
            "CronJob",
            spec={
                "schedule": "* * * * *",
                "jobTemplate": {
                    "spec": {
                        "template": {"spec": {"containers": [dict(CONTAINER)], "restartPolicy": "Never"}}
                    }
                },
            },
        ),
        [(("spec", "jobTemplate", "metadata"), {"labels": {"app": "a"}})],
        "built-in kind (batch/v1 CronJob: spec.schedule and spec.jobTemplate required)",
    ),
    # CRDs the corpus does not hold: the required fields of each project's Go API types.
    "agents-x-k8s-io-sandbox-v1beta1": (
        _meta("agents.x-k8s.io/v1beta1", "Sandbox", spec={"podTemplate": _template()}),
        [
            (("spec", "podTemplate", "metadata"), {"labels": {"app": "a"}}),
            (("spec", "volumeClaimTemplates"), [{"metadata": {"name": "v"}}]),
        ],
        "CRD not in the corpus (kubernetes-sigs/agent-sandbox: spec.podTemplate required)",
    ),
    "kubeflow-org-jaxjob-v1": (
        *_training("kubeflow.org/v1", "JAXJob", "jaxReplicaSpecs", ("Worker",)),
        "CRD not in the corpus (kubeflow/trainer v1.9 JAXJob: spec.jaxReplicaSpecs required)",
    ),
    "kubeflow-org-paddlejob-v1": (
        *_training("kubeflow.org/v1", "PaddleJob", "paddleReplicaSpecs", ("Master", "Worker")),
        "CRD not in the corpus (kubeflow/trainer v1.9 PaddleJob: spec.paddleReplicaSpecs required)",
    ),
    "kubeflow-org-xgboostjob-v1": (
        *_training("kubeflow.org/v1", "XGBoostJob", "xgbReplicaSpecs", ("Master", "Worker")),
        "CRD not in the corpus (kubeflow/trainer v1.9 XGBoostJob: spec.xgbReplicaSpecs required)",
    ),
    "kubeflow-org-notebook-v1": (
        _meta("kubeflow.org/v1", "Notebook", spec={"template": _template()}),
        [
            (("spec", "template", "metadata"), {"labels": {"app": "a"}}),
            (("metadata", "annotations"), {"a": "b"}),
        ],
        "CRD not in the corpus (kubeflow/kubeflow notebook-controller: spec.template.spec required)",
    ),
    "kubeflow-org-notebook-v1beta1": (
        _meta("kubeflow.org/v1beta1", "Notebook", spec={"template": _template()}),
        [
            (("spec", "template", "metadata"), {"labels": {"app": "a"}}),
            (("metadata", "annotations"), {"a": "b"}),
        ],
        "CRD not in the corpus (kubeflow/kubeflow notebook-controller: spec.template.spec required)",
    ),
}


# Definitions whose corpus CRD leaves a part the definition reads without a schema: extra
# hand-written points varied on top of the generated minimal object, with the reason.
EXTRA_POINTS: dict[str, tuple[list[tuple[Path_, Any]], str]] = {
    "argoproj-io-workflow-v1alpha1": (
        [
            (("spec", "templates"), [{"name": "a", "container": dict(CONTAINER)}]),
            (("spec", "arguments"), {"parameters": []}),
        ],
        "Argo ships a minimal CRD: spec is x-kubernetes-preserve-unknown-fields without properties",
    ),
}


def variants_for(karta: Karta) -> Iterator[Variant]:
    assert karta.root_gvk is not None
    gvk = karta.root_gvk
    api_version = f"{gvk.group}/{gvk.version}" if gvk.group else gvk.version
    if karta.name in HANDWRITTEN:
        base, points, _ = HANDWRITTEN[karta.name]
        yield from handwritten_variants(base, points)
        return
    schema = crd_schema(gvk.group, gvk.kind, gvk.version)
    if schema is None:
        raise LookupError(f"no CRD for {gvk} in {CRDS} and no hand-written minimal object for {karta.name}")
    base = minimal_object(schema, api_version, gvk.kind)
    variants = schema_variants(schema, base, jq_names(karta))
    points, _ = EXTRA_POINTS.get(karta.name, ([], ""))
    for extra in handwritten_variants(base, points)[1:]:
        if all(v.obj != extra.obj for v in variants):
            variants.append(extra)
    yield from variants
