"""A smoke run of the Kueue bench (``bench/kueue.py --workloads 3``) against the test cluster's
Kueue, kwok and training operator (``kueue_cluster``): both phases hand the quota over twice, every
handover is measured (admitted, resumed, and a pod Running for the kinds whose pods run), the
summary has its ratios, and what the bench created in the shared cluster is gone afterwards (its
webhook configurations above all: their failurePolicy Fail would refuse later tests' objects)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import REPO
from .kubehttp import KubeHTTP, ok


def test_the_kueue_bench_runs_small(kueue_cluster: KubeHTTP, tmp_path: Path) -> None:
    log = tmp_path / "controller.log"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "kueue.py"), "--kubeconfig", str(kueue_cluster.kubeconfig),
         "--workloads", "3", "--timeout", "60", "--keep-log", str(log)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 0, (
        f"{out}\n{done.stderr[-3000:]}\n{log.read_text()[-3000:] if log.exists() else ''}"
    )
    assert "== native: 3 workloads (Job), 2 handovers measured" in out
    assert "== karta: 3 workloads (" in out and "2 handovers measured" in out
    for line in ("(0) its Workload deleted", "(a) Workload Admitted", "(b) workload resumed",
                 "(c) first pod Running", "== karta / native (p50, p90)", "controller CPU"):  # fmt: skip
        assert line in out, out
    assert "FAILURE" not in out
    leftovers = [
        w["metadata"]["name"]
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations")
        for w in ok(kueue_cluster.get(f"/apis/admissionregistration.k8s.io/v1/{kind}"))["items"]
        if w["metadata"]["name"].startswith("karta-bench-")
    ]
    assert leftovers == []
    assert kueue_cluster.get("/apis/run.ai/v1alpha1/kartas/example-com-trainingrun-v1").status == 404
