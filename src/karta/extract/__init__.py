"""Extraction from workload objects: components, instances, pod specs, scale, write-back, pods, trees."""

from __future__ import annotations

from karta.extract.factory import Component, ComponentFactory
from karta.extract.pods import PodQuerier
from karta.extract.tree import ComponentNode, InstanceNode, WorkloadTree, build_tree
from karta.extract.types import ExtractedInstance, Scale

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
