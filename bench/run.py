"""Benchmarks, run on demand (never part of the test suite): ``.venv/bin/python bench/run.py``.

Prints absolute figures and ratios against baselines measured in the same run:

* full extraction of one object (all components, instances, pod templates/fragments, scale,
  status, gang plan) for a JobSet-like and a Dynamo-like definition, through (a) the normal
  evaluator of a trusted (built-in) definition (fast path and generated code, libjq for the rest),
  (b) libjq for every expression, (c) hand-written dict access computing the same values, and
  (d) the evaluator of an untrusted definition (the metered fast path: closures only, every node
  charging the object's budget; the sandbox worker for the rest). Targets: (a) within 4x of (c);
  (a) at least 20x faster than (b); (d) within about 3x of (a).

  Every extracted pod template, container and resource block is trimmed to its Kubernetes
  struct [compat] (karta.extract.trim). The hand-written code (c) computes the same values: its
  "hand+trim" column trims the same templates with the library's hand-written trimming closures
  (karta.extract.trim.trimmer), and "fast/hand" is (a) against it. "hand" alone reads the values
  without trimming them; "engine" is (a) with trimming turned off, against "hand" (measured in a
  child process, ``--engine-only``, which patches trimming out before a definition is loaded):
  the cost of the engine itself, without the schema walk both sides would share.
* wall time of ``kli --help`` and ``kli validate`` (target: 150 ms each), with a bare
  ``python -c pass`` as the floor;
* then every offline command on one object (``bench/offline.py``: ``inspect -f``, ``describe -f``,
  ``gang -f``, ``validate``, ``verify``, ``definitions``; target: 100 ms each).
"""

from __future__ import annotations

import json
import os
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


def hand_jobset_trimmed(obj: dict[str, Any]) -> Any:
    """:func:`hand_jobset` with the pod templates trimmed to PodTemplateSpec, as karta hands them on."""
    templates, scales, matched, gang = hand_jobset(obj)
    trim = _trimmer("PodTemplateSpec")
    return {i: None if t is None else trim(t) for i, t in templates.items()}, scales, matched, gang


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


def hand_dynamo_trimmed(obj: dict[str, Any]) -> Any:
    """:func:`hand_dynamo` with each container trimmed to Container and each resources block to
    ResourceRequirements, as karta hands them on."""
    out, matched, total = hand_dynamo(obj)
    container, resources = _trimmer("Container"), _trimmer("ResourceRequirements")
    for frag, _scale in out.values():
        if "container" in frag:
            frag["container"] = container(frag["container"])
        if "resources" in frag:
            frag["resources"] = resources(frag["resources"])
    return out, matched, total


def _trimmer(struct: str) -> Any:
    from karta.extract.trim import trimmer

    return trimmer(struct)


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


CASES = (
    ("jobset-like", "jobset_like.yaml", jobset_object, hand_jobset, hand_jobset_trimmed),
    ("dynamo-like", "dynamo_like.yaml", dynamo_object, hand_dynamo, hand_dynamo_trimmed),
)


def engine_only() -> int:
    """``--engine-only`` (a child process of :func:`main`): the trusted fast path with trimming
    patched out before any definition is loaded, and the hand-written code without it, as JSON."""
    from karta.extract import trim

    def no_descriptor(target_name: str) -> str | None:
        return None  # the generated code then trims nothing

    trim.descriptor_of = no_descriptor
    figures = {}
    for name, file, make, hand, _trimmed in CASES:
        karta = load_karta(HERE / file).karta
        assert karta is not None
        obj = make()
        fast = Evaluator(trusted=True, decoded=True)
        figures[name] = {
            "hand": per_call_us(lambda obj=obj, hand=hand: hand(obj)),
            "engine": per_call_us(lambda karta=karta, obj=obj, fast=fast: full_extraction(karta, obj, fast)),
        }
    print(json.dumps(figures))
    return 0


def _engine_figures() -> dict[str, dict[str, float]]:
    # nocache: the child's code must not come from (or go to) the on-disk cache of trimmed code
    env = {**os.environ, "KARTA_CODEGEN": "nocache"}
    out = subprocess.run(
        [sys.executable, __file__, "--engine-only"], check=True, capture_output=True, text=True, env=env
    )
    figures: dict[str, dict[str, float]] = json.loads(out.stdout)
    return figures


def main() -> int:
    if sys.argv[1:] == ["--engine-only"]:
        return engine_only()
    print("== full extraction of one object (us per object, median)")
    print(
        f"{'case':<14}{'hand':>8}{'hand+trim':>11}{'fast path':>11}{'libjq only':>12}{'untrusted':>11}"
        f"{'dict default':>14}{'fast/hand':>11}{'libjq/fast':>12}{'untr/fast':>11}"
    )
    ok = True
    engine = _engine_figures()
    for name, file, make, hand, trimmed in CASES:
        karta = load_karta(HERE / file).karta
        assert karta is not None
        obj = make()
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
        t_trimmed = per_call_us(lambda obj=obj, trimmed=trimmed: trimmed(obj))
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
        r1, r2, r3 = t_fast / t_trimmed, t_slow / t_fast, t_metered / t_fast
        ok = ok and r1 <= 4 and r2 >= 20 and r3 <= 3
        print(
            f"{name:<14}{t_hand:>8.1f}{t_trimmed:>11.1f}{t_fast:>11.1f}{t_slow:>12.1f}{t_metered:>11.1f}"
            f"{t_checking:>14.1f}{r1:>10.1f}x{r2:>11.1f}x{r3:>10.1f}x"
        )
    print("targets: fast/hand <= 4x (hand+trim: the same values), libjq/fast >= 20x, untrusted/fast <= 3x")
    print("\n== the engine alone: trimming off on both sides (us per object, median; a child process)")
    print(f"{'case':<14}{'hand':>8}{'engine':>11}{'engine/hand':>13}")
    for name, figures in engine.items():
        t_hand, t_engine = figures["hand"], figures["engine"]
        ok = ok and t_engine / t_hand <= 4
        print(f"{name:<14}{t_hand:>8.1f}{t_engine:>11.1f}{t_engine / t_hand:>12.1f}x")
    print("target: engine/hand <= 4x")

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
