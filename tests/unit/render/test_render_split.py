"""Every backend renders one group per gang of a split ``podGroup`` (extension E1,
docs/format-extensions.md): the corpus LeaderWorkerSet (3 groups of 4) through a copy of the
catalog definition with ``split`` by replica, and the corpus JobSet InOrder through a copy of the
JobSet definition with ``split`` by instance; pods are bound to their own gang's object."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import CATALOG_DATA_DIR
from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.model.types import Karta
from karta.render import render
from karta.render.backends import KaiOptions

CORPUS = Path("../shared/corpus/workloads")
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


def _definition(slug: str, split: dict[str, Any]) -> Any:
    data = yaml.safe_load((CATALOG_DATA_DIR / f"{slug}.yaml").read_text())
    data["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"]["split"] = split
    return Karta.model_validate(data)


def _factory(definition: Any, manifest: str) -> ComponentFactory:
    obj = yaml.safe_load((CORPUS / manifest).read_text())
    obj = copy.deepcopy(obj)
    obj["metadata"].update(namespace="ns", uid="0f0e0d0c-0000-4000-8000-000000000022")
    return ComponentFactory(definition, obj, evaluator=Evaluator(trusted=True))


LWS = ("leaderworkerset-x-k8s-io-leaderworkerset-v1", {"componentName": "group", "by": "replica"})


def _lws_pod(group: int, worker: int) -> dict[str, Any]:
    labels = {
        "leaderworkerset.sigs.k8s.io/group-index": str(group),
        "leaderworkerset.sigs.k8s.io/worker-index": str(worker),
    }
    return {"metadata": {"name": f"lws-{group}-{worker}", "namespace": "ns", "labels": labels}, "spec": {}}


@pytest.mark.parametrize("backend", ["volcano", "coscheduling"])
def test_lws_pod_groups_per_group(backend: str) -> None:
    factory = _factory(_definition(*LWS), "lws/lws-sample.yaml")
    pods = [_lws_pod(1, 2)]
    result = render(backend, factory, pods=pods)
    assert [(o["metadata"]["name"], o["spec"]["minMember"]) for o in result.objects] == [
        (f"leaderworkerset-sample-leaderworkerset-{i}", 4) for i in range(3)
    ]
    (patch,) = result.pod_patches
    assert "leaderworkerset-sample-leaderworkerset-1" in str(patch.patch)


def test_lws_kai_one_pod_group_per_group() -> None:
    factory = _factory(_definition(*LWS), "lws/lws-sample.yaml")
    uid = "0f0e0d0c-0000-4000-8000-000000000022"
    preview = render("kai", factory, pods=[_lws_pod(2, 0)])
    assert [(o["metadata"]["name"], o["spec"]["minMember"]) for o in preview.objects] == [
        (f"pg-{uid}-leaderworkerset-{i}", 4) for i in range(3)
    ]
    assert preview.pod_patches[0].patch["metadata"]["annotations"] == {
        "pod-group-name": f"pg-{uid}-leaderworkerset-2"
    }
    assert any("KAI's own Karta reader ignores it" in w for w in preview.warnings)
    managed = render("kai", factory, options=KaiOptions(kai_managed=True))
    assert not any("ignores it" in w for w in managed.warnings)


def test_lws_workload_api_one_template_one_pod_group_per_group() -> None:
    factory = _factory(_definition(*LWS), "lws/lws-sample.yaml")
    result = render("workload-api", factory, pods=[_lws_pod(0, 3)])
    workload, *groups = result.objects
    assert workload["spec"]["podGroupTemplates"] == [
        {"name": "leaderworkerset-group", "schedulingPolicy": {"gang": {"minCount": 4}}}
    ]
    assert [
        (g["metadata"]["name"], g["spec"]["workloadRef"]["templateName"], g["spec"]["schedulingPolicy"])
        for g in groups
    ] == [
        (f"leaderworkerset-sample-leaderworkerset-{i}", "leaderworkerset-group", {"gang": {"minCount": 4}})
        for i in range(3)
    ]
    assert result.pod_patches[0].patch["spec"] == {
        "schedulingGroup": {"podGroupName": "leaderworkerset-sample-leaderworkerset-0"}
    }


def test_lws_kueue_says_what_it_cannot_express() -> None:
    factory = _factory(_definition(*LWS), "lws/lws-sample.yaml")
    result = render("kueue", factory)
    (workload,) = result.objects
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [("leader", 3), ("worker", 9)]
    assert any("Kueue admits a Workload as one unit: the 3 gangs" in w for w in result.warnings)


def test_jobset_in_order_one_gang_per_replicated_job() -> None:
    definition = _definition(
        "jobset-x-k8s-io-jobset-v1alpha2", {"componentName": "replicatedjob", "by": "instance"}
    )
    factory = _factory(definition, "jobset/startup-driver-ready.yaml")
    driver = {
        "metadata": {
            "name": "driver-0",
            "namespace": "ns",
            "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "driver"},
        },
        "spec": {},
    }
    result = render("volcano", factory, pods=[driver])
    assert [(o["metadata"]["name"], o["spec"]["minMember"]) for o in result.objects] == [
        ("startup-driver-ready-jobset-driver", 1),
        ("startup-driver-ready-jobset-workers", 4),
    ]
    assert result.pod_patches[0].patch["metadata"]["annotations"] == {
        "scheduling.k8s.io/group-name": "startup-driver-ready-jobset-driver"
    }
