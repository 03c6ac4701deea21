"""The controller under a burst, run on demand: ``.venv/bin/python bench/controller.py``.

Starts a private control plane (hack/cluster, etcd + kube-apiserver v1.37), installs the corpus
CRDs of the kinds used, starts ``karta-controller --backend workload-api`` as a subprocess and
creates a burst of workloads of five kinds (batch Job, PyTorchJob, JobSet, LeaderWorkerSet,
RayCluster; 2,000 by default, ``--workloads N``). Prints:

* the time from the first create until every workload has its group objects (a Workload and
  its PodGroups, owned by the workload and labelled ``app.kubernetes.io/managed-by: karta``), next
  to the floor: the time the same client takes to create that many group objects itself
  (sequential creates, measured in the same run);
* the controller's peak RSS (``VmHWM`` of the process);
* with ``--webhook``: the pod webhook's latency at 50 pod creations per second (p50 and p99 from
  the controller's ``karta_webhook_latency_seconds`` histogram, and as the client saw it);
* with ``--admission`` instead (issue 21 item 6): pod admission isolated from load. The bench
  itself is the webhook's HTTPS client, as the API server is: AdmissionReviews of pods owned by
  real Jobs at 50 per second (each timed from its due time, so a slow answer delays no later
  measurement), exact client-side quantiles, in four phases of one controller process:
  ``idle``; ``burst`` (while the 2,000-workload burst reconciles); ``settled`` (500 objects of
  another CRD under a benign Karta, their group objects written); ``hostile`` (that Karta's status
  matchers now each spend the time budget). Every phase also times ``/healthz``, ``/readyz`` and
  ``/metrics`` twice a second (a scrape too slow counts at its 10 s timeout), the API server's
  own latency for the read admission makes (the *floor*), each process's CPU, and the phase's
  slowest seconds.

Targets on the 2-core machine: at most 30 s and 300 MB for 2,000 workloads; webhook p99 at most
50 ms in every phase; probes and scrapes within 100 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from karta.kube import ConfigOverrides, KubeClient
from karta.kube.resources import ResourceType

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
MANAGED = "app.kubernetes.io/managed-by=karta"


def controlplane() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "karta_bench_cp", ROOT / "hack" / "cluster" / "controlplane.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["karta_bench_cp"] = module
    spec.loader.exec_module(module)
    return module


def load(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader) if d]


def install_crds(client: KubeClient, files: list[str]) -> None:
    for name in files:
        (crd,) = load(CORPUS / "crds" / name)
        crd.get("metadata", {}).pop("annotations", None)
        client.apply(crd, force=True)
    deadline = time.monotonic() + 60
    for name in files:
        (crd,) = load(CORPUS / "crds" / name)
        spec = crd["spec"]
        version = next(v["name"] for v in spec["versions"] if v.get("served"))
        while not client.discovery.find(spec["group"], version, spec["names"]["kind"]):
            if time.monotonic() > deadline:
                raise SystemExit(f"CRD {crd['metadata']['name']} not served after 60 s")
            time.sleep(0.2)
            client.discovery.invalidate()


def templates() -> list[dict[str, Any]]:
    w = CORPUS / "workloads"
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "job"},
        "spec": {
            "parallelism": 4,
            "completions": 4,
            "suspend": True,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
            },
        },
    }
    return [
        job,
        load(w / "kubeflow-training-v1" / "pytorchjob-simple.yaml")[0],
        load(w / "jobset" / "paralleljobs.yaml")[0],
        load(w / "lws" / "lws-sample.yaml")[0],
        load(w / "kuberay" / "raycluster-sample.yaml")[0],
    ]


def workloads(count: int, namespace: str) -> Iterator[dict[str, Any]]:
    kinds = templates()
    for i in range(count):
        obj = copy.deepcopy(kinds[i % len(kinds)])
        obj["metadata"] = {"name": f"{obj['kind'].lower()}-{i}", "namespace": namespace}
        yield obj


def create_all(client: KubeClient, objs: list[dict[str, Any]], threads: int = 4) -> None:
    in_threads(client.create, objs, threads)


def in_threads(call: Callable[[Any], object], items: Sequence[Any], threads: int = 4) -> None:
    """``call(item)`` for every item, in ``threads`` threads taking the next item in turn; the
    first error stops every thread and is raised here."""
    it = iter(items)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker() -> None:
        while True:
            with lock:
                item = None if errors else next(it, None)
            if item is None:
                return
            try:
                call(item)
            except BaseException as exc:
                with lock:
                    errors.append(exc)
                return

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]


GROUP_TYPES = (
    ResourceType(
        group="scheduling.k8s.io", version="v1beta1", kind="Workload", plural="workloads", namespaced=True
    ),
    ResourceType(
        group="scheduling.k8s.io", version="v1beta1", kind="PodGroup", plural="podgroups", namespaced=True
    ),
)


def group_objects(client: KubeClient, namespace: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for rtype in GROUP_TYPES:
        out.extend(client.list(rtype, namespace=namespace, label_selector=MANAGED, metadata_only=True).items)
    return out


def owners(objs: list[dict[str, Any]]) -> set[str]:
    return {ref["uid"] for o in objs for ref in (o.get("metadata") or {}).get("ownerReferences") or []}


def children(pid: int, marker: bytes = b"--role=admission") -> list[int]:
    """The child processes of ``pid`` whose command line has ``marker`` (the admission child, not
    the evaluation workers)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in task.read_text().split():
            try:
                if marker in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0"):
                    found.append(int(child))
            except OSError:
                continue
    return found


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_ready(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    body = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the controller exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
                if resp.status == 200:
                    return
        except urllib.error.HTTPError as exc:
            body = exc.read().decode()
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the controller did not become ready:\n{body}\n{log.read_text()[-2000:]}")


def serving_cert(directory: Path) -> bytes:
    """A CA and a serving certificate for 127.0.0.1 in ``directory`` (the controller's own
    certificate functions); the CA's PEM."""
    from karta.controller.parts.certs import new_ca, new_leaf

    now = datetime.datetime.now(datetime.UTC)
    ca = new_ca(now=now, validity=86400, name="bench-ca")
    leaf = new_leaf(ca, ["127.0.0.1"], now=now, validity=86400)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tls.crt").write_bytes(leaf.cert)
    (directory / "tls.key").write_bytes(leaf.key)
    return ca.cert


def histogram_quantiles(text: str, name: str, quantiles: tuple[float, ...]) -> list[float]:
    """Quantiles of a Prometheus histogram (upper bucket bounds, summed over its label sets)."""
    buckets: dict[float, float] = {}
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket{{"):
            labels, value = line.rsplit(" ", 1)
            le = labels.split('le="', 1)[1].split('"', 1)[0]
            bound = float("inf") if le == "+Inf" else float(le)
            buckets[bound] = buckets.get(bound, 0.0) + float(value)
    bounds = sorted(buckets)
    total = buckets.get(float("inf"), 0.0)
    out = []
    for q in quantiles:
        target = q * total
        out.append(next((b for b in bounds if buckets[b] >= target), float("inf")))
    return out


@contextlib.contextmanager
def bench_cluster(namespaces: tuple[str, ...]) -> Iterator[tuple[ModuleType, str, Any, KubeClient]]:
    """A private control plane with the burst's CRDs and ``namespaces``: (the control-plane
    module, a temporary directory, the control plane, a client)."""
    cp_mod = controlplane()
    config = cp_mod.ControlPlaneConfig(bin_dir=cp_mod.build_binaries(), controllers=False)
    with (
        tempfile.TemporaryDirectory(prefix="karta-bench-") as tmp,
        cp_mod.ControlPlane(config=config, workdir=Path(tmp) / "cp") as cp,
    ):
        client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cp.kubeconfig)))
        install_crds(
            client,
            [
                "kubeflow.org_pytorchjobs.yaml",
                "jobset.x-k8s.io_jobsets.yaml",
                "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
                "ray.io_rayclusters.yaml",
            ],
        )
        for ns in namespaces:
            client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        yield cp_mod, tmp, cp, client


def controller_command(
    kubeconfig: Path, *, probe: int, metrics: int, workers: int, extra: Sequence[str] = ()
) -> list[str]:
    """``python -m karta.controller`` with the workload-api backend and every namespace in the gang
    scope (``--gang-scope all``), quiet logs, its probes and metrics on loopback ports, and ``extra``."""
    return [
        sys.executable,
        "-m",
        "karta.controller",
        "--kubeconfig",
        str(kubeconfig),
        "--backend",
        "workload-api",
        "--gang-scope",  # every namespace, as before issue 22: the burst measures the same work
        "all",
        "--metrics-bind-address",
        f"127.0.0.1:{metrics}",
        "--health-probe-bind-address",
        f"127.0.0.1:{probe}",
        "--log-level",
        "warning",
        *extra,
        "--workers",
        str(workers),
    ]


def webhook_args(port: int, cert_dir: Path) -> list[str]:
    """The webhook server on 127.0.0.1:``port`` with the mounted certificate of ``cert_dir``."""
    return [
        "--enable-webhook",
        "--webhook-host",
        "127.0.0.1",
        "--webhook-port",
        str(port),
        "--webhook-cert-mode",
        "manual",
        "--webhook-cert-dir",
        str(cert_dir),
    ]


def run(args: argparse.Namespace, emit: Callable[[str], None]) -> int:
    with bench_cluster(("bench", "floor", "pods")) as (cp_mod, tmp, cp, client):
        probe, metrics_port, webhook_port = cp_mod.free_port(), cp_mod.free_port(), cp_mod.free_port()
        cmd = controller_command(
            cp.kubeconfig,
            probe=probe,
            metrics=metrics_port,
            workers=args.workers,
            extra=["--cluster-definitions", "false", "--definitions-dir", str(Path(tmp) / "none")],
        )
        if args.webhook:
            ca = serving_cert(Path(tmp) / "certs")
            cmd += webhook_args(webhook_port, Path(tmp) / "certs")
        cmd += args.controller_arg
        log = Path(tmp) / "controller.log"
        proc = subprocess.Popen(cmd, stderr=open(log, "wb"))  # noqa: SIM115
        try:
            wait_ready(probe, proc, log)
            objs = list(workloads(args.workloads, "bench"))
            started = time.monotonic()
            create_all(client, objs)
            created = time.monotonic() - started
            deadline = started + args.timeout
            found: list[dict[str, Any]] = []
            while time.monotonic() < deadline:
                found = group_objects(client, "bench")
                if len(owners(found)) >= args.workloads:
                    break
                time.sleep(0.5)
            converged = time.monotonic() - started
            complete = len(owners(found)) >= args.workloads
            rss = peak_rss_mb(proc.pid)
            # The floor: the same client creating that many group objects itself, one by one.
            floor_objs = [
                {
                    "apiVersion": "scheduling.k8s.io/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": f"floor-{i}", "namespace": "floor"},
                    "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
                }
                for i in range(len(found))
            ]
            t0 = time.monotonic()
            for o in floor_objs:
                client.create(o)
            floor = time.monotonic() - t0
            emit(f"== burst of {args.workloads} workloads of 5 kinds (backend workload-api)")
            emit(f"creating the workloads (4 client threads)  {created:7.1f} s")
            state = "" if complete else f"  (INCOMPLETE: {len(owners(found))} workloads covered)"
            emit(f"until every group object exists            {converged:7.1f} s{state}")
            emit(f"group objects                              {len(found):7d}")
            emit(
                f"floor: the client creating as many itself   {floor:7.1f} s   ratio {converged / floor:5.1f}"
            )
            emit(f"controller peak RSS                        {rss:7.0f} MB")
            ok = complete and converged <= 30 and rss <= 300
            if args.webhook:
                ok = webhook_latency(client, cp, ca, webhook_port, metrics_port, emit) and ok
            emit("targets: <= 30 s, <= 300 MB" + (", webhook p99 <= 50 ms" if args.webhook else ""))
            emit("all targets met" if ok else "some targets missed")
            return 0
        finally:
            stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 30 s."""
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()


def webhook_latency(
    client: KubeClient, cp: Any, ca: bytes, port: int, metrics_port: int, emit: Callable[[str], None]
) -> bool:
    import base64

    client.apply(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "karta-bench-pods"},
            "webhooks": [
                {
                    "name": "pods.karta.run.ai",
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "NoneOnDryRun",
                    "failurePolicy": "Fail",
                    "timeoutSeconds": 5,
                    "clientConfig": {
                        "url": f"https://127.0.0.1:{port}/mutate--v1-pod",
                        "caBundle": base64.b64encode(ca).decode(),
                    },
                    "rules": [
                        {
                            "operations": ["CREATE"],
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "resources": ["pods"],
                        }
                    ],
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "pods"}},
                }
            ],
        },
        force=True,
    )
    time.sleep(2)
    # The pods belong to 25 Jobs (as kube-controller-manager creates them: controller reference,
    # job-name labels), so every admission resolves the owner, the definition and the gang.
    jobs = []
    for j in range(25):
        job = client.create(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": f"j{j}", "namespace": "pods"},
                "spec": {
                    "parallelism": 40,
                    "completions": 40,
                    "suspend": True,
                    "template": {
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
                    },
                },
            }
        )
        jobs.append(job)
    seen: list[float] = []
    total, rate = 1000, 50.0
    started = time.monotonic()
    for i in range(total):
        due = started + i / rate
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        t = time.monotonic()
        job = jobs[i % len(jobs)]
        name, uid = job["metadata"]["name"], job["metadata"]["uid"]
        client.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-{i}",
                    "namespace": "pods",
                    "labels": {
                        "batch.kubernetes.io/job-name": name,
                        "batch.kubernetes.io/controller-uid": uid,
                    },
                    "ownerReferences": [
                        {
                            "apiVersion": "batch/v1",
                            "kind": "Job",
                            "name": name,
                            "uid": uid,
                            "controller": True,
                        }
                    ],
                },
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
            }
        )
        seen.append(time.monotonic() - t)
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    p50, p99 = histogram_quantiles(text, "karta_webhook_latency_seconds", (0.5, 0.99))
    patched = sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith('karta_webhook_requests_total{outcome="patched",webhook="pods"}')
    )
    seen.sort()
    emit(f"== pod webhook at {rate:.0f} creations/s ({total} pods of 25 Jobs, {patched:.0f} bound)")
    emit(f"webhook latency (controller histogram)     p50 <= {p50 * 1000:.0f} ms, p99 <= {p99 * 1000:.0f} ms")
    emit(
        f"pod create as the client saw it            p50 {statistics.median(seen) * 1000:.0f} ms, "
        f"p99 {seen[int(len(seen) * 0.99) - 1] * 1000:.0f} ms"
    )
    del cp
    return p99 <= 0.05


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", type=int, default=2000)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--webhook", action="store_true", help="also measure the pod webhook's latency")
    p.add_argument(
        "--admission",
        action="store_true",
        help="measure pod admission idle, under the burst and next to a hostile Karta (issue 21 item 6)",
    )
    p.add_argument("--hostile-objects", type=int, default=500)
    p.add_argument("--phase-seconds", type=float, default=20.0, help="idle and hostile phases (s)")
    p.add_argument(
        "--controller-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for karta-controller (repeatable; e.g. "
        "--controller-arg=--admission-process=false: the webhooks in the controller's own process)",
    )
    args = p.parse_args()
    if args.admission:
        from admission import run_admission

        return run_admission(args, print)
    return run(args, print)


if __name__ == "__main__":
    raise SystemExit(main())
