"""The generated Kubernetes field tree (``karta/extract/_k8s_fields.py``) is current: rendered again
from the OpenAPI v3 document of the test control plane, it is the file in the tree byte for byte
(``bash hack/k8s-fields.sh`` rewrites it)."""

from __future__ import annotations

import pytest

from karta._generated import write_or_check
from karta.extract import _k8s_fields
from karta.extract._k8s_fields_build import COMMAND, OPENAPI_PATH, PINNED_VERSION, TARGET, render

from .kubehttp import KubeHTTP


def test_field_tree_is_generated_from_the_pinned_openapi(
    cluster: KubeHTTP, capsys: pytest.CaptureFixture[str]
) -> None:
    version = cluster.get("/version").json()["gitVersion"]
    if version != PINNED_VERSION:  # an existing cluster (KARTA_TEST_KUBECONFIG) of another release
        assert _k8s_fields.VERSION == PINNED_VERSION
        return
    text = render(cluster.get(OPENAPI_PATH).json(), version)
    assert write_or_check(TARGET, text, check=True, command=COMMAND) == 0, capsys.readouterr().err


def test_every_target_is_a_generated_struct() -> None:
    for target, struct in _k8s_fields.ROOTS.items():
        assert struct in _k8s_fields.STRUCTS, target
    assert {"apiVersion", "kind", "status"}.isdisjoint(_k8s_fields.STRUCTS["PodTemplateSpec"][0].split())
