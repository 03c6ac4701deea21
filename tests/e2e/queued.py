"""Two PyTorchJobs of 8 GPUs queued on the real Kueue's 8-GPU ClusterQueue (``kueue_cluster``,
:class:`tests.e2e.test_kueue_live.Queues`), each with the Workload karta's controller creates for
it: ``first`` admitted, ``second`` pending with Kueue's message. For the ``kli`` and web view
tests of the queue state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .kubehttp import KubeHTTP, load_manifests, ok, wait
from .test_kueue_live import KUEUE, Queues, _admitted, _pytorchjob, _workload_for

__all__ = ["two_queued_jobs"]


def two_queued_jobs(cluster: KubeHTTP, queues: Queues, corpus: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``first`` (its Workload admitted) and ``second`` (pending: no quota left)."""
    (crd,) = load_manifests(corpus / "crds" / "kubeflow.org_pytorchjobs.yaml")
    cluster.ensure_crd(crd)
    base = f"{KUEUE}/namespaces/{queues.ns}/workloads"
    first, second = (_pytorchjob(cluster, queues.ns, n, queues.lq) for n in ("first", "second"))
    ok(cluster.post(base, _workload_for(first, queues.lq)))
    wait("the first Workload to be admitted", lambda: _admitted(queues.workload("pytorchjob-first")))
    ok(cluster.post(base, _workload_for(second, queues.lq)))
    wait(
        "the second Workload to be pending",
        lambda: any(
            c.get("reason") == "Pending"
            for c in queues.workload("pytorchjob-second").get("status", {}).get("conditions", [])
        ),
    )
    return first, second
