"""Gang plans and trees on real manifests of the shared corpus (read in place)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from gang_builders import POD_KIND, component, karta, make_factory, pod, pts, selector

from karta.extract import build_tree
from karta.gang import compute_gang_plan, flat_min

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "workloads"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")

REPLICA_TYPE = '.metadata.labels["training.kubeflow.org/replica-type"]'
GROUP_INDEX = '.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]'
WORKER_INDEX = '.metadata.labels["leaderworkerset.sigs.k8s.io/worker-index"]'


def load(relative: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((CORPUS / relative).read_text())
    return data


def test_elastic_pytorchjob_gang_follows_the_elastic_minimum() -> None:
    k = karta(
        component("pytorchjob"),
        component(
            "worker",
            "pytorchjob",
            kind=POD_KIND,
            specDefinition=pts(".spec.pytorchReplicaSpecs.Worker.template"),
            scaleDefinition={
                "replicasPath": ".spec.pytorchReplicaSpecs.Worker.replicas // 1",
                "minReplicasPath": ".spec.elasticPolicy.minReplicas",
                "maxReplicasPath": ".spec.elasticPolicy.maxReplicas",
            },
            podSelector=selector(REPLICA_TYPE, "worker"),
        ),
        gang={"podGroup": {"name": "job", "subGroups": [{"componentName": "worker"}]}},
    )
    obj = load("kubeflow-training-v1/pytorchjob-elastic-imagenet.yaml")
    pods = [pod(f"w-{i}", {"training.kubeflow.org/replica-type": "worker"}) for i in range(2)]
    (gang,) = compute_gang_plan(make_factory(k, obj), pods).gangs
    (worker,) = gang.sub_groups
    assert (worker.min_member, worker.desired, worker.members) == (1, 2, ("w-0", "w-1"))
    assert flat_min(gang) == 1


def test_lws_sample_tree_and_per_group_gangs() -> None:
    k = karta(
        component("lws"),
        component(
            "group",
            "lws",
            scaleDefinition={"replicasPath": ".spec.replicas // 1"},
            podSelector={"replicaSelector": {"keyPath": GROUP_INDEX}},
        ),
        component(
            "leader",
            "group",
            kind=POD_KIND,
            specDefinition=pts(
                ".spec.leaderWorkerTemplate.leaderTemplate // .spec.leaderWorkerTemplate.workerTemplate"
            ),
            podSelector=selector(WORKER_INDEX, "0"),
        ),
        component(
            "worker",
            "group",
            kind=POD_KIND,
            specDefinition=pts(".spec.leaderWorkerTemplate.workerTemplate"),
            scaleDefinition={"replicasPath": ".spec.leaderWorkerTemplate.size - 1"},
            podSelector={"componentTypeSelector": {"keyPath": f'{WORKER_INDEX} | select(. != "0")'}},
        ),
        gang={
            "podGroups": [
                {
                    "name": "group",
                    "members": [
                        {
                            "componentName": "leader",
                            "groupByKeyPaths": [GROUP_INDEX],
                        },
                        {"componentName": "worker", "groupByKeyPaths": [GROUP_INDEX]},
                    ],
                }
            ]
        },
    )
    obj = load("lws/lws-sample.yaml")
    pods = [
        pod(
            f"{obj['metadata']['name']}-{g}-{w}",
            {
                "leaderworkerset.sigs.k8s.io/group-index": str(g),
                "leaderworkerset.sigs.k8s.io/worker-index": str(w),
            },
        )
        for g in range(3)
        for w in range(4)
    ]
    factory = make_factory(k, obj)
    t = build_tree(factory, pods)
    (group,) = t.children
    assert [i.name for i in group.instances] == ["group[0]", "group[1]", "group[2]"]
    for instance in group.instances:
        leader, worker = instance.children
        assert len(leader.pods) == 1 and len(worker.pods) == 3
    assert t.unattributed == ()
    plan = compute_gang_plan(factory, pods)
    assert [(g.alpha_keys, len(g.members)) for g in plan.gangs] == [(("0",), 4), (("1",), 4), (("2",), 4)]
