"""Wall time of every offline ``kli`` command on one object, run on demand (never in the test
suite): ``.venv/bin/python bench/offline.py [--runs 15] [--target-ms 100]``.

Each command runs ``--runs`` times as a subprocess (after one warm-up run, which also writes the
bytecode caches: ``PYTHONDONTWRITEBYTECODE`` is dropped from the children's environment, as an
installed ``kli`` has its caches), alternating with the baselines measured in the same run:
``python -c pass`` (the interpreter's floor) and ``kli --help`` (kli's own start-up). Offline
means no kubeconfig (``KUBECONFIG`` names a file that does not exist) and an empty
``$KARTA_DEFINITIONS``, so every command resolves against the built-in catalog alone.

Prints, per command, the median and the 90th percentile of the wall time in ms, the median CPU
time (user + system of the child: less sensitive to other processes than the wall time), and the
median wall time as a ratio to ``python -c pass`` and to ``kli --help``; then the load average (the
figures depend on it: on a busy machine, read the ratios and the CPU times). Targets: every
command ≤ ``--target-ms`` (100 ms; issue 12, item 7) median wall time on this machine, and ≤
``--help-ratio`` (2) times ``kli --help``'s median (issue 23, item 4: the ratio holds on a slower
or busier machine too); ``--json`` prints the figures as JSON too.

``--baseline SRC`` also runs every command with ``PYTHONPATH=SRC`` (another checkout's ``src``, e.g.
``git archive main src | tar -x -C /tmp/base``), interleaved with the current one, and prints the
CPU time of each and their ratio: the previous approach measured in the same run. The baseline is
started as that checkout's console script would start it (``karta.cli.entry`` where it has one,
else ``karta.cli.main``, as before the entry module existed), since the installed ``kli`` script
names the current checkout's entry point.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


# how the console script of a checkout without karta.cli.entry started kli
BASELINE_LAUNCHER = """
import sys
try:
    from karta.cli.entry import main
except ImportError:
    from karta.cli.main import main
sys.exit(main())
"""


def _env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["KUBECONFIG"] = str(scratch / "no-kubeconfig")
    env["KARTA_DEFINITIONS"] = str(scratch / "definitions")
    env["HOME"] = str(scratch)  # no ~/.kube/config, no ~/.karta
    return env


def _cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def _once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one run of ``cmd``."""
    cpu = _cpu_ms()
    start = time.perf_counter()
    done = subprocess.run(cmd, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode not in (0, 1):  # 1: verify's or inspect's findings, not a crash
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed, _cpu_ms() - cpu


def _command(cmd: list[str], which: str, kli: str) -> list[str]:
    """``cmd`` as run for the current checkout (``which`` empty) or the baseline."""
    if which and cmd[0] == kli:
        return [sys.executable, "-c", BASELINE_LAUNCHER, *cmd[1:]]
    return cmd


def _p90(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/offline.py", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (default: %(default)s)")
    parser.add_argument("--target-ms", type=float, default=100.0, help="the target (default: %(default)s)")
    parser.add_argument(
        "--help-ratio", type=float, default=2.0, help="the target in kli --help's (default: %(default)s)"
    )
    parser.add_argument("--baseline", metavar="SRC", help="also run every command from this src directory")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args(argv)
    py = sys.executable
    kli = str(Path(py).with_name("kli"))
    with tempfile.TemporaryDirectory(prefix="karta-bench-") as tmp:
        scratch = Path(tmp)
        (scratch / "definitions").mkdir()
        env = _env(scratch)
        envs = {"": env}
        if args.baseline:
            envs["baseline"] = {**env, "PYTHONPATH": str(Path(args.baseline).resolve())}
        cases = [("python -c pass", [py, "-c", "pass"]), ("kli --help", [kli, "--help"])]
        cases += [(label, [kli, *arguments]) for label, arguments in COMMANDS]
        walls: dict[tuple[str, str], list[float]] = {(e, label): [] for e in envs for label, _ in cases}
        cpus: dict[tuple[str, str], list[float]] = {(e, label): [] for e in envs for label, _ in cases}
        for which, environment in envs.items():
            for _, cmd in cases:
                _once(_command(cmd, which, kli), environment)  # warm-up: bytecode caches, the page cache
        for _ in range(args.runs):  # interleaved, so that a burst of load hits every case alike
            for label, cmd in cases:
                for which, environment in envs.items():
                    wall, cpu = _once(_command(cmd, which, kli), environment)
                    walls[which, label].append(wall)
                    cpus[which, label].append(cpu)
    floor = statistics.median(walls["", "python -c pass"])
    help_ms = statistics.median(walls["", "kli --help"])
    print(f"== offline commands on one object (ms over {args.runs} runs; ratios of the medians)")
    extra = f"{'baseline cpu':>14}{'cpu/base':>10}" if args.baseline else ""
    print(f"{'command':<22}{'median':>9}{'p90':>9}{'cpu':>9}{'/ python':>10}{'/ --help':>10}{extra}")
    figures: dict[str, dict[str, float]] = {}
    missed = []
    over_ratio = []
    for label, _ in cases:
        median = statistics.median(walls["", label])
        p90 = _p90(walls["", label])
        cpu = statistics.median(cpus["", label])
        figures[label] = {"median_ms": round(median, 1), "p90_ms": round(p90, 1), "cpu_ms": round(cpu, 1)}
        line = (
            f"{label:<22}{median:>9.1f}{p90:>9.1f}{cpu:>9.1f}{median / floor:>9.1f}x{median / help_ms:>9.1f}x"
        )
        if args.baseline:
            base = statistics.median(cpus["baseline", label])
            figures[label]["baseline_cpu_ms"] = round(base, 1)
            line += f"{base:>14.1f}{cpu / base:>9.2f}x"
        if label not in ("python -c pass", "kli --help") and median > args.target_ms:
            missed.append(label)
            line += "  > target"
        if label not in ("python -c pass", "kli --help") and median > args.help_ratio * help_ms:
            over_ratio.append(label)
            line += f"  > {args.help_ratio:g}x --help"
        print(line)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print(f"targets: every command <= {args.target_ms:.0f} ms median, <= {args.help_ratio:g}x kli --help")
    print("all targets met" if not missed and not over_ratio else "")
    if missed:
        print(f"over {args.target_ms:.0f} ms: {', '.join(missed)}")
    if over_ratio:
        print(f"over {args.help_ratio:g}x kli --help: {', '.join(over_ratio)}")
    if args.json:
        print(json.dumps({"load": load, "figures": figures}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
