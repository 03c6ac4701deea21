"""Karta definitions from the cluster, best effort (docs/spec/format.md#definition-sources).

Owns :func:`read_cluster_kartas` (list every ``kartas.run.ai`` object, cluster-wide, paged, and
load each leniently) and :func:`load_definitions` (catalog < user directory < cluster, merged per
root GVK by :class:`karta.definitions.DefinitionStore`, which also decides between invalid and
duplicate definitions of one GVK).

Nothing here raises for cluster trouble: each situation of 17.3 becomes a warning and the tools
fall back to the built-in and user definitions.

- no kubeconfig: no cluster definitions, no warning;
- CRD missing: ``the kartas.run.ai CRD is not installed; showing built-in definitions only``;
- forbidden: a warning asking for permission to list Kartas;
- other errors: ``could not read Karta definitions from the cluster: <err>; showing built-in
  definitions only``;
- an undecodable object: that object is skipped, with a warning naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from karta.errors import ApiError, ClusterError, KartaError
from karta.kube.resources import ResourceType
from karta.kube.sources import UNREADABLE_DEFINITIONS
from karta.kube.sources import connect_for_definitions as connect_for_definitions  # its home before

if TYPE_CHECKING:
    from karta.definitions import DefinitionStore
    from karta.kube.client import KubeClient
    from karta.model import Karta

KARTA_RESOURCE = ResourceType(
    group="run.ai",
    version="v1alpha1",
    kind="Karta",
    plural="kartas",
    singular="karta",
    namespaced=False,
    short_names=("krt",),
    verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
)
CRD_MISSING = "the kartas.run.ai CRD is not installed; showing built-in definitions only"
FORBIDDEN = (
    "you are not allowed to list Karta definitions (kartas.run.ai) in this cluster: {err}; "
    "ask a cluster administrator for permission to list kartas.run.ai cluster-wide; "
    "showing built-in definitions only"
)


@dataclass
class ClusterKartas:
    """What the cluster holds: decoded definitions (list order: by name) and the warnings."""

    kartas: list[Karta] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    available: bool = False  # the list itself succeeded (CRD installed and readable)
    forbidden: str = ""  # the API server's refusal when listing them was forbidden (401/403)


def read_cluster_kartas(client: KubeClient, *, chunk_size: int = 500) -> ClusterKartas:
    """Every Karta object, loaded leniently (``load_karta(strict=False)``); never raises for
    cluster trouble (see the module docstring)."""
    out = ClusterKartas()
    try:
        listed = client.list(KARTA_RESOURCE, chunk_size=chunk_size)
    except ApiError as exc:
        if exc.status == 404:
            out.warnings.append(CRD_MISSING)
        elif exc.status in (401, 403):
            out.forbidden = str(exc)
            out.warnings.append(FORBIDDEN.format(err=exc))
        else:
            out.warnings.append(UNREADABLE_DEFINITIONS.format(err=exc))
        return out
    except ClusterError as exc:
        out.warnings.append(UNREADABLE_DEFINITIONS.format(err=exc))
        return out
    out.available = True
    for item in sorted(listed.items, key=_name):
        karta, problem = decode_cluster_karta(item)
        if karta is None:
            out.warnings.append(f"skipping the cluster Karta {_name(item) or '<unnamed>'}: {problem}")
            continue
        out.kartas.append(karta)
        out.names.append(_name(item))
    return out


def _name(item: dict[str, Any]) -> str:
    return str((item.get("metadata") or {}).get("name") or "")


def decode_cluster_karta(item: dict[str, Any]) -> tuple[Karta | None, str]:
    """One cluster Karta object, loaded leniently: the Karta, or None and why not."""
    from karta.model import load_karta

    try:
        result = load_karta(item, strict=False, source_name=f"cluster Karta {_name(item)}")
    except KartaError as exc:
        return None, str(exc)
    errors = result.errors
    if result.karta is None or errors:
        return None, errors[0].message if errors else "it could not be decoded"
    return result.karta, ""


def load_definitions(
    client: KubeClient | None,
    *,
    user_directory: Path | None = None,
    include_catalog: bool = True,
    chunk_size: int = 500,
) -> DefinitionStore:
    """Catalog < user directory < cluster definitions, merged per root GVK (the store passes
    invalid ones over and ranks cluster duplicates); ``client=None`` means offline (no
    kubeconfig), silently."""
    from karta.definitions import DefinitionStore

    if client is None:
        return DefinitionStore.load(user_directory=user_directory, include_catalog=include_catalog)
    read = read_cluster_kartas(client, chunk_size=chunk_size)
    return DefinitionStore.load(
        user_directory=user_directory,
        include_catalog=include_catalog,
        cluster=read.kartas if read.available else None,
        cluster_warnings=read.warnings,
        cluster_forbidden=read.forbidden,
    )
