"""Credentials against the real API server: client certificate, bearer token, token file, exec
plugin (with a refresh after 401), and impersonation; who we are is asked with SelfSubjectReview."""

from __future__ import annotations

import base64
import json
import stat
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.errors import ApiError
from karta.kube import ConfigOverrides, KubeClient

from ..kubehttp import KubeHTTP


def whoami(client: KubeClient) -> str:
    review = client.request_json(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    return str(review["status"]["userInfo"]["username"])


@pytest.fixture(scope="module")
def service_account_token(kube: KubeClient, namespace: str) -> tuple[str, str]:
    """A bound token of a fresh ServiceAccount (TokenRequest API) and the expected username."""
    name = f"sa-{uuid.uuid4().hex[:6]}"
    kube.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}, namespace=namespace
    )
    request = kube.request_json(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    return str(request["status"]["token"]), f"system:serviceaccount:{namespace}:{name}"


def _kubeconfig(path: Path, cluster: KubeHTTP, user: dict[str, Any]) -> Path:
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    cluster_entry = admin["clusters"][0]["cluster"]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster_entry}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "team-a"}}],
        "current-context": "ctx",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def test_admin_client_certificate(kube: KubeClient) -> None:
    assert whoami(kube) == "karta-admin"


def test_bearer_token(cluster: KubeHTTP, service_account_token: tuple[str, str], tmp_path: Path) -> None:
    token, username = service_account_token
    path = _kubeconfig(tmp_path / "config", cluster, {"token": token})
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(path)))
    assert client.namespace == "team-a"
    assert whoami(client) == username
    with pytest.raises(ApiError) as info:  # authenticated, but the account has no RBAC grants
        client.list("configmaps", namespace="default")
    assert info.value.status == 403


def test_token_flag_overrides_the_kubeconfig_user(
    cluster: KubeHTTP, service_account_token: tuple[str, str]
) -> None:
    token, username = service_account_token
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig), token=token))
    assert whoami(client) == username


def test_token_file(cluster: KubeHTTP, service_account_token: tuple[str, str], tmp_path: Path) -> None:
    token, username = service_account_token
    (tmp_path / "token").write_text(token + "\n")
    path = _kubeconfig(tmp_path / "config", cluster, {"tokenFile": "token"})  # relative to the file
    assert whoami(KubeClient.from_config(ConfigOverrides(kubeconfig=str(path)))) == username


def test_exec_plugin_token_and_refresh_after_401(
    cluster: KubeHTTP, service_account_token: tuple[str, str], tmp_path: Path
) -> None:
    token, username = service_account_token
    calls = tmp_path / "calls"
    plugin = tmp_path / "credential-plugin"
    # First call: a wrong token (the server answers 401); later calls: the real one.
    good = json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                       "status": {"token": token}})  # fmt: skip
    bad = good.replace(token, "not-a-valid-token")
    plugin.write_text(
        "#!/bin/sh\n"
        f'echo call >> "{calls}"\n'
        f'[ -n "$KUBERNETES_EXEC_INFO" ] || exit 3\n'
        f"if [ \"$(wc -l < \"{calls}\")\" -le 1 ]; then echo '{bad}'; else echo '{good}'; fi\n"
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
                     "interactiveMode": "Never"}}  # fmt: skip
    client = KubeClient.from_config(
        ConfigOverrides(kubeconfig=str(_kubeconfig(tmp_path / "c", cluster, user)))
    )
    assert whoami(client) == username
    assert whoami(client) == username  # cached: no third run
    assert len(calls.read_text().splitlines()) == 2


def test_exec_plugin_client_certificate(cluster: KubeHTTP, tmp_path: Path) -> None:
    admin = yaml.safe_load(cluster.kubeconfig.read_text())["users"][0]["user"]
    status = {
        "clientCertificateData": base64.b64decode(admin["client-certificate-data"]).decode(),
        "clientKeyData": base64.b64decode(admin["client-key-data"]).decode(),
    }
    credential = tmp_path / "credential.json"
    credential.write_text(
        json.dumps(
            {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": status}
        )
    )
    user = {
        "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "cat", "args": [str(credential)]}
    }
    client = KubeClient.from_config(
        ConfigOverrides(kubeconfig=str(_kubeconfig(tmp_path / "c", cluster, user)))
    )
    assert whoami(client) == "karta-admin"


def test_impersonation_headers(kube: KubeClient, cluster: KubeHTTP) -> None:
    client = KubeClient.from_config(
        ConfigOverrides(
            kubeconfig=str(cluster.kubeconfig), as_user="dora", as_groups=("team-x", "team-y"), as_uid="u-1"
        )
    )
    review = client.request_json(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    info = review["status"]["userInfo"]
    assert info["username"] == "dora" and info["uid"] == "u-1"
    assert {"team-x", "team-y"} <= set(info["groups"])
