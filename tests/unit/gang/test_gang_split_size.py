"""Karta extension E1, ``split.replicaSizePath`` (docs/format-extensions.md E1.3 item 11): one gang
per replica of a component that counts pods (replicas x hosts), the instances of replica size 1 in
the gang of the rest; the conformance rows of E1.4, pod assignment, the missing-label diagnostic,
validation and the compatibility rule."""

from __future__ import annotations

from typing import Any

import pytest
from gang_builders import karta, make_factory, pod, pts, selector

from karta.errors import GangError
from karta.gang import compute_gang_plan
from karta.model import validate_karta

GROUP = '.metadata.labels["group"]'
INDEX = '.metadata.labels["replica-index"]'
SIZE = ".spec.groups[] | .hosts // 1"


def cluster(split: dict[str, Any] | None = None, *, sub_groups: list[dict[str, Any]] | None = None) -> Any:
    """A Ray-shaped workload: a head, and worker groups whose pods are replicas x hosts."""
    extra = {"split": split, "subGroups": sub_groups}
    pod_group = {"name": "rc", **{k: v for k, v in extra.items() if v is not None}}
    return karta(
        {"name": "root"},
        {
            "name": "head",
            "ownerRef": "root",
            "specDefinition": pts(".spec.head"),
            "scaleDefinition": {"replicasPath": "1"},
            "podSelector": selector('.metadata.labels["type"]', "head"),
        },
        {
            "name": "worker",
            "ownerRef": "root",
            "specDefinition": pts(".spec.groups[].template"),
            "scaleDefinition": {
                "replicasPath": ".spec.groups[] | .replicas * (.hosts // 1)",
                "minReplicasPath": ".spec.groups[] | (.minReplicas // 0) * (.hosts // 1)",
            },
            "instanceIdPath": ".spec.groups[].name",
            "podSelector": {
                "componentTypeSelector": {"keyPath": '.metadata.labels["type"]', "value": "worker"},
                "componentInstanceSelector": {"idPath": GROUP},
                "replicaSelector": {"keyPath": INDEX},
            },
        },
        gang={"podGroup": pod_group},
    )


SPLIT = {"componentName": "worker", "by": "replica", "replicaSizePath": SIZE}


def obj(*groups: tuple[str, int, int], min_replicas: int = 0) -> dict[str, Any]:
    return {
        "metadata": {"name": "demo", "namespace": "ns"},
        "spec": {
            "head": {"spec": {}},
            "groups": [
                {"name": n, "replicas": r, "hosts": h, "minReplicas": min_replicas, "template": {"spec": {}}}
                for n, r, h in groups
            ],
        },
    }


def head() -> dict[str, Any]:
    return pod("head", {"type": "head"})


def workers(group: str, replicas: int, hosts: int, *, index: bool = True) -> list[dict[str, Any]]:
    out = []
    for r in range(replicas):
        for h in range(hosts):
            labels = {"type": "worker", "group": group}
            if index:
                labels["replica-index"] = str(r)
            out.append(pod(f"{group}-{r}-{h}", labels))
    return out


def summary(definition: Any, workload: dict[str, Any]) -> list[tuple[str, int]]:
    return [
        (g.qualified_name, g.min_member)
        for g in compute_gang_plan(make_factory(definition, workload), []).gangs
    ]


# E1.4 rows for replicaSizePath.
CONFORMANCE = [
    pytest.param(obj(("tpu", 2, 4)), [("rc", 1), ("rc-tpu-0", 4), ("rc-tpu-1", 4)], id="multi-host-2x4"),
    pytest.param(
        obj(("cpu", 3, 1), ("tpu", 1, 4)), [("rc", 4), ("rc-tpu-0", 4)], id="size-1-instance-joins-the-rest"
    ),
    pytest.param(obj(("cpu", 2, 1)), [("rc", 3)], id="every-instance-size-1-one-gang"),
    pytest.param(obj(("tpu", 0, 4)), [("rc", 1)], id="zero-replicas-no-replica-gang"),
    pytest.param(
        obj(("cpu", 3, 1), ("tpu", 2, 4), min_replicas=1),
        [("rc", 2), ("rc-tpu-0", 4), ("rc-tpu-1", 4)],
        id="elastic-minimum-of-the-rest-every-desired-replica-a-gang",
    ),
]


@pytest.mark.parametrize(("workload", "expected"), CONFORMANCE)
def test_conformance(workload: dict[str, Any], expected: list[tuple[str, int]]) -> None:
    definition = cluster(SPLIT)
    assert not [f for f in validate_karta(definition) if f.is_error]
    assert summary(definition, workload) == expected


def test_without_split_exactly_as_before() -> None:
    """[compat]: one gang of head + replicas x hosts; a false ``when`` plans the same."""
    workload = obj(("cpu", 3, 1), ("tpu", 2, 4))
    assert summary(cluster(), workload) == [("rc", 12)]
    never = cluster({**SPLIT, "when": "false"})
    pods = [head(), *workers("tpu", 2, 4)]
    assert compute_gang_plan(make_factory(never, workload), pods) == compute_gang_plan(
        make_factory(cluster(), workload), pods
    )


def test_pods_go_to_their_replica_or_to_the_rest() -> None:
    workload = obj(("cpu", 2, 1), ("tpu", 2, 4))
    pods = [head(), *workers("cpu", 2, 1, index=False), *workers("tpu", 2, 4)]
    plan = compute_gang_plan(make_factory(cluster(SPLIT), workload), pods)
    assert [(g.qualified_name, g.min_member, g.split, g.split_keys, g.members) for g in plan.gangs] == [
        ("rc", 3, "rest", (), ("head", "cpu-0-0", "cpu-1-0")),
        ("rc-tpu-0", 4, "replica", ("tpu", "0"), ("tpu-0-0", "tpu-0-1", "tpu-0-2", "tpu-0-3")),
        ("rc-tpu-1", 4, "replica", ("tpu", "1"), ("tpu-1-0", "tpu-1-1", "tpu-1-2", "tpu-1-3")),
    ]
    assert not plan.diagnostics


def test_pods_without_the_replica_label_are_in_no_gang_with_an_error() -> None:
    """An operator that does not label replicas (KubeRay 1.5 without its gate): never a wrong gang."""
    workload = obj(("tpu", 2, 4))
    pods = [head(), *workers("tpu", 2, 4, index=False)]
    plan = compute_gang_plan(make_factory(cluster(SPLIT), workload), pods)
    assert [(g.qualified_name, len(g.members)) for g in plan.gangs] == [
        ("rc", 1),
        ("rc-tpu-0", 0),
        ("rc-tpu-1", 0),
    ]
    assert len(plan.diagnostics) == 8
    first = plan.diagnostics[0]
    assert first.severity == "error"
    assert first.message.startswith('pod ns/tpu-0-0: failed to extract group key from path ".metadata.labels')
    assert (
        "each replica of component worker (tpu: 4 pods) is one gang, and this pod names none" in first.message
    )


def test_scale_up_and_down_follow_the_replicas() -> None:
    definition = cluster(SPLIT)
    assert summary(definition, obj(("tpu", 3, 2))) == [
        ("rc", 1),
        ("rc-tpu-0", 2),
        ("rc-tpu-1", 2),
        ("rc-tpu-2", 2),
    ]
    assert summary(definition, obj(("tpu", 1, 2))) == [("rc", 1), ("rc-tpu-0", 2)]
    # A stale replica's pods (still terminating) name no expected gang: a warning, in no gang.
    plan = compute_gang_plan(make_factory(definition, obj(("tpu", 1, 2))), workers("tpu", 2, 2))
    assert [len(g.members) for g in plan.gangs] == [0, 2]
    assert [d.severity for d in plan.diagnostics] == ["warning", "warning"]
    assert "split keys [tpu 1] name no expected gang" in plan.diagnostics[0].message


def test_hostile_sizes_are_errors() -> None:
    definition = cluster(SPLIT)
    with pytest.raises(GangError, match="not a whole number of replicas of 4"):
        compute_gang_plan(
            make_factory(cluster({**SPLIT, "replicaSizePath": ".spec.groups[] | 4"}), obj(("t", 3, 2))), []
        )
    with pytest.raises(
        GangError, match=r"must yield one positive integer per instance of component worker \(1\)"
    ):
        compute_gang_plan(make_factory(cluster({**SPLIT, "replicaSizePath": "0"}), obj(("t", 1, 2))), [])
    with pytest.raises(GangError, match="got 2 results"):
        compute_gang_plan(make_factory(cluster({**SPLIT, "replicaSizePath": "1, 2"}), obj(("t", 1, 2))), [])
    with pytest.raises(GangError, match="asks for 2000 gangs; at most 1024"):
        compute_gang_plan(make_factory(definition, obj(("t", 2000, 2))), [])


@pytest.mark.parametrize(
    ("split", "sub_groups", "message"),
    [
        ({**SPLIT, "by": "instance"}, None, "split.replicaSizePath needs split.by replica"),
        (SPLIT, [{"componentName": "head"}], "cannot be combined with podGroup.subGroups"),
        ({**SPLIT, "componentName": "root", "groupByKeyPaths": [INDEX]}, None, "'root' has child components"),
        ({**SPLIT, "replicaSizePath": ".spec |"}, None, "failed to parse"),
    ],
)
def test_validation(split: dict[str, Any], sub_groups: list[dict[str, Any]] | None, message: str) -> None:
    findings = validate_karta(cluster(split, sub_groups=sub_groups))
    assert any(message in f.message and f.is_error for f in findings), [f.message for f in findings]


def test_sub_groups_are_refused_when_planning_too() -> None:
    with pytest.raises(GangError, match=r"cannot be combined with podGroup\.subGroups"):
        compute_gang_plan(
            make_factory(cluster(SPLIT, sub_groups=[{"componentName": "head"}]), obj(("t", 1, 2))), []
        )


OBSERVED = {**SPLIT, "indexes": "observed"}


def test_observed_indexes_follow_an_operator_that_removes_any_replica() -> None:
    """KubeRay deletes a random replica on scale-down and gives a new one the lowest free index."""
    definition = cluster(OBSERVED)
    three = workers("tpu", 3, 2)
    kept = [p for p in three if not p["metadata"]["name"].startswith("tpu-1-")]  # replica 1 removed
    plan = compute_gang_plan(make_factory(definition, obj(("tpu", 2, 2))), kept)
    assert [(g.qualified_name, len(g.members)) for g in plan.gangs] == [
        ("rc", 0),
        ("rc-tpu-0", 2),
        ("rc-tpu-2", 2),
    ]
    assert not plan.diagnostics
    # Scaled up to 3 again: the new replica is the lowest free index, 1.
    plan = compute_gang_plan(make_factory(definition, obj(("tpu", 3, 2))), kept)
    assert [(g.qualified_name, len(g.members)) for g in plan.gangs] == [
        ("rc", 0),
        ("rc-tpu-0", 2),
        ("rc-tpu-1", 0),
        ("rc-tpu-2", 2),
    ]
    # Scale-down in progress (3 carried, 1 desired): every carried index keeps its gang.
    plan = compute_gang_plan(make_factory(definition, obj(("tpu", 1, 2))), three)
    assert [g.qualified_name for g in plan.gangs] == ["rc", "rc-tpu-0", "rc-tpu-1", "rc-tpu-2"]
    # Dense (the default) plans 0 .. count-1 whatever the pods carry.
    dense = compute_gang_plan(make_factory(cluster(SPLIT), obj(("tpu", 2, 2))), kept)
    assert [g.qualified_name for g in dense.gangs] == ["rc", "rc-tpu-0", "rc-tpu-1"]
    assert len(dense.diagnostics) == 2  # replica 2's pods name no expected gang


@pytest.mark.parametrize(
    ("split", "message"),
    [
        ({**SPLIT, "indexes": "sparse"}, "split.indexes 'sparse' must be one of dense, observed"),
        ({**OBSERVED, "by": "instance"}, "split.indexes needs split.by replica"),
    ],
)
def test_indexes_validation(split: dict[str, Any], message: str) -> None:
    findings = validate_karta(cluster(split))
    assert any(message in f.message and f.is_error for f in findings), [f.message for f in findings]
