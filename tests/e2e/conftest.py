"""Session fixtures for the tests against a real Kubernetes API server.

Owns: the ``cluster`` fixture. It builds-or-reuses the pinned binaries (hack/cluster/build.sh)
and starts etcd + kube-apiserver once per session on 127.0.0.1 (hack/cluster/controlplane.py),
or, when ``KARTA_TEST_KUBECONFIG`` names a kubeconfig, uses that existing cluster instead.
Also a per-session test namespace and the location of the shared corpus.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .kubehttp import KubeHTTP, from_kubeconfig

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"


def hack_module(relative: str) -> ModuleType:
    """A stand-alone script under hack/ (not part of the karta package) as a module, loaded once:
    ``hack_module("cluster/controlplane.py")``, ``hack_module("fake_nodes.py")``."""
    name = "karta_hack_" + relative.removesuffix(".py").replace("/", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "hack" / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def etcd_request(port: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST ``body`` to the control plane's etcd (its v3 JSON gateway on 127.0.0.1:``port``): the
    fault tests write and compact behind the API server's back."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        result: dict[str, Any] = json.loads(answer.read())
        return result


def _controlplane() -> ModuleType:
    """hack/cluster/controlplane.py."""
    return hack_module("cluster/controlplane.py")


@pytest.fixture(scope="session")
def corpus() -> Path:
    assert CORPUS.is_dir(), f"the shared corpus is expected at {CORPUS}"
    return CORPUS


def local_cluster(
    tmp_path_factory: pytest.TempPathFactory,
    *,
    controllers: bool,
    runtime_config: tuple[str, ...] | None = None,
    feature_gates: dict[str, bool] | None = None,
    kwok: bool = False,
    operators: tuple[str, ...] = (),
    kueue: dict[str, Any] | None = None,
) -> Iterator[KubeHTTP]:
    """A control plane of its own (``runtime_config``: the API server's ``--runtime-config``
    entries instead of the default ones; ``feature_gates``: gates on top of the default ones;
    ``kwok``, ``operators``: as ``up.sh --kwok --operators``; ``kueue``: Kueue with this
    Configuration, as ``up.sh --kueue-config``), as a KubeHTTP; stopped when the iterator is
    closed."""
    cp_mod = _controlplane()
    config = cp_mod.ControlPlaneConfig(
        bin_dir=cp_mod.build_binaries(), controllers=controllers, kwok=kwok, operators=operators, kueue=kueue
    )
    if runtime_config is not None:
        config.runtime_config = runtime_config
    if feature_gates is not None:
        config.feature_gates = {**config.feature_gates, **feature_gates}
    workdir = tmp_path_factory.mktemp("control-plane")
    with cp_mod.ControlPlane(config=config, workdir=workdir) as cp, pytest.MonkeyPatch.context() as env:
        if cp.raydash_url:  # --operators kuberay: the Ray dashboard stand-in (hack/raydash), as up.sh says
            env.setenv("KARTA_RAYDASH_URL", cp.raydash_url)
        yield from_kubeconfig(
            cp.kubeconfig,
            scratch=tmp_path_factory.mktemp("kube-credentials"),
            expected_version=cp_mod.pinned_versions()["kubernetes"],
        )


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHTTP]:
    """etcd + kube-apiserver (no controllers: objects stay exactly as the tests write them)."""
    external = os.environ.get("KARTA_TEST_KUBECONFIG")
    if external:
        yield from_kubeconfig(Path(external), scratch=tmp_path_factory.mktemp("kube-credentials"))
        return
    yield from local_cluster(tmp_path_factory, controllers=False)


@pytest.fixture(scope="session")
def controllers_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHTTP]:
    """A second local control plane that also runs kube-controller-manager and kube-scheduler
    (Jobs create Pods, the scheduler binds them to fake Node objects, the garbage collector runs).
    Started only when a test asks for it; not available against KARTA_TEST_KUBECONFIG."""
    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        pytest.skip("needs the local control plane: fake Nodes are not created in an existing cluster")
    yield from local_cluster(tmp_path_factory, controllers=True)


@pytest.fixture(scope="session")
def ecosystem_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHTTP]:
    """A local control plane with kube-controller-manager, kube-scheduler, kwok (the pods bound
    to Nodes made with ``kwok=True`` run: hack/kwok/stages.yaml) and the KubeRay and training
    operators built from their Go modules (hack/kuberay, hack/training-operator), their CRDs
    installed. Started once per session, only when a test asks for it (the operators' first build
    is several minutes); not available against KARTA_TEST_KUBECONFIG."""
    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        pytest.skip("needs the local control plane: kwok and the operators run next to it")
    yield from local_cluster(
        tmp_path_factory, controllers=True, kwok=True, operators=tuple(_controlplane().OPERATORS)
    )


@pytest.fixture(scope="session")
def kueue_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHTTP]:
    """The ``ecosystem_cluster``'s processes and Kueue (hack/kueue: its CRDs, webhooks on loopback
    TLS, the CRD conversion webhooks), configured as ``up.sh --kueue`` does: the integrations
    generated from karta's catalog (karta.kueue.config; Kueue keeps batch/v1 Jobs, the catalog's
    other suspendable kinds are external frameworks). Started once per session, only when a test
    asks for it; not available against KARTA_TEST_KUBECONFIG."""
    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        pytest.skip("needs the local control plane: Kueue and the operators run next to it")
    from karta.catalog import catalog_definitions
    from karta.kueue.config import kueue_configuration

    cp_mod = _controlplane()
    config = kueue_configuration(catalog_definitions(), native=cp_mod.KUEUE_NATIVE)
    yield from local_cluster(
        tmp_path_factory, controllers=True, kwok=True, operators=tuple(cp_mod.OPERATORS), kueue=config
    )


@pytest.fixture(scope="session")
def namespace(cluster: KubeHTTP) -> Iterator[str]:
    """A fresh namespace for this session, deleted afterwards (deletion is not awaited)."""
    name = f"karta-e2e-{uuid.uuid4().hex[:8]}"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    created = cluster.post("/api/v1/namespaces", body)
    assert created.status == 201, created.body
    yield name
    cluster.delete(f"/api/v1/namespaces/{name}")
