"""The workload tree: docs/spec/format.md#workload-tree, C11 (20.12), R7 replica split, R16 unattributed
pods."""

from __future__ import annotations

from typing import Any

import pytest

from karta.errors import ValidationError
from karta.extract import ComponentFactory
from karta.extract.tree import WorkloadTree, build_tree
from karta.jq import Evaluator
from karta.model.types import Karta

EVALUATOR = Evaluator(trusted=True)
STATUS = {
    "phaseDefinition": {"path": ".status.phase"},
    "statusMappings": {"running": [{"byPhase": "Running"}]},
}
POD_KIND = {"group": "", "version": "v1", "kind": "Pod"}
GROUP_INDEX = '.metadata.labels["lws/group-index"]'


def karta(root: dict[str, Any], *children: dict[str, Any]) -> Karta:
    root = {
        "kind": {"group": "example.org", "version": "v1", "kind": "Thing"},
        "statusDefinition": STATUS,
        **root,
    }
    spec = {"structureDefinition": {"rootComponent": root, "childComponents": list(children)}}
    return Karta.model_validate({"metadata": {"name": "t"}, "spec": spec})


def tree(k: Karta, obj: dict[str, Any], pods: list[dict[str, Any]] | None = None) -> WorkloadTree:
    return build_tree(ComponentFactory(k, obj, evaluator=EVALUATOR), pods)


def pod(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


def role(value: str) -> dict[str, Any]:
    return {"componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": value}}


LWS = karta(
    {"name": "lws"},
    {
        "name": "group",
        "ownerRef": "lws",
        "scaleDefinition": {"replicasPath": ".spec.replicas // 1"},
        "podSelector": {"replicaSelector": {"keyPath": GROUP_INDEX}},
    },
    {
        "name": "leader",
        "ownerRef": "group",
        "kind": POD_KIND,
        "specDefinition": {"podTemplateSpecPath": ".spec.leaderTemplate"},
        "podSelector": role("leader"),
    },
    {
        "name": "worker",
        "ownerRef": "group",
        "kind": POD_KIND,
        "specDefinition": {"podTemplateSpecPath": ".spec.workerTemplate"},
        "scaleDefinition": {"replicasPath": ".spec.size - 1"},
        "podSelector": role("worker"),
    },
)
LWS_OBJ = {
    "spec": {"replicas": 2, "size": 3, "leaderTemplate": {"spec": {}}, "workerTemplate": {"spec": {}}},
    "status": {"phase": "Running"},
}


def lws_pods() -> list[dict[str, Any]]:
    pods = []
    for group in ("0", "1"):
        pods.append(pod(f"l-{group}", role="leader", **{"lws/group-index": group}))
        pods += [pod(f"w-{group}-{i}", role="worker", **{"lws/group-index": group}) for i in (1, 2)]
    return pods


def test_c11_replica_selector_without_pods_is_one_instance() -> None:
    t = tree(LWS, LWS_OBJ)
    (group,) = t.children
    (instance,) = group.instances
    assert instance.instance_key is None and instance.replica_key is None
    assert instance.scale is not None and instance.scale.replicas == 2
    assert [c.name for c in instance.children] == ["leader", "worker"]
    assert t.unattributed is None
    data = t.to_dict()
    assert data["status"] == {"phases": ["Running"], "primary": "Running"}
    assert "instanceKey" not in data["children"][0]["instances"][0]
    assert "replicaKey" not in data["children"][0]["instances"][0]


def test_c11_r7_replica_split_scopes_descendants() -> None:
    t = tree(LWS, LWS_OBJ, lws_pods())
    (group,) = t.children
    assert [i.name for i in group.instances] == ["group[0]", "group[1]"]
    for instance, key in zip(group.instances, ("0", "1"), strict=True):
        assert instance.replica_key == key and instance.instance_key is None
        assert instance.scale is not None and instance.scale.replicas == 2
        leader, worker = instance.children
        assert [p["metadata"]["name"] for p in leader.pods] == [f"l-{key}"]
        assert [p["metadata"]["name"] for p in worker.pods] == [f"w-{key}-1", f"w-{key}-2"]
        assert worker.instances[0].scale is not None and worker.instances[0].scale.replicas == 2
    assert t.unattributed == ()
    data = t.to_dict()
    assert data["children"][0]["instances"][1]["children"][1]["instances"][0]["pods"] == ["w-1-1", "w-1-2"]
    assert data["unattributed"] == []


def test_replica_keys_sort_naturally() -> None:
    pods = [pod(f"w-{g}", role="worker", **{"lws/group-index": g}) for g in ("10", "2", "0")]
    (group,) = tree(LWS, LWS_OBJ, pods).children
    assert [i.replica_key for i in group.instances] == ["0", "2", "10"]


def test_c11_bare_job_root() -> None:
    job = karta(
        {
            "name": "job",
            "kind": {"group": "batch", "version": "v1", "kind": "Job"},
            "specDefinition": {"podTemplateSpecPath": ".spec.template"},
            "scaleDefinition": {"replicasPath": ".spec.parallelism // 1"},
        }
    )
    obj = {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}, "status": {"phase": "Running"}}
    t = tree(job, obj, [pod("job-abc"), pod("job-def")])
    assert t.children == ()
    assert t.status is not None and [str(s) for s in t.status.matched] == ["Running"]
    assert t.root is not None and t.root.has_pod_definition
    assert [p["metadata"]["name"] for p in t.root.pods] == ["job-abc", "job-def"]
    assert t.components == (t.root,)
    assert t.unattributed == ()
    assert tree(job, obj).to_dict()["children"] == []


MASTER_WORKER = karta(
    {"name": "job"},
    {
        "name": "master",
        "ownerRef": "job",
        "kind": POD_KIND,
        "specDefinition": {"podTemplateSpecPath": ".spec.master"},
        "scaleDefinition": {"replicasPath": '"1"'},
        "podSelector": role("master"),
    },
    {
        "name": "worker",
        "ownerRef": "job",
        "kind": POD_KIND,
        "specDefinition": {"podTemplateSpecPath": ".spec.worker"},
        "scaleDefinition": {"replicasPath": '"4"', "minReplicasPath": '"1"', "maxReplicasPath": '"5"'},
        "podSelector": role("worker"),
    },
)


def test_c11_master_worker_scale() -> None:
    t = tree(MASTER_WORKER, {"spec": {"master": {}, "worker": {}}})
    assert [c.name for c in t.children] == ["master", "worker"]
    scale = t.children[1].instances[0].scale
    assert scale is not None and (scale.min_replicas, scale.max_replicas) == (1, 5)
    assert t.root is None
    data = t.to_dict()
    assert data["children"][1]["kind"] == POD_KIND
    assert data["children"][1]["hasPodDefinition"] is True
    assert data["children"][1]["instances"][0]["extracted"]["scale"]["maxReplicas"] == 5


def test_c11_root_without_kind_is_invalid() -> None:
    bad = Karta.model_validate(
        {"spec": {"structureDefinition": {"rootComponent": {"name": "r", "statusDefinition": STATUS}}}}
    )
    with pytest.raises(ValidationError, match="invalid karta"):
        tree(bad, {})


def test_r16_unattributed_pods() -> None:
    pods = [pod("m", role="master"), pod("w", role="worker"), pod("x", role="sidecar")]
    t = tree(MASTER_WORKER, {"spec": {"master": {}, "worker": {}}}, pods)
    assert [[p["metadata"]["name"] for p in c.pods] for c in t.children] == [["m"], ["w"]]
    assert t.unattributed is not None and [p["metadata"]["name"] for p in t.unattributed] == ["x"]
    assert t.to_dict()["unattributed"] == ["x"]


def test_selectorless_component_takes_all_pods_only_when_sole_pod_bearing() -> None:
    sole = karta(
        {"name": "r"},
        {"name": "only", "ownerRef": "r", "specDefinition": {"podSpecPath": ".spec.pod"}},
    )
    t = tree(sole, {"spec": {"pod": {}}}, [pod("a"), pod("b")])
    assert len(t.children[0].pods) == 2 and t.unattributed == ()
    two = karta(
        {"name": "r"},
        {"name": "first", "ownerRef": "r", "specDefinition": {"podSpecPath": ".spec.a"}},
        {
            "name": "second",
            "ownerRef": "r",
            "specDefinition": {"podSpecPath": ".spec.b"},
            "podSelector": role("b"),
        },
    )
    t = tree(two, {"spec": {"a": {}, "b": {}}}, [pod("a"), pod("b", role="b")])
    assert t.children[0].pods == ()
    assert [p["metadata"]["name"] for p in t.children[1].pods] == ["b"]
    assert t.unattributed is not None and [p["metadata"]["name"] for p in t.unattributed] == ["a"]


JOBS = karta(
    {"name": "jobset"},
    {
        "name": "job",
        "ownerRef": "jobset",
        "specDefinition": {"podTemplateSpecPath": ".spec.jobs[].template"},
        "instanceIdPath": ".spec.jobs[].name",
        "scaleDefinition": {"replicasPath": ".spec.jobs[].replicas"},
        "podSelector": {
            "componentTypeSelector": {"keyPath": ".metadata.labels.job"},
            "componentInstanceSelector": {"idPath": ".metadata.labels.job"},
        },
    },
)
JOBS_OBJ = {
    "spec": {"jobs": [{"name": "worker", "replicas": 3, "template": {}}, {"name": "driver", "replicas": 1}]}
}


def test_multi_instance_sorted_and_narrowed() -> None:
    pods = [pod("d", job="driver"), pod("w1", job="worker"), pod("w2", job="worker"), pod("g", job="ghost")]
    t = tree(JOBS, JOBS_OBJ, pods)
    (job,) = t.children
    assert [i.instance_key for i in job.instances] == ["driver", "worker"]
    assert [[p["metadata"]["name"] for p in i.pods] for i in job.instances] == [["d"], ["w1", "w2"]]
    assert [i.scale.replicas if i.scale else None for i in job.instances] == [1, 3]
    assert t.unattributed is not None and [p["metadata"]["name"] for p in t.unattributed] == ["g"]
    assert any('could not match instance id "ghost"' in d.message for d in t.diagnostics)
    data = t.to_dict()
    assert data["children"][0]["instances"][0]["instanceKey"] == "driver"
    assert data["children"][0]["instances"][0]["name"] == "driver"
    assert data["diagnostics"]


def test_offline_every_instance_gets_the_subtree() -> None:
    k = karta(
        {"name": "root"},
        {
            "name": "svc",
            "ownerRef": "root",
            "instanceIdPath": ".spec.svcs | keys[]",
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.labels.svc"}},
        },
        {
            "name": "pods",
            "ownerRef": "svc",
            "specDefinition": {"podTemplateSpecPath": ".spec.template"},
            "podSelector": role("pod"),
        },
    )
    t = tree(k, {"spec": {"svcs": {"b": {}, "a": {}}, "template": {}}})
    (svc,) = t.children
    assert [i.instance_key for i in svc.instances] == ["a", "b"]
    assert all([c.name for c in i.children] == ["pods"] for i in svc.instances)
    with_pods = tree(
        k, {"spec": {"svcs": {"b": {}, "a": {}}, "template": {}}}, [pod("p", role="pod", svc="b")]
    )
    a, b = with_pods.children[0].instances
    assert a.children[0].pods == () and len(b.children[0].pods) == 1


def test_pruned_drops_empty_groupings() -> None:
    k = karta(
        {"name": "deploy", "specDefinition": {"podTemplateSpecPath": ".spec.template"}},
        {
            "name": "replicaset",
            "ownerRef": "deploy",
            "kind": {"group": "apps", "version": "v1", "kind": "ReplicaSet"},
        },
    )
    t = tree(k, {"spec": {"template": {}}})
    assert [c.name for c in t.children] == ["replicaset"]
    assert t.pruned().children == ()
    assert t.pruned().root == t.root


def test_selector_errors_become_diagnostics() -> None:
    k = karta(
        {"name": "r"},
        {"name": "a", "ownerRef": "r", "specDefinition": {"podSpecPath": ".a"}, "podSelector": role("a")},
        {
            "name": "b",
            "ownerRef": "r",
            "specDefinition": {"podSpecPath": ".b"},
            "podSelector": {"componentTypeSelector": {"keyPath": ".metadata.labels | error"}},
        },
    )
    t = tree(k, {"a": {}, "b": {}}, [pod("p", role="a")])
    assert [p["metadata"]["name"] for p in t.children[0].pods] == ["p"]
    assert t.unattributed == ()
    assert (
        len(t.diagnostics) == 1 and "failed to evaluate component type selector" in t.diagnostics[0].message
    )
