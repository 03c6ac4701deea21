"""``kli ui`` run as its own process against a test cluster (as a user runs it): started with
``--port 0``, its URL read from the line it prints, stopped with SIGINT (Ctrl-C) or SIGTERM, which
must end it with exit 0. Also small JSON and server-sent-event readers of its API."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

URL = re.compile(r"Serving the karta web view on (http://\S+)")


@contextmanager
def kli_ui(
    kubeconfig: Path, scratch: Path, *args: str, stop: signal.Signals = signal.SIGINT
) -> Iterator[str]:
    """The URL of a running ``kli ui --kubeconfig KUBECONFIG --port 0 ARGS``, stopped with ``stop``."""
    env = {
        **os.environ,
        "KARTA_DEFINITIONS": str(scratch / "no-definitions"),
        "HOME": str(scratch / "home"),
        "KUBECONFIG": str(scratch / "no-kubeconfig"),
    }
    for name in ("KARTA_CONFIG", "KARTA_OUTPUT", "KUBERNETES_SERVICE_HOST"):
        env.pop(name, None)
    command = [sys.executable, "-c", "from karta.cli.main import main; raise SystemExit(main())"]
    process = subprocess.Popen(
        [*command, "ui", "--kubeconfig", str(kubeconfig), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            if ready:
                line = process.stdout.readline()
                if URL.search(line) or not line:
                    break
            if process.poll() is not None:
                break
        found = URL.search(line)
        said = process.stderr.read() if process.poll() is not None and process.stderr else ""
        assert found, f"kli ui did not print its URL: {line!r} {said}"
        yield found.group(1)
    finally:
        if process.poll() is None:
            process.send_signal(stop)
        try:
            code = process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError("kli ui did not stop on SIGINT") from None
        err = process.stderr.read() if process.stderr else ""
        assert code == 0, f"kli ui exited {code} after {stop.name}: {err}"
        assert "Traceback" not in err, err


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


def rows(base: str, **params: str) -> list[dict[str, Any]]:
    query = "&".join(f"{k}={v}" for k, v in {"limit": "1000", **params}.items())
    return list(get_json(f"{base}api/workloads?{query}")["items"])


def wait_for(what: str, probe: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
