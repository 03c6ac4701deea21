"""Picking the CRD, the version and its OpenAPI schema out of parsed YAML documents.

A file may hold several documents (a bundle of CRDs, or other objects next to them); only
``apiextensions.k8s.io`` CustomResourceDefinitions count. ``kind`` selects one of several CRDs
(case-insensitive, by ``spec.names.kind``); ``version`` defaults to the storage version.

The file is hostile input: fields of the wrong type count as absent, and the group, kind and
version must follow the API server's rules for a CRD (a DNS subdomain; DNS-1035 labels, the kind
in any case), else :class:`~karta.errors.ScaffoldError` says which one is not. Text of the CRD
quoted in a message is printable and short.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from karta.errors import ScaffoldError
from karta.model.names import dns_label_error, dns_subdomain_error

__all__ = ["CrdVersion", "crd_version", "is_crd", "select_crd"]


@dataclass(frozen=True)
class CrdVersion:
    """One served version of a CRD and what a draft needs from it."""

    group: str
    version: str
    kind: str
    plural: str
    crd_name: str
    schema: dict[str, Any]  # openAPIV3Schema of the custom resource (may be {} when absent)
    spec_replicas_path: str | None = None  # subresources.scale.specReplicasPath (".spec.replicas")
    status_replicas_path: str | None = None  # subresources.scale.statusReplicasPath


def is_crd(doc: Any) -> bool:
    """An ``apiextensions.k8s.io`` CustomResourceDefinition with a ``spec``."""
    return (
        isinstance(doc, dict)
        and doc.get("kind") == "CustomResourceDefinition"
        and str(doc.get("apiVersion", "")).startswith("apiextensions.k8s.io/")
        and isinstance(doc.get("spec"), dict)
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(crd: dict[str, Any]) -> dict[str, Any]:
    return _dict(crd["spec"].get("names"))


def _shown(text: str) -> str:
    """``text`` for a message: as it is when printable and short, else its (cut) repr."""
    if text.isprintable() and len(text) <= 80:
        return text
    return repr(text[:80]) + ("..." if len(text) > 80 else "")


def _dns_1035_error(text: str) -> str | None:
    """An RFC 1035 label: an RFC 1123 one that starts with a letter."""
    reason = dns_label_error(text)
    if reason is None and not text[0].isalpha():
        return "an RFC 1035 label must start with a letter"
    return reason


def _check_names(crd_name: str, *, group: str, kind: str, version: str) -> None:
    """The API server's rules for the names a draft is built from (apiextensions validation)."""
    for field, value, reason in (
        ("spec.group", group, dns_subdomain_error(group)),
        ("spec.names.kind", kind, _dns_1035_error(kind.lower())),
        ("the version name", version, _dns_1035_error(version)),
    ):
        if reason is not None:
            raise ScaffoldError(f"{_shown(crd_name)} is not a valid CRD: {field} {value[:80]!r}: {reason}")


def select_crd(documents: list[Any], *, kind: str | None = None) -> dict[str, Any]:
    """The one CRD of ``documents`` (the one whose kind is ``kind`` when given)."""
    crds: list[dict[str, Any]] = [d for d in documents if is_crd(d)]
    if not crds:
        raise ScaffoldError("no CustomResourceDefinition found (expected apiextensions.k8s.io/v1 objects)")
    kinds = [str(_names(c).get("kind", "")) for c in crds]
    shown = ", ".join(sorted(_shown(k) for k in kinds))
    if kind is not None:
        chosen = [c for c, k in zip(crds, kinds, strict=True) if k.lower() == kind.lower()]
        if not chosen:
            raise ScaffoldError(f"no CRD for kind {kind!r}; the file defines {shown}")
        return chosen[0]
    if len(crds) > 1:
        raise ScaffoldError(f"the file defines {len(crds)} CRDs ({shown}); choose one with --kind")
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
    crd_name = str(_dict(crd.get("metadata")).get("name") or f"{plural}.{group}")
    listed = spec.get("versions")
    listed = listed if isinstance(listed, list) else []
    versions = [v for v in listed if isinstance(v, dict) and v.get("name")]
    if not versions and spec.get("version"):  # apiextensions v1beta1 with a single version
        versions = [{"name": spec["version"], "storage": True}]
    if not versions:
        raise ScaffoldError(f"{_shown(crd_name)} lists no versions")
    names_list = [str(v["name"]) for v in versions]
    if version is None:
        storage = [v for v in versions if v.get("storage")]
        chosen = storage[0] if storage else versions[0]
    else:
        matches = [v for v in versions if str(v["name"]) == version]
        if not matches:
            raise ScaffoldError(
                f"{_shown(crd_name)} has no version {version!r}; it has {', '.join(map(_shown, names_list))}"
            )
        chosen = matches[0]
    _check_names(crd_name, group=group, kind=kind, version=str(chosen["name"]))
    schema = _dict(chosen.get("schema")).get("openAPIV3Schema")
    if not isinstance(schema, dict):  # v1beta1: one schema for all versions
        schema = _dict(spec.get("validation")).get("openAPIV3Schema")
    scale = _dict(_dict(chosen.get("subresources") or spec.get("subresources")).get("scale"))
    return CrdVersion(
        group=group,
        version=str(chosen["name"]),
        kind=kind,
        plural=plural,
        crd_name=crd_name,
        schema=schema if isinstance(schema, dict) else {},
        spec_replicas_path=_text(scale.get("specReplicasPath")),
        status_replicas_path=_text(scale.get("statusReplicasPath")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
