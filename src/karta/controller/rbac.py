"""The RBAC ``karta-controller`` needs for its options: exactly what its parts call, nothing more.

:func:`controller_rbac` returns the cluster-wide rules (a ClusterRole) and the rules in the
controller's own namespace (a Role). The Helm chart (``charts/karta``) renders the same rules; its
tests compare them with this function for several value sets, and run the controller with the
chart's ServiceAccount to show they are enough.

Each module that makes the calls declares its rules, from plain values (a part never reads
:class:`~karta.controller.options.Options`); this module only picks them by option, in this order:

* with a gang ``--backend``: :func:`~karta.controller.parts.gangs.workload_rules` (the
  workload kinds of the definitions and their pods read, as ``kli rbac`` prints them; the owner
  walk's ``get``, :func:`~karta.controller.runtime.owners.owner_rules`; the backend's group
  objects; ``kai``: patch on the workload kinds), then the chart's ``extraRules``;
* ``kartas.run.ai``: list, watch (the definitions cache, the operator's and the Karta webhooks'
  watch: :func:`~karta.controller.runtime.definitions.definitions_rules`), patch and
  ``kartas/status`` patch (the operator's index labels and conditions:
  :func:`~karta.controller.parts.kartas.operator.operator_rules`), create with
  ``--install-catalog`` (server-side apply:
  :func:`~karta.controller.parts.catalog_install.catalog_install_rules`), merged into one rule;
* ``customresourcedefinitions`` list, watch (the CRD index:
  :func:`~karta.controller.runtime.crds.crd_rules`);
* Events create, patch (Warning events on Kartas in ``default`` and on workloads anywhere:
  :func:`~karta.controller.runtime.events.event_rules`);
* ``--kueue``: :func:`~karta.controller.parts.kueue.reconciler.kueue_rules` (the managed kinds
  read and updated, Kueue's Workloads, ResourceFlavors, priority classes, pods; docs/kueue.md 8);
* ``--ui`` (the web view, docs/ui.md; read-only, wired by :mod:`karta.controller.main`, not a
  part): :func:`ui_rules`;
* ``--webhook-cert-mode auto``: the certificate Secret in the controller's namespace and get and
  patch by name of the two webhook configurations (:func:`~karta.controller.parts.certs.cert_rules`);
  ``--register-webhooks``: create and patch them
  (:func:`~karta.controller.registration.registration_rules`), merged with the former;
* ``--leader-elect``: the Lease in its namespace
  (:func:`~karta.controller.runtime.leader.lease_rules`).

API discovery (``/api``, ``/apis``) is open to every authenticated user (``system:discovery``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from karta.controller.parts.catalog_install import catalog_install_rules
from karta.controller.parts.certs import cert_rules
from karta.controller.parts.gangs import workload_rules
from karta.controller.parts.kartas.operator import operator_rules
from karta.controller.parts.kueue.reconciler import kueue_rules
from karta.controller.registration import registration_rules
from karta.controller.runtime.crds import crd_rules
from karta.controller.runtime.definitions import definitions_rules
from karta.controller.runtime.events import event_rules
from karta.controller.runtime.leader import lease_rules
from karta.controller.runtime.owners import owner_kinds, owner_rules
from karta.rbac import KUEUE_GROUP, READ_VERBS, build_rbac, kueue_position_rule, rule

if TYPE_CHECKING:
    from karta.controller.options import Options
    from karta.model import Karta

__all__ = [
    "ControllerRBAC",
    "controller_rbac",
    "kueue_rules",
    "owner_kinds",
    "ui_rules",
    "workload_rules",
]

_KARTAS_GROUP = "run.ai"


@dataclass(frozen=True)
class ControllerRBAC:
    """``cluster_rules`` for a ClusterRole, ``namespace_rules`` for a Role in the controller's
    namespace, and ``notes`` explaining guessed plurals."""

    cluster_rules: list[dict[str, Any]]
    namespace_rules: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)


def _merged(*groups: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rules of ``groups`` in order, those on the same objects (API groups, resources and
    names) made one, their verbs in the order first asked."""
    out: dict[tuple[tuple[str, ...], ...], dict[str, Any]] = {}
    for each in (r for group in groups for r in group):
        key = (tuple(each["apiGroups"]), tuple(each["resources"]), tuple(each.get("resourceNames", ())))
        if key in out:
            out[key]["verbs"] += [v for v in each["verbs"] if v not in out[key]["verbs"]]
        else:
            out[key] = {k: list(v) for k, v in each.items()}
    return list(out.values())


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
    cluster += _merged(
        definitions_rules(),
        operator_rules(),
        catalog_install_rules() if options.install_catalog else (),
    )
    cluster += [*crd_rules(), *event_rules()]
    if options.ui:
        cluster += ui_rules(kartas, plurals=plurals)
    if options.kueue:
        cluster += kueue_rules(kartas, native=options.kueue_native, plurals=plurals)
    namespaced: list[dict[str, Any]] = []
    configurations = (
        ("mutatingwebhookconfigurations", options.mutating_webhook_name),
        ("validatingwebhookconfigurations", options.validating_webhook_name),
    )
    webhooks: list[dict[str, Any]] = []
    if options.enable_webhook and options.webhook_cert_mode == "auto":
        webhooks, namespaced = cert_rules(secret=options.webhook_cert_secret, configurations=configurations)
    if options.enable_webhook and options.register_webhooks:
        webhooks = _merged(webhooks, registration_rules(configurations))
    cluster += webhooks
    if options.leader_elect:
        namespaced += lease_rules(options.leader_election_id)
    return ControllerRBAC(cluster, namespaced, notes)


def ui_rules(
    kartas: Sequence[Karta], *, plurals: Mapping[tuple[str, str], str] | None = None
) -> list[dict[str, Any]]:
    """What ``--ui`` reads (see the module docstring), read verbs only: the root kinds and pods
    (list, watch: :func:`karta.rbac.build_rbac` without owners), the kinds between them
    (:func:`~karta.controller.runtime.owners.owner_rules`, get), Events (list), every backend's
    group objects (list, watch), Kueue's ClusterQueues and LocalQueues (the queue page), the Nodes
    (list: the capacity page's allocatable GPUs) and the
    pending lists of its visibility API (a pending Workload's position, get)."""
    from karta.render import BACKENDS

    plurals = plurals or {}
    (role, *_), _notes = build_rbac(kartas, name="karta-ui", plurals=plurals, owners=False)
    rules = [dict(r) for r in role["rules"] if r["apiGroups"] != [_KARTAS_GROUP]]
    read = {r["apiGroups"][0]: set(r["resources"]) for r in rules}
    rules += owner_rules(kartas, read=read, plurals=plurals)
    rules.append(rule("", ["events"], ["list"]))
    for backend in BACKENDS.values():
        rules.append(rule(backend.api_group, list(backend.resources), READ_VERBS))
    rules.append(rule(KUEUE_GROUP, ["clusterqueues", "localqueues"], READ_VERBS))
    rules.append(kueue_position_rule())  # a pending Workload's position on its page
    rules.append(rule("", ["nodes"], ["list"]))  # the capacity page: the GPUs the Nodes can allocate
    return rules
