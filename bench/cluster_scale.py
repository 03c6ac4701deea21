"""The cluster at scale with kwok, run on demand: ``nice -n 10 .venv/bin/python bench/cluster_scale.py``.

Starts a private control plane with kube-controller-manager (its StatefulSet controller too),
kube-scheduler, kwok and the KubeRay and training operators (hack/cluster: what the e2e
``ecosystem_cluster`` fixture starts), makes ``--nodes`` kwok GPU Nodes (hack/fake_nodes.py,
8 x ``nvidia.com/gpu`` each; 1,000 by default), then grows one cluster through ``--sizes``
(1,000 and 5,000 workloads by default): each size adds its workloads on top of the previous
one's, spread over 10 namespaces, in equal parts of five kinds, each with one pod of 1 GPU:
Deployment, batch Job, StatefulSet (kube-controller-manager), PyTorchJob (training operator,
a Master) and RayCluster (KubeRay, a head). kwok runs every pod (Running and Ready). Once every
pod of the size runs, it measures on that cluster:

* ``karta-controller --backend workload-api`` started afresh (the previous size's group objects
  deleted first): the time from its start until it has observed every workload (its
  ``karta_workloads`` metric counts them all) and written the group objects of every workload with
  gang instructions (Job, PyTorchJob, RayCluster), and its peak RSS; next to the API server floor
  of bench/controller.py: the same client creating as many group objects itself, one by one,
  with no controller running;
* ``kli get --all-types -A``, ``kli top gpus`` and the web view's first full render (in process,
  as bench/ui_load.py: :class:`karta.ui.ClusterSource` from start until every row is in the store,
  then every page of ``/api/workloads`` as the page fetches them), each as a ratio to
  ``kubectl get pods -A -o json`` (hack/kubectl) measured in the same run: ``--rounds`` rounds
  (3), interleaved, medians.

The summary at the end is a table (Markdown, ready for docs/ and the README) with a row per size
and the growth from the first size to the last.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
KINDS = ("Deployment", "Job", "StatefulSet", "PyTorchJob", "RayCluster")
GANG_KINDS = ("Job", "PyTorchJob", "RayCluster")  # their built-in definitions have gang instructions
NAMESPACES = 10
GPUS_PER_NODE = 8


# ------------------------------------------------------------------------------ pure parts


def parse_sizes(text: str) -> list[int]:
    """``"1000,5000"`` -> [1000, 5000]: positive, strictly increasing (each size is added on top
    of the previous one); argparse shows the ValueError's message."""
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes {text!r}: expected numbers separated by commas") from None
    if not sizes:
        raise argparse.ArgumentTypeError("--sizes: at least one size")
    if any(s < len(KINDS) for s in sizes):
        raise argparse.ArgumentTypeError(
            f"--sizes {text!r}: every size at least {len(KINDS)} (one of each kind)"
        )
    if any(b <= a for a, b in itertools.pairwise(sizes)):
        raise argparse.ArgumentTypeError(f"--sizes {text!r}: sizes must increase (each adds to the last)")
    return sizes


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--nodes", type=int, default=1000, help="kwok GPU Nodes (default 1000)")
    p.add_argument(
        "--sizes",
        type=parse_sizes,
        default=[1000, 5000],
        help="workload counts, increasing, each added on top of the last (default 1000,5000)",
    )
    p.add_argument("--rounds", type=int, default=3, help="rounds of the command timings (median; default 3)")
    p.add_argument("--workers", type=int, default=4, help="karta-controller --workers (default 4)")
    p.add_argument("--timeout", type=float, default=900.0, help="per wait: pods running, convergence (s)")
    args = p.parse_args(argv)
    if args.nodes < 1 or args.rounds < 1 or args.workers < 1:
        p.error("--nodes, --rounds and --workers must be at least 1")
    if args.sizes[-1] > args.nodes * GPUS_PER_NODE:
        p.error(f"--sizes: {args.sizes[-1]} one-GPU pods do not fit on {args.nodes} Nodes of {GPUS_PER_NODE}")
    return args


@dataclass
class SizeResult:
    """What one size measured (seconds, MB)."""

    workloads: int
    pods: int
    create: float
    running: float
    converge: float
    converged: bool
    group_objects: int
    floor: float
    rss: float
    timings: dict[str, list[float]] = field(default_factory=dict)  # command -> one value per round

    def median(self, what: str) -> float:
        return statistics.median(self.timings[what])

    def ratio(self, what: str) -> float:
        return self.median(what) / self.median(BASELINE)


BASELINE = "kubectl get pods -A -o json"
COMMANDS = ("kli get --all-types -A", "kli top gpus", "web view first full render")


def short(count: int) -> str:
    """5000 -> "5k", 2500 -> "2500"."""
    return f"{count // 1000}k" if count % 1000 == 0 else str(count)


def format_table(results: Sequence[SizeResult]) -> list[str]:
    """The summary: a Markdown table with a row per size and, with two sizes or more, the growth
    from the first to the last (each figure's ratio)."""
    head = [
        "workloads",
        "pods",
        "controller converge",
        "API floor",
        "controller / floor",
        "controller peak RSS",
        BASELINE,
        *(f"{c} (x kubectl)" for c in COMMANDS),
    ]
    rows = [head, ["---:"] * len(head)]
    for r in results:
        mark = "" if r.converged else " (incomplete)"
        rows.append(
            [
                f"{r.workloads:,}",
                f"{r.pods:,}",
                f"{r.converge:.1f} s{mark}",
                f"{r.floor:.1f} s",
                f"{r.converge / r.floor:.1f}x",
                f"{r.rss:.0f} MB",
                f"{r.median(BASELINE):.2f} s",
                *(f"{r.median(c):.2f} s ({r.ratio(c):.1f}x)" for c in COMMANDS),
            ]
        )
    if len(results) >= 2:
        a, b = results[0], results[-1]
        rows.append(
            [
                f"growth {short(b.workloads)}/{short(a.workloads)}",
                f"{b.pods / a.pods:.1f}x",
                f"{b.converge / a.converge:.1f}x",
                f"{b.floor / a.floor:.1f}x",
                "",
                f"{b.rss / a.rss:.2f}x",
                f"{b.median(BASELINE) / a.median(BASELINE):.1f}x",
                *(f"{b.median(c) / a.median(c):.1f}x" for c in COMMANDS),
            ]
        )
    return ["| " + " | ".join(row) + " |" for row in rows]


def workload(kind: str, index: int) -> dict[str, Any]:
    """One workload of ``kind`` with one pod requesting 1 GPU."""
    name = f"{kind.lower()}-{index:05d}"
    resources = {"requests": {"cpu": "100m"}, "limits": {"nvidia.com/gpu": 1}}
    labels = {"karta-bench": "scale", "app": name}

    def pod(container: str, image: str = "busybox", restart: str | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {"containers": [{"name": container, "image": image, "resources": resources}]}
        if restart:
            spec["restartPolicy"] = restart
        return {"metadata": {"labels": dict(labels)}, "spec": spec}

    meta = {"name": name, "labels": {"karta-bench": "scale"}}
    if kind == "Deployment":
        spec: dict[str, Any] = {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": pod("main"),
        }
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}
    if kind == "StatefulSet":
        spec = {
            "replicas": 1,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": pod("main"),
        }
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}
    if kind == "Job":
        spec = {"parallelism": 1, "completions": 1, "template": pod("main", restart="Never")}
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": meta, "spec": spec}
    if kind == "PyTorchJob":
        master = {"replicas": 1, "restartPolicy": "OnFailure", "template": pod("pytorch", "pytorch/pytorch")}
        spec = {"pytorchReplicaSpecs": {"Master": master}}
        return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": meta, "spec": spec}
    if kind == "RayCluster":
        head = {"rayStartParams": {}, "template": pod("ray-head", "rayproject/ray:2.9.0")}
        spec = {"headGroupSpec": head}
        return {"apiVersion": "ray.io/v1", "kind": kind, "metadata": meta, "spec": spec}
    raise ValueError(f"unknown kind {kind}")


def workloads(start: int, stop: int) -> Iterator[dict[str, Any]]:
    """Workloads ``start`` ... ``stop - 1``: the kinds in turn, namespaces in turn."""
    for i in range(start, stop):
        obj = workload(KINDS[i % len(KINDS)], i)
        obj["metadata"]["namespace"] = namespace(i)
        yield obj


def gang_workloads(size: int) -> int:
    """How many of the first ``size`` workloads are of a kind with gang instructions."""
    return sum(1 for i in range(size) if KINDS[i % len(KINDS)] in GANG_KINDS)


def namespace(index: int) -> str:
    return f"scale-{index % NAMESPACES}"


def metric_sum(text: str, name: str, namespace_prefix: str) -> float:
    """The sum of the samples of ``name`` (exactly: no ``_bucket`` etc.) whose ``namespace`` label
    starts with ``namespace_prefix``."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        labels, value = line.rsplit(" ", 1)
        ns = labels.split('namespace="', 1)[1].split('"', 1)[0] if 'namespace="' in labels else ""
        if ns.startswith(namespace_prefix):
            total += float(value)
    return total


# ------------------------------------------------------------------------------ the cluster


def bench_modules() -> Any:
    """bench/controller.py (its control-plane loader and controller helpers)."""
    sys.path.insert(0, str(BENCH))
    import controller as bench_controller

    return bench_controller


def make_nodes(client: Any, count: int, threads: int = 4) -> float:
    sys.path.insert(0, str(ROOT / "hack"))
    from fake_nodes import ensure_fake_node, node_names  # type: ignore[import-not-found]

    def node(name: str) -> None:
        ensure_fake_node(client, name, gpus=GPUS_PER_NODE, cpu="64", memory="512Gi", pods=110, kwok=True)

    started = time.monotonic()
    bench_modules().in_threads(node, node_names("kwok-gpu", count), threads)
    return time.monotonic() - started


def running_pods(client: Any) -> int:
    pods = client.list("pods", namespace=None, label_selector="karta-bench=scale").items
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")


def all_running(client: Any, count: int) -> Callable[[], bool]:
    return lambda: running_pods(client) >= count


def wait_for(what: str, check: Callable[[], bool], timeout: float, every: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(every)
    print(f"  ! {what}: not reached after {timeout:.0f} s", flush=True)
    return False


def delete_group_objects(client: Any, bc: Any) -> None:
    for rtype in bc.GROUP_TYPES:
        for ns in range(NAMESPACES):
            client.request_json(
                "DELETE", rtype.collection_path(f"scale-{ns}"), params={"labelSelector": bc.MANAGED}
            )
    wait_for("group objects deleted", lambda: not all_group_objects(client, bc), 120, every=0.5)


def covered(found: list[dict[str, Any]], owners: Callable[[list[dict[str, Any]]], set[str]]) -> int:
    """How many workloads own both a Workload and a PodGroup among ``found`` (the controller
    writes the Workload first: a workload with only that one is not done)."""
    kinds = [owners([o for o in found if o["_type"] == kind]) for kind in ("Workload", "PodGroup")]
    return len(kinds[0] & kinds[1])


def all_group_objects(client: Any, bc: Any) -> list[dict[str, Any]]:
    """The controller's group objects in the bench namespaces, each with its kind in ``_type``."""
    out: list[dict[str, Any]] = []
    for rtype in bc.GROUP_TYPES:
        items = client.list(rtype, namespace=None, label_selector=bc.MANAGED, metadata_only=True).items
        out.extend({**o, "_type": rtype.kind} for o in items)
    return [o for o in out if o["metadata"].get("namespace", "").startswith("scale-")]


def converge(
    client: Any, bc: Any, cp_mod: Any, cp: Any, tmp: Path, size: int, workers: int, timeout: float
) -> tuple[float, bool, int, float]:
    """(seconds from the controller's start until it converged, whether it did, group objects,
    peak RSS MB)."""
    probe, metrics = cp_mod.free_port(), cp_mod.free_port()
    cmd = bc.controller_command(
        cp.kubeconfig,
        probe=probe,
        metrics=metrics,
        workers=workers,
        extra=["--cluster-definitions", "false", "--definitions-dir", str(tmp / "none")],
    )
    log = tmp / f"controller-{size}.log"
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stderr=open(log, "wb"))  # noqa: SIM115
    found: list[dict[str, Any]] = []
    try:
        bc.wait_ready(probe, proc, log, timeout=timeout)
        state = {"workloads": 0.0, "gangs": 0.0, "covered": 0.0}
        at: dict[str, float] = {}  # when each half was first complete (s after the start)

        def done() -> bool:
            nonlocal found
            if "observed" not in at:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=60) as resp:
                        text = resp.read().decode()
                except OSError:
                    return False
                state["workloads"] = metric_sum(text, "karta_workloads", "scale-")
                state["gangs"] = metric_sum(text, "karta_gangs", "scale-")
                if state["workloads"] >= size:
                    at["observed"] = time.monotonic() - started
            if "groups" not in at:
                found = all_group_objects(client, bc)
                state["covered"] = covered(found, bc.owners)
                if state["covered"] >= gang_workloads(size):
                    at["groups"] = time.monotonic() - started
            return len(at) == 2

        ok = wait_for("controller converged", done, timeout, every=1.0)
        took = time.monotonic() - started
        print(
            f"  controller: every workload counted by karta_workloads {at.get('observed', -1):.1f} s "
            f"after its start ({state['gangs']:.0f} with gangs), {state['covered']:.0f} of "
            f"{gang_workloads(size)} with their group objects at {at.get('groups', -1):.1f} s",
            flush=True,
        )
        return took, ok, len(found), bc.peak_rss_mb(proc.pid)
    finally:
        bc.stop(proc)


def floor(client: Any, count: int, size: int) -> float:
    """bench/controller.py's floor: the client creating ``count`` group objects itself, one by one."""
    ns = f"floor-{size}"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    started = time.monotonic()
    for i in range(count):
        client.create(
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": f"floor-{i}", "namespace": ns},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}},
            }
        )
    took = time.monotonic() - started
    client.delete("namespaces", ns)
    return took


def timed_command(cmd: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False)
    took = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-1000:]}")
    return took


def ui_render(kubeconfig: Path, size: int, timeout: float) -> float:
    """What the web view does before its first full render: the source from start until every
    row is in the store, then every page of /api/workloads as the page fetches them (1,000 a page)."""
    from karta.definitions import DefinitionStore
    from karta.kube import ConfigOverrides, KubeClient
    from karta.ui import ClusterSource, RowStore, UiServer

    started = time.monotonic()
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(kubeconfig)))
    rows = RowStore()
    store = DefinitionStore.load()
    source = ClusterSource(client, lambda: store, store=rows, cluster="bench")
    server = UiServer(rows, {"bench": source.detail}, port=0, allowed_hosts={"127.0.0.1"})
    source.start()
    try:
        while len(rows) < size or not source.synced.is_set():
            time.sleep(0.02)
            if time.monotonic() - started > timeout:
                raise SystemExit(f"the web view's source: only {len(rows)} rows after {timeout:.0f} s")
        server.start()
        offset, total = 0, 1
        while offset < total:
            url = f"{server.url}api/workloads?limit=1000&offset={offset}&sort=name"
            with urllib.request.urlopen(url, timeout=60) as answer:
                page = json.loads(answer.read())
            total = page["total"]
            offset += len(page["items"]) or total
        return time.monotonic() - started
    finally:
        server.close()
        source.stop()
        client.close()


def measure_commands(
    kubectl: Path, kubeconfig: Path, size: int, rounds: int, timeout: float
) -> dict[str, list[float]]:
    import os

    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    kli = str(Path(sys.executable).parent / "kli")
    commands: dict[str, Callable[[], float]] = {
        BASELINE: lambda: timed_command([str(kubectl), "get", "pods", "-A", "-o", "json"], env),
        COMMANDS[0]: lambda: timed_command([kli, "get", "--all-types", "-A"], env),
        COMMANDS[1]: lambda: timed_command([kli, "top", "gpus"], env),
        COMMANDS[2]: lambda: ui_render(kubeconfig, size, timeout),
    }
    out: dict[str, list[float]] = {name: [] for name in commands}
    for r in range(rounds):
        for name, run in commands.items():
            out[name].append(run())
        print(f"  round {r + 1}: " + ", ".join(f"{n} {v[-1]:.2f} s" for n, v in out.items()), flush=True)
    return out


def run(args: argparse.Namespace) -> list[SizeResult]:
    bc = bench_modules()
    cp_mod = bc.controlplane()
    from karta.kube import ConfigOverrides, KubeClient

    config = cp_mod.ControlPlaneConfig(
        bin_dir=cp_mod.build_binaries(),
        controllers=True,
        kwok=True,
        operators=tuple(cp_mod.OPERATORS),
        statefulset_controller=True,
    )
    kubectl = cp_mod.build_kubectl()
    results: list[SizeResult] = []
    t0 = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="karta-scale-") as tmpname,
        cp_mod.ControlPlane(config=config, workdir=Path(tmpname) / "cp") as cp,
    ):
        tmp = Path(tmpname)
        print(
            f"control plane with kwok and {', '.join(cp_mod.OPERATORS)} up in {time.monotonic() - t0:.0f} s",
            flush=True,
        )

        def connect() -> Any:
            return KubeClient.from_config(ConfigOverrides(kubeconfig=str(cp.kubeconfig)))

        client = connect()
        print(f"{args.nodes} kwok Nodes in {make_nodes(client, args.nodes):.0f} s", flush=True)
        for ns in range(NAMESPACES):
            client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"scale-{ns}"}})
        done = 0
        for size in args.sizes:
            print(f"== {size} workloads ({size - done} added)", flush=True)
            # A new client: the API server has closed the last one's idle connections while the
            # commands were timed, and a create (a POST) is not retried on a closed connection.
            client.close()
            client = connect()
            objs = list(workloads(done, size))
            started = time.monotonic()
            bc.create_all(client, objs)
            created = time.monotonic() - started
            wait_for("every pod running", all_running(client, size), args.timeout, every=5.0)
            running = time.monotonic() - started
            pods = running_pods(client)
            print(
                f"  created in {created:.1f} s; {pods} pods running {running:.1f} s after the first create",
                flush=True,
            )
            done = size
            delete_group_objects(client, bc)
            took, ok, groups, rss = converge(client, bc, cp_mod, cp, tmp, size, args.workers, args.timeout)
            print(
                f"  controller: converged in {took:.1f} s ({groups} group objects), peak RSS {rss:.0f} MB",
                flush=True,
            )
            floor_s = floor(client, groups, size)
            print(f"  floor: {groups} group objects created one by one in {floor_s:.1f} s", flush=True)
            timings = measure_commands(kubectl, cp.kubeconfig, size, args.rounds, args.timeout)
            results.append(SizeResult(size, pods, created, running, took, ok, groups, floor_s, rss, timings))
            print("\n".join(format_table(results)), flush=True)
        client.close()
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    print()
    print(
        f"== summary: {args.nodes} kwok Nodes, workloads of 5 kinds (one 1-GPU pod each), each size added "
        f"on top of the last; medians of {args.rounds} interleaved rounds"
    )
    print("\n".join(format_table(results)))
    return 0 if all(r.converged for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
