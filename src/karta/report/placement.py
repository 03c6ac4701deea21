"""Where each pod of a workload belongs, by the library's pod matching (docs/spec/format.md#pod-side,
#pod-membership): its component (:func:`karta.gang.infer_pod_component`), instance (11.4), replica (11.2) and
gang (and sub-group) in a computed gang plan. ``kli inspect`` shows the placements; ``kli verify
--pods`` checks them.

A placement also says what could not be decided (``problems``) and whether the component was
chosen without its type selector matching (the only pod-bearing component is chosen without
consulting selectors, 12.5, but a sub-group and KAI Scheduler still use them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta._records import record
from karta.errors import KartaError
from karta.extract import ComponentFactory, PodQuerier
from karta.extract.external import external_selectors, matches
from karta.extract.pods import PodFunctions, pod_functions
from karta.gang import GangPlan, StructureSummary, infer_pod_component, structure_summary
from karta.jq import Evaluator
from karta.model import Karta
from karta.model.validate_external import external_components

__all__ = ["Placement", "place_pods", "pod_name"]


@record
class Placement:
    """One pod's place: None where it has none (or it could not be computed: ``problems``)."""

    pod: str
    component: str | None = None
    instance: str | None = None
    replica: str | None = None
    gang: str | None = None
    sub_group: str | None = None
    problems: tuple[str, ...] = ()
    selector_matches: bool | None = None  # the component's type selector on this pod (None: none)
    labels: tuple[tuple[str, str], ...] = ()


def pod_name(pod: Mapping[str, Any]) -> str:
    """``metadata.name`` (else ``generateName``, else ``<unnamed>``)."""
    meta = pod.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return str(meta.get("name") or meta.get("generateName") or "<unnamed>")


def place_pods(
    karta: Karta,
    factory: ComponentFactory,
    pods: Sequence[Mapping[str, Any]],
    *,
    evaluator: Evaluator,
    plan: GangPlan | None,
) -> list[Placement]:
    """The placement of each of ``pods`` (in order) on ``karta``'s components for the workload of
    ``factory``, and in the gangs of ``plan`` (None: no gang could be computed)."""
    gang_of: dict[str, str] = {}
    sub_group_of: dict[str, str] = {}
    for gang in plan.gangs if plan is not None else ():
        for member in gang.members:
            gang_of.setdefault(member, gang.qualified_name)
        for sub in gang.sub_groups:
            for member in sub.members:
                sub_group_of.setdefault(member, sub.name)
    summary = structure_summary(karta)
    external = external_selectors(factory) if external_components(karta) else {}
    functions = pod_functions(karta, evaluator) if pods else None
    out: list[Placement] = []
    for pod in pods:
        # extension E2: a pod an external component selects by labels is that component's
        owner = next((name for name, labels in external.items() if matches(pod, labels)), None)
        if owner is not None:
            out.append(Placement(pod_name(pod), component=owner, labels=_labels(pod)))
            continue
        out.append(_place(summary, factory, pod, evaluator, functions, gang_of, sub_group_of))
    return out


def _labels(pod: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    meta = pod.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return tuple(sorted((str(k), str(v)) for k, v in labels.items())) if isinstance(labels, Mapping) else ()


def _place(
    summary: StructureSummary,
    factory: ComponentFactory,
    pod: Mapping[str, Any],
    evaluator: Evaluator,
    functions: PodFunctions | None,
    gang_of: dict[str, str],
    sub_group_of: dict[str, str],
) -> Placement:
    name = pod_name(pod)
    querier = PodQuerier(pod, evaluator=evaluator, functions=functions)
    labels = _labels(pod)
    gang, sub_group = gang_of.get(name), sub_group_of.get(name)
    try:
        component = infer_pod_component(summary, querier)
    except KartaError as exc:
        return Placement(name, gang=gang, sub_group=sub_group, problems=(str(exc),), labels=labels)
    extracted = factory.component(component)
    definition = extracted.definition
    selector = definition.pod_selector
    problems: list[str] = []
    matches: bool | None = None
    type_selector = selector.component_type_selector if selector is not None else None
    if type_selector is not None and (type_selector.key_path or type_selector.match_labels):
        try:
            matches = querier.matches_component_type(definition)
        except KartaError as exc:
            problems.append(str(exc))
    instance = replica = None
    try:
        if selector is not None and selector.component_instance_selector is not None:
            instance = querier.matching_instance_id(definition, list(extracted.instance_ids()))
        if selector is not None and selector.replica_selector is not None:
            replica = querier.extract_replica_key(definition)
    except KartaError as exc:
        problems.append(str(exc))
    return Placement(
        name,
        component=component,
        instance=instance,
        replica=replica,
        gang=gang,
        sub_group=sub_group,
        problems=tuple(problems),
        selector_matches=matches,
        labels=labels,
    )
