from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from karta.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def kli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Callable[..., Result]:
    # isolate from the developer's own definitions directory
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "no-definitions"))
    # and from any cluster: no kubeconfig, not in a pod (definitions are then catalog-only, 17.3)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    def run(*args: str, tty: bool = False) -> Result:
        """``kli ARGS``; with ``tty``, stdout claims to be a terminal 100 columns wide."""
        capsys.readouterr()
        with monkeypatch.context() as m:
            if tty:
                m.setattr(sys.stdout, "isatty", lambda: True, raising=False)
                m.setenv("COLUMNS", "100")
            code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def examples() -> Path:
    return EXAMPLES
