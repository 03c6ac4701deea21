"""``kli get --all-types -A`` over 5,000 workloads of 5 kinds, run on demand (never in the test suite):
``.venv/bin/python bench/get_bench.py [--per-kind 1000] [--runs 3]``.

Starts a local control plane (hack/cluster), installs four corpus CRDs (PyTorchJob, JobSet,
Volcano Job, LeaderWorkerSet) and creates ``--per-kind`` objects of each of them and of batch/v1
Job (from the corpus manifests; nothing runs them). Then, best of ``--runs``:

* ``kli get --all-types -A`` as a subprocess (wall time, start-up included, output discarded);
* ``kubectl get <the 5 kinds> -A -o json`` as a subprocess, when kubectl is installed (the
  issue's baseline);
* the floor: raw paginated list requests (500 per page) for the same 5 kinds through the same
  client (:class:`karta.kube.KubeClient`), in-process, sequentially.

Prints the figures and the ratios (target: kli ≤ 1.5× kubectl, or ≤ 1.5× the floor without it).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from karta.kube import ConfigOverrides, KubeClient

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
CRDS = (
    "kubeflow.org_pytorchjobs.yaml",
    "jobset.x-k8s.io_jobsets.yaml",
    "batch.volcano.sh_jobs.yaml",
    "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
)
WORKLOADS = (
    "kubeflow-training-v1/pytorchjob-mnist-nccl-gpu.yaml",
    "jobset/pytorch-resnet.yaml",
    "volcano/vcjob-mpi.yaml",
    "lws/lws-vllm-gpu.yaml",
)
KINDS = (
    "pytorchjobs.kubeflow.org",
    "jobsets.jobset.x-k8s.io",
    "jobs.batch.volcano.sh",
    "leaderworkersets.leaderworkerset.x-k8s.io",
    "jobs.batch",
)
NAMESPACES = ("bench-a", "bench-b", "bench-c", "bench-d")


def _controlplane() -> Any:
    spec = importlib.util.spec_from_file_location(
        "karta_hack_controlplane", ROOT / "hack/cluster/controlplane.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _templates() -> list[dict[str, Any]]:
    out = []
    for relative in WORKLOADS:
        doc = next(d for d in yaml.safe_load_all((CORPUS / "workloads" / relative).read_text()) if d)
        doc.pop("status", None)
        doc["metadata"] = {"name": doc["metadata"]["name"]}
        out.append(doc)
    out.append(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "job"},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "main",
                                "image": "busybox",
                                "resources": {"limits": {"nvidia.com/gpu": 1}},
                            }
                        ],
                    }
                }
            },
        }
    )
    return out


def populate(client: KubeClient, per_kind: int) -> None:
    for ns in NAMESPACES:
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for name in CRDS:
        crd = yaml.load(
            (CORPUS / "crds" / name).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
        client.create(crd)
    deadline = time.monotonic() + 60
    while not all(
        client.discovery.find(
            t["apiVersion"].rpartition("/")[0], t["apiVersion"].rpartition("/")[2], t["kind"]
        )
        for t in _templates()
    ):
        assert time.monotonic() < deadline, "CRDs not served"
        time.sleep(0.2)
        client.discovery.invalidate()

    def create(args: tuple[dict[str, Any], int]) -> None:
        template, i = args
        obj = copy.deepcopy(template)
        obj["metadata"] = {
            "name": f"{template['metadata']['name']}-{i}",
            "namespace": NAMESPACES[i % len(NAMESPACES)],
        }
        client.create(obj)

    jobs = [(t, i) for t in _templates() for i in range(per_kind)]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(create, jobs))
    print(f"created {len(jobs)} workloads in {time.monotonic() - started:.1f} s")


def best(runs: int, fn: Any) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    ns = parser.parse_args()
    cp_mod = _controlplane()
    config = cp_mod.ControlPlaneConfig(bin_dir=cp_mod.build_binaries())
    with (
        tempfile.TemporaryDirectory() as tmp,
        cp_mod.ControlPlane(config=config, workdir=Path(tmp) / "cp") as cp,
    ):
        kubeconfig = str(cp.kubeconfig)
        client = KubeClient.from_config(ConfigOverrides(kubeconfig=kubeconfig))
        populate(client, ns.per_kind)
        env = {**os.environ, "KUBECONFIG": kubeconfig, "KARTA_DEFINITIONS": str(Path(tmp) / "none")}
        kli = [str(Path(sys.executable).parent / "kli"), "get", "--all-types", "-A"]

        def run_kli() -> None:
            subprocess.run(kli, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)

        def floor() -> None:
            count = 0
            for kind in KINDS:
                for page in client.iter_pages(kind, chunk_size=500):
                    count += len(page.items)
            assert count == 5 * ns.per_kind, count

        run_kli()  # warm the API server's caches
        rows = subprocess.run(kli, env=env, capture_output=True, text=True, check=True).stdout.count("\n") - 1
        t_kli = best(ns.runs, run_kli)
        t_floor = best(ns.runs, floor)
        print(f"kli get --all-types -A: {rows} rows, {t_kli * 1000:.0f} ms (best of {ns.runs})")
        print(
            f"raw paginated lists, same client (floor): {t_floor * 1000:.0f} ms; "
            f"kli/floor = {t_kli / t_floor:.2f}x"
        )
        kubectl = shutil.which("kubectl")
        if kubectl:
            cmd = [kubectl, "get", ",".join(KINDS), "-A", "-o", "json", "--kubeconfig", kubeconfig]

            def run_kubectl() -> None:
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)

            t_kubectl = best(ns.runs, run_kubectl)
            print(
                f"kubectl get <5 kinds> -A -o json: {t_kubectl * 1000:.0f} ms; "
                f"kli/kubectl = {t_kli / t_kubectl:.2f}x (target <= 1.5x)"
            )
        else:
            print("kubectl not installed: the floor is the baseline (target <= 1.5x)")
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
