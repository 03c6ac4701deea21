"""The gang reconciler under faults, on a control plane of this module's own (restartable, with the
garbage collector): another field manager editing our objects, a watch resumed with a compacted
resourceVersion (410), an API-server restart in the middle of a burst, a Karta deleted while its
workloads exist (and, with the Workload API, renaming a gang: an immutable change, replaced or
reported), a CRD deleted and re-created. After each fault the group objects are exactly the
plan: nothing lost, duplicated or stale."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from karta.crd import load_crd
from karta.definitions import StoredDefinition
from karta.errors import ApiError
from karta.kube import KubeClient
from karta.model import load_karta
from karta.model.gvk import GroupKind

from ..conftest import REPO, _controlplane, etcd_request
from ..kubehttp import KubeHTTP, from_kubeconfig, load_manifests
from ..nodes import dedicated_node
from .gangs_support import (
    client_for,
    events_for,
    eventually,
    expected_objects,
    gangs_of,
    group_objects,
    install_crds,
    matches_plan,
    metric,
    new_namespace,
    pytorchjob,
    running_controller,
    wait_served,
)

BACKEND = "volcano"
PYTORCHJOBS = "pytorchjobs.kubeflow.org"
PYTORCH_GVK = ("kubeflow.org", "v1", "PyTorchJob")


@dataclass
class Private:
    cp: Any
    http: KubeHTTP
    kube: KubeClient

    def restart_apiserver(self, between: Any = None) -> KubeClient:
        """Stop and start kube-apiserver (``between()`` runs while it is down); a new client for the
        test's own requests (the old one's kept-alive connection went with the old server)."""
        self.cp.stop_apiserver()
        if between is not None:
            between()
        self.cp.start_apiserver()
        self.kube.close()
        self.kube = client_for(self.http)
        return self.kube

    def etcd(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return etcd_request(self.cp.etcd_port, path, body)


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Iterator[Private]:
    cp_mod = _controlplane()
    config = cp_mod.ControlPlaneConfig(bin_dir=cp_mod.build_binaries(), controllers=True)
    with cp_mod.ControlPlane(config=config, workdir=tmp_path_factory.mktemp("gangs-cp")) as cp:
        http = from_kubeconfig(cp.kubeconfig, scratch=tmp_path_factory.mktemp("gangs-credentials"))
        install_crds(http, corpus)
        http.ensure_crd(load_crd())
        kube = client_for(http)
        wait_served(kube, [PYTORCH_GVK, ("scheduling.volcano.sh", "v1beta1", "PodGroup")])
        yield Private(cp, http, kube)
        kube.close()


@pytest.fixture
def ns(private: Private) -> Iterator[str]:
    name = new_namespace(private.http)
    yield name
    private.http.delete(f"/api/v1/namespaces/{name}")


def _plan_of(kube: KubeClient, ns: str, names: list[str], **kw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in names:
        out.extend(expected_objects(kube, kube.get(PYTORCHJOBS, name, namespace=ns), backend=BACKEND, **kw))
    return out


def _converged(kube: KubeClient, ns: str, names: list[str], **kw: Any) -> None:
    """Eventually exactly the plan of the PyTorchJobs ``names`` (re-read each time: uids, sizes)."""
    eventually(
        lambda: matches_plan(kube, BACKEND, ns, _plan_of(kube, ns, names, **kw)),
        what=f"group objects of {names} equal to the plan",
    )


def _controller(private: Private, ns: str, tmp_path: Path, **kw: Any) -> Any:
    return running_controller(private.http, backend=BACKEND, namespace=ns, definitions_dir=tmp_path, **kw)


def test_another_field_manager_is_reverted_and_deleted_objects_come_back(
    private: Private, ns: str, tmp_path: Path
) -> None:
    kube = private.kube
    with _controller(private, ns, tmp_path):
        kube.create(pytorchjob("edited"), namespace=ns)
        _converged(kube, ns, ["edited"])
        (group,) = group_objects(kube, BACKEND, ns)
        path = f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{ns}/podgroups/{group['metadata']['name']}"
        answer = private.http.request(
            "PATCH",
            path,
            body={"spec": {"minMember": 1, "minTaskMember": {"intruder": 3}, "priorityClassName": "x"}},
            params={"fieldManager": "intruder"},
            content_type="application/merge-patch+json",
        )
        assert answer.status == 200, answer.body
        _converged(kube, ns, ["edited"])  # our minMember is back
        live = private.http.get(path).json()
        assert live["spec"]["priorityClassName"] == "x"  # a field we never set stays the intruder's
        managers = {m["manager"] for m in live["metadata"]["managedFields"]}
        assert "karta" in managers

        private.http.delete(path)
        _converged(kube, ns, ["edited"])  # re-created


def _etcd_key(ns: str, name: str) -> str:
    return base64.b64encode(f"/registry/kubeflow.org/pytorchjobs/{ns}/{name}".encode()).decode()


def test_a_change_missed_while_the_watch_expired_is_found_by_the_relist(
    private: Private, ns: str, tmp_path: Path
) -> None:
    """The API server goes away; meanwhile the workload changes in etcd and etcd is compacted past
    the informer's resourceVersion. The watch resumes with that version, gets 410 Gone, lists
    again, and the re-list's difference brings the change to the reconciler."""
    kube = private.kube
    with _controller(private, ns, tmp_path) as ctl:
        kube.create(pytorchjob("expired", workers=2), namespace=ns)
        _converged(kube, ns, ["expired"])
        stored = kube.get(PYTORCHJOBS, "expired", namespace=ns)
        watched = gangs_of(ctl)._types[GroupKind("kubeflow.org", "PyTorchJob")]
        (watch,) = watched.watches.values()
        informer = watch.informer
        assert informer._watch is not None
        expired_before = informer._watch.stats.expired

        def change_and_compact() -> None:
            stored["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 5
            stored["metadata"].pop("resourceVersion", None)
            stored["metadata"]["generation"] = int(stored["metadata"].get("generation", 1)) + 1
            value = base64.b64encode(json.dumps(stored).encode()).decode()
            put = private.etcd("/v3/kv/put", {"key": _etcd_key(ns, "expired"), "value": value})
            revision = int(put["header"]["revision"])
            private.etcd("/v3/kv/compaction", {"revision": revision, "physical": True})

        kube = private.restart_apiserver(between=change_and_compact)

        assert (
            kube.get(PYTORCHJOBS, "expired", namespace=ns)["spec"]["pytorchReplicaSpecs"]["Worker"][
                "replicas"
            ]
            == 5
        )
        _converged(kube, ns, ["expired"])
        (group,) = group_objects(kube, BACKEND, ns)
        assert group["spec"]["minMember"] == 6
        eventually(
            lambda: informer._watch is not None and informer._watch.stats.expired > expired_before,
            what="the informer's watch answered 410 and re-listed",
        )


def test_apiserver_restart_in_the_middle_of_a_burst(private: Private, ns: str, tmp_path: Path) -> None:
    kube = private.kube
    names = [f"burst-{i}" for i in range(24)]
    with _controller(private, ns, tmp_path):
        for i, name in enumerate(names[:16]):
            kube.create(pytorchjob(name, workers=1 + i % 4), namespace=ns)
        kube = private.restart_apiserver()
        for i, name in enumerate(names[16:]):
            kube.create(pytorchjob(name, workers=2 + i % 3), namespace=ns)
        for name in names[:4]:  # scaled after the restart
            scale = {"spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 7}}}}
            kube.patch(PYTORCHJOBS, name, scale, namespace=ns)
        _converged(kube, ns, names)
        assert len(group_objects(kube, BACKEND, ns)) == len(names)


def _team_karta() -> tuple[dict[str, Any], StoredDefinition]:
    (doc,) = load_manifests(REPO / "examples" / "definitions" / "kubeflow-org-pytorchjob-v1.yaml")
    doc["metadata"] = {"name": "team-pytorchjob"}
    loaded = load_karta(json.dumps(doc))
    assert loaded.karta is not None, loaded.findings
    return doc, StoredDefinition(karta=loaded.karta, origin="cluster", source="cluster", trusted=False)


def test_a_deleted_karta_hands_its_workloads_to_the_catalog(
    private: Private, ns: str, tmp_path: Path
) -> None:
    """A cluster Karta (gang "job" with sub-groups) wins over the catalog (gang "pytorchjob"); once it
    is deleted the catalog's definition takes over: its objects are applied, the old ones deleted."""
    kube = private.kube
    doc, team = _team_karta()
    kube.create(doc)
    try:
        with _controller(private, ns, tmp_path, cluster_definitions=True) as ctl:
            kube.create(pytorchjob("handover"), namespace=ns)
            _converged(kube, ns, ["handover"], definition=team)
            (group,) = group_objects(kube, BACKEND, ns)
            assert group["metadata"]["name"] == "handover-job"
            assert group["metadata"]["annotations"]["run.ai/karta-name"] == "team-pytorchjob"
            assert group["spec"]["minTaskMember"] == {"master": 1, "worker": 4}

            kube.delete("kartas.run.ai", "team-pytorchjob")
            _converged(kube, ns, ["handover"])  # the catalog's plan, and nothing of the old one
            (group,) = group_objects(kube, BACKEND, ns)
            assert group["metadata"]["name"] == "handover-pytorchjob"
            assert group["metadata"]["annotations"]["run.ai/karta-name"] == "kubeflow-org-pytorchjob-v1"
            assert gangs_of(ctl).ready()
    finally:
        if kube.list("kartas.run.ai").items:
            kube.delete("kartas.run.ai", "team-pytorchjob")


def test_a_crd_deleted_and_recreated(private: Private, ns: str, tmp_path: Path, corpus: Path) -> None:
    """Deleting the CRD deletes its workloads and the reconciler stops watching the type;
    re-created, the type is watched again: the new workload gets its objects, and those of the old
    one are gone (the garbage collector removes them once it can tell that their owner is)."""
    kube = private.kube
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
    with _controller(private, ns, tmp_path) as ctl:
        gangs = gangs_of(ctl)
        kube.create(pytorchjob("before"), namespace=ns)
        _converged(kube, ns, ["before"])

        assert private.http.delete(crd_path).status == 200
        eventually(lambda: private.http.get(crd_path).status == 404, what="CRD gone")
        eventually(lambda: ("kubeflow.org", "PyTorchJob") not in gangs.watched_types(), what="type dropped")

        private.http.ensure_crd(crd)
        wait_served(kube, [PYTORCH_GVK])
        eventually(lambda: ("kubeflow.org", "PyTorchJob") in gangs.watched_types(), what="type watched again")
        kube.create(pytorchjob("after", workers=3), namespace=ns)
        _converged(kube, ns, ["after"])
        assert [o["metadata"]["name"] for o in group_objects(kube, BACKEND, ns)] == ["after-pytorchjob"]
        assert ctl.manager.ready()[0]


def test_a_crd_deleted_and_recreated_is_noticed_by_its_watch_not_the_periodic_read(
    private: Private, ns: str, tmp_path: Path, corpus: Path
) -> None:
    """With the periodic read of the types switched off, only the CRD watch can tell the reconciler
    that the PyTorchJob type went away and came back: its workloads get their objects anyway."""
    kube = private.kube
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
    with _controller(private, ns, tmp_path) as ctl:
        gangs = gangs_of(ctl)
        eventually(lambda: ("kubeflow.org", "PyTorchJob") in gangs.watched_types(), what="type watched")
        gangs.types_interval = 3600.0  # from now on, the CRD watch is the only trigger
        assert private.http.delete(crd_path).status == 200
        eventually(lambda: ("kubeflow.org", "PyTorchJob") not in gangs.watched_types(), what="type dropped")
        private.http.ensure_crd(crd)
        wait_served(kube, [PYTORCH_GVK])
        eventually(lambda: ("kubeflow.org", "PyTorchJob") in gangs.watched_types(), what="type watched again")
        kube.create(pytorchjob("late"), namespace=ns)
        _converged(kube, ns, ["late"])


def _templates(kube: KubeClient, ns: str, name: str) -> list[str]:
    """The template names of Workload ``name`` (none while it does not exist)."""
    try:
        workload = kube.get("workloads.scheduling.k8s.io", name, namespace=ns)
    except ApiError as exc:
        if exc.status != 404:
            raise
        return []
    return [t["name"] for t in workload["spec"]["podGroupTemplates"]]


def test_an_immutable_change_replaces_the_object_while_no_pod_is_bound(
    private: Private, ns: str, tmp_path: Path
) -> None:
    """The Workload API: a definition handover renames the gang (the team Karta's "job", the
    catalog's "pytorchjob"), and a Workload's set of template names is immutable (1.37.2: "item
    may not be added"). The PyTorchJob with no pod bound gets its Workload replaced (deleted and
    created, event GangObjectReplaced); the one with a bound pod keeps its Workload, reported
    (GangImmutableChange, karta_gang_immutable_changes_total), until its pod is gone and it is
    reconciled again."""
    kube, backend = private.kube, "workload-api"
    doc, _ = _team_karta()
    kube.create(doc)
    node = f"handover-{ns}"
    dedicated_node(private.http, node, selector={"karta-e2e-handover": ns}, gpus=8)
    try:
        with running_controller(
            private.http, backend=backend, namespace=ns, definitions_dir=tmp_path, cluster_definitions=True
        ) as ctl:
            idle = kube.create(pytorchjob("idle"), namespace=ns)
            running = kube.create(pytorchjob("running"), namespace=ns)
            for job in (idle, running):
                name = job["metadata"]["name"]
                eventually(lambda n=name: _templates(kube, ns, n) == ["job"], what=f"{name}'s team Workload")
            owner = {
                "apiVersion": "kubeflow.org/v1",
                "kind": "PyTorchJob",
                "name": "running",
                "uid": running["metadata"]["uid"],
                "controller": True,
            }
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": "running-master-0",
                    "labels": {"training.kubeflow.org/job-name": "running"},
                    "ownerReferences": [owner],
                },
                "spec": {"nodeName": node, "containers": [{"name": "pytorch", "image": "busybox"}]},
            }
            kube.create(pod, namespace=ns)  # bound at creation (no kubelet: it stays so)

            kube.delete("kartas.run.ai", "team-pytorchjob")
            eventually(
                lambda: _templates(kube, ns, "idle") == ["pytorchjob"], what="idle's Workload replaced"
            )
            (replaced,) = eventually(  # reported once the whole sync is done
                lambda: events_for(kube, ns, "idle", "GangObjectReplaced"), what="idle's replacement reported"
            )
            assert "Workload/idle" in replaced["message"]
            assert metric(ctl, "karta_gang_objects_total", {"backend": backend, "outcome": "replaced"}) >= 1

            (kept,) = eventually(
                lambda: events_for(kube, ns, "running", "GangImmutableChange"),
                what="running's change reported",
            )
            assert "kept: pods running-master-0 hold it" in kept["message"]
            assert _templates(kube, ns, "running") == ["job"]
            assert metric(ctl, "karta_gang_immutable_changes_total", {"backend": backend}) >= 1
            assert not events_for(kube, ns, "running", "GangObjectReplaced")

            # The pod goes; the next reconcile (here a change of the workload) replaces it.
            gone = private.http.request(
                "DELETE", f"/api/v1/namespaces/{ns}/pods/running-master-0", body={"gracePeriodSeconds": 0}
            )
            assert gone.status == 200, gone.body  # at once: no kubelet confirms a graceful deletion
            eventually(lambda: not kube.list("pods", namespace=ns).items, what="the pod gone")
            kube.patch(PYTORCHJOBS, "running", {"metadata": {"labels": {"touched": "1"}}}, namespace=ns)
            eventually(
                lambda: _templates(kube, ns, "running") == ["pytorchjob"], what="running's Workload replaced"
            )
    finally:
        if kube.list("kartas.run.ai").items:
            kube.delete("kartas.run.ai", "team-pytorchjob")
        private.http.delete(f"/api/v1/nodes/{node}")
