"""``karta-controller``: parse the flags, connect, wire the parts into a manager, run it.

:func:`build` makes the :class:`Controller` (every part, not started) from options and a client,
so that tests run the same wiring in-process; :func:`main` is the console script.

Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT), 1 when the cluster cannot be reached at
start-up, a part fails or the lease is lost, 2 for usage errors.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version

from karta.controller.definitions import LiveDefinitions
from karta.controller.events import EventRecorder
from karta.controller.logs import configure, logger
from karta.controller.manager import Manager, parse_address
from karta.controller.metrics import Metrics
from karta.controller.options import Options, parse
from karta.controller.webhook.server import CertFiles, WebhookServer
from karta.errors import KartaError
from karta.kube.client import KubeClient
from karta.kube.config import ConfigOverrides, load_config

__all__ = ["Controller", "build", "main"]

_LOG = logger()


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
    webhooks: WebhookServer | None = None
    parts: dict[str, object] = field(default_factory=dict)


def build(options: Options, client: KubeClient, *, metrics: Metrics | None = None) -> Controller:
    """Every part of the controller for ``options``, wired, not started."""
    metrics = metrics or Metrics()
    manager = Manager(
        metrics=metrics,
        probe_address=parse_address(options.health_probe_bind_address),
        metrics_address=parse_address(options.metrics_bind_address),
        shutdown_timeout=options.shutdown_timeout,
    )
    definitions = LiveDefinitions(
        client,
        user_directory=options.definitions_dir,
        include_catalog=options.catalog,
        cluster=options.cluster_definitions,
    )
    manager.add(definitions)
    manager.add_ready_check("definitions", definitions.synced.is_set)
    controller = Controller(
        options=options,
        client=client,
        metrics=metrics,
        manager=manager,
        events=EventRecorder(client, instance=identity()),
        definitions=definitions,
    )
    if options.backend != "none":
        _add_gang_reconciler(controller)
    if options.enable_webhook:
        server = WebhookServer(
            CertFiles(options.webhook_cert_dir),
            host=options.webhook_host,
            port=options.webhook_port,
            metrics=metrics,
        )
        controller.webhooks = server
        manager.add(server)
        manager.add_ready_check("webhook", server.serving.is_set)
    return controller


def _add_gang_reconciler(controller: Controller) -> None:
    """Mode B (``--backend``): the gang reconciler, leader-only; ready once its informers synced
    (a standby replica, not leading, is ready without them)."""
    from karta.controller.gangs import GangReconciler

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
    )
    controller.parts["gangs"] = gangs
    manager.add(gangs, leader_only=True)
    manager.add_ready_check("gangs", lambda: not manager.leading or gangs.ready())


def main(argv: list[str] | None = None) -> int:
    options, show_version = parse(argv)
    if show_version:
        print(f"karta-controller {_version()}")
        return 0
    configure(options.log_format, options.log_level)
    try:
        addresses = (
            parse_address(options.health_probe_bind_address),
            parse_address(options.metrics_bind_address),
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
    controller = build(options, client)
    _LOG.info("starting", extra={"version": _version(), "backend": options.backend, "identity": identity()})
    return controller.manager.run()
