"""The Kueue bench's pure parts (``bench/kueue.py``): its arguments, the workloads it creates (each
kind's objects against the Karta that decides their resumed state), its quantiles and its summary
table; nothing is timed (tests/e2e/test_kueue_bench.py runs it against the test cluster)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from karta.extract import ComponentFactory
from karta.kueue.eligibility import eligibility
from karta.kueue.patches import suspend

ROOT = Path(__file__).resolve().parents[3]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("karta_bench_kueue", ROOT / "bench" / "kueue.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


def test_defaults_are_the_issue_size() -> None:
    args = bench.parse_args([])
    assert (args.workloads, args.kubeconfig) == (500, None)


def test_one_handover_at_least(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.parse_args(["--workloads", "1"])
    assert "at least 2" in capsys.readouterr().err


def test_kinds_are_created_running_and_the_karta_suspends_them() -> None:
    """Every object starts in its definition's resumed state (the suspend webhook, Kueue's or
    karta's, must hold it), and the definition's suspend actions give the suspended state."""
    native, karta = bench.kinds()
    assert [k.label for k in native] == ["Job"]
    assert [k.label for k in karta] == ["PyTorchJob", "JobSet", "TrainingRun"]
    for kind in (*native, *karta):
        assert eligibility(kind.karta).eligible, kind.label
        obj = kind.make("x-0", "ns", "team")
        assert obj["metadata"]["labels"] == {bench.QUEUE_LABEL: "team"}
        assert (obj["apiVersion"], obj["kind"]) == (kind.rtype.api_version, kind.rtype.kind)
        assert bench.resumed_state(kind.karta, obj), kind.label
        held = suspend(ComponentFactory(kind.karta, obj))
        assert not bench.resumed_state(kind.karta, held), kind.label


def test_quantiles_skip_what_was_not_seen() -> None:
    assert bench.quantiles([3.0, 1.0, 2.0, float("nan")]) == (2.0, 3.0, 3.0)
    assert bench.quantiles([float(i) for i in range(1, 11)]) == (5.5, 9.0, 10.0)
    p50, p90, top = bench.quantiles([])
    assert p50 != p50 and p90 != p90 and top != top  # NaN


def _phase(name: str, samples: list[object]) -> object:
    return bench.PhaseResult(
        name=name, count=3, created=0.1, queued=0.5, samples=samples, cpu=1.0, wall=10.0,
        rss=(100.0, 110.0), load=((1.0, 1.0, 1.0), (2.0, 2.0, 2.0)), failures=[], retries=0,
    )  # fmt: skip


def test_report_gives_the_ratios_against_native() -> None:
    native = _phase("native", [bench.Sample("Job", "Job", 0.2, 1.0, 1.1, 1.2)] * 2)
    karta = _phase(
        "karta",
        [bench.Sample("PyTorchJob", "JobSet", 0.2, 1.5, 1.65, 1.8),
         bench.Sample("JobSet", "PyTorchJob", 0.2, 1.5, 1.65, None)],
    )  # fmt: skip
    lines: list[str] = []
    bench.report(native, karta, lines.append)
    text = "\n".join(lines)
    assert "== native: 3 workloads (Job), 2 handovers measured" in text
    assert "JobSet -> PyTorchJob" in text and "PyTorchJob -> JobSet" in text
    ratios = {
        line.split()[1]: line.split()[-2:]
        for line in lines[lines.index("== karta / native (p50, p90)") + 1 :]
    }
    assert ratios == {"admitted": ["1.50", "1.50"], "resumed": ["1.50", "1.50"], "pod": ["1.50", "1.50"]}
