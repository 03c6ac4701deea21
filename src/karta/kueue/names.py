"""The names Kueue and karta agree on (docs/kueue.md section 4): Kueue's labels, annotations,
finalizer and condition types as Kueue v0.17.0 spells them, karta's own annotations on the
Workloads it makes, and Kueue's Workload name rule.

Kueue's constants: pkg/controller/constants/constants.go, pkg/constants/constants.go,
apis/kueue/v1beta2 (workload_types.go, constants.go); the name rule:
pkg/controller/jobframework/workload_names.go (GetWorkloadNameForOwnerWithGVK).
"""

from __future__ import annotations

import hashlib

__all__ = [
    "ADMITTED",
    "API_VERSION",
    "CLUSTER_QUEUE_LABEL",
    "EVICTED",
    "FINISHED",
    "FINISHED_FAILED",
    "FINISHED_SUCCEEDED",
    "JOB_UID_LABEL",
    "KARTA_POD_SETS_ANNOTATION",
    "LOCAL_QUEUE_LABEL",
    "MAX_EXEC_TIME_LABEL",
    "PODSET_LABEL",
    "PODS_READY",
    "PODS_READY_RECOVERED",
    "PODS_READY_STARTED",
    "PODS_READY_WAIT_FOR_RECOVERY",
    "PODS_READY_WAIT_FOR_START",
    "POD_PRIORITY_CLASS_GROUP",
    "PRIORITY_CLASS_LABEL",
    "PROVREQ_ANNOTATION_PREFIX",
    "QUEUE_LABEL",
    "QUOTA_RESERVED",
    "RESOURCE_IN_USE_FINALIZER",
    "RESTORE_ANNOTATION",
    "WORKLOAD_PRIORITY_CLASS_GROUP",
    "workload_name",
]

API_VERSION = "kueue.x-k8s.io/v1beta2"

# On the workload object (read by karta, as Kueue's jobframework reads them).
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
PROVREQ_ANNOTATION_PREFIX = "provreq.kueue.x-k8s.io/"

# On the Workload.
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
RESOURCE_IN_USE_FINALIZER = "kueue.x-k8s.io/resource-in-use"
KARTA_POD_SETS_ANNOTATION = "run.ai/karta-kueue-pod-sets"
"""karta's own (an extension): JSON ``{"members": {podSet: [[component, instanceId], ...]},
"shape": <hash>, "tolerations": <hash>}``: where each PodSet's admission is written, and the
digests the equivalence check compares (:mod:`karta.kueue.workload`)."""

RESTORE_ANNOTATION = "run.ai/karta-kueue-restore"
"""karta's own, on the workload object while it runs (an extension): JSON ``{"workload": <name>,
"templates": {component: {instanceId: {labels, annotations, nodeSelector, tolerations,
nodeAffinity}}}}``, the values an admission replaced, so that a stop restores them even when the
Workload is gone (:mod:`karta.kueue.patches`)."""

# On the pod templates at admission.
PODSET_LABEL = "kueue.x-k8s.io/podset"
LOCAL_QUEUE_LABEL = "kueue.x-k8s.io/local-queue-name"
CLUSTER_QUEUE_LABEL = "kueue.x-k8s.io/cluster-queue-name"

# Priority class references (spec.priorityClassRef.group).
WORKLOAD_PRIORITY_CLASS_GROUP = "kueue.x-k8s.io"
POD_PRIORITY_CLASS_GROUP = "scheduling.k8s.io"

# Workload condition types and the Finished reasons.
QUOTA_RESERVED = "QuotaReserved"
ADMITTED = "Admitted"
EVICTED = "Evicted"
FINISHED = "Finished"
FINISHED_SUCCEEDED = "Succeeded"
FINISHED_FAILED = "Failed"
# The PodsReady condition (Kueue's waitForPodsReady) and its reasons.
PODS_READY = "PodsReady"
PODS_READY_STARTED = "Started"
PODS_READY_RECOVERED = "Recovered"
PODS_READY_WAIT_FOR_START = "WaitForStart"
PODS_READY_WAIT_FOR_RECOVERY = "WaitForRecovery"

_HASH_LENGTH = 5
_LONG_MAX = 253
_SHORT_MAX = 63  # Kueue's ShortWorkloadNames feature gate: the name is also a label value


def workload_name(kind: str, group: str, name: str, uid: str, *, short: bool = False) -> str:
    """Kueue's name for the Workload of a job (GetWorkloadNameForOwnerWithGVK):
    ``<lower(kind)>-<name>`` cut to leave room for ``-`` and five hex digits of
    sha1(kind \\n group \\n name \\n uid); at most 253 characters, or 63 with ``short`` (Kueue's
    ShortWorkloadNames gate). The prefix is cut byte for byte, as Kueue cuts it."""
    limit = (_SHORT_MAX if short else _LONG_MAX) - 1 - _HASH_LENGTH
    prefix = f"{kind.lower()}-{name}"[:limit]
    digest = hashlib.sha1(f"{kind}\n{group}\n{name}\n{uid}".encode()).hexdigest()
    return f"{prefix}-{digest[:_HASH_LENGTH]}"
