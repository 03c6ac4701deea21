"""Fixtures for the Karta CRD tests: the shipped CRD installed once per session, unique object names.

Owns ``karta_crd`` (the CRD as the API server stores it, after ``Established``) and ``karta_name``
(a factory of cluster-unique Karta names: Karta objects are cluster-scoped, and an existing cluster
given by ``KARTA_TEST_KUBECONFIG`` may hold objects of earlier runs).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from karta.crd import CRD_NAME, load_crd

from ..kubehttp import KubeHTTP

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
KARTAS = "/apis/run.ai/v1alpha1/kartas"


@pytest.fixture(scope="session")
def karta_crd(cluster: KubeHTTP) -> dict[str, Any]:
    cluster.ensure_crd(load_crd())
    stored: dict[str, Any] = cluster.get(f"{CRDS}/{CRD_NAME}").json()
    return stored


@pytest.fixture(scope="session")
def karta_name(karta_crd: dict[str, Any], cluster: KubeHTTP) -> Iterator[Callable[[str], str]]:
    run = uuid.uuid4().hex[:6]
    created: list[str] = []

    def make(stem: str) -> str:
        name = f"e2e-{run}-{stem}"[:253].rstrip("-.")
        created.append(name)
        return name

    yield make
    # Best effort: the session cluster is thrown away anyway; an existing one is kept tidy.
    for name in created:
        cluster.delete(f"{KARTAS}/{name}")
