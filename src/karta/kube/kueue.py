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

Owns :func:`kueue_pending` too, for the position of a pending Workload: the LocalQueue's pending
list from Kueue's visibility API (``visibility.kueue.x-k8s.io``, an aggregated API: its served
version from discovery, v1beta2 before v1beta1 in Kueue v0.17.0), ``GET
namespaces/<ns>/localqueues/<lq>/pendingworkloads?limit=`` :data:`PENDING_PAGE` ``&offset=``, page
after page until the Workload looked for is listed, a page comes back short (the end), or
:data:`MAX_PENDING` items were read (then ``complete`` is False: a position beyond that is not
shown); and the LocalQueue (its ``spec.clusterQueue``, for the ClusterQueue's name; a failed read
only leaves the name out). The API not served (not in discovery: Kueue without its visibility
server, or its APIService not available), refused or failing is recorded, never raised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from karta.errors import ClusterError
from karta.kube.client import KubeClient
from karta.kube.owners import ReadFailure, read_failure

__all__ = [
    "GROUP",
    "LIST_PAGE",
    "MAX_PAGES",
    "MAX_PENDING",
    "PAGE",
    "PENDING_PAGE",
    "VISIBILITY_GROUP",
    "KueuePending",
    "KueueQueues",
    "KueueRead",
    "kueue_pending",
    "kueue_queues",
    "kueue_workloads",
    "kueue_workloads_in",
]

GROUP = "kueue.x-k8s.io"
PAGE = 50  # more than one Workload per job is a transient (a replacement); 50 is plenty
LIST_PAGE = 500  # Workloads (or queues) per list page
MAX_PAGES = 100  # pages of one list: 50000 Workloads in a namespace is beyond what is shown
_JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
PENDING_PAGE = 250  # pending Workloads per visibility request (Kueue's default limit is 1000)
MAX_PENDING = 1000  # pending Workloads of one LocalQueue read at most, for one position


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


@dataclass(frozen=True)
class KueuePending:
    """A LocalQueue's pending Workloads as Kueue's visibility API lists them, in order (the
    ``PendingWorkloadsSummary`` items); ``complete`` False: the read stopped at
    :data:`MAX_PENDING`; ``cluster_queue``: the LocalQueue's ``spec.clusterQueue`` (None: not
    read); ``unread``: why the list could not be read ("" when it was)."""

    items: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = True
    cluster_queue: str | None = None
    unread: str = ""


def kueue_pending(
    client: KubeClient, namespace: str, local_queue: str, workload: str | None = None
) -> KueuePending:
    """The pending Workloads of LocalQueue ``local_queue`` in ``namespace``, read until
    ``workload`` is among them (None: to the end), at most :data:`MAX_PENDING`."""
    version = _visibility_version(client)
    if version is None:
        return KueuePending(
            unread=f"Kueue's visibility API ({VISIBILITY_GROUP}) is not served by this cluster"
        )
    path = (
        f"/apis/{VISIBILITY_GROUP}/{version}/namespaces/{quote(namespace, safe='')}"
        f"/localqueues/{quote(local_queue, safe='')}/pendingworkloads"
    )
    items: list[dict[str, Any]] = []
    complete = False
    try:
        while len(items) < MAX_PENDING:
            limit = min(PENDING_PAGE, MAX_PENDING - len(items))
            page = client.request_json("GET", path, params={"limit": str(limit), "offset": str(len(items))})
            got = page.get("items") if isinstance(page, dict) else None
            if not isinstance(got, list):
                return KueuePending(unread=f"{path} answered no list of items")
            items.extend(item if isinstance(item, dict) else {} for item in got[:limit])
            if len(got) < limit:
                complete = True
                break
            if workload is not None and any(_name(item) == workload for item in got[:limit]):
                complete = True  # what follows cannot change its position
                break
    except ClusterError as exc:
        failure = read_failure(
            exc, resource=f"localqueues/pendingworkloads.{VISIBILITY_GROUP}", namespace=namespace, verb="get"
        )
        why = " ".join(failure.reason.split())  # forbidden, not found, or the error on one line
        return KueuePending(unread=f"cannot {failure.what} ({why})")
    return KueuePending(
        items, complete=complete, cluster_queue=_cluster_queue_of(client, namespace, local_queue)
    )


def _visibility_version(client: KubeClient) -> str | None:
    """The served version of Kueue's visibility API that has ``localqueues`` (discovery lists
    the preferred version first), or None."""
    try:
        resources = client.discovery.resources()
    except ClusterError:
        return None
    for resource in resources:
        if resource.group == VISIBILITY_GROUP and resource.plural == "localqueues":
            return resource.version
    return None


def _cluster_queue_of(client: KubeClient, namespace: str, local_queue: str) -> str | None:
    resource = client.discovery.preferred(GROUP, "LocalQueue")
    if resource is None:
        return None
    try:
        obj = client.get(resource, local_queue, namespace=namespace, resource_version="0")
    except ClusterError:
        return None
    spec = obj.get("spec")
    name = spec.get("clusterQueue") if isinstance(spec, dict) else None
    return name if isinstance(name, str) and name else None


def _name(item: Any) -> Any:
    meta = item.get("metadata") if isinstance(item, dict) else None
    return meta.get("name") if isinstance(meta, dict) else None
