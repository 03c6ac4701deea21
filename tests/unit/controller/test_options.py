"""The command line: defaults of docs/spec/format.md#operator-flags, usage errors exit 2 naming the flag."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from karta.controller.options import Options, parse


def test_defaults_are_the_operators() -> None:
    options, version = parse([])
    assert not version
    assert options == Options()
    assert options.metrics_bind_address == ":8080" and options.health_probe_bind_address == ":8081"
    assert options.leader_election_id == "karta-operator.run.ai" and options.webhook_port == 9443
    assert options.webhook_cert_secret == "karta-operator-webhook-cert"
    # issue 22: the scoped pod webhook fails closed by default, and gang scheduling is opt-in
    assert options.backend == "none" and options.pod_webhook_failure_policy == "Fail"
    assert options.gang_scope == "opt-in" and options.exclude_namespaces == ()


def test_flags() -> None:
    options, _ = parse(
        [
            "--backend=workload-api",
            "--namespace=a",
            "--namespace",
            "b",
            "--leader-elect",
            "--leader-elect-lease-duration=20s",
            "--catalog=false",
            "--definitions-dir=/defs",
            "--log-format=text",
        ]
    )
    assert options.backend == "workload-api" and options.namespaces == ("a", "b")
    assert options.leader_elect and options.lease_duration == 20.0
    assert not options.catalog and options.definitions_dir == Path("/defs") and options.log_format == "text"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--backend=slurm"], "argument --backend: invalid choice: 'slurm'"),
        (["--catalog=maybe"], "argument --catalog: expected true or false, not 'maybe'"),
        (["--leader-elect-lease-duration=-1"], "expected a positive duration"),
        (["--workers=0"], "--workers must be at least 1"),
    ],
)
def test_usage_errors_exit_2_with_one_line(argv: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "karta.controller", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_version_and_an_unreachable_cluster(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "karta.controller", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("karta-controller ")
    proc = subprocess.run(
        [sys.executable, "-m", "karta.controller", "--kubeconfig", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"karta-controller: error: kubeconfig {tmp_path / 'none'} does not exist" in proc.stderr
