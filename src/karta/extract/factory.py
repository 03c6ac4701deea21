"""Components of a workload: instances, pod specs, scale, status, write-back and suspend.

:class:`ComponentFactory` wraps one Karta and one workload object (sections 5–10 and 16 of the
format). It evaluates each path at most once per object version and caches the converted results;
any write replaces the object and drops every cache.

Returned values are shared with that cache and, when the evaluator's fast path reads straight from
the object, with the workload object itself. Treat them as read-only: ``copy.deepcopy`` a value
before modifying it (the write-back methods never keep references to the values they are given).
The returned top-level mappings (id -> value) are fresh and may be modified freely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from karta.errors import ExtractionError, WriteBackError
from karta.extract import fragments, scale, suspend, writeback
from karta.extract.convert import (
    OBJECT_META_TYPE,
    POD_SPEC_TYPE,
    POD_TEMPLATE_SPEC_TYPE,
    STRING_TYPE,
    TargetType,
)
from karta.extract.types import ExtractedInstance, Scale
from karta.jq import Evaluator
from karta.model.types import ComponentDefinition, FragmentedPodSpecDefinition, Karta
from karta.status import StatusResult, extract_status

T = TypeVar("T")

_default_evaluator: Evaluator | None = None


def default_evaluator() -> Evaluator:
    """One shared evaluator (and so one compiled-program cache) for factories built without one."""
    global _default_evaluator
    if _default_evaluator is None:
        _default_evaluator = Evaluator()
    return _default_evaluator


class ComponentFactory:
    """A Karta applied to one workload object; hands out :class:`Component` views."""

    def __init__(self, karta: Karta, obj: Any, *, evaluator: Evaluator | None = None) -> None:
        self.karta = karta
        self.evaluator = evaluator if evaluator is not None else default_evaluator()
        self._obj = obj
        self._results: dict[str, list[Any]] = {}
        self._components: dict[str, Component] = {}
        self._definitions: dict[str, ComponentDefinition] = {}
        for definition in karta.components:
            self._definitions.setdefault(definition.name, definition)

    # --- structure ---------------------------------------------------------------------------------

    @property
    def obj(self) -> Any:
        """The current workload object (modified by updates, suspend and resume)."""
        return self._obj

    def root(self) -> Component:
        return self._component_for(self.karta.root)

    def component(self, name: str) -> Component:
        definition = self._definitions.get(name)
        if definition is None:
            raise ExtractionError(f"component {name} not found")
        return self._component_for(definition)

    def children(self) -> list[Component]:
        """All child components in definition order."""
        return [self._component_for(d) for d in self.karta.children]

    def children_of(self, name: str) -> list[Component]:
        """The direct children of component ``name``, in definition order."""
        parent = self.component(name)
        return [self._component_for(d) for d in self.karta.children if d.owner_ref == parent.name]

    def has_pod_definitions(self) -> bool:
        return any(d.is_pod_bearing for d in self.karta.components)

    def resource(self) -> Any:
        """The (possibly modified) workload object, checked to be a full Kubernetes object (9.4)."""
        obj = self._obj
        if not isinstance(obj, dict):
            raise ExtractionError("missing apiVersion: the workload is not an object")
        if not obj.get("apiVersion"):
            raise ExtractionError("missing apiVersion")
        if not obj.get("kind"):
            raise ExtractionError("missing kind")
        metadata = obj.get("metadata")
        if not isinstance(metadata, dict) or not (metadata.get("name") or metadata.get("generateName")):
            raise ExtractionError("missing metadata.name or metadata.generateName")
        return obj

    # --- internals shared with Component --------------------------------------------------------------

    def _component_for(self, definition: ComponentDefinition) -> Component:
        component = self._components.get(definition.name)
        if component is None:
            component = Component(self, definition)
            self._components[definition.name] = component
        return component

    def _evaluate(self, path: str) -> list[Any]:
        """All results of ``path`` on the current object, evaluated once per object version."""
        results = self._results.get(path)
        if results is None:
            results = self.evaluator.evaluate(path, self._obj)
            self._results[path] = results
        return results

    def _replace_object(self, obj: Any) -> None:
        self._obj = obj
        self._results.clear()
        for component in self._components.values():
            component._memo.clear()


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a component definition asks to evaluate, worked out once per definition object."""

    id_path: str | None
    paths: dict[str, str | None]
    fragment_definition: FragmentedPodSpecDefinition | None
    fragment_paths: tuple[tuple[str, str, TargetType], ...]
    scale_paths: tuple[str | None, str | None, str | None] | None


_PLAN_CACHE_SIZE = 1024
_plans: dict[int, tuple[ComponentDefinition, _Plan]] = {}


def _plan_for(definition: ComponentDefinition) -> _Plan:
    # Keyed by identity (definitions are immutable); the entry keeps the definition alive, so an id
    # is never reused while cached.
    entry = _plans.get(id(definition))
    if entry is not None and entry[0] is definition:
        return entry[1]
    spec = definition.spec_definition
    fragment_definition = spec.fragmented_pod_spec_definition if spec else None
    fragment_paths: tuple[tuple[str, str, TargetType], ...] = ()
    if fragment_definition is not None:
        fragment_paths = tuple(
            (f.key, path, f.target)
            for f in fragments.FIELDS
            if (path := f.path(fragment_definition)) is not None
        )
    scale_def = definition.scale_definition
    scale_paths = (
        (
            scale_def.replicas_path or None,
            scale_def.min_replicas_path or None,
            scale_def.max_replicas_path or None,
        )
        if scale_def
        else (None, None, None)
    )
    plan = _Plan(
        id_path=definition.instance_id_path or None,
        paths={
            "pod_template_spec_path": (spec.pod_template_spec_path or None) if spec else None,
            "pod_spec_path": (spec.pod_spec_path or None) if spec else None,
            "metadata_path": (spec.metadata_path or None) if spec else None,
        },
        fragment_definition=fragment_definition,
        fragment_paths=fragment_paths,
        scale_paths=scale_paths if any(scale_paths) else None,
    )
    if len(_plans) >= _PLAN_CACHE_SIZE:
        _plans.clear()
    _plans[id(definition)] = (definition, plan)
    return plan


def _copy(mapping: dict[str, T] | None) -> dict[str, T] | None:
    return None if mapping is None else dict(mapping)


class Component:
    """One component of a workload, read through its factory (whose object it always sees)."""

    def __init__(self, factory: ComponentFactory, definition: ComponentDefinition) -> None:
        self.factory = factory
        self.definition = definition
        # Cached converted results of the factory's current object; the factory clears it on writes.
        self._memo: dict[str, Any] = {}
        plan = _plan_for(definition)
        self._id_path = plan.id_path
        self._paths = plan.paths
        self._fragment_definition = plan.fragment_definition
        self._fragment_paths = plan.fragment_paths
        self._scale_paths = plan.scale_paths

    def __repr__(self) -> str:
        return f"Component({self.name!r})"

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def is_multi_instance(self) -> bool:
        return self._id_path is not None

    @property
    def is_pod_bearing(self) -> bool:
        return self.definition.is_pod_bearing

    # --- instances ---------------------------------------------------------------------------------

    def instance_ids(self) -> list[str]:
        """The instance ids in result order, or ``[""]`` for a single-instance component (5.2)."""
        return list(self._ids())

    def _ids(self) -> list[str]:
        ids: list[str] | None = self._memo.get("ids")
        if ids is None:
            ids = self._memo["ids"] = self._compute_instance_ids()
        return ids

    def _compute_instance_ids(self) -> list[str]:
        path = self._id_path
        if path is None:
            return [""]
        ids: list[str] = STRING_TYPE.convert_all(self.factory._evaluate(path))
        if "" in ids:
            raise ExtractionError(
                f"component {self.name}: instance id path contained empty string values "
                f"[{','.join(ids)}] (path '{path}')"
            )
        if len(set(ids)) != len(ids):
            seen: set[str] = set()
            for instance_id in ids:
                if instance_id in seen:
                    raise ExtractionError(
                        f"component {self.name}: duplicate instance id \"{instance_id}\" (path '{path}')"
                    )
                seen.add(instance_id)
        return ids

    def _paired(self, values: list[T], path: str) -> dict[str, T]:
        ids = self._ids()
        if len(ids) != len(values):
            raise ExtractionError(
                f"component {self.name}: instance ids count ({len(ids)}) does not match "
                f"results count ({len(values)}) for path '{path}'"
            )
        return dict(zip(ids, values, strict=True))

    # --- pod specifications ------------------------------------------------------------------------------

    def _typed(self, attr: str, target: TargetType) -> dict[str, Any] | None:
        """The cached id -> value map of one whole-value path (not copied: internal use)."""
        path = self._paths[attr]
        if path is None:
            return None
        cached: dict[str, Any] | None = self._memo.get(attr)
        if cached is None:
            cached = self._memo[attr] = self._paired(target.convert_all(self.factory._evaluate(path)), path)
        return cached

    def pod_template_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> PodTemplateSpec, or None without ``podTemplateSpecPath``."""
        return _copy(self._typed("pod_template_spec_path", POD_TEMPLATE_SPEC_TYPE))

    def pod_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> PodSpec, or None without ``podSpecPath``."""
        return _copy(self._typed("pod_spec_path", POD_SPEC_TYPE))

    def pod_metadata(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> ObjectMeta, or None without ``metadataPath``."""
        return _copy(self._typed("metadata_path", OBJECT_META_TYPE))

    def fragmented_pod_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> fragmented record (keys omitted when empty), or None without a definition."""
        return _copy(self._fragments())

    def _fragments(self) -> dict[str, dict[str, Any]] | None:
        if self._fragment_definition is None:
            return None
        cached: dict[str, dict[str, Any]] | None = self._memo.get("fragments")
        if cached is None:
            evaluate = self.factory._evaluate
            results = {key: target.convert_all(evaluate(path)) for key, path, target in self._fragment_paths}
            paths = ", ".join(path for _, path, _ in self._fragment_paths)
            cached = self._memo["fragments"] = self._paired(fragments.assemble(results), paths)
        return cached

    # --- scale -------------------------------------------------------------------------------------

    def scales(self) -> dict[str, Scale] | None:
        """Instance id -> Scale, or None when no scale path is defined (section 7)."""
        return _copy(self._scales())

    def _scales(self) -> dict[str, Scale] | None:
        paths = self._scale_paths
        if paths is None:
            return None
        cached: dict[str, Scale] | None = self._memo.get("scales")
        if cached is None:
            evaluate = self.factory._evaluate
            replicas, low, high = (None if p is None else evaluate(p) for p in paths)
            built = scale.build_scales(replicas=replicas, min_replicas=low, max_replicas=high)
            cached = self._memo["scales"] = self._paired(built, ", ".join(p for p in paths if p))
        return cached

    # --- status ------------------------------------------------------------------------------------

    def status(self, strict: bool = False) -> StatusResult | None:
        """The normalised status (section 8), or None without a ``statusDefinition``."""
        definition = self.definition.status_definition
        if definition is None:
            return None
        key = "status-strict" if strict else "status"
        cached: StatusResult | None = self._memo.get(key)
        if cached is None:
            factory = self.factory
            cached = extract_status(definition, factory.obj, evaluator=factory.evaluator, strict=strict)
            self._memo[key] = cached
        return cached

    # --- all parts of each instance -------------------------------------------------------------------

    def extracted_instances(self) -> dict[str, ExtractedInstance]:
        """Instance id -> every defined part of that instance (6.3)."""
        ids = self._ids()
        templates = self._typed("pod_template_spec_path", POD_TEMPLATE_SPEC_TYPE)
        specs = self._typed("pod_spec_path", POD_SPEC_TYPE)
        metadata = self._typed("metadata_path", OBJECT_META_TYPE)
        fragmented = self._fragments()
        scales = self._scales()
        return {
            instance_id: ExtractedInstance(
                instance_id,
                None if templates is None else templates[instance_id],
                None if specs is None else specs[instance_id],
                None if metadata is None else metadata[instance_id],
                None if fragmented is None else fragmented[instance_id],
                None if scales is None else scales[instance_id],
            )
            for instance_id in ids
        }

    # --- write-back ------------------------------------------------------------------------------------

    def _update_whole(self, attr: str, field: str, target: TargetType, values: Mapping[str, Any]) -> None:
        path = self._paths[attr]
        if path is None:
            raise WriteBackError(f"component {self.name}: {field} is not defined")
        ordered = writeback.order_values(self.instance_ids(), values)
        writeback.check_values(ordered, target, what=f"component {self.name}: {field}")
        updated = writeback.write_whole(
            evaluator=self.factory.evaluator,
            obj=self.factory.obj,
            path=path,
            values=ordered,
            multi_instance=self.is_multi_instance,
            what=f"component {self.name}: {field}",
        )
        self.factory._replace_object(updated)

    def update_pod_template_spec(self, values: Mapping[str, Any]) -> None:
        """Replace each instance's PodTemplateSpec (9.2); the factory keeps the modified object."""
        self._update_whole("pod_template_spec_path", "podTemplateSpecPath", POD_TEMPLATE_SPEC_TYPE, values)

    def update_pod_spec(self, values: Mapping[str, Any]) -> None:
        """Replace each instance's PodSpec (9.2)."""
        self._update_whole("pod_spec_path", "podSpecPath", POD_SPEC_TYPE, values)

    def update_pod_metadata(self, values: Mapping[str, Any]) -> None:
        """Replace each instance's ObjectMeta (9.2)."""
        self._update_whole("metadata_path", "metadataPath", OBJECT_META_TYPE, values)

    def update_fragmented_pod_spec(self, values: Mapping[str, Mapping[str, Any]]) -> None:
        """Write each instance's fragmented record field by field (9.3, R6)."""
        definition = self._fragment_definition
        if definition is None:
            raise WriteBackError(f"component {self.name}: fragmentedPodSpecDefinition is not defined")
        ordered = writeback.order_values(self.instance_ids(), values)
        try:
            updated = writeback.write_fragments(
                evaluator=self.factory.evaluator,
                obj=self.factory.obj,
                definition=definition,
                records=ordered,
                multi_instance=self.is_multi_instance,
            )
        except WriteBackError as exc:
            raise WriteBackError(f"component {self.name}: {exc}") from exc
        self.factory._replace_object(updated)

    # --- suspend / resume ---------------------------------------------------------------------------------

    def suspend(self) -> None:
        """Apply ``suspendActions`` (section 10); a no-op without a ``suspendDefinition``."""
        definition = self.definition.suspend_definition
        if definition is not None:
            self._apply(definition.suspend_actions, "suspendActions")

    def resume(self) -> None:
        """Apply ``resumeActions`` (section 10); a no-op without a ``suspendDefinition``."""
        definition = self.definition.suspend_definition
        if definition is not None:
            self._apply(definition.resume_actions, "resumeActions")

    def _apply(self, actions: Any, label: str) -> None:
        if not actions:
            return
        updated = suspend.apply_actions(
            actions, self.factory.obj, evaluator=self.factory.evaluator, label=label
        )
        self.factory._replace_object(updated)
