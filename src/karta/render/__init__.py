"""Scheduler-object renderers (docs/spec/gang-backends.md): pure functions from a workload (a Karta applied to
one object, as a :class:`~karta.extract.ComponentFactory`), its gang plan, its pods and options to the
plain-dict Kubernetes objects a gang scheduler understands, plus per-pod binding patches.

:mod:`~karta.render.backends` is the registry (one record per backend: name, API group and
resources, options type, renderer) and :func:`render` dispatches through it. One module per backend:
:mod:`~karta.render.kai` (KAI PodGroup), :mod:`~karta.render.workload_api` (Kubernetes Workload API
1.35-1.37), :mod:`~karta.render.volcano`, :mod:`~karta.render.coscheduling` and
:mod:`~karta.render.kueue`; :mod:`~karta.render.common` holds the naming and metadata rules.

Names are resolved lazily (PEP 562): ``kli`` reads the registry to build its ``--backend`` choices
without importing the renderers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "BACKENDS": "karta.render.backends",
    "BackendOptions": "karta.render.backends",
    "CoschedulingOptions": "karta.render.backends",
    "GangBackend": "karta.render.backends",
    "KaiOptions": "karta.render.backends",
    "KueueOptions": "karta.render.backends",
    "VolcanoOptions": "karta.render.backends",
    "WorkloadApiOptions": "karta.render.backends",
    "check_group_name": "karta.render.backends",
    "gang_backend": "karta.render.backends",
    "options_for": "karta.render.backends",
    "PodPatch": "karta.render.common",
    "Rendering": "karta.render.common",
    "render": "karta.render.dispatch",
    "render_coscheduling": "karta.render.coscheduling",
    "render_kai": "karta.render.kai",
    "render_kueue": "karta.render.kueue",
    "render_volcano": "karta.render.volcano",
    "render_workload_api": "karta.render.workload_api",
}

__all__ = [
    "BACKENDS",
    "BackendOptions",
    "CoschedulingOptions",
    "GangBackend",
    "KaiOptions",
    "KueueOptions",
    "PodPatch",
    "Rendering",
    "VolcanoOptions",
    "WorkloadApiOptions",
    "check_group_name",
    "gang_backend",
    "options_for",
    "render",
    "render_coscheduling",
    "render_kai",
    "render_kueue",
    "render_volcano",
    "render_workload_api",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())

__dir__ = lazy_dir(_EXPORTS, globals())


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.render.backends import (
        BACKENDS,
        BackendOptions,
        CoschedulingOptions,
        GangBackend,
        KaiOptions,
        KueueOptions,
        VolcanoOptions,
        WorkloadApiOptions,
        check_group_name,
        gang_backend,
        options_for,
    )
    from karta.render.common import PodPatch, Rendering
    from karta.render.coscheduling import render_coscheduling
    from karta.render.dispatch import render
    from karta.render.kai import render_kai
    from karta.render.kueue import render_kueue
    from karta.render.volcano import render_volcano
    from karta.render.workload_api import render_workload_api
