"""Quota is not capacity, and Kueue's remedy (docs/kueue.md section 10): with ``waitForPodsReady``
on, an admitted gang that does not fit is evicted after the timeout and its quota goes to the next
job; the gang that fits stays. This needs the ``PodsReady`` condition the Kueue part writes (Kueue
evicts an admitted Workload whose condition is not True, whoever runs it).

Its own control plane (``ready_cluster``: the ``kueue_cluster``'s processes with only the training
operator, Kueue configured with ``waitForPodsReady``, timeout 10 s, requeuing back-off 1-2 s), so
that the shared Kueue of the other tests and the bench keeps its configuration. One karta-controller
``--kueue --backend workload-api``, PyTorchJobs of 1 master + 3 workers of 2 GPUs, a ClusterQueue
of 8 GPUs, kwok Nodes of 2 GPUs:

- Nodes for 3 of the 4 pods: the first job is admitted, its pods held unbound, its Workload's
  ``PodsReady`` False; a second job waits for the quota;
- after the timeout Kueue evicts the first (``PodsReadyTimeout``): stopped, its pods gone, its
  quota released; the second is admitted;
- one more Node: the second's gang binds together, ``PodsReady`` True ``Started``, and it stays
  admitted past the timeout while the first waits in the queue.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import _controlplane, local_cluster
from ..kubehttp import KubeHTTP, ok, wait
from ..test_kueue_live import Queues, _condition
from .kueue_support import (
    GANG_GPUS,
    GANG_SIZE,
    PYTORCHJOBS,
    admitted,
    bound_together,
    flavor_node,
    gang_job,
    job,
    kueue_controller,
    pending,
    pods,
    pods_ready_of,
    pytorchjob_crd,
    suspended,
    workload_of,
)
from .pods_support import bound

TIMEOUT_S = 10


@pytest.fixture(scope="module")
def ready_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHTTP]:
    if os.environ.get("KARTA_TEST_KUBECONFIG"):
        pytest.skip("needs the local control plane: Kueue and the operators run next to it")
    from karta.catalog import catalog_definitions
    from karta.kueue.config import kueue_configuration

    cp_mod = _controlplane()
    config = kueue_configuration(catalog_definitions(), native=cp_mod.KUEUE_NATIVE)
    config["waitForPodsReady"] = {
        "timeout": f"{TIMEOUT_S}s",
        "blockAdmission": False,
        "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 1, "backoffMaxSeconds": 2},
    }
    yield from local_cluster(
        tmp_path_factory, controllers=True, kwok=True, operators=("training",), kueue=config
    )


@pytest.fixture
def ready_queues(ready_cluster: KubeHTTP, corpus: Path) -> Iterator[Queues]:
    pytorchjob_crd(ready_cluster, corpus)
    q = Queues(ready_cluster)
    yield q
    q.close()


def test_an_admitted_gang_that_does_not_fit_gives_its_quota_back(
    ready_cluster: KubeHTTP, ready_queues: Queues, tmp_path: Path
) -> None:
    kube, q = ready_cluster, ready_queues
    room_for_3 = [flavor_node(kube, q, i, gpus=GANG_GPUS) for i in range(GANG_SIZE - 1)]
    nodes = list(room_for_3)
    try:
        with kueue_controller(kube, tmp_path, q, backend="workload-api", namespaces=(q.ns,)):
            ok(kube.post(PYTORCHJOBS.format(ns=q.ns), gang_job(q, "first")))
            wait("the first Workload to be admitted", lambda: admitted(q, "first"))
            admitted_at = time.monotonic()
            # well within the timeout: the second queued behind it, the first's PodsReady False
            ok(kube.post(PYTORCHJOBS.format(ns=q.ns), gang_job(q, "second")))
            wait("the second Workload to be pending", lambda: pending(q, "second"))
            wait("PodsReady False", lambda: pods_ready_of(q, "first") == ("False", "WaitForStart"))
            wait("the first's pods", lambda: len(pods(kube, q, "first")) == GANG_SIZE, timeout=30)
            assert not bound(pods(kube, q, "first"))

            # Kueue's timeout: the first evicted, stopped, its pods gone, the quota to the second
            wait("the second Workload to be admitted", lambda: admitted(q, "second"), timeout=60)
            took = time.monotonic() - admitted_at
            first = workload_of(q, "first")
            assert first is not None and _condition(first, "Requeued").get("reason") == "PodsReadyTimeout"
            assert suspended(job(kube, q, "first")) and not pods(kube, q, "first")

            nodes.append(flavor_node(kube, q, GANG_SIZE - 1, gpus=GANG_GPUS))
            bound_together(kube, q, "second")
            wait("the second's PodsReady", lambda: pods_ready_of(q, "second") == ("True", "Started"))
            time.sleep(TIMEOUT_S + 2)  # past the timeout: a gang that runs is not evicted
            assert admitted(q, "second") and not suspended(job(kube, q, "second"))
            assert suspended(job(kube, q, "first")) and not admitted(q, "first")
            print(f"\nthe unplaceable gang gave its quota to the next job {took:.1f}s after its admission")
            for name in ("first", "second"):
                wl = workload_of(q, name) or {}
                times = {c["type"]: (c["status"], c.get("reason"), c["lastTransitionTime"])
                         for c in (wl.get("status") or {}).get("conditions") or []}  # fmt: skip
                print(name, times)
    finally:
        for name in nodes:
            kube.delete(f"/api/v1/nodes/{name}")
