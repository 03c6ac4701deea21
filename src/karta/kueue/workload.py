"""The Kueue Workload of a workload (docs/kueue.md 3.2), as Kueue's jobframework would make it for
a job of its own (pkg/controller/jobframework: ConstructWorkload, NewWorkload, newWorkloadName,
ExtractPriority; EquivalentToWorkload):

- named by Kueue's rule (:func:`karta.kueue.names.workload_name`), in the workload's namespace,
  owned by it with ``controller: true`` and ``blockOwnerDeletion: true``, with Kueue's
  ``kueue.x-k8s.io/resource-in-use`` finalizer (so that a stop can still read the templates of a
  Workload being deleted);
- labels: those of the workload whose keys Kueue's ``labelKeysToCopy`` lists, Kueue's
  ``kueue.x-k8s.io/job-uid``, karta's managed-by and Karta index labels; annotations: the
  workload's ``provreq.kueue.x-k8s.io/`` ones, ``run.ai/karta-name`` and karta's
  ``run.ai/karta-kueue-pod-sets`` (which component instances each PodSet stands for, and the digests
  the equivalence check compares);
- spec: ``queueName`` from the ``kueue.x-k8s.io/queue-name`` label, the PodSets of
  :func:`karta.render.kueue.kueue_pod_sets` (without ``minCount``: karta has no write-back path for
  replicas, so a partial admission could not be applied; without ``topologyRequest``: see
  docs/kueue.md 6), ``maximumExecutionTimeSeconds`` from ``kueue.x-k8s.io/max-exec-time-seconds``,
  ``priorityClassRef`` and ``priority`` when the caller resolved the class
  :func:`priority_class_ref` names (a WorkloadPriorityClass from ``kueue.x-k8s.io/priority-class``,
  else the first PodSet's pod ``priorityClassName``), else ``priority: 0`` (Kueue's visibility API
  fails for a pending Workload without one).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from karta._records import record
from karta.errors import KueueError
from karta.extract import ComponentFactory
from karta.gang import GangPlan, compute_gang_plan
from karta.kueue.names import (
    API_VERSION,
    JOB_UID_LABEL,
    KARTA_POD_SETS_ANNOTATION,
    MAX_EXEC_TIME_LABEL,
    POD_PRIORITY_CLASS_GROUP,
    PRIORITY_CLASS_LABEL,
    PROVREQ_ANNOTATION_PREFIX,
    QUEUE_LABEL,
    RESOURCE_IN_USE_FINALIZER,
    WORKLOAD_PRIORITY_CLASS_GROUP,
    workload_name,
)
from karta.render.common import group_metadata, top_owner
from karta.render.kueue import KueuePodSet, kueue_pod_sets

__all__ = [
    "KueueWorkload",
    "build_workload",
    "equivalent",
    "pod_set_members",
    "priority_class_ref",
]

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_INT32_MAX = 2**31 - 1

Members = dict[str, tuple[tuple[str, str], ...]]


@record(slots=True)
class KueueWorkload:
    """The Workload object to create (or whose spec to update), which component instances each
    PodSet stands for, and what the Workload cannot express."""

    obj: dict[str, Any]
    members: Members
    warnings: tuple[str, ...] = ()


def priority_class_ref(factory: ComponentFactory, plan: GangPlan | None = None) -> dict[str, str] | None:
    """The priority class Kueue would take for the workload (ExtractPriority), for the caller to
    resolve into ``spec.priority``: the WorkloadPriorityClass of the ``kueue.x-k8s.io/priority-class``
    label, else the PriorityClass of the first pod template that names one, else None."""
    return _priority_ref(top_owner(factory.obj).labels, kueue_pod_sets(factory, _plan(factory, plan), []))


def _priority_ref(labels: Mapping[str, str], pod_sets: Sequence[KueuePodSet]) -> dict[str, str] | None:
    label = labels.get(PRIORITY_CLASS_LABEL)
    if label:
        return {"group": WORKLOAD_PRIORITY_CLASS_GROUP, "kind": "WorkloadPriorityClass", "name": label}
    for pod_set in pod_sets:
        name = pod_set.template.get("spec", {}).get("priorityClassName")
        if isinstance(name, str) and name:
            return {"group": POD_PRIORITY_CLASS_GROUP, "kind": "PriorityClass", "name": name}
    return None


def _plan(factory: ComponentFactory, plan: GangPlan | None) -> GangPlan:
    return plan if plan is not None else compute_gang_plan(factory, (), evaluator=factory.evaluator)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _shape(pod_sets: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """What Kueue's ComparePodSetSlices compares, as two digests: per PodSet its name, count,
    minCount, containers and init containers; and apart, its tolerations (ignored once admitted,
    as the admission adds some)."""
    shape = [
        [
            p.get("name"),
            p.get("count"),
            p.get("minCount"),
            p.get("template", {}).get("spec", {}).get("containers"),
            p.get("template", {}).get("spec", {}).get("initContainers"),
        ]
        for p in pod_sets
    ]
    tolerations = [
        [p.get("name"), p.get("template", {}).get("spec", {}).get("tolerations")] for p in pod_sets
    ]
    return _digest(shape), _digest(tolerations)


def _max_exec_time(labels: Mapping[str, str]) -> int | None:
    raw = labels.get(MAX_EXEC_TIME_LABEL)
    if raw is None:
        return None
    try:
        value = int(raw, 10)
    except ValueError:
        return None
    return value if 0 < value <= _INT32_MAX else None


def _pod_set_dict(pod_set: KueuePodSet, warnings: list[str]) -> dict[str, Any]:
    out = pod_set.to_dict()
    if out.pop("minCount", None) is not None:
        warnings.append(
            f"PodSet {pod_set.name} asks for all {pod_set.count} pods, not its minimum of "
            f"{pod_set.min_count}: karta has no write-back path for replicas, so it could not apply "
            "a partial admission"
        )
    if out.pop("topologyRequest", None) is not None:
        warnings.append(
            f"PodSet {pod_set.name}: the Karta topology is not sent to Kueue: Kueue's topology-aware "
            "scheduling ungates pods through its own pod integration, which karta's workloads do not use"
        )
    return out


def build_workload(
    factory: ComponentFactory,
    plan: GangPlan | None = None,
    *,
    priority: int | None = None,
    label_keys_to_copy: Iterable[str] = (),
    short_names: bool = False,
) -> KueueWorkload:
    """The Workload of the factory's workload. ``priority``: the value of the class
    :func:`priority_class_ref` names, as the caller resolved it (Kueue requires a value with a
    reference; without one the reference is left out and a warning says so);
    ``label_keys_to_copy`` and ``short_names``: Kueue's configuration (``labelKeysToCopy``, the
    ShortWorkloadNames gate).

    KueueError: no queue label, no UID, no PodSet (and the GangError of the PodSets)."""
    obj = factory.obj
    owner = top_owner(obj)
    queue = owner.labels.get(QUEUE_LABEL)
    if not queue:
        raise KueueError(
            f"{owner.kind} {owner.name} has no {QUEUE_LABEL} label: Kueue manages only queued workloads"
        )
    if not owner.uid:
        raise KueueError(
            f"{owner.kind} {owner.name} has no metadata.uid: the Workload's name and owner reference "
            "need the workload as read from the cluster"
        )
    gvk = factory.karta.root_gvk
    group = gvk.group if gvk is not None else owner.group
    warnings: list[str] = []
    pod_sets = kueue_pod_sets(factory, _plan(factory, plan), warnings)
    members: Members = {}
    claimed: dict[tuple[str, str], str] = {}
    for pod_set in pod_sets:
        own: list[tuple[str, str]] = []
        for member in pod_set.members:
            first = claimed.setdefault(member, pod_set.name)
            if first == pod_set.name:
                own.append(member)
            else:
                warnings.append(
                    f"component {member[0]} instance {member[1] or '(single)'} is in PodSets {first} "
                    f"and {pod_set.name}: the admission of {first} is written into its pods"
                )
        members[pod_set.name] = tuple(own)
    pod_set_dicts = [_pod_set_dict(p, warnings) for p in pod_sets]
    shape, tolerations = _shape(pod_set_dicts)
    labels = {k: v for k, v in owner.labels.items() if k in set(label_keys_to_copy)}
    if _LABEL_VALUE.match(owner.uid) and len(owner.uid) <= 63:
        labels[JOB_UID_LABEL] = owner.uid
    annotations = {k: v for k, v in owner.annotations.items() if k.startswith(PROVREQ_ANNOTATION_PREFIX)}
    annotations[KARTA_POD_SETS_ANNOTATION] = json.dumps(
        {
            "members": {name: [list(m) for m in ms] for name, ms in members.items()},
            "shape": shape,
            "tolerations": tolerations,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    name = workload_name(owner.kind, group, owner.name, owner.uid, short=short_names)
    metadata = group_metadata(owner, name, factory.karta, labels=labels, annotations=annotations)
    metadata["ownerReferences"] = [
        {**owner.owner_reference(), "controller": True, "blockOwnerDeletion": True}
    ]
    metadata["finalizers"] = [RESOURCE_IN_USE_FINALIZER]
    spec: dict[str, Any] = {"queueName": queue, "podSets": pod_set_dicts}
    seconds = _max_exec_time(owner.labels)
    if seconds is not None:
        spec["maximumExecutionTimeSeconds"] = seconds
    ref = _priority_ref(owner.labels, pod_sets)
    if priority is not None:
        if ref is not None:
            spec["priorityClassRef"] = ref
        spec["priority"] = priority
    else:
        # Always a value, as Kueue's jobframework writes one (PrepareWorkloadPriority: 0 without a
        # class): Kueue v0.17.0's visibility API dereferences spec.priority of every pending
        # Workload, and one without it makes the whole pending list of its queue fail (a nil
        # pointer panic in pkg/visibility/storage/utils.go, 503 to the caller).
        spec["priority"] = 0
        if ref is not None:
            warnings.append(
                f"{ref['kind']} {ref['name']} is not resolved (no priority given): the Workload has no "
                "priorityClassRef, so Kueue gives it the default priority"
            )
    workload = {"apiVersion": API_VERSION, "kind": "Workload", "metadata": metadata, "spec": spec}
    return KueueWorkload(obj=workload, members=members, warnings=tuple(warnings))


def _karta_annotation(workload: Mapping[str, Any]) -> dict[str, Any] | None:
    metadata = workload.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    raw = annotations.get(KARTA_POD_SETS_ANNOTATION) if isinstance(annotations, Mapping) else None
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def pod_set_members(workload: Mapping[str, Any]) -> Members:
    """PodSet name → the (component, instance id) pairs it stands for, as the Workload's
    ``run.ai/karta-kueue-pod-sets`` annotation records them (KueueError when it is missing or
    malformed: the Workload is not one karta made)."""
    value = _karta_annotation(workload)
    raw = value.get("members") if value is not None else None
    if not isinstance(raw, dict):
        name = workload.get("metadata", {}).get("name", "<unnamed>") if isinstance(workload, Mapping) else ""
        raise KueueError(
            f"Workload {name} has no valid {KARTA_POD_SETS_ANNOTATION} annotation: it is not a "
            "Workload karta made"
        )
    out: Members = {}
    for pod_set, pairs in raw.items():
        if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs
        ):
            raise KueueError(f"{KARTA_POD_SETS_ANNOTATION}: the members of PodSet {pod_set} are malformed")
        out[str(pod_set)] = tuple((p[0], p[1]) for p in pairs)
    return out


def equivalent(existing: Mapping[str, Any], built: KueueWorkload, *, admitted: bool) -> bool:
    """Whether the Workload in the cluster still describes the workload (Kueue's
    EquivalentToWorkload): the same owner, maximum execution time, PodSet names, counts, minimum
    counts, containers and init containers, and (unless ``admitted``: the admission adds some) the
    same tolerations. The comparison is on the digests recorded at creation, so the API server's
    defaults in the stored templates do not count. Not equivalent: the caller deletes the Workload
    and makes a new one (or, while the workload is suspended and not admitted, updates its spec)."""
    stored = _karta_annotation(existing)
    if stored is None:
        return False
    fresh = _karta_annotation(built.obj) or {}
    owners = existing.get("metadata", {}).get("ownerReferences") if isinstance(existing, Mapping) else None
    controller = [o for o in owners or [] if isinstance(o, Mapping) and o.get("controller")]
    built_owner = built.obj["metadata"]["ownerReferences"][0]
    if not controller or controller[0].get("name") != built_owner["name"]:
        return False
    spec = existing.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    if spec.get("maximumExecutionTimeSeconds") != built.obj["spec"].get("maximumExecutionTimeSeconds"):
        return False
    if stored.get("shape") != fresh.get("shape") or stored.get("members") != fresh.get("members"):
        return False
    return admitted or stored.get("tolerations") == fresh.get("tolerations")
