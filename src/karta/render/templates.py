"""Pod templates of components as renderers need them: one PodTemplateSpec per instance whatever the
definition's style (docs/spec/gang-backends.md#kueue-rendering step 2), and the priority class all templates
agree on (docs/spec/gang-backends.md#volcano-rendering step 4).

- ``podTemplateSpecPath``: the template as extracted;
- ``podSpecPath`` (+ ``metadataPath``): the spec with the instance's metadata;
- fragmented: assembled onto an empty template: ``containers``, plus ``container`` appended when it
  is not already among them; ``resources`` applied to the first container when no container
  declares resources (``image`` likewise when it has none); affinities under ``affinity``; scheduler
  name, priority class and resource claims into the spec; labels and annotations into metadata.

Metadata is always reduced to labels and annotations.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from karta.extract import ComponentFactory

__all__ = ["agreed_priority_class", "component_templates"]


def _reduce_metadata(metadata: Any) -> dict[str, Any]:
    if not isinstance(metadata, Mapping):
        return {}
    return {k: copy.deepcopy(metadata[k]) for k in ("labels", "annotations") if metadata.get(k)}


def _template(metadata: Any, spec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    reduced = _reduce_metadata(metadata)
    if reduced:
        out["metadata"] = reduced
    out["spec"] = copy.deepcopy(spec) if isinstance(spec, Mapping) else {}
    return out


def _same_container(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) and isinstance(b, Mapping) and a.get("name") and b.get("name"):
        return bool(a.get("name") == b.get("name"))
    return bool(a == b)


def _assemble(fragment: Mapping[str, Any]) -> dict[str, Any]:
    containers = [copy.deepcopy(c) for c in fragment.get("containers") or []]
    single = fragment.get("container")
    if single and not any(_same_container(single, c) for c in containers):
        containers.append(copy.deepcopy(single))
    first = containers[0] if containers and isinstance(containers[0], dict) else None
    resources = fragment.get("resources")
    if (
        first is not None
        and resources
        and not any(isinstance(c, Mapping) and c.get("resources") for c in containers)
    ):
        first["resources"] = copy.deepcopy(resources)
    if first is not None and fragment.get("image") and not first.get("image"):
        first["image"] = fragment["image"]
    spec: dict[str, Any] = {}
    if fragment.get("schedulerName"):
        spec["schedulerName"] = fragment["schedulerName"]
    if fragment.get("priorityClassName"):
        spec["priorityClassName"] = fragment["priorityClassName"]
    spec["containers"] = containers
    affinity = {
        key: copy.deepcopy(fragment[key]) for key in ("nodeAffinity", "podAffinity") if fragment.get(key)
    }
    if affinity:
        spec["affinity"] = affinity
    if fragment.get("resourceClaims"):
        spec["resourceClaims"] = copy.deepcopy(fragment["resourceClaims"])
    return _template(fragment, spec)


def component_templates(factory: ComponentFactory, component: str) -> dict[str, dict[str, Any]]:
    """Instance id → PodTemplateSpec (metadata reduced to labels and annotations); empty for a
    component that is not pod-bearing."""
    comp = factory.component(component)
    templates = comp.pod_template_specs()
    if templates is not None:
        return {
            i: _template(t.get("metadata"), t.get("spec"))
            if isinstance(t, Mapping)
            else _template(None, None)
            for i, t in templates.items()
        }
    specs = comp.pod_specs()
    if specs is not None:
        metadata = comp.pod_metadata() or {}
        return {i: _template(metadata.get(i), s) for i, s in specs.items()}
    fragments = comp.fragmented_pod_specs()
    if fragments is not None:
        return {i: _assemble(f) for i, f in fragments.items()}
    return {}


def agreed_priority_class(factory: ComponentFactory) -> str | None:
    """The ``priorityClassName`` every pod template of every pod-bearing component carries, or None
    when one lacks it or they differ."""
    values: set[str] = set()
    for definition in factory.karta.components:
        if not definition.is_pod_bearing:
            continue
        for template in component_templates(factory, definition.name).values():
            values.add(str(template["spec"].get("priorityClassName") or ""))
    if len(values) == 1:
        (value,) = values
        return value or None
    return None
