"""kli as an installer's tool on a real API server of its own (no Karta CRD before the test).

``kli crd | kubectl apply --server-side -f -``: the CRD created from kli's output becomes
Established with the generated schema unchanged. ``kli catalog export | kubectl apply
--server-side -f -``: every exported object is created through the CRD's schema (strict field
validation) and through karta-controller's admission webhooks (15.3), which add nothing (the index
labels are already right), then validated by the operator; the ``--dir`` files applied again
change nothing. Apply here is what kubectl sends: the YAML documents as server-side apply patches.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import catalog_slugs
from karta.controller.main import Controller
from karta.crd import CRD_NAME, build_schema
from karta.definitions import MANAGED_BY, catalog_objects

from ..conftest import _controlplane
from ..controller.certs_support import write_test_certificates
from ..controller.operator_support import (
    KARTAS,
    eventually,
    manual_webhooks,
    start_controller,
    wait_condition,
    wait_webhooks_active,
    webhook_configurations,
)
from ..kubehttp import KubeHTTP, Response, from_kubeconfig

REPO = Path(__file__).resolve().parents[3]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
APPLY = {"fieldManager": "kubectl", "fieldValidation": "Strict"}


def _kli(*args: str) -> str:
    """``kli ARGS`` as a separate process (what a shell pipe would run); its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "karta.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return done.stdout


def _apply(kube: KubeHTTP, path: str, document: str) -> Response:
    """``kubectl apply --server-side`` of one YAML document (sent as it is)."""
    return kube.request(
        "PATCH", path, raw=document.encode(), content_type="application/apply-patch+yaml", params=APPLY
    )


def _documents(text: str) -> list[str]:
    return [doc for doc in text.split("\n---\n") if yaml.safe_load(doc) is not None]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHTTP]:
    """An API server of this module's own: the CRD must not exist before ``kli crd`` is applied."""
    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        pytest.skip("needs a control plane of its own (KARTA_TEST_KUBECONFIG is set)")
    cp_mod = _controlplane()
    config = cp_mod.ControlPlaneConfig(bin_dir=cp_mod.build_binaries())
    with cp_mod.ControlPlane(config=config, workdir=tmp_path_factory.mktemp("installer-cp")) as cp:
        yield from_kubeconfig(cp.kubeconfig, scratch=tmp_path_factory.mktemp("installer-creds"))


@pytest.fixture(scope="module")
def crd_applied(fresh: KubeHTTP) -> tuple[Response, dict[str, Any]]:
    """``kli crd | kubectl apply --server-side -f -``: the answer, and the CRD once Established."""
    assert fresh.get(f"{CRDS}/{CRD_NAME}").status == 404
    (document,) = _documents(_kli("crd"))
    answer = _apply(fresh, f"{CRDS}/{CRD_NAME}", document)

    def established() -> dict[str, Any] | None:
        crd = fresh.get(f"{CRDS}/{CRD_NAME}").json()
        conditions = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
        return crd if conditions.get("Established") == "True" else None

    crd = eventually(established, what="the Karta CRD Established")
    eventually(lambda: fresh.get("/apis/run.ai/v1alpha1").status == 200, what="run.ai/v1alpha1 served")
    return answer, crd


@pytest.fixture(scope="module")
def controller(
    fresh: KubeHTTP, crd_applied: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Controller]:
    """karta-controller with its webhooks, registered for the Kartas labelled as karta's."""
    certs = tmp_path_factory.mktemp("installer-webhook-certs")
    ca = write_test_certificates(certs)
    with start_controller(fresh, **manual_webhooks(certs)) as running:
        assert running.webhooks is not None
        mutating, validating = webhook_configurations(
            name="karta-installer-e2e",
            port=running.webhooks.bound_port,
            ca=ca,
            selector={MANAGED_BY: "karta"},
        )
        for path, body in ((MUTATING, mutating), (VALIDATING, validating)):
            assert fresh.post(path, body).status == 201
        wait_webhooks_active(
            fresh, name="webhook-probe", group="probe.karta.test", kind="Probe", labels={MANAGED_BY: "karta"}
        )
        yield running


def test_kli_crd_applied_creates_the_crd_established_with_the_generated_schema(
    crd_applied: tuple[Response, dict[str, Any]],
) -> None:
    answer, crd = crd_applied
    assert answer.status == 201, answer.body  # created from kli's output, not there before
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions["NamesAccepted"] == "True" and "NonStructuralSchema" not in conditions
    [version] = crd["spec"]["versions"]
    assert version["schema"]["openAPIV3Schema"] == build_schema()
    managers = {m["manager"] for m in crd["metadata"]["managedFields"] if m["operation"] == "Apply"}
    assert managers == {"kubectl"}


def test_the_exported_catalog_is_created_through_the_schema_and_the_webhooks(
    fresh: KubeHTTP, controller: Controller
) -> None:
    documents = _documents(_kli("catalog", "export"))
    assert len(documents) == len(catalog_slugs())
    for document in documents:
        name = yaml.safe_load(document)["metadata"]["name"]
        answer = _apply(fresh, f"{KARTAS}/{name}", document)
        assert answer.status == 201, (name, answer.body)
    for wanted in catalog_objects():
        name = wanted["metadata"]["name"]
        stored = fresh.get(f"{KARTAS}/{name}").json()
        assert stored["spec"] == wanted["spec"], name  # nothing pruned, nothing defaulted away
        # the mutating webhook had nothing to stamp: the labels are exactly the exported ones
        assert stored["metadata"]["labels"] == wanted["metadata"]["labels"], name
    for name in catalog_slugs():
        wait_condition(fresh, name, "Validated", "True", "ValidationSucceeded")


def test_the_exported_files_applied_again_change_nothing(
    fresh: KubeHTTP, controller: Controller, tmp_path: Path
) -> None:
    # (after the previous test, or on its own: apply once, then compare the second apply)
    paths = _kli("catalog", "export", "--dir", str(tmp_path / "catalog")).splitlines()
    assert [Path(p).name for p in paths] == [f"{name}.yaml" for name in catalog_slugs()]
    for path in map(Path, paths):
        _apply(fresh, f"{KARTAS}/{path.stem}", path.read_text())
    before = {name: fresh.get(f"{KARTAS}/{name}").json() for name in catalog_slugs()}
    for path in map(Path, paths):
        answer = _apply(fresh, f"{KARTAS}/{path.stem}", path.read_text())
        assert answer.status == 200, (path.name, answer.body)
        version = before[path.stem]["metadata"]["resourceVersion"]
        assert answer.json()["metadata"]["resourceVersion"] == version, path.name
