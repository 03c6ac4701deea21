"""Fixtures for the karta.kube tests against the real API server.

Owns: ``kube`` (a :class:`karta.kube.KubeClient` built from the session cluster's kubeconfig the
way ``kli`` builds it), ``karta_crd`` (our ``kartas.run.ai`` CRD installed), ``corpus_crd``
(install one corpus CRD by file name), and ``private_control_plane``: a second control plane of
our own, for the tests that restart the API server or need a cluster without the Karta CRD.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.kube import ConfigOverrides, KubeClient

from ..conftest import _controlplane
from ..kubehttp import KubeHTTP, load_manifests


@pytest.fixture(scope="session")
def kube(cluster: KubeHTTP) -> Iterator[KubeClient]:
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig)))
    yield client
    client.close()


def wait_discovered(kube: KubeClient, crd: dict[str, Any], *, timeout: float = 60.0) -> None:
    """Wait until discovery serves every version of ``crd`` (it lags ``Established`` a little)."""
    spec = crd["spec"]
    wanted = [(spec["group"], v["name"], spec["names"]["kind"]) for v in spec["versions"] if v.get("served")]
    deadline = time.monotonic() + timeout
    while not all(kube.discovery.find(*gvk) for gvk in wanted):
        assert time.monotonic() < deadline, f"{crd['metadata']['name']} not discovered in {timeout}s"
        time.sleep(0.2)
        kube.discovery.invalidate()


@pytest.fixture(scope="session")
def karta_crd(cluster: KubeHTTP, kube: KubeClient) -> dict[str, Any]:
    from karta.crd import load_crd

    crd = load_crd()
    cluster.ensure_crd(crd)
    wait_discovered(kube, crd)
    return crd


@pytest.fixture(scope="session")
def corpus_crd(cluster: KubeHTTP, kube: KubeClient, corpus: Path) -> Callable[[str], dict[str, Any]]:
    def install(file_name: str) -> dict[str, Any]:
        (crd,) = load_manifests(corpus / "crds" / file_name)
        cluster.ensure_crd(crd)
        wait_discovered(kube, crd)
        return crd

    return install


class PrivateControlPlane:
    """A control plane this module started: restartable, without any CRD at first. Secrets are
    not cached by its API server (``--watch-cache-sizes=secrets#0``), so their watches are served
    by etcd and :meth:`compact_etcd` makes old resourceVersions answer 410 Gone."""

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.kubeconfig: Path = cp.kubeconfig

    def client(self, **overrides: Any) -> KubeClient:
        return KubeClient.from_config(ConfigOverrides(kubeconfig=str(self.kubeconfig), **overrides))

    def compact_etcd(self, revision: int) -> None:
        body = json.dumps({"revision": revision, "physical": True}).encode()
        url = f"http://127.0.0.1:{self.cp.etcd_port}/v3/kv/compaction"
        with urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=30) as r:
            assert r.status == 200

    def restart_apiserver(self) -> None:
        self.cp.stop_apiserver()
        self.cp.start_apiserver()


@pytest.fixture(scope="module")
def private_control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateControlPlane]:
    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        pytest.skip("restarting an API server needs the local control plane (KARTA_TEST_KUBECONFIG is set)")
    cp_mod = _controlplane()
    config = cp_mod.ControlPlaneConfig(
        bin_dir=cp_mod.build_binaries(), extra_apiserver_args=("--watch-cache-sizes=secrets#0",)
    )
    with cp_mod.ControlPlane(config=config, workdir=tmp_path_factory.mktemp("private-cp")) as cp:
        yield PrivateControlPlane(cp)
