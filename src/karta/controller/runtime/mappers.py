"""Event-to-key mappers (controller-runtime's ``handler.EnqueueRequestForOwner``): which work-queue
keys an event on one object stands for, so that a part enqueues the object it reconciles when
something it owns changes.

:func:`owner_keys`: the owners of an object (its ``ownerReferences``, controller or not) whose
group and kind a part reconciles, each as the owner's GVK (the version the part watches), the
object's namespace and the owner's name. A reference that is not a mapping, or whose kind is not
reconciled, gives nothing. Pure: no cache, no API call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karta.model.gvk import GVK, GroupKind

__all__ = ["owner_keys"]


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
