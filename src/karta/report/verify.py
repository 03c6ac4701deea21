"""A definition checked against a real workload manifest and written-down predictions (R16; ``kli
verify``): paths that extract nothing, pod specs without containers, components without instances,
a status that resolves to ``Undefined``, then status, instances, replicas and the gang compared
with the predictions.

What a user would call a failure (issue 28; ``tests/catalog/test_catalog_verify.py`` runs every
catalog definition on every corpus manifest of its kind):

- an optional part absent from this workload is not one: an instance with replicas 0 and nothing
  extracted (a TFJob without a chief: ``ok ... replicas 0: not part of this workload``, its empty
  spec paths not warned about), or a component with no instances while another pod-bearing
  component has some (``warn``; with none anywhere it is a ``FAIL``);
- a pod template or pod spec without containers is one; a fragmented pod spec needs none (the
  operator builds the containers from the fragments), and an empty one extracts nothing;
- a definition with no pod-bearing component at all shows none of the workload's pods: a
  ``FAIL``; so is one whose pod-bearing components extract nothing from this workload, unless they
  are fragmented ones the workload leaves to the operator's defaults (``warn``).

The predictions::

    status: Running                 # the primary status (or matched: [Running, Degraded])
    phase: Running                  # the raw phase
    components:
      worker:
        instances: [""]             # instance ids, in any order
        replicas: 4                 # total over the instances, or {instance id: N}
        minReplicas: 2              # likewise; maxReplicas too
    gang: {name: job, minMember: 5, minSubGroup: 2, subGroups: {worker: 4}}
    pods:                           # with the workload's pods (kli verify --pods)
      train-worker-0: {component: worker, instance: "", gang: job, subGroup: worker}

With the workload's real pods each pod is placed by the library's pod matching
(:mod:`karta.report.placement`): a pod no component claims, a component chosen although its type
selector does not match the pod (the placeholder labels of a draft), an instance that cannot be
matched, a pod outside every gang (or every sub-group of its gang) and a place other than the
predicted one are failures.

Every check is one :class:`Check`: ``ok``, ``fail`` or ``warn``, with its subject and message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta._records import record
from karta.definitions import evaluator_for
from karta.errors import KartaError, PredictionError, ValidationError
from karta.extract import Component, ComponentFactory, Scale
from karta.gang import GangPlan, compute_gang_plan
from karta.jq import Evaluator
from karta.model import ComponentDefinition, Karta, validate_or_raise
from karta.report.placement import Placement, place_pods

__all__ = ["Check", "check_predictions", "run_checks"]

_PREDICTION_KEYS = ("status", "matched", "phase", "components", "gang", "pods")
_POD_KEYS = ("component", "instance", "replica", "gang", "subGroup")
_COMPONENT_KEYS = ("instances", "replicas", "minReplicas", "maxReplicas")
_GANG_KEYS = ("name", "minMember", "minSubGroup", "subGroups")
_SPEC_LABEL = {"template": "pod template", "podSpec": "pod spec", "fragmented": "fragmented pod spec"}
_SCALE_ATTR = {"replicas": "replicas", "minReplicas": "min_replicas", "maxReplicas": "max_replicas"}


@record(frozen=False)
class Check:
    result: str  # "ok", "fail" or "warn"
    subject: str  # "definition", "status", "component <name>", "gang"
    message: str
    expression: str = ""  # the jq expression a path check is about

    def to_dict(self) -> dict[str, str]:
        out = {"result": self.result, "subject": self.subject, "message": self.message}
        if self.expression:
            out["expression"] = self.expression
        return out


class _Checks:
    def __init__(self) -> None:
        self.items: list[Check] = []

    def ok(self, subject: str, message: str) -> None:
        self.items.append(Check("ok", subject, message))

    def fail(self, subject: str, message: str) -> None:
        self.items.append(Check("fail", subject, message))

    def warn(self, subject: str, message: str, expression: str = "") -> None:
        self.items.append(Check("warn", subject, message, expression))

    def expect(self, subject: str, what: str, expected: Any, actual: Any) -> None:
        what = f"{what} " if what else ""
        if expected == actual:
            self.ok(subject, f"{what}{_show(actual)} as predicted")
        else:
            self.fail(subject, f"expected {what}{_show(expected)}, got {_show(actual)}")


def _show(value: Any) -> str:
    if value is None or value == "":  # an unset phase reads the same whether absent or empty
        return "none"
    if isinstance(value, list):
        return (
            "["
            + ", ".join(_show(v) if not isinstance(v, str) else repr(v) if v == "" else v for v in value)
            + "]"
        )
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k or repr(k)}: {_show(v)}" for k, v in value.items()) + "}"
    return str(value)


_FRAGMENT_ATTRS = (
    "scheduler_name_path",
    "labels_path",
    "annotations_path",
    "resources_path",
    "resource_claims_path",
    "pod_affinity_path",
    "node_affinity_path",
    "containers_path",
    "container_path",
    "priority_class_name_path",
    "image_path",
)


def _camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(w.capitalize() for w in rest)


def _paths(definition: ComponentDefinition) -> list[tuple[str, str]]:
    """``(field, expression)`` of the component's read paths (write-only suspend paths excluded)."""
    out: list[tuple[str, str]] = []

    def add(prefix: str, model: Any, attrs: tuple[str, ...]) -> None:
        for attr in attrs:
            value = getattr(model, attr, None)
            if isinstance(value, str) and value:
                out.append((f"{prefix}.{_camel(attr)}", value))

    spec = definition.spec_definition
    if spec is not None:
        add("specDefinition", spec, ("pod_template_spec_path", "pod_spec_path", "metadata_path"))
        if spec.fragmented_pod_spec_definition is not None:
            add(
                "specDefinition.fragmentedPodSpecDefinition",
                spec.fragmented_pod_spec_definition,
                _FRAGMENT_ATTRS,
            )
    if definition.scale_definition is not None:
        add(
            "scaleDefinition",
            definition.scale_definition,
            ("replicas_path", "min_replicas_path", "max_replicas_path"),
        )
    if definition.instance_id_path:
        out.append(("instanceIdPath", definition.instance_id_path))
    status = definition.status_definition
    if status is not None:
        if status.phase_definition is not None:
            add("statusDefinition.phaseDefinition", status.phase_definition, ("path",))
        if status.conditions_definition is not None:
            add("statusDefinition.conditionsDefinition", status.conditions_definition, ("path",))
    return out


def _summary(ids: list[str], scales: Mapping[str, Scale] | None) -> str:
    plural = "s" if len(ids) != 1 else ""
    text = "1 instance" if ids == [""] else f"{len(ids)} instance{plural} {_show(ids)}"
    replicas = [s.replicas for s in (scales or {}).values()]
    if replicas and all(r is not None for r in replicas):
        text += f", replicas {_show(replicas) if len(replicas) > 1 else replicas[0]}"
    return text


def _empty(results: list[Any]) -> bool:
    return all(r is None for r in results)


def _has_containers(spec: Any) -> bool:
    if not isinstance(spec, dict):
        return False
    containers = spec.get("containers")
    return isinstance(containers, list) and len(containers) > 0


def _is_empty(value: Any) -> bool:
    """An extracted pod spec with nothing in it: the path found nothing (the extractors turn that
    into ``{}``), so there is no spec to judge; the path checks already said so."""
    return isinstance(value, dict) and not any(v not in (None, {}, []) for v in value.values())


def _component_checks(
    comp: Component,
    checks: _Checks,
    evaluator: Evaluator,
    obj: dict[str, Any],
    predicted: dict[str, Any] | None,
    *,
    others_present: bool,
) -> bool:
    """Checks of one component; True when some instance has a pod spec: a pod template or pod
    spec with containers, or a fragmented one with anything in it (the operator builds the
    containers of a fragmented spec). ``others_present``: another pod-bearing component has
    instances, so this one having none is an optional part absent from the workload (warn)."""
    subject = f"component {comp.name}"
    try:
        ids = comp.instance_ids()
        extracted = {
            "template": comp.pod_template_specs(),
            "podSpec": comp.pod_specs(),
            "fragmented": comp.fragmented_pod_specs(),
        }
        scales = comp.scales()
    except KartaError as exc:
        ids, extracted, scales, error = [], {}, None, str(exc)
    else:
        error = ""
    # An optional replica type absent from this workload (a TFJob without a chief): replicas 0
    # on every instance and nothing extracted. Its empty spec paths are not worth a warning.
    absent = (
        bool(ids)
        and all((scales or {}).get(i) is not None and (scales or {})[i].replicas == 0 for i in ids)
        and all(v is None or _is_empty(v) for specs in extracted.values() for v in (specs or {}).values())
    )
    for field, expr in _paths(comp.definition):
        if absent and field.startswith("specDefinition"):
            continue
        try:
            results = evaluator.evaluate(expr, obj)
        except KartaError as exc:
            checks.fail(subject, f"{field} fails: {exc}")
            continue
        if _empty(results):
            checks.warn(subject, f"{field} extracts nothing", expr)
    if error:
        checks.fail(subject, error)
        return False
    expect_none = predicted is not None and predicted.get("instances") == []
    if not ids and not expect_none:
        if others_present:
            checks.warn(subject, "has no instances: not part of this workload")
        else:
            checks.fail(subject, "has no instances")
    elif ids:
        checks.ok(subject, _summary(ids, scales) + (": not part of this workload" if absent else ""))
    found = False
    for style, specs in extracted.items():
        for instance, value in (specs or {}).items():
            where = f"instance {instance!r}: " if instance else ""
            if value is None:
                continue  # reported above as a path that extracts nothing
            scale = (scales or {}).get(instance)
            if _is_empty(value) and (style == "fragmented" or (scale is not None and scale.replicas == 0)):
                continue  # nothing to judge: an absent replica type, or no pod field set
            if style == "fragmented":
                found = True
                continue
            inner = value.get("spec") if style == "template" and isinstance(value, dict) else value
            if _has_containers(inner):
                found = True
            else:
                checks.fail(subject, f"{where}{_SPEC_LABEL[style]} has no containers")
    if predicted is None:
        return found
    if "instances" in predicted:
        expected = [str(i) for i in predicted["instances"] or []]
        if sorted(expected) == sorted(ids):
            checks.ok(subject, f"instances {_show(ids)} as predicted")
        else:
            checks.fail(subject, f"expected instances {_show(expected)}, got {_show(ids)}")
    for key, attr in _SCALE_ATTR.items():
        if key not in predicted:
            continue
        actual = {i: getattr(s, attr) for i, s in (scales or {}).items()}
        want = predicted[key]
        if isinstance(want, dict):
            for instance, value in want.items():
                label = f"instance {instance}: {key}" if len(actual) > 1 or instance else key
                checks.expect(subject, label, value, actual.get(str(instance)))
        else:
            values = [v for v in actual.values() if v is not None]
            total = sum(values) if values else None
            label = key if len(actual) <= 1 else f"{key} in total"
            checks.expect(subject, label, want, total)
    return found


def _status_checks(root: Component, checks: _Checks, predictions: Mapping[str, Any]) -> None:
    try:
        status = root.status()
    except KartaError as exc:
        checks.fail("status", str(exc))
        return
    if status is None:
        checks.fail("status", "the root component has no status definition")
        return
    for diagnostic in status.diagnostics:
        checks.warn("status", diagnostic.message)
    primary = str(status.primary)
    matched = [str(m) for m in status.matched]
    predicted = predictions.get("status")
    if predicted is not None:
        checks.expect("status", "", str(predicted), primary)
    elif primary == "Undefined" and predictions.get("matched") != ["Undefined"]:
        checks.fail("status", "resolves to Undefined: no status mapping matches this object")
    else:
        checks.ok("status", f"{primary} (matched: {', '.join(matched)}; phase: {_show(status.phase)})")
    if "matched" in predictions:
        want = [str(m) for m in predictions["matched"] or []]
        if sorted(want) == sorted(matched):
            checks.ok("status", f"matched {_show(matched)} as predicted")
        else:
            checks.fail("status", f"expected matched {_show(want)}, got {_show(matched)}")
    if "phase" in predictions:
        checks.expect("status", "phase", predictions["phase"], status.phase)


def _gang_checks(factory: ComponentFactory, checks: _Checks, predicted: dict[str, Any]) -> None:
    try:
        plan = compute_gang_plan(factory)
    except KartaError as exc:
        checks.fail("gang", str(exc))
        return
    gangs = list(plan.gangs)
    name = predicted.get("name")
    chosen = gangs if name is None else [g for g in gangs if name in (g.name, g.qualified_name)]
    if len(chosen) != 1:
        names = ", ".join(g.qualified_name for g in gangs) or "none"
        why = f"no gang named {name}" if name is not None and not chosen else f"{len(chosen)} gangs"
        checks.fail("gang", f"{why} (gangs: {names}); name the one to check with gang.name")
        return
    gang = chosen[0]
    subject = f"gang {gang.qualified_name}"
    if "minMember" in predicted:
        checks.expect(subject, "minMember", predicted["minMember"], gang.min_member)
    if "minSubGroup" in predicted:
        checks.expect(subject, "minSubGroup", predicted["minSubGroup"], gang.min_sub_group)
    subs = {s.name: s.min_member for s in gang.sub_groups}
    for sub, value in (predicted.get("subGroups") or {}).items():
        checks.expect(subject, f"sub-group {sub} minMember", value, subs.get(sub))


def check_predictions(data: Any) -> dict[str, Any]:
    """``data`` (one parsed YAML document) as predictions, or :class:`PredictionError` naming the
    first key or value that is not one (see the module docstring for the shape)."""
    if not isinstance(data, dict):
        raise PredictionError("expected one YAML mapping of predictions")
    _known(data, _PREDICTION_KEYS, "")
    for comp, value in _by_name(data, "components", _COMPONENT_KEYS, "component").items():
        for key in _SCALE_ATTR:
            v = value.get(key)
            if v is not None and not isinstance(v, int | dict):
                raise PredictionError(f"components.{comp}.{key} must be a number or {{instance: number}}")
        if "instances" in value and not isinstance(value["instances"], list | type(None)):
            raise PredictionError(f"components.{comp}.instances must be a list")
    gang = data.get("gang")
    if gang is not None:
        if not isinstance(gang, dict):
            raise PredictionError("gang must be a mapping")
        _known(gang, _GANG_KEYS, "gang.")
    if "matched" in data and not isinstance(data["matched"], list):
        raise PredictionError("matched must be a list of statuses")
    _by_name(data, "pods", _POD_KEYS, "pod")
    return data


def _by_name(data: dict[str, Any], key: str, allowed: tuple[str, ...], what: str) -> dict[Any, Any]:
    """``data[key]``: a mapping of names to mappings with only ``allowed`` keys (or nothing)."""
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise PredictionError(f"{key} must map {what} names to predictions")
    for name, entry in (value or {}).items():
        if not isinstance(entry, dict):
            raise PredictionError(f"{key}.{name} must be a mapping")
        _known(entry, allowed, f"{key}.{name}.")
    return value or {}


def _known(data: dict[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise PredictionError(
            f"unknown prediction {prefix}{unknown[0]}; expected one of {', '.join(allowed)}"
        )


def run_checks(
    karta: Karta,
    obj: dict[str, Any],
    predictions: Mapping[str, Any],
    *,
    trusted: bool,
    pods: Sequence[Mapping[str, Any]] = (),
    evaluator: Evaluator | None = None,
) -> list[Check]:
    """All checks of ``karta`` on ``obj`` (and its ``pods``, when given) against
    ``predictions`` (:func:`check_predictions`; ``{}`` for none); ``trusted`` only for built-in
    definitions (expressions run in-process). An invalid definition is one failed check, and
    nothing is evaluated."""
    checks = _Checks()
    try:
        validate_or_raise(karta)  # cached per definition object
    except ValidationError as exc:
        messages = [str(getattr(f, "message", f)) for f in exc.findings] or [str(exc)]
        checks.fail("definition", f"is not valid: {'; '.join(messages)}")
        return checks.items
    gvk = karta.root.kind
    if gvk is not None and (gvk.api_version, gvk.kind) != (obj.get("apiVersion"), obj.get("kind")):
        checks.fail(
            "definition",
            f"is for {gvk.kind} ({gvk.api_version}) but the workload is {obj.get('kind')} "
            f"({obj.get('apiVersion')})",
        )
    if evaluator is None:  # else the caller's (references bound: extension E3)
        evaluator = evaluator_for(trusted=trusted)
    factory = ComponentFactory(karta, obj, evaluator=evaluator)
    _status_checks(factory.root(), checks, predictions)
    predicted_components = predictions.get("components") or {}
    names = {c.name for c in karta.components}
    for unknown in [n for n in predicted_components if n not in names]:
        checks.fail(f"component {unknown}", "is predicted but the definition has no such component")
    present = {name for name in _with_instances(factory, karta) if name in pod_bearing_names(karta)}
    with_pods = 0
    fragmented = False
    for definition_ in karta.components:
        comp = factory.component(definition_.name)
        found = _component_checks(
            comp,
            checks,
            evaluator,
            obj,
            predicted_components.get(definition_.name),
            others_present=bool(present - {definition_.name}),
        )
        if definition_.is_pod_bearing:
            with_pods += found
            spec = definition_.spec_definition
            fragmented |= spec is not None and spec.fragmented_pod_spec_definition is not None
    if not pod_bearing_names(karta):
        checks.fail("definition", "has no component with a pod specification: it shows none of the pods")
    elif not with_pods and fragmented and present:
        checks.warn("definition", "this workload sets none of the pod fields read: the operator builds them")
    elif not with_pods:
        checks.fail("definition", "no component extracts a pod specification from this workload")
    if "gang" in predictions and predictions["gang"] is not None:
        _gang_checks(factory, checks, predictions["gang"])
    if pods or predictions.get("pods"):
        _pod_checks(karta, factory, checks, list(pods), predictions.get("pods") or {}, evaluator)
    return checks.items


def pod_bearing_names(karta: Karta) -> set[str]:
    return {c.name for c in karta.components if c.is_pod_bearing}


def _with_instances(factory: ComponentFactory, karta: Karta) -> list[str]:
    """The components with at least one instance in this workload (one that fails to evaluate has
    none here; its own checks report the failure)."""
    out = []
    for definition_ in karta.components:
        try:
            if factory.component(definition_.name).instance_ids():
                out.append(definition_.name)
        except KartaError:
            continue
    return out


def _pod_checks(
    karta: Karta,
    factory: ComponentFactory,
    checks: _Checks,
    pods: list[Mapping[str, Any]],
    predicted: Mapping[str, Any],
    evaluator: Evaluator,
) -> None:
    """Each pod placed (component, instance, replica, gang, sub-group) and checked."""
    plan: GangPlan | None = None
    if karta.gang is not None:
        try:
            plan = compute_gang_plan(factory, pods, evaluator=evaluator)
        except KartaError as exc:
            checks.fail("gang", f"cannot be computed with these pods: {exc}")
        else:
            for diagnostic in plan.diagnostics:
                if diagnostic.is_error:
                    checks.fail("gang", diagnostic.message)
                elif not diagnostic.location.startswith("pods/"):  # a pod outside every gang: below
                    checks.warn("gang", diagnostic.message)
    placements = place_pods(karta, factory, pods, evaluator=evaluator, plan=plan)
    names = {p.pod for p in placements}
    for placement in placements:
        _pod_check(placement, checks, plan, predicted.get(placement.pod))
    for missing in [str(n) for n in predicted if str(n) not in names]:
        checks.fail(f"pod {missing}", "is predicted but not among the pods given")


def _pod_check(
    p: Placement, checks: _Checks, plan: GangPlan | None, predicted: Mapping[str, Any] | None
) -> None:
    subject = f"pod {p.pod}"
    before = len(checks.items)
    labels = ", ".join(f"{k}={v}" for k, v in p.labels) or "none"
    if p.component is None:
        checks.fail(subject, f"matches no component ({'; '.join(p.problems)}); its labels: {labels}")
    else:
        if p.selector_matches is False:
            checks.fail(
                subject,
                f"is placed on {p.component} (the only pod-bearing component) but does not match its "
                f"componentTypeSelector; its labels: {labels}",
            )
        for problem in p.problems:
            checks.fail(subject, problem)
    gangs = list(plan.gangs) if plan is not None else []
    if gangs and p.gang is None:
        checks.fail(subject, f"is in no gang (gangs: {', '.join(g.qualified_name for g in gangs)})")
    gang = next((g for g in gangs if g.qualified_name == p.gang), None)
    if gang is not None and gang.sub_groups and p.sub_group is None:
        subs = ", ".join(s.name for s in gang.sub_groups)
        checks.fail(
            subject,
            f"is in gang {gang.qualified_name} but in none of its sub-groups ({subs}): no sub-group "
            "component's type selector matches it",
        )
    for key, actual in (
        ("component", p.component),
        ("instance", p.instance),
        ("replica", p.replica),
        ("gang", p.gang),
        ("subGroup", p.sub_group),
    ):
        if predicted is not None and key in predicted:
            checks.expect(subject, key, None if predicted[key] is None else str(predicted[key]), actual)
    if len(checks.items) == before:  # nothing to say but where it belongs
        where = [f"component {p.component}"]
        if p.instance:
            where.append(f"instance {p.instance}")
        if p.replica is not None:
            where.append(f"replica {p.replica}")
        if p.gang is not None:
            where.append(f"gang {p.gang}" + (f", sub-group {p.sub_group}" if p.sub_group else ""))
        checks.ok(subject, ", ".join(where))
