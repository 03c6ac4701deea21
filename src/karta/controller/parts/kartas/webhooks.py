"""The admission webhooks for Karta objects (docs/spec/format.md#admission, #webhooks).

Owns :class:`KartaWebhooks`, two handlers for the
:class:`~karta.controller.runtime.webhook.server.WebhookServer`:

- mutating (``mkarta.run.ai``, :data:`MUTATE_PATH`), on create: stamps the three index labels
  (a JSON patch; label keys hold ``/``, escaped as JSON pointers);
- validating (``vkarta.run.ai``, :data:`VALIDATE_PATH`), on create and update: the library
  validator's text is the rejection; on create, at most one Karta per exact root GVK (looked up in
  a cache of the cluster's Kartas: best effort, two concurrent creates can both pass); on update,
  the root GVK is immutable and the index labels must equal their derived values.

Every request is hostile: a review without an object, an object of the wrong shape, fields of
the wrong types are a clean denial with code 400, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from karta.controller.parts.kartas.operator import validation_text
from karta.controller.runtime.webhook.review import Answer, allow, deny, json_pointer
from karta.controller.runtime.webhook.server import WebhookServer
from karta.definitions import index_labels, root_gvk
from karta.model import GVK

__all__ = [
    "IMMUTABLE_MESSAGE",
    "MUTATE_PATH",
    "VALIDATE_PATH",
    "KartaWebhooks",
    "duplicate_message",
    "label_message",
]

MUTATE_PATH: Final = "/mutate-run-ai-v1alpha1-karta"
VALIDATE_PATH: Final = "/validate-run-ai-v1alpha1-karta"
MUTATING_NAME: Final = "mkarta.run.ai"
VALIDATING_NAME: Final = "vkarta.run.ai"
IMMUTABLE_MESSAGE: Final = "the root component GVK is immutable and cannot be changed after creation"


def duplicate_message(gvk: GVK, name: str) -> str:
    return (
        f'a Karta for group "{gvk.group}" version "{gvk.version}" kind "{gvk.kind}" already exists '
        f'("{name}"); only one Karta per group/version/kind is allowed'
    )


def label_message(key: str, value: str) -> str:
    return (
        f'label "{key}" is managed by the operator and must equal "{value}"; it cannot be edited or removed'
    )


class _BadRequest(Exception):
    pass


def _object(request: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    obj = request.get(field)
    if not isinstance(obj, Mapping):
        raise _BadRequest(f"the admission request has no {field}")
    meta = obj.get("metadata", {})
    if not isinstance(meta, Mapping):
        raise _BadRequest(f"{field}.metadata is not an object")
    labels = meta.get("labels")
    if labels is not None and not isinstance(labels, Mapping):
        raise _BadRequest(f"{field}.metadata.labels is not an object")
    return obj


def _operation(request: Mapping[str, Any]) -> str:
    operation = request.get("operation")
    if not isinstance(operation, str):
        raise _BadRequest("the admission request has no operation")
    return operation


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _name(obj: Mapping[str, Any]) -> str:
    name = _meta(obj).get("name")
    return name if isinstance(name, str) else ""


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = _meta(obj).get("labels")
    return labels if isinstance(labels, Mapping) else {}


class KartaWebhooks:
    """The two handlers; ``kartas`` returns the cluster's Karta objects (an informer's cache)."""

    def __init__(self, kartas: Callable[[], Iterable[Mapping[str, Any]]]) -> None:
        self.kartas = kartas

    def register(self, server: WebhookServer) -> None:
        server.register(MUTATE_PATH, "karta-mutate", self.mutate)
        server.register(VALIDATE_PATH, "karta-validate", self.validate)

    # -- mutating -------------------------------------------------------------------------------
    def mutate(self, request: Mapping[str, Any]) -> Answer:
        try:
            if _operation(request) != "CREATE":
                return allow()
            obj = _object(request, "object")
        except _BadRequest as exc:
            return deny(str(exc), code=400)
        wanted = index_labels(root_gvk(obj))
        labels = _labels(obj)
        missing = {k: v for k, v in wanted.items() if labels.get(k) != v}
        if not missing:
            return allow()
        if not isinstance(obj.get("metadata"), Mapping):
            return allow([{"op": "add", "path": "/metadata", "value": {"labels": missing}}])
        if not isinstance(_meta(obj).get("labels"), Mapping):
            return allow([{"op": "add", "path": json_pointer("metadata", "labels"), "value": missing}])
        return allow(
            [
                {"op": "add", "path": json_pointer("metadata", "labels", k), "value": v}
                for k, v in missing.items()
            ]
        )

    # -- validating -----------------------------------------------------------------------------
    def validate(self, request: Mapping[str, Any]) -> Answer:
        try:
            operation = _operation(request)
            if operation not in ("CREATE", "UPDATE"):
                return allow()
            obj = _object(request, "object")
            old = _object(request, "oldObject") if operation == "UPDATE" else None
        except _BadRequest as exc:
            return deny(str(exc), code=400)
        if old is not None and _meta(obj).get("deletionTimestamp"):
            return allow()  # finalizers being removed: never block a deletion
        text, warnings = validation_text(obj)
        if text:
            return deny(text)
        gvk = root_gvk(obj)
        if old is None:
            if gvk is not None:
                taken = self._claimed_by(gvk, exclude=_name(obj))
                if taken:
                    return deny(duplicate_message(gvk, taken))
            return allow(warnings=warnings)
        if root_gvk(old) != gvk:
            return deny(IMMUTABLE_MESSAGE)
        labels = _labels(obj)
        problems = [label_message(k, v) for k, v in index_labels(gvk).items() if labels.get(k) != v]
        if problems:
            return deny("\n".join(problems))
        return allow(warnings=warnings)

    def _claimed_by(self, gvk: GVK, *, exclude: str) -> str:
        """The name of a live Karta whose root GVK is exactly ``gvk`` (the first by name), or ''."""
        names = sorted(
            _name(o)
            for o in self.kartas()
            if isinstance(o, Mapping)
            and not _meta(o).get("deletionTimestamp")
            and _name(o) != exclude
            and root_gvk(o) == gvk
        )
        return names[0] if names else ""
