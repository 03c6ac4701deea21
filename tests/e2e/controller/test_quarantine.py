"""A noisy definition is quarantined on the real API server (issue 21 item 7).

``python -m karta.controller --backend workload-api`` as a real process (so that its probes and
scrapes are timed as a kubelet and Prometheus would see them, not behind this test's threads),
watching one namespace, with the default quarantine (5 budget breaches within 60 s). In it:

- :data:`HOSTILE` objects of the hostile suite's CRD (``tests/hostile/bombs.py``), covered by a
  cluster Karta whose three status matchers each spin until the 2 s per-object time budget stops
  them (``until(false; .) | true``);
- at the same moment, a burst of :data:`JOBS` batch Jobs (the catalog's definition).

Then: the Karta gets ``Degraded=True``, reason ``BudgetExceeded`` (the expression and the budget
in the message), a Warning event and ``karta_definition_quarantined 1``; every Job gets its
Workload and PodGroup; the hostile objects' group objects, written before the quarantine, stay as
they are; ``/metrics``, ``/healthz`` and ``/readyz``, each timed 20 times a second throughout,
answer within 250 ms at the 99th percentile and none ever waits for an evaluation (every answer
within half of one object's 2 s time budget). The figures are bounds that tell a wait for an
evaluation (hundreds of ms to 2 s) from a busy machine, not speed targets (those live in bench/):
this 2-core machine also runs the API server, etcd and this test, and a maximum over hundreds of
samples measures the machine's worst moment (one 147 ms answer in one CI run, a 105 ms p99 in
another; 20–80 ms here). A fixed
Karta (a new generation) lifts it: ``Degraded=False`` and the hostile objects counted as Running.
The figures (time to quarantine, endpoint latencies) are printed (``pytest -s``)."""

from __future__ import annotations

import contextlib
import copy
import json
import math
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from karta.errors import ApiError
from karta.kube import KubeClient
from karta.kube.resources import ResourceType
from tests.hostile import bombs

from ..cli.conftest import _wait_served, ensure_karta_crd
from ..kubehttp import KubeHTTP
from ..test_hostile_live import CRD
from .certs_support import Process, free_port, kube_client, unique, wait_for

__all__ = ["kube_client"]  # fixtures used by name

pytestmark = pytest.mark.slow

HOSTILE = 500  # objects of the hostile Karta's kind (the figure)
JOBS = 200  # the normal burst next to it
ENDPOINT_TARGET_S = 0.250  # at the 99th percentile: far from an evaluation's wait (up to the 2 s budget),
# clear of a loaded 2-core CI machine (p99 105 ms in one CI run, 20-80 ms otherwise)
ENDPOINT_BOUND_S = 1.0  # every answer: half of one object's time budget, so no answer waited for one
ENDPOINT_PERIOD_S = 0.05
ENDPOINT_TIMEOUT_S = 10.0
SPIN = "until(false; .) | true"  # runs until the time budget stops it
CONVERGE_S = 240.0  # a hang guard for the burst on a loaded 2-core machine
MANAGED = "app.kubernetes.io/managed-by=karta"
BOMBS = ResourceType(bombs.GROUP, "v1", "Bomb", "bombs", namespaced=True)
GROUP_TYPES = (
    ResourceType("scheduling.k8s.io", "v1beta1", "Workload", "workloads", namespaced=True),
    ResourceType("scheduling.k8s.io", "v1beta1", "PodGroup", "podgroups", namespaced=True),
)


def bomb(i: int, namespace: str) -> dict[str, Any]:
    """The hostile suite's object, renamed: its status says Running (the fixed matcher's answer)."""
    obj = copy.deepcopy(bombs.OBJECT)
    obj["metadata"] = {"name": f"bomb-{i}", "namespace": namespace}
    return obj


def batch_job(i: int, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"job-{i}", "namespace": namespace},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "suspend": True,  # no pods wanted: the group objects are what is checked
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}],
                }
            },
        },
    }


def create_all(client: KubeClient, objs: list[dict[str, Any]], threads: int = 4) -> None:
    pending = iter(objs)
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                obj = next(pending, None)
            if obj is None:
                return
            client.create(obj)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


POLLER = """
import json, sys, time, urllib.error, urllib.request
urls, timeout, stop, period = json.loads(sys.argv[1]), float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
samples = {key: [] for key in urls}
while True:
    for key, url in urls.items():
        started = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=timeout) as answer:
                answer.read()
            took = time.monotonic() - started
        except urllib.error.HTTPError:
            took = time.monotonic() - started  # /readyz 500 is an answer
        except OSError:
            took = timeout
        samples[key].append(took)
    try:
        open(stop).close()
        break
    except OSError:
        time.sleep(period)
print(json.dumps(samples))
"""


class Endpoints:
    """``/healthz``, ``/readyz`` and ``/metrics`` every :data:`ENDPOINT_PERIOD_S`, timed by a process of
    its own (this test's threads parse large lists: their pauses must not count as the controller's) until
    :meth:`stop`; a request that fails to connect or times out counts as the timeout."""

    def __init__(self, probe_port: int, metrics_port: int, workdir: Path) -> None:
        self.urls = {
            "/healthz": f"http://127.0.0.1:{probe_port}/healthz",
            "/readyz": f"http://127.0.0.1:{probe_port}/readyz",
            "/metrics": f"http://127.0.0.1:{metrics_port}/metrics",
        }
        self.stop_file = workdir / "stop-polling"
        self.samples: dict[str, list[float]] = {}
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        args = [json.dumps(self.urls), str(ENDPOINT_TIMEOUT_S), str(self.stop_file), str(ENDPOINT_PERIOD_S)]
        self.process = subprocess.Popen(
            [sys.executable, "-c", POLLER, *args], stdout=subprocess.PIPE, text=True
        )

    def stop(self) -> None:
        if self.process is None:
            return
        self.stop_file.touch()
        out, _ = self.process.communicate(timeout=3 * ENDPOINT_TIMEOUT_S + 10)
        self.samples = json.loads(out) if out.strip() else {}

    def quantiles(self) -> dict[str, tuple[int, float, float, float]]:
        """Per endpoint: the number of samples, p50, p99 (nearest rank) and the maximum, in seconds."""
        out = {}
        for key, samples in self.samples.items():
            if samples:
                ordered = sorted(samples)
                p50, p99 = (ordered[max(0, math.ceil(q * len(ordered)) - 1)] for q in (0.5, 0.99))
                out[key] = (len(ordered), p50, p99, ordered[-1])
        return out


def metric(port: int, name: str, labels: dict[str, str]) -> float | None:
    """The value of the sample ``name{labels...}`` (labels in any order, a subset) scraped now."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=ENDPOINT_TIMEOUT_S) as answer:
        text = answer.read().decode()
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        head, _, value = line.rpartition(" ")
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            return float(value)
    return None


def owners(client: KubeClient, namespace: str) -> dict[str, set[str]]:
    """The owner UIDs of our Workloads and of our PodGroups."""
    out: dict[str, set[str]] = {}
    for rtype in GROUP_TYPES:
        items = client.list(rtype, namespace=namespace, label_selector=MANAGED, metadata_only=True).items
        out[rtype.kind] = {r["uid"] for o in items for r in o["metadata"].get("ownerReferences") or ()}
    return out


def group_objects(client: KubeClient, namespace: str, uids: set[str]) -> dict[tuple[str, str], str]:
    """(kind, name) → resourceVersion of our group objects owned by ``uids``."""
    out: dict[tuple[str, str], str] = {}
    for rtype in GROUP_TYPES:
        for obj in client.list(rtype, namespace=namespace, label_selector=MANAGED, metadata_only=True).items:
            meta = obj["metadata"]
            if any(r["uid"] in uids for r in meta.get("ownerReferences") or ()):
                out[(rtype.kind, meta["name"])] = meta["resourceVersion"]
    return out


def condition(client: KubeClient, name: str, kind: str) -> dict[str, Any] | None:
    obj = client.get("kartas.run.ai", name)
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == kind:
            return dict(c)
    return None


@pytest.fixture
def bombs_served(cluster: KubeHTTP) -> None:
    ensure_karta_crd(cluster)
    cluster.ensure_crd(copy.deepcopy(CRD))
    _wait_served(cluster, f"/apis/{bombs.GROUP}/v1")


def test_a_hostile_karta_is_quarantined_next_to_a_normal_burst(
    cluster: KubeHTTP, kube_client: KubeClient, ns: str, bombs_served: None, tmp_path: Path
) -> None:
    client = kube_client
    name = unique("bombs")
    probe_port = free_port()
    definitions = tmp_path / "definitions"
    definitions.mkdir()
    controller = Process(
        "quarantine-test",
        [
            "--kubeconfig",
            str(cluster.kubeconfig),
            "--backend",
            "workload-api",
            "--gang-scope",
            "all",  # predates the opt-in scope (issue 22)
            "--namespace",
            ns,
            "--definitions-dir",
            str(definitions),
            "--health-probe-bind-address",
            f"127.0.0.1:{probe_port}",
            "--log-format",
            "text",
        ],
        log=tmp_path / "controller.log",
    )
    port = controller.metrics_port
    endpoints = Endpoints(probe_port, port, tmp_path)
    report: list[str] = []
    try:
        wait_for(lambda: _ready(probe_port), "the controller to be ready", timeout=60)
        endpoints.start()
        create_all(client, [bomb(i, ns) for i in range(HOSTILE)])
        hostile_uids = {o["metadata"]["uid"] for o in client.list(BOMBS, namespace=ns).items}
        assert len(hostile_uids) == HOSTILE

        # The Karta and the burst at the same moment.
        started = time.monotonic()
        client.create(bombs.definition(name, matchers=[SPIN] * 3))
        burst = threading.Thread(target=create_all, args=(client, [batch_job(i, ns) for i in range(JOBS)]))
        burst.start()

        degraded = wait_for(
            lambda: _true(condition(client, name, "Degraded")),
            "Degraded=True on the Karta",
            timeout=CONVERGE_S,
        )
        quarantined_after = time.monotonic() - started
        assert degraded["reason"] == "BudgetExceeded", degraded
        assert "time budget" in degraded["message"] and SPIN in degraded["message"], degraded
        generation = client.get("kartas.run.ai", name)["metadata"]["generation"]
        assert degraded["observedGeneration"] == generation
        wait_for(lambda: _event(client, name, "BudgetExceeded"), "the BudgetExceeded event", timeout=60)
        wait_for(
            lambda: metric(port, "karta_definition_quarantined", {"definition": name}) == 1.0,
            "karta_definition_quarantined 1",
            timeout=30,
        )
        budget = {"definition": name, "budget": "time"}
        breaches = metric(port, "karta_definition_budget_breaches_total", budget)
        assert breaches is not None and breaches >= 5

        # The normal burst converges as if the hostile Karta were absent.
        burst.join()
        job_uids = {o["metadata"]["uid"] for o in client.list("jobs.batch", namespace=ns).items}
        assert len(job_uids) == JOBS

        def burst_done() -> bool:
            have = owners(client, ns)
            return all(job_uids <= have[kind] for kind in ("Workload", "PodGroup"))

        wait_for(burst_done, "every Job's Workload and PodGroup", timeout=CONVERGE_S, poll=1.0)
        burst_s = time.monotonic() - started

        # The hostile objects' group objects written before the quarantine stay as they are.
        kept = group_objects(client, ns, hostile_uids)
        time.sleep(5)
        assert group_objects(client, ns, hostile_uids) == kept
        report.append(
            f"quarantined after {quarantined_after:.1f}s ({breaches:g} breaches); {JOBS} Jobs converged "
            f"after {burst_s:.1f}s; {len(kept) // 2} of {HOSTILE} hostile objects had group objects"
        )

        # A new generation of the Karta lifts the quarantine.
        lifted_at = time.monotonic()
        root = bombs.definition(name)["spec"]["structureDefinition"]["rootComponent"]
        status = {"statusDefinition": root["statusDefinition"]}  # .status.phase == "Running"
        client.patch("kartas.run.ai", name, {"spec": {"structureDefinition": {"rootComponent": status}}})
        lifted = wait_for(
            lambda: _false(condition(client, name, "Degraded")), "Degraded=False on the Karta", timeout=60
        )
        assert lifted["reason"] == "WithinBudget" and lifted["observedGeneration"] == generation + 1
        wait_for(
            lambda: metric(port, "karta_definition_quarantined", {"definition": name}) == 0.0,
            "karta_definition_quarantined 0",
            timeout=30,
        )
        running = {"namespace": ns, "kind": "Bomb", "status": "Running"}
        wait_for(
            lambda: metric(port, "karta_workloads", running) == HOSTILE,
            "every Bomb evaluated again (Running)",
            timeout=CONVERGE_S,
            poll=0.5,
        )
        report.append(f"lifted: {HOSTILE} Bombs Running after {time.monotonic() - lifted_at:.1f}s")
    finally:
        endpoints.stop()
        controller.stop()
        with contextlib.suppress(ApiError):  # other tests must see the catalog alone
            client.delete("kartas.run.ai", name)
    figures = endpoints.quantiles()
    for key, (n, p50, p99, most) in sorted(figures.items()):
        report.append(
            f"{key:9s} n={n:4d}  p50 {p50 * 1000:6.1f} ms  p99 {p99 * 1000:6.1f} ms  "
            f"max {most * 1000:6.1f} ms"
        )
    print("\n" + "\n".join(report))
    assert set(figures) == set(endpoints.urls)
    slow = {k: f for k, f in figures.items() if f[2] > ENDPOINT_TARGET_S or f[3] > ENDPOINT_BOUND_S}
    assert not slow, (slow, controller.output()[-4000:])


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _true(c: dict[str, Any] | None) -> dict[str, Any] | None:
    return c if c is not None and c.get("status") == "True" else None


def _false(c: dict[str, Any] | None) -> dict[str, Any] | None:
    return c if c is not None and c.get("status") == "False" else None


def _event(client: KubeClient, name: str, reason: str) -> bool:
    events = client.list("events", namespace="default", field_selector=f"involvedObject.name={name}").items
    return any(e.get("reason") == reason and e.get("type") == "Warning" for e in events)
