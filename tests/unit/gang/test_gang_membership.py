"""Structure summary and pod → component → effective member (docs/spec/format.md#structure-summary,
#pod-membership; C8, C9)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from gang_builders import EVALUATOR, POD_KIND, component, karta, make_factory, pod, pts, selector

from karta.errors import GangError, PodQueryError
from karta.extract.pods import PodQuerier
from karta.gang import (
    StructureSummary,
    effective_member,
    infer_pod_component,
    infer_pod_instance,
    kai_alpha_pod_group_name,
    kai_pod_group_name,
)


def q(p: dict[str, Any]) -> PodQuerier:
    return PodQuerier(p, evaluator=EVALUATOR)


def c8_karta(gang: dict[str, Any]) -> Any:
    return karta(
        component("app"),
        component(
            "worker", "app", specDefinition=pts(".w"), podSelector=selector(".metadata.labels.kind", "worker")
        ),
        component(
            "server", "app", specDefinition=pts(".s"), podSelector=selector(".metadata.labels.kind", "server")
        ),
        gang=gang,
    )


VERSIONED = {
    "podGroups": [
        {
            "name": "versioned",
            "members": [{"componentName": "worker", "filters": ['.metadata.labels.version == "v2"']}],
        },
        {"name": "fallback-group", "members": [{"componentName": "app"}]},
    ]
}


def test_summary_shape() -> None:
    k = karta(
        component("cluster"),
        component("job-group", "cluster"),
        component("worker", "job-group", specDefinition=pts(".w"), scaleDefinition={"replicasPath": "1"}),
        component("master", "job-group", specDefinition=pts(".m")),
        component("storage", "cluster", specDefinition=pts(".s")),
        gang={
            "podGroups": [
                {"name": "g", "members": [{"componentName": "cluster"}, {"componentName": "worker"}]}
            ]
        },
    )
    s = StructureSummary(k)
    assert s.root_name == "cluster"
    assert s.parent == {
        "cluster": None,
        "job-group": "cluster",
        "worker": "job-group",
        "master": "job-group",
        "storage": "cluster",
    }
    assert s.children["cluster"] == ["job-group", "storage"]
    assert s.children["job-group"] == ["worker", "master"]
    assert s.pod_bearing == ["worker", "master", "storage"]
    assert s.has_scale_definition
    assert s.ancestors("worker") == ["job-group", "cluster"]
    assert s.descendants("cluster") == ["job-group", "worker", "master", "storage"]
    assert [c.member.component_name for c in s.candidates("worker")] == ["worker", "cluster"]
    assert [c.member.component_name for c in s.candidates("storage")] == ["cluster"]
    with pytest.raises(GangError, match="component ghost not found"):
        s.definition("ghost")


def test_candidates_order_groups_then_members_then_ancestors() -> None:
    k = c8_karta(
        {
            "podGroups": [
                {
                    "name": "a",
                    "members": [{"componentName": "app"}, {"componentName": "worker", "filters": ["false"]}],
                },
                {"name": "b", "members": [{"componentName": "worker"}]},
            ]
        }
    )
    cands = StructureSummary(k).candidates("worker")
    assert [(c.pod_group_name, c.member.component_name) for c in cands] == [
        ("a", "worker"),
        ("b", "worker"),
        ("a", "app"),
    ]


def test_c8_effective_member_falls_back_to_ancestor() -> None:
    s = StructureSummary(c8_karta(VERSIONED))
    v1 = q(pod("w1", {"kind": "worker", "version": "v1"}))
    assert infer_pod_component(s, v1) == "worker"
    eff = effective_member(s, v1, "worker")
    assert eff is not None and (eff.effective_component, eff.pod_group_name) == ("app", "fallback-group")
    v2 = q(pod("w2", {"kind": "worker", "version": "v2"}))
    eff = effective_member(s, v2, "worker")
    assert eff is not None and (eff.effective_component, eff.pod_group_name) == ("worker", "versioned")
    server = q(pod("s", {"kind": "server"}))
    assert infer_pod_component(s, server) == "server"
    eff = effective_member(s, server, "server")
    assert eff is not None and eff.pod_group_name == "fallback-group"


def test_c8_tiers() -> None:
    gang = {
        "podGroups": [
            {
                "name": "gpu-group",
                "members": [{"componentName": "worker", "filters": ['.metadata.labels.tier == "gpu"']}],
            },
            {
                "name": "cpu-group",
                "members": [{"componentName": "worker", "filters": ['.metadata.labels.tier == "cpu"']}],
            },
        ]
    }
    s = StructureSummary(c8_karta(gang))
    for tier, group in [("gpu", "gpu-group"), ("cpu", "cpu-group")]:
        eff = effective_member(s, q(pod("w", {"kind": "worker", "tier": tier})), "worker")
        assert eff is not None and eff.pod_group_name == group
    assert effective_member(s, q(pod("w", {"kind": "worker", "tier": "tpu"})), "worker") is None


def test_no_gang_instructions_means_no_member() -> None:
    s = StructureSummary(c8_karta({}))
    assert effective_member(s, q(pod("w", {"kind": "worker"})), "worker") is None


def test_filter_error_names_component_and_group() -> None:
    gang = {
        "podGroups": [
            {"name": "g1", "members": [{"componentName": "worker", "filters": [".metadata.labels.none"]}]}
        ]
    }
    s = StructureSummary(c8_karta(gang))
    with pytest.raises(
        GangError, match="failed to evaluate filters for component worker in group g1"
    ) as info:
        effective_member(s, q(pod("w", {"kind": "worker"})), "worker")
    assert "query result is empty" in str(info.value)


def test_infer_component_errors() -> None:
    s = StructureSummary(c8_karta(VERSIONED))
    with pytest.raises(GangError, match="no component found for pod lonely"):
        infer_pod_component(s, q(pod("lonely", {"kind": "other"})))
    bad = karta(
        component("app"),
        component("a", "app", specDefinition=pts(".a"), podSelector=selector(".metadata.labels.x ==", "y")),
        component("b", "app", specDefinition=pts(".b")),
    )
    with pytest.raises(PodQueryError, match="failed to parse JQ expression"):
        infer_pod_component(StructureSummary(bad), q(pod("p")))


def test_root_first_then_definition_order() -> None:
    k = karta(
        component("root", specDefinition=pts(".spec.template"), podSelector=selector(".metadata.labels.a")),
        component("child", "root", specDefinition=pts(".c"), podSelector=selector(".metadata.labels.a")),
    )
    assert infer_pod_component(StructureSummary(k), q(pod("p", {"a": "1"}))) == "root"


SANDBOX_KEY = '[.metadata.ownerReferences[]? | select(.kind == "Sandbox") | .uid][0]'


def test_c9_grouping_by_owner_uid() -> None:
    k = karta(
        component("sandbox", kind={"group": "agents.x-k8s.io", "version": "v1beta1", "kind": "Sandbox"}),
        component("agent", "sandbox", kind=POD_KIND, specDefinition=pts(".spec.podTemplate")),
        gang={
            "podGroups": [
                {"name": "sandbox", "members": [{"componentName": "agent", "groupByKeyPaths": [SANDBOX_KEY]}]}
            ]
        },
    )
    s = StructureSummary(k)
    owner = {"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "name": "sb", "uid": "sandbox-uid"}
    pod_a = pod(
        "a", {"agents.x-k8s.io/sandbox-name-hash": "h1"}, ownerReferences=[{**owner, "controller": True}]
    )
    pod_b = pod("b", {"other": "x"}, ownerReferences=[owner])
    for p in (pod_a, pod_b):
        querier = q(p)
        assert infer_pod_component(s, querier) == "agent"
        eff = effective_member(s, querier, "agent")
        assert eff is not None and eff.pod_group_name == "sandbox"
        keys = querier.extract_group_keys(eff.member)
        assert keys == ["sandbox-uid"]
        assert kai_alpha_pod_group_name("top-uid", keys) == "pg-top-uid-sandbox-uid"


def test_infer_pod_instance() -> None:
    k = karta(
        component("root"),
        component(
            "jobs",
            "root",
            specDefinition=pts(".spec.jobs[].template"),
            instanceIdPath=".spec.jobs[].name",
            podSelector={
                "componentTypeSelector": {"keyPath": ".metadata.labels.job"},
                "componentInstanceSelector": {"idPath": ".metadata.labels.job"},
            },
        ),
        component("other", "root", specDefinition=pts(".o"), podSelector=selector(".metadata.labels.o")),
        gang={
            "podGroups": [{"name": "g", "members": [{"componentName": "jobs"}, {"componentName": "root"}]}]
        },
    )
    factory = make_factory(k, {"spec": {"jobs": [{"name": "a"}, {"name": "b"}]}})
    s = StructureSummary(k)
    querier = q(pod("p", {"job": "b"}))
    comp = infer_pod_component(s, querier)
    eff = effective_member(s, querier, comp)
    assert infer_pod_instance(factory, querier, component=comp, effective=eff) == "b"
    other = q(pod("o", {"o": "1"}))
    eff_other = effective_member(s, other, "other")
    assert eff_other is not None and eff_other.effective_component == "root"
    assert infer_pod_instance(factory, other, component="other", effective=eff_other) is None
    assert infer_pod_instance(factory, other, component="other", effective=None) is None


def test_kai_names() -> None:
    assert kai_pod_group_name("U", "job") == "pg-U-job"
    assert kai_alpha_pod_group_name("u1") == "pg-u1"
    assert kai_alpha_pod_group_name("u1", ["train-7", "0"]) == "pg-u1-train-7-0"
    message = 'Karta grouping keys [Big x] produce invalid Kubernetes PodGroup name "pg-u1-Big-x"'
    with pytest.raises(GangError, match=re.escape(message)):
        kai_alpha_pod_group_name("u1", ["Big", "x"])
