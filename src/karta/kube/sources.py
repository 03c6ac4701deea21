"""Where a connection comes from, decided without reading any kubeconfig: kubectl's connection
flags (:class:`ConfigOverrides`), the kubeconfig files they point at, and whether there is a
cluster at all (:func:`connection_source`). Small on purpose: every ``kli`` command imports it,
and an offline command (no kubeconfig, no ``--server``, not in a cluster) learns here that it
stays offline without importing the kubeconfig reader (:mod:`karta.kube.config`) or the HTTP
client. The precedence is :mod:`karta.kube.config`'s (kubectl's).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from karta._records import record
from karta.errors import ClusterError, KubeConfigError, NoKubeconfigError

if TYPE_CHECKING:
    from karta.kube.client import KubeClient

__all__ = [
    "UNREADABLE_DEFINITIONS",
    "ConfigOverrides",
    "ConnectionSource",
    "connect_for_definitions",
    "connection_source",
    "existing_kubeconfigs",
    "kubeconfig_paths",
]

UNREADABLE_DEFINITIONS = (
    "could not read Karta definitions from the cluster: {err}; showing built-in definitions only"
)


@record
class ConfigOverrides:
    """kubectl's connection flags; ``None`` means "not given"."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    server: str | None = None
    token: str | None = None
    as_user: str | None = None
    as_groups: tuple[str, ...] = ()
    as_uid: str | None = None
    insecure_skip_tls_verify: bool | None = None
    certificate_authority: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    tls_server_name: str | None = None
    request_timeout: str | None = None


def existing_kubeconfigs(
    overrides: ConfigOverrides, *, environ: Mapping[str, str], home: Path | None = None
) -> tuple[list[Path], list[Path]]:
    """The kubeconfig files looked at and those that exist; a missing ``--kubeconfig`` raises."""
    paths = kubeconfig_paths(overrides, environ=environ, home=home)
    existing = [p for p in paths if p.is_file()]
    if overrides.kubeconfig and not existing:
        raise KubeConfigError(f"kubeconfig {overrides.kubeconfig} does not exist")
    return paths, existing


def kubeconfig_paths(
    overrides: ConfigOverrides, *, environ: Mapping[str, str], home: Path | None = None
) -> list[Path]:
    if overrides.kubeconfig:
        return [Path(overrides.kubeconfig).expanduser()]
    listed = environ.get("KUBECONFIG", "")
    if listed:
        seen: list[Path] = []
        for part in listed.split(os.pathsep):
            if part and Path(part).expanduser() not in seen:
                seen.append(Path(part).expanduser())
        return seen
    base = home if home is not None else Path(environ.get("HOME") or Path.home())
    return [base / ".kube" / "config"]


class ConnectionSource(NamedTuple):
    """What :func:`karta.kube.config.load_config` will read: the existing kubeconfig files
    (``kind`` ``"kubeconfig"``), else the ``--server`` flag (``"flags"``), else the in-cluster
    service account (``"in-cluster"``)."""

    kind: Literal["kubeconfig", "flags", "in-cluster"]
    kubeconfigs: list[Path]


def connection_source(
    overrides: ConfigOverrides, *, environ: Mapping[str, str] | None = None, home: Path | None = None
) -> ConnectionSource:
    """Where the connection comes from (kubectl's precedence); :class:`NoKubeconfigError` when
    there is none (no kubeconfig file, no ``--server``, not inside a cluster), and
    :class:`KubeConfigError` when ``--kubeconfig`` names a missing file."""
    env = os.environ if environ is None else environ
    paths, existing = existing_kubeconfigs(overrides, environ=env, home=home)
    if existing:
        return ConnectionSource("kubeconfig", existing)
    if overrides.server:
        return ConnectionSource("flags", [])
    if env.get("KUBERNETES_SERVICE_HOST") and env.get("KUBERNETES_SERVICE_PORT"):
        return ConnectionSource("in-cluster", [])
    raise NoKubeconfigError(
        "no kubeconfig found (looked at "
        + (", ".join(map(str, paths)) or "nothing")
        + ") and not running inside a cluster"
    )


def connect_for_definitions(overrides: ConfigOverrides | None = None) -> tuple[KubeClient | None, list[str]]:
    """A client for :func:`karta.kube.kartas.load_definitions`: None and no warning without any
    kubeconfig (17.3); None and a warning when the kubeconfig is unusable (bad context, missing
    file...). Offline (the common case of the file commands) neither the kubeconfig reader nor
    the HTTP client is imported."""
    ov = overrides or ConfigOverrides()
    try:
        connection_source(ov)  # offline, this raises before anything heavy is imported
        from karta.kube.config import load_config

        config = load_config(ov)  # a bad context raises before the HTTP client is imported
        from karta.kube.client import KubeClient

        return KubeClient(config), []
    except NoKubeconfigError:
        return None, []
    except ClusterError as exc:
        return None, [UNREADABLE_DEFINITIONS.format(err=exc)]
