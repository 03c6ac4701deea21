"""The gang reconciler (mode B) against the real API server, for KAI, Volcano, coscheduling and the
Workload API: the group objects of a PyTorchJob and of a JobSet appear with our labels, annotation
and ownerReference, follow scale changes in place on every backend,
and go with the workload by garbage collection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.kube import KubeClient

from ..kubehttp import KubeHTTP
from .gangs_support import (
    GROUP_RESOURCES,
    SERVED,
    alpha_jobset_definitions,
    client_for,
    events_for,
    eventually,
    expected_objects,
    gangs_of,
    group_objects,
    install_crds,
    jobset,
    jobset_pod,
    leaderworkerset,
    matches_plan,
    metric,
    metric_total,
    new_namespace,
    pytorchjob,
    ray_pod,
    raycluster,
    running_controller,
    served_kube,
    wait_served,
)

PYTORCHJOBS = "pytorchjobs.kubeflow.org"
JOBSET_LABELS = {"group": "jobset.x-k8s.io", "kind": "JobSet"}
BACKENDS = ("kai", "volcano", "coscheduling", "workload-api")


@pytest.fixture(scope="module")
def kube(cluster: KubeHTTP, corpus: Path) -> Iterator[KubeClient]:
    yield from served_kube(cluster, corpus)


def _create(kube: KubeClient, obj: dict[str, Any], ns: str) -> dict[str, Any]:
    return kube.create(obj, namespace=ns)


def _assert_common_rules(objects: list[dict[str, Any]], workload: dict[str, Any], definition: str) -> None:
    """docs/spec/gang-backends.md#object-rules: namespace, ownerReference, managed-by and Karta labels,
    annotation."""
    meta = workload["metadata"]
    group, _, version = workload["apiVersion"].rpartition("/")
    assert objects
    for obj in objects:
        got = obj["metadata"]
        assert got["namespace"] == meta["namespace"]
        labels = got["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "karta"
        assert labels["run.ai/karta-group"] == group
        assert labels["run.ai/karta-version"] == version
        assert labels["run.ai/karta-kind"] == workload["kind"]
        assert got["annotations"]["run.ai/karta-name"] == definition
        (ref,) = got["ownerReferences"]
        assert ref["uid"] == meta["uid"]
        assert (ref["apiVersion"], ref["kind"], ref["name"]) == (
            workload["apiVersion"],
            workload["kind"],
            meta["name"],
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_pytorchjob_objects_appear_and_follow_scale(
    backend: str, cluster: KubeHTTP, kube: KubeClient, ns: str, tmp_path: Path
) -> None:
    with running_controller(cluster, backend=backend, namespace=ns, definitions_dir=tmp_path) as ctl:
        job = _create(kube, pytorchjob("train", workers=4), ns)
        expected = expected_objects(kube, job, backend=backend)
        eventually(lambda: matches_plan(kube, backend, ns, expected), what="group objects of the PyTorchJob")
        _assert_common_rules(group_objects(kube, backend, ns), job, "kubeflow-org-pytorchjob-v1")
        # The platform metrics: one PyTorchJob; no operator runs, so no pods and no GPUs requested.
        pytorch = {"namespace": ns, "group": "kubeflow.org", "kind": "PyTorchJob"}
        eventually(lambda: metric_total(ctl, "karta_workloads", pytorch) == 1, what="karta_workloads")
        assert metric_total(ctl, "karta_workload_gpus_requested", pytorch) == 0
        assert metric_total(ctl, "karta_gang_objects_total", {"backend": backend, "outcome": "applied"}) >= 1
        if backend == "kai":  # mode B: KAI's own pod-grouper must leave the pods to our PodGroup
            got = kube.get("pytorchjobs.kubeflow.org", "train", namespace=ns)
            assert got["metadata"]["annotations"]["kai.scheduler/skip-podgrouper"] == "true"

        job = kube.patch(
            "pytorchjobs.kubeflow.org",
            "train",
            {"spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 6}}}},
            namespace=ns,
        )
        scaled = expected_objects(kube, job, backend=backend)
        # Every backend takes the new minimums in place (the Workload API's minCount is mutable in
        # v1beta1, "to support workload scaling"): nothing replaced, nothing reported.
        eventually(lambda: matches_plan(kube, backend, ns, scaled), what="group objects after scaling")
        assert metric(ctl, "karta_gang_immutable_changes_total", {"backend": backend}) == 0
        assert metric(ctl, "karta_gang_objects_total", {"backend": backend, "outcome": "replaced"}) == 0
        assert not events_for(kube, ns, "train", "GangImmutableChange")
        if backend == "workload-api":
            rtype = kube.discovery.for_gvk("scheduling.k8s.io", "v1beta1", "PodGroup")
            name = next(o for o in scaled if o["kind"] == "PodGroup")["metadata"]["name"]
            live = kube.get(rtype, name, namespace=ns)
            assert live["spec"]["schedulingPolicy"] == {"gang": {"minCount": 7}}


def _gang_minimums(objects: list[dict[str, Any]]) -> dict[str, int]:
    """{group object name: its minimum} of the backend's objects (the Workload API: its PodGroups)."""
    out: dict[str, int] = {}
    for obj in objects:
        spec = obj.get("spec") or {}
        if obj["kind"] == "Workload":
            continue
        if "schedulingPolicy" in spec:  # Workload API PodGroup
            out[obj["metadata"]["name"]] = spec["schedulingPolicy"]["gang"]["minCount"]
        else:  # KAI, Volcano, coscheduling
            out[obj["metadata"]["name"]] = spec["minMember"]
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_catalog_lws_gangs_per_group_follow_scale(
    backend: str, cluster: KubeHTTP, kube: KubeClient, ns: str, tmp_path: Path
) -> None:
    """The catalog's LeaderWorkerSet (issue 22): one gang per group of ``size``; a scale-up adds the
    new groups' gangs, a scale-down deletes the removed groups' objects."""
    lws = "leaderworkersets.leaderworkerset.x-k8s.io"
    with running_controller(cluster, backend=backend, namespace=ns, definitions_dir=tmp_path) as ctl:
        obj = _create(kube, leaderworkerset("serve", replicas=3, size=4), ns)
        for replicas in (3, 5, 2):
            if replicas != 3:
                obj = kube.patch(lws, "serve", {"spec": {"replicas": replicas}}, namespace=ns)
            expected = expected_objects(kube, obj, backend=backend)
            assert sorted(_gang_minimums(expected).values()) == [4] * replicas, expected
            eventually(
                lambda want=expected: matches_plan(kube, backend, ns, want),
                what=f"one gang per group at {replicas} groups",
            )
        _assert_common_rules(
            group_objects(kube, backend, ns), obj, "leaderworkerset-x-k8s-io-leaderworkerset-v1"
        )
        labels = {"group": "leaderworkerset.x-k8s.io", "kind": "LeaderWorkerSet"}
        assert metric(ctl, "karta_gang_render_errors_total", labels) == 0


def _release_terminating(kube: KubeClient, backend: str, ns: str) -> None:
    """What kube-controller-manager does once no pod names a deleted Workload API PodGroup: remove
    its ``podgroup-protection`` finalizer (the ``cluster`` fixture runs no controllers), so that a
    group object of the same name can be created again."""
    for api_version, plural in GROUP_RESOURCES[backend]:
        rtype = f"{plural}.{api_version.rpartition('/')[0]}"
        for obj in kube.list(rtype, namespace=ns).items:
            meta = obj["metadata"]
            if meta.get("deletionTimestamp") and meta.get("finalizers"):
                kube.patch(rtype, meta["name"], {"metadata": {"finalizers": None}}, namespace=ns)


@pytest.mark.parametrize("backend", BACKENDS)
def test_catalog_raycluster_multi_host_gangs_follow_the_replicas_kuberay_keeps(
    backend: str, cluster: KubeHTTP, kube: KubeClient, ns: str, tmp_path: Path
) -> None:
    """The catalog's RayCluster (issue 22): one gang per multi-host replica (numOfHosts pods), the
    head the cluster's gang. KubeRay deletes any replica on scale-down and gives a new one the lowest
    free index: the gangs follow the indexes the pods carry (split.indexes observed)."""
    rc_resource = "rayclusters.ray.io"
    with running_controller(cluster, backend=backend, namespace=ns, definitions_dir=tmp_path) as ctl:
        rc = _create(kube, raycluster("tpu", replicas=3, hosts=2), ns)

        def converge(pods: list[dict[str, Any]], minimums: list[int], what: str) -> dict[str, int]:
            eventually(lambda: len(kube.list("pods", namespace=ns).items) == len(pods) or None, what=what)
            expected = expected_objects(
                kube, kube.get(rc_resource, "tpu", namespace=ns), backend=backend, pods=pods
            )
            got = _gang_minimums(expected)
            assert sorted(got.values()) == minimums, (what, got)
            eventually(lambda: matches_plan(kube, backend, ns, expected), what=what)
            return got

        before = converge([], [1, 2, 2, 2], "the head's gang and replicas 0, 1, 2 before any pod")
        assert sorted(n[-1] for n in before if "-tpu-" in n) == ["0", "1", "2"]
        pods = [kube.create(ray_pod(rc), namespace=ns)]
        pods += [kube.create(ray_pod(rc, r, h), namespace=ns) for r in range(3) for h in range(2)]
        converge(pods, [1, 2, 2, 2], "every replica's hosts exist")
        # Scaled to 2: KubeRay deletes replica 0 (a random one) and keeps 1 and 2.
        rc = kube.patch(
            rc_resource,
            "tpu",
            {"spec": {"workerGroupSpecs": [{**rc["spec"]["workerGroupSpecs"][0], "replicas": 2}]}},
            namespace=ns,
        )
        for pod in pods[1:3]:
            kube.delete("pods", pod["metadata"]["name"], namespace=ns)
        pods = [pods[0], *pods[3:]]
        kept = converge(pods, [1, 2, 2], "replicas 1 and 2 keep their gangs, replica 0's is deleted")
        assert not any(n.endswith("-tpu-0") for n in kept), kept
        _release_terminating(kube, backend, ns)
        # Scaled to 3 again: the new replica will take the lowest free index, 0.
        kube.patch(
            rc_resource,
            "tpu",
            {"spec": {"workerGroupSpecs": [{**rc["spec"]["workerGroupSpecs"][0], "replicas": 3}]}},
            namespace=ns,
        )
        again = converge(pods, [1, 2, 2, 2], "the lowest free index 0 gets its gang before its pods")
        assert any(n.endswith("-tpu-0") for n in again), again
        _assert_common_rules(group_objects(kube, backend, ns), rc, "ray-io-raycluster-v1")
        assert metric(ctl, "karta_gang_render_errors_total", {"group": "ray.io", "kind": "RayCluster"}) == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_catalog_jobset_in_order_has_a_gang_per_replicated_job_before_any_pod(
    backend: str, cluster: KubeHTTP, kube: KubeClient, ns: str, tmp_path: Path
) -> None:
    """The catalog's JobSet with startupPolicyOrder InOrder (issue 22): the driver's gang and the
    workers' gang are both written before any pod exists (JobSet creates the workers' Jobs only once
    the driver is ready, so a whole-JobSet minimum would never be met)."""
    with running_controller(cluster, backend=backend, namespace=ns, definitions_dir=tmp_path) as ctl:
        js = _create(kube, jobset("ordered", workers=3, in_order=True), ns)
        expected = expected_objects(kube, js, backend=backend)
        minimums = _gang_minimums(expected)
        assert sorted(minimums.values()) == [1, 3], expected
        assert any(name.endswith("-jobset-driver") for name in minimums), minimums
        assert any(name.endswith("-jobset-workers") for name in minimums), minimums
        eventually(lambda: matches_plan(kube, backend, ns, expected), what="the driver's and workers' gangs")
        _assert_common_rules(group_objects(kube, backend, ns), js, "jobset-x-k8s-io-jobset-v1alpha2")
        assert metric(ctl, "karta_gang_render_errors_total", JOBSET_LABELS) == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_catalog_jobset_is_one_gang_before_any_pod(
    backend: str, cluster: KubeHTTP, kube: KubeClient, ns: str, tmp_path: Path
) -> None:
    """The catalog's JobSet: one gang for the whole JobSet, sized from the spec, written before any
    pod exists."""
    with running_controller(cluster, backend=backend, namespace=ns, definitions_dir=tmp_path) as ctl:
        js = _create(kube, jobset("whole", workers=2), ns)
        expected = expected_objects(kube, js, backend=backend)
        assert len([o for o in expected if o["kind"] != "Workload"]) == 1, expected
        eventually(lambda: matches_plan(kube, backend, ns, expected), what="the JobSet's one gang")
        _assert_common_rules(group_objects(kube, backend, ns), js, "jobset-x-k8s-io-jobset-v1alpha2")
        assert metric(ctl, "karta_gang_render_errors_total", JOBSET_LABELS) == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_alpha_gangs_come_from_the_pods(
    backend: str, cluster: KubeHTTP, kube: KubeClient, ns: str, tmp_path: Path
) -> None:
    """A definition in the alpha format (a JobSet gang per replicated job, found from the pods;
    from the definitions directory, over the catalog's): the Workload is there before any pod,
    sized from the definition, each gang appears with its pods and goes when they do."""
    alpha = alpha_jobset_definitions(tmp_path / "definitions")
    with running_controller(
        cluster, backend=backend, namespace=ns, definitions_dir=tmp_path / "definitions"
    ) as ctl:
        js = _create(kube, jobset("sweep", workers=2), ns)
        if backend == "workload-api":
            before = expected_objects(kube, js, backend=backend, definition=alpha)
            assert [o["kind"] for o in before] == ["Workload"]
            eventually(lambda: matches_plan(kube, backend, ns, before), what="Workload before the pods")
        pods = [
            kube.create(jobset_pod(js, "driver", 0), namespace=ns),
            kube.create(jobset_pod(js, "workers", 0), namespace=ns),
            kube.create(jobset_pod(js, "workers", 1), namespace=ns),
        ]
        expected = expected_objects(kube, js, backend=backend, definition=alpha, pods=pods)
        assert len([o for o in expected if o["kind"] != "Workload"]) == 2, expected
        eventually(lambda: matches_plan(kube, backend, ns, expected), what="group objects of the JobSet")
        _assert_common_rules(group_objects(kube, backend, ns), js, alpha.name)
        assert metric(ctl, "karta_gang_render_errors_total", JOBSET_LABELS) == 0

        # The driver's pod goes: its gang is stale once the grace for young alpha groups is over.
        gangs_of(ctl).alpha_stale_grace_s = 2.0
        kube.delete("pods", pods[0]["metadata"]["name"], namespace=ns)
        remaining = expected_objects(kube, js, backend=backend, definition=alpha, pods=pods[1:])
        assert len(remaining) == len(expected) - 1
        eventually(lambda: matches_plan(kube, backend, ns, remaining), what="the driver's gang deleted")
        assert metric(ctl, "karta_gang_objects_total", {"backend": backend, "outcome": "deleted"}) >= 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_suspended_workloads_keep_their_objects(
    backend: str, cluster: KubeHTTP, kube: KubeClient, ns: str, tmp_path: Path
) -> None:
    with running_controller(cluster, backend=backend, namespace=ns, definitions_dir=tmp_path):
        job = pytorchjob("paused", workers=3)
        job["spec"]["runPolicy"] = {"suspend": True}
        job = _create(kube, job, ns)
        expected = expected_objects(kube, job, backend=backend)
        eventually(lambda: matches_plan(kube, backend, ns, expected), what="objects of a suspended job")
        uids = {o["metadata"]["uid"] for o in group_objects(kube, backend, ns)}
        job = kube.patch(PYTORCHJOBS, "paused", {"spec": {"runPolicy": {"suspend": False}}}, namespace=ns)
        resumed = expected_objects(kube, job, backend=backend)
        eventually(lambda: matches_plan(kube, backend, ns, resumed), what="the objects once resumed")
        assert {o["metadata"]["uid"] for o in group_objects(kube, backend, ns)} == uids  # never re-created


def test_render_error_is_an_event_and_nothing_is_written(
    cluster: KubeHTTP, kube: KubeClient, ns: str, tmp_path: Path
) -> None:
    """A gang the backend cannot name (a JobSet pod whose group key, under the alpha definition,
    has upper case and "_": names are never rewritten) is a Warning event and a metric, and no
    object of the workload is written, not even the gang of its valid pods."""
    alpha_jobset_definitions(tmp_path / "definitions")
    with running_controller(
        cluster, backend="volcano", namespace=ns, definitions_dir=tmp_path / "definitions"
    ) as ctl:
        js = _create(kube, jobset("bad"), ns)
        pod = jobset_pod(js, "driver", 0)
        pod["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] = "Driver_X"
        kube.create(pod, namespace=ns)
        kube.create(jobset_pod(js, "workers", 0), namespace=ns)
        eventually(lambda: events_for(kube, ns, "bad", "GangRenderFailed"), what="render-failed event")
        assert metric(ctl, "karta_gang_render_errors_total", JOBSET_LABELS) >= 1
        assert group_objects(kube, "volcano", ns) == []


@pytest.fixture(scope="module")
def gc_kube(controllers_cluster: KubeHTTP, corpus: Path) -> Iterator[KubeClient]:
    install_crds(controllers_cluster, corpus)
    client = client_for(controllers_cluster)
    wait_served(client, SERVED)
    yield client
    client.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_deleting_the_workload_garbage_collects_its_objects(
    backend: str, controllers_cluster: KubeHTTP, gc_kube: KubeClient, tmp_path: Path
) -> None:
    kube = gc_kube
    ns = new_namespace(controllers_cluster)
    with running_controller(controllers_cluster, backend=backend, namespace=ns, definitions_dir=tmp_path):
        job = _create(kube, pytorchjob("gc"), ns)
        expected = expected_objects(kube, job, backend=backend)
        eventually(lambda: matches_plan(kube, backend, ns, expected), what="group objects")
        kube.delete("pytorchjobs.kubeflow.org", "gc", namespace=ns)
        eventually(lambda: group_objects(kube, backend, ns) == [], what="group objects collected")
    controllers_cluster.delete(f"/api/v1/namespaces/{ns}")
