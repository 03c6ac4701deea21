"""Fixtures of the Helm chart tests: the pinned ``helm`` (built once into the cluster cache, like
the control plane), without a cluster for lint and template, and with the session's API server."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..kubehttp import KubeHTTP
from .helm_support import Helm, build_helm, build_kubectl


@pytest.fixture(scope="session")
def helm_binary() -> Path:
    return build_helm()


@pytest.fixture(scope="session")
def kubectl_binary() -> Path:
    return build_kubectl()


@pytest.fixture
def helm(helm_binary: Path, tmp_path: Path) -> Helm:
    """helm with no cluster (lint, template)."""
    return Helm(helm_binary, tmp_path / "helm-home")


@pytest.fixture(scope="module")
def cluster_helm(helm_binary: Path, cluster: KubeHTTP, tmp_path_factory: pytest.TempPathFactory) -> Helm:
    """helm against the session's API server, as its admin."""
    return Helm(helm_binary, tmp_path_factory.mktemp("helm-home"), kubeconfig=cluster.kubeconfig)
