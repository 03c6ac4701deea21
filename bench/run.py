"""Benchmarks, run on demand (never part of the test suite): ``.venv/bin/python bench/run.py``.

Prints absolute figures and ratios against baselines measured in the same run:

* full extraction of one object (all components, instances, pod templates/fragments, scale,
  status, gang plan) for a JobSet-like and a Dynamo-like definition, through (a) the normal
  evaluator of a trusted (built-in) definition (fast path and generated code, libjq for the rest),
  (b) libjq for every expression, (c) hand-written dict access computing the same values, and
  (d) the evaluator of an untrusted definition (the metered fast path: closures only, every node
  charging the object's budget; the sandbox worker for the rest). Targets: (a) within 5x of (c);
  (a) at least 20x faster than (b); (d) within about 3x of (a).
* wall time of ``kli --help`` and ``kli validate`` (target: 150 ms each), with a bare
  ``python -c pass`` as the floor;
* then every offline command on one object (``bench/offline.py``: ``inspect -f``, ``describe -f``,
  ``gang -f``, ``validate``, ``verify``, ``definitions``; target: 100 ms each).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import offline  # bench/offline.py: this directory is the script's, first on sys.path

from karta.extract import ComponentFactory
from karta.gang import compute_gang_plan
from karta.jq import Evaluator
from karta.model import load_karta

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _container(name: str, gpus: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": f"registry.example/{name}:1.0",
        "command": ["python", "-m", name, "--epochs", "10"],
        "env": [{"name": f"VAR_{i}", "value": str(i)} for i in range(8)],
        "ports": [{"containerPort": 8000 + i, "name": f"p{i}"} for i in range(3)],
        "resources": {
            "requests": {"cpu": "4", "memory": "16Gi"},
            "limits": {"nvidia.com/gpu": gpus, "memory": "32Gi"},
        },
        "volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "shm", "mountPath": "/dev/shm"}],
    }


def jobset_object() -> dict[str, Any]:
    jobs = []
    for name, replicas, parallelism, gpus in (("leader", 1, 1, 8), ("workers", 4, 2, 8), ("eval", 1, 1, 1)):
        jobs.append(
            {
                "name": name,
                "replicas": replicas,
                "template": {
                    "spec": {
                        "parallelism": parallelism,
                        "completions": parallelism,
                        "template": {
                            "metadata": {"labels": {"app": "bench", "role": name}},
                            "spec": {
                                "containers": [_container(name, gpus), _container("sidecar", 0)],
                                "volumes": [
                                    {"name": "data", "emptyDir": {}},
                                    {"name": "shm", "emptyDir": {"medium": "Memory"}},
                                ],
                                "restartPolicy": "Never",
                            },
                        },
                    }
                },
            }
        )
    return {
        "apiVersion": "bench.example/v1",
        "kind": "JobSetLike",
        "metadata": {"name": "bench", "namespace": "default", "uid": "u-1"},
        "spec": {"replicatedJobs": jobs},
        "status": {
            "conditions": [
                {"type": "StartupPolicyCompleted", "status": "True", "reason": "x", "message": "y"}
            ],
            "replicatedJobsStatus": [{"name": j["name"], "active": 1, "ready": 1} for j in jobs],
        },
    }


def dynamo_object() -> dict[str, Any]:
    services = {}
    for name, replicas, gpus in (
        ("Frontend", 1, 0),
        ("Planner", 1, 0),
        ("PrefillWorker", 2, 4),
        ("DecodeWorker", 4, 8),
    ):
        services[name] = {
            "replicas": replicas,
            "labels": {"tier": name.lower()},
            "annotations": {"example.dev/owner": "bench"},
            "resources": {"limits": {"gpu": str(gpus)}},
            "autoscaling": {"minReplicas": 1, "maxReplicas": replicas * 2},
            "extraPodSpec": {"mainContainer": _container(name.lower(), gpus)},
        }
    return {
        "apiVersion": "bench.example/v1",
        "kind": "GraphLike",
        "metadata": {"name": "graph", "namespace": "default", "uid": "u-2"},
        "spec": {"services": services},
        "status": {"state": "successful", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def full_extraction(karta: Any, obj: dict[str, Any], evaluator: Evaluator) -> Any:
    factory = ComponentFactory(karta, obj, evaluator=evaluator)
    components = {c.name: factory.component(c.name).extracted_instances() for c in karta.components}
    status = factory.root().status()
    plan = compute_gang_plan(factory, (), evaluator=evaluator)
    return components, status, plan


def hand_jobset(obj: dict[str, Any]) -> Any:
    spec = obj.get("spec") or {}
    jobs = spec.get("replicatedJobs") or []
    ids = [j.get("name") for j in jobs]
    templates = {}
    scales = {}
    for j, i in zip(jobs, ids, strict=True):
        t = j.get("template") or {}
        templates[i] = (t.get("spec") or {}).get("template")
        scales[i] = (j.get("replicas") or 1) * ((t.get("spec") or {}).get("parallelism") or 1)
    st = obj.get("status") or {}
    conds = {c.get("type"): c for c in st.get("conditions") or []}
    running = any((r.get("active") or 0) > 0 for r in st.get("replicatedJobsStatus") or [])
    matched = [
        s
        for s, ok in (
            ("Suspended", conds.get("Suspended", {}).get("status") == "True"),
            ("Running", running),
            ("Failed", conds.get("Failed", {}).get("status") == "True"),
            ("Completed", conds.get("Completed", {}).get("status") == "True"),
        )
        if ok
    ] or ["Undefined"]
    gang = sum(scales.values())
    return templates, scales, matched, gang


def hand_dynamo(obj: dict[str, Any]) -> Any:
    services = (obj.get("spec") or {}).get("services") or {}
    out = {}
    total = 0
    for key in sorted(services):
        s = services[key]
        main = (s.get("extraPodSpec") or {}).get("mainContainer")
        frag = {
            k: v
            for k, v in (
                ("labels", s.get("labels")),
                ("annotations", s.get("annotations")),
                ("resources", s.get("resources")),
                ("container", main),
                ("image", (main or {}).get("image")),
            )
            if v
        }
        auto = s.get("autoscaling") or {}
        scale = (s.get("replicas"), auto.get("minReplicas"), auto.get("maxReplicas"))
        total += scale[1] or scale[0] or 0
        out[key] = (frag, scale)
    st = obj.get("status") or {}
    conds = {c.get("type"): c for c in st.get("conditions") or []}
    phase = st.get("state")
    matched = [
        s
        for s, ok in (
            ("Running", phase == "successful"),
            ("Failed", phase == "failed"),
            ("Initializing", phase == "pending"),
            ("Degraded", conds.get("Ready", {}).get("status") == "False"),
        )
        if ok
    ] or ["Undefined"]
    return out, matched, total


def per_call_us(fn: Callable[[], Any], *, min_time: float = 0.5) -> float:
    fn()  # warm caches (compiled programs)
    samples = []
    for _ in range(5):
        n = 0
        start = time.perf_counter()
        while True:
            fn()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time / 5:
                break
        samples.append(elapsed / n * 1e6)
    return statistics.median(samples)


def wall_ms(cmd: list[str], runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    print("== full extraction of one object (us per object, median)")
    print(
        f"{'case':<14}{'hand dict':>12}{'fast path':>12}{'libjq only':>12}{'untrusted':>12}"
        f"{'dict default':>14}{'fast/hand':>11}{'libjq/fast':>12}{'untr/fast':>11}"
    )
    ok = True
    for name, path, obj, hand in (
        ("jobset-like", HERE / "jobset_like.yaml", jobset_object(), hand_jobset),
        ("dynamo-like", HERE / "dynamo_like.yaml", dynamo_object(), hand_dynamo),
    ):
        karta = load_karta(path).karta
        assert karta is not None
        # The evaluators kli, the web view and the controller use (karta.definitions.POOL): their
        # objects come from karta's decoders, which convert integers beyond 2**53 once where the
        # bytes are read (karta.jq._values.decoded_input), so evaluation reads each object as it
        # is. "dict default" is the library's Evaluator() on a Python-built dict: it checks each
        # object for such integers itself (the price of the original's doubles without a decoder).
        fast = Evaluator(trusted=True, decoded=True)
        slow = Evaluator(trusted=True, fast_path=False, decoded=True)
        metered = Evaluator(decoded=True)  # untrusted: the default budget
        checking = Evaluator(trusted=True)
        t_hand = per_call_us(lambda obj=obj, hand=hand: hand(obj))
        t_fast = per_call_us(lambda karta=karta, obj=obj, fast=fast: full_extraction(karta, obj, fast))
        t_slow = per_call_us(
            lambda karta=karta, obj=obj, slow=slow: full_extraction(karta, obj, slow), min_time=1.0
        )
        t_metered = per_call_us(
            lambda karta=karta, obj=obj, metered=metered: full_extraction(karta, obj, metered)
        )
        t_checking = per_call_us(
            lambda karta=karta, obj=obj, checking=checking: full_extraction(karta, obj, checking)
        )
        r1, r2, r3 = t_fast / t_hand, t_slow / t_fast, t_metered / t_fast
        ok = ok and r1 <= 5 and r2 >= 20 and r3 <= 3
        print(
            f"{name:<14}{t_hand:>12.1f}{t_fast:>12.1f}{t_slow:>12.1f}{t_metered:>12.1f}{t_checking:>14.1f}"
            f"{r1:>10.1f}x{r2:>11.1f}x{r3:>10.1f}x"
        )
    print("targets: fast/hand <= 5x, libjq/fast >= 20x, untrusted/fast <= 3x")

    print("\n== command wall time (ms, median of 7)")
    py = sys.executable
    kli = str(Path(py).with_name("kli"))
    floor = wall_ms([py, "-c", "pass"])
    t_help = wall_ms([kli, "--help"])
    t_validate = wall_ms(
        [kli, "validate", str(ROOT / "examples/definitions/kubeflow-org-pytorchjob-v1.yaml")]
    )
    print(f"python -c pass      {floor:8.1f}")
    print(f"kli --help          {t_help:8.1f}   ({t_help / floor:.1f}x the interpreter floor)")
    print(f"kli validate FILE   {t_validate:8.1f}   ({t_validate / floor:.1f}x the interpreter floor)")
    print("target: <= 150 ms each")
    ok = ok and t_help <= 150 and t_validate <= 150
    print("\nall targets met" if ok else "\nsome targets missed")
    print()
    return offline.main(["--runs", "7"])


if __name__ == "__main__":
    raise SystemExit(main())
