"""The RBAC ``karta-controller`` needs for its options: exactly what its parts call, nothing more.

:func:`controller_rbac` returns the cluster-wide rules (a ClusterRole) and the rules in the
controller's own namespace (a Role). The Helm chart (``charts/karta``) renders the same rules; its
tests compare them with this function for several value sets, and run the controller with the
chart's ServiceAccount to show they are enough.

What each part calls, and so needs:

* the definitions cache, the operator and the Karta webhooks' cache: ``kartas.run.ai`` list,
  watch; the operator's index labels: patch; its conditions: ``kartas/status`` patch;
  ``--install-catalog`` (server-side apply): patch and create;
* the operator's and the gang reconciler's CRD watches: ``customresourcedefinitions`` list, watch;
* events (Warning events on Kartas in ``default`` and on workloads anywhere): create, patch;
* with a gang ``--backend``: the workload kinds of the definitions and their pods (read, from
  :func:`karta.rbac.build_rbac`, as ``kli rbac`` prints them; the gang reconciler's and the
  platform metrics' caches), the kinds between a pod and its
  workload (``get``: the owner walk of the pod webhook and of alpha gangs), the backend's group
  objects (its registry record's rule), and for ``kai`` ``patch`` on the workload kinds (the
  ``kai.scheduler/skip-podgrouper`` annotation);
* ``--webhook-cert-mode auto``: the certificate Secret in the controller's namespace (create; get
  and update by name) and the two webhook configurations (get and patch by name, for ``caBundle``);
  ``--register-webhooks`` also creates them;
* ``--leader-elect``: the Lease in its namespace (create; get and update by name).
* ``--ui`` (the web view, docs/ui.md; read-only): the workload kinds of the definitions and their
  pods (get, list, watch), the kinds between them (get: the owner walk), Events (list: a workload
  page's Events) and the group objects of every gang backend (get, list, watch), everywhere.

API discovery (``/api``, ``/apis``) is open to every authenticated user (``system:discovery``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from karta.controller.runtime.owners import owner_kinds
from karta.model.names import plural_guess
from karta.rbac import READ_VERBS, build_rbac
from karta.render.backends import NO_BACKEND, gang_backend

if TYPE_CHECKING:
    from karta.controller.options import Options
    from karta.model import Karta

__all__ = [
    "ControllerRBAC",
    "controller_rbac",
    "owner_kinds",
    "ui_rules",
    "workload_rules",
]

_KARTAS_GROUP = "run.ai"
_POD = ("", "Pod")


@dataclass(frozen=True)
class ControllerRBAC:
    """``cluster_rules`` for a ClusterRole, ``namespace_rules`` for a Role in the controller's
    namespace, and ``notes`` explaining guessed plurals."""

    cluster_rules: list[dict[str, Any]]
    namespace_rules: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)


def _rule(
    group: str, resources: Sequence[str], verbs: Sequence[str], names: Sequence[str] = ()
) -> dict[str, Any]:
    rule: dict[str, Any] = {"apiGroups": [group], "resources": list(resources), "verbs": list(verbs)}
    if names:
        rule["resourceNames"] = list(names)
    return rule


def workload_rules(
    kartas: Sequence[Karta], *, backend: str, plurals: Mapping[tuple[str, str], str] | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The rules that depend on the definitions and the gang backend (none for ``none``): the
    workloads and their pods read (:func:`karta.rbac.build_rbac`, without its Karta rule, which
    :func:`controller_rbac` widens), the owner kinds (``get``), the backend's group objects, and
    the record's ``workload_verbs`` on the workloads (``kai``: patch)."""
    if backend == NO_BACKEND:
        return [], []
    plurals = plurals or {}
    (role, *_), notes = build_rbac(
        kartas, name="karta-controller", backends=(backend,), plurals=plurals, owners=False
    )
    rules = [r for r in role["rules"] if r["apiGroups"] != [_KARTAS_GROUP]]
    read: dict[str, set[str]] = {}
    for rule in rules[:-1]:  # the last rule is the backend's
        read.setdefault(rule["apiGroups"][0], set()).update(rule["resources"])
    owners: dict[str, set[str]] = {}
    for group, kind in sorted(owner_kinds(kartas)):
        plural = plurals.get((group, kind)) or plural_guess(kind)
        if plural not in read.get(group, set()):
            owners.setdefault(group, set()).add(plural)
    rules[-1:-1] = [_rule(group, sorted(names), ("get",)) for group, names in sorted(owners.items())]
    verbs = gang_backend(backend).workload_verbs  # KAI: patch (the skip-podgrouper annotation)
    if verbs:
        rules.extend(
            _rule(group, sorted(names - {"pods"} if group == "" else names), verbs)
            for group, names in sorted(read.items())
            if names - ({"pods"} if group == "" else set())
        )
    return rules, notes


def controller_rbac(
    options: Options,
    kartas: Sequence[Karta],
    *,
    plurals: Mapping[tuple[str, str], str] | None = None,
    extra_rules: Sequence[Mapping[str, Any]] = (),
) -> ControllerRBAC:
    """The rules ``karta-controller`` with ``options`` needs, for the definitions ``kartas``."""
    cluster, notes = workload_rules(kartas, backend=options.backend, plurals=plurals)
    cluster = [*cluster, *(dict(r) for r in extra_rules)]
    karta_verbs = [*READ_VERBS[1:], "patch", *(["create"] if options.install_catalog else [])]
    cluster += [
        _rule(_KARTAS_GROUP, ["kartas"], karta_verbs),
        _rule(_KARTAS_GROUP, ["kartas/status"], ["patch"]),
        _rule("apiextensions.k8s.io", ["customresourcedefinitions"], READ_VERBS[1:]),
        _rule("", ["events"], ["create", "patch"]),
    ]
    if options.ui:
        cluster += ui_rules(kartas, plurals=plurals)
    namespaced: list[dict[str, Any]] = []
    if options.enable_webhook and options.webhook_cert_mode == "auto":
        cluster += [
            _rule("admissionregistration.k8s.io", [r], ["get", "patch"], [n])
            for r, n in _configurations(options)
        ]
        namespaced += [
            _rule("", ["secrets"], ["create"]),
            _rule("", ["secrets"], ["get", "update"], [options.webhook_cert_secret]),
        ]
    if options.enable_webhook and options.register_webhooks:
        cluster.append(
            _rule("admissionregistration.k8s.io", [r for r, _ in _configurations(options)], ["create"])
        )
        if options.webhook_cert_mode != "auto":
            cluster += [
                _rule("admissionregistration.k8s.io", [r], ["patch"], [n])
                for r, n in _configurations(options)
            ]
    if options.leader_elect:
        namespaced += [
            _rule("coordination.k8s.io", ["leases"], ["create"]),
            _rule("coordination.k8s.io", ["leases"], ["get", "update"], [options.leader_election_id]),
        ]
    return ControllerRBAC(cluster, namespaced, notes)


def ui_rules(
    kartas: Sequence[Karta], *, plurals: Mapping[tuple[str, str], str] | None = None
) -> list[dict[str, Any]]:
    """What ``--ui`` reads (see the module docstring), read verbs only: the root kinds and pods
    (list, watch: :func:`karta.rbac.build_rbac` without owners), the kinds between them
    (:func:`owner_kinds`, get), Events (list) and every backend's group objects (list, watch)."""
    from karta.render import BACKENDS

    plurals = plurals or {}
    (role, *_), _notes = build_rbac(kartas, name="karta-ui", plurals=plurals, owners=False)
    rules = [dict(r) for r in role["rules"] if r["apiGroups"] != [_KARTAS_GROUP]]
    read = {r["apiGroups"][0]: set(r["resources"]) for r in rules}
    owners: dict[str, set[str]] = {}
    for group, kind in sorted(owner_kinds(kartas)):
        plural = plurals.get((group, kind)) or plural_guess(kind)
        if plural not in read.get(group, set()):
            owners.setdefault(group, set()).add(plural)
    rules += [_rule(group, sorted(names), ("get",)) for group, names in sorted(owners.items())]
    rules.append(_rule("", ["events"], ["list"]))
    for backend in BACKENDS.values():
        rules.append(_rule(backend.api_group, list(backend.resources), READ_VERBS))
    return rules


def _configurations(options: Options) -> tuple[tuple[str, str], ...]:
    return (
        ("mutatingwebhookconfigurations", options.mutating_webhook_name),
        ("validatingwebhookconfigurations", options.validating_webhook_name),
    )
