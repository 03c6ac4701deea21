""":func:`render`: one workload's scheduler objects for a backend of the registry
(:mod:`karta.render.backends`): the gang plan (computed when not given), the backend's renderer with
its own options, and the plan's diagnostics ahead of the renderer's warnings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta.extract import ComponentFactory
from karta.gang import GangPlan, compute_gang_plan
from karta.render.backends import BackendOptions, gang_backend
from karta.render.common import Rendering

__all__ = ["render"]


def render(
    backend: str,
    factory: ComponentFactory,
    *,
    pods: Sequence[Mapping[str, Any]] = (),
    plan: GangPlan | None = None,
    options: BackendOptions | None = None,
) -> Rendering:
    """Render ``backend``'s objects for the factory's workload; the plan is computed when not given,
    ``options`` default to the backend's defaults (see :func:`~karta.render.backends.options_for`).

    Errors are GangError (unknown backend, what a backend cannot express, names) or the extraction
    errors of the plan; options of another backend's type are a TypeError.
    """
    record = gang_backend(backend)
    if options is None:
        options = record.options_type()
    elif not isinstance(options, record.options_type):
        raise TypeError(
            f"the {backend} backend takes {record.options_type.__name__}, not {type(options).__name__}"
        )
    if plan is None:
        plan = compute_gang_plan(factory, pods, evaluator=factory.evaluator)
    diagnostics = tuple(f"{d.message}" for d in plan.diagnostics)
    result = record.load_renderer()(factory, plan, pods=pods, options=options)
    if diagnostics:
        result = Rendering(
            objects=result.objects,
            pod_patches=result.pod_patches,
            owner_patch=result.owner_patch,
            warnings=diagnostics + result.warnings,
        )
    return result
