"""The RBAC a consumer of some Karta definitions needs (gang-backends.md 1.5): a ClusterRole with
get/list/watch on the workload kinds and their pods and on ``kartas.run.ai``, plus each chosen gang
backend's rule for its group objects as its registry record states it
(:mod:`karta.render.backends`), and optionally a ClusterRoleBinding for a service account.

Resource names are the CRDs' plurals when known (:func:`crd_plurals`), else a guess from the kind,
with a note saying so. Pure: the caller reads definitions and CRD files and prints the objects
(``kli rbac``; a controller's install manifests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta.model.names import plural_guess
from karta.render.backends import gang_backend

if TYPE_CHECKING:
    from karta.model import Karta

__all__ = ["READ_VERBS", "build_rbac", "crd_plurals"]

READ_VERBS = ("get", "list", "watch")

# groups of built-in kinds, whose plurals are the regular lower-cased ones
_BUILT_IN_GROUPS = {"", "apps", "batch"}


def crd_plurals(documents: Iterable[Any]) -> dict[tuple[str, str], str]:
    """``(group, kind) → plural`` of the CustomResourceDefinitions among ``documents`` (those with
    ``spec.names.kind`` and ``spec.names.plural``); other documents are skipped."""
    out: dict[tuple[str, str], str] = {}
    for doc in documents:
        if not (isinstance(doc, Mapping) and doc.get("kind") == "CustomResourceDefinition"):
            continue
        spec = doc.get("spec")
        if not isinstance(spec, Mapping):
            continue
        names = spec.get("names")
        if isinstance(names, Mapping) and names.get("kind") and names.get("plural"):
            out[(str(spec.get("group", "")), str(names["kind"]))] = str(names["plural"])
    return out


def build_rbac(
    kartas: Sequence[Karta],
    *,
    name: str,
    backends: Sequence[str] = (),
    plurals: Mapping[tuple[str, str], str] | None = None,
    service_account: tuple[str, str] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """``(objects, notes)``: the ClusterRole ``name`` (and its binding to ``service_account``,
    ``(namespace, name)``) and the comments explaining guesses. An unknown backend is a GangError."""
    plurals = plurals or {}
    notes: list[str] = []
    by_group: dict[str, set[str]] = {"": {"pods"}}
    for karta in kartas:
        gvk = karta.root.kind
        if gvk is None or not gvk.kind:
            notes.append(f"{karta.metadata.name} has no root kind; it adds nothing")
            continue
        plural = plurals.get((gvk.group, gvk.kind))
        if plural is None:
            plural = plural_guess(gvk.kind)
        if (gvk.group, gvk.kind) not in plurals and gvk.group not in _BUILT_IN_GROUPS:
            notes.append(
                f"{plural}.{gvk.group or 'core'}: plural of {gvk.kind} guessed (lower-cased kind + s); "
                "pass --crd to use the CRD's"
            )
        by_group.setdefault(gvk.group, set()).add(plural)
    rules: list[dict[str, Any]] = [
        {"apiGroups": [group], "resources": sorted(resources), "verbs": list(READ_VERBS)}
        for group, resources in sorted(by_group.items())
    ]
    rules.append({"apiGroups": ["run.ai"], "resources": ["kartas"], "verbs": list(READ_VERBS)})
    rules.extend(gang_backend(backend).rbac_rule() for backend in backends)
    labels = {"app.kubernetes.io/managed-by": "karta"}
    role: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels},
        "rules": rules,
    }
    objects = [role]
    if service_account is not None:
        namespace, account = service_account
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name, "labels": labels},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
            }
        )
    return objects, notes
