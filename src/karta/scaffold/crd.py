"""Picking the CRD, the version and its OpenAPI schema out of parsed YAML documents.

A file may hold several documents (a bundle of CRDs, or other objects next to them); only
``apiextensions.k8s.io`` CustomResourceDefinitions count. ``kind`` selects one of several CRDs
(case-insensitive, by ``spec.names.kind``); ``version`` defaults to the storage version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from karta.errors import ScaffoldError

__all__ = ["CrdVersion", "crd_version", "select_crd"]


@dataclass(frozen=True)
class CrdVersion:
    """One served version of a CRD and what a draft needs from it."""

    group: str
    version: str
    kind: str
    plural: str
    crd_name: str
    schema: dict[str, Any]  # openAPIV3Schema of the custom resource (may be {} when absent)


def _is_crd(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and doc.get("kind") == "CustomResourceDefinition"
        and str(doc.get("apiVersion", "")).startswith("apiextensions.k8s.io/")
        and isinstance(doc.get("spec"), dict)
    )


def _names(crd: dict[str, Any]) -> dict[str, Any]:
    names = crd["spec"].get("names")
    return names if isinstance(names, dict) else {}


def select_crd(documents: list[Any], *, kind: str | None = None) -> dict[str, Any]:
    """The one CRD of ``documents`` (the one whose kind is ``kind`` when given)."""
    crds: list[dict[str, Any]] = [d for d in documents if _is_crd(d)]
    if not crds:
        raise ScaffoldError("no CustomResourceDefinition found (expected apiextensions.k8s.io/v1 objects)")
    kinds = [str(_names(c).get("kind", "")) for c in crds]
    if kind is not None:
        chosen = [c for c, k in zip(crds, kinds, strict=True) if k.lower() == kind.lower()]
        if not chosen:
            raise ScaffoldError(f"no CRD for kind {kind!r}; the file defines {', '.join(sorted(kinds))}")
        return chosen[0]
    if len(crds) > 1:
        raise ScaffoldError(
            f"the file defines {len(crds)} CRDs ({', '.join(sorted(kinds))}); choose one with --kind"
        )
    return crds[0]


def crd_version(crd: dict[str, Any], *, version: str | None = None) -> CrdVersion:
    """The given version of ``crd`` (default: the storage version) with its schema."""
    spec = crd["spec"]
    names = _names(crd)
    kind = str(names.get("kind") or "")
    group = str(spec.get("group") or "")
    if not kind or not group:
        raise ScaffoldError("the CRD has no spec.group or spec.names.kind")
    plural = str(names.get("plural") or kind.lower() + "s")
    crd_name = str((crd.get("metadata") or {}).get("name") or f"{plural}.{group}")
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("name")]
    if not versions and spec.get("version"):  # apiextensions v1beta1 with a single version
        versions = [{"name": spec["version"], "storage": True}]
    if not versions:
        raise ScaffoldError(f"{crd_name} lists no versions")
    names_list = [str(v["name"]) for v in versions]
    if version is None:
        storage = [v for v in versions if v.get("storage")]
        chosen = storage[0] if storage else versions[0]
    else:
        matches = [v for v in versions if v["name"] == version]
        if not matches:
            raise ScaffoldError(f"{crd_name} has no version {version!r}; it has {', '.join(names_list)}")
        chosen = matches[0]
    schema = (chosen.get("schema") or {}).get("openAPIV3Schema")
    if not isinstance(schema, dict):  # v1beta1: one schema for all versions
        schema = (spec.get("validation") or {}).get("openAPIV3Schema")
    return CrdVersion(
        group=group,
        version=str(chosen["name"]),
        kind=kind,
        plural=plural,
        crd_name=crd_name,
        schema=schema if isinstance(schema, dict) else {},
    )
