"""Credentials for each request: static and file tokens, basic auth, exec plugins, impersonation.

Owns :class:`Credentials`. A token file is re-read when it changes (projected service-account
tokens rotate); an exec plugin runs on first use, its answer is kept until its
``expirationTimestamp`` (or until the server answers 401, when :meth:`Credentials.invalidate` is
called and the request is retried once).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from karta.errors import KubeConfigError
from karta.kube.config import ClusterConfig, ExecConfig

EXEC_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class ExecResult:
    token: str | None
    client_cert_data: bytes | None
    client_key_data: bytes | None
    expires: datetime | None


class Credentials:
    """Authorization and impersonation headers for one :class:`ClusterConfig` (thread-safe)."""

    def __init__(self, config: ClusterConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._file_token: tuple[float, str] | None = None
        self._exec: ExecResult | None = None

    def headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        token = self._token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        elif self.config.username is not None:
            raw = f"{self.config.username}:{self.config.password or ''}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()
        if self.config.impersonate_user:
            headers["Impersonate-User"] = self.config.impersonate_user
        if self.config.impersonate_uid:
            headers["Impersonate-Uid"] = self.config.impersonate_uid
        return headers

    def impersonate_groups(self) -> tuple[str, ...]:
        """Impersonate-Group is repeated once per group (a header list, not a joined value)."""
        return self.config.impersonate_groups

    def client_certificate(self) -> tuple[bytes, bytes] | None:
        """The PEM certificate and key to present: the kubeconfig's, else an exec plugin's."""
        if self.config.client_cert_data and self.config.client_key_data:
            return self.config.client_cert_data, self.config.client_key_data
        if self.config.exec is not None and not self.config.token:
            result = self._exec_result()
            if result.client_cert_data and result.client_key_data:
                return result.client_cert_data, result.client_key_data
        return None

    def can_refresh(self) -> bool:
        return self.config.exec is not None or self.config.token_file is not None

    def invalidate(self) -> None:
        """Forget cached plugin output and file tokens (after a 401)."""
        with self._lock:
            self._exec = None
            self._file_token = None

    # -- internals ----------------------------------------------------------------------------
    def _token(self) -> str | None:
        if self.config.token:
            return self.config.token
        if self.config.token_file:
            return self._read_token_file(self.config.token_file)
        if self.config.exec is not None:
            return self._exec_result().token
        return None

    def _read_token_file(self, path: str) -> str:
        try:
            mtime = os.stat(path).st_mtime
        except OSError as exc:
            raise KubeConfigError(f"cannot read token file {path}: {exc.strerror or exc}") from exc
        with self._lock:
            if self._file_token is not None and self._file_token[0] == mtime:
                return self._file_token[1]
            token = Path(path).read_text().strip()
            self._file_token = (mtime, token)
            return token

    def _exec_result(self) -> ExecResult:
        with self._lock:
            cached = self._exec
            if cached is not None and (
                cached.expires is None or cached.expires - timedelta(seconds=10) > datetime.now(UTC)
            ):
                return cached
            assert self.config.exec is not None
            self._exec = run_exec_plugin(self.config.exec, cluster=self.config)
            return self._exec


def run_exec_plugin(plugin: ExecConfig, *, cluster: ClusterConfig | None = None) -> ExecResult:
    """Run a client.authentication.k8s.io credential plugin and parse its ExecCredential."""
    spec: dict[str, Any] = {"interactive": False}
    if plugin.provide_cluster_info and cluster is not None:
        info: dict[str, Any] = {"server": cluster.server}
        if cluster.ca_data:
            info["certificate-authority-data"] = base64.b64encode(cluster.ca_data).decode()
        if cluster.insecure_skip_tls_verify:
            info["insecure-skip-tls-verify"] = True
        if cluster.tls_server_name:
            info["tls-server-name"] = cluster.tls_server_name
        spec["cluster"] = info
    exec_info = {"apiVersion": plugin.api_version, "kind": "ExecCredential", "spec": spec}
    env = dict(os.environ)
    env.update(dict(plugin.env))
    env["KUBERNETES_EXEC_INFO"] = json.dumps(exec_info)
    command = plugin.command
    if os.sep in command and not os.path.isabs(command) and plugin.base_dir:
        command = os.path.join(plugin.base_dir, command)
    hint = f" ({plugin.install_hint})" if plugin.install_hint else ""
    try:
        proc = subprocess.run(
            [command, *plugin.args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=EXEC_TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError as exc:
        raise KubeConfigError(f"exec credential plugin {plugin.command!r} not found{hint}") from exc
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KubeConfigError(f"exec credential plugin {plugin.command!r} failed: {exc}") from exc
    if proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
        raise KubeConfigError(f"exec credential plugin {plugin.command!r} failed: {detail[0]}{hint}")
    try:
        doc = json.loads(proc.stdout)
        status = doc["status"]
        if not isinstance(status, dict):
            raise TypeError("status is not an object")
    except (ValueError, KeyError, TypeError) as exc:
        raise KubeConfigError(
            f"exec credential plugin {plugin.command!r} printed no valid ExecCredential: {exc}"
        ) from exc
    if doc.get("kind") != "ExecCredential":
        raise KubeConfigError(f"exec credential plugin {plugin.command!r} printed kind {doc.get('kind')!r}")
    cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
    token = status.get("token")
    if not token and not (cert and key):
        raise KubeConfigError(
            f"exec credential plugin {plugin.command!r} returned neither a token nor a client certificate"
        )
    return ExecResult(
        token=str(token) if token else None,
        client_cert_data=str(cert).encode() if cert else None,
        client_key_data=str(key).encode() if key else None,
        expires=_timestamp(status.get("expirationTimestamp")),
    )


def _timestamp(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise KubeConfigError(f"exec credential plugin: bad expirationTimestamp {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
