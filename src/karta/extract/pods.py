"""Pod-side evaluation (karta-format.md section 11): matching one live pod to a component, an
instance, a replica and a gang member of a Karta.

:class:`PodQuerier` wraps one Pod object (plain JSON data) and evaluates the pod-side expressions of
a definition against it: component type selectors (11.1, with ``matchLabels`` of 11.3 / R8), the
single-value rule for instance ids, replica keys, group keys and filters (11.2), and instance
matching (11.4). Results are cached per querier by expression text, so a pod is evaluated against
each expression at most once however many components, members or sub-groups ask; every evaluation
on the pod happens in one evaluator session (one budget per pod for untrusted definitions).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from karta.errors import InstanceNotFoundError, JqError, PodQueryError
from karta.jq import Evaluator, Session
from karta.model.types import ComponentDefinition, PodGroupMember

__all__ = ["PodQuerier", "go_format", "single_value"]


def go_format(value: Any) -> str:
    """Render ``value`` like Go's ``%v`` does for decoded JSON (section 11.2).

    Strings as-is, integral numbers without a fraction, booleans ``true``/``false``, ``null`` as
    ``<nil>``, arrays as ``[a b]`` and objects as ``map[k:v]`` (keys sorted, as Go prints maps).
    """
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def single_value(results: Sequence[Any]) -> str:
    """Apply the single-value rule (11.2): exactly one result, neither ``null`` nor ``""``."""
    if len(results) != 1:
        raise PodQueryError(f"expected single query result, got {len(results)}")
    value = results[0]
    if value is None or value == "":
        raise PodQueryError(f"query result is empty {go_format(value)}")
    return go_format(value)


class PodQuerier:
    """Evaluates the pod-side expressions of a Karta against one pod.

    The pod must not be mutated while the querier is in use (results are cached).
    """

    def __init__(self, pod: Mapping[str, Any], *, evaluator: Evaluator | None = None) -> None:
        self._pod = pod
        self._evaluator = evaluator if evaluator is not None else Evaluator()
        self._session: Session | None = None
        self._cache: dict[str, list[Any] | JqError] = {}

    @property
    def pod(self) -> Mapping[str, Any]:
        return self._pod

    @property
    def name(self) -> str:
        return str(self._metadata.get("name") or "")

    @property
    def namespace(self) -> str:
        return str(self._metadata.get("namespace") or "")

    @property
    def _metadata(self) -> Mapping[str, Any]:
        metadata = self._pod.get("metadata")
        return metadata if isinstance(metadata, Mapping) else {}

    @property
    def labels(self) -> Mapping[str, Any]:
        labels = self._metadata.get("labels")
        return labels if isinstance(labels, Mapping) else {}

    def query(self, expression: str) -> list[Any]:
        """All results of a pod-side expression (cached); jq errors raise :class:`JqError`."""
        cached = self._cache.get(expression)
        if cached is None:
            if self._session is None:
                self._session = self._evaluator.open_session(self._pod)
            try:
                with self._session:
                    cached = self._evaluator.evaluate(expression, self._pod)
            except JqError as exc:
                cached = exc
            self._cache[expression] = cached
        if isinstance(cached, JqError):
            raise cached
        return cached

    def _single(self, expression: str, context: str) -> str:
        try:
            return single_value(self.query(expression))
        except (JqError, PodQueryError) as exc:
            raise PodQueryError(f"{context}: {exc}") from exc

    # --- component type (11.1, 11.3) ------------------------------------------------------------

    def matches_component_type(self, component: ComponentDefinition) -> bool:
        """Whether the pod belongs to ``component`` by its component type selector.

        ``keyPath`` alone tests existence (any non-null result); with ``value`` it tests string
        equality (any ``true`` result); ``matchLabels`` entries are ANDed with it (R8). A component
        without a type selector never matches. Evaluation errors raise :class:`PodQueryError`.
        """
        selector = component.pod_selector.component_type_selector if component.pod_selector else None
        if selector is None or (not selector.key_path and not selector.match_labels):
            return False
        if selector.match_labels and not self._labels_match(selector.match_labels):
            return False
        if not selector.key_path:
            return True
        if selector.value is None:
            results = self._query_for_type(selector.key_path, component)
            return any(r is not None for r in results)
        # [compat] the comparison is built textually; json.dumps escapes quotes in the value.
        expression = f"{selector.key_path} == {json.dumps(selector.value)}"
        return any(r is True for r in self._query_for_type(expression, component))

    def _query_for_type(self, expression: str, component: ComponentDefinition) -> list[Any]:
        try:
            return self.query(expression)
        except JqError as exc:
            raise PodQueryError(
                f"failed to evaluate component type selector of component {component.name}: {exc}"
            ) from exc

    def _labels_match(self, match_labels: Mapping[str, str]) -> bool:
        labels = self.labels
        return all(key in labels and labels[key] == value for key, value in match_labels.items())

    # --- single values (11.2) -------------------------------------------------------------------

    def extract_instance_id(self, component: ComponentDefinition) -> str:
        """The pod's instance id from ``componentInstanceSelector.idPath``."""
        selector = component.pod_selector.component_instance_selector if component.pod_selector else None
        if selector is None:
            raise PodQueryError(f"component {component.name} has no component instance selector")
        path = selector.id_path
        return self._single(path, f'failed to extract instance id from path "{path}"')

    def extract_replica_key(self, component: ComponentDefinition) -> str:
        """The pod's replica key from ``replicaSelector.keyPath``."""
        selector = component.pod_selector.replica_selector if component.pod_selector else None
        if selector is None:
            raise PodQueryError(f"component {component.name} has no replica selector")
        path = selector.key_path
        return self._single(path, f'failed to extract replica key from path "{path}"')

    def extract_group_keys(self, member: PodGroupMember) -> list[str]:
        """One key per ``groupByKeyPaths`` entry, in order (12.2)."""
        return [
            self._single(path, f'failed to extract group key from path "{path}"')
            for path in member.group_by_key_paths
        ]

    def passes_filters(self, member: PodGroupMember) -> bool:
        """Whether every filter of ``member`` yields boolean ``true`` (no filters: true).

        A single non-empty non-boolean result fails the filter silently; breaking the single-value
        rule or an evaluation error raises :class:`PodQueryError`.
        """
        for expression in member.filters:
            context = f'failed to evaluate filter "{expression}"'
            try:
                results = self.query(expression)
                single_value(results)
            except (JqError, PodQueryError) as exc:
                raise PodQueryError(f"{context}: {exc}") from exc
            if results[0] is not True:
                return False
        return True

    # --- instances (11.4) -----------------------------------------------------------------------

    def matching_instance_id(self, component: ComponentDefinition, instance_ids: Sequence[str]) -> str:
        """The id among ``instance_ids`` the pod belongs to."""
        selector = component.pod_selector.component_instance_selector if component.pod_selector else None
        if selector is None:
            if list(instance_ids) == [""]:
                return ""
            raise PodQueryError(
                f"component {component.name}: no instance selector provided but instance ids are not empty"
            )
        instance_id = self.extract_instance_id(component)
        if instance_id not in instance_ids:
            raise InstanceNotFoundError(
                f'could not match instance id "{instance_id}". '
                f"existing instance ids [{' '.join(instance_ids)}]"
            )
        return instance_id
