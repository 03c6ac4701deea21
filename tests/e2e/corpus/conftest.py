"""The corpus installed on the session's API server, once (see corpus_install.py)."""

from __future__ import annotations

import pytest

from ..kubehttp import KubeHTTP
from .corpus_install import CorpusRun, install_corpus


@pytest.fixture(scope="session")
def corpus_run(cluster: KubeHTTP) -> CorpusRun:
    return install_corpus(cluster)
