"""Connecting to a cluster the way kubectl does, with one clear error for each way it fails.

- :data:`CONNECTION_PARAMS` and :func:`overrides_from`: kubectl's connection flags (click
  parameter names) as a :class:`karta.kube.ConfigOverrides`; a malformed ``--request-timeout`` or
  an identity that cannot be an HTTP header is a usage error;
- :func:`connect`: a :class:`karta.kube.KubeClient`, discovery loaded, or a :class:`CliError`
  (exit 1) saying what to do: no kubeconfig, unusable kubeconfig, unreachable server, rejected
  credentials (naming the identity); :func:`cluster_failure` maps any later
  :class:`karta.errors.ClusterError` the same way.

The click options themselves are declared in :mod:`karta.cli.options`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from karta import kube
from karta.cli.errors import CliError, UsageError
from karta.errors import (
    ApiError,
    ClusterError,
    ClusterUnreachableError,
    KubeConfigError,
    NoKubeconfigError,
)

__all__ = ["CONNECTION_PARAMS", "NO_CLUSTER_HINT", "cluster_failure", "connect", "identity", "overrides_from"]

NO_CLUSTER_HINT = (
    "point $KUBECONFIG or --kubeconfig at a kubeconfig (kubectl's works), or pass --server and "
    "--token; offline, 'kli describe -f FILE' and 'kli inspect' work on manifests"
)

CONNECTION_PARAMS = (
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


def overrides_from(values: Mapping[str, Any]) -> kube.ConfigOverrides:
    """The flag values (click parameter names, see :func:`connection_options`) as overrides;
    a malformed ``--request-timeout`` is a usage error."""
    timeout = values.get("request_timeout")
    if timeout is not None:
        try:
            kube.parse_timeout(str(timeout))
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
    return kube.ConfigOverrides(
        kubeconfig=values.get("kubeconfig") or None,
        context=_one_context(values.get("context")),
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


def _one_context(value: Any) -> str | None:
    """``--context`` is repeatable (``kli get`` lists several clusters): the one given, or None
    (several are the caller's to check: :func:`karta.cli.options.connection_options`)."""
    if isinstance(value, tuple | list):
        distinct = list(dict.fromkeys(v for v in value if v))
        return distinct[0] if len(distinct) == 1 else None
    return value or None


def _header_safe(text: str) -> bool:
    """True if ``text`` can be an HTTP header value (Latin-1, no control characters)."""
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text)


# --------------------------------------------------------------------------- connecting


def connect(overrides: kube.ConfigOverrides | None = None, *, probe: bool = True) -> kube.KubeClient:
    """A client for kubectl's precedence of flags, kubeconfig and in-cluster config.

    With ``probe`` (the default) API discovery is loaded at once, so an unreachable server or
    rejected credentials fail here, as one clear error (exit 1), before anything else is asked.
    """
    try:
        config = kube.load_config(overrides)
    except NoKubeconfigError as exc:
        raise CliError(f"no cluster configured: {exc}", hint=NO_CLUSTER_HINT) from None
    except KubeConfigError as exc:
        raise CliError(f"cannot use the cluster configuration: {exc}", hint=_config_hint(overrides)) from None
    try:
        client = kube.KubeClient(config)
    except KubeConfigError as exc:  # e.g. an unusable server URL
        raise CliError(f"cannot use the cluster configuration: {exc}", hint=_config_hint(overrides)) from None
    if probe:
        try:
            client.discovery.resources()
        except ClusterError as exc:
            client.close()
            raise cluster_failure(exc, client=client) from None
    return client


def _config_hint(overrides: kube.ConfigOverrides | None) -> str:
    if overrides is not None and overrides.kubeconfig:
        return f"check the file given with --kubeconfig ({overrides.kubeconfig})"
    return "check $KUBECONFIG / ~/.kube/config, or choose another entry with --context, --cluster or --user"


def cluster_failure(exc: ClusterError, *, client: kube.KubeClient | None = None, doing: str = "") -> CliError:
    """One clear ``error:`` (exit 1) for a cluster problem; ``doing`` ("listing jobs") prefixes it."""
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


def identity(config: kube.ClusterConfig) -> str:
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
    text = pem.decode("ascii", errors="ignore")
    block = re.search(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", text, re.S)
    if block is None:
        return ""
    import base64  # here: offline commands import this module and never read a certificate

    try:
        der = base64.b64decode("".join(block.group(1).split()), validate=True)
    except ValueError:  # binascii.Error is a ValueError
        return ""
    at = der.rfind(_CN)
    if at < 0 or at + 7 > len(der):
        return ""
    length = der[at + 6]
    if length & 0x80:
        return ""
    return der[at + 7 : at + 7 + length].decode("utf-8", errors="replace")
