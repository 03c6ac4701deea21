"""Subtree scale, the gang minimum of a component (karta-format.md 12.6), and subtree desired, the
desired pod count used by backends that need it (gang-backends.md 1.4).

Both follow one recursion and differ only in the per-instance value: ``effMin`` prefers
``minReplicas`` (the elastic lower bound), ``effDesired`` prefers ``replicas``. When no component of
the Karta has a ``scaleDefinition``, both count pod-bearing components instead.
"""

from __future__ import annotations

from collections.abc import Callable

from karta.errors import GangError
from karta.extract.types import Scale
from karta.gang._types import FactoryLike
from karta.gang.structure import StructureSummary

__all__ = ["effective_desired", "effective_min", "subtree_desired", "subtree_scale"]

PerInstance = Callable[[Scale | None], int]


def effective_min(scale: Scale | None) -> int:
    """``minReplicas`` if > 0, else ``replicas`` if > 0, else 0."""
    if scale is None:
        return 0
    for value in (scale.min_replicas, scale.replicas):
        if value is not None and value > 0:
            return value
    return 0


def effective_desired(scale: Scale | None) -> int:
    """``replicas`` if > 0, else ``minReplicas`` if > 0, else 0."""
    if scale is None:
        return 0
    for value in (scale.replicas, scale.min_replicas):
        if value is not None and value > 0:
            return value
    return 0


def subtree_scale(
    factory: FactoryLike,
    component: str,
    instance_id: str | None = None,
    *,
    summary: StructureSummary | None = None,
) -> int:
    """The gang minimum of ``component``'s subtree (12.6), or of one of its instances.

    Errors (GangError): ``instance id is empty``, ``instance id <id> not found``,
    ``component <name> not found``. Extraction errors propagate.
    """
    return _Recursion(factory, summary, effective_min).run(component, instance_id)


def subtree_desired(
    factory: FactoryLike,
    component: str,
    instance_id: str | None = None,
    *,
    summary: StructureSummary | None = None,
) -> int:
    """The desired pod count of ``component``'s subtree (gang-backends.md 1.4); errors as subtree_scale."""
    return _Recursion(factory, summary, effective_desired).run(component, instance_id)


class _Recursion:
    def __init__(self, factory: FactoryLike, summary: StructureSummary | None, per_instance: PerInstance):
        self.factory = factory
        self.summary = summary if summary is not None else StructureSummary(factory.karta)
        self.per_instance = per_instance
        self._visiting: set[str] = set()

    def run(self, component: str, instance_id: str | None) -> int:
        if instance_id == "":
            raise GangError("instance id is empty")
        self.summary.definition(component)
        if self.summary.has_scale_definition:
            return self._by_definition(component, instance_id)
        return self._by_counting(component, instance_id)

    def _enter(self, component: str) -> None:
        if component in self._visiting:
            raise GangError(f"ownership cycle detected involving component {component}")
        self._visiting.add(component)

    def _check_instance(self, component: str, instance_id: str) -> None:
        if instance_id not in self.factory.component(component).instance_ids():
            raise GangError(f"instance id {instance_id} not found")

    def _own(self, component: str, instance_id: str | None) -> int:
        if instance_id is not None:
            self._check_instance(component, instance_id)
        if self.summary.components[component].scale_definition is None:
            return 0
        scales = self.factory.component(component).scales() or {}
        if instance_id is not None:
            return self.per_instance(scales.get(instance_id))
        return sum(self.per_instance(scale) for scale in scales.values())

    def _by_definition(self, component: str, instance_id: str | None) -> int:
        self._enter(component)
        try:
            own = self._own(component, instance_id)
            children = self.summary.children.get(component, [])
            if not children:
                return own
            below = sum(self._by_definition(child, None) for child in children)
        finally:
            self._visiting.discard(component)
        if below == 0:
            return own
        if own == 0:
            return below
        return own * below

    def _by_counting(self, component: str, instance_id: str | None) -> int:
        if instance_id is not None:
            self._check_instance(component, instance_id)
        definition = self.summary.components[component]
        if definition.is_pod_bearing:
            if instance_id is not None or not definition.instance_id_path:
                return 1
            return len(self.factory.component(component).instance_ids())
        self._enter(component)
        try:
            return sum(self._by_counting(child, None) for child in self.summary.children.get(component, []))
        finally:
            self._visiting.discard(component)
