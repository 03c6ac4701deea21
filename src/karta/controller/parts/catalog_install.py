"""``--install-catalog``: the built-in catalog applied to the cluster as Karta objects.

Owns :func:`install_catalog` (one pass) and :class:`CatalogInstaller` (the manager part that runs
it once, leader-only, retrying API errors with back-off). Each built-in definition is applied by
server-side apply as field manager ``karta``, as :func:`karta.definitions.catalog_objects` makes
it (labelled ``app.kubernetes.io/managed-by: karta``, ours, and with its index labels; ``kli
catalog export`` prints the same objects). A user's Karta always wins: a built-in is skipped when
a Karta that is not ours already claims its exact root GVK, or already has its name.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from karta.controller.runtime.logs import logger
from karta.definitions import MANAGED_BY, MANAGED_BY_VALUE, catalog_objects, root_gvk
from karta.errors import ClusterError
from karta.kube.client import FIELD_MANAGER, KubeClient
from karta.kube.kartas import KARTA_RESOURCE
from karta.rbac import rule

__all__ = ["CatalogInstaller", "InstallResult", "catalog_install_rules", "install_catalog", "plan"]

_LOG = logger("catalog")


@dataclass
class InstallResult:
    applied: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why


def _ours(obj: Mapping[str, Any]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return isinstance(labels, Mapping) and labels.get(MANAGED_BY) == MANAGED_BY_VALUE


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def plan(existing: Iterable[Mapping[str, Any]], wanted: Iterable[dict[str, Any]]) -> InstallResult:
    """Which built-ins to apply given the cluster's Kartas (pure): the names in ``applied``."""
    others = [o for o in existing if not _ours(o) and not (o.get("metadata") or {}).get("deletionTimestamp")]
    claimed = {gvk: _name(o) for o in sorted(others, key=_name, reverse=True) if (gvk := root_gvk(o))}
    taken_names = {_name(o) for o in others}
    result = InstallResult()
    for body in wanted:
        name, gvk = _name(body), root_gvk(body)
        if gvk in claimed:
            result.skipped[name] = f"the Karta {claimed[gvk]} already describes {gvk}"
        elif name in taken_names:
            result.skipped[name] = f"a Karta named {name} exists and is not managed by karta"
        else:
            result.applied.append(name)
    return result


def install_catalog(client: KubeClient) -> InstallResult:
    """Apply every built-in not shadowed by a user's Karta; API errors raise."""
    wanted = catalog_objects()
    existing = client.list(KARTA_RESOURCE).items
    result = plan(existing, wanted)
    by_name = {_name(b): b for b in wanted}
    for name in result.applied:
        client.apply(by_name[name], field_manager=FIELD_MANAGER, force=True)
    for name, why in result.skipped.items():
        _LOG.info("built-in definition not installed", extra={"key": name, "reason": why})
    _LOG.info("catalog installed", extra={"applied": len(result.applied), "skipped": len(result.skipped)})
    return result


class CatalogInstaller:
    """A manager part: installs the catalog once (retrying API errors), then idles until stop."""

    name = "catalog-installer"

    def __init__(self, client: KubeClient, *, retry_s: float = 2.0, max_retry_s: float = 60.0) -> None:
        self.client = client
        self.retry_s = retry_s
        self.max_retry_s = max_retry_s
        self.done = threading.Event()
        self.result: InstallResult | None = None

    def run(self, stop: threading.Event) -> None:
        delay = self.retry_s
        while not stop.is_set():
            try:
                self.result = install_catalog(self.client)
                self.done.set()
                break
            except ClusterError as exc:
                _LOG.warning(
                    "cannot install the catalog; retrying", extra={"error": str(exc), "retry_s": delay}
                )
                stop.wait(delay)
                delay = min(delay * 2, self.max_retry_s)
        stop.wait()


def catalog_install_rules() -> list[dict[str, Any]]:
    """The RBAC rules of ``--install-catalog`` (server-side apply of the catalog's Kartas): patch
    and create ``kartas.run.ai``."""
    return [rule("run.ai", ["kartas"], ["patch", "create"])]
