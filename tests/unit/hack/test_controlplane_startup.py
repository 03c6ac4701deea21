"""hack/cluster/controlplane.py start-up: an add-on that exits during start-up is started again with
new ports (the training operator loses a port race without logging it: it exits through its own
"unable to create controller" path), a timeout is not retried, and the error names the log's first
error lines, not only the shutdown messages at its end. A stand-in binary plays the add-on."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest
from tests.e2e.conftest import hack_module

# Exits with a controller-runtime error line on its first N runs, then serves /readyz on the probe
# port (its first argument) until killed.
STAND_IN = """#!{python}
import http.server, pathlib, sys
runs = pathlib.Path({runs!r})
n = int(runs.read_text()) + 1 if runs.exists() else 1
runs.write_text(str(n))
if n <= {failures}:
    print("2026-12-06T16:07:29Z\\tERROR\\tsetup\\tunable to create controller\\t{{}}", file=sys.stderr)
    print("2026-12-06T16:07:29Z\\tINFO\\tStopping and waiting for HTTP servers", file=sys.stderr)
    sys.exit(1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def _module() -> ModuleType:
    return hack_module("cluster/controlplane.py")


def _stand_in(tmp_path: Path, failures: int) -> Path:
    binary = tmp_path / "addon"
    runs = tmp_path / "runs"
    binary.write_text(STAND_IN.format(python=sys.executable, runs=str(runs), failures=failures))
    binary.chmod(0o755)
    return binary


def _plane(tmp_path: Path, *, attempts: int = 3, timeout: float = 20.0) -> object:
    cp = _module()
    config = cp.ControlPlaneConfig(bin_dir=tmp_path, ready_timeout=timeout, start_attempts=attempts)
    (tmp_path / "work" / "logs").mkdir(parents=True)  # start() makes it before any component
    return cp.ControlPlane(config=config, workdir=tmp_path / "work")


def _runs(tmp_path: Path) -> int:
    return int((tmp_path / "runs").read_text())


def test_an_addon_that_exits_during_start_up_is_started_again(tmp_path: Path) -> None:
    plane = _plane(tmp_path)
    binary = _stand_in(tmp_path, failures=2)
    try:
        plane._start_addon("addon", lambda probe, _other: [str(probe)], probe="readyz", binary=binary)  # type: ignore[attr-defined]
        assert _runs(tmp_path) == 3
    finally:
        plane._terminate("addon")  # type: ignore[attr-defined]


def test_the_last_exit_is_reported_with_the_logs_error_lines(tmp_path: Path) -> None:
    cp = _module()
    plane = _plane(tmp_path, attempts=2)
    binary = _stand_in(tmp_path, failures=5)
    with pytest.raises(cp.ControlPlaneError) as caught:
        plane._start_addon("addon", lambda probe, _other: [str(probe)], probe="readyz", binary=binary)  # type: ignore[attr-defined]
    assert _runs(tmp_path) == 2
    message = str(caught.value)
    assert "addon exited during start-up" in message
    assert "first error lines:" in message
    assert "unable to create controller" in message.split("last lines:")[0]
    assert str(tmp_path / "work" / "logs" / "addon.log") in message


def test_free_ports_are_below_the_ephemeral_range() -> None:
    cp = _module()
    floor = cp._ephemeral_floor()
    ports = {cp.free_port() for _ in range(20)}
    if floor > 12000:
        assert all(10000 <= port < floor for port in ports)
    assert len(ports) > 1
