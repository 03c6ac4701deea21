"""karta-controller ``--kueue`` for a CRD Kueue has no integration for (example.com/v1 TrainingRun,
no operator: karta's write-backs are what starts it), described only by a cluster Karta
(tests/definitions/example-com-trainingrun-v1.yaml): queued, admitted and started the same way as
a PyTorchJob, the flavor's node labels written as a required node affinity of its fragmented pod
spec; the Karta says so (``KueueManaged``). Then the Karta deleted while a run is queued: nothing
of it starts outside its quota (it stays paused with its pending Workload), and a new run is no
longer held."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..kubehttp import KubeHTTP, ok, wait
from ..test_kueue_live import GPU, KUEUE, Queues, _condition
from ..test_kueue_live import queues as queues  # the fixture
from .kueue_support import change_cq, kueue_controller
from .operator_support import install_karta_crd

ROOT = Path(__file__).resolve().parents[3]
GROUP = "example.com"
KARTAS = "/apis/run.ai/v1alpha1/kartas"
KARTA_NAME = "example-com-trainingrun-v1"


def _runs(ns: str) -> str:
    return f"/apis/{GROUP}/v1/namespaces/{ns}/trainingruns"


@pytest.fixture
def trainingruns(kueue_cluster: KubeHTTP) -> Iterator[None]:
    """The TrainingRun CRD (any fields kept) and the Karta CRD; the cluster Karta is the test's."""
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"trainingruns.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": "TrainingRun", "plural": "trainingruns", "singular": "trainingrun",
                      "listKind": "TrainingRunList"},
            "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}],
        },
    }  # fmt: skip
    kueue_cluster.ensure_crd(crd)
    install_karta_crd(kueue_cluster)
    yield
    kueue_cluster.delete(f"{KARTAS}/{KARTA_NAME}")


@contextmanager
def _karta_and_controller(kube: KubeHTTP, q: Queues, tmp_path: Path) -> Iterator[None]:
    """The cluster Karta of TrainingRun created, then ``karta-controller --kueue`` following it
    (cluster definitions on), its webhook registered for TrainingRuns."""
    karta = yaml.safe_load((ROOT / "tests" / "definitions" / f"{KARTA_NAME}.yaml").read_text())
    ok(kube.post(KARTAS, karta))
    with kueue_controller(
        kube, tmp_path, q, kind=(GROUP, "v1", "trainingruns"), probe=_run(q, f"probe-{uuid.uuid4().hex[:4]}"),
        paused=_paused, cluster_definitions=True,
    ):  # fmt: skip
        yield


def _run(q: Queues, name: str) -> dict[str, Any]:
    """Two 4-GPU trainers and a launcher, created running (the webhook pauses it)."""
    limits = {"cpu": "1", "memory": "1Gi", GPU: "4"}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "TrainingRun",
        "metadata": {"name": name, "namespace": q.ns, "labels": {"kueue.x-k8s.io/queue-name": q.lq}},
        "spec": {
            "paused": False,
            "trainer": {"replicas": 2, "podLabels": {"app": "trainer"},
                        "containers": [{"name": "t", "image": "train:1", "resources": {"requests": limits,
                                                                                       "limits": limits}}]},
            "launcher": {"metadata": {"labels": {"app": "launcher"}},
                         "podSpec": {"containers": [{"name": "l", "image": "launch:1"}]}},
        },
    }  # fmt: skip


def _paused(obj: dict[str, Any]) -> bool:
    return obj["spec"].get("paused") is True


def _get(kube: KubeHTTP, q: Queues, name: str) -> dict[str, Any]:
    return ok(kube.get(f"{_runs(q.ns)}/{name}"))


def _workload_of(q: Queues, name: str) -> dict[str, Any] | None:
    for wl in q.workloads():
        if any(
            r.get("kind") == "TrainingRun" and r["name"] == name for r in wl["metadata"]["ownerReferences"]
        ):
            return wl
    return None


def test_a_crd_kueue_does_not_know_is_queued_through_its_cluster_karta(
    kueue_cluster: KubeHTTP, queues: Queues, trainingruns: None, tmp_path: Path
) -> None:
    kube, q = kueue_cluster, queues
    # A fragmented pod spec has no tolerations field (docs/kueue.md 3.1): the ClusterQueue's
    # flavor is swapped for one with node labels only.
    flavor = f"{q.flavor}-plain"
    labels = {"karta.test/gpu-flavor": flavor}
    body = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": flavor},
            "spec": {"nodeLabels": labels}}  # fmt: skip
    ok(kube.post(f"{KUEUE}/resourceflavors", body))
    change_cq(kube, q, lambda cq: cq["spec"]["resourceGroups"][0]["flavors"][0].update(name=flavor))
    try:
        _queued_through_the_cluster_karta(kube, q, labels, tmp_path)
    finally:
        kube.delete(f"{KUEUE}/resourceflavors/{flavor}")


def _queued_through_the_cluster_karta(
    kube: KubeHTTP, q: Queues, node_labels: dict[str, str], tmp_path: Path
) -> None:
    with _karta_and_controller(kube, q, tmp_path):
        managed = wait(
            "the Karta's KueueManaged condition",
            lambda: _condition(ok(kube.get(f"{KARTAS}/{KARTA_NAME}")), "KueueManaged"),
        )
        assert (managed["status"], managed["reason"]) == ("True", "Managed"), managed

        first = ok(kube.post(_runs(q.ns), _run(q, "first")))
        assert _paused(first), "held at creation"
        wl = wait("the first Workload to be admitted", lambda: _admitted(q, "first"))
        assert sorted(p["name"] for p in wl["spec"]["podSets"]) == ["launcher", "trainer"]
        running = wait("the first run to be started", lambda: not _paused(r := _get(kube, q, "first")) and r)
        terms = running["spec"]["trainer"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        (key,) = node_labels
        assert {"key": key, "operator": "In", "values": [node_labels[key]]} in terms["nodeSelectorTerms"][0][
            "matchExpressions"
        ]
        # the launcher's PodSet has count 0 (no scaleDefinition): Kueue assigns it no flavor
        assert running["spec"]["launcher"]["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "launcher"
        assert running["spec"]["trainer"]["podLabels"]["kueue.x-k8s.io/podset"] == "trainer"

        second = ok(kube.post(_runs(q.ns), _run(q, "second")))
        assert _paused(second)
        wait("the second Workload to be pending", lambda: _pending(q, "second"))

        ok(kube.delete(f"{_runs(q.ns)}/first"))
        wait("the second Workload to be admitted", lambda: _admitted(q, "second"))
        wait("the second run to be started", lambda: not _paused(_get(kube, q, "second")))

        # The Karta deleted while a run is queued: the third stays paused with its Workload pending
        # (nothing runs outside its quota); karta stops following the kind and new runs are not held.
        third = ok(kube.post(_runs(q.ns), _run(q, "third")))
        assert _paused(third)
        wait("the third Workload to be pending", lambda: _pending(q, "third"))
        ok(kube.delete(f"{KARTAS}/{KARTA_NAME}"))

        def not_held() -> bool:
            created = ok(kube.post(_runs(q.ns), _run(q, "probe-after"), params={"dryRun": "All"}))
            return not _paused(created)

        wait("the webhook to stop holding TrainingRuns", not_held, timeout=60)
        time.sleep(3)
        assert _paused(_get(kube, q, "third"))
        assert _pending(q, "third")
        assert not _paused(_get(kube, q, "second"))
        # deleting it later is not blocked by the Workload's finalizer, which no one else drops
        ok(kube.delete(f"{_runs(q.ns)}/third"))
        wait("the third run's Workload to be gone", lambda: _workload_of(q, "third") is None, timeout=60)


def _admitted(q: Queues, name: str) -> dict[str, Any] | None:
    wl = _workload_of(q, name)
    return wl if wl is not None and _condition(wl, "Admitted").get("status") == "True" else None


def _pending(q: Queues, name: str) -> bool:
    wl = _workload_of(q, name)
    return wl is not None and _condition(wl, "QuotaReserved").get("reason") == "Pending"


def test_an_admission_that_cannot_be_written_finishes_the_workload_failed_to_start(
    kueue_cluster: KubeHTTP, queues: Queues, trainingruns: None, tmp_path: Path
) -> None:
    """The flavor brings a toleration, and the trainer's fragmented pod spec has no tolerations
    field: the admission cannot be applied, whatever the retries (Kueue's FailedToStart): the
    Workload is Finished with that reason (its quota released), a Warning event says why, and the
    run stays paused."""
    kube, q = kueue_cluster, queues
    with _karta_and_controller(kube, q, tmp_path):
        ok(kube.post(_runs(q.ns), _run(q, "tolerated")))

        def finished() -> dict[str, Any] | None:
            wl = _workload_of(q, "tolerated")
            done = _condition(wl, "Finished") if wl is not None else {}
            return done if done.get("status") == "True" else None

        done = wait("the Workload to be Finished", finished)
        assert done["reason"] == "FailedToStart"
        assert "toleration" in done["message"]
        events = ok(kube.get(f"/api/v1/namespaces/{q.ns}/events"))["items"]
        assert any(e["reason"] == "KueueFailedToStart" and e["type"] == "Warning" for e in events)
        assert _paused(_get(kube, q, "tolerated"))


SPIN_PATH = "until(false; .) | .spec.paused"  # a suspend path that runs until its time budget stops it


def _edit_karta(kube: KubeHTTP, suspend_path: str) -> None:
    def attempt() -> bool:
        karta = ok(kube.get(f"{KARTAS}/{KARTA_NAME}"))
        root = karta["spec"]["structureDefinition"]["rootComponent"]
        root["suspendDefinition"]["suspendActions"] = [{"path": suspend_path, "value": "true"}]
        written = kube.request("PUT", f"{KARTAS}/{KARTA_NAME}", body=karta)
        return written.status != 409 and bool(ok(written))

    wait("the Karta to be updated", attempt, timeout=30)


def _events(kube: KubeHTTP, q: Queues, name: str, reason: str) -> list[dict[str, Any]]:
    events = ok(kube.get(f"/api/v1/namespaces/{q.ns}/events"))["items"]
    return [e for e in events if e["involvedObject"].get("name") == name and e.get("reason") == reason]


def test_a_quarantined_karta_leaves_its_runs_as_they_are_and_new_ones_are_denied(
    kueue_cluster: KubeHTTP, queues: Queues, trainingruns: None, tmp_path: Path
) -> None:
    """A cluster Karta whose suspend action breaches its time budget (issue 21's quarantine, for the
    Kueue part): each labelled run is denied (never let run unsuspended, outside its quota), with
    the Karta named; after 5 breaches the Karta is quarantined (``Degraded`` True) and new runs are
    denied without being evaluated; a run queued before is left as it is (still paused, its
    Workload pending) with a ``KueueQuarantined`` event; a new generation of the Karta lifts it."""
    kube, q = kueue_cluster, queues
    change_cq(kube, q, lambda cq: cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][-1].update(
        nominalQuota="0"))  # fmt: skip
    with _karta_and_controller(kube, q, tmp_path):
        held = ok(kube.post(_runs(q.ns), _run(q, "held")))
        assert _paused(held)
        wait("the held run's Workload to be pending", lambda: _pending(q, "held"))
        _edit_karta(kube, SPIN_PATH)

        def denied(name: str) -> str | None:
            answer = kube.post(_runs(q.ns), _run(q, name))
            if answer.status in (200, 201):  # the old generation still served: gone again
                ok(kube.delete(f"{_runs(q.ns)}/{name}"))
                return None
            return str(answer.body)

        # Denied while evaluated (the time budget breached) until the breaches quarantine the Karta
        # (the reconciler's evaluation of the held run counts too), then denied unevaluated.
        messages = [wait(f"run {i} denied", lambda i=i: denied(f"hostile-{i}"), timeout=60) for i in range(6)]
        evaluated = [m for m in messages if "is quarantined" not in m]
        assert evaluated and all("suspendActions" in m and "time budget" in m for m in evaluated), messages
        assert all(KARTA_NAME in m and "without the kueue.x-k8s.io/queue-name label" in m for m in messages)
        assert "is quarantined" in messages[-1] and "Degraded" in messages[-1], messages[-1]
        degraded = wait(
            "the Karta's Degraded condition",
            lambda: (
                (c := _condition(ok(kube.get(f"{KARTAS}/{KARTA_NAME}")), "Degraded"))
                and c["status"] == "True"
                and c
            ),
            timeout=60,
        )
        assert degraded["reason"] == "BudgetExceeded", degraded

        # the run queued before: left as it is, told why
        held = _get(kube, q, "held")
        held["metadata"].setdefault("annotations", {})["karta.test/touch"] = "1"
        ok(kube.request("PUT", f"{_runs(q.ns)}/held", body=held))
        wait("the held run's KueueQuarantined event", lambda: _events(kube, q, "held", "KueueQuarantined"))
        assert _paused(_get(kube, q, "held")) and _pending(q, "held")

        # a new generation lifts the quarantine: runs are held for Kueue again
        _edit_karta(kube, ".spec.paused")
        after = wait(
            "a run to be created again",
            lambda: (r := kube.post(_runs(q.ns), _run(q, "fixed"))).status in (200, 201) and ok(r),
        )
        assert _paused(after)
        wait("the fixed run's Workload to be pending", lambda: _pending(q, "fixed"))
