"""The gang reconciler and the gang-scheduling scope (issue 22 item 1; docs/controller/
gang-reconciler.md "Leaving the scope"), at the runtime's seam (the rig of
test_gangs_reconcile.py: a cache that never lists, an in-memory API): a workload outside the scope
gets no group objects; one that leaves it keeps them whole, with a ``GangScopeLeft`` event, while
one of its pods waits on them, and has them deleted once none does."""

from __future__ import annotations

import copy
from typing import Any

from karta.controller.runtime.scope import GangScope
from karta.gang import SCOPE_LABEL

from .test_gangs_reconcile import NS, FakeApi, Rig, _applied, _deleted, _job
from .test_gangs_reconcile import _rig as reconcile_rig


def _rig(namespace_label: str | None, *, mode: str = "opt-in") -> Rig:
    # no informer of namespaces: the scope reads the namespace with one GET
    rig = reconcile_rig(lambda client: GangScope(client, mode=mode))
    _label(rig.api, namespace_label)
    return rig


def _label(api: FakeApi, value: str | None) -> None:
    labels = {SCOPE_LABEL: value} if value is not None else {}
    api.objects[("Namespace", NS, NS)] = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NS, "labels": labels},
    }


def _pod(name: str, group: str, *, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "busybox"}],
        "schedulingGroup": {"podGroupName": group},
    }
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "labels": {"batch.kubernetes.io/job-name": "train"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "train",
                    "uid": "job-uid",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def _pod_group(rig: Rig) -> str:
    (name,) = [n for kind, n in _applied(rig) if kind == "PodGroup"]
    return name


def test_a_workload_outside_the_scope_gets_no_group_objects() -> None:
    rig = _rig(None)
    rig.job(_job())
    assert rig.reconcile() is None
    assert rig.api.written() == [] and rig.api.events() == []


def test_a_workload_that_leaves_the_scope_keeps_its_objects_while_a_pod_waits_on_them() -> None:
    rig = _rig("enabled")
    rig.job(_job())
    rig.reconcile()
    group = _pod_group(rig)
    kept = copy.deepcopy(rig.api.objects)
    rig.api.objects[("Pod", NS, "train-0")] = _pod("train-0", group)  # not bound yet
    rig.api.objects[("Pod", NS, "train-1")] = _pod("train-1", group, node="node-a")
    _label(rig.api, "disabled")  # the namespace leaves the scope
    kept[("Namespace", NS, NS)] = rig.api.objects[("Namespace", NS, NS)]

    rig.reconcile()
    assert rig.api.written() == []  # neither deleted nor updated
    assert rig.api.events() == ["GangScopeLeft"]
    assert {k: v for k, v in rig.api.objects.items() if k[0] != "Pod"} == kept

    rig.api.objects[("Pod", NS, "train-0")] = _pod("train-0", group, node="node-b")  # now bound
    rig.reconcile()
    assert _deleted(rig) == [("PodGroup", group), ("Workload", "train")]
    assert "GangScopeLeft" not in rig.api.events()
    assert not [k for k in rig.api.objects if k[0] in ("Workload", "PodGroup")]


def test_the_workload_opts_out_and_its_finished_pods_wait_on_nothing() -> None:
    rig = _rig("enabled")
    rig.job(_job())
    rig.reconcile()
    group = _pod_group(rig)
    done = _pod("train-0", group)
    done["status"]["phase"] = "Succeeded"
    rig.api.objects[("Pod", NS, "train-0")] = done
    opted_out = _job()
    opted_out["metadata"]["labels"] = {SCOPE_LABEL: "disabled"}
    rig.job(opted_out)
    rig.reconcile()
    assert _deleted(rig) == [("PodGroup", group), ("Workload", "train")]
    assert rig.api.events() == []
