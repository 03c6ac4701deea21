"""Event-to-key mappers (controller-runtime's ``handler.EnqueueRequestForOwner``): which work-queue
keys an event on one object stands for, so that a part enqueues the object it reconciles when
something it owns changes.

:func:`owner_keys`: the owners of an object (its ``ownerReferences``, controller or not) whose
group and kind a part reconciles, each as the owner's GVK (the version the part watches), the
object's namespace and the owner's name. A reference that is not a mapping, or whose kind is not
reconciled, gives nothing.

:func:`label_changed`: whether an update changed one label (the namespace's scope label: most
namespace updates, status and annotations, change nothing a part reads).

:func:`namespace_keys`: the keys of the workloads in a namespace, for an event on the namespace
(controller-runtime's ``EnqueueRequestsFromMapFunc``): the gang reconciler re-enqueues a
namespace's workloads when its :data:`~karta.gang.scope.SCOPE_LABEL` changes, so that they come
into the scope or leave it at once, not at the next resync.

Pure: no cache, no API call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from karta.model.gvk import GVK, GroupKind

__all__ = ["label_changed", "namespace_keys", "owner_keys"]


def owner_keys(obj: Mapping[str, Any], reconciled: Mapping[GroupKind, GVK]) -> list[tuple[GVK, str, str]]:
    """``(gvk, namespace, name)`` of each owner of ``obj`` whose kind is in ``reconciled``
    (group and kind → the GVK the part watches), in the order of the references."""
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return []
    namespace = str(meta.get("namespace") or "")
    refs = meta.get("ownerReferences")
    keys: list[tuple[GVK, str, str]] = []
    for ref in refs if isinstance(refs, list) else ():
        if not isinstance(ref, Mapping):
            continue
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        gvk = reconciled.get(GroupKind(group, str(ref.get("kind") or "")))
        name = str(ref.get("name") or "")
        if gvk is not None and name:
            keys.append((gvk, namespace, name))
    return keys


def _labels(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def label_changed(obj: Mapping[str, Any], old: Mapping[str, Any] | None, key: str) -> bool:
    """Whether the label ``key`` differs between ``old`` (None: the object is new) and ``obj``."""
    return _labels(obj).get(key) != _labels(old).get(key)


def namespace_keys(
    namespace: Mapping[str, Any], workloads: Iterable[tuple[GVK, Mapping[str, Any]]]
) -> list[tuple[GVK, str, str]]:
    """``(gvk, namespace, name)`` of each of ``workloads`` (a GVK and an object) in ``namespace``
    (a Namespace object), in their order; nothing for a namespace without a name."""
    meta = namespace.get("metadata")
    name = str(meta.get("name") or "") if isinstance(meta, Mapping) else ""
    keys: list[tuple[GVK, str, str]] = []
    if not name:
        return keys
    for gvk, obj in workloads:
        wmeta = obj.get("metadata")
        if not isinstance(wmeta, Mapping) or wmeta.get("namespace") != name:
            continue
        wname = str(wmeta.get("name") or "")
        if wname:
            keys.append((gvk, name, wname))
    return keys
