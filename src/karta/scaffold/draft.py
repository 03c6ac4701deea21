"""Turning a schema analysis into a draft Karta: one Pod component per pod field, status, suspend.

The draft is valid by construction (it loads strictly and the validator finds no errors): every
multi-instance component gets a ``componentInstanceSelector``, every ``byPhase`` matcher a
``phaseDefinition``, every ``byConditions`` matcher a ``conditionsDefinition``. What the schema
cannot tell (how pods are labelled, which replica count is the pod count, what an unknown phase
means) is marked with ``TODO:`` comments for a human.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from karta.scaffold.crd import CrdVersion, crd_version, select_crd
from karta.scaffold.jqtext import jq_path, jq_scoped
from karta.scaffold.render import Comments, to_commented_yaml
from karta.scaffold.schema import (
    PhaseField,
    PodField,
    ReplicaField,
    Replicas,
    SchemaAnalysis,
    Segment,
    analyse_schema,
)
from karta.scaffold.vocabulary import COMMON_CONDITIONS, COMMON_PHASES, STATUS_KEYS, status_key

__all__ = ["Draft", "Todo", "build_draft"]

_GENERIC = {"spec", "template", "podtemplate", "podspec", "pod", "jobtemplate", "podtemplatespec"}
_ROOT: tuple[str, ...] = ("spec", "structureDefinition", "rootComponent")


@dataclass(frozen=True)
class Todo:
    """Something a human must decide, attached to the field at ``path`` of the draft."""

    path: tuple[str | int, ...]
    message: str


@dataclass
class Draft:
    """A proposed Karta (plain wire-form dict) plus the TODOs and the analysis behind it."""

    crd: CrdVersion
    analysis: SchemaAnalysis
    karta: dict[str, Any]
    todos: list[Todo] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for stderr: guesses the schema does not back

    @property
    def name(self) -> str:
        return str(self.karta["metadata"]["name"])

    def component(self, name: str) -> dict[str, Any]:
        """The component dict called ``name`` (root or child); KeyError when absent."""
        structure = self.karta["spec"]["structureDefinition"]
        for comp in [structure["rootComponent"], *structure.get("childComponents", [])]:
            if comp["name"] == name:
                return dict(comp)
        raise KeyError(name)

    def to_yaml(self) -> str:
        comments: Comments = {}
        for todo in self.todos:
            comments.setdefault(todo.path, []).append(f"TODO: {todo.message}")
        return to_commented_yaml(self.karta, comments=comments, header=self.header)


def _kebab(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", text).lower()
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    return text[:63].strip("-")


def _strip_suffix(word: str) -> str:
    for suffix in ("PodTemplateSpec", "TemplateSpec", "PodSpec", "Template", "Specs", "Spec"):
        if word.endswith(suffix) and len(word) > len(suffix):
            return word[: -len(suffix)]
    return word


@dataclass
class _Names:
    """Component names handed out so far; ``-2``, ``-3``, ... resume where each base left off."""

    taken: set[str]
    next_index: dict[str, int] = field(default_factory=dict)

    def pick(self, pod: PodField) -> str:
        words = [s.name for s in pod.segments[1:] if s.name.lower() not in _GENERIC]
        candidates: list[str] = []
        for n in range(1, len(words) + 1):
            tail = words[-n:]
            candidates.append(_kebab("-".join([*tail[:-1], _strip_suffix(tail[-1])])))
        candidates.append("pod")
        for candidate in candidates:
            if candidate and candidate not in self.taken:
                return self._take(candidate)
        base = candidates[0] or "pod"
        index = self.next_index.get(base, 2)
        while _numbered(base, index) in self.taken:
            index += 1
        self.next_index[base] = index + 1
        return self._take(_numbered(base, index))

    def _take(self, name: str) -> str:
        self.taken.add(name)
        return name


def _numbered(base: str, index: int) -> str:
    """``base-index`` within 63 characters: the base is cut, never the number."""
    suffix = f"-{index}"
    return base[: 63 - len(suffix)].rstrip("-") + suffix


def _unrolled(segment: Segment) -> Segment:
    return replace(segment, iterate=None)


def instance_id_path(pod: PodField) -> str | None:
    """One string per entry of the pod field's maps and arrays (``a/b`` when nested)."""
    indices = [i for i, s in enumerate(pod.segments) if s.iterate]
    if not indices:
        return None
    if len(indices) == 1:
        i = indices[0]
        seg = pod.segments[i]
        container = jq_path((*pod.segments[:i], _unrolled(seg)))
        if seg.iterate == "map":
            return f"({container} // {{}}) | to_entries[] | .key"
        if seg.id_field:
            return jq_path((*pod.segments[: i + 1], Segment(seg.id_field)))
        return f"({container} // []) | keys[] | tostring"
    parts: list[str] = []
    labels: list[str] = []
    start = 0
    for level, i in enumerate(indices):
        seg = pod.segments[i]
        steps = (*pod.segments[start:i], _unrolled(seg))
        source = jq_path(steps) if level == 0 else jq_path(steps, base=f"$v{level - 1}")
        empty = "{}" if seg.iterate == "map" else "[]"
        parts.append(f"({source} // {empty}) as $c{level} | $c{level} | keys[] as $k{level}")
        parts.append(f"$c{level}[$k{level}] as $v{level}")
        if seg.iterate == "array" and seg.id_field:
            labels.append(jq_path((Segment(seg.id_field),), base=f"$v{level}"))
        else:
            labels.append(f"$k{level}")
        start = i + 1
    text = "/".join(f"\\({label})" for label in labels)
    return " | ".join(parts) + f' | "{text}"'


_FIELD_NAME = re.compile(r"[^.\[\]*'\"\\\s]+")  # no brackets, wildcards, quotes or blanks


def scale_path_fields(path: str | None) -> tuple[str, ...] | None:
    """The field names of a ``subresources.scale`` path (``.spec.replicas``: a JSON path of
    fields only, as the API server requires); None when it is not one."""
    if not path or not path.startswith("."):
        return None
    names = tuple(path[1:].split("."))
    if not all(_FIELD_NAME.fullmatch(name) for name in names):
        return None
    return names


def _names_path(segments: tuple[Segment, ...], names: tuple[str, ...]) -> str | None:
    """Whether the field path ``segments`` (a map segment takes one key) is ``names``: the map
    keys it took (``""`` for none), or None."""
    i, keys = 0, []
    for seg in segments:
        if i >= len(names) or names[i] != seg.name or seg.iterate == "array":
            return None
        i += 1
        if seg.iterate == "map":
            if i >= len(names):
                return None
            keys.append(names[i])
            i += 1
    return "/".join(keys) if i == len(names) else None


@dataclass(frozen=True)
class _ScalePath:
    """The CRD's ``subresources.scale.specReplicasPath``: as written and as field names."""

    text: str
    names: tuple[str, ...]


def _scale(
    pod: PodField, path: tuple[str | int, ...], todos: list[Todo], scale_path: _ScalePath | None
) -> tuple[dict[str, str], bool]:
    """The component's scale paths, and whether the CRD's scale subresource names its count."""
    near = pod.replicas
    counts = list(near.counts)
    named = None
    if scale_path is not None:
        named = next(
            (
                (r, key)
                for r in counts
                for key in [_names_path(r.segments, scale_path.names)]
                if key is not None
            ),
            None,
        )
    scale: dict[str, str] = {}
    where = (*path, "replicasPath")
    if named is not None and scale_path is not None:
        chosen, key = named
        counts = [chosen, *(r for r in counts if r is not chosen)]
        scale["replicasPath"] = jq_scoped(chosen.segments, "1")
        note = f"the CRD's subresources.scale.specReplicasPath ({scale_path.text}) is this field"
        note += f" (for the {key} entry)" if key else ""
        note += "; check the default when it is unset (1 assumed)."
        if near.total > 1:
            note += f" Other replica-like fields here: {_others(near, counts)}; are the pods their product?"
        todos.append(Todo(where, note))
    elif counts:
        scale["replicasPath"] = jq_scoped(counts[0].segments, "1")
        if near.total > 1:
            todos.append(
                Todo(
                    where,
                    f"other replica-like fields here: {_others(near, counts)}; which one counts this "
                    "component's pods (or is it their product)? The default 1 is a guess too.",
                )
            )
        else:
            todos.append(Todo(where, "check the default when the field is unset (1 assumed)."))
    else:
        levels = [i for i, s in enumerate(pod.segments) if s.iterate]
        scale["replicasPath"] = f"{jq_path(pod.segments[: levels[-1] + 1])} | 1" if levels else "1"
        todos.append(Todo(where, "no replica-like integer found next to the pod field; 1 assumed."))
    if near.minimum is not None:
        scale["minReplicasPath"] = jq_scoped(near.minimum.segments)
    if near.maximum is not None:
        scale["maxReplicasPath"] = jq_scoped(near.maximum.segments)
    return scale, named is not None


def _others(near: Replicas, counts: list[ReplicaField]) -> str:
    others = ", ".join(jq_path(r.segments) for r in counts[1:])
    more = near.total - len(counts)  # a pod field keeps only the first few
    return others + (f" and {more} more" if more else "")


def _child(
    pod: PodField,
    *,
    name: str,
    root: str,
    group: str,
    index: int,
    todos: list[Todo],
    scale_path: _ScalePath | None,
    scaled: list[bool],
) -> dict[str, Any]:
    path: tuple[str | int, ...] = ("spec", "structureDefinition", "childComponents", index)
    comp: dict[str, Any] = {
        "name": name,
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "ownerRef": root,
    }
    if pod.style == "template":
        comp["specDefinition"] = {"podTemplateSpecPath": jq_path(pod.segments)}
    else:
        spec: dict[str, str] = {"podSpecPath": jq_path(pod.segments)}
        if pod.metadata is not None:
            spec["metadataPath"] = jq_path(pod.metadata)
        comp["specDefinition"] = spec
    comp["scaleDefinition"], named = _scale(pod, (*path, "scaleDefinition"), todos, scale_path)
    scaled.append(named)
    ids = instance_id_path(pod)
    if ids is not None:
        comp["instanceIdPath"] = ids
        if pod.levels[-1].iterate == "map":
            note = (
                "one instance per map entry; if the keys are fixed replica types (say Master and "
                "Worker), consider one component per type instead and decide which is which."
            )
        else:
            note = "one instance per list entry; check that the id is unique and that pods carry it."
        todos.append(Todo((*path, "instanceIdPath"), note))
    selector: dict[str, Any] = {"componentTypeSelector": {"matchLabels": {f"{group}/component": name}}}
    if ids is not None:
        label = (Segment("metadata"), Segment("labels"), Segment(f"{group}/instance"))
        selector["componentInstanceSelector"] = {"idPath": jq_path(label)}
    comp["podSelector"] = selector
    todos.append(
        Todo(
            (*path, "podSelector"),
            "placeholder labels: replace them with the labels the controller puts on this "
            "component's pods (see its docs or a live pod).",
        )
    )
    return comp


def _pick_phase(phases: list[PhaseField]) -> PhaseField | None:
    def rank(p: PhaseField) -> tuple[int, int, int]:
        last = p.segments[-1].name
        name_rank = 0 if last == "phase" else 1 if last == "state" else 2
        return (0 if any(status_key(v) for v in p.values) else 1, name_rank, len(p.segments))

    return min(phases, key=rank) if phases else None


def _undecided(expression: str) -> dict[str, Any]:
    """The catalog's first Initializing rule: nothing decided yet (the operator has not written
    the status field the other mappings read) is Initializing, not Undefined."""
    return {"byExpression": {"expression": expression, "expectedResult": "true"}}


def _status(analysis: SchemaAnalysis, todos: list[Todo], crd: CrdVersion, notes: list[str]) -> dict[str, Any]:
    where: tuple[str | int, ...] = (*_ROOT, "statusDefinition")
    phase = _pick_phase(analysis.phases)
    mappings: dict[str, list[dict[str, Any]]] = {}
    definition: dict[str, Any] = {}
    if phase is not None and any(status_key(v) for v in phase.values):
        definition["phaseDefinition"] = {"path": jq_path(phase.segments)}
        unmapped = []
        for value in phase.values:
            key = status_key(value)
            if key is None:
                unmapped.append(value)
            else:
                mappings.setdefault(key, []).append({"byPhase": value})
        note = (
            f"mapped from the enum of {jq_path(phase.segments)} by name; check each against the controller."
        )
        if unmapped:
            note += f" Unmapped values: {', '.join(unmapped)}."
        if analysis.conditions is not None:
            note += f" {jq_path(analysis.conditions)} exists too (conditionsDefinition) for finer states."
        todos.append(Todo((*where, "statusMappings"), note))
    elif analysis.conditions is not None:
        definition["conditionsDefinition"] = {"path": jq_path(analysis.conditions)}
        for ctype in COMMON_CONDITIONS:
            key = status_key(ctype)
            if key is not None:
                mappings.setdefault(key, []).append({"byConditions": [{"type": ctype, "status": "True"}]})
        note = "a CRD schema never lists condition types; these are common names, use the controller's."
        if phase is not None:
            note += f" {jq_path(phase.segments)} exists too (phaseDefinition)."
        todos.append(Todo((*where, "statusMappings"), note))
    elif phase is None and (replicas := scale_path_fields(crd.status_replicas_path)) is not None:
        count = jq_path(tuple(Segment(n) for n in replicas))
        mappings["initializing"] = [
            {"byExpression": {"expression": f"({count} // 0) == 0", "expectedResult": "true"}}
        ]
        mappings["running"] = [
            {"byExpression": {"expression": f"({count} // 0) > 0", "expectedResult": "true"}}
        ]
        note = (
            "the schema declares no phase or conditions; these read the CRD's "
            f"subresources.scale.statusReplicasPath ({crd.status_replicas_path}): Running once it is "
            "above 0. Add the controller's real states (completed, failed, ...)."
        )
        todos.append(Todo((*where, "statusMappings"), note))
    else:
        path = jq_path(phase.segments) if phase is not None else ".status.phase"
        definition["phaseDefinition"] = {"path": path}
        for value in COMMON_PHASES:
            key = status_key(value)
            if key is not None:
                mappings.setdefault(key, []).append({"byPhase": value})
        if phase is not None:
            note = f"the schema lists no values for {path}; these are common phase names, use the real ones."
        else:
            note = (
                "the schema declares no phase or conditions; .status.phase and its values are guesses "
                "(not in the CRD's schema)."
            )
            notes.append(
                f"the CRD's schema declares no status phase or conditions for {crd.kind}: the draft "
                "guesses .status.phase and its values (see the TODO); replace them with the "
                "controller's real status field"
            )
        todos.append(Todo((*where, "phaseDefinition"), note))
    if "phaseDefinition" in definition:
        undecided = f'({definition["phaseDefinition"]["path"]} // "") == ""'
    elif "conditionsDefinition" in definition:
        undecided = f"({definition['conditionsDefinition']['path']} // []) | length == 0"
    else:
        undecided = ""  # the replica count's rule above already says Initializing at 0
    if undecided:
        mappings["initializing"] = [_undecided(undecided), *mappings.get("initializing", [])]
    definition["statusMappings"] = {k: mappings[k] for k in STATUS_KEYS if k in mappings}
    return definition


def _dns(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].rstrip("-") or "workload"


def build_draft(crd: CrdVersion, analysis: SchemaAnalysis) -> Draft:
    """The draft Karta for ``crd`` from its schema ``analysis``."""
    todos: list[Todo] = []
    notes: list[str] = []
    slug = f"{crd.group.replace('.', '-')}-{crd.kind.lower()}-{crd.version}"
    root_name = _dns(crd.kind)
    root: dict[str, Any] = {
        "name": root_name,
        "kind": {"group": crd.group, "version": crd.version, "kind": crd.kind},
        "statusDefinition": _status(analysis, todos, crd, notes),
    }
    if analysis.suspend is not None:
        path = jq_path(analysis.suspend)
        root["suspendDefinition"] = {
            "suspendActions": [{"path": path, "value": "true"}],
            "resumeActions": [{"path": path, "value": "false"}],
        }
    names = _Names({root_name})
    children = []
    scale_names = scale_path_fields(crd.spec_replicas_path)
    scale_path = _ScalePath(crd.spec_replicas_path or "", scale_names) if scale_names else None
    scaled: list[bool] = []
    for index, pod in enumerate(analysis.pod_fields):
        name = names.pick(pod)
        children.append(
            _child(
                pod,
                name=name,
                root=root_name,
                group=crd.group,
                index=index,
                todos=todos,
                scale_path=scale_path,
                scaled=scaled,
            )
        )
    if crd.spec_replicas_path and not any(scaled):
        why = "is not a replica count next to any pod field" if scale_path else "is not a path of fields"
        todos.append(
            Todo(
                _ROOT,
                f"the CRD's subresources.scale.specReplicasPath ({crd.spec_replicas_path}) {why}; "
                "if it scales the pods, use it in their replicasPath.",
            )
        )
    structure: dict[str, Any] = {"rootComponent": root}
    if children:
        structure["childComponents"] = children
    else:
        todos.append(
            Todo(
                _ROOT,
                "no PodTemplateSpec- or PodSpec-shaped field found in the schema; add child "
                "components by hand if the workload has pods.",
            )
        )
    karta = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": _dns(slug)},
        "spec": {"structureDefinition": structure},
    }
    header = [
        f"Draft Karta for {crd.kind} ({crd.group}/{crd.version}), proposed by `kli scaffold` "
        f"from the CRD {crd.crd_name}.",
        "Review every TODO, then check it with `kli validate` and, against a real object, `kli verify`.",
    ]
    if analysis.pod_fields:
        header.append("Pod fields found:")
        header.extend(
            f"  {p.display} ({'PodTemplateSpec' if p.style == 'template' else 'PodSpec'})"
            for p in analysis.pod_fields
        )
    header.append(
        "TODO: add optimizationInstructions.gangScheduling (section 12) if the pods must start together."
    )
    return Draft(crd=crd, analysis=analysis, karta=karta, todos=todos, header=header, notes=notes)


def scaffold_crd(documents: list[Any], *, kind: str | None = None, version: str | None = None) -> Draft:
    """The draft Karta for the CRD among ``documents`` (``kind``) at ``version`` (default: storage)."""
    crd = crd_version(select_crd(documents, kind=kind), version=version)
    return build_draft(crd, analyse_schema(crd.schema))
