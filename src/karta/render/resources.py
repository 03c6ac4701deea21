"""``minResources`` of a gang (docs/spec/gang-backends.md#volcano-rendering step 5, #coscheduling-rendering
step 3): Σ of ``minimum pods × per-replica request``, with the minimums of subtree scale (12.6), so that
nested scales multiply exactly as they do for ``minMember``.

Per-replica requests are the exact ones of :mod:`karta.extract.requests` (docs/spec/format.md#workload-tree)
for the component's pod style; an invalid quantity there is a GangError here.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from karta.errors import GangError, QuantityError
from karta.extract import ComponentFactory
from karta.extract.requests import (
    ResourceList,
    add_resources,
    format_quantity,
    fragment_resources,
    pod_resources,
)
from karta.extract.requests import parse_quantity as _parse_quantity
from karta.gang import Gang, StructureSummary, effective_min, structure_summary, subtree_scale

__all__ = ["add_min_resources", "gang_min_resources", "parse_quantity", "replica_requests"]


def _invalid(exc: QuantityError) -> GangError:
    return GangError(f"invalid resource quantity {exc.value!r}")


def parse_quantity(value: Any) -> Fraction:
    """A quantity of a pod spec being rendered: an invalid one is a GangError."""
    try:
        return _parse_quantity(value)
    except QuantityError as exc:
        raise _invalid(exc) from None


def replica_requests(factory: ComponentFactory, component: str) -> dict[str, ResourceList]:
    """Instance id → per-replica request of a pod-bearing component (empty when it has none)."""
    comp = factory.component(component)
    try:
        templates = comp.pod_template_specs()
        if templates is not None:
            return {
                i: pod_resources(t.get("spec") if isinstance(t, Mapping) else None)
                for i, t in templates.items()
            }
        specs = comp.pod_specs()
        if specs is not None:
            return {i: pod_resources(s) for i, s in specs.items()}
        fragments = comp.fragmented_pod_specs()
        if fragments is not None:
            return {i: fragment_resources(f) for i, f in fragments.items()}
    except QuantityError as exc:
        raise _invalid(exc) from None
    return {}


class _MinResources:
    """The resource vector of subtree_scale's recursion (12.6): pod-bearing components contribute
    ``effMin × request`` per instance; a scaled parent multiplies its children's total."""

    def __init__(self, factory: ComponentFactory, summary: StructureSummary) -> None:
        self.factory = factory
        self.summary = summary

    def run(self, component: str) -> ResourceList:
        if self.summary.has_scale_definition:
            return self._by_definition(component, frozenset())
        return self._by_counting(component, frozenset())

    def _own(self, component: str) -> tuple[int, ResourceList]:
        definition = self.summary.components[component]
        if definition.scale_definition is None:
            return 0, {}
        scales = self.factory.component(component).scales() or {}
        requests = replica_requests(self.factory, component) if definition.is_pod_bearing else {}
        count = 0
        vector: ResourceList = {}
        for instance, scale in scales.items():
            minimum = effective_min(scale)
            count += minimum
            add_resources(vector, requests.get(instance, {}), times=minimum)
        return count, vector

    def _by_definition(self, component: str, seen: frozenset[str]) -> ResourceList:
        if component in seen:
            raise GangError(f"ownership cycle detected involving component {component}")
        own_count, own_vector = self._own(component)
        children = self.summary.children.get(component, [])
        below: ResourceList = {}
        below_count = 0
        for child in children:
            add_resources(below, self._by_definition(child, seen | {component}))
            below_count += subtree_scale(self.factory, child, summary=self.summary)
        if not children or below_count == 0:
            return own_vector
        if own_count == 0:
            return below
        return {k: v * own_count for k, v in below.items()}

    def _by_counting(self, component: str, seen: frozenset[str]) -> ResourceList:
        if component in seen:
            raise GangError(f"ownership cycle detected involving component {component}")
        definition = self.summary.components[component]
        if definition.is_pod_bearing:
            total: ResourceList = {}
            for vector in replica_requests(self.factory, component).values():
                add_resources(total, vector)
            return total
        out: ResourceList = {}
        for child in self.summary.children.get(component, []):
            add_resources(out, self._by_counting(child, seen | {component}))
        return out


def add_min_resources(
    spec: dict[str, Any], *, factory: ComponentFactory, gang: Gang, warnings: list[str]
) -> None:
    """Set ``spec["minResources"]`` for the gang, or warn that it cannot be computed."""
    resources = gang_min_resources(factory, gang)
    if resources is None:
        warnings.append(f"minResources of gang {gang.qualified_name} cannot be computed; omitted")
    else:
        spec["minResources"] = resources


def gang_min_resources(factory: ComponentFactory, gang: Gang) -> dict[str, str] | None:
    """Σ over the gang's sub-groups (or its whole subtree) of ``minimum × per-replica request``,
    keys sorted; None when it cannot be computed for this gang (an alpha gang narrowed to one
    instance) or is empty."""
    summary = structure_summary(factory.karta)
    recursion = _MinResources(factory, summary)
    total: ResourceList = {}
    if gang.sub_groups:
        for sub in gang.sub_groups:
            add_resources(total, recursion.run(sub.component))
    else:
        component = gang.component or summary.root_name
        if subtree_scale(factory, component, summary=summary) != gang.min_member:
            return None
        add_resources(total, recursion.run(component))
    out = {key: format_quantity(key, total[key]) for key in sorted(total) if total[key] > 0}
    return out or None
