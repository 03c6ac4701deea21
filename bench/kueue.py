"""Kueue with karta as its adapter, next to Kueue's own integration, run on demand:
``nice -n 10 .venv/bin/python bench/kueue.py`` (issue 25 item 5; docs/kueue.md, "Bench").

Starts a private control plane (hack/cluster: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kwok playing the kubelet of 4 fake 8-GPU Nodes, the Kubeflow training operator and
Kueue v0.17.0 configured as ``up.sh --kueue`` does), installs the JobSet CRD and a made-up CRD
Kueue has no integration for (example.com/v1 TrainingRun, described only by a cluster Karta:
tests/definitions/example-com-trainingrun-v1.yaml), and runs ``karta-controller --kueue
--kueue-native batch/job --enable-webhook --register-webhooks`` as a subprocess. Then, in two
phases of the same run, each against a ClusterQueue of 8 GPUs whose quota admits one 8-GPU
workload at a time:

* ``native``: N batch/v1 Jobs (Kueue's own jobframework: its webhook suspends them, its job
  reconciler makes the Workloads and unsuspends them; kube-controller-manager makes the pods);
* ``karta``: N workloads of three karta-covered kinds in turn: PyTorchJob (the training operator
  makes the pods), JobSet (no JobSet controller runs: resumed, no pods) and TrainingRun (no
  operator: resumed, no pods), suspended by karta's webhook, their Workloads made and admitted
  ones started by the controller.

Each phase creates the N workloads (4 client threads; the time until every create returned, i.e.
through the suspend webhook, and until every Workload exists), then frees the quota N - 1 times:
the admitted workload, once it runs (its first pod Running, or resumed for a kind without pods),
is deleted (background propagation), and for the next one admitted the bench records the time
from the DELETE request to (a) its Workload ``Admitted``, (b) the workload resumed (the
definition's suspend actions would change it again: ``karta.kueue.patches.is_suspended`` false)
and (c) its first pod Running. Events come from watches opened by the bench (timestamps when the
bench reads them). Prints p50/p90/max of each, the karta/native ratios of p50 and p90, the
controller's CPU (its process and children, per phase) and RSS, and the machine's load average.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from karta.errors import ClusterError, ClusterUnreachableError
from karta.kube import ConfigOverrides, KubeClient
from karta.kube.resources import ResourceType
from karta.model import Karta

ROOT = Path(__file__).resolve().parents[1]
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GPU = "nvidia.com/gpu"
POOL = "karta.bench/pool"  # the ResourceFlavor's node label and the kwok Nodes' label and taint
# The bench's Nodes are tainted (pods of other tests in a shared cluster stay off them); the pod
# templates tolerate the taint (not the flavor: a fragmented pod spec has no tolerations).
TOLERATION = {"key": POOL, "operator": "Exists", "effect": "NoSchedule"}
KUEUE = "kueue.x-k8s.io/v1beta2"


def _module(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def base() -> ModuleType:
    """bench/controller.py (the cluster, certificate and process helpers)."""
    return _module("karta_bench_controller", ROOT / "bench" / "controller.py")


def _rt(group: str, version: str, kind: str, plural: str) -> ResourceType:
    return ResourceType(group=group, version=version, kind=kind, plural=plural, namespaced=True)


WORKLOADS = _rt("kueue.x-k8s.io", "v1beta2", "Workload", "workloads")
PODS = _rt("", "v1", "Pod", "pods")


def _container(name: str, gpus: int) -> dict[str, Any]:
    requests = {"cpu": "1", "memory": "1Gi", GPU: str(gpus)}
    return {"name": name, "image": "busybox", "resources": {"requests": requests, "limits": {GPU: str(gpus)}}}


def batch_job(name: str, ns: str, queue: str) -> dict[str, Any]:
    """Two pods of 4 GPUs (Kueue's webhook suspends it at creation)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "labels": {QUEUE_LABEL: queue}},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "template": {"spec": _pod_spec("main", restart="Never")},
        },
    }


def _pod_spec(name: str, restart: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [_container(name, 4)], "tolerations": [TOLERATION]}
    if restart:
        spec["restartPolicy"] = restart
    return spec


def pytorchjob(name: str, ns: str, queue: str) -> dict[str, Any]:
    """Two workers of 4 GPUs, created running (karta's webhook suspends it)."""
    worker = {"replicas": 2, "template": {"spec": _pod_spec("pytorch")}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": ns, "labels": {QUEUE_LABEL: queue}},
        "spec": {"pytorchReplicaSpecs": {"Worker": worker}},
    }


def jobset(name: str, ns: str, queue: str) -> dict[str, Any]:
    """One replicated Job of two 4-GPU pods."""
    job = {
        "parallelism": 2,
        "completions": 2,
        "template": {"spec": _pod_spec("main", restart="Never")},
    }
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": ns, "labels": {QUEUE_LABEL: queue}},
        "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": job}}]},
    }


def trainingrun(name: str, ns: str, queue: str) -> dict[str, Any]:
    """Two trainers of 4 GPUs and a launcher (hack/demo/kueue.sh's run), created unpaused."""
    launcher = {
        "containers": [{"name": "launch", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]
    }
    return {
        "apiVersion": "example.com/v1",
        "kind": "TrainingRun",
        "metadata": {"name": name, "namespace": ns, "labels": {QUEUE_LABEL: queue}},
        "spec": {
            "paused": False,
            "trainer": {"replicas": 2, "containers": [_container("train", 4)]},
            "launcher": {"podSpec": launcher},
        },
    }


TRAININGRUN_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "trainingruns.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "kind": "TrainingRun",
            "plural": "trainingruns",
            "singular": "trainingrun",
            "listKind": "TrainingRunList",
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}
TRAININGRUN_KARTA = ROOT / "tests" / "definitions" / "example-com-trainingrun-v1.yaml"


@dataclass(frozen=True)
class Kind:
    """One workload kind of a phase: its resource, its Karta (for the resumed state), whether pods
    run for it in the bench's cluster, and its objects."""

    label: str
    rtype: ResourceType
    karta: Karta
    pods: bool
    make: Callable[[str, str, str], dict[str, Any]]


def kinds() -> tuple[list[Kind], list[Kind]]:
    """(the native phase's kinds, the karta phase's kinds)."""
    from karta.catalog import catalog_definition
    from karta.model import karta_from_dict

    def catalog(slug: str) -> Karta:
        karta = catalog_definition(slug)
        assert karta is not None, slug
        return karta

    made_up = karta_from_dict(yaml.safe_load(TRAININGRUN_KARTA.read_text()))
    native = [Kind("Job", _rt("batch", "v1", "Job", "jobs"), catalog("batch-job-v1"), True, batch_job)]
    karta = [
        Kind("PyTorchJob", _rt("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs"),
             catalog("kubeflow-org-pytorchjob-v1"), True, pytorchjob),
        Kind("JobSet", _rt("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets"),
             catalog("jobset-x-k8s-io-jobset-v1alpha2"), False, jobset),
        Kind("TrainingRun", _rt("example.com", "v1", "TrainingRun", "trainingruns"), made_up, False,
             trainingrun),
    ]  # fmt: skip
    return native, karta


def resumed_state(karta: Karta, obj: dict[str, Any]) -> bool:
    """The definition's resumed state: its suspend actions would change the object."""
    from karta.extract import ComponentFactory
    from karta.kueue.patches import is_suspended

    return not is_suspended(ComponentFactory(karta, obj))


def _controller_uid(obj: dict[str, Any]) -> str | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref["uid"])
    return None


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


@dataclass
class Timeline:
    """First sightings, per workload uid, as the watches deliver them (monotonic seconds)."""

    workload: dict[str, float] = field(default_factory=dict)  # its Kueue Workload exists
    admitted: dict[str, float] = field(default_factory=dict)
    resumed: dict[str, float] = field(default_factory=dict)
    running: dict[str, float] = field(default_factory=dict)  # its first pod Running
    released: dict[str, float] = field(default_factory=dict)  # its Workload deleted (quota back)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def mark(self, which: dict[str, float], uid: str | None) -> None:
        if uid is None or uid in which:
            return
        with self.cond:
            which.setdefault(uid, time.monotonic())
            self.cond.notify_all()

    def wait(self, what: str, found: Callable[[], Any], timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                got = found()
                if got:
                    return got
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
                self.cond.wait(min(left, 1.0))


class Watches:
    """Watch threads over one namespace: Workloads, pods and each kind, feeding a Timeline."""

    def __init__(self, client: KubeClient, ns: str, kinds: Sequence[Kind], timeline: Timeline) -> None:
        self.client, self.ns, self.timeline = client, ns, timeline
        self.stopping = threading.Event()
        self.streams: list[Any] = []
        self.threads = [
            threading.Thread(target=self._loop, args=(WORKLOADS, self._workload), daemon=True),
            threading.Thread(target=self._loop, args=(PODS, self._pod), daemon=True),
            *(threading.Thread(target=self._loop, args=(k.rtype, self._kind(k)), daemon=True) for k in kinds),
        ]
        self.ready = threading.Barrier(len(self.threads) + 1)

    def __enter__(self) -> Watches:
        for t in self.threads:
            t.start()
        self.ready.wait(60)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        for s in list(self.streams):
            with contextlib.suppress(Exception):
                s.close()

    def _loop(self, rtype: ResourceType, handle: Callable[[dict[str, Any]], None]) -> None:
        rv = self.client.list(rtype, namespace=self.ns).resource_version
        first = True
        while not self.stopping.is_set():
            stream = self.client.watch(rtype, namespace=self.ns, resource_version=rv, timeout_seconds=300)
            self.streams.append(stream)
            if first:
                first = False
                self.ready.wait(60)
            try:
                for event in stream:
                    if event.type in ("ADDED", "MODIFIED"):
                        handle(event.object)
                    elif event.type == "DELETED" and rtype is WORKLOADS:
                        self.timeline.mark(self.timeline.released, _controller_uid(event.object))
                rv = stream.resource_version or rv
            except ClusterError:
                if self.stopping.is_set():
                    return
                rv = self.client.list(rtype, namespace=self.ns).resource_version

    def _workload(self, obj: dict[str, Any]) -> None:
        owner = _controller_uid(obj)
        self.timeline.mark(self.timeline.workload, owner)
        if _condition(obj, "Admitted").get("status") == "True":
            self.timeline.mark(self.timeline.admitted, owner)

    def _pod(self, obj: dict[str, Any]) -> None:
        if (obj.get("status") or {}).get("phase") == "Running":
            self.timeline.mark(self.timeline.running, _controller_uid(obj))

    def _kind(self, kind: Kind) -> Callable[[dict[str, Any]], None]:
        def handle(obj: dict[str, Any]) -> None:
            uid = obj["metadata"]["uid"]
            if (
                uid not in self.timeline.resumed
                and not obj["metadata"].get("deletionTimestamp")
                and resumed_state(kind.karta, obj)
            ):
                self.timeline.mark(self.timeline.resumed, uid)

        return handle


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` and its live descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return total


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` and its live descendants, summed (MB)."""
    now = peak = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    now += int(line.split()[1]) / 1024
                elif line.startswith("VmHWM:"):
                    peak += int(line.split()[1]) / 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return now, peak


def quantiles(values: Sequence[float]) -> tuple[float, float, float]:
    """(p50, p90, max); NaN for no values."""
    ordered = sorted(v for v in values if v == v)  # NaN: not seen
    if not ordered:
        return (float("nan"),) * 3
    p90 = ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered)) - 1))]
    return statistics.median(ordered), p90, ordered[-1]


@dataclass
class Sample:
    kind: str  # the next workload's
    previous: str  # the deleted one's
    released: float  # its Workload deleted
    admitted: float
    resumed: float
    running: float | None  # None: no pods run for the kind


@dataclass
class PhaseResult:
    name: str
    count: int
    created: float  # every create returned
    queued: float  # every Workload exists
    samples: list[Sample]
    cpu: float  # the controller's CPU seconds during the phase
    wall: float
    rss: tuple[float, float]
    load: tuple[tuple[float, float, float], tuple[float, float, float]]
    failures: list[str]
    retries: int  # "reconcile failed; retrying" lines the controller logged during the phase


def again(call: Callable[[], Any]) -> Any:
    """``call()``, again (up to 3 times) when the cluster was unreachable: the client's pooled
    connections can all have been closed by the API server while idle (its idle timeout), and
    the transport retries only once."""
    for attempt in range(4):
        try:
            return call()
        except ClusterUnreachableError:
            if attempt == 3:
                raise
    raise AssertionError("unreachable")


def retries_logged(log: Path) -> int:
    try:
        return log.read_text(errors="replace").count("reconcile failed; retrying")
    except OSError:
        return 0


def run_phase(
    client: KubeClient,
    name: str,
    ns: str,
    queue: str,
    phase_kinds: Sequence[Kind],
    count: int,
    controller_pid: int,
    timeout: float,
    progress: Callable[[str], None],
    log: Path,
) -> PhaseResult:
    timeline = Timeline()
    retries0 = retries_logged(log)
    load0 = os.getloadavg()
    cpu0, wall0 = cpu_seconds(controller_pid), time.monotonic()
    objs = []
    for i in range(count):
        kind = phase_kinds[i % len(phase_kinds)]
        objs.append((kind, kind.make(f"{kind.label.lower()}-{i}", ns, queue)))
    created: dict[str, tuple[Kind, str]] = {}
    lock = threading.Lock()

    def create(item: tuple[Kind, dict[str, Any]]) -> None:
        kind, obj = item
        got = again(lambda: client.create(obj))
        with lock:
            created[got["metadata"]["uid"]] = (kind, obj["metadata"]["name"])

    failures: list[str] = []
    samples: list[Sample] = []
    with Watches(client, ns, phase_kinds, timeline):
        started = time.monotonic()
        base().in_threads(create, objs)
        t_created = time.monotonic() - started
        timeline.wait(f"{count} Workloads", lambda: len(timeline.workload) >= count, timeout)
        t_queued = time.monotonic() - started
        progress(f"{name}: {count} created in {t_created:.1f} s, queued in {t_queued:.1f} s")
        deleted: set[str] = set()

        def next_admitted(after: float) -> str | None:
            return next(
                (u for u, t in timeline.admitted.items() if u not in deleted and u in created and t >= after),
                None,
            )

        current: str = timeline.wait("the first admission", lambda: next_admitted(0.0), timeout)
        for step in range(count):
            kind, obj_name = created[current]
            marks = timeline.running if kind.pods else timeline.resumed
            try:
                timeline.wait(f"{obj_name} to run", lambda m=marks, u=current: u in m, timeout)
            except TimeoutError as exc:
                failures.append(str(exc))
            freed = time.monotonic()
            again(
                lambda k=kind, n=obj_name: client.delete(k.rtype, n, namespace=ns, propagation="Background")
            )
            deleted.add(current)
            if step == count - 1:
                break
            try:
                nxt = timeline.wait("the next admission", lambda f=freed: next_admitted(f), timeout)
            except TimeoutError as exc:
                failures.append(str(exc))
                break
            nkind, nname = created[nxt]
            try:
                timeline.wait(f"{nname} resumed", lambda u=nxt: u in timeline.resumed, timeout)
                if nkind.pods:
                    timeline.wait(
                        f"{nname}'s first pod Running", lambda u=nxt: u in timeline.running, timeout
                    )
            except TimeoutError as exc:
                failures.append(str(exc))
                current = nxt
                continue
            samples.append(
                Sample(
                    nkind.label,
                    kind.label,
                    timeline.released.get(current, float("nan")) - freed,
                    timeline.admitted[nxt] - freed,
                    timeline.resumed[nxt] - freed,
                    timeline.running[nxt] - freed if nkind.pods else None,
                )
            )
            if (step + 1) % 50 == 0:
                progress(f"{name}: {step + 1}/{count - 1} handovers")
            current = nxt
    wall = time.monotonic() - wall0
    return PhaseResult(
        name=name,
        count=count,
        created=t_created,
        queued=t_queued,
        samples=samples,
        cpu=cpu_seconds(controller_pid) - cpu0,
        wall=wall,
        rss=rss_mb(controller_pid),
        load=(load0, os.getloadavg()),
        failures=failures,
        retries=retries_logged(log) - retries0,
    )


def _ms(values: Sequence[float]) -> str:
    p50, p90, top = quantiles(values)
    return f"{p50 * 1000:6.0f} {p90 * 1000:6.0f} {top * 1000:6.0f}"


def report(native: PhaseResult, karta: PhaseResult, emit: Callable[[str], None]) -> None:
    """The summary table (ms; ratios karta/native of p50 and p90)."""
    for r in (native, karta):
        kinds_seen = sorted({s.kind for s in r.samples})
        emit(
            f"== {r.name}: {r.count} workloads ({', '.join(kinds_seen) or '-'}), "
            f"{len(r.samples)} handovers measured"
        )
        emit(f"created (every create returned)        {r.created:7.1f} s")
        emit(f"queued (every Workload exists)         {r.queued:7.1f} s")
        emit(f"phase wall time                        {r.wall:7.1f} s")
        emit(
            f"controller CPU                         {r.cpu:7.1f} s ({100 * r.cpu / r.wall:.0f}% of one core)"
            f"; RSS {r.rss[0]:.0f} MB, peak {r.rss[1]:.0f} MB; {r.retries} reconciles retried"
        )
        emit(
            "load average (1/5/15 min)              start "
            + "/".join(f"{x:.2f}" for x in r.load[0])
            + ", end "
            + "/".join(f"{x:.2f}" for x in r.load[1])
        )
        emit("from quota freed to (ms)               p50    p90    max")
        emit(f"  (0) its Workload deleted           {_ms([s.released for s in r.samples])}")
        emit(f"  (a) Workload Admitted              {_ms([s.admitted for s in r.samples])}")
        emit(f"  (b) workload resumed               {_ms([s.resumed for s in r.samples])}")
        running = [s.running for s in r.samples if s.running is not None]
        if running:
            emit(f"  (c) first pod Running              {_ms(running)}")
        if len(kinds_seen) > 1:
            emit("  by handover (deleted -> next)        (0), (a), (b) p50 / p90")
            for prev, nxt in sorted({(s.previous, s.kind) for s in r.samples}):
                mine = [s for s in r.samples if (s.previous, s.kind) == (prev, nxt)]
                cols = [quantiles([getattr(s, f) for s in mine]) for f in ("released", "admitted", "resumed")]
                emit(
                    f"  {prev + ' -> ' + nxt:<34} "
                    + "  ".join(f"{q[0] * 1000:.0f}/{q[1] * 1000:.0f}" for q in cols)
                )
        for f in r.failures[:5]:
            emit(f"  FAILURE: {f}")
    emit("== karta / native (p50, p90)")
    for label, get in (
        ("(a) admitted", lambda s: s.admitted),
        ("(b) resumed", lambda s: s.resumed),
        ("(c) pod running", lambda s: s.running),
    ):
        k = [v for v in map(get, karta.samples) if v is not None]
        n = [v for v in map(get, native.samples) if v is not None]
        if k and n:
            (k50, k90, _), (n50, n90, _) = quantiles(k), quantiles(n)
            emit(f"  {label:<16} {k50 / n50:5.2f}  {k90 / n90:5.2f}")


@dataclass(frozen=True)
class Names:
    """Every name the bench creates, suffixed per run (a shared cluster may hold older ones)."""

    suffix: str = field(default_factory=lambda: uuid.uuid4().hex[:6])

    def ns(self, phase: str) -> str:
        return f"bench-{phase}-{self.suffix}"

    def cq(self, phase: str) -> str:
        return f"bench-{phase}-{self.suffix}"

    @property
    def flavor(self) -> str:
        return f"bench-gpu-{self.suffix}"

    @property
    def nodes(self) -> str:
        return f"bench-gpu-{self.suffix}"

    @property
    def webhooks(self) -> tuple[str, str]:
        return f"karta-bench-{self.suffix}-mutating", f"karta-bench-{self.suffix}-validating"


PHASES = ("native", "karta")
NODES = 4


def kueue_objects(names: Names, phase: str) -> list[dict[str, Any]]:
    """A namespace, a ClusterQueue of 8 GPUs of the bench's flavor for it, and its LocalQueue ``team``."""
    ns, cq = names.ns(phase), names.cq(phase)
    quota = [{"name": "cpu", "nominalQuota": "64"}, {"name": "memory", "nominalQuota": "256Gi"},
             {"name": GPU, "nominalQuota": "8"}]  # fmt: skip
    group = {
        "coveredResources": ["cpu", "memory", GPU],
        "flavors": [{"name": names.flavor, "resources": quota}],
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {
            "apiVersion": KUEUE,
            "kind": "ClusterQueue",
            "metadata": {"name": cq},
            "spec": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "resourceGroups": [group],
            },
        },
        {
            "apiVersion": KUEUE,
            "kind": "LocalQueue",
            "metadata": {"name": "team", "namespace": ns},
            "spec": {"clusterQueue": cq},
        },
    ]


def wait_until(what: str, check: Callable[[], Any], timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            got = check()
            if got:
                return got
        except ClusterError as exc:
            last = exc
        time.sleep(0.5)
    raise SystemExit(f"timed out waiting for {what}" + (f": {last}" if last else ""))


def _established(client: KubeClient, crd: str) -> bool:
    return _condition(client.get("customresourcedefinitions", crd), "Established").get("status") == "True"


def prepare(client: KubeClient, names: Names) -> bool:
    """The JobSet and TrainingRun CRDs, the Karta CRD and the TrainingRun Karta, 4 kwok Nodes of 8
    GPUs (labelled and tainted), the flavor and both phases' queues. True when the bench created
    the Karta (and must delete it)."""
    from karta.crd import load_crd

    for crd in (*base().load(base().CORPUS / "crds" / "jobset.x-k8s.io_jobsets.yaml"), TRAININGRUN_CRD,
                load_crd()):  # fmt: skip
        crd.get("metadata", {}).pop("annotations", None)
        client.apply(crd, force=True)
    for crd in ("jobsets.jobset.x-k8s.io", "trainingruns.example.com", "kartas.run.ai"):
        wait_until(f"CRD {crd}", lambda c=crd: _established(client, c))
    client.discovery.invalidate()
    karta = yaml.safe_load(TRAININGRUN_KARTA.read_text())
    try:
        client.get("kartas.run.ai", karta["metadata"]["name"])
        created = False
    except ClusterError:
        client.create(karta)
        created = True
    nodes = _module("karta_bench_fake_nodes", ROOT / "hack" / "fake_nodes.py")
    taint = {"key": POOL, "value": names.suffix, "effect": "NoSchedule"}
    nodes.ensure_fake_nodes(
        client,
        count=NODES,
        gpus=8,
        prefix=names.nodes,
        labels={POOL: names.suffix},
        taints=[taint],
        kwok=True,
    )
    flavor = {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": names.flavor},
              "spec": {"nodeLabels": {POOL: names.suffix}}}  # fmt: skip
    client.apply(flavor, force=True)
    for phase in PHASES:
        for obj in kueue_objects(names, phase):
            client.apply(obj, force=True)
    return created


def cleanup(client: KubeClient, names: Names, *, karta: bool) -> None:
    """What :func:`prepare` and the controller's registration created (an existing cluster)."""
    mutating, validating = names.webhooks
    doomed: list[tuple[str, str, str | None]] = [
        ("mutatingwebhookconfigurations", mutating, None),
        ("validatingwebhookconfigurations", validating, None),
        *((("namespaces", names.ns(p), None)) for p in PHASES),
        *((("clusterqueues.v1beta2.kueue.x-k8s.io", names.cq(p), None)) for p in PHASES),
        ("resourceflavors.v1beta2.kueue.x-k8s.io", names.flavor, None),
        *(("nodes", f"{names.nodes}-{i}", None) for i in range(NODES)),
    ]
    if karta:
        doomed.append(("kartas.run.ai", TRAININGRUN_KARTA.stem, None))
    for what, name, ns in doomed:
        with contextlib.suppress(ClusterError):
            client.delete(what, name, namespace=ns)


@contextlib.contextmanager
def private_cluster() -> Iterator[tuple[Path, KubeClient]]:
    """A control plane of its own with kwok, the training operator and Kueue configured as
    ``up.sh --kueue`` does: (its kubeconfig, a client)."""
    from karta.catalog import catalog_definitions
    from karta.kueue.config import kueue_configuration

    cp_mod = base().controlplane()
    config = cp_mod.ControlPlaneConfig(
        bin_dir=cp_mod.build_binaries(),
        controllers=True,
        kwok=True,
        operators=("training",),
        kueue=kueue_configuration(catalog_definitions(), native=cp_mod.KUEUE_NATIVE),
    )
    with (
        tempfile.TemporaryDirectory(prefix="karta-bench-kueue-") as tmp,
        cp_mod.ControlPlane(config=config, workdir=Path(tmp) / "cp") as cp,
    ):
        yield cp.kubeconfig, KubeClient.from_config(ConfigOverrides(kubeconfig=str(cp.kubeconfig)))


def controller_command(
    kubeconfig: Path, names: Names, *, probe: int, metrics: int, webhook: int, certs: Path, log_level: str
) -> list[str]:
    mutating, validating = names.webhooks
    return [
        sys.executable, "-m", "karta.controller", "--kubeconfig", str(kubeconfig),
        "--kueue", "--kueue-native", "batch/job",
        "--metrics-bind-address", f"127.0.0.1:{metrics}",
        "--health-probe-bind-address", f"127.0.0.1:{probe}",
        "--enable-webhook", "--webhook-host", "127.0.0.1", "--webhook-port", str(webhook),
        "--webhook-cert-mode", "manual", "--webhook-cert-dir", str(certs),
        "--register-webhooks", "--webhook-url", f"https://127.0.0.1:{webhook}",
        "--mutating-webhook-name", mutating, "--validating-webhook-name", validating,
        "--log-level", log_level,
    ]  # fmt: skip


def wait_managed(client: KubeClient, names: Names, karta_kinds: Sequence[Kind]) -> None:
    """Until the TrainingRun Karta says KueueManaged and a dry-run creation of each karta kind comes
    back suspended (the suspend webhook is registered with that kind's rule and called)."""

    def managed() -> bool:
        karta = client.get("kartas.run.ai", TRAININGRUN_KARTA.stem)
        return _condition(karta, "KueueManaged").get("status") == "True"

    wait_until("the TrainingRun Karta's KueueManaged condition", managed)
    ns = names.ns("karta")
    for kind in karta_kinds:
        probe = kind.make("probe", ns, "team")

        def suspended(k: Kind = kind, p: dict[str, Any] = probe) -> bool:
            got = client.request_json("POST", k.rtype.collection_path(ns), params={"dryRun": "All"}, body=p)
            return not resumed_state(k.karta, dict(got))

        wait_until(f"the suspend webhook for {kind.label}", suspended)


def run(args: argparse.Namespace, emit: Callable[[str], None]) -> int:
    began = time.monotonic()
    native_kinds, karta_kinds = kinds()
    b = base()
    names = Names()
    with contextlib.ExitStack() as stack:
        if args.kubeconfig:
            kubeconfig = Path(args.kubeconfig)
            client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(kubeconfig)))
        else:
            kubeconfig, client = stack.enter_context(private_cluster())
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="karta-bench-kueue-")))
        created_karta = prepare(client, names)
        if args.kubeconfig:
            stack.callback(cleanup, client, names, karta=created_karta)
        certs = tmp / "certs"
        (certs / "ca.crt").parent.mkdir(parents=True, exist_ok=True)
        (certs / "ca.crt").write_bytes(b.serving_cert(certs))
        free_port = b.controlplane().free_port
        probe, metrics, webhook = free_port(), free_port(), free_port()
        log = tmp / "controller.log"
        ports = {"probe": probe, "metrics": metrics, "webhook": webhook}
        cmd = controller_command(kubeconfig, names, **ports, certs=certs, log_level=args.log_level)
        proc = subprocess.Popen(cmd, stderr=open(log, "wb"))  # noqa: SIM115
        try:
            b.wait_ready(probe, proc, log)
            wait_managed(client, names, karta_kinds)
            emit(f"cluster and controller ready after {time.monotonic() - began:.0f} s")
            results = [
                run_phase(
                    client,
                    phase,
                    names.ns(phase),
                    "team",
                    k,
                    args.workloads,
                    proc.pid,
                    args.timeout,
                    emit,
                    log,
                )
                for phase, k in zip(PHASES, (native_kinds, karta_kinds), strict=True)
            ]
        finally:
            b.stop(proc)
            if args.keep_log:
                Path(args.keep_log).write_bytes(log.read_bytes())
    emit(
        f"== Kueue v0.17.0, {os.cpu_count()} cores; {args.workloads} workloads per phase; "
        "quota: one 8-GPU workload at a time"
    )
    report(results[0], results[1], emit)
    emit(f"bench wall time {time.monotonic() - began:.0f} s")
    return 1 if any(r.failures for r in results) else 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--workloads", type=int, default=500, help="per phase (default 500)")
    p.add_argument("--timeout", type=float, default=120.0, help="for each wait (s)")
    p.add_argument(
        "--kubeconfig",
        help="an existing cluster with kwok, the training operator and Kueue as up.sh --kueue configures "
        'it (eval "$(bash hack/cluster/up.sh --kueue --kwok --operators training)"); what the bench '
        "creates there is removed afterwards. Default: a control plane of its own",
    )
    p.add_argument("--keep-log", metavar="FILE", help="copy the controller's log here")
    p.add_argument("--log-level", default="warning", help="the controller's (default warning)")
    args = p.parse_args(argv)
    if args.workloads < 2:
        p.error("--workloads must be at least 2 (one handover)")
    return args


def main() -> int:
    return run(parse_args(), lambda line: print(line, flush=True))


if __name__ == "__main__":
    raise SystemExit(main())
