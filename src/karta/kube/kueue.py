"""The Kueue ``Workload`` objects of a workload, for ``kli describe``'s queue line
(:mod:`karta.report.queue`).

Owns :func:`kueue_workloads`: one list of ``workloads.kueue.x-k8s.io`` in the workload's namespace
with ``labelSelector=kueue.x-k8s.io/job-uid=<uid>`` (the label Kueue puts on the Workload it creates
for a job; karta-controller's Kueue part sets it too), one page of at most :data:`PAGE`, from the
API server's cache (resourceVersion "0", as ``describe`` reads pods). The served version is
discovery's preferred one (Kueue v0.17.0 serves ``v1beta2``, its storage version, and ``v1beta1``).

A failed read is recorded (:class:`KueueRead`), never raised; Kueue not installed (the resource is
not served) is not a failure: there is nothing to show. A workload that names a queue and whose
Workloads cannot be read gets a warning, so that the missing queue line is explained.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from karta.errors import ClusterError
from karta.kube.client import KubeClient
from karta.kube.owners import ReadFailure, read_failure

__all__ = ["GROUP", "PAGE", "KueueRead", "kueue_workloads"]

GROUP = "kueue.x-k8s.io"
PAGE = 50  # more than one Workload per job is a transient (a replacement); 50 is plenty
_JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"


@dataclass(frozen=True)
class KueueRead:
    """The Workloads read (``served`` False: Kueue's Workload API is not served here, so there are
    none to read), and the read that failed, if it did."""

    workloads: list[dict[str, Any]] = field(default_factory=list)
    served: bool = True
    failure: ReadFailure | None = None

    @property
    def warnings(self) -> list[str]:
        if self.failure is None:
            return []
        return [f"cannot {self.failure.what} ({self.failure.reason}): the Kueue queue state is not shown"]


def kueue_workloads(client: KubeClient, namespace: str | None, uid: str) -> KueueRead:
    """The Kueue Workloads labelled with the job uid ``uid`` in ``namespace``."""
    if not namespace or not uid:
        return KueueRead()
    resource = client.discovery.preferred(GROUP, "Workload")
    if resource is None:
        return KueueRead(served=False)
    try:
        pages = client.iter_pages(
            resource,
            namespace=namespace,
            label_selector=f"{_JOB_UID_LABEL}={uid}",
            chunk_size=PAGE,
            resource_version="0",
        )
        return KueueRead(list(next(iter(pages)).items))
    except ClusterError as exc:
        return KueueRead(
            failure=read_failure(exc, resource=f"workloads.{GROUP}", namespace=namespace, verb="list")
        )
