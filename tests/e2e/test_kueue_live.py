"""The real Kueue of the test cluster (hack/kueue, ``kueue_cluster``), on its own and on the
external-framework path karta's controller uses: a ResourceFlavor, a ClusterQueue of 8 GPUs and a
LocalQueue; a batch/v1 Job (Kueue's own integration) is admitted and unsuspended with the flavor's
node labels; Workload objects created by hand as karta's controller creates them (owner: a
PyTorchJob, an external framework of the generated configuration) are admitted in turn, the
second pending with Kueue's message until the first is deleted. Also: the built-in frameworks
karta.kueue.config knows are those of the pinned Kueue, and Kueue serves its webhooks (admission
and CRD conversion) on loopback TLS, and the contract on preemption and completion: a preempted
external Workload keeps its quota until its owner's controller releases it; Finished releases it."""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.kueue.config import BUILTIN_FRAMEWORKS, kueue_configuration

from .conftest import hack_module
from .kubehttp import KubeHTTP, controller_ref, from_kubeconfig, load_manifests, ok, wait

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GPU = "nvidia.com/gpu"


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == kind), {})


def _admitted(obj: dict[str, Any]) -> bool:
    return _condition(obj, "Admitted").get("status") == "True"


class Queues:
    """A namespace with a LocalQueue on its own ClusterQueue (8 GPUs, 32 CPUs, 128Gi of one
    flavor whose nodes are labelled and tainted), removed afterwards."""

    def __init__(self, cluster: KubeHTTP) -> None:
        self.cluster = cluster
        suffix = uuid.uuid4().hex[:6]
        self.ns, self.flavor, self.cq, self.lq = f"kueue-{suffix}", f"gpu-{suffix}", f"cq-{suffix}", "team"
        self.node_labels = {"karta.test/gpu-flavor": self.flavor}
        self.toleration = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
        ok(
            cluster.post(
                "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.ns}}
            )
        )
        flavor = {"nodeLabels": self.node_labels, "tolerations": [self.toleration]}
        ok(cluster.post(f"{KUEUE}/resourceflavors", _kueue("ResourceFlavor", self.flavor, flavor)))
        quota = [{"name": "cpu", "nominalQuota": "32"}, {"name": "memory", "nominalQuota": "128Gi"},
                 {"name": GPU, "nominalQuota": "8"}]  # fmt: skip
        spec = {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": self.ns}},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", GPU],
                    "flavors": [{"name": self.flavor, "resources": quota}],
                }
            ],
        }
        ok(cluster.post(f"{KUEUE}/clusterqueues", _kueue("ClusterQueue", self.cq, spec)))
        local = {**_kueue("LocalQueue", self.lq, {"clusterQueue": self.cq}), "metadata": {"name": self.lq}}
        ok(cluster.post(f"{KUEUE}/namespaces/{self.ns}/localqueues", local))
        wait(
            "the ClusterQueue to be active",
            lambda: _condition(self.get_cq(), "Active").get("status") == "True",
        )

    def get_cq(self) -> dict[str, Any]:
        return ok(self.cluster.get(f"{KUEUE}/clusterqueues/{self.cq}"))

    def workloads(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = ok(self.cluster.get(f"{KUEUE}/namespaces/{self.ns}/workloads"))["items"]
        return items

    def workload(self, name: str) -> dict[str, Any]:
        return ok(self.cluster.get(f"{KUEUE}/namespaces/{self.ns}/workloads/{name}"))

    def close(self) -> None:
        self.cluster.delete(f"/api/v1/namespaces/{self.ns}")
        self.cluster.delete(f"{KUEUE}/clusterqueues/{self.cq}")
        self.cluster.delete(f"{KUEUE}/resourceflavors/{self.flavor}")


def _kueue(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": {"name": name}, "spec": spec}


@pytest.fixture
def queues(kueue_cluster: KubeHTTP) -> Iterator[Queues]:
    q = Queues(kueue_cluster)
    yield q
    q.close()


def _container(gpus: int) -> dict[str, Any]:
    requests = {"cpu": "1", "memory": "1Gi", GPU: str(gpus)}
    return {
        "name": "main",
        "image": "busybox",
        "resources": {"requests": requests, "limits": {GPU: str(gpus)}},
    }


def test_builtin_frameworks_are_the_pinned_kueues() -> None:
    """karta.kueue.config's table against Kueue's own default configuration at the pinned version
    (the module is in the Go module cache once hack/kueue/build.sh has run)."""
    module = hack_module("cluster/controlplane.py").addon_module_dir("kueue")
    default = yaml.safe_load(
        (module / "config/components/manager/controller_manager_config.yaml").read_text()
    )
    assert default["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert default["integrations"]["frameworks"] == [f.name for f in BUILTIN_FRAMEWORKS if f.default]
    jobs = module / "pkg" / "controller" / "jobs"
    for framework in BUILTIN_FRAMEWORKS:
        found = subprocess.run(
            ["grep", "-rl", "--include=*_controller.go", f'FrameworkName *= "{framework.name}"', str(jobs)],
            capture_output=True, text=True, check=False,
        ).stdout.split()  # fmt: skip
        assert len(found) == 1, framework.name
        source = Path(found[0]).read_text()
        # JobType: &<alias>.<Kind>{}, the alias imported from a package path ending in the version.
        assert "JobType:" in source and f".{framework.gvk.kind}{{}}" in source, framework
        assert f'/{framework.gvk.version}"' in source, framework


def test_a_native_batch_job_is_admitted_and_unsuspended(kueue_cluster: KubeHTTP, queues: Queues) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "native", "namespace": queues.ns, "labels": {QUEUE_LABEL: queues.lq}},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "template": {"spec": {"restartPolicy": "Never", "containers": [_container(4)]}},
        },
    }
    created = ok(kueue_cluster.post(f"/apis/batch/v1/namespaces/{queues.ns}/jobs", job))
    workload = wait(
        "the Job's Workload to be admitted", lambda: [w for w in queues.workloads() if _admitted(w)]
    )[0]
    assert workload["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    assert workload["spec"]["queueName"] == queues.lq
    assert _condition(workload, "QuotaReserved")["status"] == "True"
    (assignment,) = workload["status"]["admission"]["podSetAssignments"]
    assert workload["status"]["admission"]["clusterQueue"] == queues.cq
    assert assignment["count"] == 2
    assert assignment["flavors"] == {"cpu": queues.flavor, "memory": queues.flavor, GPU: queues.flavor}
    assert assignment["resourceUsage"][GPU] == "8"

    def resumed() -> dict[str, Any] | None:
        got = ok(kueue_cluster.get(f"/apis/batch/v1/namespaces/{queues.ns}/jobs/native"))
        return got if got["spec"].get("suspend") is False else None

    spec = wait("Kueue to unsuspend the Job", resumed)["spec"]["template"]["spec"]
    # Kueue's own integration writes the admitted flavor into the pod template.
    assert spec["nodeSelector"] == queues.node_labels
    assert queues.toleration in spec["tolerations"]
    # kube-controller-manager's Job controller now creates the pods.
    selector = {"labelSelector": "batch.kubernetes.io/job-name=native"}
    pods = wait(
        "the Job's pods",
        lambda: ok(kueue_cluster.get(f"/api/v1/namespaces/{queues.ns}/pods", params=selector))["items"],
    )
    assert pods[0]["spec"]["nodeSelector"] == queues.node_labels


def _pytorchjob(cluster: KubeHTTP, ns: str, name: str, queue: str) -> dict[str, Any]:
    """A suspended PyTorchJob of two 4-GPU workers (what karta's webhook will leave at creation)."""
    worker = {"replicas": 2, "template": {"spec": {"containers": [{**_container(4), "name": "pytorch"}]}}}
    body = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": ns, "labels": {QUEUE_LABEL: queue}},
        "spec": {"runPolicy": {"suspend": True}, "pytorchReplicaSpecs": {"Worker": worker}},
    }
    return ok(cluster.post(f"/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs", body))


def _workload_for(owner: dict[str, Any], queue: str) -> dict[str, Any]:
    """A Workload as karta's controller creates one: owned by the job, one PodSet per component."""
    template = owner["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    name = f"pytorchjob-{owner['metadata']['name']}"
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": owner["metadata"]["namespace"],
            # Kueue's label for the job's uid: kli describe finds a job's Workloads by it.
            "labels": {QUEUE_LABEL: queue, "kueue.x-k8s.io/job-uid": owner["metadata"]["uid"]},
            "ownerReferences": [controller_ref(owner)],
        },
        # priority 0 as karta.kueue.workload writes it without a class (Kueue's visibility API fails
        # for a pending Workload without spec.priority)
        "spec": {
            "queueName": queue,
            "priority": 0,
            "podSets": [{"name": "worker", "count": 2, "template": template}],
        },
    }


def test_external_framework_workloads_share_8_gpus_one_after_the_other(
    kueue_cluster: KubeHTTP, queues: Queues, corpus: Path
) -> None:
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    kueue_cluster.ensure_crd(crd)
    base = f"{KUEUE}/namespaces/{queues.ns}/workloads"
    first, second = (_pytorchjob(kueue_cluster, queues.ns, n, queues.lq) for n in ("first", "second"))
    ok(kueue_cluster.post(base, _workload_for(first, queues.lq)))
    admitted = wait(
        "the first Workload to be admitted", lambda: _admitted(w := queues.workload("pytorchjob-first")) and w
    )
    assert _condition(admitted, "QuotaReserved") | {"lastTransitionTime": None} == {
        "type": "QuotaReserved",
        "status": "True",
        "reason": "QuotaReserved",
        "message": f"Quota reserved in ClusterQueue {queues.cq}",
        "observedGeneration": 1,
        "lastTransitionTime": None,
    }
    assert _condition(admitted, "Admitted")["message"] == "The workload is admitted"
    assert admitted["status"]["admission"] == {
        "clusterQueue": queues.cq,
        "podSetAssignments": [
            {
                "name": "worker",
                "count": 2,
                "flavors": {"cpu": queues.flavor, "memory": queues.flavor, GPU: queues.flavor},
                "resourceUsage": {"cpu": "2", "memory": "2Gi", GPU: "8"},
            }
        ],
    }
    # Kueue does not touch an external framework's job: karta resumes it.
    assert (
        ok(kueue_cluster.get(f"/apis/kubeflow.org/v1/namespaces/{queues.ns}/pytorchjobs/first"))["spec"][
            "runPolicy"
        ]["suspend"]
        is True
    )

    ok(kueue_cluster.post(base, _workload_for(second, queues.lq)))
    message = (
        "couldn't assign flavors to pod set worker: "
        f"insufficient unused quota for {GPU} in flavor {queues.flavor}, 8 more needed"
    )

    def pending() -> dict[str, Any] | None:
        got = _condition(queues.workload("pytorchjob-second"), "QuotaReserved")
        return got if got.get("reason") == "Pending" else None

    waiting = wait("the second Workload to be pending", pending)
    assert (waiting["status"], waiting["message"]) == ("False", message)
    # The ClusterQueue's status follows a moment later.
    usage = wait(
        "the ClusterQueue to count one admitted, one pending",
        lambda: (
            (s := queues.get_cq()["status"]).get("admittedWorkloads") == 1
            and s.get("pendingWorkloads") == 1
            and s
        ),
    )
    gpus = next(r for r in usage["flavorsUsage"][0]["resources"] if r["name"] == GPU)
    assert gpus["total"] == "8"

    ok(kueue_cluster.delete(f"{base}/pytorchjob-first"))
    wait(
        "the second Workload to be admitted once the first is gone",
        lambda: _admitted(queues.workload("pytorchjob-second")),
    )
    # The conversion webhook serves the deprecated v1beta1 too (same admission).
    old = ok(
        kueue_cluster.get(f"/apis/kueue.x-k8s.io/v1beta1/namespaces/{queues.ns}/workloads/pytorchjob-second")
    )
    assert old["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert old["status"]["admission"]["podSetAssignments"][0]["flavors"][GPU] == queues.flavor


def test_kueue_admits_a_workload_whatever_kind_owns_it(kueue_cluster: KubeHTTP, queues: Queues) -> None:
    """``externalFrameworks`` is not what admits a Workload: one owned by a kind the configuration
    does not list (a kind defined later by a cluster Karta) is admitted the same way. The list
    matters for Kueue's own integrations (a Job or Pod owned by a listed kind is left to it)."""
    owner = ok(
        kueue_cluster.post(
            f"/api/v1/namespaces/{queues.ns}/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}},
        )
    )
    body = {
        **_kueue(
            "Workload",
            "unlisted",
            {
                "queueName": queues.lq,
                "podSets": [
                    {"name": "main", "count": 1, "template": {"spec": {"containers": [_container(8)]}}}
                ],
            },
        ),
    }
    body["metadata"] = {"name": "unlisted", "ownerReferences": [controller_ref(owner)]}
    ok(kueue_cluster.post(f"{KUEUE}/namespaces/{queues.ns}/workloads", body))
    wait("the Workload to be admitted", lambda: _admitted(queues.workload("unlisted")))


def test_kueue_serves_its_admission_webhooks(kueue_cluster: KubeHTTP, queues: Queues) -> None:
    """A check only Kueue's validating webhook makes (not the CRD schema): minCount on at most one
    PodSet. karta's controller must respect it when it sets minCount from elastic minimums."""
    pod_set = {"count": 2, "minCount": 1, "template": {"spec": {"containers": [_container(1)]}}}
    spec = {"queueName": queues.lq, "podSets": [{**pod_set, "name": "a"}, {**pod_set, "name": "b"}]}
    answer = kueue_cluster.post(
        f"{KUEUE}/namespaces/{queues.ns}/workloads", _kueue("Workload", "two-mins", spec)
    )
    assert answer.status == 403, answer.body  # a webhook denial (not 422, the schema's)
    assert answer.json()["message"] == (
        'admission webhook "vworkload.kb.io" denied the request: '
        "spec.podSets: Invalid value: 2: at most one podSet can use minCount"
    )


def test_kueue_started_again_on_a_new_port_moves_its_conversion_webhooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kueue's webhook port taken by another process: Kueue exits, starts again on a new port, and
    the CRDs' conversion webhooks (applied before it started) follow it; v1beta1 reads convert."""
    cp_mod = hack_module("cluster/controlplane.py")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    prepare = cp_mod.ControlPlane._prepare_kueue

    def prepare_on_the_taken_port(self: Any, kubectl: Path) -> Path:
        real = cp_mod.free_port
        monkeypatch.setattr(
            cp_mod, "free_port", lambda: (monkeypatch.setattr(cp_mod, "free_port", real), port)[1]
        )
        return prepare(self, kubectl)  # type: ignore[no-any-return]

    monkeypatch.setattr(cp_mod.ControlPlane, "_prepare_kueue", prepare_on_the_taken_port)
    config = cp_mod.ControlPlaneConfig(bin_dir=cp_mod.build_binaries(), kueue=kueue_configuration([]))
    with taken, cp_mod.ControlPlane(config=config, workdir=tmp_path / "cp") as cp:
        assert "address already in use" in cp.log_file("kueue").read_text()
        assert cp.kueue_webhook_port not in (0, port)
        client = from_kubeconfig(cp.kubeconfig, scratch=tmp_path / "credentials")
        crd = ok(
            client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/localqueues.kueue.x-k8s.io")
        )
        url = crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"]
        assert url == f"https://127.0.0.1:{cp.kueue_webhook_port}/convert"
        ok(
            client.post(
                "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "q"}}
            )
        )
        local = {**_kueue("LocalQueue", "lq", {"clusterQueue": "none"}), "metadata": {"name": "lq"}}
        ok(client.post(f"{KUEUE}/namespaces/q/localqueues", local))
        old = ok(client.get("/apis/kueue.x-k8s.io/v1beta1/namespaces/q/localqueues/lq"))
        assert (old["apiVersion"], old["spec"]["clusterQueue"]) == ("kueue.x-k8s.io/v1beta1", "none")


def _gpu_workload(name: str, queue: str, *, priority: tuple[str, int]) -> dict[str, Any]:
    """A Workload of one 8-GPU pod at a WorkloadPriorityClass ``(name, value)``: its creator sets
    ``spec.priority`` with ``priorityClassRef`` (Kueue's schema requires both; it fills neither)."""
    pod_set = {"name": "main", "count": 1, "template": {"spec": {"containers": [_container(8)]}}}
    spec: dict[str, Any] = {
        "queueName": queue,
        "podSets": [pod_set],
        "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": priority[0]},
        "priority": priority[1],
    }
    return {**_kueue("Workload", name, spec), "metadata": {"name": name}}


def _status_patch(cluster: KubeHTTP, path: str, status: dict[str, Any]) -> dict[str, Any]:
    return ok(
        cluster.request(
            "PATCH", f"{path}/status", body={"status": status}, content_type="application/merge-patch+json"
        )
    )


def _set_conditions(obj: dict[str, Any], *conditions: dict[str, Any]) -> list[dict[str, Any]]:
    """``obj``'s conditions with ``conditions`` replacing those of their types (metav1 style)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    generation = obj["metadata"]["generation"]
    merged = {c["type"]: c for c in obj["status"]["conditions"]}
    for c in conditions:
        merged[c["type"]] = {**c, "lastTransitionTime": now, "observedGeneration": generation}
    return list(merged.values())


def test_a_preempted_external_workload_keeps_its_quota_until_its_owner_releases_it(
    kueue_cluster: KubeHTTP, queues: Queues
) -> None:
    """Kueue's contract with an external framework on preemption (what jobframework does for its
    own kinds, karta's controller does for the others): Kueue marks the admitted Workload Evicted
    and Preempted but keeps its quota reserved until the owner's controller, having stopped the
    job, clears ``status.admission`` and sets QuotaReserved and Admitted False (and Requeued);
    then the preemptor is admitted, and the preempted one again once the quota is free."""
    preemption = {"spec": {"preemption": {"withinClusterQueue": "LowerPriority"}}}
    merge = "application/merge-patch+json"
    ok(
        kueue_cluster.request(
            "PATCH", f"{KUEUE}/clusterqueues/{queues.cq}", body=preemption, content_type=merge
        )
    )
    low, high = (f"{queues.cq}-low", 10), (f"{queues.cq}-high", 1000)
    for name, value in (low, high):
        body = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "value": value}
        ok(kueue_cluster.post(f"{KUEUE}/workloadpriorityclasses", {**body, "metadata": {"name": name}}))
    base = f"{KUEUE}/namespaces/{queues.ns}/workloads"
    ok(kueue_cluster.post(base, _gpu_workload("low", queues.lq, priority=low)))
    wait("the low-priority Workload to be admitted", lambda: _admitted(queues.workload("low")))
    ok(kueue_cluster.post(base, _gpu_workload("high", queues.lq, priority=high)))
    evicted = wait(
        "the low-priority Workload to be evicted",
        lambda: _condition(w := queues.workload("low"), "Evicted").get("status") == "True" and w,
    )
    assert _condition(evicted, "Evicted")["reason"] == "Preempted"
    assert _condition(evicted, "Preempted")["reason"] == "InClusterQueue"
    assert evicted["status"]["admission"]["clusterQueue"] == queues.cq  # still holds its quota
    assert _admitted(evicted) and _condition(evicted, "QuotaReserved")["status"] == "True"
    time.sleep(2)  # Kueue waits for the owner: nothing changes on its own
    assert not _admitted(queues.workload("high"))
    assert queues.workload("low")["status"].get("admission") is not None

    message = _condition(evicted, "Evicted")["message"]
    conditions = _set_conditions(
        evicted,
        {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": message},
        {"type": "Admitted", "status": "False", "reason": "NoReservation",
         "message": "The workload has no reservation"},
        {"type": "Requeued", "status": "True", "reason": "Preempted", "message": message},
    )  # fmt: skip
    _status_patch(kueue_cluster, f"{base}/low", {"admission": None, "conditions": conditions})
    wait("the high-priority Workload to be admitted", lambda: _admitted(queues.workload("high")))
    assert _condition(queues.workload("low"), "QuotaReserved")["reason"] == "Pending"

    finished = _set_conditions(
        queues.workload("high"),
        {"type": "Finished", "status": "True", "reason": "Succeeded", "message": "the job completed"},
    )
    _status_patch(kueue_cluster, f"{base}/high", {"conditions": finished})
    readmitted = wait(
        "the low-priority Workload to be admitted again", lambda: _admitted(w := queues.workload("low")) and w
    )
    assert _condition(readmitted, "Evicted")["status"] == "False"
    assert _condition(readmitted, "Evicted")["message"].startswith("Previously: Preempted to accommodate")
    # The finished Workload keeps its admission as a record; its quota is released.
    assert queues.workload("high")["status"].get("admission") is not None
    for name, _ in (low, high):
        ok(kueue_cluster.delete(f"{KUEUE}/workloadpriorityclasses/{name}"))
