"""``--install-catalog`` against the real API server: the built-ins applied by server-side apply as
field manager ``karta`` and labelled as ours, never over a user's Karta for the same root GVK."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from karta.catalog import catalog_slugs
from karta.controller.main import Controller
from karta.controller.parts.catalog_install import CatalogInstaller
from karta.definitions import MANAGED_BY

from ..kubehttp import KubeHTTP
from .operator_support import KARTAS, eventually, get_karta, install_karta_crd, karta_body, start_controller


@pytest.fixture(scope="module")
def user_karta(cluster: KubeHTTP) -> Iterator[str]:
    """A user's own definition of batch/v1 Job, there before the catalog is installed."""
    install_karta_crd(cluster)
    name = f"my-jobs-{uuid.uuid4().hex[:6]}"
    body = karta_body(name, group="batch", version="v1", kind="Job")
    body["spec"]["structureDefinition"]["rootComponent"]["name"] = "mine"
    created = cluster.post(KARTAS, body)
    assert created.status == 201, created.body
    yield name
    cluster.delete(f"{KARTAS}/{name}")


@pytest.fixture(scope="module")
def installed(cluster: KubeHTTP, user_karta: str) -> Iterator[Controller]:
    before = {i["metadata"]["name"] for i in cluster.get(KARTAS).json()["items"]}
    with start_controller(cluster, install_catalog=True) as controller:
        installer = controller.parts["catalog-installer"]
        assert isinstance(installer, CatalogInstaller)
        eventually(installer.done.is_set, what="catalog installed")
        try:
            yield controller
        finally:
            assert installer.result is not None
            for name in installer.result.applied:
                if name not in before:  # leave the session's cluster as other tests expect it
                    cluster.delete(f"{KARTAS}/{name}")


def test_the_catalog_is_applied_except_over_a_users_karta(
    cluster: KubeHTTP, installed: Controller, user_karta: str
) -> None:
    installer = installed.parts["catalog-installer"]
    assert isinstance(installer, CatalogInstaller) and installer.result is not None
    result = installer.result
    assert sorted([*result.applied, *result.skipped]) == sorted(catalog_slugs())
    assert "batch-job-v1" in result.skipped
    assert user_karta in result.skipped["batch-job-v1"]
    assert cluster.get(f"{KARTAS}/batch-job-v1").status == 404

    mine = get_karta(cluster, user_karta)
    assert mine["spec"]["structureDefinition"]["rootComponent"]["name"] == "mine"
    assert MANAGED_BY not in (mine["metadata"].get("labels") or {})

    assert "kubeflow-org-pytorchjob-v1" in result.applied
    for name in result.applied:
        obj = get_karta(cluster, name)
        assert obj["metadata"]["labels"][MANAGED_BY] == "karta"
        managers = {m["manager"] for m in obj["metadata"]["managedFields"] if m["operation"] == "Apply"}
        assert managers == {"karta"}
    pytorch = get_karta(cluster, "kubeflow-org-pytorchjob-v1")
    assert pytorch["metadata"]["labels"]["run.ai/karta-kind"] == "PyTorchJob"
    assert pytorch["spec"]["structureDefinition"]["rootComponent"]["kind"] == {
        "group": "kubeflow.org",
        "version": "v1",
        "kind": "PyTorchJob",
    }


def test_installing_again_changes_nothing_and_still_skips_the_users_karta(
    cluster: KubeHTTP, installed: Controller, user_karta: str
) -> None:
    from karta.controller.parts.catalog_install import install_catalog

    first = installed.parts["catalog-installer"]
    assert isinstance(first, CatalogInstaller) and first.result is not None
    generations = {n: get_karta(cluster, n)["metadata"]["generation"] for n in first.result.applied}
    again = install_catalog(installed.client)
    assert again.applied == first.result.applied
    assert set(again.skipped) == set(first.result.skipped)
    # the same apply again leaves every spec as it was (the generation counts spec changes)
    assert {n: get_karta(cluster, n)["metadata"]["generation"] for n in again.applied} == generations
