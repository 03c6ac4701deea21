"""Wall time of every offline ``kli`` command on one object, run on demand (never in the test
suite): ``.venv/bin/python bench/offline.py [--runs 15] [--target-ms 100]``.

Each command runs ``--runs`` times as a subprocess (after one warm-up run, which also writes the
bytecode caches: ``PYTHONDONTWRITEBYTECODE`` is dropped from the children's environment, as an
installed ``kli`` has its caches), alternating with the baselines measured in the same run:
``python -c pass`` (the interpreter's floor) and ``kli --help`` (kli's own start-up). Offline
means no kubeconfig (``KUBECONFIG`` names a file that does not exist) and an empty
``$KARTA_DEFINITIONS``, so every command resolves against the built-in catalog alone.

Prints, per command, the median and the 90th percentile in ms, and the median as a ratio to
``python -c pass`` and to ``kli --help``; then the load average (the figures depend on it: on a
busy machine, read the ratios). Target (issue 12, item 7): every command ≤ ``--target-ms`` (100 ms)
median on this machine; ``--json`` prints the figures as JSON too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
WORKLOAD = str(EXAMPLES / "workloads" / "pytorchjob-train-7.yaml")
PODS = str(EXAMPLES / "pods" / "pytorchjob-train-7-pods.yaml")
DEFINITION = str(EXAMPLES / "definitions" / "kubeflow-org-pytorchjob-v1.yaml")

# (label, kli arguments): the offline commands that work on one object or one definition
COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("inspect -f", ("inspect", "-f", WORKLOAD)),
    ("inspect -f --pods", ("inspect", "-f", WORKLOAD, "--pods", PODS)),
    ("describe -f", ("describe", "-f", WORKLOAD)),
    ("gang -f (kai)", ("gang", "--backend", "kai", "-f", WORKLOAD)),
    ("gang -f (kueue)", ("gang", "--backend", "kueue", "-f", WORKLOAD)),
    ("validate FILE", ("validate", DEFINITION)),
    ("verify NAME", ("verify", "--definition", "kubeflow-org-pytorchjob-v1", "--workload", WORKLOAD)),
    ("verify FILE --pods", ("verify", "--definition", DEFINITION, "--workload", WORKLOAD, "--pods", PODS)),
    ("definitions NAME", ("definitions", "kubeflow-org-pytorchjob-v1")),
    ("definitions", ("definitions",)),
)


def _env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["KUBECONFIG"] = str(scratch / "no-kubeconfig")
    env["KARTA_DEFINITIONS"] = str(scratch / "definitions")
    env["HOME"] = str(scratch)  # no ~/.kube/config, no ~/.karta
    return env


def _once(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode not in (0, 1):  # 1: verify's or inspect's findings, not a crash
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def _p90(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/offline.py", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (default: %(default)s)")
    parser.add_argument("--target-ms", type=float, default=100.0, help="the target (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args(argv)
    py = sys.executable
    kli = str(Path(py).with_name("kli"))
    with tempfile.TemporaryDirectory(prefix="karta-bench-") as tmp:
        scratch = Path(tmp)
        (scratch / "definitions").mkdir()
        env = _env(scratch)
        cases = [("python -c pass", [py, "-c", "pass"]), ("kli --help", [kli, "--help"])]
        cases += [(label, [kli, *arguments]) for label, arguments in COMMANDS]
        samples: dict[str, list[float]] = {label: [] for label, _ in cases}
        for _, cmd in cases:
            _once(cmd, env)  # warm-up: bytecode caches, the page cache
        for _ in range(args.runs):  # interleaved, so that a burst of load hits every case alike
            for label, cmd in cases:
                samples[label].append(_once(cmd, env))
    floor = statistics.median(samples["python -c pass"])
    help_ms = statistics.median(samples["kli --help"])
    print(f"== offline commands on one object (ms over {args.runs} runs; ratios of the medians)")
    print(f"{'command':<22}{'median':>9}{'p90':>9}{'/ python':>10}{'/ --help':>10}")
    figures = {}
    missed = []
    for label, _ in cases:
        median = statistics.median(samples[label])
        p90 = _p90(samples[label])
        figures[label] = {"median_ms": round(median, 1), "p90_ms": round(p90, 1)}
        mark = ""
        if label not in ("python -c pass", "kli --help") and median > args.target_ms:
            missed.append(label)
            mark = "  > target"
        print(f"{label:<22}{median:>9.1f}{p90:>9.1f}{median / floor:>9.1f}x{median / help_ms:>9.1f}x{mark}")
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print(f"target: every command <= {args.target_ms:.0f} ms median")
    print("all targets met" if not missed else f"over the target: {', '.join(missed)}")
    if args.json:
        print(json.dumps({"load": load, "figures": figures}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
