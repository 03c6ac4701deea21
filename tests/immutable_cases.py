"""The Workload API's answers to updates of our group objects, as measured on the 1.37.2 API
server (v1beta1 Workload and PodGroup; v1alpha3 CompositePodGroup with the CompositePodGroup and
TopologyAwareWorkloadScheduling gates). The unit tests check the immutable-field table
(:data:`karta.render.backends._WORKLOAD_API_IMMUTABLE`) against every case; the e2e test
tests/e2e/controller/test_immutable_fields.py applies every case to a real API server, so a
release that changes an answer fails there first.

``REFUSED``: case -> (live, desired, the fields :func:`immutable_differences` reports), each an
update the API server refuses with HTTP 422; ``ACCEPTED``: case -> (live, desired), each one it
accepts."""

from __future__ import annotations

import copy
from typing import Any


def workload(templates: list[dict[str, Any]], version: str = "v1beta1") -> dict[str, Any]:
    return {
        "apiVersion": f"scheduling.k8s.io/{version}",
        "kind": "Workload",
        "metadata": {"name": "train"},
        "spec": {
            "controllerRef": {"apiGroup": "kubeflow.org", "kind": "PyTorchJob", "name": "train"},
            "podGroupTemplates": templates,
        },
    }


def pod_group(min_count: int, version: str = "v1beta1") -> dict[str, Any]:
    return {
        "apiVersion": f"scheduling.k8s.io/{version}",
        "kind": "PodGroup",
        "metadata": {"name": "train-job"},
        "spec": {
            "workloadRef": {"workloadName": "train", "templateName": "job"},
            "schedulingPolicy": {"gang": {"minCount": min_count}},
        },
    }


def template(name: str, min_count: int) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": {"gang": {"minCount": min_count}}}


def composite(min_groups: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": "train-composite"},
        "spec": {
            "workloadRef": {"workloadName": "train", "templateName": "job"},
            "schedulingPolicy": {"gang": {"minGroupCount": min_groups}},
        },
    }


def composite_workload(subs: dict[str, int], min_groups: int = 2) -> dict[str, Any]:
    obj = workload([], "v1alpha3")
    del obj["spec"]["podGroupTemplates"]
    obj["spec"]["compositePodGroupTemplates"] = [
        {
            "name": "job",
            "schedulingPolicy": {"gang": {"minGroupCount": min_groups}},
            "podGroupTemplates": [template(name, count) for name, count in subs.items()],
        }
    ]
    return obj


TOPOLOGY = {"topology": [{"key": "kubernetes.io/hostname"}]}


def _with(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``obj`` with ``value`` at the dotted ``path`` (digits index lists)."""
    out = copy.deepcopy(obj)
    *head, last = path.split(".")
    target: Any = out
    for part in head:
        target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
    target[int(last) if last.isdigit() else last] = value
    return out


REFUSED = {
    "Workload controllerRef": (
        workload([template("job", 5)]),
        _with(workload([template("job", 5)]), "spec.controllerRef.name", "other"),
        ["spec.controllerRef"],
    ),
    "Workload template added": (
        workload([template("job", 5)]),
        workload([template("job", 5), template("extra", 1)]),
        ["spec.podGroupTemplates[*].name"],
    ),
    "Workload template renamed": (
        workload([template("job", 5)]),
        workload([template("pytorchjob", 5)]),
        ["spec.podGroupTemplates[*].name"],
    ),
    "Workload template gang -> basic": (
        workload([template("job", 5)]),
        _with(workload([template("job", 5)]), "spec.podGroupTemplates.0.schedulingPolicy", {"basic": {}}),
        ["spec.podGroupTemplates[job].schedulingPolicy"],
    ),
    "Workload template constraints added": (
        _with(workload([template("job", 5)]), "spec.podGroupTemplates.0.schedulingConstraints", None),
        _with(workload([template("job", 5)]), "spec.podGroupTemplates.0.schedulingConstraints", TOPOLOGY),
        ["spec.podGroupTemplates[job].schedulingConstraints"],
    ),
    "Workload composite template added": (
        composite_workload({"a": 1, "b": 2}),
        _with(
            composite_workload({"a": 1, "b": 2}),
            "spec.compositePodGroupTemplates",
            [
                *composite_workload({"a": 1, "b": 2})["spec"]["compositePodGroupTemplates"],
                {
                    "name": "x",
                    "schedulingPolicy": {"gang": {"minGroupCount": 1}},
                    "podGroupTemplates": [template("x1", 1)],
                },
            ],
        ),
        ["spec.compositePodGroupTemplates[*].name"],
    ),
    "Workload nested template added": (
        composite_workload({"a": 1, "b": 2}),
        composite_workload({"a": 1, "b": 2, "c": 1}),
        ["spec.compositePodGroupTemplates[job].podGroupTemplates[*].name"],
    ),
    "Workload composite template constraints added": (
        composite_workload({"a": 1, "b": 2}),
        _with(
            composite_workload({"a": 1, "b": 2}),
            "spec.compositePodGroupTemplates.0.schedulingConstraints",
            TOPOLOGY,
        ),
        ["spec.compositePodGroupTemplates[job].schedulingConstraints"],
    ),
    "PodGroup workloadRef": (
        pod_group(5),
        _with(pod_group(5), "spec.workloadRef.templateName", "other"),
        ["spec.workloadRef"],
    ),
    "PodGroup constraints added": (
        pod_group(5),
        _with(pod_group(5), "spec.schedulingConstraints", TOPOLOGY),
        ["spec.schedulingConstraints"],
    ),
    "PodGroup parent changed": (
        _with(pod_group(5, "v1alpha3"), "spec.parentCompositePodGroupName", "train-job"),
        _with(pod_group(5, "v1alpha3"), "spec.parentCompositePodGroupName", "other"),
        ["spec.parentCompositePodGroupName"],
    ),
    "CompositePodGroup minGroupCount": (composite(2), composite(1), ["spec.schedulingPolicy"]),
    "CompositePodGroup workloadRef": (
        composite(2),
        _with(composite(2), "spec.workloadRef.templateName", "other"),
        ["spec.workloadRef"],
    ),
    "CompositePodGroup constraints added": (
        composite(2),
        _with(composite(2), "spec.schedulingConstraints", TOPOLOGY),
        ["spec.schedulingConstraints"],
    ),
    "CompositePodGroup parent added": (
        composite(2),
        _with(composite(2), "spec.parentCompositePodGroupName", "top"),
        ["spec.parentCompositePodGroupName"],
    ),
}

ACCEPTED = {
    "PodGroup minCount up": (pod_group(5), pod_group(9)),
    "PodGroup minCount down": (pod_group(9), pod_group(3)),
    "Workload template minCount": (workload([template("job", 5)]), workload([template("job", 9)])),
    "Workload templates reordered": (
        workload([template("a", 5), template("b", 1)]),
        workload([template("b", 1), template("a", 5)]),
    ),
    "Workload composite minGroupCount": (
        composite_workload({"a": 1, "b": 2}, 2),
        composite_workload({"a": 1, "b": 2}, 1),
    ),
    "Workload nested template minCount": (
        composite_workload({"a": 1, "b": 2}),
        composite_workload({"a": 4, "b": 2}),
    ),
}
