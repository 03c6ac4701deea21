"""Kubeconfig loading without a cluster: merging, contexts, overrides, credentials, in-cluster."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.errors import KubeConfigError, NoKubeconfigError
from karta.kube import ConfigOverrides, Credentials, load_config
from karta.kube.auth import run_exec_plugin
from karta.kube.config import ExecConfig, parse_timeout

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def _config(
    *, clusters: list[Any], users: list[Any], contexts: list[Any], current: str | None = None
) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": clusters, "users": users,
                           "contexts": contexts}  # fmt: skip
    if current:
        doc["current-context"] = current
    return doc


@pytest.fixture
def two_contexts(tmp_path: Path) -> Path:
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.crt").write_bytes(CA)
    return _write(
        tmp_path / "config",
        _config(
            clusters=[
                {
                    "name": "prod",
                    "cluster": {"server": "https://prod:6443", "certificate-authority": "certs/ca.crt"},
                },
                {
                    "name": "dev",
                    "cluster": {
                        "server": "https://dev:6443",
                        "insecure-skip-tls-verify": True,
                        "tls-server-name": "kubernetes",
                    },
                },
            ],
            users=[
                {"name": "admin", "user": {"token": "t0ken"}},
                {
                    "name": "dev-user",
                    "user": {"username": "u", "password": "p", "as": "imp", "as-groups": ["g1"]},
                },
            ],
            contexts=[
                {"name": "prod", "context": {"cluster": "prod", "user": "admin", "namespace": "ml"}},
                {"name": "dev", "context": {"cluster": "dev", "user": "dev-user"}},
            ],
            current="prod",
        ),
    )


def test_current_context_with_relative_ca_and_namespace(two_contexts: Path) -> None:
    cfg = load_config(ConfigOverrides(kubeconfig=str(two_contexts)))
    assert (cfg.server, cfg.namespace, cfg.context, cfg.token) == ("https://prod:6443", "ml", "prod", "t0ken")
    assert cfg.ca_data == CA  # resolved relative to the kubeconfig's directory
    assert Credentials(cfg).headers()["Authorization"] == "Bearer t0ken"


def test_context_flag_namespace_flag_and_defaults(two_contexts: Path) -> None:
    cfg = load_config(ConfigOverrides(kubeconfig=str(two_contexts), context="dev"))
    assert (cfg.server, cfg.namespace, cfg.insecure_skip_tls_verify) == ("https://dev:6443", "default", True)
    assert cfg.tls_server_name == "kubernetes"
    headers = Credentials(cfg).headers()
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"u:p").decode()
    assert headers["Impersonate-User"] == "imp"
    assert Credentials(cfg).impersonate_groups() == ("g1",)
    cfg = load_config(ConfigOverrides(kubeconfig=str(two_contexts), context="dev", namespace="x"))
    assert cfg.namespace == "x"


def test_cluster_user_server_token_and_impersonation_flags(two_contexts: Path) -> None:
    cfg = load_config(
        ConfigOverrides(
            kubeconfig=str(two_contexts),
            cluster="dev",
            user="dev-user",
            server="https://other:1",
            token="flag-token",
            as_user="someone",
            as_groups=("a", "b"),
            as_uid="42",
            request_timeout="1m30s",
        )
    )
    assert cfg.server == "https://other:1" and cfg.insecure_skip_tls_verify
    assert (cfg.token, cfg.username, cfg.password) == ("flag-token", None, None)
    assert (cfg.impersonate_user, cfg.impersonate_groups, cfg.impersonate_uid) == (
        "someone",
        ("a", "b"),
        "42",
    )
    assert cfg.timeout == 90.0
    headers = Credentials(cfg).headers()
    assert headers["Authorization"] == "Bearer flag-token"
    assert headers["Impersonate-Uid"] == "42"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"context": "nope"}, 'context "nope" does not exist'),
        ({"cluster": "nope"}, 'cluster "nope" does not exist'),
        ({"user": "nope"}, 'user "nope" does not exist'),
    ],
)
def test_unknown_names_are_errors(two_contexts: Path, flags: dict[str, str], message: str) -> None:
    with pytest.raises(KubeConfigError, match=message):
        load_config(ConfigOverrides(kubeconfig=str(two_contexts), **flags))


def test_explicit_missing_kubeconfig_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(KubeConfigError, match="does not exist") as info:
        load_config(ConfigOverrides(kubeconfig=str(tmp_path / "missing")))
    assert not isinstance(info.value, NoKubeconfigError)


def test_kubeconfig_env_merges_first_wins(tmp_path: Path) -> None:
    first = _write(
        tmp_path / "a",
        _config(
            clusters=[{"name": "c", "cluster": {"server": "https://first"}}],
            users=[{"name": "u", "user": {"token": "first"}}],
            contexts=[],
        ),
    )
    second = _write(
        tmp_path / "b",
        _config(
            clusters=[{"name": "c", "cluster": {"server": "https://second"}},
                      {"name": "d", "cluster": {"server": "https://d"}}],
            users=[{"name": "u", "user": {"token": "second"}}],
            contexts=[{"name": "ctx", "context": {"cluster": "c", "user": "u"}},
                      {"name": "dctx", "context": {"cluster": "d", "user": "u"}}],
            current="ctx",
        ),
    )  # fmt: skip
    env = {"KUBECONFIG": os.pathsep.join([str(first), str(tmp_path / "absent"), str(second)])}
    cfg = load_config(environ=env)
    assert (cfg.server, cfg.token) == ("https://first", "first")
    assert load_config(ConfigOverrides(context="dctx"), environ=env).server == "https://d"


def test_default_path_under_home(tmp_path: Path) -> None:
    _write(
        tmp_path / ".kube" / "config",
        _config(
            clusters=[{"name": "c", "cluster": {"server": "https://home"}}],
            users=[{"name": "u", "user": {}}],
            contexts=[{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            current="x",
        ),
    )
    assert load_config(environ={}, home=tmp_path).server == "https://home"


def test_no_kubeconfig_is_its_own_error(tmp_path: Path) -> None:
    with pytest.raises(NoKubeconfigError):
        load_config(environ={}, home=tmp_path)


def test_server_flag_without_kubeconfig(tmp_path: Path) -> None:
    cfg = load_config(ConfigOverrides(server="https://flags:6443", token="t"), environ={}, home=tmp_path)
    assert (cfg.server, cfg.token, cfg.source) == ("https://flags:6443", "t", "flags")


def test_in_cluster(tmp_path: Path) -> None:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token\n")
    (sa / "ca.crt").write_bytes(CA)
    (sa / "namespace").write_text("karta-system")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    cfg = load_config(environ=env, home=tmp_path, service_account_dir=sa)
    assert (cfg.server, cfg.namespace, cfg.ca_data, cfg.source) == (
        "https://10.0.0.1:443",
        "karta-system",
        CA,
        "in-cluster",
    )
    assert Credentials(cfg).headers()["Authorization"] == "Bearer sa-token"
    (sa / "token").write_text("rotated")  # projected tokens rotate: re-read when the file changes
    os.utime(sa / "token", (1, 1))
    assert Credentials(cfg).headers()["Authorization"] == "Bearer rotated"
    v6 = load_config(
        environ={**env, "KUBERNETES_SERVICE_HOST": "fd00::1"}, home=tmp_path, service_account_dir=sa
    )
    assert v6.server == "https://[fd00::1]:443"


def test_embedded_data_and_auth_provider(tmp_path: Path) -> None:
    doc = _config(
        clusters=[{"name": "c", "cluster": {"server": "https://s", "certificate-authority-data":
                                            base64.b64encode(CA).decode()}}],
        users=[{"name": "u", "user": {"client-certificate-data": base64.b64encode(b"CERT").decode(),
                                      "client-key-data": base64.b64encode(b"KEY").decode()}},
               {"name": "old", "user": {"auth-provider": {"name": "gcp"}}}],
        contexts=[{"name": "x", "context": {"cluster": "c", "user": "u"}},
                  {"name": "y", "context": {"cluster": "c", "user": "old"}}],
        current="x",
    )  # fmt: skip
    path = _write(tmp_path / "config", doc)
    cfg = load_config(ConfigOverrides(kubeconfig=str(path)))
    assert (cfg.ca_data, cfg.client_cert_data, cfg.client_key_data) == (CA, b"CERT", b"KEY")
    assert Credentials(cfg).client_certificate() == (b"CERT", b"KEY")
    with pytest.raises(KubeConfigError, match="auth-provider"):
        load_config(ConfigOverrides(kubeconfig=str(path), context="y"))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", None), ("30", 30.0), ("1.5", 1.5), ("2m", 120.0), ("1h2m3s", 3723.0), ("500ms", 0.5)],
)
def test_request_timeout(text: str, seconds: float | None) -> None:
    assert parse_timeout(text) == seconds


def test_bad_request_timeout() -> None:
    with pytest.raises(KubeConfigError, match="invalid request timeout"):
        parse_timeout("soon")


# ------------------------------------------------------------------------------ exec plugins


def _plugin(tmp_path: Path, body: str) -> ExecConfig:
    script = tmp_path / "plugin"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return ExecConfig(command=str(script), env=(("EXTRA", "yes"),))


def test_exec_plugin_token_expiry_and_environment(tmp_path: Path) -> None:
    plugin = _plugin(
        tmp_path,
        'test "$EXTRA" = yes || exit 9\n'
        'echo "$KUBERNETES_EXEC_INFO" > "$(dirname "$0")/info"\n'
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
        '"status":{"token":"abc","expirationTimestamp":"2999-01-01T00:00:00Z"}}\'\n',
    )
    result = run_exec_plugin(plugin)
    assert result.token == "abc" and result.expires is not None and result.expires.year == 2999
    info = json.loads((tmp_path / "info").read_text())
    assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("echo boom >&2; exit 1\n", "failed: boom"),
        ("echo not json\n", "no valid ExecCredential"),
        ('echo \'{"kind":"ExecCredential","status":{}}\'\n', "neither a token nor a client certificate"),
        ('echo \'{"kind":"Other","status":{"token":"x"}}\'\n', "printed kind 'Other'"),
    ],
)
def test_exec_plugin_failures(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(KubeConfigError, match=message):
        run_exec_plugin(_plugin(tmp_path, body))


def test_exec_plugin_not_installed() -> None:
    plugin = ExecConfig(command="karta-no-such-plugin", install_hint="install it from the vendor")
    with pytest.raises(KubeConfigError, match="not found \\(install it from the vendor\\)"):
        run_exec_plugin(plugin)
