"""The pod webhook and references (extension E3, issue 26) on the real API server: the first pod of
a fresh kind whose definition reads a related object is admitted with the gang that object implies.

A TrainRun-like kind (a test CRD of a group made for this run: nothing of it was ever watched) takes
its node count from a cluster-scoped RunTemplate through a lookup reference. The controller
(in-process, coscheduling, webhook on a free port, every namespace in the gang scope: a failure
would refuse the pod) watches the referenced kind from when the definition is loaded
(:class:`~karta.controller.parts.pod_binding.admission.ReferenceWarmup`), before any TrainRun or
pod exists; the first pod, created right after its TrainRun, carries the runtime's gang (its
PodGroup's ``minMember`` is the RunTemplate's node count) and no pod is refused.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import yaml

from karta.controller.main import Controller
from karta.controller.parts.pod_binding.admission import PodAdmission, ReferenceWarmup
from karta.kube import KubeClient
from karta.model.gvk import GVK

from ..kubehttp import KubeHTTP, Response, ok
from .gangs_support import client_for, eventually, install_crds, wait_served
from .pods_support import registered_webhook, running_controller, unbound, wait_webhook_active, webhook_url
from .test_gang_references import DENIED_GROUP, _crd, _grant_all_but
from .test_gang_references import _definition as _gang_definition

POD_GROUP = "scheduling.x-k8s.io/pod-group"


def _definition(group: str) -> dict[str, Any]:
    """The references e2e's definition (a TrainRun through its RunTemplate), both kinds in ``group``."""
    definition = _gang_definition(group)
    definition["metadata"]["name"] = "warm-trainrun"
    definition["spec"]["structureDefinition"]["rootComponent"]["kind"]["group"] = group
    return definition


def _pod(name: str, owner: dict[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "ownerReferences": [
                {
                    "apiVersion": owner["apiVersion"],
                    "kind": owner["kind"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "containers": [{"name": "trainer", "image": "trainer:1"}],
            "nodeSelector": {"karta-e2e-references": "none"},  # never scheduled here
        },
    }


def _first_pod(
    cluster: KubeHTTP, kube: KubeClient, controller: Controller, ns: str, group: str
) -> tuple[dict[str, Any], Response, float]:
    """Once the API server calls the webhook: the first TrainRun of the kind (template ``big``)
    and at once its first pod; (the TrainRun, the pod creation's answer, its seconds)."""
    wait_webhook_active(cluster, controller, ns)
    run = kube.create(
        {
            "apiVersion": f"{group}/v1",
            "kind": "TrainRun",
            "metadata": {"name": "first"},
            "spec": {"templateRef": {"name": "big"}},
        },
        namespace=ns,
    )
    started = time.monotonic()
    answer = cluster.post(f"/api/v1/namespaces/{ns}/pods", _pod("first-0", run))
    return run, answer, time.monotonic() - started


def test_the_first_pod_of_a_fresh_kind_gets_the_runtimes_gang(
    cluster: KubeHTTP, corpus: Path, ns: str, tmp_path: Path
) -> None:
    group = f"warm{uuid.uuid4().hex[:6]}.karta.example"
    cluster.ensure_crd(_crd(group, "TrainRun", "trainruns", "Namespaced"))
    cluster.ensure_crd(_crd(group, "RunTemplate", "runtemplates", "Cluster"))
    install_crds(cluster, corpus, ("scheduling.x-k8s.io_podgroups.yaml",))
    kube: KubeClient = client_for(cluster)
    try:
        wait_served(kube, [(group, "v1", "TrainRun"), (group, "v1", "RunTemplate")])
        rtype = kube.discovery.for_gvk(group, "v1", "RunTemplate")
        kube.create(
            {
                "apiVersion": f"{group}/v1",
                "kind": "RunTemplate",
                "metadata": {"name": "big"},
                "spec": {
                    "nodes": 3,
                    "template": {"spec": {"containers": [{"name": "trainer", "image": "t:1"}]}},
                },
            }
        )
        (tmp_path / "definitions").mkdir()
        (tmp_path / "definitions" / "trainrun.yaml").write_text(yaml.safe_dump(_definition(group)))
        with running_controller(cluster, tmp_path, backend="coscheduling", namespaces=(ns,)) as (
            controller,
            ca,
        ):
            warmup = controller.parts["pod-references"]
            admission = controller.parts["pod-admission"]
            assert isinstance(warmup, ReferenceWarmup) and isinstance(admission, PodAdmission)
            # Watched from when the definition was loaded: before any TrainRun or pod of the kind.
            eventually(
                lambda: (group, "v1", "RunTemplate") in warmup.warmed, what="the referenced kind watched"
            )
            binder = admission.binder
            assert binder.references is not None
            stored = binder.store().definition_for(GVK(group, "v1", "TrainRun"))
            eventually(
                lambda: (
                    binder.references is not None
                    and binder.references.wait_synced(stored.karta, time.monotonic()) == []
                ),
                what="the referenced kind's cache synced",
            )
            with registered_webhook(cluster, url=webhook_url(controller), ca=ca, namespaces=(ns,)):
                run, answer, elapsed = _first_pod(cluster, kube, controller, ns, group)
                pod = ok(answer, 201)
                print(f"\nfirst pod of the kind admitted in {elapsed:.3f}s")
                groups = ok(cluster.get(f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"))
                (made,) = [
                    g
                    for g in groups["items"]
                    if g["metadata"]["ownerReferences"][0]["uid"] == run["metadata"]["uid"]
                ]
                assert pod["metadata"].get("labels", {}).get(POD_GROUP) == made["metadata"]["name"], pod[
                    "metadata"
                ]
                assert made["spec"]["minMember"] == 3  # the RunTemplate's nodes, not the null case's 1
                assert unbound(controller, "references") == 0
        kube.delete(rtype, "big")
    finally:
        kube.close()


def test_a_referenced_kind_the_controller_may_not_read_is_reported_at_once(
    cluster: KubeHTTP, corpus: Path, ns: str, tmp_path: Path
) -> None:
    """The same definition pointed at a kind the controller may not read (impersonating a user
    without it): the warm-up's watch fails, and the first pod is refused at once (never a wait for
    a cache that cannot sync), reason ``references``, the message naming the reference, the kind
    and that reading it is forbidden."""
    group = f"warm{uuid.uuid4().hex[:6]}.karta.example"
    cluster.ensure_crd(_crd(group, "TrainRun", "trainruns", "Namespaced"))
    cluster.ensure_crd(_crd(DENIED_GROUP, "RunTemplate", "runtemplates", "Cluster"))
    install_crds(cluster, corpus, ("scheduling.x-k8s.io_podgroups.yaml",))
    user = f"karta-warm-{uuid.uuid4().hex[:6]}"
    _grant_all_but(cluster, user, DENIED_GROUP)
    kube: KubeClient = client_for(cluster)
    try:
        wait_served(kube, [(group, "v1", "TrainRun"), (DENIED_GROUP, "v1", "RunTemplate")])
        definition = _definition(group)
        definition["spec"]["structureDefinition"]["references"][0]["gvk"]["group"] = DENIED_GROUP
        (tmp_path / "definitions").mkdir()
        (tmp_path / "definitions" / "trainrun.yaml").write_text(yaml.safe_dump(definition))
        with running_controller(
            cluster, tmp_path, backend="coscheduling", namespaces=(ns,), as_user=user
        ) as (controller, ca):
            warmup = controller.parts["pod-references"]
            assert isinstance(warmup, ReferenceWarmup)
            eventually(
                lambda: (DENIED_GROUP, "v1", "RunTemplate") in warmup.warmed,
                what="the referenced kind watched",
            )
            with registered_webhook(cluster, url=webhook_url(controller), ca=ca, namespaces=(ns,)):
                _run, answer, elapsed = _first_pod(cluster, kube, controller, ns, group)
                body = answer.body.get("message", "") if isinstance(answer.body, dict) else str(answer.body)
                print(f"\nfirst pod refused in {elapsed:.3f}s: {body[:400]}")
                assert answer.status >= 400, answer.body
                assert f"reference 'runtime' (RunTemplate {DENIED_GROUP}/v1): reading is forbidden" in body, (
                    body
                )
                assert elapsed < 2.5  # not a wait for a cache that cannot sync (the budget is 4 s)
                assert unbound(controller, "references") == 1
    finally:
        kube.close()
