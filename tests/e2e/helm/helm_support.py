"""Running the pinned Helm (hack/helm/build.sh) on the chart, and reading what it renders.

Owns: :class:`Helm` (the ``helm`` command with its own empty config, cache and data directories,
so nothing of the developer's Helm setup is read, and no repository or registry is reached), the
value sets of the tests (``values/``), splitting rendered manifests into objects, and the
controller's :class:`~karta.controller.options.Options` parsed from the rendered Deployment's
arguments, with the controller's own parser.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

import karta.kube.client as kube_client_module
from karta.controller.options import Options, parse
from karta.controller.parts.kueue.webhook import PATH as KUEUE_PATH
from karta.controller.parts.kueue.webhook import WEBHOOK_NAME as KUEUE_WEBHOOK
from karta.errors import ApiError

from ..kubehttp import KubeHTTP

ADM = "/apis/admissionregistration.k8s.io/v1"
# The path each chart webhook is served at (the pod webhook's otherwise).
PATHS = {
    "mkarta.run.ai": "/mutate-run-ai-v1alpha1-karta",
    "vkarta.run.ai": "/validate-run-ai-v1alpha1-karta",
    KUEUE_WEBHOOK: KUEUE_PATH,
}
REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "charts" / "karta"
VALUES = Path(__file__).resolve().parent / "values"
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_GOLDEN = bool(os.environ.get("KARTA_UPDATE_GOLDEN"))

# The value sets of the golden and comparison tests: the defaults and three others.
VALUE_SETS: dict[str, tuple[str, ...]] = {
    "default": (),
    "mode-b-cert-manager": ("-f", str(VALUES / "mode-b-cert-manager.yaml")),
    "kai-single": ("-f", str(VALUES / "kai-single.yaml")),
    "ui": ("-f", str(VALUES / "ui.yaml")),
}


def _built(tool: str) -> Path:
    """The pinned ``tool`` binary, built or reused (the last line hack/TOOL/build.sh prints)."""
    out = subprocess.run(
        ["bash", str(REPO / "hack" / tool / "build.sh")], check=True, capture_output=True, text=True
    ).stdout
    return Path(out.strip().splitlines()[-1]) / tool


def build_helm() -> Path:
    """The pinned helm binary (hack/helm)."""
    return _built("helm")


def build_kubectl() -> Path:
    """The pinned kubectl binary (hack/kubectl: the cluster's release; a new machine has none)."""
    return _built("kubectl")


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class Helm:
    binary: Path
    home: Path
    kubeconfig: Path | None = None

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HELM_", "KUBE"))}
        for name in ("config", "cache", "data"):
            (self.home / name).mkdir(parents=True, exist_ok=True)
        env.update(
            HELM_CONFIG_HOME=str(self.home / "config"),
            HELM_CACHE_HOME=str(self.home / "cache"),
            HELM_DATA_HOME=str(self.home / "data"),
            KUBECONFIG=str(self.kubeconfig or self.home / "no-kubeconfig"),
        )
        return env

    def run(self, *args: str, check: bool = True, timeout: float = 120.0) -> Result:
        done = subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, env=self.env(), timeout=timeout
        )
        result = Result(done.returncode, done.stdout, done.stderr)
        if check:
            assert result.code == 0, f"helm {' '.join(args)}: exit {result.code}\n{result.err}\n{result.out}"
        return result

    def template(
        self, *args: str, release: str = "karta", namespace: str = "karta-system"
    ) -> list[dict[str, Any]]:
        out = self.run("template", release, str(CHART), "--namespace", namespace, *args).out
        return documents(out)


def documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") == kind]


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = by_kind(objects, kind)
    return found


def controller_options(objects: list[dict[str, Any]]) -> Options:
    """What ``karta-controller`` makes of the rendered Deployment's arguments (its own parser: an
    argument it does not know fails here as it would in the pod)."""
    deployment = one(objects, "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["karta-controller"]
    options, version = parse(list(container["args"]))
    assert not version
    return options


def copy_chart(destination: Path) -> Path:
    """A copy of the chart to change (an upgrade's next version)."""
    target = destination / "karta"
    shutil.copytree(CHART, target)
    return target


def token_kubeconfig(cluster: KubeHTTP, namespace: str, account: str, path: Path) -> Path:
    """A kubeconfig for the ServiceAccount: a bound token from the TokenRequest API."""
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    answer = cluster.post(f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token", request)
    assert answer.status == 201, answer.body
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    context = next(c["context"] for c in admin["contexts"] if c["name"] == admin["current-context"])
    server = next(c["cluster"] for c in admin["clusters"] if c["name"] == context["cluster"])
    ca = (
        server.get("certificate-authority-data")
        or base64.b64encode(
            (cluster.kubeconfig.parent / server["certificate-authority"]).read_bytes()
        ).decode()
    )
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "test", "cluster": {"server": cluster.server, "certificate-authority-data": ca}}
        ],
        "users": [{"name": account, "user": {"token": answer.json()["status"]["token"]}}],
        "contexts": [{"name": "sa", "context": {"cluster": "test", "user": account, "namespace": namespace}}],
        "current-context": "sa",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def point_webhooks_at(cluster: KubeHTTP, manifest: list[dict[str, Any]], url: str) -> None:
    """Replace each chart webhook's Service by ``url`` (its caBundle stays: the controller's)."""
    for kind, plural in (
        ("MutatingWebhookConfiguration", "mutatingwebhookconfigurations"),
        ("ValidatingWebhookConfiguration", "validatingwebhookconfigurations"),
    ):
        for config in by_kind(manifest, kind):
            ops: list[dict[str, Any]] = []
            for i, webhook in enumerate(config["webhooks"]):
                path = PATHS.get(webhook["name"], "/mutate--v1-pod")
                ops += [
                    {"op": "remove", "path": f"/webhooks/{i}/clientConfig/service"},
                    {"op": "add", "path": f"/webhooks/{i}/clientConfig/url", "value": url + path},
                ]
            name = config["metadata"]["name"]
            patched = cluster.request(
                "PATCH", f"{ADM}/{plural}/{name}", body=ops, content_type="application/json-patch+json"
            )
            assert patched.status == 200, patched.body


def outside_the_cluster(chart: Options, kubeconfig: Path, workdir: Path, **more: Any) -> Options:
    """The chart's flags for ``karta-controller`` run by the test (no kubelet runs its pod): only
    its credentials, where it listens and where it writes files change."""
    return dataclasses.replace(
        chart,
        kubeconfig=str(kubeconfig),
        webhook_host="127.0.0.1",
        webhook_port=0,
        webhook_url="https://127.0.0.1",  # the serving certificate also names 127.0.0.1
        webhook_cert_dir=workdir / "certs",
        definitions_dir=workdir / "no-definitions",
        metrics_bind_address="0",
        health_probe_bind_address="0",
        shutdown_timeout=10.0,
        **more,
    )


def record_forbidden(patch: pytest.MonkeyPatch, seen: list[str], lock: threading.Lock) -> None:
    """Append to ``seen`` every 403 any karta client receives while ``patch`` is in force."""
    original = kube_client_module._error_from

    def recording(status: int, body: bytes) -> ApiError:
        error = original(status, body)
        if error.status == 403:
            with lock:
                seen.append(str(error))
        return error

    patch.setattr(kube_client_module, "_error_from", recording)
