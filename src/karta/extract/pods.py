"""Pod-side evaluation (docs/spec/format.md#pod-side): matching one live pod to a component, an
instance, a replica and a gang member of a Karta.

:class:`PodQuerier` wraps one Pod object (plain JSON data) and evaluates the pod-side expressions of
a definition against it: component type selectors (11.1, with ``matchLabels`` of 11.3 / R8), the
single-value rule for instance ids, replica keys, group keys and filters (11.2), and instance
matching (11.4). Results are cached per querier by expression text, so a pod is evaluated against
each expression at most once however many components, members or sub-groups ask; every evaluation
on the pod happens in one evaluator session (one budget per pod for untrusted definitions).

A trusted evaluator (the built-in catalog) runs a definition's pod-side expressions through their
generated functions (:func:`pod_functions`), generated together and kept in the definition cache of
:mod:`karta._codegen` under the expressions' texts and the generator's fingerprint, so that a
later process reads them instead of parsing and compiling the expressions (``kli inspect -f W
--pods P``, ``kli describe``). A generated function that declines (or any expression it does not
cover) leaves the evaluation to :meth:`Evaluator.evaluate`, which gives the exact result or error.
With the cache off or unwritable, nothing changes: the evaluator runs every expression, and
generates code for those it sees again (:func:`karta._codegen.due`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from karta import _codegen as codegen
from karta._identity import IdentityCache
from karta.errors import InstanceNotFoundError, JqError, PodQueryError
from karta.jq import Evaluator, Session
from karta.jq._values import normalise_output
from karta.model.types import ComponentDefinition, ComponentTypeSelector, Karta, PodGroupMember

__all__ = [
    "PodFunctions",
    "PodQuerier",
    "go_format",
    "pod_expressions",
    "pod_functions",
    "single_value",
    "type_expression",
]

PodFunctions = Mapping[str, Callable[[Any], list[Any]]]
"""Generated functions of pod-side expressions, by expression text (:func:`pod_functions`)."""


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


def type_expression(selector: ComponentTypeSelector) -> str | None:
    """The expression a component type selector evaluates on a pod (11.1): ``keyPath``, or with
    ``value`` the textual comparison; None without a ``keyPath``."""
    if not selector.key_path:
        return None
    if selector.value is None:
        return selector.key_path
    # [compat] the comparison is built textually; json.dumps escapes quotes in the value.
    return f"{selector.key_path} == {json.dumps(selector.value)}"


def pod_expressions(karta: Karta) -> tuple[str, ...]:
    """Every pod-side expression of ``karta``, once each, sorted: its components' type selectors
    (:func:`type_expression`), instance id paths and replica key paths, its alpha members' group
    key paths and filters, and its split's group key paths (extension E1; the default key paths
    are the split component's own selector paths)."""
    found: set[str] = set()
    for component in karta.components:
        selector = component.pod_selector
        if selector is None:
            continue
        if selector.component_type_selector is not None:
            found.add(type_expression(selector.component_type_selector) or "")
        if selector.component_instance_selector is not None:
            found.add(selector.component_instance_selector.id_path)
        if selector.replica_selector is not None:
            found.add(selector.replica_selector.key_path)
    gang = karta.gang
    if gang is not None:
        for group in gang.pod_groups:
            for member in group.members:
                found.update(member.group_by_key_paths)
                found.update(member.filters)
        if gang.pod_group is not None and gang.pod_group.split is not None:
            found.update(gang.pod_group.split.group_by_key_paths)
    found.discard("")
    return tuple(sorted(found))


class _PodTable:
    """The generated functions of one definition's pod-side expressions, looked up once."""

    __slots__ = ("found", "functions", "karta")

    def __init__(self, karta: Karta) -> None:
        self.karta = karta
        self.functions: PodFunctions | None = None
        self.found = False

    def get(self) -> PodFunctions | None:
        if not self.found:
            self.functions = self._find()
            self.found = True
        return self.functions

    def _find(self) -> PodFunctions | None:
        """The definition cache's table, else (when it can keep it, or under ``eager``: see
        :func:`karta._codegen.due_for_cache`) a table generated now, else None."""
        expressions = pod_expressions(self.karta)
        if not expressions or not codegen.enabled():
            return None
        key = codegen.definition_key("pods", list(expressions))
        what = f"pod-side expressions of {self.karta.name or self.karta.root.name or 'a definition'}"
        if key is not None:
            from karta.jq.generated_runtime import load_table

            table = load_table(key, what)
            if table is not None:
                return table
        if not codegen.due_for_cache(0, key):
            return None  # nothing would outlive the process: the evaluator decides, as it always did
        from karta.jq.codegen import generate_table

        return generate_table(expressions, key=key, what=what) or None


_tables: IdentityCache[Karta, _PodTable] = IdentityCache(_PodTable, size=1024)


def pod_functions(karta: Karta, evaluator: Evaluator) -> PodFunctions | None:
    """The generated functions of ``karta``'s pod-side expressions for queriers evaluating with
    ``evaluator`` (see the module docstring), or None: for an evaluator generated code may not
    stand in for (:attr:`Evaluator.inlinable`: untrusted definitions run metered), under
    ``KARTA_CODEGEN=off``, and when the definition cache neither holds nor can keep them."""
    if not evaluator.inlinable:
        return None
    return _tables(karta).get()


class PodQuerier:
    """Evaluates the pod-side expressions of a Karta against one pod.

    The pod must not be mutated while the querier is in use (results are cached). ``functions``
    (:func:`pod_functions`) run the expressions they hold; every other expression, and every one
    whose function declines, is evaluated by ``evaluator``.
    """

    def __init__(
        self,
        pod: Mapping[str, Any],
        *,
        evaluator: Evaluator | None = None,
        functions: PodFunctions | None = None,
    ) -> None:
        self._pod = pod
        self._evaluator = evaluator if evaluator is not None else Evaluator()
        self._functions = functions if functions and self._evaluator.inlinable else None
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
            functions = self._functions
            fn = functions.get(expression) if functions is not None else None
            try:
                with self._session:
                    if fn is not None:
                        cached = self._generated(fn)
                    if cached is None:
                        cached = self._evaluator.evaluate(expression, self._pod)
            except JqError as exc:
                cached = exc
            self._cache[expression] = cached
        if isinstance(cached, JqError):
            raise cached
        return cached

    def _generated(self, fn: Callable[[Any], list[Any]]) -> list[Any] | None:
        """The outputs of a generated function on the pod as :meth:`Evaluator.evaluate` returns
        them, or None when it declines or exceeds the result limit (the evaluator then gives the
        exact result or error)."""
        evaluator = self._evaluator
        try:
            out = fn(evaluator.input_of(self._pod))
        except Exception:  # JqFail, RecursionError, or a gap: the general code decides
            return None
        if len(out) > evaluator.max_results:
            return None
        if float in map(type, out):
            for i, x in enumerate(out):
                if x.__class__ is float:
                    out[i] = normalise_output(x)
        return out

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
        results = self._query_for_type(type_expression(selector) or "", component)
        if selector.value is None:
            return any(r is not None for r in results)
        return any(r is True for r in results)

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
