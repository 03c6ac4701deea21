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

Owns :func:`kueue_workloads_in` too, for ``kli get``'s QUEUE column: every Workload carrying the
label (``labelSelector=kueue.x-k8s.io/job-uid``: it exists) in one namespace (or all), one list
of pages of :data:`LIST_PAGE`, at most :data:`MAX_PAGES` of them (a longer list is a failure:
the state of a job on a page not read would be wrong, so none is shown), grouped by the label.

Owns :func:`kueue_queues` too, for the web view's queue page: the ClusterQueues and LocalQueues
(one list each, pages of :data:`LIST_PAGE`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from karta.errors import ClusterError
from karta.kube.client import KubeClient
from karta.kube.owners import ReadFailure, read_failure

__all__ = [
    "GROUP",
    "LIST_PAGE",
    "MAX_PAGES",
    "PAGE",
    "KueueQueues",
    "KueueRead",
    "kueue_queues",
    "kueue_workloads",
    "kueue_workloads_in",
]

GROUP = "kueue.x-k8s.io"
PAGE = 50  # more than one Workload per job is a transient (a replacement); 50 is plenty
LIST_PAGE = 500  # Workloads (or queues) per list page
MAX_PAGES = 100  # pages of one list: 50000 Workloads in a namespace is beyond what is shown
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

    def by_job_uid(self) -> dict[str, list[dict[str, Any]]]:
        """The Workloads read, grouped by their ``kueue.x-k8s.io/job-uid`` label."""
        out: dict[str, list[dict[str, Any]]] = {}
        for workload in self.workloads:
            meta = workload.get("metadata")
            labels = meta.get("labels") if isinstance(meta, dict) else None
            uid = labels.get(_JOB_UID_LABEL) if isinstance(labels, dict) else None
            if isinstance(uid, str) and uid:
                out.setdefault(uid, []).append(workload)
        return out


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


def kueue_workloads_in(client: KubeClient, namespace: str | None) -> KueueRead:
    """Every Kueue Workload labelled with a job uid in ``namespace`` (None: all namespaces): one
    list, pages of :data:`LIST_PAGE`, at most :data:`MAX_PAGES` (more is recorded as a failure:
    a partial list could show a wrong state). From the API server's cache (resourceVersion
    "0"), as :func:`kueue_workloads`."""
    resource = client.discovery.preferred(GROUP, "Workload")
    if resource is None:
        return KueueRead(served=False)
    where = namespace or ""
    items: list[dict[str, Any]] = []
    try:
        pages = client.iter_pages(
            resource,
            namespace=namespace,
            label_selector=_JOB_UID_LABEL,
            chunk_size=LIST_PAGE,
            resource_version="0",
        )
        for count, page in enumerate(pages, start=1):
            if page.restarted:
                items = []
            items.extend(page.items)
            if count >= MAX_PAGES and page.continue_token:
                return KueueRead(
                    failure=ReadFailure(
                        resource=f"workloads.{GROUP}",
                        namespace=where,
                        verb="list",
                        reason=f"more than {MAX_PAGES * LIST_PAGE} Workloads",
                        message=f"more than {MAX_PAGES} pages of {LIST_PAGE}",
                    )
                )
    except ClusterError as exc:
        return KueueRead(
            failure=read_failure(exc, resource=f"workloads.{GROUP}", namespace=where, verb="list")
        )
    return KueueRead(items)


@dataclass(frozen=True)
class KueueQueues:
    """The ClusterQueues and LocalQueues read; ``served`` False: Kueue is not installed (not a
    failure); ``failures``: what could not be read and why."""

    cluster_queues: list[dict[str, Any]] = field(default_factory=list)
    local_queues: list[dict[str, Any]] = field(default_factory=list)
    served: bool = True
    failures: tuple[ReadFailure, ...] = ()

    @property
    def warnings(self) -> list[str]:
        return [f"cannot {f.what} ({f.reason})" for f in self.failures]


def kueue_queues(client: KubeClient) -> KueueQueues:
    """Every ClusterQueue and every LocalQueue (all namespaces), read now."""
    cq = client.discovery.preferred(GROUP, "ClusterQueue")
    lq = client.discovery.preferred(GROUP, "LocalQueue")
    if cq is None:
        return KueueQueues(served=False)
    read: dict[str, list[dict[str, Any]]] = {"cq": [], "lq": []}
    failures: list[ReadFailure] = []
    for key, resource in (("cq", cq), ("lq", lq)):
        if resource is None:
            continue
        try:
            for page in client.iter_pages(resource, chunk_size=LIST_PAGE):
                if page.restarted:
                    read[key] = []
                read[key].extend(page.items)
        except ClusterError as exc:
            failures.append(read_failure(exc, resource=resource.group_resource, namespace="", verb="list"))
    return KueueQueues(read["cq"], read["lq"], failures=tuple(failures))
