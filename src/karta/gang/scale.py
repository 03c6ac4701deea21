"""Subtree scale, the gang minimum of a component (docs/spec/format.md#subtree-scale), and subtree desired,
the desired pod count used by backends that need it (docs/spec/gang-backends.md#desired).

Both follow one walk of the component tree (iterative: no input reaches Python's recursion limit)
and differ only in the per-instance value: ``effMin`` prefers
``minReplicas`` (the elastic lower bound), ``effDesired`` prefers ``replicas``. When no component of
the Karta has a ``scaleDefinition``, both count pod-bearing components instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from karta.errors import GangError
from karta.extract.types import Scale
from karta.gang._types import FactoryLike
from karta.gang.structure import StructureSummary, structure_summary

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
    """The desired pod count of ``component``'s subtree (docs/spec/gang-backends.md#desired); errors as
    subtree_scale."""
    return _Recursion(factory, summary, effective_desired).run(component, instance_id)


class _Recursion:
    def __init__(self, factory: FactoryLike, summary: StructureSummary | None, per_instance: PerInstance):
        self.factory = factory
        self.summary = summary if summary is not None else structure_summary(factory.karta)
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
        """``own × below`` (or whichever is not 0), without recursion: each component's own scale
        is read on the way down in definition order, children's sums are combined on the way up."""
        # frames: [component, own, children, next child, children's sum]
        stack: list[list[Any]] = []

        def push(name: str, instance: str | None) -> None:
            self._enter(name)
            own = self._own(name, instance)
            stack.append([name, own, self.summary.children.get(name, []), 0, 0])

        try:
            push(component, instance_id)
            while True:
                frame = stack[-1]
                name, own, children, index, below = frame
                if index < len(children):
                    frame[3] = index + 1
                    push(children[index], None)
                    continue
                stack.pop()
                self._visiting.discard(name)
                value = own if not children or below == 0 else below if own == 0 else own * below
                if not stack:
                    return int(value)
                stack[-1][4] += value
        finally:
            for frame in stack:
                self._visiting.discard(frame[0])

    def _by_counting(self, component: str, instance_id: str | None) -> int:
        """Pod-bearing components count 1 (or their instances); others the sum of their children;
        without recursion."""
        if instance_id is not None:
            self._check_instance(component, instance_id)
        total = 0
        pending: list[tuple[str, str | None]] = [(component, instance_id)]
        while pending:
            name, instance = pending.pop()
            definition = self.summary.components[name]
            if definition.is_pod_bearing:
                if instance is not None or not definition.instance_id_path:
                    total += 1
                else:
                    total += len(self.factory.component(name).instance_ids())
                continue
            self._enter(name)  # a component met twice below one start is a cycle
            pending.extend((child, None) for child in reversed(self.summary.children.get(name, [])))
        self._visiting.clear()
        return total
