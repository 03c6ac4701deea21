"""Components of a workload: instances, pod specs, scale, status, write-back and suspend.

:class:`ComponentFactory` wraps one Karta and one workload object (sections 5–10 and 16 of the
format). It evaluates each path at most once per object version and caches the converted results;
any write replaces the object and drops every cache.

Every evaluation on one object version happens inside one evaluator session
(:meth:`karta.jq.Evaluator.open_session`): for an untrusted definition all its expressions on that
object share one budget (time, memory, output, steps), and libjq sees the object serialised once.
A budget breach (:class:`~karta.errors.JqBudgetError`) fails every later evaluation on that object
version; a write gives the new version a fresh budget.

Returned values are shared with that cache and, when the evaluator's fast path reads straight from
the object, with the workload object itself. Treat them as read-only: ``copy.deepcopy`` a value
before modifying it (the write-back methods never keep references to the values they are given).
The returned top-level mappings (id -> value) are fresh and may be modified freely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from karta import _codegen as codegen
from karta._identity import IdentityCache
from karta._records import record
from karta.errors import ExtractionError, WriteBackError
from karta.extract import fragments, scale
from karta.extract.convert import (
    OBJECT_META_TYPE,
    POD_SPEC_TYPE,
    POD_TEMPLATE_SPEC_TYPE,
    STRING_TYPE,
    TargetType,
)
from karta.extract.types import ExtractedInstance, Scale, new_extracted_instance
from karta.jq import Evaluator, Session
from karta.model.types import ComponentDefinition, FragmentedPodSpecDefinition, Karta, StatusDefinition
from karta.status import StatusResult, extract_status, generated_status_fn

if TYPE_CHECKING:  # imported when first generating code
    from karta.extract.compiled import ExtractionFn, WholePath
    from karta.status.generated import StatusFn

T = TypeVar("T")

_default_evaluator: Evaluator | None = None


def default_evaluator() -> Evaluator:
    """One shared evaluator (and so one compiled-program cache) for factories built without one."""
    global _default_evaluator
    if _default_evaluator is None:
        _default_evaluator = Evaluator()
    return _default_evaluator


class _Workload:
    """The state a factory and its components share: the current object, its evaluator session,
    its evaluated paths and every component's memo.

    It refers to neither the factory nor a component, so a factory and its components hold no
    reference cycle: they are freed as soon as the caller drops them, by reference counting, and
    never leave garbage for the cycle collector (one factory per object, thousands a second)."""

    __slots__ = (
        "decoded",
        "evaluator",
        "inline",
        "max_results",
        "memos",
        "names",
        "obj",
        "results",
        "session_",
        "shared",
        "values",
    )

    shared: dict[int, list[Any] | None]  # set with ``results``

    def __init__(self, evaluator: Evaluator, obj: Any) -> None:
        self.evaluator = evaluator
        # Whether generated code may stand in for the evaluator (Evaluator.inlinable), read once.
        self.inline: bool = evaluator.inlinable
        # A definition's references (extension E3): the names its generated functions take as
        # parameters after the limit, and their values (Evaluator.parameters), read once.
        self.names: tuple[str, ...] = ()
        self.values: tuple[Any, ...] = ()
        if not self.inline:
            parameters = evaluator.parameters
            if parameters is not None:
                self.names, self.values = parameters
                self.inline = True
        self.max_results: int = evaluator.max_results
        # Whether the evaluator's objects come from karta's decoders (Evaluator.decoded), read once.
        self.decoded: bool = evaluator.decoded
        self.obj = obj
        self.session_: Session | None = None
        # Made by the first evaluate (the general code), with ``shared``: generated code, the hot
        # path, needs neither.
        self.results: dict[str, list[Any]] | None = None
        self.memos: list[dict[str, Any]] = []  # one per component, cleared on writes

    def session(self) -> Session:
        session = self.session_
        if session is None or session.obj is not self.obj:
            session = self.session_ = self.evaluator.open_session(self.obj)
        return session

    def input(self) -> Any:
        """The object as the engine reads it, for generated code (:meth:`Evaluator.input_of`):
        the object itself when it came from a decoder, else its session's converted view."""
        return self.obj if self.decoded else self.session().input()

    def evaluate(self, path: str) -> list[Any]:
        """All results of ``path`` on the current object, evaluated once per object version."""
        by_path = self.results
        if by_path is None:
            by_path = self.results = {}
            self.shared = {}
        results = by_path.get(path)
        if results is None:
            # Paths of one definition often iterate the same collection (``.spec.services | .[] |
            # .labels``, ``... | .replicas``): the evaluator shares those items per object.
            session = self.session_
            if session is None or session.obj is not self.obj:
                session = self.session()
            results = self.evaluator.evaluate_shared(path, self.obj, self.shared, session=session)
            by_path[path] = results
        return results

    def replace(self, obj: Any) -> None:
        self.obj = obj
        self.session_ = None
        self.results = None
        for memo in self.memos:
            memo.clear()


class ComponentFactory:
    """A Karta applied to one workload object; hands out :class:`Component` views."""

    __slots__ = ("_components", "_definitions", "_root", "_w", "evaluator", "karta")

    def __init__(self, karta: Karta, obj: Any, *, evaluator: Evaluator | None = None) -> None:
        self.karta = karta
        self.evaluator = evaluator if evaluator is not None else default_evaluator()
        self._w = _Workload(self.evaluator, obj)
        self._components: dict[str, Component] = {}
        self._definitions, self._root = _definitions_of(karta)

    # --- structure ---------------------------------------------------------------------------------

    @property
    def obj(self) -> Any:
        """The current workload object (modified by updates, suspend and resume)."""
        return self._w.obj

    def root(self) -> Component:
        root = self._root
        component = self._components.get(root.name)
        if component is not None and component.definition is root:
            return component
        entry = self._definitions.get(root.name)  # the root's, with its plan (it comes first)
        if entry is None or entry[0] is not root or component is not None:
            return self._component_for(root)
        component = self._components[root.name] = Component(self, root, entry[1])
        return component

    def component(self, name: str) -> Component:
        component = self._components.get(name)
        if component is not None:
            return component
        entry = self._definitions.get(name)
        if entry is None:
            raise ExtractionError(f"component {name} not found")
        component = self._components[name] = Component(self, entry[0], entry[1])
        return component

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
        obj = self._w.obj
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

    def session(self) -> Session:
        """The evaluator session of the current object version (its one budget): enter it around
        every evaluation on the object."""
        return self._w.session()

    def query(self, path: str) -> list[Any]:
        """All results of an object-side expression on the current object (evaluated once per
        object version); jq errors raise :class:`~karta.errors.JqError`.

        With an inlinable evaluator whose objects come from a decoder (``kli``, the controller,
        the web view) the expression is evaluated directly: nothing of a session applies to a
        trusted evaluation of an object read as it is (the same results and errors; a gang plan's
        ``split.when`` and ``replicaSizePath`` cost a quarter of what entering a session did)."""
        w = self._w
        if w.inline and w.decoded:
            by_path = w.results
            if by_path is None:  # made on the object's first evaluation (see _Working.evaluate)
                by_path = w.results = {}
                w.shared = {}
            results = by_path.get(path)
            if results is None:
                results = by_path[path] = w.evaluator.evaluate(path, w.obj)
            return results
        with w.session():
            return w.evaluate(path)


_ByName = dict[str, "tuple[ComponentDefinition, _Plan]"]


def _build_definitions(karta: Karta) -> tuple[_ByName, ComponentDefinition]:
    """Component definitions and their plans by name (the first of a duplicated name) and the
    root definition (once per Karta object: see _definitions_of)."""
    by_name: _ByName = {}
    for definition in karta.components:
        if definition.name not in by_name:
            by_name[definition.name] = (definition, _plan_for(definition))
    return by_name, karta.root


_UNSET: Any = object()


@record(frozen=False, slots=True)
class _Plan:
    """What a component definition asks to evaluate, worked out once per definition object.

    ``generated`` is the generated extraction function (:mod:`karta.extract.compiled`), built on
    the second use (:func:`karta._codegen.due`); None when the definition needs the general code."""

    name: str
    id_path: str | None
    paths: dict[str, str | None]
    fragment_definition: FragmentedPodSpecDefinition | None
    fragment_paths: tuple[tuple[str, str, TargetType], ...]
    fragment_label: str  # the fragment paths, as error messages name them
    scale_paths: tuple[str | None, str | None, str | None] | None
    scale_label: str
    status_definition: StatusDefinition | None
    generated: Any = _UNSET
    uses: int = 0  # calls of extraction_fn before the function was built
    cache_key: str | None = None  # in the definition cache (karta.extract.cached)
    status_generated: StatusFn | None = None  # status_fn() once it gave a function
    # The one instance of a component that defines no path at all (a root that only has a
    # status): the same record for every object, no evaluation, no generated code.
    constant: dict[str, ExtractedInstance] | None = None
    # The plan of the ids and scales alone (counting_fn), made on its first use.
    counting: Any = None
    # A definition's references (extension E3): the ``$<name>`` its generated functions take as
    # parameters (with_names: one plan per tuple of names, the one without names this one).
    names: tuple[str, ...] = ()
    variants: dict[tuple[str, ...], _Plan] | None = None

    def with_names(self, names: tuple[str, ...]) -> _Plan:
        """This plan, its generated functions taking ``names`` as parameters (itself without)."""
        if not names:
            return self
        variants = self.variants
        if variants is None:
            variants = self.variants = {}
        plan = variants.get(names)
        if plan is None:
            plan = variants[names] = _Plan(
                name=self.name,
                id_path=self.id_path,
                paths=self.paths,
                fragment_definition=self.fragment_definition,
                fragment_paths=self.fragment_paths,
                fragment_label=self.fragment_label,
                scale_paths=self.scale_paths,
                scale_label=self.scale_label,
                status_definition=self.status_definition,
                constant=self.constant,
                names=names,
            )
        return plan

    def counting_fn(self) -> ExtractionFn | None:
        """The generated function of the instance ids and scales alone, or None: what a gang plan
        reads of a component, without the pod templates, specs, metadata and fragments (and
        their shape checks) the whole extraction function builds. Its own plan, so it is built,
        cached on disk and counted like :meth:`extraction_fn` (the same function when the
        component defines nothing else)."""
        plan = self.counting
        if plan is None:
            plan = self
            if any(self.paths.values()) or self.fragment_definition is not None:
                plan = _Plan(
                    name=self.name,
                    id_path=self.id_path,
                    paths=dict.fromkeys(self.paths),
                    fragment_definition=None,
                    fragment_paths=(),
                    fragment_label="",
                    scale_paths=self.scale_paths,
                    scale_label=self.scale_label,
                    status_definition=None,
                    names=self.names,
                )
            self.counting = plan
        return plan.extraction_fn()  # type: ignore[no-any-return]

    def extraction_fn(self) -> ExtractionFn | None:
        """The generated extraction function (the definition cache's from the first use, else
        built on the second use, see :func:`karta._codegen.due`), or None (then the general code
        runs)."""
        fn = self.generated
        if fn is _UNSET:
            if self.uses == 0 and codegen.enabled():  # the function the definition cache holds, if any
                fn, self.cache_key = self._cached()
                if fn is not None:
                    self.generated = fn
                    return fn
            if not codegen.due_for_cache(self.uses, self.cache_key):
                self.uses += 1
                return None
            from karta.extract.compiled import compile_extraction

            whole, fragments = self._parts()
            fn = self.generated = compile_extraction(
                id_path=self.id_path,
                whole=whole,
                fragments=fragments,
                scale_paths=self.scale_paths,
                label=self._label(),
                key=self.cache_key,
                names=self.names,
            )
        return fn  # type: ignore[no-any-return]

    def _label(self) -> str:
        return f"component {self.name}"

    def _parts(self) -> tuple[list[WholePath], tuple[tuple[str, str, TargetType], ...] | None]:
        paths = self.paths
        whole: list[WholePath] = [
            None if (path := paths[attr]) is None else (path, target) for attr, target in _WHOLE_PARTS
        ]
        return whole, self.fragment_paths if self.fragment_definition is not None else None

    def _cached(self) -> tuple[ExtractionFn | None, str | None]:
        """(the function the definition cache holds for this component or None, its key or None
        when the cache is off or cannot say which targets a recipe names)."""
        from karta.extract import cached

        whole, fragments = self._parts()
        targets = cached.targets_of(whole, fragments)
        if targets is None:
            return None, None
        content = cached.content(self.id_path, whole, fragments, self.scale_paths, self.names)
        key = codegen.definition_key("extraction", content)
        if key is None:
            return None, None
        return cached.load(key, targets, f"extraction of {self._label()}"), key

    def status_fn(self) -> StatusFn | None:
        """The generated status function of the component (built and kept per status
        definition, from its second use), or None."""
        fn = self.status_generated
        if fn is None:
            definition = self.status_definition
            if definition is None:
                return None
            fn = self.status_generated = generated_status_fn(definition, self.names)
        return fn


_WHOLE_PARTS = (
    ("pod_template_spec_path", POD_TEMPLATE_SPEC_TYPE),
    ("pod_spec_path", POD_SPEC_TYPE),
    ("metadata_path", OBJECT_META_TYPE),
)


_NONES: dict[int, tuple[None, ...]] = {}


def _nones(count: int) -> tuple[None, ...]:
    nones = _NONES.get(count)
    if nones is None:
        nones = (None,) * count
        if count <= 64:
            _NONES[count] = nones
    return nones


def _build_plan(definition: ComponentDefinition) -> _Plan:
    """The plan of one component definition (once per definition object: see _plan_for)."""
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
    spec_paths: dict[str, str | None] = {
        "pod_template_spec_path": (spec.pod_template_spec_path or None) if spec else None,
        "pod_spec_path": (spec.pod_spec_path or None) if spec else None,
        "metadata_path": (spec.metadata_path or None) if spec else None,
    }
    id_path = definition.instance_id_path or None
    return _Plan(
        name=definition.name,
        id_path=id_path,
        paths=spec_paths,
        fragment_definition=fragment_definition,
        fragment_paths=fragment_paths,
        fragment_label=", ".join(path for _, path, _ in fragment_paths),
        scale_paths=scale_paths if any(scale_paths) else None,
        scale_label=", ".join(p for p in scale_paths if p),
        status_definition=definition.status_definition,
        constant=(
            {"": new_extracted_instance("", None, None, None, None, None)}
            if id_path is None
            and not any(spec_paths.values())
            and fragment_definition is None
            and not any(scale_paths)
            else None
        ),
    )


# Keyed by identity (definitions are immutable). The values are shared: read them, never modify.
_plan_for: IdentityCache[ComponentDefinition, _Plan] = IdentityCache(_build_plan, size=1024)
_definitions_of: IdentityCache[Karta, tuple[_ByName, ComponentDefinition]] = IdentityCache(
    _build_definitions, size=256
)


class Component:
    """One component of a workload, read through its factory (whose object it always sees)."""

    __slots__ = ("_memo", "_plan", "_w", "definition")

    def __init__(
        self, factory: ComponentFactory, definition: ComponentDefinition, plan: _Plan | None = None
    ) -> None:
        # The factory's shared state, not the factory: no reference cycle (see _Workload).
        w = self._w = factory._w
        self.definition = definition
        # Cached converted results of the factory's current object, as lists aligned with the
        # instance ids; cleared on writes.
        memo: dict[str, Any] = {}
        self._memo = memo
        w.memos.append(memo)
        self._plan = (plan if plan is not None else _plan_for(definition)).with_names(w.names)

    def __repr__(self) -> str:
        return f"Component({self.name!r})"

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def is_multi_instance(self) -> bool:
        return self._plan.id_path is not None

    @property
    def is_pod_bearing(self) -> bool:
        return self.definition.is_pod_bearing

    # --- instances ---------------------------------------------------------------------------------

    def instance_ids(self) -> list[str]:
        """The instance ids in result order, or ``[""]`` for a single-instance component (5.2)."""
        return list(self._ids())

    def _ids(self) -> list[str]:
        memo = self._memo
        ids: list[str] | None = memo.get("ids")
        if ids is None:
            if "generated" not in memo and (
                ("counted" not in memo and self._run_counting()) or self._run_generated()
            ):
                return memo["ids"]  # type: ignore[no-any-return]
            ids = memo["ids"] = self._compute_instance_ids()
        return ids

    def _run_counting(self) -> bool:
        """Fill the ids and scales of the memo from the generated function of those alone
        (:meth:`_Plan.counting_fn`: a gang plan reads no pod template), once per object version.
        False when it does not apply or declined; the whole extraction function, else the general
        code, then computes them (the same values, the same errors)."""
        memo = self._memo
        memo["counted"] = True
        w = self._w
        if not w.inline or self._plan.scale_paths is None:
            return False
        fn = self._plan.counting_fn()
        if fn is None:
            return False
        parts = fn(w.input(), w.max_results, *w.values)
        if parts is None or "ids" not in parts or "scales" not in parts:
            return False
        memo["ids"], memo["scales"] = parts["ids"], parts["scales"]
        return True

    def _run_generated(self) -> bool:
        """Fill the memo from the generated extraction function, once per object version.

        False when it does not apply (another evaluator, a path outside the fast path) or declined
        (anything not plainly valid); the general code then computes each part, with its errors."""
        memo = self._memo
        memo["generated"] = True
        w = self._w
        if not w.inline:
            return False
        fn = self._plan.extraction_fn()
        if fn is None:
            return False
        parts = fn(w.input(), w.max_results, *w.values)
        if parts is None:
            return False
        memo.update(parts)  # named as the memo names them (compiled.PART_KEYS)
        return True

    def _compute_instance_ids(self) -> list[str]:
        path = self._plan.id_path
        if path is None:
            return [""]
        ids: list[str] = STRING_TYPE.convert_all(self._w.evaluate(path))
        if len(set(ids)) != len(ids) or "" in ids:
            if "" in ids:
                raise ExtractionError(
                    f"component {self.name}: instance id path contained empty string values "
                    f"[{','.join(ids)}] (path '{path}')"
                )
            seen: set[str] = set()
            for instance_id in ids:
                if instance_id in seen:
                    raise ExtractionError(
                        f"component {self.name}: duplicate instance id \"{instance_id}\" (path '{path}')"
                    )
                seen.add(instance_id)
        return ids

    def _aligned(self, values: list[T], path: str) -> list[T]:
        """``values``, checked to pair up one to one with the instance ids."""
        ids = self._ids()
        if len(ids) != len(values):
            raise ExtractionError(
                f"component {self.name}: instance ids count ({len(ids)}) does not match "
                f"results count ({len(values)}) for path '{path}'"
            )
        return values

    def _paired(self, values: list[T] | None) -> dict[str, T] | None:
        """A fresh id -> value map of aligned values."""
        return None if values is None else dict(zip(self._ids(), values, strict=True))

    # --- pod specifications ------------------------------------------------------------------------------

    def _typed(self, attr: str, target: TargetType) -> list[Any] | None:
        """The cached values of one whole-value path, aligned with the ids (internal use)."""
        cached: list[Any] | None = self._memo.get(attr)
        if cached is None and "generated" not in self._memo and self._run_generated():
            cached = self._memo.get(attr)
        if cached is None:
            path = self._plan.paths[attr]
            if path is None:
                return None
            cached = self._memo[attr] = self._aligned(target.convert_all(self._w.evaluate(path)), path)
        return cached

    def pod_template_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> PodTemplateSpec, or None without ``podTemplateSpecPath``."""
        return self._paired(self._typed("pod_template_spec_path", POD_TEMPLATE_SPEC_TYPE))

    def pod_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> PodSpec, or None without ``podSpecPath``."""
        return self._paired(self._typed("pod_spec_path", POD_SPEC_TYPE))

    def pod_metadata(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> ObjectMeta, or None without ``metadataPath``."""
        return self._paired(self._typed("metadata_path", OBJECT_META_TYPE))

    def fragmented_pod_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> fragmented record (keys omitted when empty), or None without a definition."""
        return self._paired(self._fragments())

    def _fragments(self) -> list[dict[str, Any]] | None:
        cached: list[dict[str, Any]] | None = self._memo.get("fragments")
        if cached is None and "generated" not in self._memo and self._run_generated():
            cached = self._memo.get("fragments")
        if cached is None:
            plan = self._plan
            if plan.fragment_definition is None:
                return None
            evaluate = self._w.evaluate
            results = [(key, target.convert_all(evaluate(path))) for key, path, target in plan.fragment_paths]
            cached = self._memo["fragments"] = self._aligned(fragments.assemble(results), plan.fragment_label)
        return cached

    # --- scale -------------------------------------------------------------------------------------

    def scales(self) -> dict[str, Scale] | None:
        """Instance id -> Scale, or None when no scale path is defined (section 7)."""
        return self._paired(self._scale_list())

    def _scales(self) -> dict[str, Scale] | None:
        return self._paired(self._scale_list())

    def _scale_list(self) -> list[Scale] | None:
        memo = self._memo
        cached: list[Scale] | None = memo.get("scales")
        if (
            cached is None
            and "generated" not in memo
            and (("counted" not in memo and self._run_counting()) or self._run_generated())
        ):
            cached = memo.get("scales")
        if cached is None:
            plan = self._plan
            paths = plan.scale_paths
            if paths is None:
                return None
            evaluate = self._w.evaluate
            replicas, low, high = paths
            built = scale.build_scales(
                replicas=None if replicas is None else evaluate(replicas),
                min_replicas=None if low is None else evaluate(low),
                max_replicas=None if high is None else evaluate(high),
            )
            cached = self._memo["scales"] = self._aligned(built, plan.scale_label)
        return cached

    # --- status ------------------------------------------------------------------------------------

    def status(self, strict: bool = False) -> StatusResult | None:
        """The normalised status (section 8), or None without a ``statusDefinition``."""
        key = "status-strict" if strict else "status"
        cached: StatusResult | None = self._memo.get(key)
        if cached is None:
            plan = self._plan
            definition = plan.status_definition
            if definition is None:
                return None
            w = self._w
            # The generated function's result (when it gives one) is the strict and the
            # non-strict result alike: it declines whenever any matcher fails.
            fn = (plan.status_generated or plan.status_fn()) if w.inline else None
            if fn is not None:
                cached = fn(w.obj if w.decoded else w.input(), w.max_results, *w.values)
            if cached is None:
                with w.session():
                    cached = extract_status(
                        definition, w.obj, evaluator=w.evaluator, strict=strict, generated=False
                    )
            self._memo[key] = cached
        return cached

    # --- all parts of each instance -------------------------------------------------------------------

    def extracted_instances(self) -> dict[str, ExtractedInstance]:
        """Instance id -> every defined part of that instance (6.3)."""
        memo = self._memo
        instances: dict[str, ExtractedInstance] | None = memo.get("instances")
        if instances is None and (constant := self._plan.constant) is not None:
            instances = memo["instances"] = constant  # shared: only ever copied out
        elif instances is None and "generated" not in memo:
            # _run_generated, inlined: this is the hot path of a full extraction.
            memo["generated"] = True
            w = self._w
            fn = self._plan.generated
            if fn is _UNSET:
                fn = self._plan.extraction_fn()
            if fn is not None and w.inline:
                parts = fn(w.obj if w.decoded else w.input(), w.max_results, *w.values)
                if parts is not None:
                    memo.update(parts)
                    instances = memo.get("instances")
        if instances is not None:
            return instances.copy()
        ids = self._ids()
        paths = self._plan.paths
        none: Sequence[Any] = _nones(len(ids))
        templates = specs = metadata = fragmented = scales = none
        if paths["pod_template_spec_path"] is not None:
            templates = self._typed("pod_template_spec_path", POD_TEMPLATE_SPEC_TYPE) or none
        if paths["pod_spec_path"] is not None:
            specs = self._typed("pod_spec_path", POD_SPEC_TYPE) or none
        if paths["metadata_path"] is not None:
            metadata = self._typed("metadata_path", OBJECT_META_TYPE) or none
        if self._plan.fragment_definition is not None:
            fragmented = self._fragments() or none
        if self._plan.scale_paths is not None:
            scales = self._scale_list() or none
        make = new_extracted_instance
        return {
            i: make(i, t, p, m, f, sc)
            for i, t, p, m, f, sc in zip(ids, templates, specs, metadata, fragmented, scales, strict=True)
        }

    # --- write-back ------------------------------------------------------------------------------------

    # karta.extract.writeback and karta.extract.suspend are imported by the methods that write: a
    # command that only reads never needs them (kli start-up is budgeted).

    def _update_whole(self, attr: str, field: str, target: TargetType, values: Mapping[str, Any]) -> None:
        from karta.extract import writeback

        path = self._plan.paths[attr]
        if path is None:
            raise WriteBackError(f"component {self.name}: {field} is not defined")
        ordered = writeback.order_values(self.instance_ids(), values)
        writeback.check_values(ordered, target, what=f"component {self.name}: {field}")
        with self._w.session():
            updated = writeback.write_whole(
                evaluator=self._w.evaluator,
                obj=self._w.obj,
                path=path,
                values=ordered,
                multi_instance=self.is_multi_instance,
                what=f"component {self.name}: {field}",
                target=target,
            )
        self._w.replace(updated)

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
        definition = self._plan.fragment_definition
        if definition is None:
            raise WriteBackError(f"component {self.name}: fragmentedPodSpecDefinition is not defined")
        from karta.extract import writeback

        ordered = writeback.order_values(self.instance_ids(), values)
        try:
            with self._w.session():
                updated = writeback.write_fragments(
                    evaluator=self._w.evaluator,
                    obj=self._w.obj,
                    definition=definition,
                    records=ordered,
                    multi_instance=self.is_multi_instance,
                )
        except WriteBackError as exc:
            raise WriteBackError(f"component {self.name}: {exc}") from exc
        self._w.replace(updated)

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
        from karta.extract import suspend

        with self._w.session():
            updated = suspend.apply_actions(actions, self._w.obj, evaluator=self._w.evaluator, label=label)
        self._w.replace(updated)
