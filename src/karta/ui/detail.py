"""The web view's workload page as JSON: what ``kli describe`` reports about a live workload (the
component → instance → replica → pod tree of :func:`karta.report.workload_rows`, the pending pods
with the scheduler's message, conditions and recent Events: :func:`karta.report.describe_report`),
plus the row, the scheduler group objects seen in the cluster, the gang plan, the objects every
gang backend of the registry would render for it (:func:`karta.render.render`; a backend that
cannot express it says why) and the definition used (:func:`karta.model.karta_to_dict`).

Pure: the object, its pods and Events in, a dict out. Raises :class:`~karta.errors.KartaError`
when the definition cannot read the object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta import model, report
from karta.definitions import StoredDefinition
from karta.errors import KartaError
from karta.jq import Evaluator
from karta.render import BACKENDS, render
from karta.ui.rows import has_gang

__all__ = ["workload_detail"]


def workload_detail(
    obj: Mapping[str, Any],
    definition: StoredDefinition,
    *,
    row: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    events_read: bool,
    warnings: Sequence[str],
    group_objects: Sequence[str],
    gpu_resources: Sequence[str],
) -> dict[str, Any]:
    """``{row, describe, groupObjects, gangPlan, gang: {backend: {objects}|{error}}, definition}``."""
    if definition.problems:
        raise KartaError("; ".join(definition.problems[:3]))
    evaluator = Evaluator(trusted=definition.trusted)
    pod_list = [dict(p) for p in pods]
    built = report.workload_rows(
        definition.karta, obj, evaluator=evaluator, gpu_resources=gpu_resources, pods=pod_list
    )
    live = report.live_details(obj, pod_list, events, warnings=warnings, events_read=events_read)
    describe = report.describe_report(
        obj=obj,
        definition=definition.name,
        origin=definition.origin,
        tree=built.tree,
        rows=built.rows,
        file_mode=False,
        live=live,
        pods_complete=built.pods_complete,
    )
    out: dict[str, Any] = {
        "row": dict(row),
        "describe": describe,
        "groupObjects": list(group_objects),
        "gangPlan": None,
        "gang": {},
        "definition": {
            "name": definition.name,
            "origin": definition.origin,
            "source": definition.source,
            "spec": model.karta_to_dict(definition.karta),
        },
    }
    if has_gang(definition):
        from karta.extract import ComponentFactory
        from karta.gang import compute_gang_plan

        factory = ComponentFactory(definition.karta, dict(obj), evaluator=evaluator)
        try:
            plan = compute_gang_plan(factory, pod_list, evaluator=evaluator)
        except KartaError as exc:
            out["gangPlan"] = {"error": str(exc)}
            return out
        out["gangPlan"] = plan.to_dict()
        for name in BACKENDS:
            try:
                rendered = render(name, factory, pods=pod_list, plan=plan)
            except KartaError as exc:
                out["gang"][name] = {"error": str(exc)}
                continue
            out["gang"][name] = {"objects": list(rendered.objects), "warnings": list(rendered.warnings)}
    return out
