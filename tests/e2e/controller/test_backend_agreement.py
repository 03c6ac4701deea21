"""The pod webhook and the gang reconciler render the same Workload API objects, at the version the
API server serves (issue 21 item 3).

The pinned Kubernetes (hack/cluster/go.mod, v1.37.2) serves the Workload API as
``scheduling.k8s.io/v1beta1`` (beta, off by default: the control plane turns it on) and
``v1alpha3`` (alpha, off by default); 1.37 no longer has ``v1alpha2`` or ``v1alpha1``. This API
server runs with ``--runtime-config=scheduling.k8s.io/v1beta1=false,scheduling.k8s.io/v1alpha3=true``:
the Workload API is served at ``v1alpha3`` only, so the default of both renderings (1.37,
``v1beta1``) would not be served. Both learn the version from discovery through the one options
function (:func:`karta.render.backends.controller_options`): the reconciler writes a Job's Workload
and PodGroup at ``v1alpha3``; the webhook, binding the Job's pods afterwards, renders the same
objects (its server-side apply changes nothing: same resourceVersions) and points each pod at the
PodGroup the reconciler wrote; a resync after that changes nothing either.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.controller.parts.gangs import GangReconciler
from karta.controller.parts.pod_binding.admission import PodAdmission
from karta.controller.runtime.served import ServedOptions
from karta.render import WorkloadApiOptions

from ..conftest import local_cluster
from ..kubehttp import KubeHTTP, ok, wait
from .pods_support import (
    batch_job,
    namespace,
    registered_webhook,
    running_controller,
    unbound,
    wait_webhook_active,
    webhook_url,
)

pytestmark = pytest.mark.slow

ALPHA_ONLY = ("scheduling.k8s.io/v1beta1=false", "scheduling.k8s.io/v1alpha3=true")
API = "/apis/scheduling.k8s.io/v1alpha3/namespaces/{ns}/{plural}/{name}"
NODE_LABELS = {"karta-e2e-agreement": "none"}  # no such Node, no scheduler: pods stay pending


@pytest.fixture(scope="module")
def alpha_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHTTP]:
    yield from local_cluster(tmp_path_factory, controllers=False, runtime_config=ALPHA_ONLY)


def _workload_versions(kube: KubeHTTP) -> set[str]:
    group = ok(kube.get("/apis/scheduling.k8s.io"))
    versions = set()
    for entry in group["versions"]:
        resources = ok(kube.get(f"/apis/scheduling.k8s.io/{entry['version']}"))["resources"]
        if any(r["kind"] == "Workload" for r in resources):
            versions.add(entry["version"])
    return versions


def _pod(job: dict[str, Any], name: str) -> dict[str, Any]:
    """A pod as the Job controller makes it (no controller-manager here): its labels, its owner."""
    meta = job["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {
                "batch.kubernetes.io/job-name": meta["name"],
                "batch.kubernetes.io/controller-uid": meta["uid"],
            },
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": job["spec"]["template"]["spec"],
    }


def _versions(kube: KubeHTTP, ns: str) -> dict[str, str]:
    """Kind/name -> resourceVersion of the Job's Workload and PodGroup at v1alpha3."""
    out = {}
    for plural, kind in (("workloads", "Workload"), ("podgroups", "PodGroup")):
        for item in ok(kube.get(f"/apis/scheduling.k8s.io/v1alpha3/namespaces/{ns}/{plural}"))["items"]:
            out[f"{kind}/{item['metadata']['name']}"] = item["metadata"]["resourceVersion"]
    return out


def test_the_webhook_and_the_reconciler_render_the_served_alpha_version_alike(
    alpha_cluster: KubeHTTP, tmp_path: Path
) -> None:
    kube = alpha_cluster
    assert _workload_versions(kube) == {"v1alpha3"}
    ns = namespace(kube, "agree")
    with running_controller(kube, tmp_path, backend="workload-api", namespaces=(ns,)) as (controller, ca):
        gangs = controller.parts["gangs"]
        served = controller.parts["served-options"]
        admission = controller.parts["pod-admission"]
        assert isinstance(gangs, GangReconciler) and isinstance(served, ServedOptions)
        assert isinstance(admission, PodAdmission)
        wait("the reconciler's types", gangs.ready, timeout=60)
        # One options function, one answer: 1.37's objects at the served v1alpha3.
        expected = WorkloadApiOptions(k8s_version="1.37", api_version="v1alpha3")
        assert wait("the webhook's options", lambda: served.ready.is_set() and served.current()) == expected
        assert gangs._options == expected

        job = ok(
            kube.post(f"/apis/batch/v1/namespaces/{ns}/jobs", batch_job("train", NODE_LABELS, parallelism=2))
        )
        # The reconciler writes the Workload and the gang's PodGroup at v1alpha3.
        written = wait(
            "the reconciler's Workload and PodGroup",
            lambda: (lambda got: got if set(got) == {"Workload/train", "PodGroup/train-job"} else None)(
                _versions(kube, ns)
            ),
        )
        group = ok(kube.get(API.format(ns=ns, plural="podgroups", name="train-job")))
        assert group["spec"]["workloadRef"] == {"workloadName": "train", "templateName": "job"}
        assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
        assert group["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]

        with registered_webhook(kube, url=webhook_url(controller), ca=ca, namespaces=(ns,)):
            wait_webhook_active(kube, controller, ns)
            pods = [ok(kube.post(f"/api/v1/namespaces/{ns}/pods", _pod(job, f"train-{i}"))) for i in range(2)]
        # Each pod points at the PodGroup the reconciler wrote ...
        assert [p["spec"].get("schedulingGroup") for p in pods] == [{"podGroupName": "train-job"}] * 2
        assert unbound(controller, "api") == 0 and unbound(controller, "render") == 0
        # ... and the webhook's rendering of the workload is the reconciler's: its apply of the
        # same objects (it ran for each pod: the Workload is create-only, the PodGroup applied)
        # changed nothing.
        walk = admission.binder.top(pods[0])
        stored = admission.binder.definition(walk)
        assert stored is not None
        binding = admission.binder.bind(walk, stored, pods)
        assert {f"{o['kind']}/{o['metadata']['name']}" for o in binding.objects} == set(written)
        assert {o["apiVersion"] for o in binding.objects} == {"scheduling.k8s.io/v1alpha3"}
        for obj in binding.objects:
            plural = "workloads" if obj["kind"] == "Workload" else "podgroups"
            live = ok(kube.get(API.format(ns=ns, plural=plural, name=obj["metadata"]["name"])))
            assert _holds(live["spec"], obj["spec"]), (obj["kind"], live["spec"], obj["spec"])
        assert _versions(kube, ns) == written
        # A resync: the reconciler renders the same again; nothing is written.
        before = _objects(controller, "unchanged")
        gangs.resync()
        wait("the resync", lambda: _objects(controller, "unchanged") >= before + 2, timeout=30)
        assert _versions(kube, ns) == written
        assert _objects(controller, "immutable") == 0


def _holds(live: Any, desired: Any) -> bool:
    """``live`` has every value of ``desired`` (the server adds defaults of its own)."""
    if isinstance(desired, dict):
        return isinstance(live, dict) and all(k in live and _holds(live[k], v) for k, v in desired.items())
    if isinstance(desired, list):
        return isinstance(live, list) and len(live) == len(desired) and all(map(_holds, live, desired))
    return bool(live == desired)


def _objects(controller: Any, outcome: str) -> float:
    """The gang objects counted with ``outcome`` (``immutable``: the immutable changes reported)."""
    registry = controller.metrics.registry
    if outcome == "immutable":
        value = registry.get_sample_value("karta_gang_immutable_changes_total", {"backend": "workload-api"})
    else:
        value = registry.get_sample_value(
            "karta_gang_objects_total", {"backend": "workload-api", "outcome": outcome}
        )
    return value or 0.0
