"""The suspend webhook of the Kueue part (docs/kueue.md section 9.2): a mutating webhook on CREATE
of the managed kinds, scoped by the ``kueue.x-k8s.io/queue-name`` label, that answers with the JSON
patch of :func:`karta.kueue.patches.suspend`, so that nothing of a queued workload runs before
Kueue admits it.

Which kinds are managed: :func:`managed` — the definition is eligible
(:func:`karta.kueue.eligibility.eligibility`) and its root kind is one Kueue's generated
configuration lists under ``externalFrameworks`` (:func:`karta.kueue.config.kueue_integrations`
with the same ``native`` built-ins: a kind Kueue keeps is never touched by karta).

A request that is not karta's to answer (not a CREATE, no queue label, an owned object, no
definition or one karta does not manage) is allowed unchanged: the reconciler never creates a
Workload for it either, so it runs unqueued, as Kueue leaves a job of a kind it does not manage.

A labelled workload of a managed kind that karta cannot suspend is **denied**, with the reason and
a hint: its definition is quarantined (docs/controller/quarantine.md: its expressions breached
their budget too often; nothing of it is evaluated until the Karta changes), or the suspend
actions fail on this object (a budget breach, told to the quarantine, an invalid value, any other
error). Allowing it unsuspended would let it run outside its quota, and a label is the user's
request to be queued. Kueue's own webhooks refuse a job they cannot handle the same way. The
webhook's ``failurePolicy`` is ``Fail`` (section 9.2) for the same reason: an object created while
the controller is down must not start outside its quota.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from karta import extract
from karta.controller.runtime.logs import logger
from karta.controller.runtime.quarantine import Quarantine
from karta.controller.runtime.webhook.review import Answer, allow, deny, json_pointer
from karta.definitions import DefinitionStore, StoredDefinition, evaluator_for
from karta.errors import KartaError
from karta.kueue.config import kueue_integrations
from karta.kueue.names import QUEUE_LABEL
from karta.kueue.patches import suspend
from karta.model import Karta
from karta.model.documents import DocumentError, check_json_value
from karta.model.gvk import GVK
from karta.model.names import plural_guess

__all__ = [
    "PATH",
    "WEBHOOK_NAME",
    "KueueSuspend",
    "kueue_webhook",
    "managed",
    "suspend_patch",
    "webhook_rules",
]

PATH: Final = "/mutate-kueue-suspend"
WEBHOOK_NAME: Final = "kueue.karta.run.ai"
_LOG = logger("kueue")
_NAME_MAX: Final = 253  # a Kubernetes name at most: the message names the object, bounded
_ERROR_MAX: Final = 1000  # characters of the error quoted in a denial


def manages(karta: Karta, native: Iterable[str] = ()) -> bool:
    """Whether the Kueue part manages the workloads of the definition ``karta`` (module docstring)."""
    try:
        return bool(kueue_integrations([karta], native=native).external_frameworks)
    except KartaError:
        return False


KUEUE_MANAGED: Final = "KueueManaged"


def managed_condition(karta: Karta, native: Iterable[str] = ()) -> dict[str, str] | None:
    """The ``KueueManaged`` condition of a Karta (without its transition time; None: no root
    kind): True, reason ``Managed``, when its workloads are queued through Kueue by karta; else
    False with the reason karta leaves them alone: ``NotEligible`` (the message is
    :func:`karta.kueue.eligibility.eligibility`'s reason, or the missing suspend actions) or
    ``KeptWithKueue`` (a ``--kueue-native`` framework, or a core-group kind)."""
    root = karta.root_gvk
    if root is None or not root.kind:
        return None
    try:
        integrations = kueue_integrations([karta], native=native)
    except KartaError:
        return None
    token = GVK(root.group, root.version, root.kind).token
    if integrations.external_frameworks:
        message = f"workloads of {token} labelled {QUEUE_LABEL} are queued through Kueue by karta"
        return {"type": KUEUE_MANAGED, "status": "True", "reason": "Managed", "message": message}
    why = dict(integrations.left_out).get(token, "not a Kueue external framework")
    kept = why.startswith("kept with Kueue") or why.startswith("a core-group kind")
    reason = "KeptWithKueue" if kept else "NotEligible"
    message = f"workloads of {token} are not queued through Kueue by karta: {why}"
    return {"type": KUEUE_MANAGED, "status": "False", "reason": reason, "message": message}


def managed(definition: StoredDefinition, native: Iterable[str] = ()) -> bool:
    """:func:`manages` for a stored definition (an invalid one never)."""
    return definition.valid and manages(definition.karta, native)


def _has_controller(obj: Mapping[str, Any]) -> bool:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(isinstance(r, Mapping) and r.get("controller") for r in refs)


def suspend_patch(obj: Mapping[str, Any], suspended: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON patch (RFC 6902) from ``obj`` to ``suspended``: each top-level field that differs,
    replaced whole (added when absent)."""
    ops: list[dict[str, Any]] = []
    for key, value in suspended.items():
        if obj.get(key) != value:
            ops.append({"op": "replace" if key in obj else "add", "path": json_pointer(key), "value": value})
    return ops


class KueueSuspend:
    """The webhook handler (:data:`~karta.controller.runtime.webhook.review.Handler`) at :data:`PATH`."""

    def __init__(
        self,
        store: Callable[[], DefinitionStore],
        *,
        native: Sequence[str] = (),
        quarantine: Quarantine | None = None,
    ) -> None:
        self.store = store
        self.native = tuple(native)
        self.quarantine = quarantine or Quarantine()

    def __call__(self, request: Mapping[str, Any]) -> Answer:
        try:
            return self._handle(request)
        except Exception as exc:  # hostile input never raises: allowed, logged
            _LOG.warning(
                "kueue suspend webhook could not decide; allowed unchanged", extra={"error": str(exc)}
            )
            return allow()

    def _handle(self, request: Mapping[str, Any]) -> Answer:
        obj = request.get("object")
        kind = request.get("kind")
        if (
            request.get("operation") != "CREATE"
            or not isinstance(obj, Mapping)
            or not isinstance(kind, Mapping)
        ):
            return allow()
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if not isinstance(labels, Mapping) or not labels.get(QUEUE_LABEL) or _has_controller(obj):
            return allow()
        gvk = GVK(str(kind.get("group") or ""), str(kind.get("version") or ""), str(kind.get("kind") or ""))
        resolution = self.store().resolution(gvk)
        definition = resolution.used if resolution is not None else None
        if definition is None or not managed(definition, self.native):
            return allow()
        return self._suspend(definition, obj, gvk)

    def _suspend(self, definition: StoredDefinition, obj: Mapping[str, Any], gvk: GVK) -> Answer:
        """The suspend patch of a labelled workload of a managed kind, or the denial (docstring)."""
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or meta.get("generateName") or "")[:_NAME_MAX]
        what = f"{gvk.kind} {str(meta.get('namespace') or '')[:_NAME_MAX]}/{name}"
        hint = (
            f"fix the Karta {definition.name} (a new generation is evaluated again), or create it "
            f"without the {QUEUE_LABEL} label to run it outside Kueue"
        )
        if self.quarantine.holds(definition):
            return deny(
                f"karta cannot queue {what} through Kueue: its definition {definition.name} is "
                "quarantined (its expressions breached their budget; see the Karta's Degraded "
                f"condition), so it cannot be suspended until admission; {hint}"
            )
        try:
            check_json_value(obj, source=what)
        except DocumentError as exc:  # the object's doing, not the definition's: no breach counted
            return deny(
                f"karta cannot queue {what} through Kueue: {exc}, beyond any real object; create it "
                f"without the {QUEUE_LABEL} label to run it outside Kueue"
            )
        try:
            factory = extract.ComponentFactory(
                definition.karta, dict(obj), evaluator=evaluator_for(definition)
            )
            suspended = suspend(factory)
        except Exception as exc:  # hostile definitions and objects: denied, never raised
            self.quarantine.breached(definition, exc, part="kueue-webhook")
            return deny(
                f"karta cannot queue {what} through Kueue: the suspendActions of {definition.name} "
                f"failed on it, so it cannot be suspended until admission: {str(exc)[:_ERROR_MAX]}; {hint}"
            )
        if not isinstance(suspended, Mapping):
            return deny(
                f"karta cannot queue {what} through Kueue: the suspendActions of {definition.name} "
                f"gave {type(suspended).__name__}, not an object; {hint}"
            )
        return allow(suspend_patch(obj, suspended))


def kueue_webhook(
    *,
    client_config: Mapping[str, Any],
    rules: Sequence[Mapping[str, Any]],
    failure_policy: str = "Fail",
    namespaces: Sequence[str] = (),
) -> dict[str, Any]:
    """The MutatingWebhookConfiguration entry of the suspend webhook (``rules``: :func:`webhook_rules`).
    ``namespaces``: the controller's (``--namespace``), the only ones it matches (a workload
    suspended where the reconciler does not look would never be resumed); none: every namespace but
    ``kube-system``."""
    if namespaces:
        scope = {"key": "kubernetes.io/metadata.name", "operator": "In", "values": sorted(set(namespaces))}
    else:
        scope = {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
    return {
        "name": WEBHOOK_NAME,
        "admissionReviewVersions": ["v1"],
        "clientConfig": dict(client_config),
        "failurePolicy": failure_policy,
        "matchPolicy": "Equivalent",
        "rules": [dict(r) for r in rules],
        "objectSelector": {"matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]},
        "namespaceSelector": {"matchExpressions": [scope]},
        "sideEffects": "None",
        "timeoutSeconds": 10,
        "reinvocationPolicy": "Never",
    }


def webhook_rules(
    kartas: Iterable[Karta],
    *,
    native: Iterable[str] = (),
    plural: Callable[[GVK], str | None] | None = None,
) -> list[dict[str, Any]]:
    """One CREATE rule per managed root kind of the definitions ``kartas``, sorted. ``plural``:
    the served plural of a GVK (None: not served, no rule); without it guessed as ``kli rbac``
    guesses."""
    native = tuple(native)
    seen: set[tuple[str, str, str]] = set()
    for karta in kartas:
        root = karta.root_gvk
        if root is None or not root.kind or not manages(karta, native):
            continue
        gvk = GVK(root.group, root.version, root.kind)
        name = plural(gvk) if plural is not None else plural_guess(gvk.kind)
        if name:
            seen.add((gvk.group, gvk.version, name))
    return [
        {
            "apiGroups": [group],
            "apiVersions": [version],
            "operations": ["CREATE"],
            "resources": [name],
            "scope": "Namespaced",
        }
        for group, version, name in sorted(seen)
    ]
