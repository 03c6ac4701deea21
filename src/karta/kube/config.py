"""Where the cluster is and who we are: kubeconfig files, kubectl-style overrides, in-cluster config.

Owns :class:`ClusterConfig` (one resolved context: server, TLS material, credentials,
impersonation, namespace) and :func:`load_config`; :class:`ConfigOverrides` (the
``--kubeconfig/--context/--cluster/--user/-n/--server/--token/--as...`` flags) and the choice of
where the connection comes from are :mod:`karta.kube.sources`' (re-exported here).

Rules (those of kubectl/client-go):

- ``--kubeconfig`` names the only file (it must exist); else ``$KUBECONFIG`` is a ``os.pathsep``
  list whose files are merged (the first file that sets a cluster, user, context or
  ``current-context`` wins; missing files are ignored); else ``~/.kube/config``.
- With no kubeconfig at all, the in-cluster service-account config is used when
  ``KUBERNETES_SERVICE_HOST``/``_PORT`` are set; with neither, :class:`NoKubeconfigError` (callers
  such as ``kli`` then stay offline silently).
- Relative file paths in a kubeconfig are relative to the file that holds them.
- Namespace: ``-n`` > the context's namespace > ``default`` (in-cluster: the pod's namespace).

Nothing here talks to the network; exec credential plugins run in :mod:`karta.kube.auth`.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from karta.errors import KubeConfigError, NoKubeconfigError
from karta.kube.sources import ConfigOverrides as ConfigOverrides  # re-exported: its home before
from karta.kube.sources import connection_source

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True)
class ExecConfig:
    """A ``users[].user.exec`` credential plugin (client.authentication.k8s.io)."""

    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    api_version: str = "client.authentication.k8s.io/v1"
    install_hint: str = ""
    provide_cluster_info: bool = False
    base_dir: str = ""  # relative commands resolve against the kubeconfig's directory


@dataclass(frozen=True)
class ClusterConfig:
    """Everything needed to open authenticated connections to one API server."""

    server: str
    namespace: str = "default"
    context: str = ""
    source: str = ""  # "kubeconfig <paths>", "in-cluster" or "flags"
    ca_data: bytes | None = None  # PEM
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    client_cert_data: bytes | None = None  # PEM
    client_key_data: bytes | None = None  # PEM
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    exec: ExecConfig | None = None
    impersonate_user: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_uid: str | None = None
    timeout: float | None = None  # per request, seconds; None = no limit
    extra: Mapping[str, Any] = field(default_factory=dict)  # the raw cluster entry (exec cluster info)

    def with_overrides(self, overrides: ConfigOverrides) -> ClusterConfig:
        """The identity flags (``--as...``, ``--token``, ``-n``, timeout) applied on top."""
        changes: dict[str, Any] = {}
        if overrides.namespace:
            changes["namespace"] = overrides.namespace
        if overrides.as_user:
            changes["impersonate_user"] = overrides.as_user
        if overrides.as_groups:
            changes["impersonate_groups"] = tuple(overrides.as_groups)
        if overrides.as_uid:
            changes["impersonate_uid"] = overrides.as_uid
        if overrides.token:  # the flag replaces every credential of the kubeconfig user
            changes.update(
                token=overrides.token,
                token_file=None,
                exec=None,
                username=None,
                password=None,
                client_cert_data=None,
                client_key_data=None,
            )
        if overrides.request_timeout is not None:
            changes["timeout"] = parse_timeout(overrides.request_timeout)
        return replace(self, **changes)


def parse_timeout(text: str) -> float | None:
    """kubectl's ``--request-timeout``: ``0`` = none, a bare number = seconds, or ``1h2m3s``."""
    text = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        value = float(text)
        return value or None
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise KubeConfigError(f"invalid request timeout {text!r}: use a number of seconds or e.g. 1m30s")
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    total = sum(float(n) * scale[u] for n, u in parts)
    return total or None


# ------------------------------------------------------------------------------------- loading


def load_config(
    overrides: ConfigOverrides | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
) -> ClusterConfig:
    """Resolve the connection for ``overrides`` (kubectl's precedence; see the module docstring)."""
    ov = overrides or ConfigOverrides()
    env = os.environ if environ is None else environ
    source = connection_source(ov, environ=env, home=home)  # raises NoKubeconfigError without one
    if source.kubeconfigs:
        merged = merge_kubeconfigs(source.kubeconfigs)
        return config_from_kubeconfig(
            merged, ov, source="kubeconfig " + os.pathsep.join(map(str, source.kubeconfigs))
        )
    if source.kind == "flags":
        config = ClusterConfig(server=str(ov.server), source="flags")
        return _apply_tls_flags(config, ov).with_overrides(ov)
    return in_cluster_config(environ=env, service_account_dir=service_account_dir).with_overrides(ov)


@dataclass
class MergedKubeconfig:
    """Named entries with the directory of the file each came from (for relative paths)."""

    current_context: str = ""
    clusters: dict[str, tuple[dict[str, Any], Path]] = field(default_factory=dict)
    users: dict[str, tuple[dict[str, Any], Path]] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)


def merge_kubeconfigs(paths: Sequence[Path]) -> MergedKubeconfig:
    """Merge files the client-go way: the first file to define a name (or current-context) wins."""
    from karta.model.documents import DocumentError, read_bytes, read_documents

    merged = MergedKubeconfig()
    for path in paths:
        try:  # the one reader of untrusted YAML: bounded, JSON numbers only (issue 9)
            docs = read_documents(read_bytes(path).decode("utf-8"), source=str(path), timestamps=True)
        except (OSError, UnicodeDecodeError, DocumentError) as exc:
            raise KubeConfigError(f"cannot read kubeconfig {path}: {exc}") from exc
        if len(docs) > 1:
            raise KubeConfigError(f"cannot read kubeconfig {path}: expected a single document ({len(docs)})")
        data = (docs[0].value if docs else None) or {}
        if not isinstance(data, dict):
            raise KubeConfigError(f"kubeconfig {path} is not a mapping")
        base = path.resolve().parent
        if not merged.current_context and data.get("current-context"):
            merged.current_context = str(data["current-context"])
        for key, target in (("clusters", merged.clusters), ("users", merged.users)):
            for entry in _named(data, key, path):
                target.setdefault(entry[0], (entry[1], base))
        for name, body in _named(data, "contexts", path):
            merged.contexts.setdefault(name, body)
    return merged


def _named(data: dict[str, Any], key: str, path: Path) -> list[tuple[str, dict[str, Any]]]:
    inner = {"clusters": "cluster", "users": "user", "contexts": "context"}[key]
    out: list[tuple[str, dict[str, Any]]] = []
    entries = data.get(key) or []
    if not isinstance(entries, list):
        raise KubeConfigError(f"kubeconfig {path}: {key} is not a list")
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("name"):
            raise KubeConfigError(f"kubeconfig {path}: an entry of {key} has no name")
        body = entry.get(inner) or {}
        if not isinstance(body, dict):
            raise KubeConfigError(f"kubeconfig {path}: {key} entry {entry['name']!r} is not a mapping")
        out.append((str(entry["name"]), body))
    return out


def config_from_kubeconfig(
    merged: MergedKubeconfig, overrides: ConfigOverrides, *, source: str = ""
) -> ClusterConfig:
    """The :class:`ClusterConfig` of the selected context with the flags applied."""
    context_name = overrides.context or merged.current_context
    context: dict[str, Any] = {}
    if context_name:
        if context_name not in merged.contexts:
            raise KubeConfigError(f'context "{context_name}" does not exist in the kubeconfig')
        context = merged.contexts[context_name]
    elif not (overrides.cluster or overrides.server):
        raise KubeConfigError("the kubeconfig has no current context; pass --context")
    cluster_name = overrides.cluster or str(context.get("cluster") or "")
    user_name = overrides.user or str(context.get("user") or "")
    cluster: dict[str, Any] = {}
    cluster_dir = Path.cwd()
    if cluster_name:
        if cluster_name not in merged.clusters:
            raise KubeConfigError(f'cluster "{cluster_name}" does not exist in the kubeconfig')
        cluster, cluster_dir = merged.clusters[cluster_name]
    user: dict[str, Any] = {}
    user_dir = Path.cwd()
    if user_name:
        if user_name not in merged.users:
            raise KubeConfigError(f'user "{user_name}" does not exist in the kubeconfig')
        user, user_dir = merged.users[user_name]
    server = overrides.server or str(cluster.get("server") or "")
    if not server:
        raise KubeConfigError(f'context "{context_name}" has no server (cluster "{cluster_name}")')
    config = ClusterConfig(
        server=server,
        namespace=str(context.get("namespace") or "default"),
        context=context_name,
        source=source,
        ca_data=_material(cluster, "certificate-authority", cluster_dir),
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify", False)),
        tls_server_name=cluster.get("tls-server-name") or None,
        client_cert_data=_material(user, "client-certificate", user_dir),
        client_key_data=_material(user, "client-key", user_dir),
        token=user.get("token") or None,
        token_file=_path(user.get("tokenFile"), user_dir),
        username=user.get("username") or None,
        password=user.get("password") or None,
        exec=_exec_config(user.get("exec"), user_dir, user_name),
        impersonate_user=user.get("as") or None,
        impersonate_groups=tuple(map(str, _list(user.get("as-groups"), f'user "{user_name}": as-groups'))),
        impersonate_uid=user.get("as-uid") or None,
        extra=cluster,
    )
    if user.get("auth-provider"):
        raise KubeConfigError(
            f'user "{user_name}" uses the removed auth-provider mechanism; switch it to an exec plugin'
        )
    return _apply_tls_flags(config, overrides).with_overrides(overrides)


def _apply_tls_flags(config: ClusterConfig, ov: ConfigOverrides) -> ClusterConfig:
    changes: dict[str, Any] = {}
    if ov.certificate_authority:
        changes["ca_data"] = _read(Path(ov.certificate_authority), "certificate authority")
    if ov.insecure_skip_tls_verify is not None:
        changes["insecure_skip_tls_verify"] = ov.insecure_skip_tls_verify
    if ov.client_certificate:
        changes["client_cert_data"] = _read(Path(ov.client_certificate), "client certificate")
    if ov.client_key:
        changes["client_key_data"] = _read(Path(ov.client_key), "client key")
    if ov.tls_server_name:
        changes["tls_server_name"] = ov.tls_server_name
    return replace(config, **changes)


def _material(entry: Mapping[str, Any], key: str, base: Path) -> bytes | None:
    """``key-data`` (base64) or the file named by ``key``."""
    data = entry.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(str(data), validate=False)
        except ValueError as exc:
            raise KubeConfigError(f"{key}-data is not valid base64: {exc}") from exc
    path = _path(entry.get(key), base)
    return _read(Path(path), key.replace("-", " ")) if path else None


def _path(value: Any, base: Path) -> str | None:
    if not value:
        return None
    path = Path(str(value)).expanduser()
    return str(path if path.is_absolute() else base / path)


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KubeConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc


def _list(value: Any, what: str) -> list[Any]:
    """A kubeconfig list field (absent: empty); anything else is a :class:`KubeConfigError`."""
    if not value:
        return []
    if not isinstance(value, list):
        raise KubeConfigError(f"{what} must be a list")
    return value


def _exec_config(raw: Any, base: Path, user: str) -> ExecConfig | None:
    if not raw:
        return None
    if not isinstance(raw, dict) or not raw.get("command"):
        raise KubeConfigError(f'user "{user}": exec needs a command')
    env: list[tuple[str, str]] = []
    for item in _list(raw.get("env"), f'user "{user}": exec env'):
        if not isinstance(item, dict) or "name" not in item:
            raise KubeConfigError(f'user "{user}": exec env entries need a name')
        env.append((str(item["name"]), str(item.get("value", ""))))
    return ExecConfig(
        command=str(raw["command"]),
        args=tuple(str(a) for a in _list(raw.get("args"), f'user "{user}": exec args')),
        env=tuple(env),
        api_version=str(raw.get("apiVersion") or "client.authentication.k8s.io/v1"),
        install_hint=str(raw.get("installHint") or ""),
        provide_cluster_info=bool(raw.get("provideClusterInfo", False)),
        base_dir=str(base),
    )


def in_cluster_config(
    *, environ: Mapping[str, str] | None = None, service_account_dir: Path = SERVICE_ACCOUNT_DIR
) -> ClusterConfig:
    """The pod's service account: ``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT``."""
    env = os.environ if environ is None else environ
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise NoKubeconfigError("not running inside a cluster (KUBERNETES_SERVICE_HOST/PORT unset)")
    token_file = service_account_dir / "token"
    if not token_file.is_file():
        raise KubeConfigError(f"in-cluster config: no service-account token at {token_file}")
    ca = service_account_dir / "ca.crt"
    ns_file = service_account_dir / "namespace"
    namespace = ns_file.read_text().strip() if ns_file.is_file() else "default"
    host = f"[{host}]" if ":" in host else host  # IPv6
    return ClusterConfig(
        server=f"https://{host}:{port}",
        namespace=namespace or "default",
        context="in-cluster",
        source="in-cluster",
        ca_data=ca.read_bytes() if ca.is_file() else None,
        token_file=str(token_file),
    )
