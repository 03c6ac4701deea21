"""The gang-backend registry: one record per backend of gang-backends.md (sections 2-6) with its name,
the API group and resources of the objects it creates, the verbs RBAC must allow on them, its
options type and its renderer. It is the only list of backends: :func:`karta.render.render`,
``kli gang --backend``, ``kli rbac --backend`` and :func:`karta.rbac.build_rbac` all read it.

Options are one frozen dataclass per backend holding only what that backend reads, every default
the documented one. Their fields share one vocabulary (a name means the same for every backend
that reads it), so :func:`options_for` can build any backend's options from one mapping of values,
each backend taking the names it reads: ``kli gang`` maps its flags onto the chosen backend this way.

Importing this module is cheap (``kli`` builds its ``--backend`` choices from it): a record names
its renderer as ``module:function``, imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, Self

from karta._records import record
from karta.errors import GangError

if TYPE_CHECKING:
    from karta.extract import ComponentFactory
    from karta.gang import GangPlan
    from karta.render.common import Rendering

__all__ = [
    "BACKENDS",
    "GROUP_OBJECT_VERBS",
    "OPTION_NAMES",
    "WORKLOAD_API_VERSIONS",
    "BackendOptions",
    "CoschedulingOptions",
    "GangBackend",
    "KaiOptions",
    "KueueOptions",
    "Renderer",
    "VolcanoOptions",
    "WorkloadApiOptions",
    "check_group_name",
    "gang_backend",
    "options_for",
]

WORKLOAD_API_VERSIONS: Mapping[str, str] = MappingProxyType(
    {"1.35": "v1alpha1", "1.36": "v1alpha2", "1.37": "v1beta1"}
)
"""Kubernetes release → the Workload API version it serves (gang-backends.md 3.1)."""

GROUP_OBJECT_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")
"""What a consumer does on the group objects it renders (gang-backends.md 1.5): read and watch
them, server-side apply them (create, patch), and delete those no longer in the plan (stale
objects; karta-controller's gang reconciler)."""


@record(slots=True)
class BackendOptions:
    """The options of one backend (a subclass per backend)."""

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Self:
        """The options named in ``values`` that this backend reads; the other names are ignored."""
        return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})


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
    """

    k8s_version: str = "1.37"
    composite: bool = False
    topology_gate: bool = True
    topology_level_map: Mapping[str, str] = field(default_factory=dict)
    group_name: str | None = None


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

    - ``group_name``: the Workload's name instead of ``<kind>-<workloadName>``.
    """

    group_name: str | None = None


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
    """

    name: str
    api_group: str
    resources: tuple[str, ...]
    options_type: type[BackendOptions]
    renderer: str
    verbs: tuple[str, ...] = GROUP_OBJECT_VERBS
    label_valued_name: bool = False

    def load_renderer(self) -> Renderer:
        module, _, function = self.renderer.partition(":")
        loaded: Renderer = getattr(importlib.import_module(module), function)
        return loaded

    def rbac_rule(self) -> dict[str, Any]:
        """The ClusterRole rule for the group objects (gang-backends.md 1.5)."""
        return {"apiGroups": [self.api_group], "resources": list(self.resources), "verbs": list(self.verbs)}


_ALL = (
    GangBackend(
        name="kai",
        api_group="scheduling.run.ai",
        resources=("podgroups",),
        options_type=KaiOptions,
        renderer="karta.render.kai:render_kai",
    ),
    GangBackend(
        name="workload-api",
        api_group="scheduling.k8s.io",
        resources=("compositepodgroups", "podgroups", "workloads"),
        options_type=WorkloadApiOptions,
        renderer="karta.render.workload_api:render_workload_api",
    ),
    GangBackend(
        name="volcano",
        api_group="scheduling.volcano.sh",
        resources=("podgroups",),
        options_type=VolcanoOptions,
        renderer="karta.render.volcano:render_volcano",
    ),
    GangBackend(
        name="coscheduling",
        api_group="scheduling.x-k8s.io",
        resources=("podgroups",),
        options_type=CoschedulingOptions,
        renderer="karta.render.coscheduling:render_coscheduling",
        label_valued_name=True,
    ),
    GangBackend(
        name="kueue",
        api_group="kueue.x-k8s.io",
        resources=("workloads",),
        options_type=KueueOptions,
        renderer="karta.render.kueue:render_kueue",
    ),
)

BACKENDS: Mapping[str, GangBackend] = MappingProxyType({backend.name: backend for backend in _ALL})
"""Backend name → record, in the order of gang-backends.md."""

OPTION_NAMES = frozenset(f.name for backend in _ALL for f in fields(backend.options_type))
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
