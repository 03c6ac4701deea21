"""What every live ``kli`` command shares (karta-format.md 17.1, 17.4): kubectl's connection flags,
connecting with clear errors, type resolution and a progress indicator.

- :func:`connection_options`: a click decorator adding ``--kubeconfig``, ``--context``,
  ``--cluster``, ``--user``, ``-n/--namespace``, ``--server``, ``--token``, ``--as``,
  ``--as-group`` (repeatable), ``--as-uid``, the TLS flags, ``--request-timeout`` and
  ``--cache-dir`` (accepted; nothing is cached on disk). The command receives them as one
  ``overrides`` argument (a :class:`karta.kube.ConfigOverrides`).
- :func:`connect`: a :class:`karta.kube.KubeClient`, discovery loaded, or a :class:`CliError`
  (exit 1) saying what to do: no kubeconfig, unusable kubeconfig, unreachable server, rejected
  credentials (naming the identity). :func:`cluster_failure` maps any later
  :class:`karta.errors.ClusterError` the same way.
- :func:`resolve_type`: a TYPE token to a definition and the served resource (17.4 "Type
  resolution"): API discovery first, then definitions by Kind (narrowed by group when qualified);
  ambiguity is a usage error, no definition exits 4.
- :class:`Progress`: a line on stderr, only on a terminal, when a listing takes more than 2 s.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

from karta.cli import exitcodes
from karta.cli.cmd_completion import complete_namespaces
from karta.cli.errors import CliError, UsageError

if TYPE_CHECKING:
    from karta.definitions import DefinitionStore, StoredDefinition
    from karta.errors import ClusterError
    from karta.kube import ClusterConfig, ConfigOverrides, KubeClient, ResourceType

__all__ = [
    "NO_DEFINITION_HINT",
    "Progress",
    "ResolvedType",
    "cluster_failure",
    "connect",
    "connection_options",
    "definition_for",
    "identity",
    "most_stable",
    "overrides_from",
    "resolve_type",
    "version_key",
]

F = TypeVar("F", bound=Callable[..., Any])

NO_DEFINITION_HINT = (
    '"kli definitions" lists the types Karta covers; "kli scaffold --crd CRD.yaml" drafts a '
    "definition for a custom resource (apply it to the cluster or put it in $KARTA_DEFINITIONS)"
)
NO_CLUSTER_HINT = (
    "point $KUBECONFIG or --kubeconfig at a kubeconfig (kubectl's works), or pass --server and "
    "--token; offline, 'kli describe -f FILE' and 'kli inspect' work on manifests"
)

# --------------------------------------------------------------------------- connection flags

_PARAMS = (
    "kubeconfig",
    "context",
    "cluster",
    "user",
    "namespace",
    "server",
    "token",
    "as_user",
    "as_groups",
    "as_uid",
    "insecure_skip_tls_verify",
    "certificate_authority",
    "client_certificate",
    "client_key",
    "tls_server_name",
    "request_timeout",
    "cache_dir",
)


def _options() -> list[Callable[[Any], Any]]:
    opt = click.option
    return [
        opt(
            "--kubeconfig",
            metavar="PATH",
            help="Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config).",
        ),
        opt("--context", metavar="NAME", help="The kubeconfig context to use."),
        opt("--cluster", metavar="NAME", help="The kubeconfig cluster to use."),
        opt("--user", metavar="NAME", help="The kubeconfig user to use."),
        opt(
            "-n",
            "--namespace",
            metavar="NS",
            help="Namespace (default: the context's, else default).",
            shell_complete=complete_namespaces,
        ),
        opt("--server", "-s", metavar="URL", help="The address of the Kubernetes API server."),
        opt("--token", metavar="TOKEN", help="Bearer token (replaces the kubeconfig user's credentials)."),
        opt("--as", "as_user", metavar="USER", help="Username to impersonate."),
        opt(
            "--as-group",
            "as_groups",
            metavar="GROUP",
            multiple=True,
            help="Group to impersonate (repeatable).",
        ),
        opt("--as-uid", metavar="UID", help="UID to impersonate."),
        opt(
            "--insecure-skip-tls-verify",
            is_flag=True,
            default=False,
            help="Do not check the server's certificate (insecure).",
        ),
        opt("--certificate-authority", metavar="PATH", help="A CA certificate file."),
        opt("--client-certificate", metavar="PATH", help="A client certificate file for TLS."),
        opt("--client-key", metavar="PATH", help="A client key file for TLS."),
        opt("--tls-server-name", metavar="NAME", help="Server name for certificate validation."),
        opt(
            "--request-timeout",
            metavar="DURATION",
            help="Time limit per request: seconds or 1m30s (0 = none).",
        ),
        opt(
            "--cache-dir",
            metavar="PATH",
            help="Accepted for kubectl compatibility (kli caches nothing on disk).",
        ),
    ]


def connection_options(func: F) -> F:
    """Add kubectl's connection flags; the command gets them as ``overrides: ConfigOverrides``.

    Place it directly under ``@click.command(...)`` (or anywhere among the options)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, None) for name in _PARAMS}
        kwargs["overrides"] = overrides_from(values)
        return func(*args, **kwargs)

    decorated: Any = wrapper
    for option in reversed(_options()):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


def overrides_from(values: dict[str, Any]) -> ConfigOverrides:
    """The flag values (click parameter names, see :func:`connection_options`) as overrides;
    a malformed ``--request-timeout`` is a usage error."""
    from karta.errors import KubeConfigError
    from karta.kube.config import ConfigOverrides, parse_timeout

    timeout = values.get("request_timeout")
    if timeout is not None:
        try:
            parse_timeout(str(timeout))
        except KubeConfigError as exc:
            raise UsageError(f"--request-timeout: {exc}") from None
    for name, flag in (
        ("as_user", "--as"),
        ("as_groups", "--as-group"),
        ("as_uid", "--as-uid"),
        ("token", "--token"),
    ):
        given = values.get(name)
        for text in given if isinstance(given, tuple | list) else [given]:
            if isinstance(text, str) and not _header_safe(text):
                raise UsageError(
                    f"{flag}: the value cannot be sent in an HTTP header (printable characters only)"
                )
    return ConfigOverrides(
        kubeconfig=values.get("kubeconfig") or None,
        context=values.get("context") or None,
        cluster=values.get("cluster") or None,
        user=values.get("user") or None,
        namespace=values.get("namespace") or None,
        server=values.get("server") or None,
        token=values.get("token") or None,
        as_user=values.get("as_user") or None,
        as_groups=tuple(values.get("as_groups") or ()),
        as_uid=values.get("as_uid") or None,
        insecure_skip_tls_verify=True if values.get("insecure_skip_tls_verify") else None,
        certificate_authority=values.get("certificate_authority") or None,
        client_certificate=values.get("client_certificate") or None,
        client_key=values.get("client_key") or None,
        tls_server_name=values.get("tls_server_name") or None,
        request_timeout=str(timeout) if timeout is not None else None,
    )


def _header_safe(text: str) -> bool:
    """True if ``text`` can be an HTTP header value (Latin-1, no control characters)."""
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text)


# --------------------------------------------------------------------------- connecting


def connect(overrides: ConfigOverrides | None = None, *, probe: bool = True) -> KubeClient:
    """A client for kubectl's precedence of flags, kubeconfig and in-cluster config.

    With ``probe`` (the default) API discovery is loaded at once, so an unreachable server or
    rejected credentials fail here, as one clear error (exit 1), before anything else is asked.
    """
    from karta.errors import ClusterError, KubeConfigError, NoKubeconfigError
    from karta.kube.client import KubeClient
    from karta.kube.config import load_config

    try:
        config = load_config(overrides)
    except NoKubeconfigError as exc:
        raise CliError(f"no cluster configured: {exc}", hint=NO_CLUSTER_HINT) from None
    except KubeConfigError as exc:
        raise CliError(f"cannot use the cluster configuration: {exc}", hint=_config_hint(overrides)) from None
    try:
        client = KubeClient(config)
    except KubeConfigError as exc:  # e.g. an unusable server URL
        raise CliError(f"cannot use the cluster configuration: {exc}", hint=_config_hint(overrides)) from None
    if probe:
        try:
            client.discovery.resources()
        except ClusterError as exc:
            client.close()
            raise cluster_failure(exc, client=client) from None
    return client


def _config_hint(overrides: ConfigOverrides | None) -> str:
    if overrides is not None and overrides.kubeconfig:
        return f"check the file given with --kubeconfig ({overrides.kubeconfig})"
    return "check $KUBECONFIG / ~/.kube/config, or choose another entry with --context, --cluster or --user"


def cluster_failure(exc: ClusterError, *, client: KubeClient | None = None, doing: str = "") -> CliError:
    """One clear ``error:`` (exit 1) for a cluster problem; ``doing`` ("listing jobs") prefixes it."""
    from karta.errors import ApiError, ClusterUnreachableError, KubeConfigError

    prefix = f"{doing}: " if doing else ""
    config = client.config if client is not None else None
    where = f" (context {config.context!r}, server {config.server})" if config and config.context else ""
    if isinstance(exc, ClusterUnreachableError):
        return CliError(
            f"{prefix}{exc}",
            hint=f"check that the cluster is running and reachable{where}; "
            "--context or --server choose another",
        )
    if isinstance(exc, ApiError) and exc.status == 401:
        who = identity(config) if config else "these credentials"
        return CliError(
            f"{prefix}the cluster rejected the credentials of {who} (401 Unauthorized): {exc}",
            hint="refresh the kubeconfig's credentials (they may have expired) or pass --token",
        )
    if isinstance(exc, ApiError) and exc.status == 403:
        who = identity(config) if config else "this identity"
        return CliError(
            f"{prefix}{who} is not allowed to do this (403 Forbidden): {exc}",
            hint="ask a cluster administrator for read access ('kli rbac DEFINITION' prints the ClusterRole)",
        )
    if isinstance(exc, KubeConfigError):
        return CliError(f"{prefix}{exc}", hint=_config_hint(None))
    return CliError(f"{prefix}{exc}")


def identity(config: ClusterConfig) -> str:
    """Who the requests authenticate as, as far as the client can tell (for error messages)."""
    if config.impersonate_user:
        groups = ", ".join(f'"{g}"' for g in config.impersonate_groups)
        return (
            f'user "{config.impersonate_user}"'
            + (f" (groups {groups})" if groups else "")
            + " (impersonated)"
        )
    if config.impersonate_groups:
        return "groups " + ", ".join(f'"{g}"' for g in config.impersonate_groups) + " (impersonated)"
    context = f' of context "{config.context}"' if config.context else ""
    if config.token or config.token_file:
        return f"the bearer token{context}"
    if config.exec is not None:
        return f'the credential plugin "{config.exec.command}"{context}'
    if config.client_cert_data:
        name = _certificate_subject(config.client_cert_data)
        return f'user "{name}" (client certificate{context})' if name else f"the client certificate{context}"
    if config.username:
        return f'user "{config.username}"'
    return "an anonymous user"


_CN = bytes.fromhex("0603550403")  # OID 2.5.4.3 (commonName)


def _certificate_subject(pem: bytes) -> str:
    """The subject CN of a PEM certificate (the last CN in the DER: the issuer's comes first)."""
    import base64
    import binascii

    text = pem.decode("ascii", errors="ignore")
    block = re.search(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", text, re.S)
    if block is None:
        return ""
    try:
        der = base64.b64decode("".join(block.group(1).split()), validate=True)
    except (ValueError, binascii.Error):
        return ""
    at = der.rfind(_CN)
    if at < 0 or at + 7 > len(der):
        return ""
    length = der[at + 6]
    if length & 0x80:
        return ""
    return der[at + 7 : at + 7 + length].decode("utf-8", errors="replace")


# --------------------------------------------------------------------------- versions


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_key(version: str) -> tuple[int, int, int, str]:
    """Kubernetes version priority as a sort key (larger = more stable/newer): GA > beta > alpha,
    then the higher major, then the higher minor; anything else sorts lowest, by name."""
    m = _VERSION.match(version)
    if m is None:
        return (-1, 0, 0, version)
    stage = {None: 3, "beta": 2, "alpha": 1}[m.group(2)]
    return (stage, int(m.group(1)), int(m.group(3) or 0), "")


def most_stable(versions: Sequence[str]) -> str | None:
    return max(versions, key=version_key) if versions else None


# --------------------------------------------------------------------------- type resolution


@dataclass(frozen=True)
class ResolvedType:
    """A TYPE token resolved: the definition, and the resource to read (None: the kind is not
    served by this cluster; ``kind`` still names it for messages)."""

    definition: StoredDefinition
    resource: ResourceType | None
    kind: str
    group: str

    @property
    def installed(self) -> bool:
        return self.resource is not None


def resolve_type(token: str, *, client: KubeClient, store: DefinitionStore) -> ResolvedType:
    """17.4 "Type resolution": discovery first (plural, singular, short names, ``resource.group``),
    its GVK resolved against the definitions; else definitions by Kind, narrowed by group when the
    token is qualified. Several matches: usage error (exit 2); none: exit 4."""
    from karta.errors import ClusterError, UnknownResourceTypeError

    try:
        try:
            rtype: ResourceType | None = client.discovery.resolve(token)
        except UnknownResourceTypeError:
            rtype = None
    except ClusterError as exc:
        raise cluster_failure(exc, client=client, doing="API discovery") from None
    if rtype is not None:
        chosen = definition_for(
            store, group=rtype.group, version=rtype.version, kind=rtype.kind, client=client
        )
        if chosen is None:
            raise _no_definition(f"{rtype.kind} ({rtype.api_version})")
        version = chosen.gvk[1] if chosen.gvk else rtype.version
        served = (
            client.discovery.find(rtype.group, version, rtype.kind) if version != rtype.version else rtype
        )
        return ResolvedType(chosen, served or rtype, rtype.kind, rtype.group)
    # discovery does not know the token: the definitions' kinds (the type may not be installed)
    name, _, qualifier = token.strip().lower().partition(".")
    matches = [d for d in _by_kind_or_plural(store, name) if _qualifies(d, qualifier)]
    if not matches:
        raise _no_definition(f'"{token}" (and the server has no resource type "{token}")')
    gvks = {d.gvk for d in matches}
    if len(gvks) > 1:
        raise UsageError(_ambiguous_kinds(token, matches))
    if len(matches) > 1:
        from karta.definitions import ambiguity

        raise UsageError(ambiguity(matches))
    only = matches[0]
    assert only.gvk is not None
    return ResolvedType(only, None, only.gvk[2], only.gvk[0])


def _by_kind_or_plural(store: DefinitionStore, name: str) -> list[StoredDefinition]:
    """Definitions whose Kind is ``name`` (any case) or, failing that, whose guessed plural is
    (``pytorchjobs`` for a PyTorchJob that is not installed, so discovery cannot say)."""
    found = store.by_kind(name)
    if found:
        return found
    from karta.model.names import plural_guess

    return [d for d in store.visible() if d.gvk is not None and plural_guess(d.gvk[2]) == name]


def _qualifies(d: StoredDefinition, qualifier: str) -> bool:
    if not qualifier or d.gvk is None:
        return True
    group, version, _ = d.gvk
    return qualifier in (group, f"{version}.{group}".rstrip("."), version)


def _ambiguous_kinds(token: str, matches: Sequence[StoredDefinition]) -> str:
    from karta.definitions import gvk_token

    tokens = sorted({gvk_token(d.gvk).lower() for d in matches if d.gvk})
    return f'"{token}" matches several Karta definitions: {", ".join(tokens)}; use one of these tokens'


def definition_for(
    store: DefinitionStore,
    *,
    group: str,
    version: str,
    kind: str,
    client: KubeClient | None = None,
) -> StoredDefinition | None:
    """The definition for objects served at ``group/version, kind``: the exact GVK, else the one
    definition of that group and kind (among several, those whose version the cluster serves, the
    most stable first). Colliding or undecidable definitions are a usage error; None: no definition."""
    from karta.definitions import ambiguity

    exact = store.by_gvk(group, version, kind)
    if len(exact) == 1:
        return exact[0]
    if exact:
        raise UsageError(ambiguity(exact) + "; remove one from the cluster")
    others = store.by_group_kind(group, kind)
    if len(others) <= 1:
        return others[0] if others else None
    if client is not None:
        served = [d for d in others if d.gvk and client.discovery.find(d.gvk[0], d.gvk[1], d.gvk[2])]
        others = served or others
    by_version: dict[str, list[StoredDefinition]] = {}
    for d in others:
        by_version.setdefault(d.gvk[1] if d.gvk else "", []).append(d)
    best = by_version[most_stable(list(by_version)) or ""]
    if len(best) > 1:
        raise UsageError(ambiguity(best) + "; remove one from the cluster")
    return best[0]


def _no_definition(what: str) -> CliError:
    return CliError(
        f"no Karta definition covers {what}", code=exitcodes.NO_DEFINITION, hint=NO_DEFINITION_HINT
    )


# --------------------------------------------------------------------------- progress


class Progress:
    """``with Progress("listing jobs") as p: ... p.add(n)``: after ``delay`` seconds (2 s) a line
    ``listing jobs... N objects`` appears on stderr and is refreshed until the block ends, then
    erased. Nothing at all unless the stream is a terminal (or ``enabled`` forces it)."""

    def __init__(
        self,
        label: str,
        *,
        stream: IO[str] | None = None,
        delay: float = 2.0,
        interval: float = 0.25,
        enabled: bool | None = None,
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.interval = interval
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.count = 0
        self.shown = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def add(self, n: int = 1) -> None:
        self.count += n

    def set_label(self, label: str) -> None:
        self.label = label

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="kli-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self.shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()

    def _run(self) -> None:
        if self._done.wait(self.delay):
            return
        while True:
            with self._lock:
                if self._done.is_set():
                    return
                self.shown = True
                self.stream.write(f"\r\x1b[K{self.label}... {self.count} objects")
                self.stream.flush()
            if self._done.wait(self.interval):
                return
