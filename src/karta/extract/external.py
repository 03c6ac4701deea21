"""Extension E2 (docs/format-extensions.md): the pods of components that are not the workload's own.

A child component with ``podSelector.externalPods`` finds its pods by a label map that
``matchLabelsExpression`` computes from the workload object (one result: an object of string
values; ``null`` or ``{}``: the component has no such pods). Live, a consumer lists the workload's
namespace with :func:`label_selector` once per such component; offline, the given pods are matched
with :func:`matches`. :func:`split_external` takes these pods out of a pod list, so that they are
shown on their component and never reach gang planning (they are not the workload's pods).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta.errors import ExtractionError, JqError
from karta.extract.factory import ComponentFactory
from karta.extract.pods import go_format

__all__ = ["external_selectors", "label_selector", "matches", "split_external"]

Pod = Mapping[str, Any]


def external_selectors(factory: ComponentFactory) -> dict[str, dict[str, str]]:
    """The label map of each external component of the factory's definition that has one (a
    component whose expression yields ``null`` or ``{}`` is left out), in definition order.

    Raises :class:`~karta.errors.ExtractionError` naming the component and expression when the
    expression fails or yields anything but one object of string values."""
    out: dict[str, dict[str, str]] = {}
    for comp in factory.karta.children:
        selector = comp.pod_selector
        external = selector.external_pods if selector is not None else None
        if external is None:
            continue
        expression = external.match_labels_expression
        where = f"component '{comp.name}' podSelector.externalPods.matchLabelsExpression '{expression}'"
        try:
            results = factory.query(expression)
        except JqError as exc:
            raise ExtractionError(f"{where}: {exc}") from exc
        if len(results) != 1:
            raise ExtractionError(f"{where} must yield one label map (or null), got {len(results)} results")
        value = results[0]
        if value is None or value == {}:
            continue
        if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
            raise ExtractionError(
                f"{where} must yield an object of string label values, got {go_format(value)}"
            )
        out[comp.name] = {str(k): v for k, v in value.items()}
    return out


def label_selector(labels: Mapping[str, str]) -> str:
    """The ``labelSelector`` query text of a label map (``k=v,…``, keys sorted)."""
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def matches(pod: Pod, labels: Mapping[str, str]) -> bool:
    """Whether the pod carries every label of ``labels`` with that value."""
    meta = pod.get("metadata")
    have = meta.get("labels") if isinstance(meta, Mapping) else None
    return isinstance(have, Mapping) and all(have.get(k) == v for k, v in labels.items())


def split_external(
    selectors: Mapping[str, Mapping[str, str]], pods: Sequence[Pod]
) -> tuple[list[Pod], dict[str, list[Pod]]]:
    """``(the other pods, each external component's pods)``: a pod goes to the first component (in
    definition order) whose labels it carries; a pod listed twice (by name and namespace) once."""
    own: list[Pod] = []
    external: dict[str, list[Pod]] = {name: [] for name in selectors}
    seen: set[tuple[str, str]] = set()
    for pod in pods:
        meta = pod.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        if key[1] and key in seen:
            continue
        seen.add(key)
        for name, labels in selectors.items():
            if matches(pod, labels):
                external[name].append(pod)
                break
        else:
            own.append(pod)
    return own, external
