"""An admission as the values to write into each PodSet's pod templates (docs/kueue.md 3.3), the
way Kueue's jobframework computes them (pkg/controller/jobframework/reconciler.go
getPodSetsInfoFromStatus, pkg/podset/podset.go FromAssignment, FromUpdate, FromPodSet, Merge):

- per PodSet assignment of ``status.admission``: the count (the assignment's, else the PodSet's),
  the node labels of every distinct flavor it uses (``spec.nodeLabels``) as the node selector and
  their ``spec.tolerations``; a flavor's ``nodeTaints`` only steer Kueue's own admission and are not
  written, as Kueue does not write them;
- the pod labels ``kueue.x-k8s.io/podset`` (the PodSet name) and, as Kueue's default
  AssignQueueLabelsForPods gate does, ``kueue.x-k8s.io/local-queue-name`` and
  ``kueue.x-k8s.io/cluster-queue-name`` (when the ClusterQueue name is a DNS label);
- then the ``podSetUpdates`` of each admission check for that PodSet (its labels, annotations, node
  selector and tolerations), merged: a key already set to another value is a conflict, reported
  with Kueue's own words; tolerations are added once.

:func:`restore_infos` is the reverse Kueue uses when it stops a job: each PodSet's template as the
Workload holds it (labels, annotations, node selector, tolerations), which is the pod template as it
was when the Workload was made.

Not carried: Kueue's topology-aware scheduling gate (``kueue.x-k8s.io/topology``) and the
``kueue.x-k8s.io/workload`` annotation it needs: Kueue ungates such pods through its pod
integration, which karta's workloads do not use (docs/kueue.md 6).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from karta._records import record
from karta.errors import KueueError
from karta.kueue.names import CLUSTER_QUEUE_LABEL, LOCAL_QUEUE_LABEL, PODSET_LABEL

__all__ = ["PodSetInfo", "admission_infos", "merge_info", "restore_infos"]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@record(slots=True)
class PodSetInfo:
    """What one PodSet's pod templates receive (Kueue's podset.PodSetInfo without its scheduling
    gates). ``node_affinity`` is only set by :func:`restore_infos` (the template's, as Kueue's
    FromPodSet keeps the affinity): a fragmented pod spec receives the node selector as a required
    node affinity, and a stop puts this one back."""

    name: str
    count: int
    labels: dict[str, str]
    annotations: dict[str, str]
    node_selector: dict[str, str]
    tolerations: tuple[dict[str, Any], ...] = ()
    node_affinity: dict[str, Any] | None = None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _string_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise KueueError(f"{what} is not a map of strings")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(item, str):
            raise KueueError(f"{what}: the value of {key} is not a string")
        out[str(key)] = item
    return out


def _tolerations(value: Any, what: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
        raise KueueError(f"{what} is not a list of tolerations")
    return [dict(copy.deepcopy(t)) for t in value]


def _conflict(a: Mapping[str, str], b: Mapping[str, str]) -> str | None:
    """Kueue's utilmaps.HaveConflict message for the first key (in sorted order) set to two values."""
    for key in sorted(a):
        if key in b and a[key] != b[key]:
            return f"conflict for key={key}, value1={a[key]}, value2={b[key]}"
    return None


def merge_info(
    labels: dict[str, str],
    annotations: dict[str, str],
    node_selector: dict[str, str],
    tolerations: list[dict[str, Any]],
    other: PodSetInfo,
) -> str | None:
    """Merge ``other`` into the four values in place (Kueue's PodSetInfo.Merge); the conflict
    message (``invalid admission check PodSetUpdate: conflict for <field>: ...``) when a key is
    already set to another value, and then nothing is changed."""
    for field, mine, theirs in (
        ("annotations", annotations, other.annotations),
        ("labels", labels, other.labels),
        ("nodeSelector", node_selector, other.node_selector),
    ):
        conflict = _conflict(mine, theirs)
        if conflict is not None:
            return f"invalid admission check PodSetUpdate: conflict for {field}: {conflict}"
    annotations.update(other.annotations)
    labels.update(other.labels)
    node_selector.update(other.node_selector)
    for toleration in other.tolerations:
        if toleration not in tolerations:
            tolerations.append(copy.deepcopy(toleration))
    return None


def _pod_sets(workload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    pod_sets = _mapping(workload.get("spec")).get("podSets")
    if not isinstance(pod_sets, list) or not pod_sets or not all(isinstance(p, Mapping) for p in pod_sets):
        raise KueueError(f"Workload {_name(workload)} has no spec.podSets")
    return pod_sets


def _name(workload: Mapping[str, Any]) -> str:
    return str(_mapping(workload.get("metadata")).get("name") or "<unnamed>")


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise KueueError(f"{what} is not a count: {value!r}")
    return value


def admission_infos(
    workload: Mapping[str, Any],
    flavors: Mapping[str, Mapping[str, Any]],
    *,
    queue_labels: bool = True,
) -> tuple[PodSetInfo, ...]:
    """Per PodSet assignment of the admitted ``workload`` (in the order of
    ``status.admission.podSetAssignments``) what its pod templates receive. ``flavors`` maps a
    ResourceFlavor name to the ResourceFlavor object; ``queue_labels`` is Kueue's
    AssignQueueLabelsForPods gate (on by default in v0.17).

    KueueError: not admitted, a PodSet or flavor not known, a conflict between a flavor and an
    admission check's update (``in admission check "<name>": invalid admission check PodSetUpdate:
    conflict for nodeSelector: conflict for key=..., value1=..., value2=...``)."""
    name = _name(workload)
    status = _mapping(workload.get("status"))
    admission = _mapping(status.get("admission"))
    assignments = admission.get("podSetAssignments")
    if not isinstance(assignments, list) or not assignments:
        raise KueueError(f"Workload {name} has no status.admission.podSetAssignments: it is not admitted")
    pod_sets = _pod_sets(workload)
    by_name = {str(p.get("name") or ""): p for p in pod_sets}
    cluster_queue = str(admission.get("clusterQueue") or "")
    queue = str(_mapping(workload.get("spec")).get("queueName") or "")
    checks = status.get("admissionChecks")
    checks = [c for c in checks if isinstance(c, Mapping)] if isinstance(checks, list) else []
    infos: list[PodSetInfo] = []
    for index, raw in enumerate(assignments):
        assignment = _mapping(raw)
        ps_name = str(assignment.get("name") or "")
        pod_set = by_name.get(ps_name)
        if pod_set is None:
            raise KueueError(
                f"Workload {name}: status.admission.podSetAssignments[{index}] names PodSet "
                f"{ps_name!r}, which spec.podSets does not have"
            )
        raw_count = assignment.get("count")
        count = _count(
            pod_set.get("count") if raw_count is None else raw_count,
            f"Workload {name}: the count of PodSet {ps_name}",
        )
        node_selector: dict[str, str] = {}
        tolerations: list[dict[str, Any]] = []
        seen: set[str] = set()
        used = _mapping(assignment.get("flavors"))
        for resource in used:  # Kueue walks the map; nodeLabels are copied, tolerations appended
            flavor_name = str(used[resource])
            if flavor_name in seen:
                continue
            seen.add(flavor_name)
            flavor = flavors.get(flavor_name)
            if flavor is None:
                raise KueueError(
                    f"Workload {name}: PodSet {ps_name} is admitted with ResourceFlavor {flavor_name} "
                    f"({resource}), which is not known"
                )
            spec = _mapping(flavor.get("spec"))
            what = f"ResourceFlavor {flavor_name}"
            node_selector.update(_string_map(spec.get("nodeLabels"), f"{what} spec.nodeLabels"))
            tolerations.extend(_tolerations(spec.get("tolerations"), f"{what} spec.tolerations"))
        labels = {PODSET_LABEL: ps_name}
        if queue_labels:
            labels[LOCAL_QUEUE_LABEL] = queue
            if _DNS_LABEL.match(cluster_queue) and len(cluster_queue) <= 63:
                labels[CLUSTER_QUEUE_LABEL] = cluster_queue
        annotations: dict[str, str] = {}
        for check in checks:
            updates = check.get("podSetUpdates")
            for update in updates if isinstance(updates, list) else ():
                update = _mapping(update)
                if str(update.get("name") or "") != ps_name:
                    continue
                check_name = str(check.get("name") or "")
                what = f"admission check {check_name!r} podSetUpdates[{ps_name}]"
                other = PodSetInfo(
                    name=ps_name,
                    count=count,
                    labels=_string_map(update.get("labels"), f"{what}.labels"),
                    annotations=_string_map(update.get("annotations"), f"{what}.annotations"),
                    node_selector=_string_map(update.get("nodeSelector"), f"{what}.nodeSelector"),
                    tolerations=tuple(_tolerations(update.get("tolerations"), f"{what}.tolerations")),
                )
                conflict = merge_info(labels, annotations, node_selector, tolerations, other)
                if conflict is not None:
                    raise KueueError(f"Workload {name}: in admission check {check_name!r}: {conflict}")
                break
        infos.append(PodSetInfo(ps_name, count, labels, annotations, node_selector, tuple(tolerations)))
    return tuple(infos)


def restore_infos(workload: Mapping[str, Any]) -> tuple[PodSetInfo, ...]:
    """Per PodSet of ``spec.podSets`` its template's labels, annotations, node selector and
    tolerations (Kueue's FromPodSet): what a stop writes back."""
    name = _name(workload)
    infos: list[PodSetInfo] = []
    for pod_set in _pod_sets(workload):
        ps_name = str(pod_set.get("name") or "")
        template = _mapping(pod_set.get("template"))
        metadata = _mapping(template.get("metadata"))
        spec = _mapping(template.get("spec"))
        what = f"Workload {name} PodSet {ps_name} template"
        infos.append(
            PodSetInfo(
                name=ps_name,
                count=_count(pod_set.get("count", 0), f"{what}: count"),
                labels=_string_map(metadata.get("labels"), f"{what} metadata.labels"),
                annotations=_string_map(metadata.get("annotations"), f"{what} metadata.annotations"),
                node_selector=_string_map(spec.get("nodeSelector"), f"{what} spec.nodeSelector"),
                tolerations=tuple(_tolerations(spec.get("tolerations"), f"{what} spec.tolerations")),
                node_affinity=_node_affinity(spec),
            )
        )
    return tuple(infos)


def _node_affinity(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    value = _mapping(spec.get("affinity")).get("nodeAffinity")
    return dict(copy.deepcopy(value)) if isinstance(value, Mapping) and value else None
