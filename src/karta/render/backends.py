"""The gang-backend registry: one record per backend of docs/spec/gang-backends.md (§2–§6) with its name,
the API group and resources of the objects it creates, the verbs RBAC must allow on them, its
options type and its renderer. It is the only list of backends: :func:`karta.render.render`,
``kli gang --backend``, ``kli rbac --backend``, :func:`karta.rbac.build_rbac`, karta-controller
(``--backend`` and its chart's schema, :data:`CONTROLLER_BACKENDS`) all read it.

A record also holds every fact karta-controller needs about its backend (mode B): whether the
controller runs it, the options it always renders with and those it learns from API discovery
(:func:`controller_options`, the one options function of the gang reconciler and the pod webhook:
the Workload API version is that of the served ``Workload``), the versions of its group resources
it renders (:meth:`GangBackend.renders_version`), the fields of its objects that cannot change
once they exist (:class:`Immutable`), what pod admission writes only when missing
(``create_only``) and adds to a pod's binding (:meth:`GangBackend.admission_patch`), the pod
fields naming a group that only a pod's creation sets (``pod_group_fields``), and the verbs it
needs on the workloads themselves (``workload_verbs``, RBAC).

Options are one frozen dataclass per backend holding only what that backend reads, every default
the documented one. Their fields share one vocabulary (a name means the same for every backend
that reads it), so :func:`options_for` can build any backend's options from one mapping of values,
each backend taking the names it reads: ``kli gang`` maps its flags onto the chosen backend this way.

Importing this module is cheap (``kli`` builds its ``--backend`` choices from it): a record names
its renderer as ``module:function``, imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, Self

from karta._records import field_names, record
from karta.errors import GangError

if TYPE_CHECKING:
    from karta.extract import ComponentFactory
    from karta.gang import GangPlan
    from karta.render.common import Rendering

__all__ = [
    "BACKENDS",
    "CONTROLLER_BACKENDS",
    "GROUP_OBJECT_VERBS",
    "NO_BACKEND",
    "OPTION_NAMES",
    "WORKLOAD_API_VERSIONS",
    "BackendOptions",
    "CoschedulingOptions",
    "GangBackend",
    "Immutable",
    "KaiOptions",
    "KueueOptions",
    "Minimum",
    "Renderer",
    "ServedResource",
    "VolcanoOptions",
    "WorkloadApiOptions",
    "check_group_name",
    "controller_options",
    "gang_backend",
    "options_for",
    "workload_api_version",
]

WORKLOAD_API_VERSIONS: Mapping[str, str] = MappingProxyType(
    {"1.35": "v1alpha1", "1.36": "v1alpha2", "1.37": "v1beta1"}
)
"""Kubernetes release → the Workload API version it serves
(docs/spec/gang-backends.md#workload-api-versions)."""

GROUP_OBJECT_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")
"""What a consumer does on the group objects it renders (docs/spec/gang-backends.md#object-rules): read and
watch them, server-side apply them (create, patch), and delete those no longer in the plan (stale
objects; karta-controller's gang reconciler)."""


@record(slots=True)
class BackendOptions:
    """The options of one backend (a subclass per backend)."""

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Self:
        """The options named in ``values`` that this backend reads; the other names are ignored."""
        return cls(**{name: values[name] for name in field_names(cls) if name in values})


@record(slots=True)
class KaiOptions(BackendOptions):
    """KAI (section 2).

    - ``scheduler_name``: the scheduler name written on pods (default ``kai-scheduler``).
    - ``queue``: the last fallback queue, instead of ``default-queue``.
    - ``kai_managed``: mode B (we create the PodGroup): our labels, and the owner annotation
      ``kai.scheduler/skip-podgrouper``; the default is the exact preview of KAI's own output.
    - ``kai_queue_label``: KAI's queue label key (``--queue-label-key``).
    - ``group_name``: mode B only (KAI names its own PodGroups): the PodGroup's name instead of
      ``pg-<topOwnerUID>-<podGroup.name>``; the workload must have one gang.
    """

    scheduler_name: str | None = None
    queue: str | None = None
    kai_managed: bool = False
    kai_queue_label: str = "kai.scheduler/queue"
    group_name: str | None = None


@record(slots=True)
class WorkloadApiOptions(BackendOptions):
    """The Kubernetes Workload API (section 3).

    - ``k8s_version``: the API version (1.35 → v1alpha1, 1.36 → v1alpha2, 1.37 → v1beta1).
    - ``composite``: 1.37 only; render sub-groups as a CompositePodGroup tree (v1alpha3) instead of
      flattening them.
    - ``topology_gate``: the TopologyAwareWorkloadScheduling gate is on.
    - ``topology_level_map``: Karta topology level → node-label key.
    - ``group_name``: the name of the object pods point at, instead of the one of 1.3: the PodGroup
      (1.36+), the CompositePodGroup (``composite``; its PodGroups ``<name>-<sub-group>``), the
      Workload (1.35, whose pods name it in ``workloadRef``); the workload must have one gang.
    - ``api_version``: 1.37 only; write the Workload and PodGroups at ``v1alpha3``, the alpha
      version that carries 1.37's shapes, instead of ``v1beta1`` (a cluster that serves the alpha
      API only: ``--runtime-config=scheduling.k8s.io/v1beta1=false,scheduling.k8s.io/v1alpha3=true``).
    """

    k8s_version: str = "1.37"
    composite: bool = False
    topology_gate: bool = True
    topology_level_map: Mapping[str, str] = field(default_factory=dict)
    group_name: str | None = None
    api_version: str | None = None


@record(slots=True)
class VolcanoOptions(BackendOptions):
    """Volcano (section 4).

    - ``scheduler_name``: the scheduler name written on pods (default ``volcano``).
    - ``queue``: the queue when the workload has no ``scheduling.volcano.sh/queue-name`` label.
    - ``min_resources``: compute ``minResources``.
    - ``group_name``: the PodGroup's name instead of ``<workloadName>-<gang>``; one gang only.
    """

    scheduler_name: str | None = None
    queue: str | None = None
    min_resources: bool = False
    group_name: str | None = None


@record(slots=True)
class CoschedulingOptions(BackendOptions):
    """scheduler-plugins coscheduling (section 5).

    - ``scheduler_name``: the scheduler name written on pods (default ``scheduler-plugins-scheduler``).
    - ``schedule_timeout_seconds``: ``scheduleTimeoutSeconds`` (default unset).
    - ``min_resources``: compute ``minResources``.
    - ``group_name``: the PodGroup's name instead of ``<workloadName>-<gang>`` (at most 63
      characters: pods carry it as a label value); one gang only.
    """

    scheduler_name: str | None = None
    schedule_timeout_seconds: int | None = None
    min_resources: bool = False
    group_name: str | None = None


@record(slots=True)
class KueueOptions(BackendOptions):
    """Kueue (section 6): the queue is the workload's label and Kueue binds the pods.

    - ``group_name``: the Workload's name instead of ``<kind>-<workloadName>``;
    - ``queue``: the LocalQueue when the workload has no ``kueue.x-k8s.io/queue-name`` label (the
      label wins: it is what Kueue's own integration reads for the workload).
    """

    group_name: str | None = None
    queue: str | None = None


class ServedResource(Protocol):
    """A resource the API server serves, as discovery lists it (:class:`karta.kube.ResourceType`)."""

    @property
    def group(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def kind(self) -> str: ...


@record(slots=True)
class Immutable:
    """A field of a backend's ``kind`` that cannot change once the object exists (in ``version``
    only, when given): the value at ``path``; with ``names_only`` the set of entry names of the
    list-map at ``path`` (entries may change, none may be added or removed); with ``keys_only``
    the set of keys of the mapping at ``path`` (which one-of member is set: ``gang`` or ``basic``,
    their values may change). A ``*`` in ``path`` stands for each entry of a list-map, matched by
    ``name`` (an entry that is new or gone is the ``names_only`` rule's)."""

    kind: str
    path: tuple[str, ...]
    version: str | None = None
    names_only: bool = False
    keys_only: bool = False


@record(slots=True)
class Minimum:
    """A gang minimum of a backend's ``kind`` at ``path`` (``*`` as in :class:`Immutable`): pod
    admission never lowers it (only the gang reconciler does, from the workload it watches)."""

    kind: str
    path: tuple[str, ...]


class Renderer(Protocol):
    """A backend's renderer: the objects for a workload's gang plan, and the pod bindings."""

    def __call__(
        self,
        factory: ComponentFactory,
        plan: GangPlan,
        *,
        pods: Sequence[Mapping[str, Any]] = ...,
        options: Any = ...,
    ) -> Rendering: ...


@record(slots=True)
class GangBackend:
    """One gang backend.

    ``api_group`` and ``resources`` (plurals) are those of every object its renderer emits;
    ``renderer`` is ``module:function``, a :class:`Renderer` taking ``options_type`` options;
    ``label_valued_name``: pods carry the group object's name as a label value (63 characters).

    What karta-controller needs (mode B): ``controller``, whether it runs the backend;
    ``controller_values``, the options it always renders with; ``discovered``, the options it
    learns from the served resources; ``rendered_versions``, kind → the version of each group
    resource the options render; ``immutable``, the fields that never change once written (the
    API server's or the CRD's rules, docs/controller/gang-reconciler.md); ``minimums``, the gang
    minimums; ``create_only``, the kinds pod admission writes only when missing (their content is
    the workload's, and one pod's rendering may carry another gang's values);
    ``admission_annotations``, what admission adds to every bound pod; ``pod_group_fields``, the
    pod spec fields naming a group (set at creation only); ``pod_group_ref``, where a bound pod
    names its group object (of kind ``pod_group_kind``); ``held_while_named``, the kinds whose
    deletion waits until no pod names the object (a finalizer); ``workload_verbs``, the verbs on
    the workload kinds; ``holds_missing_group``, the scheduler itself holds a pod whose group
    object does not exist yet (measured on kube-scheduler 1.37.2 for the Workload API: no
    condition, bound within a second of the PodGroup's creation), so the pod webhook may admit a
    bound pod before its group object is written.
    """

    name: str
    api_group: str
    resources: tuple[str, ...]
    options_type: type[BackendOptions]
    renderer: str
    verbs: tuple[str, ...] = GROUP_OBJECT_VERBS
    label_valued_name: bool = False
    controller: bool = True
    controller_values: tuple[tuple[str, Any], ...] = ()
    discovered: Callable[[Iterable[ServedResource]], Mapping[str, Any]] | None = None
    rendered_versions: Callable[[Any], Mapping[str, str]] | None = None
    immutable: tuple[Immutable, ...] = ()
    minimums: tuple[Minimum, ...] = ()
    create_only: tuple[str, ...] = ()
    admission_annotations: tuple[tuple[str, str], ...] = ()
    pod_group_fields: tuple[str, ...] = ()
    pod_group_ref: tuple[str, ...] = ()
    pod_group_kind: str = "PodGroup"
    held_while_named: tuple[str, ...] = ()
    workload_verbs: tuple[str, ...] = ()
    holds_missing_group: bool = False

    def load_renderer(self) -> Renderer:
        module, _, function = self.renderer.partition(":")
        loaded: Renderer = getattr(importlib.import_module(module), function)
        return loaded

    def rbac_rule(self) -> dict[str, Any]:
        """The ClusterRole rule for the group objects (docs/spec/gang-backends.md#object-rules)."""
        return {"apiGroups": [self.api_group], "resources": list(self.resources), "verbs": list(self.verbs)}

    def renders_version(self, options: BackendOptions, kind: str, version: str) -> bool:
        """Whether ``options`` render ``kind`` at ``version`` (every version when the backend has one)."""
        if self.rendered_versions is None:
            return True
        return self.rendered_versions(options).get(kind) == version

    def immutable_fields(self, api_version: str, kind: str) -> tuple[Immutable, ...]:
        """The immutable fields of a ``kind`` object of ``api_version`` (one of this backend's)."""
        version = api_version.rpartition("/")[2]
        return tuple(
            rule
            for rule in self.immutable
            if rule.kind == kind and (rule.version is None or rule.version == version)
        )

    def minimum_fields(self, kind: str) -> tuple[Minimum, ...]:
        """The gang minimums of a ``kind`` object (one of this backend's)."""
        return tuple(rule for rule in self.minimums if rule.kind == kind)

    def pod_group_name(self, pod: Mapping[str, Any]) -> str | None:
        """The name of the group object ``pod`` names (``pod_group_ref``), None when it names none."""
        value: Any = pod
        for part in self.pod_group_ref:
            if not isinstance(value, Mapping):
                return None
            value = value.get(part)
        return value if isinstance(value, str) and value and self.pod_group_ref else None

    def admission_patch(
        self, patch: Mapping[str, Any], *, scheduler_name: str | None = None
    ) -> dict[str, Any]:
        """A pod's binding as pod admission sends it: the rendered merge ``patch`` (copied), the
        backend's admission annotations and, when the controller has one, the scheduler name."""
        import copy

        out: dict[str, Any] = copy.deepcopy(dict(patch))
        if self.admission_annotations:
            annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
            annotations.update(self.admission_annotations)
        if scheduler_name:
            out.setdefault("spec", {})["schedulerName"] = scheduler_name
        return out


def workload_api_version(served: Mapping[str, bool]) -> str | None:
    """The Kubernetes release whose Workload API to render, from the versions of
    ``scheduling.k8s.io`` Workload the cluster serves (``{version: served}``): the newest of
    v1beta1, v1alpha2, v1alpha1 (docs/spec/gang-backends.md#workload-api-versions); None when none is
    served."""
    for release, version in sorted(WORKLOAD_API_VERSIONS.items(), reverse=True):
        if served.get(version):
            return release
    return None


_WORKLOAD_API_GROUP = "scheduling.k8s.io"
_COMPOSITE_VERSION = "v1alpha3"
_DEFAULT_RELEASE = "1.37"


def _workload_api_discovered(served: Iterable[ServedResource]) -> dict[str, Any]:
    """The release of the served Workload API (the newest); 1.37's objects at ``v1alpha3`` when
    only that alpha version is served (a 1.37 API server without v1beta1); 1.37 when none is
    served, so that the writes fail naming the missing v1beta1 rather than rendering nothing."""
    versions = {r.version: True for r in served if r.group == _WORKLOAD_API_GROUP and r.kind == "Workload"}
    release = workload_api_version(versions)
    if release is None and versions.get(_COMPOSITE_VERSION):
        return {"k8s_version": _DEFAULT_RELEASE, "api_version": _COMPOSITE_VERSION}
    return {"k8s_version": release or _DEFAULT_RELEASE, "api_version": None}


def _workload_api_versions(options: WorkloadApiOptions) -> dict[str, str]:
    version = options.api_version or WORKLOAD_API_VERSIONS.get(options.k8s_version, "")
    return {"Workload": version, "PodGroup": version, "CompositePodGroup": _COMPOSITE_VERSION}


# The Workload API's immutable fields, each one tried on the 1.37.2 API server (v1beta1 Workload and
# PodGroup, v1alpha3 CompositePodGroup; tests/e2e/controller/test_immutable_fields.py repeats every
# try): a Workload's controllerRef, its set of template names (v1alpha2: the templates as a whole;
# v1alpha1: podGroups), each template's policy kind (gang or basic) and constraints; a PodGroup's
# workloadRef (v1alpha2: podGroupTemplateRef), parent, policy kind and constraints; a
# CompositePodGroup's workloadRef, parent, constraints and whole policy (minGroupCount included).
# Every minCount (PodGroup, template, nested template) and a composite template's minGroupCount
# may change: "mutable to support workload scaling". KAI, Volcano and coscheduling declare no
# immutable field: their CRDs carry no CEL rule (the corpus CRDs; tests/unit/render), Volcano's
# PodGroup webhook checks CREATE only, KAI's re-checks the sub-group structure on UPDATE, and the
# scheduler-plugins release installs no PodGroup webhook.
_WORKLOAD_API_IMMUTABLE = (
    Immutable("Workload", ("spec", "controllerRef")),
    Immutable("Workload", ("spec", "podGroups")),
    Immutable("Workload", ("spec", "podGroupTemplates"), version="v1alpha2"),
    Immutable("Workload", ("spec", "podGroupTemplates"), names_only=True),
    Immutable("Workload", ("spec", "podGroupTemplates", "*", "schedulingPolicy"), keys_only=True),
    Immutable("Workload", ("spec", "podGroupTemplates", "*", "schedulingConstraints")),
    Immutable("Workload", ("spec", "compositePodGroupTemplates"), names_only=True),
    Immutable("Workload", ("spec", "compositePodGroupTemplates", "*", "schedulingPolicy"), keys_only=True),
    Immutable("Workload", ("spec", "compositePodGroupTemplates", "*", "schedulingConstraints")),
    Immutable("Workload", ("spec", "compositePodGroupTemplates", "*", "podGroupTemplates"), names_only=True),
    Immutable(
        "Workload",
        ("spec", "compositePodGroupTemplates", "*", "podGroupTemplates", "*", "schedulingPolicy"),
        keys_only=True,
    ),
    Immutable(
        "Workload",
        ("spec", "compositePodGroupTemplates", "*", "podGroupTemplates", "*", "schedulingConstraints"),
    ),
    Immutable("PodGroup", ("spec", "workloadRef")),
    Immutable("PodGroup", ("spec", "podGroupTemplateRef"), version="v1alpha2"),
    Immutable("PodGroup", ("spec", "parentCompositePodGroupName")),
    Immutable("PodGroup", ("spec", "schedulingPolicy"), keys_only=True),
    Immutable("PodGroup", ("spec", "schedulingConstraints")),
    Immutable("CompositePodGroup", ("spec", "workloadRef")),
    Immutable("CompositePodGroup", ("spec", "parentCompositePodGroupName")),
    Immutable("CompositePodGroup", ("spec", "schedulingPolicy")),
    Immutable("CompositePodGroup", ("spec", "schedulingConstraints")),
)
_WORKLOAD_API_MINIMUMS = (Minimum("PodGroup", ("spec", "schedulingPolicy", "gang", "minCount")),)
# KAI's sub-groups are a list-map by name; Volcano's minTaskMember a map of task → minimum.
_CRD_MINIMUMS = (Minimum("PodGroup", ("spec", "minMember")),)


_ALL = (
    GangBackend(
        name="kai",
        api_group="scheduling.run.ai",
        resources=("podgroups",),
        options_type=KaiOptions,
        renderer="karta.render.kai:render_kai",
        # Mode B: we create the PodGroups, so KAI's own pod-grouper must leave the pods alone: the
        # annotation goes on the workload (the owner patch, hence patch on the workload kinds)
        # and, at admission, on the pod (KAI reads it on the pod or any owner).
        controller_values=(("kai_managed", True),),
        admission_annotations=(("kai.scheduler/skip-podgrouper", "true"),),
        workload_verbs=("patch",),
        minimums=(*_CRD_MINIMUMS, Minimum("PodGroup", ("spec", "subGroups", "*", "minMember"))),
        pod_group_ref=("metadata", "annotations", "pod-group-name"),
    ),
    GangBackend(
        name="workload-api",
        api_group="scheduling.k8s.io",
        resources=("compositepodgroups", "podgroups", "workloads"),
        options_type=WorkloadApiOptions,
        renderer="karta.render.workload_api:render_workload_api",
        discovered=_workload_api_discovered,
        rendered_versions=_workload_api_versions,
        immutable=_WORKLOAD_API_IMMUTABLE,
        minimums=_WORKLOAD_API_MINIMUMS,
        create_only=("Workload",),
        pod_group_fields=("schedulingGroup", "workloadRef"),
        holds_missing_group=True,
        pod_group_ref=("spec", "schedulingGroup", "podGroupName"),
        # scheduling.k8s.io/podgroup-protection: a deleted PodGroup stays while any pod names it,
        # bound or not (measured on 1.37.2), and a pod's schedulingGroup cannot change.
        held_while_named=("PodGroup",),
    ),
    GangBackend(
        name="volcano",
        api_group="scheduling.volcano.sh",
        resources=("podgroups",),
        options_type=VolcanoOptions,
        renderer="karta.render.volcano:render_volcano",
        minimums=(*_CRD_MINIMUMS, Minimum("PodGroup", ("spec", "minTaskMember", "*"))),
        pod_group_ref=("metadata", "annotations", "scheduling.k8s.io/group-name"),
    ),
    GangBackend(
        name="coscheduling",
        api_group="scheduling.x-k8s.io",
        resources=("podgroups",),
        options_type=CoschedulingOptions,
        renderer="karta.render.coscheduling:render_coscheduling",
        label_valued_name=True,
        minimums=_CRD_MINIMUMS,
        pod_group_ref=("metadata", "labels", "scheduling.x-k8s.io/pod-group"),
    ),
    GangBackend(
        name="kueue",
        api_group="kueue.x-k8s.io",
        resources=("workloads",),
        options_type=KueueOptions,
        renderer="karta.render.kueue:render_kueue",
        controller=False,  # Kueue admits the workload and binds the pods itself
    ),
)

BACKENDS: Mapping[str, GangBackend] = MappingProxyType({backend.name: backend for backend in _ALL})
"""Backend name → record, in the order of docs/spec/gang-backends.md."""

NO_BACKEND = "none"
"""karta-controller's ``--backend`` without a gang backend (mode A: the operator only)."""

CONTROLLER_BACKENDS: tuple[str, ...] = (NO_BACKEND, *(b.name for b in _ALL if b.controller))
"""karta-controller's ``--backend`` choices (its chart's ``backend`` enum): none, then every
backend the controller runs, in registry order."""

OPTION_NAMES = frozenset(name for backend in _ALL for name in field_names(backend.options_type))
"""Every option name some backend reads."""


def gang_backend(name: str) -> GangBackend:
    """The record of backend ``name``; GangError for an unknown one."""
    backend = BACKENDS.get(name)
    if backend is None:
        raise GangError(f"unknown gang backend {name!r}; one of {', '.join(BACKENDS)}")
    return backend


def options_for(backend: str, values: Mapping[str, Any] | None = None) -> BackendOptions:
    """``backend``'s options from ``values`` (option names of any backend; those it does not read
    are ignored). A name no backend reads is a TypeError, a misspelling."""
    values = values or {}
    unknown = sorted(set(values) - OPTION_NAMES)
    if unknown:
        raise TypeError(f"unknown render option(s): {', '.join(unknown)}")
    return gang_backend(backend).options_type.from_values(values)


def controller_options(
    backend: str, served: Iterable[ServedResource] = (), *, scheduler_name: str | None = None
) -> BackendOptions:
    """The options karta-controller renders ``backend`` with, given the resources the API server
    serves: the record's ``controller_values``, the scheduler name when one is configured and what
    the record learns from ``served`` (the Workload API release). The gang reconciler and the pod
    webhook both call it, so they render the same objects and bindings."""
    record = gang_backend(backend)
    values: dict[str, Any] = dict(record.controller_values)
    if scheduler_name:
        values["scheduler_name"] = scheduler_name
    if record.discovered is not None:
        values.update(record.discovered(served))
    return record.options_type.from_values(values)


def check_group_name(backend: str, options: BackendOptions) -> None:
    """GangError unless the ``group_name`` of ``options`` (when set) is one ``backend`` can give
    its group object: a DNS-1123 subdomain (at most 63 characters where pods carry it as a label
    value, coscheduling), and for KAI only in mode B (KAI names the PodGroups it creates itself)."""
    name = getattr(options, "group_name", None)
    if name is None:
        return
    if isinstance(options, KaiOptions) and not options.kai_managed:
        raise GangError(
            "KAI names the PodGroups it creates itself (pg-<topOwnerUID>-<podGroup.name>): a group "
            "name needs KAI mode B, where we create them (kai_managed)"
        )
    from karta.render.common import check_group_name as check

    check(name, label_value=gang_backend(backend).label_valued_name)
