"""Scheduler-object renderers (gang-backends.md): pure functions from a workload (a Karta applied to
one object, as a :class:`~karta.extract.ComponentFactory`), its gang plan, its pods and options to the
plain-dict Kubernetes objects a gang scheduler understands, plus per-pod binding patches.

One module per backend: :mod:`~karta.render.kai` (KAI PodGroup), :mod:`~karta.render.workload_api`
(Kubernetes Workload API 1.35-1.37), :mod:`~karta.render.volcano`, :mod:`~karta.render.coscheduling`
and :mod:`~karta.render.kueue`; :mod:`~karta.render.common` holds the naming and metadata rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from karta.errors import GangError
from karta.extract import ComponentFactory
from karta.gang import GangPlan, compute_gang_plan
from karta.render.common import PodPatch, Rendering, RenderOptions
from karta.render.coscheduling import render_coscheduling
from karta.render.kai import render_kai
from karta.render.kueue import render_kueue
from karta.render.volcano import render_volcano
from karta.render.workload_api import render_workload_api

__all__ = [
    "BACKENDS",
    "PodPatch",
    "RenderOptions",
    "Rendering",
    "render",
    "render_coscheduling",
    "render_kai",
    "render_kueue",
    "render_volcano",
    "render_workload_api",
]

Renderer = Callable[..., Rendering]

BACKENDS: dict[str, Renderer] = {
    "kai": render_kai,
    "workload-api": render_workload_api,
    "volcano": render_volcano,
    "coscheduling": render_coscheduling,
    "kueue": render_kueue,
}


def render(
    backend: str,
    factory: ComponentFactory,
    *,
    pods: Sequence[Mapping[str, Any]] = (),
    plan: GangPlan | None = None,
    options: RenderOptions | None = None,
) -> Rendering:
    """Render ``backend``'s objects for the factory's workload; the plan is computed when not given.

    Errors are GangError (unknown backend, what a backend cannot express, names) or the extraction
    errors of the plan.
    """
    renderer = BACKENDS.get(backend)
    if renderer is None:
        raise GangError(f"unknown gang backend {backend!r}; one of {', '.join(BACKENDS)}")
    if plan is None:
        plan = compute_gang_plan(factory, pods, evaluator=factory.evaluator)
    diagnostics = tuple(f"{d.message}" for d in plan.diagnostics)
    result = renderer(factory, plan, pods=pods, options=options)
    if diagnostics:
        result = Rendering(
            objects=result.objects,
            pod_patches=result.pod_patches,
            owner_patch=result.owner_patch,
            warnings=diagnostics + result.warnings,
        )
    return result
