"""The Kueue part under faults, on a control plane of this module's own with the real Kueue
(restartable; the configuration ``up.sh --kueue`` generates), issue 25's adversarial pass:

- the API server restarted while a job waits for admission, etcd compacted meanwhile (the
  watches resume with a compacted resourceVersion: 410, then a relist): the quota freed after
  the restart admits it, it is resumed, and it has exactly one Workload;
- the controller without the right to write Kueue Workloads (the rules of karta.controller.rbac
  with read-only Workloads, as ``kli rbac --backend kueue`` gives a reader): the job is suspended
  at creation by the webhook and stays so, one ``KueueForbidden`` Warning event says why, and the
  controller stays ready;
- a JobSet of 9 replicated Jobs: Kueue v0.17.0's Workload holds at most 8 PodSets, so the API
  server refuses it (422); one ``KueueWorkloadRejected`` event, no Workload, the JobSet stays
  suspended; with 8 the Workload is made and admitted;
- a PyTorchJob of 10,000 workers: one Workload with one PodSet of 10,000, pending with Kueue's
  message, the job suspended.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from karta.catalog import catalog_definitions
from karta.controller.options import Options
from karta.controller.rbac import controller_rbac
from karta.crd import load_crd
from karta.kueue.config import kueue_configuration

from ..conftest import _controlplane, etcd_request
from ..helm.helm_support import token_kubeconfig
from ..kubehttp import KubeHTTP, from_kubeconfig, load_manifests, ok, wait
from ..test_kueue_live import GPU, QUEUE_LABEL, Queues, _container
from .kueue_support import (
    NATIVE,
    PYTORCHJOBS,
    admitted,
    change_cq,
    job,
    kueue_controller,
    pending,
    pytorchjob,
    suspended,
    workload_of,
)

JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets"


@dataclass
class Private:
    cp: Any
    http: KubeHTTP

    def restart_apiserver(self, between: Any = None) -> None:
        self.cp.stop_apiserver()
        if between is not None:
            between()
        self.cp.start_apiserver()

    def compact(self) -> None:
        """Compact etcd at its current revision (a watch resumed from before it gets 410)."""
        key = base64.b64encode(b"/registry/karta-test-compaction").decode()
        value = base64.b64encode(b"x").decode()
        put = etcd_request(self.cp.etcd_port, "/v3/kv/put", {"key": key, "value": value})
        revision = int(put["header"]["revision"])
        etcd_request(self.cp.etcd_port, "/v3/kv/compaction", {"revision": revision, "physical": True})


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Iterator[Private]:
    cp_mod = _controlplane()
    config = cp_mod.ControlPlaneConfig(
        bin_dir=cp_mod.build_binaries(),
        controllers=True,  # the garbage collector
        kueue=kueue_configuration(catalog_definitions(), native=cp_mod.KUEUE_NATIVE),
    )
    with cp_mod.ControlPlane(config=config, workdir=tmp_path_factory.mktemp("kueue-faults-cp")) as cp:
        http = from_kubeconfig(cp.kubeconfig, scratch=tmp_path_factory.mktemp("kueue-faults-credentials"))
        http.ensure_crd(load_crd())
        for name in ("kubeflow.org_pytorchjobs.yaml", "jobset.x-k8s.io_jobsets.yaml"):
            (crd,) = load_manifests(corpus / "crds" / name)
            http.ensure_crd(crd)
        yield Private(cp, http)


@pytest.fixture
def q(private: Private) -> Iterator[Queues]:
    queues = Queues(private.http)
    yield queues
    queues.close()


def _gpu_quota(quota: str) -> Any:
    def change(cq: dict[str, Any]) -> None:
        for resource in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
            if resource["name"] == GPU:
                resource["nominalQuota"] = quota

    return change


def _events(kube: KubeHTTP, ns: str, name: str, reason: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = ok(kube.get(f"/api/v1/namespaces/{ns}/events"))["items"]
    return [e for e in items if e.get("reason") == reason and e["involvedObject"].get("name") == name]


def test_the_api_server_restarted_mid_admission(private: Private, q: Queues, tmp_path: Path) -> None:
    kube = private.http
    change_cq(kube, q, _gpu_quota("0"))  # nothing fits: the job waits
    with kueue_controller(kube, tmp_path, q) as controller:
        ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "waiting")))
        wait("its Workload to be pending", lambda: pending(q, "waiting"))
        workloads = controller.parts["kueue"]._workloads  # type: ignore[attr-defined]
        (watch,) = workloads.watches.values()
        informer = watch.informer
        assert informer._watch is not None
        expired_before = informer._watch.stats.expired

        private.restart_apiserver(between=private.compact)

        change_cq(kube, q, _gpu_quota("8"))
        wait("its Workload to be admitted", lambda: admitted(q, "waiting"), timeout=120)
        wait("the job to be resumed", lambda: not suspended(job(kube, q, "waiting")), timeout=60)
        owned = [wl for wl in q.workloads() if wl["metadata"]["ownerReferences"][0]["name"] == "waiting"]
        assert len(owned) == 1, [wl["metadata"]["name"] for wl in owned]
        wait(
            "the Workload watch to have answered 410 and re-listed",
            lambda: informer._watch is not None and informer._watch.stats.expired > expired_before,
            timeout=60,
        )
        assert controller.manager.ready()[0]


def _narrowed_kubeconfig(kube: KubeHTTP, options: Options, tmp_path: Path) -> Path:
    """A ServiceAccount with the controller's rules for ``options``, but only reading Workloads."""
    ns, account = f"karta-narrow-{uuid.uuid4().hex[:6]}", "karta"
    ok(kube.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}}
    ok(kube.post(f"/api/v1/namespaces/{ns}/serviceaccounts", sa))
    rbac = controller_rbac(options, catalog_definitions())
    rules = []
    for r in [*rbac.cluster_rules, *rbac.namespace_rules]:
        if "kueue.x-k8s.io" in r.get("apiGroups", []) and {"workloads", "workloads/status"} & set(
            r["resources"]
        ):
            r = {**r, "verbs": [v for v in r["verbs"] if v in ("get", "list", "watch")]}
        rules.append(r)
    name = f"{ns}-controller"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": rules}  # fmt: skip
    ok(kube.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", role))
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
               "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": ns}]}  # fmt: skip
    ok(kube.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding))
    return token_kubeconfig(kube, ns, account, tmp_path / "narrow.kubeconfig")


def test_without_the_right_to_write_workloads(private: Private, q: Queues, tmp_path: Path) -> None:
    kube = private.http
    # the options kueue_controller runs with (pods_support.running_controller)
    options = Options(backend="none", gang_scope="all", kueue=True, kueue_native=NATIVE, enable_webhook=True,
                      webhook_cert_mode="manual", resync_period=30.0)  # fmt: skip
    kubeconfig = _narrowed_kubeconfig(kube, options, tmp_path)
    with kueue_controller(kube, tmp_path, q, kubeconfig=str(kubeconfig)) as controller:
        created = ok(kube.post(PYTORCHJOBS.format(ns=q.ns), pytorchjob(q, "unqueued")))
        assert suspended(created), "the webhook needs no right on Workloads"
        refused = wait(
            "the refusal to be reported", lambda: _events(kube, q.ns, "unqueued", "KueueForbidden")
        )
        assert "workloads" in refused[0]["message"] and "forbidden" in refused[0]["message"]
        requeues = {"controller": "kueue", "result": "requeue"}

        def looked_again() -> bool:
            seen = controller.metrics.registry.get_sample_value(
                "controller_runtime_reconcile_total", requeues
            )
            return (seen or 0) >= 2

        wait("a second look at it (the recheck: the resync period here, 30 s)", looked_again, timeout=60)
        assert workload_of(q, "unqueued") is None
        assert suspended(job(kube, q, "unqueued"))
        assert len(_events(kube, q.ns, "unqueued", "KueueForbidden")) == 1
        assert (_events(kube, q.ns, "unqueued", "KueueForbidden")[0].get("count") or 1) == 1
        assert controller.manager.ready()[0]


def _jobset(q: Queues, name: str, jobs: int) -> dict[str, Any]:
    template = {"spec": {"restartPolicy": "Never", "containers": [{**_container(0), "name": "main"}]}}
    replicated = [
        {"name": f"r{i}", "replicas": 1,
         "template": {"spec": {"parallelism": 1, "completions": 1, "template": template}}}
        for i in range(jobs)
    ]  # fmt: skip
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": q.ns, "labels": {QUEUE_LABEL: q.lq}},
        "spec": {"suspend": True, "replicatedJobs": replicated},
    }


def test_a_workload_beyond_kueues_pod_set_limit(private: Private, q: Queues, tmp_path: Path) -> None:
    kube = private.http
    with kueue_controller(kube, tmp_path, q) as controller:
        wait(
            "the Kueue part to follow JobSets",
            lambda: any(g.kind == "JobSet" for g in controller.parts["kueue"].watched_types().values()),  # type: ignore[attr-defined]
        )
        ok(kube.post(JOBSETS.format(ns=q.ns), _jobset(q, "nine", 9)))
        rejected = wait(
            "the refusal to be reported", lambda: _events(kube, q.ns, "nine", "KueueWorkloadRejected")
        )
        assert "at most 8" in rejected[0]["message"], rejected[0]["message"]
        ok(kube.post(JOBSETS.format(ns=q.ns), _jobset(q, "eight", 8)))
        wl = wait("the 8 PodSets' Workload", lambda: _owned_by(q, "eight"))
        assert len(wl["spec"]["podSets"]) == 8
        assert _owned_by(q, "nine") is None
        assert ok(kube.get(f"{JOBSETS.format(ns=q.ns)}/nine"))["spec"]["suspend"] is True
        assert len(_events(kube, q.ns, "nine", "KueueWorkloadRejected")) == 1
        assert controller.manager.ready()[0]


def _owned_by(q: Queues, name: str) -> dict[str, Any] | None:
    return next((wl for wl in q.workloads() if wl["metadata"]["ownerReferences"][0]["name"] == name), None)


def test_ten_thousand_replicas_wait_in_one_pod_set(private: Private, q: Queues, tmp_path: Path) -> None:
    """A PyTorchJob of 10,000 workers (0 GPUs, 1 CPU each, on a queue of 32 CPUs): one Workload,
    one PodSet of 10,000, pending with Kueue's own message; the job stays suspended."""
    kube = private.http
    big = pytorchjob(q, "huge")
    worker = big["spec"]["pytorchReplicaSpecs"]["Worker"]
    worker["replicas"] = 10_000
    worker["template"]["spec"]["containers"] = [{**_container(0), "name": "pytorch"}]
    with kueue_controller(kube, tmp_path, q):
        assert suspended(ok(kube.post(PYTORCHJOBS.format(ns=q.ns), big)))
        wait("its Workload to be pending", lambda: pending(q, "huge"))
        wl = workload_of(q, "huge")
        assert wl is not None and [(p["name"], p["count"]) for p in wl["spec"]["podSets"]] == [
            ("worker", 10_000)
        ]
        reserved = next(c for c in wl["status"]["conditions"] if c["type"] == "QuotaReserved")
        assert "insufficient" in reserved["message"].lower(), reserved["message"]
        assert suspended(job(kube, q, "huge"))
        assert len([w for w in q.workloads() if w["metadata"]["ownerReferences"][0]["name"] == "huge"]) == 1
