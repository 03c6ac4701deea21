"""Everything the engine derives from one workload object and its pods (``kli inspect``, the stable
contract of docs/reference/commands/inspect.md): status, every component with its instances (pod
template or pod spec, scale), the gang plan, where each pod belongs, and the diagnostics that did
not stop the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from karta.errors import KartaError
from karta.extract import Component, ComponentFactory, Scale
from karta.gang import GangPlan, compute_gang_plan
from karta.gang.plan import GangPlanDict
from karta.jq import Evaluator
from karta.model import Karta, validate_or_raise
from karta.model.findings import FindingDict
from karta.report.contracts import ComponentReport, InspectReport, InstanceReport, PodPlacement, StatusReport
from karta.report.placement import place_pods
from karta.report.rows import instance_absent
from karta.status import StatusResult

__all__ = ["absent_components", "error_count", "inspect_report"]


def inspect_report(
    karta: Karta,
    obj: dict[str, Any],
    pods: Sequence[dict[str, Any]] = (),
    *,
    evaluator: Evaluator,
    diagnostics: Sequence[FindingDict] = (),
) -> InspectReport:
    """Everything ``karta`` derives from ``obj`` and its ``pods``; ``diagnostics`` (the caller's:
    load warnings, a kind mismatch) come first in the report's. Extraction errors (instance ids
    and results that do not pair up, a jq runtime error outside status matchers, …) are raised as
    :class:`~karta.errors.ExtractionError`, :class:`~karta.errors.StatusError` or
    :class:`~karta.errors.JqError`; what does not stop the run (a failing status matcher, a pod
    no component claims, a gang that cannot be computed) is a diagnostic. An invalid definition
    raises :class:`~karta.errors.ValidationError` before anything is evaluated."""
    validate_or_raise(karta)  # cached per definition object
    found: list[FindingDict] = list(diagnostics)
    factory = ComponentFactory(karta, obj, evaluator=evaluator)
    meta = _mapping(obj.get("metadata"))
    status = factory.root().status()
    if status is not None:
        found.extend(d.to_dict() for d in status.diagnostics)
    components = [_component(factory.component(c.name)) for c in karta.components]
    gang: GangPlanDict
    plan: GangPlan | None = None
    try:
        plan = compute_gang_plan(factory, pods, evaluator=evaluator)
        gang = plan.to_dict()
        found.extend(d.to_dict() for d in plan.diagnostics)
    except KartaError as exc:
        gang = {"gangs": []}
        found.append({"severity": "error", "message": str(exc), "location": "spec.optimizationInstructions"})
    placed: list[PodPlacement] = []
    for p in place_pods(karta, factory, pods, evaluator=evaluator, plan=plan):
        found.extend({"severity": "warning", "message": m, "location": f"pods/{p.pod}"} for m in p.problems)
        placed.append(
            {
                "name": p.pod,
                "component": p.component,
                "instance": p.instance,
                "replica": p.replica,
                "gang": p.gang,
            }
        )
    return {
        "definition": karta.metadata.name,
        "workload": {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
        },
        "status": _status(status),
        "components": components,
        "gang": gang,
        "pods": placed,
        "diagnostics": found,
    }


def error_count(report: InspectReport) -> int:
    """The error diagnostics of a report (``kli inspect`` exits 1 when there are any)."""
    return sum(1 for d in report["diagnostics"] if d["severity"] == "error")


def absent_components(karta: Karta, report: InspectReport) -> frozenset[str]:
    """The components of ``report`` (made through ``karta``) that ``kli inspect``'s text leaves out,
    by the rule of :func:`karta.report.rows.instance_absent` (the one ``kli describe``, ``kli get``
    and the web view use): no instance; pod-bearing with every instance absent (no pod placed on it,
    nothing desired, no pod specification); a grouping component whose child components are all
    absent (or that has none). The root is never absent. ``-o json`` keeps every component."""
    placed: dict[tuple[str, str], int] = {}
    for pod in report["pods"]:
        if pod["component"] is not None:
            key = (pod["component"], pod["instance"] or "")
            placed[key] = placed.get(key, 0) + 1
    reports = {c["name"]: c for c in report["components"]}
    definitions = {c.name: c for c in karta.children}
    children: dict[str, list[str]] = {}
    for definition in karta.children:
        children.setdefault(definition.owner_ref or "", []).append(definition.name)
    absent: set[str] = set()

    def visit(name: str) -> bool:
        below = [visit(child) for child in children.get(name, [])]  # every child decided first
        comp = reports.get(name)
        definition = definitions[name]
        if comp is None or not comp["instances"]:
            gone = True
        elif definition.is_pod_bearing:
            gone = all(
                instance_absent(
                    pods=placed.get((name, i["id"]), 0),
                    scale=Scale(i["scale"]["replicas"], i["scale"]["minReplicas"], i["scale"]["maxReplicas"]),
                    has_pod_spec=any(
                        i.get(part) for part in ("podTemplateSpec", "podSpec", "fragmentedPodSpec")
                    ),
                )
                for i in comp["instances"]
            )
        else:
            gone = all(below)
        if gone:
            absent.add(name)
        return gone

    for child in children.get(karta.root.name, []):
        visit(child)
    return frozenset(absent)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _status(status: StatusResult | None) -> StatusReport | None:
    if status is None:
        return None
    out: StatusReport = {
        "phase": status.phase,
        "conditions": [
            {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
            for c in status.conditions
        ],
        "matched": [str(m) for m in status.matched],
        "primary": str(status.primary),
    }
    if status.stale:
        out["stale"] = True
    return out


def _component(component: Component) -> ComponentReport:
    definition = component.definition
    kind = definition.kind
    instances: list[InstanceReport] = []
    for instance_id, extracted in component.extracted_instances().items():
        entry: dict[str, Any] = {"id": instance_id, **extracted.spec_parts()}
        scale = extracted.scale
        entry["scale"] = {
            "replicas": scale.replicas if scale else None,
            "minReplicas": scale.min_replicas if scale else None,
            "maxReplicas": scale.max_replicas if scale else None,
        }
        instances.append(cast("InstanceReport", entry))  # in the printed key order
    return {
        "name": definition.name,
        "kind": {"group": kind.group, "version": kind.version, "kind": kind.kind}
        if kind is not None
        else None,
        "owner": definition.owner_ref or None,
        "instances": instances,
    }
