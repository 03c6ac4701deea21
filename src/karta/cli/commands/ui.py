"""``kli ui``: the read-only web view of every workload of every covered type, on loopback, with
the user's own kubeconfig identity (kubectl proxy's way): :mod:`karta.ui` does the work; this is
the shell that connects, starts one cluster source and the server, prints the URL and serves
until Ctrl-C.

Binds 127.0.0.1 unless ``--address`` says otherwise; ``--port 0`` picks a free port. Only requests
whose ``Host`` names the bound address (or localhost) are answered, so another web site cannot
read the view through DNS rebinding. Exit codes: 0 after Ctrl-C, 1 when the cluster cannot be
reached or the address cannot be bound, 2 for usage errors. SIGTERM stops it as Ctrl-C does
(also when started in the background, where a shell ignores SIGINT).
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import TYPE_CHECKING

import click

from karta import kube, ui
from karta.cli.cluster import cluster_failure, connect
from karta.cli.commands import short_help
from karta.cli.config import load_config
from karta.cli.errors import CliError, UsageError
from karta.cli.lookup import open_store
from karta.cli.options import connection_options
from karta.cli.output import warn
from karta.errors import ClusterError

if TYPE_CHECKING:
    from karta.kube import ConfigOverrides

__all__ = ["ui_command"]

_LOOPBACK = ("127.0.0.1", "::1", "localhost")


@click.command("ui", short_help=short_help("ui"))
@click.option("--address", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8001,
    show_default=True,
    help="Port (0 picks a free one).",
)
@click.option(
    "--config",
    "config_file",
    metavar="PATH",
    help="Config file (default: $KARTA_CONFIG, ~/.karta/config.yaml).",
)
@connection_options
def ui_command(address: str, port: int, config_file: str | None, overrides: ConfigOverrides) -> None:
    """Serve a read-only web view of every workload of every covered type.

    Lists every workload a definition covers, in every namespace you may list, with its status,
    pods, GPUs and gang state; a workload's page shows its component tree, why pods are pending,
    recent Events, the gang objects each backend would create and the definition. The page
    updates live from watches. It uses your kubeconfig identity (the same flags as kli get),
    listens on 127.0.0.1 by default, prints its URL and serves until Ctrl-C. A JSON API is under
    /api (docs/ui.md).
    """
    if not address.strip():
        raise UsageError("--address must not be empty")
    config = load_config(config_file)
    client = connect(overrides)
    try:
        store = open_store(client=client)
        for warning in store.warnings:
            warn(warning)
        rows = ui.RowStore()
        context = client.config.context or overrides.context or "in-cluster"
        source = ui.ClusterSource(
            client, lambda: store, store=rows, cluster=context, gpu_resources=config.gpu_resources
        )
        host = address.strip("[]")
        allowed: set[str] | None = {*_LOOPBACK, host.lower()}
        if host.lower() not in _LOOPBACK:
            allowed = None  # reached by other names; the user chose to expose it
            warn(f"--address {address}: anyone who can reach it sees what your credentials can list")
        try:
            server = ui.UiServer(
                rows,
                {context: source.detail},
                host=host,
                port=port,
                allowed_hosts=allowed,
                queues={context: source},
                capacity={context: source},
            )
        except OSError as exc:
            raise CliError(
                f"cannot listen on {address}:{port}: {exc.strerror or exc}",
                hint="choose another --port (0 picks a free one)",
            ) from None
        try:
            kube.covered_types(client, store)  # fail now, clearly, if discovery is refused
        except ClusterError as exc:
            server.close()
            raise cluster_failure(exc, client=client, doing="API discovery") from None
        done = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C, and kill: stop cleanly, exit 0
            signal.signal(signum, lambda *_: done.set())
        source.start()
        server.start()
        sys.stdout.write(f"Serving the karta web view on {server.url}\n")
        sys.stdout.flush()
        try:
            while not done.wait(1.0):
                pass
        finally:
            server.close()
            source.stop()
    finally:
        client.close()
