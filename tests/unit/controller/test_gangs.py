"""The gang reconciler's pure parts: immutable fields per backend, stale objects, keys, the
Workload API version, the gang format of a definition."""

from __future__ import annotations

from typing import Any

import pytest
from tests.immutable_cases import ACCEPTED, REFUSED, pod_group, template, workload

from karta.catalog import catalog_definitions
from karta.controller.parts.gangs import Key
from karta.controller.runtime.group_writer import (
    MANAGED_SELECTOR,
    age_s,
    immutable_differences,
    owned_by,
    stale_objects,
)
from karta.gang import gang_format, gangs_follow_pods
from karta.model.gvk import GVK
from karta.render.backends import workload_api_version


def test_v1alpha2_workload_templates_are_immutable_as_a_whole() -> None:
    live = workload([template("job", 5)], "v1alpha2")
    assert immutable_differences(live, workload([template("job", 7)], "v1alpha2")) == [
        "spec.podGroupTemplates"
    ]


def test_pod_group_min_count_may_change_its_policy_kind_may_not() -> None:
    # 1.37.2: "minCount ... is mutable to support workload scaling"; gang <-> basic is refused.
    live = pod_group(5)
    live["spec"]["disruptionMode"] = {"single": {}}  # a server default
    assert immutable_differences(live, pod_group(5)) == []
    assert immutable_differences(live, pod_group(9)) == []
    assert immutable_differences(live, pod_group(3)) == []
    basic = pod_group(5)
    basic["spec"]["schedulingPolicy"] = {"basic": {}}
    assert immutable_differences(live, basic) == ["spec.schedulingPolicy"]


@pytest.mark.parametrize("case", REFUSED)
def test_what_the_api_server_refuses_is_an_immutable_difference(case: str) -> None:
    live, desired, fields = REFUSED[case]
    assert immutable_differences(live, desired) == fields


@pytest.mark.parametrize("case", ACCEPTED)
def test_what_the_api_server_accepts_is_no_immutable_difference(case: str) -> None:
    live, desired = ACCEPTED[case]
    assert immutable_differences(live, desired) == []


@pytest.mark.parametrize(
    "api_version",
    ["scheduling.volcano.sh/v1beta1", "scheduling.x-k8s.io/v1alpha1", "scheduling.run.ai/v2alpha2"],
)
def test_crd_backends_declare_no_immutable_field(api_version: str) -> None:
    live = {"apiVersion": api_version, "kind": "PodGroup", "spec": {"minMember": 5, "queue": "a"}}
    desired = {"apiVersion": api_version, "kind": "PodGroup", "spec": {"minMember": 7, "queue": "b"}}
    assert immutable_differences(live, desired) == []


def _ours(name: str, uid: str, *, managed: bool = True) -> dict[str, Any]:
    labels = {"app.kubernetes.io/managed-by": "karta"} if managed else {"app.kubernetes.io/managed-by": "kai"}
    return {
        "metadata": {
            "name": name,
            "labels": labels,
            "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "uid": uid}],
        }
    }


def test_stale_objects_are_ours_owned_by_the_workload_and_not_in_the_plan() -> None:
    going = _ours("w-going", "u1")
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    existing = [
        _ours("w-job", "u1"),  # in the plan
        _ours("w-old", "u1"),  # stale
        _ours("x-old", "u2"),  # another workload's
        _ours("w-theirs", "u1", managed=False),  # someone else's object
        {"metadata": {"name": "bare"}},
        going,  # stale, but being deleted already
    ]
    stale = stale_objects(existing, uid="u1", keep=["w-job"])
    assert [o["metadata"]["name"] for o in stale] == ["w-old"]
    assert owned_by(existing[0], "u1") and not owned_by(existing[0], "u2")
    assert not owned_by(existing[4], "u1")


def test_managed_selector() -> None:
    assert MANAGED_SELECTOR == "app.kubernetes.io/managed-by=karta"


def test_workload_api_version_is_the_newest_served() -> None:
    assert workload_api_version({"v1alpha1": True, "v1alpha2": True, "v1beta1": True}) == "1.37"
    assert workload_api_version({"v1alpha2": True}) == "1.36"
    assert workload_api_version({"v1alpha1": True}) == "1.35"
    assert workload_api_version({}) is None


def test_gang_format_of_catalog_definitions() -> None:
    catalog = {k.name: k for k in catalog_definitions()}
    assert gang_format(catalog["kubeflow-org-pytorchjob-v1"]) == "podGroup"
    assert gang_format(catalog["jobset-x-k8s-io-jobset-v1alpha2"]) == "podGroup"  # one gang per JobSet
    assert gang_format(catalog["agents-x-k8s-io-sandbox-v1beta1"]) == "podGroups"
    assert gang_format(catalog["apps-deployment-v1"]) is None


def test_gangs_follow_pods_for_alpha_and_observed_indexes() -> None:
    """The reconciler lists and watches pods for these: their set of gangs depends on the pods."""
    catalog = {k.name: k for k in catalog_definitions()}
    assert gangs_follow_pods(catalog["agents-x-k8s-io-sandbox-v1beta1"])  # alpha
    assert gangs_follow_pods(catalog["ray-io-raycluster-v1"])  # E1 indexes observed
    assert not gangs_follow_pods(catalog["leaderworkerset-x-k8s-io-leaderworkerset-v1"])  # E1 dense
    assert not gangs_follow_pods(catalog["kubeflow-org-pytorchjob-v1"])
    assert not gangs_follow_pods(catalog["apps-deployment-v1"])


def test_keys_are_values() -> None:
    gvk = GVK("kubeflow.org", "v1", "PyTorchJob")
    assert Key(gvk, "ns", "a") == Key(gvk, "ns", "a")
    assert len({Key(gvk, "ns", "a"), Key(gvk, "ns", "a"), Key(gvk, "ns", "a", pod=True)}) == 2
    assert str(Key(gvk, "ns", "a")) == "PyTorchJob ns/a"
    assert str(Key(GVK("", "v1", "Pod"), "ns", "p", pod=True)) == "Pod ns/p"


def test_age_of_an_object() -> None:
    obj = {"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}}
    assert age_s(obj, now=1767225600.0 + 12.0) == 12.0
    assert age_s({"metadata": {}}) == float("inf")
    assert age_s({"metadata": {"creationTimestamp": "yesterday"}}) == float("inf")
