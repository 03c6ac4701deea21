"""Karta extension E1, ``podGroup.split`` (docs/format-extensions.md): the conformance table of
the spec as unit tests, pod assignment, the gang of the rest, ``when``, sub-groups, validation, and
the compatibility rule (a definition without ``split`` plans exactly as before)."""

from __future__ import annotations

from typing import Any

import pytest
from gang_builders import karta, make_factory, pod, pts, selector

from karta.errors import GangError
from karta.gang import compute_gang_plan
from karta.model import validate_karta
from karta.report.gang_state import gang_state

LWS_LABEL = '.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]'
WORKER_INDEX = '.metadata.labels["leaderworkerset.sigs.k8s.io/worker-index"]'


def lws(split: dict[str, Any] | None = None, sub_groups: list[dict[str, Any]] | None = None) -> Any:
    pod_group: dict[str, Any] = {"name": "lws"}
    if split is not None:
        pod_group["split"] = split
    if sub_groups is not None:
        pod_group["subGroups"] = sub_groups
    return karta(
        {"name": "root"},
        {
            "name": "group",
            "ownerRef": "root",
            "scaleDefinition": {"replicasPath": ".spec.replicas // 1"},
            "podSelector": {"replicaSelector": {"keyPath": LWS_LABEL}},
        },
        {
            "name": "leader",
            "ownerRef": "group",
            "specDefinition": pts(".spec.template"),
            "scaleDefinition": {"replicasPath": "1"},
            "podSelector": selector(WORKER_INDEX, "0"),
        },
        {
            "name": "worker",
            "ownerRef": "group",
            "specDefinition": pts(".spec.template"),
            "scaleDefinition": {"replicasPath": ".spec.size - 1"},
            "podSelector": selector(f'{WORKER_INDEX} | select(. != "0")'),
        },
        gang={"podGroup": pod_group},
    )


def lws_obj(replicas: int = 3, size: int = 4) -> dict[str, Any]:
    return {
        "metadata": {"name": "demo", "namespace": "ns"},
        "spec": {"replicas": replicas, "size": size, "template": {"spec": {"containers": []}}},
    }


def lws_pods(groups: int = 3, size: int = 4) -> list[dict[str, Any]]:
    return [
        pod(
            f"demo-{g}-{w}",
            {
                "leaderworkerset.sigs.k8s.io/group-index": str(g),
                "leaderworkerset.sigs.k8s.io/worker-index": str(w),
            },
        )
        for g in range(groups)
        for w in range(size)
    ]


def services(split: dict[str, Any] | None, *, with_head: bool = False, scale: bool = True) -> Any:
    """A multi-instance component keyed by a services map (and optionally a head outside it)."""
    children: list[dict[str, Any]] = []
    if with_head:
        children.append(
            {
                "name": "head",
                "ownerRef": "root",
                "specDefinition": pts(".spec.head"),
                **({"scaleDefinition": {"replicasPath": "1"}} if scale else {}),
                "podSelector": selector('.metadata.labels["role"]', "head"),
            }
        )
    service: dict[str, Any] = {
        "name": "svc",
        "ownerRef": "root",
        "specDefinition": pts(".spec.services | .[] | .template"),
        "instanceIdPath": ".spec.services | keys[]",
        "podSelector": {
            "componentTypeSelector": {"keyPath": '.metadata.labels["svc"]'},
            "componentInstanceSelector": {"idPath": '.metadata.labels["svc"]'},
            "replicaSelector": {"keyPath": '.metadata.labels["replica"]'},
        },
    }
    if scale:
        service["scaleDefinition"] = {
            "replicasPath": ".spec.services | .[] | .replicas",
            "minReplicasPath": ".spec.services | .[] | .minReplicas",
        }
    children.append(service)
    pod_group: dict[str, Any] = {"name": "app"}
    if split is not None:
        pod_group["split"] = split
    return karta({"name": "root"}, *children, gang={"podGroup": pod_group})


SERVICES_OBJ = {
    "metadata": {"name": "demo"},
    "spec": {
        "head": {"spec": {}},
        "services": {
            "decode": {"replicas": 2, "template": {}},
            "prefill": {"replicas": 3, "minReplicas": 2, "template": {}},
        },
    },
}


def _summary(
    definition: Any, obj: dict[str, Any], pods: list[dict[str, Any]] | None = None
) -> list[tuple[str, int]]:
    plan = compute_gang_plan(make_factory(definition, obj), pods or [])
    return [(g.qualified_name, g.min_member) for g in plan.gangs]


# The conformance table of docs/format-extensions.md E1.4: structure, scale, query, result.
CONFORMANCE = [
    pytest.param(
        lws({"componentName": "group", "by": "replica"}),
        lws_obj(3, 4),
        [("lws-0", 4), ("lws-1", 4), ("lws-2", 4)],
        id="lws-3x4-by-replica",
    ),
    pytest.param(
        lws({"componentName": "group", "by": "replica"}),
        lws_obj(2, 1),
        [("lws-0", 1), ("lws-1", 1)],
        id="replica-without-pods-below-counts-one",
    ),
    pytest.param(
        lws({"componentName": "group", "by": "replica"}), lws_obj(0, 4), [], id="zero-replicas-no-gang"
    ),
    pytest.param(
        lws({"componentName": "group", "by": "replica", "when": ".spec.size > 1"}),
        lws_obj(3, 1),
        [("lws", 3)],
        id="when-false-one-gang",
    ),
    pytest.param(
        services({"componentName": "svc", "by": "instance"}),
        SERVICES_OBJ,
        [("app-decode", 2), ("app-prefill", 2)],
        id="by-instance-subtree-scale",
    ),
    pytest.param(
        services({"componentName": "svc", "by": "replica"}),
        SERVICES_OBJ,
        [
            ("app-decode-0", 1),
            ("app-decode-1", 1),
            ("app-prefill-0", 1),
            ("app-prefill-1", 1),
            ("app-prefill-2", 1),
        ],
        id="by-replica-multi-instance-keys-id-then-index",
    ),
    pytest.param(
        services({"componentName": "svc", "by": "instance"}, with_head=True),
        SERVICES_OBJ,
        [("app", 1), ("app-decode", 2), ("app-prefill", 2)],
        id="rest-gang-first",
    ),
    pytest.param(
        services({"componentName": "svc", "by": "instance"}, with_head=True, scale=False),
        SERVICES_OBJ,
        [("app", 1), ("app-decode", 1), ("app-prefill", 1)],
        id="by-counting",
    ),
]


@pytest.mark.parametrize(("definition", "obj", "expected"), CONFORMANCE)
def test_conformance_table(definition: Any, obj: dict[str, Any], expected: list[tuple[str, int]]) -> None:
    assert not [f for f in validate_karta(definition) if f.is_error]
    assert _summary(definition, obj) == expected


def test_without_split_exactly_as_before() -> None:
    """[compat]: the same definition without split is one gang of replicas x size."""
    assert _summary(lws(), lws_obj(3, 4)) == [("lws", 12)]
    with_when_false = lws({"componentName": "group", "by": "replica", "when": "false"})
    pods = lws_pods(1, 2)
    assert compute_gang_plan(make_factory(with_when_false, lws_obj()), pods) == compute_gang_plan(
        make_factory(lws(), lws_obj()), pods
    )


def test_pods_go_to_their_replica_and_gangs_without_pods_are_planned() -> None:
    definition = lws({"componentName": "group", "by": "replica"})
    pods = lws_pods(2, 4)  # group 2 has no pods yet
    plan = compute_gang_plan(make_factory(definition, lws_obj()), pods)
    assert [(g.qualified_name, g.split, g.split_keys, len(g.members)) for g in plan.gangs] == [
        ("lws-0", "replica", ("0",), 4),
        ("lws-1", "replica", ("1",), 4),
        ("lws-2", "replica", ("2",), 0),
    ]
    assert plan.gangs[1].members == ("demo-1-0", "demo-1-1", "demo-1-2", "demo-1-3")
    assert plan.gangs[0].to_dict()["keys"] == ["0"] and plan.gangs[0].to_dict()["split"] == "replica"
    assert not plan.diagnostics


def test_scale_up_adds_gangs_scale_down_drops_them() -> None:
    definition = lws({"componentName": "group", "by": "replica"})
    assert [g.qualified_name for g in compute_gang_plan(make_factory(definition, lws_obj(5)), []).gangs] == [
        f"lws-{i}" for i in range(5)
    ]
    assert [g.qualified_name for g in compute_gang_plan(make_factory(definition, lws_obj(1)), []).gangs] == [
        "lws-0"
    ]


def test_keys_naming_no_gang_are_diagnostics() -> None:
    definition = lws({"componentName": "group", "by": "replica"})
    stray = pod(
        "stray",
        {"leaderworkerset.sigs.k8s.io/group-index": "7", "leaderworkerset.sigs.k8s.io/worker-index": "0"},
    )
    unlabelled = pod("bare", {"leaderworkerset.sigs.k8s.io/worker-index": "1"})
    padded = pod(
        "padded",
        {"leaderworkerset.sigs.k8s.io/group-index": "01", "leaderworkerset.sigs.k8s.io/worker-index": "1"},
    )
    plan = compute_gang_plan(make_factory(definition, lws_obj(2)), [stray, unlabelled, padded])
    messages = [d.message for d in plan.diagnostics]
    assert any(
        "stray: split keys [7] name no expected gang of component group (expected [0], [1])" in m
        for m in messages
    )
    assert any("bare" in m and "failed to extract group key" in m for m in messages)
    assert plan.gangs[1].members == ("padded",)


def test_rest_gang_and_pods_outside_without_rest() -> None:
    definition = services({"componentName": "svc", "by": "instance"}, with_head=True)
    pods = [
        pod("head-0", {"role": "head"}),
        pod("decode-0", {"svc": "decode"}),
        pod("other-0", {"svc": "unknown"}),
    ]
    plan = compute_gang_plan(make_factory(definition, SERVICES_OBJ), pods)
    assert [(g.qualified_name, g.split, g.members) for g in plan.gangs] == [
        ("app", "rest", ("head-0",)),
        ("app-decode", "instance", ("decode-0",)),
        ("app-prefill", "instance", ()),
    ]
    assert "other-0: split keys [unknown]" in plan.diagnostics[0].message
    # Without a head component, a pod claimed by no component is a diagnostic too.
    no_head = services({"componentName": "svc", "by": "instance"})
    plan = compute_gang_plan(make_factory(no_head, SERVICES_OBJ), [pod("x", {})])
    assert [g.qualified_name for g in plan.gangs] == ["app-decode", "app-prefill"]
    assert plan.diagnostics and plan.diagnostics[0].severity == "error"


def test_sub_groups_of_split_gangs() -> None:
    definition = lws(
        {"componentName": "group", "by": "replica"},
        sub_groups=[{"componentName": "leader"}, {"componentName": "worker"}],
    )
    plan = compute_gang_plan(make_factory(definition, lws_obj(2, 4)), lws_pods(1, 4))
    first = plan.gangs[0]
    assert [(s.name, s.min_member, len(s.members)) for s in first.sub_groups] == [
        ("leader", 1, 1),
        ("worker", 3, 3),
    ]
    assert first.min_sub_group == 2 and first.min_member == 0
    assert [(s.name, len(s.members)) for s in plan.gangs[1].sub_groups] == [("leader", 0), ("worker", 0)]
    own = lws({"componentName": "group", "by": "replica"}, sub_groups=[{"componentName": "group"}])
    plan = compute_gang_plan(make_factory(own, lws_obj(2, 4)), [])
    assert [s.min_member for g in plan.gangs for s in g.sub_groups] == [4, 4]
    containing = lws(
        {"componentName": "leader", "by": "replica", "groupByKeyPaths": [LWS_LABEL]},
        sub_groups=[{"componentName": "group"}],
    )
    assert any("contains the split component" in f.message for f in validate_karta(containing))
    with pytest.raises(GangError, match="contains the split component"):
        compute_gang_plan(make_factory(containing, lws_obj()), [])


def test_gang_state_shows_every_gang() -> None:
    definition = lws({"componentName": "group", "by": "replica"})
    pods = lws_pods(3, 4)
    for p in pods[:8]:
        p["spec"]["nodeName"] = "node-a"
    state = gang_state(compute_gang_plan(make_factory(definition, lws_obj()), pods), pods)
    assert state.text() == "8/12 bound, min 12 not met; gangs: lws-0 4/4, lws-1 4/4, lws-2 0/4"
    report = state.to_report()
    assert report["perGang"][2] == {
        "name": "lws-2",
        "minMember": 4,
        "scheduled": 0,
        "pods": 4,
        "minimumMet": False,
    }


@pytest.mark.parametrize(
    ("split", "message"),
    [
        ({"componentName": "nope", "by": "replica"}, "split component 'nope' is not defined"),
        ({"componentName": "group", "by": "pod"}, "split.by 'pod' must be one of replica, instance"),
        ({"componentName": "group", "by": "instance"}, "split by instance needs a multi-instance component"),
        (
            {"componentName": "leader", "by": "replica"},
            "has no groupByKeyPaths and the component's podSelector",
        ),
        (
            {"componentName": "group", "by": "replica", "groupByKeyPaths": [LWS_LABEL, LWS_LABEL]},
            "needs 1 groupByKeyPaths (the replica index); 2 given",
        ),
        (
            {"componentName": "group", "by": "replica", "groupByKeyPaths": ["undefined_fn"]},
            "failed to compile",
        ),
        ({"componentName": "group", "by": "replica", "when": ".x |"}, "failed to parse"),
    ],
)
def test_validation(split: dict[str, Any], message: str) -> None:
    findings = validate_karta(lws(split))
    assert any(message in f.message and f.is_error for f in findings), [f.message for f in findings]


def test_validation_notes_kai_ignores_the_extension() -> None:
    findings = validate_karta(lws({"componentName": "group", "by": "replica"}))
    assert [(f.severity, f.location) for f in findings] == [
        ("note", "spec.optimizationInstructions.gangScheduling.podGroup.split")
    ]
    assert "KAI Scheduler's own Karta reader ignores it" in findings[0].message
    assert validate_karta(lws()) == []


def test_when_must_be_boolean_and_counts_are_bounded() -> None:
    bad_when = lws({"componentName": "group", "by": "replica", "when": ".spec.size"})
    with pytest.raises(GangError, match="must yield one boolean"):
        compute_gang_plan(make_factory(bad_when, lws_obj()), [])
    definition = lws({"componentName": "group", "by": "replica"})
    with pytest.raises(GangError, match="asks for 2147483647 gangs; at most 1024"):
        compute_gang_plan(make_factory(definition, lws_obj(2147483647)), [])
