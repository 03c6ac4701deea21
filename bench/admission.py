"""Pod admission isolated from load (issue 21 item 6): ``bench/controller.py --admission``.

One control plane, one ``karta-controller --backend workload-api --enable-webhook`` process (which
serves the webhooks from its admission child unless ``--controller-arg=--admission-process=false``),
three phases, each measured the same way:

* **admissions**: the bench is the pod webhook's HTTPS client, as the API server is: one
  AdmissionReview every 1/50 s (a pod owned by one of 25 real Jobs, so every answer resolves the
  owner, the definition and the gang and, the first time, writes the group objects), sent by a
  pool of keep-alive connections; each latency runs from the request's *due* time, so a slow
  answer is charged to every request it delays (no coordinated omission). Exact quantiles of
  every sample, not histogram buckets;
* **endpoints**: ``/healthz``, ``/readyz`` and ``/metrics`` twice a second, each timed (a request
  that does not answer within 10 s counts as 10 s).

Phases: ``idle`` (everything synced, nothing to do), ``burst`` (while 2,000 workloads of five
kinds are created and reconciled; the phase lasts until every one has its group objects),
``settled`` (after the burst, the hostile CRD's objects created: the hostile phase's baseline) and
``hostile`` (while a cluster Karta whose three status matchers each spend the whole time budget
covers ``--hostile-objects`` objects of its CRD).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import ssl
import statistics
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from controller import (
    bench_cluster,
    children,
    controller_command,
    create_all,
    group_objects,
    owners,
    peak_rss_mb,
    serving_cert,
    wait_ready,
    webhook_args,
    workloads,
)

from karta.controller.parts.pod_binding.admission import PATH
from karta.crd import load_crd
from karta.errors import ClusterError
from karta.kube import ConfigOverrides, KubeClient
from karta.kube.resources import ResourceType

RATE = 50.0
CONNECTIONS = 8
TARGET_P99_S = 0.050
ENDPOINT_TARGET_S = 0.100
ENDPOINT_TIMEOUT_S = 10.0
HOSTILE_GROUP = "hostile.bench.karta.dev"
SPIN = "until(false; .) | true"  # runs until the time budget stops it
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
JOBS = ResourceType(group="batch", version="v1", kind="Job", plural="jobs", namespaced=True)


def hostile_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"spinners.{HOSTILE_GROUP}"},
        "spec": {
            "group": HOSTILE_GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": "Spinner",
                "plural": "spinners",
                "singular": "spinner",
                "listKind": "SpinnerList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


def hostile_karta() -> dict[str, Any]:
    """A valid definition of Spinner whose three status matchers each spin until the time budget."""
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "bench-spinner"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "spinner",
                    "kind": {"group": HOSTILE_GROUP, "version": "v1", "kind": "Spinner"},
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "scaleDefinition": {"replicasPath": ".spec.replicas"},
                    "statusDefinition": {
                        "statusMappings": {
                            "running": [{"byExpression": {"expression": SPIN, "expectedResult": "true"}}],
                            "failed": [{"byExpression": {"expression": SPIN, "expectedResult": "true"}}],
                            "completed": [{"byExpression": {"expression": SPIN, "expectedResult": "true"}}],
                        }
                    },
                }
            },
            "optimizationInstructions": {"gangScheduling": {"podGroup": {"name": "spinner"}}},
        },
    }


def spinner(i: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{HOSTILE_GROUP}/v1",
        "kind": "Spinner",
        "metadata": {"name": f"spinner-{i}", "namespace": "hostile"},
        "spec": {
            "replicas": 2,
            "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
        },
        "status": {"phase": "Running"},
    }


def quantile(samples: list[float], q: float) -> float:
    """The exact q-quantile (nearest rank) of ``samples``."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 1))))
    return ordered[rank - 1]


class Admissions:
    """AdmissionReviews at :data:`RATE` per second over keep-alive HTTPS connections."""

    def __init__(self, port: int, ca: bytes, jobs: list[dict[str, Any]]) -> None:
        self.port, self.jobs = port, jobs
        self.context = ssl.create_default_context(cadata=ca.decode())
        self._local = threading.local()
        self._count = 0
        self.bound = 0
        self.offsets: list[float] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()

    def _connection(self) -> http.client.HTTPSConnection:
        conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=15)
            self._local.conn = conn
        return conn

    def _review(self) -> bytes:
        with self._lock:
            self._count += 1
            i = self._count
        job = self.jobs[i % len(self.jobs)]
        name, uid = job["metadata"]["name"], job["metadata"]["uid"]
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{i}",
                "namespace": "pods",
                "labels": {"batch.kubernetes.io/job-name": name, "batch.kubernetes.io/controller-uid": uid},
                "ownerReferences": [
                    {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid, "controller": True}
                ],
            },
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
        }
        review = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": str(uuid.uuid4()),
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "operation": "CREATE",
                "namespace": "pods",
                "name": pod["metadata"]["name"],
                "object": pod,
                "dryRun": False,
                "userInfo": {"username": "system:serviceaccount:kube-system:job-controller"},
            },
        }
        return json.dumps(review).encode()

    def _send(self, due: float) -> float:
        body = self._review()
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request("POST", PATH, body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = resp.read()
                break
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    with self._lock:
                        self.errors.append(str(exc))
                    return time.monotonic() - due
        took = time.monotonic() - due
        answer = json.loads(data).get("response") or {}
        with self._lock:
            if resp.status != 200 or not answer.get("allowed"):
                self.errors.append(f"HTTP {resp.status}: {data[:200]!r}")
            elif answer.get("patch"):
                self.bound += 1
        return took

    def run(self, seconds: float, *, until: Callable[[], bool] | None = None) -> list[float]:
        """Send for ``seconds`` (and, with ``until``, until it is true); the latencies."""
        started = time.monotonic()
        futures = []
        with ThreadPoolExecutor(CONNECTIONS, thread_name_prefix="admission") as pool:
            i = 0
            while True:
                due = started + i / RATE
                if due - started >= seconds and (until is None or until()):
                    break
                now = time.monotonic()
                if due > now + 0.002:
                    time.sleep(due - now - 0.002)
                futures.append(pool.submit(self._send, due))
                i += 1
        self.offsets = [i / RATE for i in range(len(futures))]  # each sample's due time in the phase
        return [f.result() for f in futures]


class Endpoints(threading.Thread):
    """``/healthz``, ``/readyz`` and ``/metrics`` twice a second until stopped; their latencies."""

    def __init__(self, probe_port: int, metrics_port: int) -> None:
        super().__init__(name="endpoints", daemon=True)
        self.urls = {
            "/healthz": f"http://127.0.0.1:{probe_port}/healthz",
            "/readyz": f"http://127.0.0.1:{probe_port}/readyz",
            "/metrics": f"http://127.0.0.1:{metrics_port}/metrics",
        }
        self.samples: dict[str, list[float]] = {k: [] for k in self.urls}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.5):
            for key, url in self.urls.items():
                t = time.monotonic()
                try:
                    with urllib.request.urlopen(url, timeout=ENDPOINT_TIMEOUT_S) as resp:
                        resp.read()
                    took = time.monotonic() - t
                except urllib.error.HTTPError:
                    took = time.monotonic() - t  # /readyz 500 is an answer
                except OSError:
                    took = ENDPOINT_TIMEOUT_S
                self.samples[key].append(took)


class CpuShares:
    """CPU time of named processes over a phase (``/proc/PID/stat``, every thread; a name's
    ``descendants`` adds its child processes except the admission child), as a share of one core."""

    def __init__(self, pids: dict[str, int], descendants: tuple[str, ...] = ()) -> None:
        self.pids, self.descendants = pids, descendants
        self._start: dict[str, float] = {}
        self._t0 = 0.0

    def _pids(self, name: str) -> list[int]:
        pid = self.pids[name]
        found = [pid]
        if name in self.descendants:
            admission = set(children(pid))
            for task in Path(f"/proc/{pid}/task").glob("*/children"):
                with contextlib.suppress(OSError):
                    found += [int(c) for c in task.read_text().split() if int(c) not in admission]
        return found

    @staticmethod
    def _seconds(pid: int) -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime

    def _now(self) -> dict[str, float]:
        return {name: sum(self._seconds(p) for p in self._pids(name)) for name in self.pids}

    def start(self) -> None:
        self._start, self._t0 = self._now(), time.monotonic()

    def shares(self) -> dict[str, float]:
        end, wall = self._now(), max(1e-9, time.monotonic() - self._t0)
        return {name: (end[name] - self._start.get(name, 0.0)) / wall for name in self.pids}


class Floor(threading.Thread):
    """The API server's own latency in the phase: a GET of one Job from its watch cache ten times a
    second from the bench's client (the read pod admission makes for a pod's workload), timed."""

    def __init__(self, client: KubeClient, job: dict[str, Any]) -> None:
        super().__init__(name="floor", daemon=True)
        self.client, self.job = client, job
        self.samples: list[float] = []
        self.offsets: list[float] = []  # when each read started (time.monotonic())
        self.stop = threading.Event()

    def run(self) -> None:
        name = self.job["metadata"]["name"]
        while not self.stop.wait(0.1):
            t = time.monotonic()
            with contextlib.suppress(ClusterError):
                self.client.get(JOBS, name, namespace="pods", resource_version="0")
            self.samples.append(time.monotonic() - t)
            self.offsets.append(t)


def _worst_seconds(offsets: list[float], latencies: list[float]) -> dict[int, float]:
    """The largest latency per whole second of the phase (by when each sample was due)."""
    worst: dict[int, float] = {}
    for offset, latency in zip(offsets, latencies, strict=False):
        second = int(offset)
        worst[second] = max(worst.get(second, 0.0), latency)
    return worst


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f}"


def report(phase: str, latencies: list[float], endpoints: Endpoints, emit: Callable[[str], None]) -> bool:
    p50, p99, top = quantile(latencies, 0.5), quantile(latencies, 0.99), max(latencies)
    emit(
        f"{phase:8s} admission  n={len(latencies):5d}  p50 {_ms(p50)} ms  p99 {_ms(p99)} ms  "
        f"max {_ms(top)} ms  mean {_ms(statistics.fmean(latencies))} ms"
    )
    ok = p99 <= TARGET_P99_S
    for key, samples in endpoints.samples.items():
        if not samples:
            emit(f"{phase:8s} {key:9s}  no sample")
            ok = False
            continue
        worst = max(samples)
        p50 = quantile(samples, 0.5)
        emit(f"{phase:8s} {key:9s}  n={len(samples):5d}  p50 {_ms(p50)} ms  max {_ms(worst)} ms")
        ok = ok and worst <= ENDPOINT_TARGET_S
    return ok


def burst(kubeconfig: str, count: int, timeout: float, result: Any) -> None:
    """Create ``count`` workloads and wait until each has its group objects; puts the seconds it
    took (None past ``timeout``) on ``result``. Runs in its own process."""
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=kubeconfig))
    objs = list(workloads(count, "bench"))
    started = time.monotonic()
    create_all(client, objs)
    while time.monotonic() - started < timeout:
        if len(owners(group_objects(client, "bench"))) >= count:
            result.put(time.monotonic() - started)
            return
        time.sleep(0.5)
    result.put(None)


def run_admission(args: argparse.Namespace, emit: Callable[[str], None]) -> int:
    import subprocess

    with bench_cluster(("bench", "pods", "hostile")) as (cp_mod, tmp, cp, client):
        for crd in (load_crd(), hostile_crd()):
            crd.get("metadata", {}).pop("annotations", None)
            client.apply(crd, force=True)
        deadline = time.monotonic() + 60
        while not (
            client.discovery.find("run.ai", "v1alpha1", "Karta")
            and client.discovery.find(HOSTILE_GROUP, "v1", "Spinner")
        ):
            if time.monotonic() > deadline:
                raise SystemExit("the Karta and Spinner CRDs are not served after 60 s")
            time.sleep(0.2)
            client.discovery.invalidate()
        probe, metrics, webhook = cp_mod.free_port(), cp_mod.free_port(), cp_mod.free_port()
        ca = serving_cert(Path(tmp) / "certs")
        cmd = [
            *controller_command(cp.kubeconfig, probe=probe, metrics=metrics, workers=args.workers),
            *webhook_args(webhook, Path(tmp) / "certs"),
            *args.controller_arg,
        ]
        log = Path(tmp) / "controller.log"
        proc = subprocess.Popen(cmd, stderr=open(log, "wb"))  # noqa: SIM115
        ok = True
        try:
            wait_ready(probe, proc, log)
            jobs = [
                client.create(
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "metadata": {"name": f"j{j}", "namespace": "pods"},
                        "spec": {
                            "parallelism": 40,
                            "completions": 40,
                            "suspend": True,
                            "template": {
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [{"name": "c", "image": "busybox"}],
                                }
                            },
                        },
                    }
                )
                for j in range(25)
            ]
            admissions = Admissions(webhook, ca, jobs)
            admissions.run(2.0)  # connections, owner cache, the Jobs' group objects: not measured
            emit(
                f"== pod admission at {RATE:.0f}/s, exact client-side quantiles "
                "(target p99 <= 50 ms; endpoints <= 100 ms)"
            )

            processes = {"kube-apiserver": cp.pids["kube-apiserver"], "etcd": cp.pids["etcd"]}
            processes |= {"controller": proc.pid, "admission child": next(iter(children(proc.pid)), proc.pid)}
            processes["bench"] = os.getpid()
            cpu = CpuShares(processes, descendants=("controller",))

            def phase(name: str, seconds: float, until: Callable[[], bool] | None = None) -> bool:
                endpoints, floor = Endpoints(probe, metrics), Floor(client, jobs[0])
                endpoints.start()
                floor_started = time.monotonic()
                floor.start()
                cpu.start()
                try:
                    latencies = admissions.run(seconds, until=until)
                finally:
                    for thread in (endpoints, floor):
                        thread.stop.set()
                        thread.join()
                ok = report(name, latencies, endpoints, emit)
                started = floor_started
                worst = sorted(_worst_seconds(admissions.offsets, latencies).items(), key=lambda kv: -kv[1])[
                    :3
                ]
                slow_floor = _worst_seconds([t - started for t in floor.offsets], floor.samples)
                emit(
                    f"{name:8s} slowest seconds (admission max / floor max): "
                    + ", ".join(
                        f"t+{sec}s {_ms(v).strip()}/{_ms(slow_floor.get(sec, 0.0)).strip()} ms"
                        for sec, v in worst
                    )
                )
                got = floor.samples
                emit(
                    f"{name:8s} floor      n={len(got):5d}  p50 {_ms(quantile(got, 0.5))} ms  "
                    f"p99 {_ms(quantile(got, 0.99))} ms  (a GET of a Job from the bench)"
                )
                emit(
                    f"{name:8s} cpu        "
                    + ", ".join(f"{k} {v * 100:.0f}%" for k, v in cpu.shares().items())
                    + " (of one core)"
                )
                return ok

            ok = phase("idle", args.phase_seconds) and ok

            # The burst comes from another process: in this one its client threads would hold the
            # GIL against the admission client's and the figure would measure the bench itself.
            ctx = multiprocessing.get_context("spawn")
            result = ctx.Queue()
            creator = ctx.Process(
                target=burst,
                args=(str(cp.kubeconfig), args.workloads, args.timeout, result),
                name="burst",
                daemon=True,
            )
            creator.start()
            ok = phase("burst", 5.0, until=lambda: not creator.is_alive()) and ok
            converged: float | None = result.get(timeout=30)
            emit(
                f"burst    {args.workloads} workloads converged in "
                + (
                    f"{converged:.1f} s"
                    if converged is not None
                    else f"more than {args.timeout:.0f} s (INCOMPLETE)"
                )
            )
            ok = ok and converged is not None

            create_all(client, [spinner(i) for i in range(args.hostile_objects)])
            # The same, without the hostile Karta: what the API server and the machine do after the
            # burst, the hostile phase's baseline.
            ok = phase("settled", args.phase_seconds) and ok
            client.apply(hostile_karta(), force=True)
            ok = phase("hostile", args.phase_seconds) and ok
            emit(
                f"admissions bound {admissions.bound}, errors {len(admissions.errors)}"
                + (f": {admissions.errors[:3]}" if admissions.errors else "")
            )
            emit(
                f"controller peak RSS {peak_rss_mb(proc.pid):.0f} MB"
                + "".join(f", admission child {peak_rss_mb(pid):.0f} MB" for pid in children(proc.pid))
            )
            emit("all targets met" if ok and not admissions.errors else "some targets missed")
            return 0
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
