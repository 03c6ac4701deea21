"""A Karta definition checked against its CRD's OpenAPI schema, without any manifest.

:func:`check_definition` takes every object-side ``{jq}`` field of the definition (spec, scale,
status, suspend and instance-id paths: docs/spec/format.md#expression-inputs; pod-side selectors and gang
members are evaluated on Pods and left out), finds the object paths each one reads
(:func:`karta.schema.paths.analyse`) and looks each up in the schema of the definition's root
version (:func:`karta.schema.openapi.resolve`). Findings (errors):

- a field the schema does not have (``.spec.replicaSpecs``; with the close name when there is one);
- a step the schema's types rule out: a field of a list or of a string, an index of an object, an
  iteration over something that is neither a list nor a map;
- a result of the wrong shape for its field: a pod template path that is not PodTemplateSpec-shaped
  (``metadata`` and a ``spec`` with ``containers``), a pod spec path that is not PodSpec-shaped, a
  scale path that is not an integer or a string, a phase or instance-id path that is not a string, a
  conditions path that is not a list, a fragment of the wrong type, a suspend value of another type
  than the field it is written to;
- a CRD that does not serve the definition's version.

Notes (never a pass): where the schema stops saying what is there
(``x-kubernetes-preserve-unknown-fields``, ``additionalProperties: true``, no type), and what the
analysis cannot follow (a builtin without a ``flow``, ``..``, a computed result whose type is
unknown). Each finding names the definition's field (its location) and the schema path
(:attr:`SchemaFinding.schema_path`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from karta._records import record
from karta.errors import ConversionError, KartaError, ScaffoldError
from karta.extract.scale import to_replicas
from karta.model.findings import Finding, Severity
from karta.model.types import Karta
from karta.model.validate_expressions import jq_fields
from karta.model.validate_gang import GANG_PATH, SPLIT_SIZE_PATH, SPLIT_WHEN_PATH
from karta.model.validate_structure import action_lists
from karta.scaffold.crd import crd_version
from karta.scaffold.schema import is_pod_spec, is_pod_template
from karta.schema.openapi import Outcome, json_type, resolve, type_name
from karta.schema.paths import Analysis, Arr, Entry, Lit, Loc, Obj, Path, Unknown, Value, analyse, path_text

__all__ = ["SchemaCheck", "SchemaFinding", "check_definition", "crd_for", "crd_label"]

# What each object-side field must yield (by the field's name, the last part of its location).
_EXPECTS: dict[str, str] = {
    "podTemplateSpecPath": "template",
    "podSpecPath": "podSpec",
    "metadataPath": "object",
    "schedulerNamePath": "string",
    "labelsPath": "object",
    "annotationsPath": "object",
    "resourcesPath": "object",
    "resourceClaimsPath": "array",
    "podAffinityPath": "object",
    "nodeAffinityPath": "object",
    "containersPath": "array",
    "containerPath": "object",
    "priorityClassNamePath": "string",
    "imagePath": "string",
    "replicasPath": "scale",
    "minReplicasPath": "scale",
    "maxReplicasPath": "scale",
    "instanceIdPath": "string",
    "expression": "any",
}
_WHAT = {
    "template": "a PodTemplateSpec (metadata and a spec with containers)",
    "podSpec": "a PodSpec (containers with name and image)",
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "scale": "an integer or a string",
}
_ACCEPTS: dict[str, tuple[str, ...]] = {
    "object": ("object",),
    "array": ("array",),
    "string": ("string",),
    "scale": ("integer", "string", "int-or-string"),
    "template": ("object",),
    "podSpec": ("object",),
}


@record(slots=True)  # a record, as its base is
class SchemaFinding(Finding):
    """A finding of the schema check: ``location`` is the definition's field, ``schema_path`` the
    place in the CRD (``spec.versions[v1].schema.openAPIV3Schema.properties.spec...``)."""

    schema_path: str = ""


@dataclass
class SchemaCheck:
    """The outcome of :func:`check_definition`: the CRD (``crd``, ``version``), every finding and
    note, and how many object paths were looked up (``paths``) in how many expressions."""

    crd: str
    version: str
    findings: list[SchemaFinding] = field(default_factory=list)
    paths: int = 0
    expressions: int = 0

    @property
    def errors(self) -> list[SchemaFinding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def notes(self) -> list[SchemaFinding]:
        return [f for f in self.findings if f.severity is not Severity.ERROR]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def crd_label(crd: dict[str, Any]) -> str:
    """The CRD's name (``pytorchjobs.kubeflow.org``) for messages."""
    name = _dict(crd.get("metadata")).get("name")
    if isinstance(name, str) and name:
        return name[:253]
    spec = _dict(crd.get("spec"))
    plural = str(_dict(spec.get("names")).get("plural") or "?")
    return f"{plural}.{spec.get('group') or '?'}"[:253]


def crd_for(karta: Karta, crds: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The CRD among ``crds`` that defines the definition's root group and kind: the first that
    lists the definition's version, else the first (two CRDs may share a name: MPIJob v1 and
    v2beta1)."""
    gvk = karta.root.kind
    if gvk is None:
        return None
    matching = [
        crd
        for crd in crds
        if (spec := _dict(crd.get("spec"))).get("group") == gvk.group
        and _dict(spec.get("names")).get("kind") == gvk.kind
    ]
    for crd in matching:
        if _served(crd, gvk.version) is not None:
            return crd
    return matching[0] if matching else None


def _served(crd: dict[str, Any], version: str) -> bool | None:
    """Whether ``version`` is served (None when the CRD does not list it)."""
    for entry in _dict(crd.get("spec")).get("versions") or []:
        if isinstance(entry, dict) and entry.get("name") == version:
            return entry.get("served") is not False
    return None


class _Checker:
    def __init__(self, karta: Karta, root: dict[str, Any], where: str, kind_text: str) -> None:
        self.karta = karta
        self.root = root
        self.where = where
        self.kind_text = kind_text
        self.resolved: dict[Path, Outcome] = {}
        self.out: list[SchemaFinding] = []
        self.seen: set[tuple[str, str, str]] = set()

    def emit(self, severity: Severity, message: str, location: str, schema_path: str) -> None:
        key = (location, schema_path, message)
        if key not in self.seen:
            self.seen.add(key)
            self.out.append(SchemaFinding(severity, message, location, schema_path))

    def lookup(self, path: Path) -> Outcome:
        outcome = self.resolved.get(path)
        if outcome is None:
            outcome = self.resolved[path] = resolve(self.root, path, where=self.where)
        return outcome

    # -- reads --------------------------------------------------------------------------------
    def reads(self, analysis: Analysis, location: str) -> None:
        """Every path read, looked up; one finding per failing step, one note per place the
        schema stops saying what is there (naming every path read below it)."""
        reported: set[Path] = set()
        stopped: dict[tuple[str, str], list[str]] = {}
        for path in sorted(analysis.reads, key=len):
            outcome = self.lookup(path)
            if outcome.kind == "found":
                continue
            head = path[: outcome.at + 1]
            if head in reported:
                continue
            reported.add(head)
            text = path_text(head)
            if outcome.kind == "missing":
                message = (
                    f"{text} is not in the schema of {self.kind_text}: {outcome.where}: {outcome.reason}"
                )
                step = head[-1]
                absent = f"{outcome.where}.properties.{step.name}" if step.kind == "field" else outcome.where
                self.emit(Severity.ERROR, message, location, absent)
            elif outcome.kind == "mismatch":
                message = (
                    f"{text} does not fit the schema of {self.kind_text}: {outcome.where}: {outcome.reason}"
                )
                self.emit(Severity.ERROR, message, location, outcome.where)
            else:
                stopped.setdefault((outcome.where, outcome.reason), []).append(text)
        for (where, reason), texts in stopped.items():
            shown = ", ".join(texts[:5]) + (f" and {len(texts) - 5} more" if len(texts) > 5 else "")
            message = f"not checked: {shown} and below ({where}: {reason})"
            self.emit(Severity.NOTE, message, location, where)

    # -- results ------------------------------------------------------------------------------
    def results(self, values: Iterable[Value], expects: str, location: str) -> None:
        for value in values:
            self.result(value, expects, location)

    def result(self, value: Value, expects: str, location: str) -> None:
        what = _WHAT[expects]
        if isinstance(value, Loc):
            outcome = self.lookup(value.path)
            if outcome.kind != "found" or outcome.schema is None:
                return  # reported with the reads
            self.shape(path_text(value.path), outcome.schema, outcome.where, expects, location)
        elif isinstance(value, Lit):
            if value.type == "null":
                return  # an absent value: allowed everywhere
            if not value.type:
                message = f"not checked: the result is computed and its type is unknown (expected {what})"
                self.emit(Severity.NOTE, message, location, "")
                return
            lit_type = "integer" if value.type == "number" else value.type
            shown = f" ({json.dumps(value.value)[:40]})" if value.has_value else ""
            if lit_type not in _ACCEPTS[expects] or expects in ("template", "podSpec"):
                message = f"the expression yields {_a(value.type)}{shown}, not {what}"
                self.emit(Severity.ERROR, message, location, "")
            elif expects == "scale" and value.has_value and not _whole(value.value):
                message = (
                    f"the expression yields{shown}, which is not a replica count (docs/spec/format.md#scale)"
                )
                self.emit(Severity.ERROR, message, location, "")
        elif isinstance(value, Obj):
            if expects == "template":
                spec = value.get("spec")
                if spec is None:
                    message = f"the expression builds an object without a spec, not {what}"
                    self.emit(Severity.ERROR, message, location, "")
                    return
                self.results(spec, "podSpec", location)
                self.results(value.get("metadata") or (), "object", location)
            elif expects == "podSpec":
                containers = value.get("containers")
                if containers is None and not value.open:
                    message = f"the expression builds an object without containers, not {what}"
                    self.emit(Severity.ERROR, message, location, "")
                self.results(containers or (), "array", location)
            elif "object" not in _ACCEPTS[expects]:
                self.emit(Severity.ERROR, f"the expression builds an object, not {what}", location, "")
        elif isinstance(value, Arr):
            if expects != "array":
                self.emit(Severity.ERROR, f"the expression builds a list, not {what}", location, "")
        elif isinstance(value, Entry):
            if "object" not in _ACCEPTS[expects]:
                self.emit(
                    Severity.ERROR, f"the expression yields an entry {{key, value}}, not {what}", location, ""
                )
        elif isinstance(value, Unknown):
            message = f"not checked: the result cannot be followed ({value.reason}; expected {what})"
            self.emit(Severity.NOTE, message, location, "")

    def shape(self, text: str, schema: dict[str, Any], where: str, expects: str, location: str) -> None:
        what = _WHAT[expects]
        kind = type_name(schema)
        loose = schema.get("x-kubernetes-preserve-unknown-fields") is True and not schema.get("properties")
        if expects in ("template", "podSpec"):
            fits = is_pod_template(schema) if expects == "template" else is_pod_spec(schema)
            if fits:
                return
            if loose or not kind:
                message = (
                    f"not checked: {text} should be {what}; the schema does not say what it holds ({where})"
                )
                self.emit(Severity.NOTE, message, location, where)
                return
            found = "a spec.containers list" if expects == "template" else "a containers list"
            message = (
                f"{text} is not {what} in the schema of {self.kind_text}: "
                f"{where} is {_a(kind)} without {found}"
            )
            if expects == "template" and is_pod_spec(schema):
                message += " (it is PodSpec-shaped: use podSpecPath)"
            elif expects == "podSpec" and is_pod_template(schema):
                message += " (it is PodTemplateSpec-shaped: use podTemplateSpecPath)"
            self.emit(Severity.ERROR, message, location, where)
            return
        if kind in _ACCEPTS[expects] or (expects == "string" and kind == "int-or-string"):
            return
        if not kind:
            message = f"not checked: {text} should be {what}; the schema does not say what it holds ({where})"
            self.emit(Severity.NOTE, message, location, where)
            return
        message = f"{text} is {_a(kind)} in the schema of {self.kind_text} ({where}), not {what}"
        self.emit(Severity.ERROR, message, location, where)

    def written(self, text: str, outcome: Outcome, value: str, location: str) -> None:
        """A suspend or resume action's value against the type of the field it is written to."""
        try:
            parsed = json.loads(value)
        except ValueError:
            return  # the validator reports a value that is not JSON
        if outcome.schema is None:
            return
        want = type_name(outcome.schema)
        have = json_type(parsed)
        fits = {
            "int-or-string": ("integer", "string"),
            "number": ("integer", "number"),
        }.get(want, (want,))
        if not want or have == "null" or have in fits:
            return
        message = (
            f"the action writes {_a(have)} ({value[:40]}) to {text}, which is {_a(want)} "
            f"in the schema of {self.kind_text} ({outcome.where})"
        )
        self.emit(Severity.ERROR, message, location, outcome.where)


def _whole(value: Any) -> bool:
    """A scale value the library accepts (:func:`karta.extract.scale.to_replicas`)."""
    try:
        to_replicas(value, 0)
    except ConversionError:
        return False
    return True


def _a(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def _action_values(karta: Karta) -> dict[str, str]:
    """Suspend and resume action values by the location of their path field."""
    return {
        f"{where}.suspendDefinition.{alias}[{i}].path": action.value
        for where, _comp, alias, actions in action_lists(karta)
        for i, action in enumerate(actions)
    }


def _object_side(location: str) -> bool:
    if location in (SPLIT_WHEN_PATH, SPLIT_SIZE_PATH):  # extension E1: evaluated on the workload object
        return True
    return ".podSelector." not in location and not location.startswith(GANG_PATH)


def check_definition(karta: Karta, crd: dict[str, Any]) -> SchemaCheck:
    """Check every object-side path of ``karta`` against ``crd`` (a parsed
    CustomResourceDefinition for the definition's root group and kind; see :func:`crd_for`)."""
    from karta.jq.parser import parse_cached

    gvk = karta.root.kind
    label = crd_label(crd)
    version = gvk.version if gvk is not None else ""
    check = SchemaCheck(crd=label, version=version)
    kind_location = "spec.structureDefinition.rootComponent.kind"
    if gvk is None or crd_for(karta, [crd]) is None:
        spec = _dict(crd.get("spec"))
        defines = f"{spec.get('group')}/{_dict(spec.get('names')).get('kind')}"
        check.findings.append(
            SchemaFinding(
                Severity.ERROR,
                f"the CRD {label} defines {defines[:120]}, not the definition's root kind "
                f"{gvk.group + '/' + gvk.kind if gvk is not None else '(none)'}",
                kind_location,
            )
        )
        return check
    try:
        chosen = crd_version(crd, version=gvk.version)
    except ScaffoldError as exc:
        check.findings.append(
            SchemaFinding(Severity.ERROR, f"the CRD {label}: {exc}", f"{kind_location}.version")
        )
        return check
    if _served(crd, gvk.version) is False:
        check.findings.append(
            SchemaFinding(
                Severity.ERROR,
                f"the CRD {label} does not serve version {gvk.version} (served: false)",
                f"{kind_location}.version",
                f"spec.versions[{gvk.version}].served",
            )
        )
    where = f"spec.versions[{chosen.version}].schema.openAPIV3Schema"
    if not chosen.schema:
        check.findings.append(
            SchemaFinding(
                Severity.NOTE,
                f"not checked: the CRD {label} has no schema for version {chosen.version}",
                kind_location,
                where,
            )
        )
        return check
    checker = _Checker(karta, chosen.schema, where, f"{gvk.group}/{gvk.version} {gvk.kind}")
    actions = _action_values(karta)
    for jf in jq_fields(karta):
        if not _object_side(jf.location):
            continue
        try:
            node = parse_cached(jf.expression)
        except (KartaError, RecursionError):
            continue  # the validator reports it
        check.expressions += 1
        analysis = analyse(node)
        checker.reads(analysis, jf.location)
        for pos, reason in analysis.unfollowed:
            checker.emit(
                Severity.NOTE,
                f"not checked: part of the expression cannot be followed: {reason} (character {pos + 1})",
                jf.location,
                "",
            )
        name = jf.location.rsplit(".", 1)[-1]
        if jf.location in actions:
            for value in analysis.outputs:
                if isinstance(value, Loc):
                    outcome = checker.lookup(value.path)
                    if outcome.kind == "found":
                        checker.written(path_text(value.path), outcome, actions[jf.location], jf.location)
            continue
        expects = _EXPECTS.get(name)
        if jf.location.endswith(".phaseDefinition.path"):
            expects = "string"
        elif jf.location.endswith(".conditionsDefinition.path"):
            expects = "array"
        if expects is not None and expects != "any":
            checker.results(analysis.outputs, expects, jf.location)
    check.paths = sum(1 for o in checker.resolved.values() if o.kind == "found")
    check.findings.extend(checker.out)
    return check
