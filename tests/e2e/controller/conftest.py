"""Fixtures shared by the controller's e2e modules (a module that needs another ``ns`` defines its
own, which takes precedence)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..kubehttp import KubeHTTP
from .gangs_support import new_namespace


@pytest.fixture
def ns(cluster: KubeHTTP) -> Iterator[str]:
    """A fresh namespace on the session's cluster, deleted afterwards."""
    name = new_namespace(cluster)
    yield name
    cluster.delete(f"/api/v1/namespaces/{name}")
