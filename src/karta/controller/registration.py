"""The webhook configurations the API server needs to call us (docs/spec/format.md#webhooks,
docs/spec/gang-backends.md#modes).

:func:`webhook_configurations` is pure: the MutatingWebhookConfiguration and the
ValidatingWebhookConfiguration for the options (a Helm chart renders the same objects; the tests
compare against it). :class:`Registration` server-side applies them (field manager ``karta``) when
``--register-webhooks`` is given, the way a local run against a dev cluster registers itself.

* ``mkarta.run.ai`` (``/mutate-run-ai-v1alpha1-karta``, CREATE) and ``vkarta.run.ai``
  (``/validate-run-ai-v1alpha1-karta``, CREATE and UPDATE) on ``kartas.run.ai``, failurePolicy
  ``Fail``;
* with a gang backend (``--backend`` not ``none``), ``pods.karta.run.ai`` (``/mutate--v1-pod``,
  CREATE of pods) with ``--pod-webhook-failure-policy`` (default ``Fail``: a pod of a gang is
  never placed without it while the controller is down), 5 s timeout, its namespaceSelector the
  gang-scheduling scope's namespaces (:func:`karta.gang.scope.namespace_selector` for
  ``--gang-scope``), never ``kube-system``, the ``--exclude-namespace`` ones, nor the controller's
  own namespace when it runs in a cluster (its own pods must start without it; ``excluded``).
* with ``--kueue``, ``kueue.karta.run.ai`` (docs/kueue.md 9.2): CREATE of the managed kinds
  labelled ``kueue.x-k8s.io/queue-name``, in the ``--namespace`` namespaces only when given.

``clientConfig`` is ``url`` (``--webhook-url`` + path) when a URL is given, else the Service
``--webhook-service-name`` in ``--webhook-namespace`` on port 443. ``caBundle`` is set when known
(auto mode's CA bundle, or ``ca.crt`` next to mounted files).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from karta.controller.options import Options
from karta.controller.parts.kartas.webhooks import MUTATE_PATH as KARTA_MUTATE_PATH
from karta.controller.parts.kartas.webhooks import VALIDATE_PATH as KARTA_VALIDATE_PATH
from karta.controller.parts.kueue.webhook import PATH as KUEUE_MUTATE_PATH
from karta.controller.parts.kueue.webhook import kueue_webhook
from karta.controller.parts.pod_binding.admission import PATH as POD_MUTATE_PATH
from karta.controller.parts.pod_binding.admission import pod_webhook
from karta.controller.runtime.logs import logger
from karta.controller.runtime.scope import excluded_namespaces
from karta.errors import ClusterError, KartaError
from karta.gang.scope import namespace_selector
from karta.kube.client import KubeClient
from karta.rbac import rule

__all__ = [
    "KARTA_MUTATE_PATH",
    "KARTA_VALIDATE_PATH",
    "KUEUE_MUTATE_PATH",
    "POD_MUTATE_PATH",
    "Registration",
    "registration_rules",
    "webhook_configurations",
]

_LOG = logger("webhook")
FIELD_MANAGER: Final = "karta"
_LABELS: Final = {"app.kubernetes.io/managed-by": "karta-controller", "app.kubernetes.io/name": "karta"}


def _client_config(options: Options, namespace: str, path: str, ca_bundle: bytes | None) -> dict[str, Any]:
    config: dict[str, Any]
    if options.webhook_url:
        config = {"url": options.webhook_url.rstrip("/") + path}
    else:
        config = {
            "service": {
                "name": options.webhook_service_name,
                "namespace": namespace,
                "path": path,
                "port": 443,
            }
        }
    if ca_bundle:
        config["caBundle"] = base64.b64encode(ca_bundle).decode()
    return config


def _karta_rule(operations: list[str]) -> dict[str, Any]:
    return {
        "apiGroups": ["run.ai"],
        "apiVersions": ["v1alpha1"],
        "operations": operations,
        "resources": ["kartas"],
        "scope": "*",
    }


def webhook_configurations(
    options: Options,
    *,
    namespace: str,
    ca_bundle: bytes | None = None,
    excluded: tuple[str, ...] | None = None,
    kueue_rules: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The MutatingWebhookConfiguration and the ValidatingWebhookConfiguration, in that order.
    ``namespace``: the controller's (``--webhook-namespace``, else the client's); ``excluded``: the
    namespaces never gang-scheduled (:func:`karta.controller.runtime.scope.excluded_namespaces`;
    None: ``--exclude-namespace`` and ``namespace``, as the chart, which runs in the cluster);
    ``kueue_rules``: with ``--kueue``, the suspend webhook's rules
    (:func:`karta.controller.parts.kueue.webhook.webhook_rules`; none: no entry)."""
    if excluded is None:
        excluded = (*options.exclude_namespaces, namespace)

    def cc(path: str) -> dict[str, Any]:
        return _client_config(options, namespace, path, ca_bundle)

    mutating: list[dict[str, Any]] = [
        {
            "name": "mkarta.run.ai",
            "admissionReviewVersions": ["v1"],
            "clientConfig": cc(KARTA_MUTATE_PATH),
            "failurePolicy": "Fail",
            "matchPolicy": "Equivalent",
            "rules": [_karta_rule(["CREATE"])],
            "sideEffects": "None",
            "timeoutSeconds": 10,
            "reinvocationPolicy": "Never",
        }
    ]
    if options.backend != "none":
        # The entry the pod binding defines (karta.controller.parts.pod_binding.admission), for
        # the scope's namespaces only (never ours in a cluster: its pods must start while it is down).
        mutating.append(
            pod_webhook(
                client_config=cc(POD_MUTATE_PATH),
                failure_policy=options.pod_webhook_failure_policy,
                namespace_selector=namespace_selector(options.gang_scope, excluded=excluded),
            )
        )
    if options.kueue and kueue_rules:
        mutating.append(
            kueue_webhook(
                client_config=cc(KUEUE_MUTATE_PATH), rules=kueue_rules, namespaces=options.namespaces
            )
        )
    validating: list[dict[str, Any]] = [
        {
            "name": "vkarta.run.ai",
            "admissionReviewVersions": ["v1"],
            "clientConfig": cc(KARTA_VALIDATE_PATH),
            "failurePolicy": "Fail",
            "matchPolicy": "Equivalent",
            "rules": [_karta_rule(["CREATE", "UPDATE"])],
            "sideEffects": "None",
            "timeoutSeconds": 10,
        }
    ]
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": options.mutating_webhook_name, "labels": dict(_LABELS)},
            "webhooks": mutating,
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": options.validating_webhook_name, "labels": dict(_LABELS)},
            "webhooks": validating,
        },
    ]


_PATHS: Final = {
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
}


def apply(client: KubeClient, objects: list[dict[str, Any]]) -> None:
    """Server-side apply each configuration (forced: the controller owns these objects)."""
    for obj in objects:
        path = f"/apis/admissionregistration.k8s.io/v1/{_PATHS[obj['kind']]}/{obj['metadata']['name']}"
        client.request_json(
            "PATCH",
            path,
            params={"fieldManager": FIELD_MANAGER, "force": "true"},
            body=obj,
            content_type="application/apply-patch+yaml",
        )


def registration_rules(configurations: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """The RBAC rules of :class:`Registration` (``--register-webhooks``) for the webhook
    configurations ``configurations`` (``(resource, name)`` pairs): create them, and patch them by
    name (server-side apply)."""
    return [
        rule("admissionregistration.k8s.io", [resource for resource, _ in configurations], ["create"]),
        *(
            rule("admissionregistration.k8s.io", [resource], ["patch"], [name])
            for resource, name in configurations
        ),
    ]


class Registration:
    """The part that registers the webhooks (``--register-webhooks``): once the CA bundle is
    known (``bundle`` returns it, or None while there is none yet), then again whenever it
    changes; retried with back-off while the API server refuses. ``namespace`` None: the
    client's."""

    name = "webhook-registration"

    def __init__(
        self,
        client: KubeClient,
        options: Options,
        *,
        namespace: str | None,
        bundle: Callable[[], bytes | None],
        interval: float = 5.0,
        kueue_rules: Callable[[], Sequence[Mapping[str, Any]]] | None = None,
    ) -> None:
        self.client = client
        self.options = options
        self.namespace = namespace
        self.bundle = bundle
        self.interval = interval
        self.kueue_rules = kueue_rules  # read each round: a new definition or CRD changes them
        self.registered = threading.Event()

    def run(self, stop: threading.Event) -> None:
        applied: tuple[bytes, list[Any]] | None = None
        failures = 0
        while not stop.is_set():
            bundle = self.bundle()
            rules = self._kueue_rules()
            if bundle is not None and (bundle, rules) != applied:
                try:
                    apply(
                        self.client,
                        webhook_configurations(
                            self.options,
                            namespace=self.namespace or self.client.namespace,
                            ca_bundle=bundle,
                            excluded=excluded_namespaces(self.options.exclude_namespaces, client=self.client),
                            kueue_rules=rules,
                        ),
                    )
                except ClusterError as exc:
                    failures += 1
                    _LOG.warning("cannot register the webhooks; retrying", extra={"error": str(exc)})
                    stop.wait(min(30.0, 0.5 * 2 ** min(failures, 6)))
                    continue
                failures = 0
                applied = (bundle, rules)
                self.registered.set()
                _LOG.info(
                    "webhooks registered",
                    extra={
                        "mutating": self.options.mutating_webhook_name,
                        "validating": self.options.validating_webhook_name,
                    },
                )
            stop.wait(self.interval if applied is not None else 0.2)

    def _kueue_rules(self) -> list[Any]:
        if self.kueue_rules is None or not self.options.kueue:
            return []
        try:
            return list(self.kueue_rules())
        except KartaError as exc:
            _LOG.warning("cannot compute the Kueue webhook's rules", extra={"error": str(exc)})
            return []
