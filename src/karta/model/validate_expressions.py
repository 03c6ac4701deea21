"""Validation of the jq expressions of a Karta: section 14.2 and the R6 assignability warnings.

Owns the list of ``{jq}`` fields (section 2.1) with their JSON field paths, in a stable order, and
turns parse failures (expressions over the parser's limits included: 65 536 characters, 128 levels
of nesting), compile failures (:func:`karta.jq.scope_check.compile_check`: undefined functions
and variables, wrong arity, ``break`` without its label: what no engine can compile), safety
issues (:func:`karta.jq.safety.check_safety`, which also rejects what gojq, and so the original
and KAI Scheduler, lacks) and non-assignable write-back paths into findings. Messages quote an
expression over the size limit by its start only.

Write-back paths (R6): every write-back path that is not assignable is a warning of its own,
naming its expression and field (three such paths, three warnings). A suspend or resume action's
path exists to be written: writing through it fails whenever it is used. Pod-spec paths (pod
template, pod spec, metadata, fragments) are read by every tool and written back only by library
callers that update pod specs, so a read-only one (an object construction, a fallback to a
literal) is legitimate, and its warning says so.
"""

from __future__ import annotations

from karta._records import record
from karta.errors import KartaError
from karta.model.findings import Finding, Severity
from karta.model.schema import join_path, wire_fields
from karta.model.types import ComponentDefinition, FragmentedPodSpecDefinition, Karta, StatusDefinition
from karta.model.validate_gang import GANG_PATH, SPLIT_PATH, SPLIT_SIZE_PATH, SPLIT_WHEN_PATH
from karta.model.validate_references import (
    REFERENCES_PATH,
    check_references,
    declared_references,
    is_literal,
    is_reference_field,
)
from karta.model.validate_status import STATUS_KEYS
from karta.model.validate_structure import component_paths


@record(slots=True)
class JqField:
    """One jq expression of a definition: where it is and whether it is written through."""

    location: str
    expression: str
    written: bool = False
    action: bool = False  # a suspend/resume action's path: written whenever it is used


def _field(
    out: list[JqField], location: str, expression: str | None, *, written: bool = False, action: bool = False
) -> None:
    if expression:  # empty strings and unset fields are skipped (14.2)
        out.append(JqField(location, expression, written, action))


def _status_fields(out: list[JqField], path: str, status: StatusDefinition) -> None:
    if status.phase_definition is not None:
        _field(out, f"{path}.phaseDefinition.path", status.phase_definition.path)
    if status.conditions_definition is not None:
        _field(out, f"{path}.conditionsDefinition.path", status.conditions_definition.path)
    for key in STATUS_KEYS:
        for i, matcher in enumerate(getattr(status.status_mappings, key)):
            if matcher.by_expression is not None:
                where = f"{path}.statusMappings.{key}[{i}].byExpression.expression"
                _field(out, where, matcher.by_expression.expression)


def _component_fields(out: list[JqField], path: str, comp: ComponentDefinition) -> None:
    spec = comp.spec_definition
    if spec is not None:
        where = f"{path}.specDefinition"
        _field(out, f"{where}.podTemplateSpecPath", spec.pod_template_spec_path, written=True)
        _field(out, f"{where}.podSpecPath", spec.pod_spec_path, written=True)
        _field(out, f"{where}.metadataPath", spec.metadata_path, written=True)
        fragments = spec.fragmented_pod_spec_definition
        if fragments is not None:
            for alias, wf in wire_fields(FragmentedPodSpecDefinition).items():
                value = getattr(fragments, wf.name)
                _field(out, f"{where}.fragmentedPodSpecDefinition.{alias}", value, written=True)
    scale = comp.scale_definition
    if scale is not None:
        _field(out, f"{path}.scaleDefinition.replicasPath", scale.replicas_path)
        _field(out, f"{path}.scaleDefinition.minReplicasPath", scale.min_replicas_path)
        _field(out, f"{path}.scaleDefinition.maxReplicasPath", scale.max_replicas_path)
    if comp.status_definition is not None:
        _status_fields(out, f"{path}.statusDefinition", comp.status_definition)
    suspend = comp.suspend_definition
    if suspend is not None:
        for alias, actions in (
            ("suspendActions", suspend.suspend_actions),
            ("resumeActions", suspend.resume_actions),
        ):
            for i, action in enumerate(actions):
                where = f"{path}.suspendDefinition.{alias}[{i}].path"
                _field(out, where, action.path, written=True, action=True)
    _field(out, f"{path}.instanceIdPath", comp.instance_id_path)
    selector = comp.pod_selector
    if selector is not None:
        where = f"{path}.podSelector"
        if selector.component_type_selector is not None:
            _field(out, f"{where}.componentTypeSelector.keyPath", selector.component_type_selector.key_path)
        if selector.component_instance_selector is not None:
            _field(
                out, f"{where}.componentInstanceSelector.idPath", selector.component_instance_selector.id_path
            )
        if selector.replica_selector is not None:
            _field(out, f"{where}.replicaSelector.keyPath", selector.replica_selector.key_path)
        if selector.external_pods is not None:  # extension E2, object-side
            _field(
                out,
                f"{where}.externalPods.matchLabelsExpression",
                selector.external_pods.match_labels_expression,
            )


def _reference_fields(out: list[JqField], karta: Karta) -> None:
    """Extension E3: each reference's own expressions (object-side, no reference bound)."""
    for i, ref in enumerate(karta.spec.structure_definition.references):
        where = f"{REFERENCES_PATH}[{i}]"
        _field(out, f"{where}.namespaceExpression", ref.namespace_expression)
        if ref.lookup is not None:
            _field(out, f"{where}.lookup.nameExpression", ref.lookup.name_expression)
        if ref.list is not None:
            for key, value in (ref.list.match_labels or {}).items():
                if not is_literal(value):
                    _field(out, f"{where}.list.matchLabels.{key}", value)
            for j, req in enumerate(ref.list.match_expressions):
                for k, value in enumerate(req.values):
                    if not is_literal(value):
                        _field(out, f"{where}.list.matchExpressions[{j}].values[{k}]", value)


def jq_fields(karta: Karta) -> list[JqField]:
    """Every non-empty ``{jq}`` field: the references' (extension E3), components in order (root
    first), then gang members."""
    out: list[JqField] = []
    _reference_fields(out, karta)
    for path, comp in component_paths(karta):
        _component_fields(out, path, comp)
    gang = karta.gang
    if gang is not None:
        split = gang.pod_group.split if gang.pod_group is not None else None
        if split is not None:  # extension E1: key paths pod-side, ``when`` object-side
            for k, expr in enumerate(split.group_by_key_paths):
                _field(out, join_path(f"{SPLIT_PATH}.groupByKeyPaths", k), expr)
            _field(out, SPLIT_WHEN_PATH, split.when)
            _field(out, SPLIT_SIZE_PATH, split.replica_size_path)
        for i, group in enumerate(gang.pod_groups):
            for j, member in enumerate(group.members):
                where = f"{GANG_PATH}.podGroups[{i}].members[{j}]"
                for k, expr in enumerate(member.group_by_key_paths):
                    _field(out, join_path(f"{where}.groupByKeyPaths", k), expr)
                for k, expr in enumerate(member.filters):
                    _field(out, join_path(f"{where}.filters", k), expr)
    return out


def _parse_detail(expression: str, exc: BaseException) -> str:
    text = str(exc)
    prefix = f"failed to parse JQ expression '{expression}'"
    if text.startswith(prefix):
        text = text[len(prefix) :].lstrip(":").strip()
    return text or type(exc).__name__


def _severity(value: object) -> Severity:
    return Severity.WARNING if str(getattr(value, "value", value)).lower() == "warning" else Severity.ERROR


def check_expressions(karta: Karta) -> tuple[list[Finding], list[Finding]]:
    """14.2 findings (parse failures and safety issues), and R6 assignability warnings, separately.
    The references' names (extension E3) are declared in every expression but theirs; the
    references' findings follow (:func:`karta.model.validate_references.check_references`)."""
    # Imported here: loading a definition must not pay for the jq front end.
    from karta.jq.parser import parse_cached as parse
    from karta.jq.parser import shown
    from karta.jq.safety import assignability_reason, check_safety
    from karta.jq.scope_check import compile_check, free_variables

    safety: list[Finding] = []
    assignability: list[Finding] = []
    declared = declared_references(karta)
    used: set[str] = set()
    for jf in jq_fields(karta):
        expr, where = jf.expression, jf.location
        try:
            node = parse(expr)
        except (KartaError, RecursionError) as exc:
            detail = (
                _parse_detail(shown(expr), exc)
                if isinstance(exc, KartaError)
                else "expression nested too deeply"
            )
            message = f"failed to parse JQ expression '{shown(expr)}' at '{where}': {detail}"
            safety.append(Finding(Severity.ERROR, message, where))
            continue
        own = is_reference_field(where)
        if declared:
            read = free_variables(node) & declared
            if own and read:
                names = ", ".join(f"${n}" for n in sorted(read))
                message = (
                    f"JQ expression '{expr}' at '{where}' reads {names}: a reference's expressions see only "
                    "the workload (references are resolved before any expression runs)"
                )
                safety.append(Finding(Severity.ERROR, message, where))
            elif not own:
                used |= read
        undefined = compile_check(node, declared=declared)
        if undefined is not None:
            if declared and undefined.startswith("$") and undefined.endswith(" is not defined"):
                undefined += f" (declare it in {REFERENCES_PATH} to read a related object)"
            message = f"failed to compile JQ expression '{expr}' at '{where}': {undefined}"
            safety.append(Finding(Severity.ERROR, message, where))
        for issue in check_safety(node):
            safety.append(
                Finding(
                    _severity(issue.severity),
                    f"JQ expression '{expr}' at '{where}' failed validation: {issue.reason}",
                    where,
                )
            )
        reason = assignability_reason(node) if jf.written else None
        if reason is not None:
            assignability.append(_not_assignable(jf, reason))
    safety.extend(check_references(karta, frozenset(used)))
    return safety, assignability


def _not_assignable(jf: JqField, reason: str) -> Finding:
    """The R6 warning of one write-back path that is not assignable."""
    from karta.jq.parser import shown

    head = f"JQ expression '{shown(jf.expression)}' at '{jf.location}': path is not assignable ({reason})"
    if jf.action:
        tail = "suspending or resuming through it will fail"
    else:
        tail = "reading works, but writing a pod spec back through it fails (kli never writes pod specs back)"
    return Finding(Severity.WARNING, f"{head}; {tail}", jf.location)
