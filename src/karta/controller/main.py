"""``karta-controller``: parse the flags, connect, wire the parts into a manager, run it.

:func:`build` makes the :class:`Controller` (every part, not started) from options and a client,
so that tests run the same wiring in-process; :func:`main` is the console script.

With ``--enable-webhook`` the webhooks are served by a child process (``--admission-process``,
default true; only where :func:`build` may spawn, as :func:`main` lets it). :func:`build` with
``role=admission`` is that child's wiring (live definitions, the webhook server with the Karta
webhooks and pod admission, events, its own metrics; no leader election, reconcilers,
registration or certificates); the parent supervises it
(:class:`~karta.controller.runtime.child.ChildProcess`): its readiness check ``webhook`` is "the
child serves", and its ``/metrics`` includes the child's.

Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT), 1 when the cluster cannot be reached at
start-up, a part fails or the lease is lost, 2 for usage errors.
"""

from __future__ import annotations

import gc
import os
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from karta import _codegen as codegen
from karta.controller.options import ADMISSION_ROLE, Options, parse
from karta.controller.parts.catalog_install import CatalogInstaller
from karta.controller.parts.kartas.operator import KartaOperator
from karta.controller.parts.kartas.webhooks import KartaWebhooks
from karta.controller.runtime.crds import CRDIndex
from karta.controller.runtime.definitions import LiveDefinitions
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.logs import configure, logger
from karta.controller.runtime.manager import Elector, Manager, parse_address
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.quarantine import Quarantine
from karta.controller.runtime.webhook.server import CertFiles, WebhookServer
from karta.errors import ApiError, KartaError
from karta.kube.cache import SharedCache
from karta.kube.client import KubeClient
from karta.kube.config import load_config
from karta.kube.kartas import KARTA_RESOURCE
from karta.kube.sources import ConfigOverrides
from karta.kube.tracker import CoveredTypes

if TYPE_CHECKING:
    from karta.controller.parts.pod_binding.admission import PodBinder
    from karta.controller.runtime.scope import GangScope

__all__ = ["Controller", "build", "main"]

_LOG = logger()
SWITCH_INTERVAL_S = 0.001
GC_THRESHOLD = 50_000


def _version() -> str:
    try:
        return version("karta")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
        return "0+unknown"


def identity() -> str:
    """This process's name in leases and events: the pod's name in a cluster, else host and pid."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}_{os.getpid()}"


@dataclass
class Controller:
    options: Options
    client: KubeClient
    metrics: Metrics
    manager: Manager
    events: EventRecorder
    definitions: LiveDefinitions
    cache: SharedCache
    crds: CRDIndex
    types: CoveredTypes
    quarantine: Quarantine
    scope: GangScope | None = None  # with a gang backend: the gang-scheduling scope
    webhooks: WebhookServer | None = None
    parts: dict[str, object] = field(default_factory=dict)


def build(
    options: Options, client: KubeClient, *, metrics: Metrics | None = None, spawn: bool = False
) -> Controller:
    """Every part of the controller for ``options``, wired, not started.

    ``spawn``: whether the controller may run parts in child processes (``--admission-process``).
    :func:`main` says yes; a test that builds the controller inside its own process gets the
    webhooks served in that process (at ``controller.webhooks``) unless it asks for a child."""
    metrics = metrics or Metrics()
    manager = Manager(
        metrics=metrics,
        probe_address=parse_address(options.health_probe_bind_address),
        metrics_address=parse_address(options.metrics_bind_address),
        shutdown_timeout=options.shutdown_timeout,
    )
    # One cache, one watch of CRDs, one tracker of the covered types for every part: on the leader
    # each resource is listed and watched once, whichever parts read it. With the web view (every
    # namespace, every group object) the cache is wide: the parts' narrower requests (a
    # --namespace, the managed-by selector) are served from the view's informers.
    cache = SharedCache(client, log=logger("cache"), wide=options.ui)
    manager.add(cache)
    definitions = LiveDefinitions(
        client,
        user_directory=options.definitions_dir,
        include_catalog=options.catalog,
        cluster=options.cluster_definitions,
        cache=cache,
    )
    manager.add(definitions)
    crds = CRDIndex(client)
    types = CoveredTypes(client, lambda: definitions.store, after=definitions.synced, log=logger("types"))
    definitions.subscribe(types.poke)
    crds.listen(types.crds_changed)
    manager.add_ready_check("definitions", definitions.synced.is_set)
    controller = Controller(
        options=options,
        client=client,
        metrics=metrics,
        manager=manager,
        events=EventRecorder(client, instance=identity()),
        definitions=definitions,
        cache=cache,
        crds=crds,
        types=types,
        # One record of the definitions quarantined for their budget breaches, for every part.
        quarantine=Quarantine(
            breaches=options.quarantine_budget_breaches, window=options.quarantine_window, metrics=metrics
        ),
    )
    if options.backend != "none":
        _add_scope(controller)
    if options.role == ADMISSION_ROLE:
        _build_admission_child(controller)
        return controller
    # The Karta operator (15.1), leader-only; --install-catalog applies the catalog once.
    operator = KartaOperator(
        client,
        events=controller.events,
        metrics=metrics,
        workers=options.workers,
        cache=cache,
        crds=crds,
        quarantine=controller.quarantine,
    )
    manager.add(crds, leader_only=True)
    manager.add(operator, leader_only=True)
    manager.add_ready_check("karta-operator", lambda: not manager.leading or operator.synced())
    controller.parts["karta-operator"] = operator
    if options.install_catalog:
        controller.parts["catalog-installer"] = installer = CatalogInstaller(client)
        manager.add(installer, leader_only=True)
    if options.backend != "none":
        _add_gang_reconciler(controller)
    if options.kueue:
        _add_kueue(controller)
    if options.enable_webhook:
        certs = CertFiles(options.webhook_cert_dir)
        _add_tls_and_registration(controller, certs)
        binder = None
        if options.admission_process and spawn:
            _add_admission_process(controller)
        else:
            binder = _add_webhook_server(controller, certs)
        if options.backend != "none":
            _add_escaped_pods(controller, binder or _pod_binder(controller)[0])
    if options.ui:
        _add_ui(controller)
    if options.ui or options.backend != "none" or options.kueue:
        # The types the gang reconciler and the platform metrics follow (leader-only), and the web
        # view on every replica.
        manager.add(types, leader_only=not options.ui)
    if options.leader_elect:
        manager.elector = _elector(options, client)
    return controller


def _add_scope(controller: Controller) -> None:
    """The gang-scheduling scope (``--gang-scope``, ``--exclude-namespace`` and the controller's own
    namespace in a cluster) over the namespaces' labels, on every replica and in the admission
    process: ready once the namespaces are listed."""
    from karta.controller.runtime.scope import GangScope, excluded_namespaces

    options = controller.options
    scope = GangScope(
        controller.client,
        mode=options.gang_scope,
        excluded=excluded_namespaces(options.exclude_namespaces, client=controller.client),
        cache=controller.cache,
    )
    controller.scope = scope
    controller.parts[scope.name] = scope
    controller.manager.add(scope)
    controller.manager.add_ready_check(scope.name, scope.synced.is_set)


def _add_webhook_server(controller: Controller, certs: CertFiles) -> PodBinder | None:
    """The webhook server with the Karta webhooks and, with a backend, pod admission; the pod
    binder it uses (None without a backend)."""
    options, manager, definitions = controller.options, controller.manager, controller.definitions
    server = WebhookServer(
        certs, host=options.webhook_host, port=options.webhook_port, metrics=controller.metrics
    )
    controller.webhooks = server
    manager.add(server)
    manager.add_ready_check("webhook", server.serving.is_set)
    # The Karta webhooks (14.4) on every replica, over a cache of the cluster's Kartas.
    karta_cache = definitions.informer
    if not options.cluster_definitions:
        absent = threading.Event()  # no Karta CRD (404) or no right to list (403): nothing to wait for

        def on_error(exc: KartaError) -> None:
            if isinstance(exc, ApiError) and exc.status in (403, 404):
                absent.set()

        karta_cache = controller.cache.watch(KARTA_RESOURCE, on_error=on_error).informer
        manager.add_ready_check("karta-webhook-cache", lambda: karta_cache.synced.is_set() or absent.is_set())
    KartaWebhooks(karta_cache.objects).register(server)
    if options.kueue:
        from karta.controller.parts.kueue.webhook import PATH as KUEUE_PATH
        from karta.controller.parts.kueue.webhook import KueueSuspend

        suspend = KueueSuspend(
            lambda: definitions.store, native=options.kueue_native, quarantine=controller.quarantine
        )
        server.register(KUEUE_PATH, "kueue-suspend", suspend)
    if options.backend == "none":
        return None
    binder, admission_client = _pod_binder(controller)
    from karta.controller.parts.pod_binding.admission import PATH, PodAdmission, ReferenceWarmup

    # Extension E3: the referenced kinds watched from when the definitions are loaded, not from
    # the first pod (every replica serving the webhook).
    warmup = ReferenceWarmup(binder)
    definitions.subscribe(warmup.poke)
    controller.manager.add(warmup)
    controller.parts[warmup.name] = warmup

    admission = PodAdmission(
        binder,
        admission_client,
        metrics=controller.metrics,
        events=controller.events,
        namespaces=options.namespaces,
        scope=controller.scope,
    )
    server.register(PATH, "pods", admission)
    controller.parts["pod-admission"] = admission
    return binder


def _build_admission_child(controller: Controller) -> None:
    """``--role=admission``: the webhook server and what it reads, nothing leader-only; its
    endpoints on loopback ports it announces on stdout for the parent."""
    from karta.controller.runtime.child import ChildPorts, announce

    manager = controller.manager
    _add_webhook_server(controller, CertFiles(controller.options.webhook_cert_dir))

    class Announce:
        name = "announce-ports"

        def run(self, stop: threading.Event) -> None:  # the endpoints listen before parts start
            announce(ChildPorts(manager.bound_port("probes"), manager.bound_port("metrics")))
            stop.wait()

    manager.add(Announce())


def _add_admission_process(controller: Controller) -> None:
    """The webhooks in a child process (``--admission-process``): the same command with the
    same options, in the admission role, its endpoints on loopback ports of its own."""
    from dataclasses import replace

    from karta.controller.options import to_argv
    from karta.controller.runtime.child import ChildProcess

    options = replace(
        controller.options,
        role=ADMISSION_ROLE,
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
        leader_elect=False,
        register_webhooks=False,
        install_catalog=False,
        ui=False,
    )
    child = ChildProcess(
        "admission",
        [sys.executable, "-m", "karta.controller", *to_argv(options)],
        metrics=controller.metrics,
        # The child drains within its own --shutdown-timeout; the parent's is the same.
        stop_timeout=max(1.0, options.shutdown_timeout - 1.0),
    )
    controller.parts["admission-process"] = child
    controller.metrics.add_source(child.exposition)
    controller.manager.add(child)
    controller.manager.add_ready_check("webhook", child.serving.is_set)


def _add_ui(controller: Controller) -> None:
    """``--ui``: the web view on every replica (read-only: it lists and watches, never writes),
    over the live definitions, on the controller's cache and covered-types tracker."""
    from karta.controller.runtime.owners import ReadableOwners
    from karta.ui import ClusterSource, RowStore, UiServer

    address = parse_address(controller.options.ui_bind_address)
    if address is None:
        return
    rows = RowStore()
    source = ClusterSource(
        controller.client,
        lambda: controller.definitions.store,
        store=rows,
        cluster="in-cluster",
        after=controller.definitions.synced,
        readable=ReadableOwners(lambda: controller.definitions.store),
        cache=controller.cache,
        tracker=controller.types,
        scope_mode=controller.scope.mode if controller.scope is not None else None,
        scope_excluded=controller.scope.excluded if controller.scope is not None else (),
    )
    server = UiServer(
        rows,
        {source.cluster: source.detail},
        host=address[0],
        port=address[1],
        queues={source.cluster: source},
        capacity={source.cluster: source},
    )
    controller.parts["ui-source"] = source
    controller.parts["ui-server"] = server
    controller.manager.add(source)
    controller.manager.add(server)


def _add_tls_and_registration(controller: Controller, files: CertFiles) -> None:
    """The certificate part before the server (auto mode: it writes the files the server waits
    for), and the registration of the webhook configurations with ``--register-webhooks``."""
    from karta.controller.parts.certs import CertManager, MountedCerts, serving_hosts
    from karta.controller.registration import Registration

    options, client = controller.options, controller.client
    namespace = options.webhook_namespace  # None: the client's, read when the parts run
    bundle: Callable[[], bytes | None]
    if options.webhook_cert_mode == "auto":
        certs = CertManager(
            client,
            files,
            namespace=namespace,
            secret=options.webhook_cert_secret,
            hosts=lambda ns: serving_hosts(options.webhook_service_name, ns, options.webhook_url),
            webhook_configurations=(
                ("mutatingwebhookconfigurations", options.mutating_webhook_name),
                ("validatingwebhookconfigurations", options.validating_webhook_name),
            ),
        )
        bundle = lambda: certs.bundle  # noqa: E731
        controller.parts["certs"] = certs
        controller.manager.add(certs)
        # Files left in the directory by an earlier run may start the server: ready only once synced.
        controller.manager.add_ready_check("webhook-certs", certs.ready.is_set)
    else:
        mounted = MountedCerts(files)
        ca_file = files.cert.parent / "ca.crt"
        bundle = lambda: ca_file.read_bytes() if ca_file.is_file() else b""  # noqa: E731
        controller.parts["certs"] = mounted
        controller.manager.add(mounted)
    if options.register_webhooks:
        registration = Registration(
            client, options, namespace=namespace, bundle=bundle, kueue_rules=_kueue_rules(controller)
        )
        controller.parts["registration"] = registration
        controller.manager.add(registration)


def _kueue_rules(controller: Controller) -> Callable[[], list[dict[str, object]]] | None:
    """With ``--kueue``: the suspend webhook's rules from the live definitions, each kind's plural
    as discovery serves it (a kind not served has no rule)."""
    if not controller.options.kueue:
        return None
    from karta.controller.parts.kueue.webhook import webhook_rules
    from karta.model.gvk import GVK

    client, definitions, native = controller.client, controller.definitions, controller.options.kueue_native

    def plural(gvk: GVK) -> str | None:
        found = client.discovery.find(*gvk)
        return found.plural if found is not None else None

    return lambda: webhook_rules(
        [d.karta for d in definitions.store.visible() if d.valid], native=native, plural=plural
    )


def _add_kueue(controller: Controller) -> None:
    """``--kueue``: the Kueue reconciler, leader-only, on the shared cache and tracker; ready once
    its informers synced (a standby replica is ready without them)."""
    from karta.controller.parts.kueue.reconciler import KueueReconciler

    options, manager = controller.options, controller.manager
    kueue = KueueReconciler(
        controller.client,
        definitions=controller.definitions,
        metrics=controller.metrics,
        events=controller.events,
        native=options.kueue_native,
        namespaces=options.namespaces,
        workers=options.workers,
        resync_period=options.resync_period,
        cache=controller.cache,
        tracker=controller.types,
        quarantine=controller.quarantine,
    )
    controller.parts["kueue"] = kueue
    manager.add(kueue, leader_only=True)
    manager.add_ready_check("kueue", lambda: not manager.leading or kueue.ready())


def _elector(options: Options, client: KubeClient) -> Elector:
    from karta.controller.runtime.leader import LeaseElector

    return LeaseElector(
        client,
        name=options.leader_election_id,
        namespace=options.leader_election_namespace or client.namespace,
        identity=identity(),
        lease_duration=options.lease_duration,
        renew_deadline=options.renew_deadline,
        retry_period=options.retry_period,
    )


def _pod_binder(controller: Controller) -> tuple[PodBinder, KubeClient]:
    """What resolves a pod to its binding (mode B, option 2), for the pod webhook and the pass
    reporting pods that escaped it, and the client it reads owners with."""
    from karta.controller.parts.pod_binding.admission import PodBinder
    from karta.controller.runtime.owners import OwnerCache, ReadableOwners
    from karta.controller.runtime.served import ServedOptions
    from karta.kube.reference_index import ReferenceIndex

    options, definitions = controller.options, controller.definitions
    # Admission has its own client (its own connection pool): a pod's answer never waits for a
    # connection behind the reconcilers' requests, and its latency is measured on its own.
    admission_client = controller.client.fork()
    # The gang reconciler's options, from the served resources, read in the background.
    served = ServedOptions(controller.client.fork(), options.backend, scheduler_name=options.scheduler_name)
    controller.manager.add(served)
    controller.manager.add_ready_check("served-options", served.ready.is_set)
    controller.parts[served.name] = served
    binder = PodBinder(
        store=lambda: definitions.store,
        owners=OwnerCache(admission_client, readable=ReadableOwners(lambda: definitions.store)),
        backend=options.backend,
        scheduler_name=options.scheduler_name,
        options=served.current,
        quarantine=controller.quarantine,
        # Extension E3: references from the shared cache (no API read per pod).
        references=ReferenceIndex(
            admission_client, controller.cache, namespaces=tuple(options.namespaces) or (None,)
        ),
    )
    return binder, admission_client


def _add_escaped_pods(controller: Controller, binder: PodBinder) -> None:
    """The leader-only pass reporting pods that escaped the pod webhook."""
    from karta.controller.parts.pod_binding.escaped import INTERVAL_S, EscapedPods

    options = controller.options
    escaped = EscapedPods(
        binder,
        controller.client,
        metrics=controller.metrics,
        events=controller.events,
        namespaces=options.namespaces,
        interval=min(INTERVAL_S, options.resync_period),
        scope=controller.scope,
    )
    controller.manager.add(escaped, leader_only=True)
    controller.parts["escaped-pods"] = escaped


def _add_gang_reconciler(controller: Controller) -> None:
    """Mode B (``--backend``): the gang reconciler, leader-only; ready once its informers synced
    (a standby replica, not leading, is ready without them)."""
    from karta.controller.parts.gangs import GangReconciler

    options, manager = controller.options, controller.manager
    gangs = GangReconciler(
        controller.client,
        definitions=controller.definitions,
        backend=options.backend,
        metrics=controller.metrics,
        events=controller.events,
        namespaces=options.namespaces,
        scheduler_name=options.scheduler_name,
        workers=options.workers,
        resync_period=options.resync_period,
        cache=controller.cache,
        tracker=controller.types,
        quarantine=controller.quarantine,
        scope=controller.scope,
    )
    controller.parts["gangs"] = gangs
    manager.add(gangs, leader_only=True)
    manager.add_ready_check("gangs", lambda: not manager.leading or gangs.ready())
    _add_platform_metrics(controller)


def _add_platform_metrics(controller: Controller) -> None:
    """The platform metrics (docs/controller/platform-metrics.md), leader-only, read from their own
    caches of the workloads and pods the gang reconciler's RBAC already lets the controller read,
    their statuses computed by its own workers;
    not a readiness check (a metric is not a reason to stop serving webhooks)."""
    from karta.controller.parts.platform import PART, PlatformMetrics

    options = controller.options
    platform = PlatformMetrics(
        controller.client,
        definitions=controller.definitions,
        backend=options.backend,
        namespaces=options.namespaces,
        cache=controller.cache,
        tracker=controller.types,
        metrics=controller.metrics,
        quarantine=controller.quarantine,
        scope=controller.scope,
    )
    controller.metrics.registry.register(platform)
    controller.parts[PART] = platform
    controller.manager.add(platform, leader_only=True)


def main(argv: list[str] | None = None) -> int:
    options, show_version = parse(argv)
    if show_version:
        print(f"karta-controller {_version()}")
        return 0
    child = options.role == ADMISSION_ROLE
    # Generated code is built in memory, once per definition content (runtime.definitions), never
    # loaded from an on-disk cache (karta._codegen): the controller's definitions come from API users.
    codegen.use_disk_cache(False)
    configure(options.log_format, options.log_level, fields={"role": ADMISSION_ROLE} if child else None)
    if child:
        from karta.controller.runtime.child import die_with_parent

        die_with_parent()
    # Probes, scrapes and webhook requests are short I/O-bound threads next to CPU-bound reconcile
    # workers: each time such a thread takes the GIL back it may wait a whole switch interval
    # (5 ms by default), a dozen times per request. 1 ms keeps them well within 100 ms under load.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        addresses = (
            parse_address(options.health_probe_bind_address),
            parse_address(options.metrics_bind_address),
            parse_address(options.ui_bind_address),
        )
    except ValueError as exc:
        print(f"karta-controller: error: {exc}", file=sys.stderr)
        return 2
    del addresses
    try:
        config = load_config(ConfigOverrides(kubeconfig=options.kubeconfig, context=options.context))
        client = KubeClient(config)
        client.discovery.resources()  # fail at start-up, clearly, when the cluster cannot be reached
    except KartaError as exc:
        _LOG.error("cannot connect to the cluster", extra={"error": str(exc)})
        print(f"karta-controller: error: {exc}", file=sys.stderr)
        return 1
    controller = build(options, client, spawn=True)
    # What start-up made (modules, classes, the catalog) lives as long as the process: out of the
    # collector's reach, a full collection walks only the caches, so its pause stays short; and a
    # young collection every GC_THRESHOLD allocations, not 700 (karta.cli.entry does the same).
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD)
    _LOG.info("starting", extra={"version": _version(), "backend": options.backend, "identity": identity()})
    return controller.manager.run()
