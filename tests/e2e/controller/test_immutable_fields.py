"""Every entry of the gang backends' immutable-field tables, asked of the real 1.37.2 API server.

The Workload API (``scheduling.k8s.io``: v1beta1 Workload and PodGroup, v1alpha3 CompositePodGroup
with the CompositePodGroup and TopologyAwareWorkloadScheduling gates on): each case of
:mod:`tests.immutable_cases` is written by server-side apply as the gang reconciler writes it
(field manager ``karta``, force), then updated to its desired object. The updates the table
reports must be refused with HTTP 422 (and the writer's fallback must read that answer as an
immutable change), the others accepted and held. KAI, Volcano and coscheduling, whose schedulers
are not built here, are asked through their corpus CRDs: every minimum a scale change touches is
accepted in place (their CRDs carry no CEL rule; their webhooks are not run, see
docs/controller/gang-reconciler.md for what their sources refuse).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.controller.runtime.group_writer import _immutable_error, immutable_differences, lowered_minimums
from karta.errors import ApiError
from tests.immutable_cases import ACCEPTED, REFUSED

from ..conftest import local_cluster
from ..kubehttp import KubeHTTP, Response, ok
from .gangs_support import covers, install_crds

pytestmark = pytest.mark.slow

GATES = {"TopologyAwareWorkloadScheduling": True, "CompositePodGroup": True}
RUNTIME = ("scheduling.k8s.io/v1beta1=true", "scheduling.k8s.io/v1alpha3=true")
PLURALS = {"Workload": "workloads", "PodGroup": "podgroups", "CompositePodGroup": "compositepodgroups"}
CRD_FILES = (
    "scheduling.run.ai_podgroups.yaml",
    "scheduling.volcano.sh_podgroups.yaml",
    "scheduling.x-k8s.io_podgroups.yaml",
)


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Iterator[KubeHTTP]:
    for kube in local_cluster(
        tmp_path_factory, controllers=False, runtime_config=RUNTIME, feature_gates=GATES
    ):
        install_crds(kube, corpus, CRD_FILES)
        yield kube


@pytest.fixture(scope="module")
def ns(gated: KubeHTTP) -> str:
    name = f"karta-immutable-{uuid.uuid4().hex[:6]}"
    ok(
        gated.post(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )
    )
    return name


def _apply(kube: KubeHTTP, obj: dict[str, Any], ns: str) -> Response:
    group_version, kind = obj["apiVersion"], obj["kind"]
    plural = PLURALS.get(kind, "podgroups")
    name = obj["metadata"]["name"]
    return kube.request(
        "PATCH",
        f"/apis/{group_version}/namespaces/{ns}/{plural}/{name}",
        body={**obj, "metadata": {**obj["metadata"], "namespace": ns}},
        params={"fieldManager": "karta", "force": "true"},
        content_type="application/apply-patch+yaml",
    )


def _named(obj: dict[str, Any], suffix: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["name"] = f"{out['metadata']['name']}-{suffix}"
    return out


def _suffix(case: str) -> str:
    return uuid.uuid5(uuid.NAMESPACE_URL, case).hex[:8]


@pytest.mark.parametrize("case", REFUSED)
def test_the_tables_immutable_fields_are_refused(gated: KubeHTTP, ns: str, case: str) -> None:
    live, desired, fields = REFUSED[case]
    created = _apply(gated, _named(live, _suffix(case)), ns)
    assert created.status in (200, 201), created.body
    answer = _apply(gated, _named(desired, _suffix(case)), ns)
    assert answer.status == 422, f"{case}: the API server accepted it: {answer.body}"
    message = str(answer.json().get("message"))
    # Our table, against the object as the server holds it (with its defaults), names the field the
    # server names, and the writer's fallback reads the answer as an immutable change.
    assert immutable_differences(created.json(), desired) == fields
    assert all(field.split("[")[0] in message for field in fields), message
    assert _immutable_error(ApiError(message, status=422, reason="Invalid"))


@pytest.mark.parametrize("case", ACCEPTED)
def test_every_other_change_is_made_in_place(gated: KubeHTTP, ns: str, case: str) -> None:
    live, desired = ACCEPTED[case]
    created = _apply(gated, _named(live, _suffix(case)), ns)
    assert created.status in (200, 201), created.body
    answer = _apply(gated, _named(desired, _suffix(case)), ns)
    assert answer.status == 200, f"{case}: refused: {answer.body}"
    assert covers(answer.json()["spec"], desired["spec"])
    assert immutable_differences(created.json(), desired) == []


def _crd_pod_group(api_version: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def _sub(name: str, min_member: int) -> dict[str, Any]:
    return {"name": name, "minMember": min_member}


# What a scale change of 4 -> 8 workers (1 master) changes in each CRD backend's PodGroup.
CRD_SCALES = {
    "kai": (
        "scheduling.run.ai/v2alpha2",
        {
            "minMember": 5,
            "queue": "q",
            "subGroups": [{"name": "master", "minMember": 1}, {"name": "worker", "minMember": 4}],
        },
        {
            "minMember": 9,
            "queue": "q",
            "subGroups": [{"name": "master", "minMember": 1}, {"name": "worker", "minMember": 8}],
        },
    ),
    "volcano": (
        "scheduling.volcano.sh/v1beta1",
        {"minMember": 5, "minTaskMember": {"master": 1, "worker": 4}},
        {"minMember": 9, "minTaskMember": {"master": 1, "worker": 8}},
    ),
    "coscheduling": ("scheduling.x-k8s.io/v1alpha1", {"minMember": 5}, {"minMember": 9}),
}


@pytest.mark.parametrize("backend", CRD_SCALES)
def test_crd_backends_take_a_scale_change_in_place(gated: KubeHTTP, ns: str, backend: str) -> None:
    api_version, before, after = CRD_SCALES[backend]
    name = f"scale-{backend}"
    ok(_apply(gated, _crd_pod_group(api_version, name, before), ns))
    up = _apply(gated, _crd_pod_group(api_version, name, after), ns)
    assert up.status == 200, up.body
    assert covers(up.json()["spec"], after)
    # Back down: accepted too (only pod admission never lowers a minimum: lowered_minimums).
    down = _apply(gated, _crd_pod_group(api_version, name, before), ns)
    assert down.status == 200, down.body
    assert immutable_differences(up.json(), _crd_pod_group(api_version, name, before)) == []
    assert lowered_minimums(up.json(), _crd_pod_group(api_version, name, before))
