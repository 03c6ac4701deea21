"""The proof that gangs per replica work (issue 22 item 8, format extension E1 ``podGroup.split``):
kube-scheduler 1.37 binds each LeaderWorkerSet group, and each replicated job of an InOrder JobSet,
all or nothing and independently of the others.

The fixtures are those of test_gang_scheduling.py: ``controllers_cluster`` (kube-scheduler with the
GangScheduling plugin, kube-controller-manager, no kubelet, no StatefulSet controller), Nodes as plain
objects, ``karta-controller --backend workload-api --enable-webhook`` in-process with the default
``--gang-scope opt-in``, its pod webhook registered fail-closed with the scope's namespaceSelector,
and the workloads' namespace labelled ``karta.run.ai/gang-scheduling=enabled``.

- the API server and the scheduler take a PodGroup's own ``minCount`` when it differs from its
  Workload template's (E1 gives every replica a PodGroup of one template);
- the catalog's LeaderWorkerSet, 3 groups of 4 (CRD of the corpus; no LWS operator runs, so the test
  creates the leader StatefulSet, the leader pods, each group's worker StatefulSet and its pods with
  the labels and owner references LWS and its pod webhook give them) on Nodes with room for 9 pods:
  exactly 2 groups (8 pods) bound, no pod of the third; a Node with room for 3 more: the third binds;
- the corpus's InOrder JobSet (``jobset/startup-driver-ready.yaml``): the test creates the Jobs as
  JobSet does (labels, controller reference) and kube-controller-manager's Job controller their pods.
  The driver's gang binds while no worker pod exists; the workers' gang is held on room for 3 of its
  4 pods and binds once a Node adds the fourth.
"""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from karta.controller.main import Controller
from karta.gang.scope import ENABLED, SCOPE_LABEL

from ..kubehttp import KubeHTTP, controller_ref, load_manifests
from ..nodes import pin
from .gangs_support import leaderworkerset
from .pods_support import (
    bound,
    fake_node,
    namespace,
    ok,
    pods,
    registered_webhook,
    running_controller,
    wait,
    wait_webhook_active,
    webhook_url,
)

pytestmark = pytest.mark.slow

HOLD_S = 8.0  # as test_gang_scheduling.py: how long a gang that does not fit is watched
SCHEDULING = "/apis/scheduling.k8s.io/v1beta1"
LWS_API = "leaderworkerset.x-k8s.io/v1"
LWS_LABEL = "leaderworkerset.sigs.k8s.io"
JOBSET_LABEL = "jobset.sigs.k8s.io"


@dataclass
class Env:
    kube: KubeHTTP
    controller: Controller
    ns: str  # opted in
    plain_ns: str  # outside the scope and the webhook
    run: str
    nodes: list[str] = field(default_factory=list)

    def node(self, role: str, *, cpu: str) -> dict[str, str]:
        """A Node with room for ``cpu`` one-CPU pods, dedicated to the pods pinned to ``role``."""
        labels = {"karta-e2e-gang": f"{role}-{self.run}"}
        name = f"replica-{role}-{self.run}-{len(self.nodes)}"
        fake_node(self.kube, name, labels, cpu=cpu)
        self.nodes.append(name)
        return labels

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return ok(self.kube.post(f"{path}/namespaces/{self.ns}/{body['kind'].lower()}s", body))


@pytest.fixture(scope="module")
def env(
    controllers_cluster: KubeHTTP, tmp_path_factory: pytest.TempPathFactory, corpus: Path
) -> Iterator[Env]:
    kube = controllers_cluster
    for crd in ("leaderworkerset.x-k8s.io_leaderworkersets.yaml", "jobset.x-k8s.io_jobsets.yaml"):
        (manifest,) = load_manifests(corpus / "crds" / crd)
        kube.ensure_crd(manifest)
    ns = namespace(kube, "replica-gangs", {SCOPE_LABEL: ENABLED})
    plain_ns = namespace(kube, "replica-plain")
    workdir = tmp_path_factory.mktemp("replica-gang-controller")
    with running_controller(kube, workdir, backend="workload-api", gang_scope="opt-in") as (controller, ca):
        for group, version, kind in (
            ("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
            ("jobset.x-k8s.io", "v1alpha2", "JobSet"),
        ):
            wait(
                f"{kind} in discovery",
                lambda g=group, v=version, k=kind: (
                    controller.client.discovery.invalidate() or controller.client.discovery.find(g, v, k)
                ),
                timeout=60,
            )
        with registered_webhook(
            kube,
            url=webhook_url(controller),
            ca=ca,
            namespaces=(ns, plain_ns),
            failure_policy="Fail",
            scope="opt-in",
        ):
            wait_webhook_active(kube, controller, ns)
            e = Env(kube, controller, ns, plain_ns, uuid.uuid4().hex[:6])
            try:
                yield e
            finally:
                for node in e.nodes:
                    kube.delete(f"/api/v1/nodes/{node}")
                for name in (ns, plain_ns):
                    kube.delete(f"/api/v1/namespaces/{name}")


def _container(cpu: str = "1") -> dict[str, Any]:
    return {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}


def _tried(pod: dict[str, Any]) -> bool:
    """The scheduler tried the pod and found it unschedulable (PodScheduled False)."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c["type"] == "PodScheduled" and c["status"] == "False" for c in conditions)


def _pod_groups(kube: KubeHTTP, ns: str) -> dict[str, dict[str, Any]]:
    items = kube.get(f"{SCHEDULING}/namespaces/{ns}/podgroups").json()["items"]
    return {g["metadata"]["name"]: g for g in items}


# -- the PodGroup's own minimum -------------------------------------------------------------------


def test_a_pod_group_minimum_other_than_its_template_is_accepted_and_scheduled(env: Env) -> None:
    """E1 writes one Workload template per gang shape and one PodGroup per replica, whose minimum may
    differ from the template's (a JobSet's driver and workers, or a scale change). The API server
    accepts such PodGroups, and kube-scheduler holds and binds by the PodGroup's own minCount."""
    kube, ns = env.kube, env.plain_ns
    ok(
        kube.post(
            f"{SCHEDULING}/namespaces/{ns}/workloads",
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "Workload",
                "metadata": {"name": "shape"},
                "spec": {
                    "controllerRef": {"apiGroup": "example.com", "kind": "Shape", "name": "shape"},
                    "podGroupTemplates": [{"name": "t", "schedulingPolicy": {"gang": {"minCount": 4}}}],
                },
            },
        )
    )
    for name, minimum in (("lower", 3), ("higher", 9)):
        created = ok(
            kube.post(
                f"{SCHEDULING}/namespaces/{ns}/podgroups",
                {
                    "apiVersion": "scheduling.k8s.io/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": name},
                    "spec": {
                        "workloadRef": {"workloadName": "shape", "templateName": "t"},
                        "schedulingPolicy": {"gang": {"minCount": minimum}},
                    },
                },
            )
        )
        assert created["spec"]["schedulingPolicy"] == {"gang": {"minCount": minimum}}
    labels = env.node("minimum", cpu="8")
    for group in ("lower", "higher"):
        for index in range(3):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{group}-{index}", "labels": {"group": group}},
                "spec": pin(
                    {
                        "schedulingGroup": {"podGroupName": group},
                        "terminationGracePeriodSeconds": 0,
                        "containers": [_container()],
                    },
                    labels,
                ),
            }
            ok(kube.post(f"/api/v1/namespaces/{ns}/pods", pod))
    # minCount 3 < template 4: the 3 pods bind; minCount 9 > template 4: its 3 pods wait.
    wait(
        "the PodGroup of minCount 3 bound", lambda: len(bound(pods(kube, ns, "group=lower"))) == 3, timeout=60
    )
    # A gang short of pods is never tried (no PodScheduled condition): watched, none may bind.
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        assert bound(pods(kube, ns, "group=higher")) == [], "pods of a PodGroup of minCount 9 were bound"
        time.sleep(0.5)
    print("\nPodGroup minCount 3 and 9 of a template of minCount 4: accepted; 3/3 bound and 0/3 held")


# -- LeaderWorkerSet: one gang per group ----------------------------------------------------------


def _lws(name: str, node_labels: dict[str, str], *, replicas: int, size: int) -> dict[str, Any]:
    """gangs_support's LWS, its pods pinned to the test's Nodes with one CPU each."""
    spec = {"terminationGracePeriodSeconds": 0, "containers": [_container()]}
    return leaderworkerset(name, replicas=replicas, size=size, worker_spec=pin(spec, node_labels))


def _lws_statefulset(
    lws: dict[str, Any],
    owner: dict[str, Any],
    name: str,
    *,
    replicas: int,
    selector: dict[str, str],
    start: int,
) -> dict[str, Any]:
    """A StatefulSet as LWS builds it (leaderworkerset_controller.go for the leaders, pod_controller.go
    constructWorkerStatefulSetApplyConfiguration for a group's workers)."""
    template = copy.deepcopy(lws["spec"]["leaderWorkerTemplate"]["workerTemplate"])
    template["metadata"] = {"labels": dict(selector)}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "labels": dict(selector), "ownerReferences": [controller_ref(owner)]},
        "spec": {
            "replicas": replicas,
            "serviceName": lws["metadata"]["name"],
            "podManagementPolicy": "Parallel",
            "ordinals": {"start": start},
            "selector": {"matchLabels": selector},
            "template": template,
        },
    }


def _lws_pod(
    lws: dict[str, Any], owner: dict[str, Any], name: str, *, group: int, worker: int, ordinal: int
) -> dict[str, Any]:
    """A pod as its StatefulSet creates it, with the labels LWS's pod webhook adds (group-index,
    worker-index, group-key) and the controller reference to the StatefulSet."""
    lws_name = lws["metadata"]["name"]
    size = lws["spec"]["leaderWorkerTemplate"]["size"]
    spec = copy.deepcopy(lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {
                f"{LWS_LABEL}/name": lws_name,
                f"{LWS_LABEL}/group-index": str(group),
                f"{LWS_LABEL}/worker-index": str(worker),
                f"{LWS_LABEL}/group-key": f"k{group}",
                f"{LWS_LABEL}/template-revision-hash": "r1",
                "statefulset.kubernetes.io/pod-name": name,
                "apps.kubernetes.io/pod-index": str(ordinal),
            },
            "annotations": {f"{LWS_LABEL}/size": str(size)},
            "ownerReferences": [controller_ref(owner)],
        },
        "spec": {**spec, "hostname": name, "subdomain": lws_name},
    }


def _create_lws_group_pods(env: Env, lws: dict[str, Any]) -> None:
    """What LWS does for a set of ``replicas`` groups of ``size``: the leader StatefulSet, its pods
    (one leader per group), then each group's worker StatefulSet (owned by the leader pod, ordinals
    from 1) and its size-1 worker pods."""
    api = "/apis/apps/v1"
    name = lws["metadata"]["name"]
    replicas, size = lws["spec"]["replicas"], lws["spec"]["leaderWorkerTemplate"]["size"]
    leader_selector = {f"{LWS_LABEL}/name": name, f"{LWS_LABEL}/worker-index": "0"}
    leaders = env.create(
        api, _lws_statefulset(lws, lws, name, replicas=replicas, selector=leader_selector, start=0)
    )
    for g in range(replicas):
        leader = env.create("/api/v1", _lws_pod(lws, leaders, f"{name}-{g}", group=g, worker=0, ordinal=g))
        selector = {
            f"{LWS_LABEL}/name": name,
            f"{LWS_LABEL}/group-index": str(g),
            f"{LWS_LABEL}/group-key": f"k{g}",
        }
        workers = env.create(
            api, _lws_statefulset(lws, leader, f"{name}-{g}", replicas=size - 1, selector=selector, start=1)
        )
        for w in range(1, size):
            env.create("/api/v1", _lws_pod(lws, workers, f"{name}-{g}-{w}", group=g, worker=w, ordinal=w))


def _groups_bound(items: list[dict[str, Any]]) -> dict[str, int]:
    """{group-index: pods bound} for the pods of an LWS."""
    out: dict[str, int] = {}
    for pod in items:
        group = pod["metadata"]["labels"][f"{LWS_LABEL}/group-index"]
        out[group] = out.get(group, 0) + (1 if pod["spec"].get("nodeName") else 0)
    return out


def test_lws_groups_are_held_and_released_group_by_group(env: Env) -> None:
    kube, ns = env.kube, env.ns
    selector = f"{LWS_LABEL}/name=serve"
    node_labels = env.node("lws", cpu="5")
    env.node("lws", cpu="4")  # room for 9 one-CPU pods on two Nodes
    lws = env.create("/apis/leaderworkerset.x-k8s.io/v1", _lws("serve", node_labels, replicas=3, size=4))

    # The reconciler writes one PodGroup per group, minimum size, before any pod exists.
    def three_groups() -> dict[str, dict[str, Any]] | None:
        groups = _pod_groups(kube, ns)
        return groups if len(groups) == 3 else None

    groups = wait("one PodGroup per LWS group", three_groups, timeout=60)
    assert {g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in groups.values()} == {4}
    (workload,) = kube.get(f"{SCHEDULING}/namespaces/{ns}/workloads").json()["items"]
    assert len(workload["spec"]["podGroupTemplates"]) == 1  # one template, a PodGroup per group

    _create_lws_group_pods(env, lws)
    wait("12 pods", lambda: len(pods(kube, ns, selector)) == 12)
    items = pods(kube, ns, selector)
    by_group: dict[str, set[str]] = {}
    for pod in items:
        group = pod["metadata"]["labels"][f"{LWS_LABEL}/group-index"]
        by_group.setdefault(group, set()).add(pod["spec"]["schedulingGroup"]["podGroupName"])
    assert all(len(names) == 1 for names in by_group.values()), by_group  # a group's pods share one gang
    assert {n for names in by_group.values() for n in names} == set(groups), by_group  # each its own

    def two_groups_and_the_third_tried() -> dict[str, int] | None:
        got = pods(kube, ns, selector)
        per_group = _groups_bound(got)
        waiting = [p for p in got if not p["spec"].get("nodeName")]
        done = (
            sorted(per_group.values()) == [0, 4, 4] and len(waiting) == 4 and all(_tried(p) for p in waiting)
        )
        return per_group if done else None

    wait("2 groups bound and the third tried", two_groups_and_the_third_tried, timeout=90)
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        per_group = _groups_bound(pods(kube, ns, selector))
        assert sorted(per_group.values()) == [0, 4, 4], f"a group was placed in part: {per_group}"
        time.sleep(0.5)
    held = next(g for g, n in per_group.items() if n == 0)

    env.node("lws", cpu="3")  # 1 + 3: room for the third group
    started = time.monotonic()
    wait(
        "the third group bound",
        lambda: sorted(_groups_bound(pods(kube, ns, selector)).values()) == [4, 4, 4],
        timeout=90,
    )
    print(
        f"\nLWS 3 groups x 4 on room for 9: groups bound 4/4/0 for {HOLD_S:g}s (group {held} held); "
        f"group {held} bound {time.monotonic() - started:.1f}s after a Node with room for 3"
    )


# -- JobSet InOrder: one gang per replicated job --------------------------------------------------


def _jobset(corpus: Path, node_labels: dict[str, str]) -> dict[str, Any]:
    """The corpus's InOrder JobSet, its pod templates pinned to the test's Nodes with one CPU each and
    restartPolicy OnFailure (what JobSet's webhook defaults; a Job needs Never or OnFailure)."""
    (obj,) = load_manifests(corpus / "workloads" / "jobset" / "startup-driver-ready.yaml")
    for rj in obj["spec"]["replicatedJobs"]:
        pod = rj["template"]["spec"]["template"]["spec"]
        pod["restartPolicy"] = "OnFailure"
        pod["terminationGracePeriodSeconds"] = 0
        for container in pod["containers"]:
            container["resources"] = {"requests": {"cpu": "1", "memory": "64Mi"}}
        rj["template"]["spec"]["template"]["spec"] = pin(pod, node_labels)
    return obj


def _jobset_job(jobset: dict[str, Any], rj_index: int) -> dict[str, Any]:
    """Job 0 of a replicated job as JobSet builds it (jobset_controller.go constructJob,
    labelAndAnnotateObject: the labels on the Job and on its pod template; the controller reference)."""
    name = jobset["metadata"]["name"]
    rj = jobset["spec"]["replicatedJobs"][rj_index]
    job_name = f"{name}-{rj['name']}-0"
    labels = {
        f"{JOBSET_LABEL}/jobset-name": name,
        f"{JOBSET_LABEL}/jobset-uid": jobset["metadata"]["uid"],
        f"{JOBSET_LABEL}/replicatedjob-name": rj["name"],
        f"{JOBSET_LABEL}/replicatedjob-replicas": str(rj.get("replicas", 1)),
        f"{JOBSET_LABEL}/job-index": "0",
        f"{JOBSET_LABEL}/job-global-index": str(rj_index),
        f"{JOBSET_LABEL}/restart-attempt": "0",
    }
    spec = copy.deepcopy(rj["template"]["spec"])
    spec["template"]["metadata"] = {"labels": dict(labels)}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name, "labels": labels, "ownerReferences": [controller_ref(jobset)]},
        "spec": spec,
    }


def test_jobset_in_order_driver_gang_binds_before_the_workers_exist(env: Env, corpus: Path) -> None:
    kube, ns = env.kube, env.ns
    node_labels = env.node("jobset", cpu="4")  # the driver (1) and 3 of the 4 workers
    jobset = env.create("/apis/jobset.x-k8s.io/v1alpha2", _jobset(corpus, node_labels))
    name = jobset["metadata"]["name"]
    selector = f"{JOBSET_LABEL}/jobset-name={name}"

    def two_gangs() -> dict[str, int] | None:
        mins = {
            n: g["spec"]["schedulingPolicy"]["gang"]["minCount"] for n, g in _pod_groups(kube, ns).items()
        }
        mins = {n: m for n, m in mins.items() if n.startswith(name)}
        return mins if len(mins) == 2 else None

    minimums = wait("the driver's and the workers' PodGroups", two_gangs, timeout=60)
    assert sorted(minimums.values()) == [1, 4], minimums

    # JobSet creates the driver's Job first; kube-controller-manager creates its pod.
    env.create("/apis/batch/v1", _jobset_job(jobset, 0))
    driver = wait(
        "the driver's pod bound",
        lambda: (lambda got: got if len(got) == 1 and bound(got) else None)(pods(kube, ns, selector)),
        timeout=90,
    )
    driver_gang = driver[0]["spec"]["schedulingGroup"]["podGroupName"]
    assert minimums[driver_gang] == 1
    assert [
        p["metadata"]["labels"][f"{JOBSET_LABEL}/replicatedjob-name"] for p in pods(kube, ns, selector)
    ] == ["driver"]  # the driver's gang bound with no worker pod in existence

    # The driver is ready (InOrder): JobSet creates the workers' Job, on room for 3 of its 4 pods.
    env.create("/apis/batch/v1", _jobset_job(jobset, 1))
    workers_selector = f"{selector},{JOBSET_LABEL}/replicatedjob-name=workers"
    wait("4 worker pods", lambda: len(pods(kube, ns, workers_selector)) == 4)
    wait(
        "the scheduler to try the workers",
        lambda: all(_tried(p) for p in pods(kube, ns, workers_selector)),
        timeout=60,
    )
    workers = pods(kube, ns, workers_selector)
    (workers_gang,) = {p["spec"]["schedulingGroup"]["podGroupName"] for p in workers}
    assert workers_gang != driver_gang and minimums[workers_gang] == 4
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        assert bound(pods(kube, ns, workers_selector)) == [], "part of the workers' gang was bound"
        time.sleep(0.5)

    env.node("jobset", cpu="1")
    started = time.monotonic()
    wait("the workers' gang bound", lambda: len(bound(pods(kube, ns, workers_selector))) == 4, timeout=90)
    print(
        f"\nJobSet InOrder: driver 1/1 bound with no worker pod; workers 0/4 for {HOLD_S:g}s on room "
        f"for 3, 4/4 bound {time.monotonic() - started:.1f}s after one more Node"
    )
