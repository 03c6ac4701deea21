"""``kli version [--client] [-o json|yaml]``: kli's version and, as ``kubectl version`` does, the
API server's (``GET /version``) when a cluster is configured and reachable.

A cluster that is not configured or cannot be asked is a warning after the client version, never
a failure (exit 0): the client version is what the command is for offline. ``--client`` asks no
cluster. The server is given :data:`SERVER_TIMEOUT` unless ``--request-timeout`` says otherwise.
"""

from __future__ import annotations

import dataclasses
import platform
from importlib import metadata
from typing import TYPE_CHECKING, Any

import click

from karta.cli.cluster import cluster_failure, connect
from karta.cli.commands import short_help
from karta.cli.errors import CliError
from karta.cli.options import connection_options
from karta.cli.output import emit, warn
from karta.errors import ClusterError

if TYPE_CHECKING:
    from karta.kube import ConfigOverrides

__all__ = ["version"]

SERVER_TIMEOUT = "5s"


@click.command("version", short_help=short_help("version"))
@click.option("--client", "client_only", is_flag=True, help="Print the client version only (no cluster).")
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Choice(["json", "yaml"]),
    default=None,
    help="Print the versions as JSON or YAML (default: one line each).",
)
@connection_options
def version(client_only: bool, output: str | None, overrides: ConfigOverrides) -> None:
    """Print kli's version and the cluster's (as `kubectl version`).

    The server version is read from the cluster of kubectl's connection flags; when none is
    configured or it cannot be reached, a warning says so and the exit code stays 0. --client
    asks no cluster. -o json|yaml prints {"clientVersion": {...}, "serverVersion": {...}}.
    """
    client_version = {
        "version": _kli_version(),
        "python": platform.python_version(),
        "platform": f"{platform.system().lower()}/{platform.machine().lower()}",
    }
    server: dict[str, Any] | None = None
    problem: str | None = None
    if not client_only:
        server, problem = _server_version(overrides)
    data: dict[str, Any] = {"clientVersion": client_version}
    if server is not None:
        data["serverVersion"] = server
    if output is None:
        lines = [f"Client Version: {client_version['version']}"]
        if server is not None:
            lines.append(f"Server Version: {server.get('gitVersion') or '<unknown>'}")
        click.echo("\n".join(lines))
    else:
        emit(data, output)
    if problem is not None:
        warn(f"{problem}; the server version is unknown")


def _kli_version() -> str:
    try:
        return metadata.version("karta")
    except metadata.PackageNotFoundError:  # running from a source tree
        from karta import __version__

        return __version__


def _server_version(overrides: ConfigOverrides) -> tuple[dict[str, Any] | None, str | None]:
    """The API server's ``/version`` document, or why it could not be read."""
    if overrides.request_timeout is None:
        overrides = dataclasses.replace(overrides, request_timeout=SERVER_TIMEOUT)
    try:
        client = connect(overrides, probe=False)
    except CliError as exc:
        return None, str(exc)
    with client:
        try:
            answer = client.request_json("GET", "/version")
        except ClusterError as exc:
            return None, str(cluster_failure(exc, client=client, doing="reading the server version"))
    if not isinstance(answer, dict):
        return None, "the server's /version is not a JSON object"
    return answer, None
