"""The web view's workload page as JSON: what ``kli describe`` reports about a live workload (the
component → instance → replica → pod tree of :func:`karta.report.workload_rows`, the pending pods
with the scheduler's message, conditions, recent Events, the gang state and whether the workload
is in the gang-scheduling scope: :func:`karta.report.describe_live`, what ``kli describe`` prints),
plus the row, the scheduler group objects seen in the cluster, the gang plan, the objects every
gang backend of the registry would render for it (:func:`karta.render.render`; a backend that
cannot express it says why) and the definition used (:func:`karta.model.karta_to_dict`).

Pure: the object, its pods and Events in, a dict out. Raises :class:`~karta.errors.KartaError`
when the definition cannot read the object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta import model, report
from karta.definitions import StoredDefinition, evaluator_for
from karta.errors import KartaError
from karta.gang import gang_format
from karta.render import BACKENDS, render

if TYPE_CHECKING:
    from karta.jq import Evaluator

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
    scope: report.ScopeInput | None = None,
    external_pods: Sequence[Mapping[str, Any]] = (),
    kueue_workloads: Sequence[Mapping[str, Any]] | None = None,
    kueue_pending: report.PendingInput | None = None,
    evaluator: Evaluator | None = None,
    owned: Sequence[Mapping[str, Any]] = (),
    resolve: report.Resolve | None = None,
    lineage: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """``{row, describe, groupObjects, gangPlan, gang: {backend: {objects}|{error}}, definition}``;
    ``describe.gangScope`` with ``scope`` (the namespace's labels) and gang instructions;
    ``external_pods``: the pods its external components select (extension E2: shown on them,
    never in the gang plan or the rendered objects); ``kueue_workloads``: the Kueue Workloads it
    controls, for ``describe.queue`` (None: not read, not shown); ``kueue_pending``: its
    LocalQueue's pending list, for the position of a pending Workload; ``evaluator``: the
    definition's with the workload's references bound (extension E3), else the definition's own;
    ``owned``, ``resolve`` and ``lineage``: the workloads it owns through other kinds, their
    definitions and each pod's owners' UIDs, for ``describe.ownerTree``
    (:mod:`karta.report.owner_tree`, as ``kli describe``)."""
    if definition.problems:
        raise KartaError("; ".join(definition.problems[:3]))
    evaluator = evaluator if evaluator is not None else evaluator_for(definition)
    pod_list = [dict(p) for p in pods]
    described = report.describe_live(
        definition,
        obj,
        pod_list,
        events,
        events_read=events_read,
        warnings=warnings,
        gpu_resources=gpu_resources,
        evaluator=evaluator,
        scope=scope,
        external_pods=external_pods,
        kueue_workloads=kueue_workloads,
        kueue_pending=kueue_pending,
        owned=owned,
        resolve=resolve,
        lineage=lineage,
    )
    describe = described.report
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
    if gang_format(definition.karta) is not None:
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
