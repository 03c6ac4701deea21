"""``minResources`` of a gang (gang-backends.md 4.4 step 6, 5.4 step 4): Σ of ``minimum pods ×
per-replica request``, with per-replica requests as in karta-format.md 17.5 and the minimums of
subtree scale (12.6), so that nested scales multiply exactly as they do for ``minMember``.

Per-replica request: for template and spec styles, the larger of the biggest init container and the
sum of containers plus restartable sidecars, pod-level requests overriding, pod overhead added; for
fragmented specs, the sum of ``containers`` plus ``container``, or ``resources`` when neither
declares any. Each resource takes its request, falling back to its limit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from karta.errors import GangError
from karta.extract import ComponentFactory
from karta.gang import Gang, StructureSummary, effective_min, subtree_scale

__all__ = ["add_min_resources", "format_quantity", "gang_min_resources", "parse_quantity", "replica_requests"]

Vector = dict[str, Decimal]

_SUFFIXES = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def parse_quantity(value: Any) -> Decimal:
    """A Kubernetes quantity (``500m``, ``16Gi``, ``1e3``, ``2``) as a Decimal."""
    if isinstance(value, bool):
        raise GangError(f"invalid resource quantity {value!r}")
    if isinstance(value, int | float):
        return Decimal(str(value))
    match = _QUANTITY.match(str(value).strip())
    if match is None or match.group(2) not in _SUFFIXES:
        raise GangError(f"invalid resource quantity {value!r}")
    try:
        return Decimal(match.group(1)) * _SUFFIXES[match.group(2)]
    except InvalidOperation:
        raise GangError(f"invalid resource quantity {value!r}") from None


def format_quantity(resource: str, value: Decimal) -> str:
    """Canonical text: integers plain (binary suffixes for exact memory/storage sizes), else
    millis (``1500m``), else the decimal value."""
    if value == value.to_integral_value():
        number = int(value)
        if number and ("memory" in resource or "storage" in resource):
            for suffix, size in _BINARY:
                if number % size == 0:
                    return f"{number // size}{suffix}"
        return str(number)
    millis = value * 1000
    if millis == millis.to_integral_value():
        return f"{int(millis)}m"
    return format(value.normalize(), "f")


def _add(target: Vector, other: Mapping[str, Decimal], factor: int | Decimal = 1) -> None:
    for key, value in other.items():
        target[key] = target.get(key, Decimal(0)) + value * factor


def _container_requests(container: Any) -> Vector:
    out: Vector = {}
    if not isinstance(container, Mapping):
        return out
    resources = container.get("resources")
    if not isinstance(resources, Mapping):
        return out
    for part in ("limits", "requests"):  # requests override limits
        values = resources.get(part)
        if isinstance(values, Mapping):
            for key, value in values.items():
                out[str(key)] = parse_quantity(value)
    return out


def _pod_spec_requests(spec: Any) -> Vector:
    if not isinstance(spec, Mapping):
        return {}
    total: Vector = {}
    for container in spec.get("containers") or []:
        _add(total, _container_requests(container))
    inits = [c for c in spec.get("initContainers") or [] if isinstance(c, Mapping)]
    for init in inits:
        if init.get("restartPolicy") == "Always":
            _add(total, _container_requests(init))
    for init in inits:
        if init.get("restartPolicy") != "Always":
            for key, value in _container_requests(init).items():
                total[key] = max(total.get(key, Decimal(0)), value)
    pod_level = _container_requests({"resources": spec.get("resources")})
    total.update({k: v for k, v in pod_level.items() if k in ("cpu", "memory")})
    overhead = spec.get("overhead")
    if isinstance(overhead, Mapping):
        _add(total, {str(k): parse_quantity(v) for k, v in overhead.items()})
    return total


def _fragment_requests(fragment: Mapping[str, Any]) -> Vector:
    total: Vector = {}
    for container in fragment.get("containers") or []:
        _add(total, _container_requests(container))
    if fragment.get("container"):
        _add(total, _container_requests(fragment["container"]))
    if total:
        return total
    return _container_requests({"resources": fragment.get("resources")})


def replica_requests(factory: ComponentFactory, component: str) -> dict[str, Vector]:
    """Instance id → per-replica request of a pod-bearing component (empty when it has none)."""
    comp = factory.component(component)
    templates = comp.pod_template_specs()
    if templates is not None:
        return {
            i: _pod_spec_requests(t.get("spec") if isinstance(t, Mapping) else None)
            for i, t in templates.items()
        }
    specs = comp.pod_specs()
    if specs is not None:
        return {i: _pod_spec_requests(s) for i, s in specs.items()}
    fragments = comp.fragmented_pod_specs()
    if fragments is not None:
        return {i: _fragment_requests(f) for i, f in fragments.items()}
    return {}


class _MinResources:
    """The resource vector of subtree_scale's recursion (12.6): pod-bearing components contribute
    ``effMin × request`` per instance; a scaled parent multiplies its children's total."""

    def __init__(self, factory: ComponentFactory, summary: StructureSummary) -> None:
        self.factory = factory
        self.summary = summary

    def run(self, component: str) -> Vector:
        if self.summary.has_scale_definition:
            return self._by_definition(component, frozenset())
        return self._by_counting(component, frozenset())

    def _own(self, component: str) -> tuple[int, Vector]:
        definition = self.summary.components[component]
        if definition.scale_definition is None:
            return 0, {}
        scales = self.factory.component(component).scales() or {}
        requests = replica_requests(self.factory, component) if definition.is_pod_bearing else {}
        count, vector = 0, Vector()
        for instance, scale in scales.items():
            minimum = effective_min(scale)
            count += minimum
            _add(vector, requests.get(instance, {}), minimum)
        return count, vector

    def _by_definition(self, component: str, seen: frozenset[str]) -> Vector:
        if component in seen:
            raise GangError(f"ownership cycle detected involving component {component}")
        own_count, own_vector = self._own(component)
        children = self.summary.children.get(component, [])
        below: Vector = {}
        below_count = 0
        for child in children:
            _add(below, self._by_definition(child, seen | {component}))
            below_count += subtree_scale(self.factory, child, summary=self.summary)
        if not children or below_count == 0:
            return own_vector
        if own_count == 0:
            return below
        return {k: v * own_count for k, v in below.items()}

    def _by_counting(self, component: str, seen: frozenset[str]) -> Vector:
        if component in seen:
            raise GangError(f"ownership cycle detected involving component {component}")
        definition = self.summary.components[component]
        if definition.is_pod_bearing:
            total: Vector = {}
            for vector in replica_requests(self.factory, component).values():
                _add(total, vector)
            return total
        out: Vector = {}
        for child in self.summary.children.get(component, []):
            _add(out, self._by_counting(child, seen | {component}))
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
    summary = StructureSummary(factory.karta)
    recursion = _MinResources(factory, summary)
    total: Vector = {}
    if gang.sub_groups:
        for sub in gang.sub_groups:
            _add(total, recursion.run(sub.component))
    else:
        component = gang.component or summary.root_name
        if subtree_scale(factory, component, summary=summary) != gang.min_member:
            return None
        _add(total, recursion.run(component))
    out = {key: format_quantity(key, total[key]) for key in sorted(total) if total[key] > 0}
    return out or None
