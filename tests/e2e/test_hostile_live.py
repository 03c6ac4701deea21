"""Hostile cluster Kartas and hostile workloads on the real API server, through the live ``kli``
commands (get, get --all-types, describe, gang), in the hostile harness's child under a memory
limit with a canary in its environment (issue 9): every run ends cleanly, within its time limit,
and leaks nothing. The Kartas are removed afterwards so that other tests see the catalog alone."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator

import pytest

from tests.hostile import bombs
from tests.hostile.harness import CANARY_NAME, Case, assert_all_fine, run_cases

from .cli.conftest import _wait_served, ensure_karta_crd
from .kubehttp import KubeHTTP

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"bombs.{bombs.GROUP}"},
    "spec": {
        "group": bombs.GROUP,
        "scope": "Namespaced",
        "names": {"kind": "Bomb", "plural": "bombs", "singular": "bomb", "listKind": "BombList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}
MATCHERS = [
    "until(false; .) | true",
    "[" + " | ".join(f".spec.a[] as ${c}" for c in "abcdefgh") + " | 1] | length > 0",
    ".spec.s | " + " | ".join([". + ."] * 40) + " | length > 0",
    f'($ENV.{CANARY_NAME} // "none") | length > 0',
]


@pytest.fixture
def hostile_cluster(cluster: KubeHTTP, namespace: str) -> Iterator[str]:
    ensure_karta_crd(cluster)
    cluster.ensure_crd(copy.deepcopy(CRD))
    _wait_served(cluster, f"/apis/{bombs.GROUP}/v1")
    name = f"bomb-{uuid.uuid4().hex[:6]}"
    template = (
        f'{{metadata: {{labels: {{leak: ($ENV.{CANARY_NAME} // "none")}}}}, spec: .spec.template.spec}}'
    )
    karta = bombs.definition(name, matchers=MATCHERS, template=template)
    created = cluster.post("/apis/run.ai/v1alpha1/kartas", karta)
    assert created.status == 201, created.body
    base = f"/apis/{bombs.GROUP}/v1/namespaces/{namespace}/bombs"
    for index, (_, text) in enumerate(bombs.hostile_objects()):
        answer = cluster.post_text(base, _renamed(text, f"b{index}", namespace))
        assert answer.status in (201, 400, 422), answer.body  # the API server may refuse some itself
    try:
        yield namespace
    finally:
        cluster.delete(f"/apis/run.ai/v1alpha1/kartas/{name}")
        cluster.delete(base)


def _renamed(text: str, name: str, namespace: str) -> str:
    """The object's JSON text with its metadata replaced (the text may not load in Python)."""
    start = text.index('"metadata": ')
    end = text.index("}", start) + 1
    return text[:start] + json.dumps({"metadata": {"name": name, "namespace": namespace}})[1:-1] + text[end:]


def test_live_commands_survive_hostile_kartas_and_objects(cluster: KubeHTTP, hostile_cluster: str) -> None:
    env = {"KUBECONFIG": str(cluster.kubeconfig)}
    ns = ["-n", hostile_cluster]
    argvs = {
        "get": ["get", "bombs", *ns],
        "get-json": ["get", "bombs", *ns, "-o", "json"],
        "get-all": ["get", "--all-types", "-A"],
        "describe": ["describe", "bomb/b0", *ns],
        "gang": ["gang", "bomb/b0", "--backend", "volcano", *ns],
        "definitions": ["definitions"],
    }
    cases = [Case(f"live/{key}", argv, env=env, seconds=60.0) for key, argv in argvs.items()]
    assert_all_fine(run_cases(cases))
