"""Extraction from workload objects: components, instances, pod specs, scale, write-back, pods, trees.

Names are resolved lazily (PEP 562): importing the package, or one light module of it, costs nothing
until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "Component": "karta.extract.factory",
    "ComponentFactory": "karta.extract.factory",
    "PodQuerier": "karta.extract.pods",
    "ComponentNode": "karta.extract.tree",
    "InstanceNode": "karta.extract.tree",
    "WorkloadTree": "karta.extract.tree",
    "build_tree": "karta.extract.tree",
    "ExtractedInstance": "karta.extract.types",
    "Scale": "karta.extract.types",
}

__all__ = [
    "Component",
    "ComponentFactory",
    "ComponentNode",
    "ExtractedInstance",
    "InstanceNode",
    "PodQuerier",
    "Scale",
    "WorkloadTree",
    "build_tree",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.extract.factory import Component, ComponentFactory
    from karta.extract.pods import PodQuerier
    from karta.extract.tree import ComponentNode, InstanceNode, WorkloadTree, build_tree
    from karta.extract.types import ExtractedInstance, Scale
