"""Hostile cluster content against the real API server (issue 9): control characters in a cluster
Karta's component names and in a workload's pods (reasons, phases) through ``kli get``,
``kli describe`` and ``kli definitions`` (escaped, never written raw); a cluster Karta whose
component chain is 500 deep is the validation finding for every command that would evaluate it,
never a RecursionError."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..kubehttp import KubeHTTP
from .conftest import _wait_served, ensure_karta_crd, make_pod

GROUP = "hardening.karta.test"
KARTAS = "/apis/run.ai/v1alpha1/kartas"
OSC52 = "\x1b]52;c;SGVsbG8=\x07"
CSI = "\x1b[2J"
C1 = "\x9b31m"
RAW = ("\x1b", "\x07", "\x9b")


def assert_safe(*texts: str) -> None:
    for text in texts:
        for raw in RAW:
            assert raw not in text, (raw, text[:500])


def _crd(kind: str) -> dict[str, Any]:
    plural = kind.lower() + "s"
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


STATUS = {
    "phaseDefinition": {"path": ".status.phase"},
    "statusMappings": {"running": [{"byPhase": "Running"}]},
}


def _evil_karta(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "hostile",
                    "kind": {"group": GROUP, "version": "v1", "kind": "Hostile"},
                    "statusDefinition": STATUS,
                },
                "childComponents": [
                    {
                        "name": "work" + OSC52,
                        "ownerRef": "hostile",
                        "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                        "scaleDefinition": {"replicasPath": ".spec.replicas"},
                    }
                ],
            }
        },
    }


def _chain_karta(name: str, depth: int) -> dict[str, Any]:
    children = [{"name": f"c{i}", "ownerRef": f"c{i - 1}" if i > 1 else "root"} for i in range(1, depth + 1)]
    children[-1].update(
        kind={"group": "", "version": "v1", "kind": "Pod"},
        specDefinition={"podTemplateSpecPath": ".spec.template"},
    )
    root = {
        "name": "root",
        "kind": {"group": GROUP, "version": "v1", "kind": "Chain"},
        "statusDefinition": STATUS,
    }
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {"rootComponent": root, "childComponents": children},
            "optimizationInstructions": {
                "gangScheduling": {"podGroup": {"name": "g", "subGroups": [{"componentName": f"c{depth}"}]}}
            },
        },
    }


TEMPLATE = {
    "spec": {
        "containers": [{"name": "main", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": 1}}}]
    }
}


@pytest.fixture(scope="module")
def hostile(cluster: KubeHTTP) -> Iterator[dict[str, str]]:
    ensure_karta_crd(cluster)
    for kind in ("Hostile", "Chain"):
        cluster.ensure_crd(_crd(kind))
        _wait_served(cluster, f"/apis/{GROUP}/v1/{kind.lower()}s")
    tag = uuid.uuid4().hex[:6]
    ns = f"karta-hostile-{tag}"
    assert (
        cluster.post(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        ).status
        == 201
    )
    names = {"evil": f"evil-{tag}", "chain": f"chain-{tag}", "ns": ns}
    for body in (_evil_karta(names["evil"]), _chain_karta(names["chain"], 500)):
        answer = cluster.post(KARTAS, body)
        assert answer.status == 201, answer.body
    objects = {}
    for kind in ("Hostile", "Chain"):
        body = {
            "apiVersion": f"{GROUP}/v1",
            "kind": kind,
            "metadata": {"name": "h1"},
            "spec": {"replicas": 1, "template": TEMPLATE},
        }
        answer = cluster.post(f"/apis/{GROUP}/v1/namespaces/{ns}/{kind.lower()}s", body)
        assert answer.status == 201, answer.body
        objects[kind] = answer.json()
        patched = cluster.request(
            "PATCH",
            f"/apis/{GROUP}/v1/namespaces/{ns}/{kind.lower()}s/h1/status",
            body={"status": {"phase": "Running", "message": "m" + CSI}},
            content_type="application/merge-patch+json",
        )
        assert patched.status == 200, patched.body
    unschedulable = {
        "phase": "Pending",
        "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "No" + OSC52 + C1, "message": "x" + CSI}
        ],
    }
    make_pod(
        cluster,
        ns,
        name="h1-work-0",
        owner=objects["Hostile"],
        labels={},
        template=TEMPLATE,
        node=None,
        status=unschedulable,
    )
    yield names
    for name in (names["evil"], names["chain"]):
        cluster.delete(f"{KARTAS}/{name}")
    cluster.delete(f"/api/v1/namespaces/{ns}")


def test_get_escapes_what_the_cluster_says(
    kli: Callable[..., Any], cluster: KubeHTTP, hostile: dict[str, str]
) -> None:
    r = kli("get", "hostiles", "-n", hostile["ns"], "--kubeconfig", str(cluster.kubeconfig))
    assert r.code == 0, r.err
    assert_safe(r.out, r.err)
    assert "work\\x1b]52;c;SGVsbG8=\\x07:1" in r.out
    r = kli("get", "hostiles", "-n", hostile["ns"], "-o", "json", "--kubeconfig", str(cluster.kubeconfig))
    (item,) = json.loads(r.out)["items"]
    assert item["components"] == [{"name": "work" + OSC52, "replicas": 1}]  # JSON stays exact


def test_describe_escapes_pod_reasons_and_component_names(
    kli: Callable[..., Any], cluster: KubeHTTP, hostile: dict[str, str]
) -> None:
    r = kli("describe", "hostile/h1", "-n", hostile["ns"], "--kubeconfig", str(cluster.kubeconfig))
    assert r.code == 0, r.err
    assert_safe(r.out, r.err)
    assert "`-- work\\x1b]52;c;SGVsbG8=\\x07" in r.out
    assert "Pending (No\\x1b]52;c;SGVsbG8=\\x07\\x9b31m)" in r.out


def test_definitions_escapes_cluster_component_names(
    kli: Callable[..., Any], cluster: KubeHTTP, hostile: dict[str, str]
) -> None:
    r = kli(
        "definitions", "--group", GROUP, "--component-limit", "0", "--kubeconfig", str(cluster.kubeconfig)
    )
    assert r.code == 0, r.err
    assert_safe(r.out, r.err)
    assert "hostile, work\\x1b]52;c;SGVsbG8=\\x07" in r.out


def test_a_500_deep_cluster_karta_is_the_validation_finding(
    kli: Callable[..., Any], cluster: KubeHTTP, hostile: dict[str, str]
) -> None:
    kubeconfig = str(cluster.kubeconfig)
    finding = "'c33' is 33 owner levels below the root"
    r = kli("describe", "chain/h1", "-n", hostile["ns"], "--kubeconfig", kubeconfig)
    assert r.code == 1 and finding in r.err and "internal error" not in r.err, r.err
    r = kli("gang", "chain/h1", "-n", hostile["ns"], "--backend", "volcano", "--kubeconfig", kubeconfig)
    assert r.code == 1 and finding in r.err and "internal error" not in r.err, r.err
    r = kli("get", "chains", "-n", hostile["ns"], "--kubeconfig", kubeconfig)
    # the only definition of the kind is invalid, so it is never used (issue 12): exit 1, named
    assert r.code == 1 and "internal error" not in r.err, r.err
    assert "no valid Karta definition covers Chain" in r.err and "501 components" in r.err, r.err
    r = kli("definitions", hostile["chain"], "-o", "json", "--kubeconfig", kubeconfig)
    assert r.code == 0 and len(json.loads(r.out)["spec"]["structureDefinition"]["childComponents"]) == 500
