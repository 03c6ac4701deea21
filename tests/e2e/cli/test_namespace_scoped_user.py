"""A namespace-scoped user (issue 28) on the real API server: may read FineTuneRuns in one
namespace, may not list the cluster-scoped Kartas, where the FineTuneRun definition lives.

- the error for the type says why nothing covers it: the cluster's Kartas could not be listed
  (forbidden), with a hint on how to be allowed, and it is the only message (no warning above it
  repeating the cause); exit 4, as documented for a type no definition covers;
- with the definition in $KARTA_DEFINITIONS, the same user lists the FineTuneRuns: the fallback is
  the built-in and local definitions, with ONE warning that says why (forbidden);
- an administrator sees the workload through the cluster's Karta, with no warning.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from karta.cli.lookup import FORBIDDEN_HINT

from ..controller.operator_support import widget_crd
from ..kubehttp import REVIEWS, KubeHTTP, access_review, ok, wait_allowed
from .conftest import Result, new_namespace

GROUP = f"n1{uuid.uuid4().hex[:6]}.acme.ai"  # a group of its own: other tests' kinds stay apart
USER = "tenant-dana"
KARTA = yaml.safe_load(f"""
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {{name: {GROUP.replace(".", "-")}-finetunerun-v1}}
spec:
  structureDefinition:
    rootComponent:
      name: finetunerun
      kind: {{group: {GROUP}, version: v1, kind: FineTuneRun}}
      statusDefinition:
        phaseDefinition: {{path: .status.phase}}
        statusMappings: {{running: [{{byPhase: Running}}]}}
""")


@pytest.fixture(scope="module")
def tenant(cluster: KubeHTTP) -> Iterator[str]:
    """A namespace with FineTuneRun ``llama`` (Running), the FineTuneRun Karta in the cluster,
    and USER allowed to read FineTuneRuns there and nothing else; the Karta and the CRD are
    removed afterwards (other tests list the cluster's Kartas and types)."""
    namespace = new_namespace(cluster, "n1-tenant")
    cluster.ensure_crd(widget_crd(GROUP, "FineTuneRun"))  # no status subresource: created with it
    ok(cluster.post("/apis/run.ai/v1alpha1/kartas", KARTA))
    runs = f"/apis/{GROUP}/v1/namespaces/{namespace}/finetuneruns"
    run = {"apiVersion": f"{GROUP}/v1", "kind": "FineTuneRun", "metadata": {"name": "llama"}}
    ok(cluster.post(runs, {**run, "spec": {}, "status": {"phase": "Running"}}))
    rules = [{"apiGroups": [GROUP], "resources": ["finetuneruns"], "verbs": ["get", "list", "watch"]}]
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    meta = {"name": "finetunerun-reader"}
    ok(
        cluster.post(
            f"{rbac}/roles",
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta, "rules": rules},
        )
    )
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "tenant-reads-finetuneruns"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "finetunerun-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": USER}],
    }
    ok(cluster.post(f"{rbac}/rolebindings", binding))
    review = access_review(USER, verb="list", group=GROUP, resource="finetuneruns", namespace=namespace)
    wait_allowed(lambda body: ok(cluster.post(REVIEWS, body)), review)
    yield namespace
    ok(cluster.delete(f"/apis/run.ai/v1alpha1/kartas/{KARTA['metadata']['name']}"))
    ok(cluster.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/finetuneruns.{GROUP}"))
    ok(cluster.delete(f"/api/v1/namespaces/{namespace}"))


def _as_user(kli: Callable[..., Result], cluster: KubeHTTP, namespace: str, *args: str) -> Result:
    return kli(*args, "-n", namespace, "--kubeconfig", str(cluster.kubeconfig), "--as", USER)


def test_the_error_names_the_forbidden_list_as_the_cause(
    kli: Callable[..., Result], cluster: KubeHTTP, tenant: str
) -> None:
    for args in (("get", f"finetuneruns.{GROUP}"), ("describe", f"finetunerun.{GROUP}/llama")):
        r = _as_user(kli, cluster, tenant, *args)
        assert r.code == 4, r.err
        assert r.out == ""
        error, hint = r.err.splitlines()  # one message: no warning repeating the cause above it
        assert error == (
            f"error: no Karta definition covers FineTuneRun ({GROUP}/v1) among the built-in and your "
            "own definitions; the cluster's Karta definitions, where it is likely to be, could not "
            f'be listed (kartas.run.ai is forbidden: User "{USER}" cannot list resource "kartas" in '
            'API group "run.ai" at the cluster scope)'
        )
        assert hint == f"hint: {FORBIDDEN_HINT}"
    r = _as_user(kli, cluster, tenant, "describe", f"finetunerun.{GROUP}/llama", "-o", "json")
    assert r.code == 4
    envelope = json.loads(r.out)
    assert envelope["cause"].startswith("the cluster's Karta definitions could not be listed: kartas.run.ai")
    assert envelope["hint"] == FORBIDDEN_HINT


def test_with_a_local_definition_one_warning_says_why(
    kli: Callable[..., Result],
    cluster: KubeHTTP,
    tenant: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    local = tmp_path / "definitions"
    local.mkdir()
    (local / "finetunerun.yaml").write_text(yaml.safe_dump(KARTA))
    monkeypatch.setenv("KARTA_DEFINITIONS", str(local))
    r = _as_user(kli, cluster, tenant, "get", f"finetuneruns.{GROUP}")
    assert r.code == 0, r.err
    assert r.out.splitlines()[1].split()[:2] == ["llama", "Running"]
    (warning,) = r.err.splitlines()
    assert warning.startswith("warning: you are not allowed to list Karta definitions (kartas.run.ai)")
    assert "forbidden" in warning


def test_an_administrator_reads_the_clusters_definition(
    kli: Callable[..., Result], cluster: KubeHTTP, tenant: str
) -> None:
    r = kli("get", f"finetuneruns.{GROUP}", "-n", tenant, "--kubeconfig", str(cluster.kubeconfig))
    assert r.code == 0, r.err
    assert r.out.splitlines()[1].split()[:2] == ["llama", "Running"]
    assert r.err == ""
