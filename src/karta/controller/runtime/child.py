"""A part of the controller that runs in a child process, supervised by a manager part.

Why: every thread of one Python process shares one GIL, so a request served next to CPU-bound
work (the gang reconciler's renders, a definition whose expressions spend their time budget)
waits for it. The pod webhook must answer in tens of milliseconds whatever the reconcilers do
(docs/controller/pod-binding.md has the figures), so ``karta-controller`` serves its webhooks from
a child process of its own (``--admission-process``).

Both sides of the protocol live here:

* the child calls :func:`die_with_parent` first (Linux: SIGKILL when the parent is gone, so a
  ``kill -9`` of the controller never leaves an orphan serving stale answers), and, once its
  endpoints listen, :func:`announce` writes one line on its stdout with the loopback ports of its
  probes and metrics;
* the parent runs :class:`ChildProcess`, a manager part: it starts the command, reads that line,
  polls the child's ``/readyz`` in the background (:attr:`ChildProcess.serving`, a readiness check
  of the parent that never waits on the child), fetches the child's ``/metrics`` at the parent's
  scrape time (:meth:`ChildProcess.exposition`, a short timeout), restarts the child with
  exponential back-off when it exits (a log line and ``karta_child_process_restarts_total``), and
  on stop sends it SIGTERM, then SIGKILL at ``stop_timeout``.
"""

from __future__ import annotations

import ctypes
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Final

from karta.controller.runtime.logs import logger
from karta.controller.runtime.metrics import Metrics

__all__ = ["PARENT_ENV", "ChildPorts", "ChildProcess", "announce", "die_with_parent"]

PARENT_ENV: Final = "KARTA_CONTROLLER_PARENT_PID"  # set by the parent: the child checks it is still there
_ANNOUNCE_KEY: Final = "karta-child-ports"
_LOG = logger("child")


@dataclass(frozen=True)
class ChildPorts:
    probes: int
    metrics: int


def announce(ports: ChildPorts, out: IO[str] | None = None) -> None:
    """The child's one line on stdout: where its probes and metrics listen (on loopback)."""
    out = out or sys.stdout
    out.write(json.dumps({_ANNOUNCE_KEY: {"probes": ports.probes, "metrics": ports.metrics}}) + "\n")
    out.flush()


def parse_announcement(line: str) -> ChildPorts | None:
    """The ports of an :func:`announce` line; None for any other line."""
    try:
        doc = json.loads(line)
        ports = doc[_ANNOUNCE_KEY]
        probes, metrics = ports["probes"], ports["metrics"]
    except (ValueError, TypeError, KeyError):
        return None
    if not all(isinstance(p, int) and not isinstance(p, bool) and 0 < p < 65536 for p in (probes, metrics)):
        return None
    return ChildPorts(probes, metrics)


def die_with_parent() -> bool:
    """In the child: ask Linux for SIGKILL when the parent goes away; exit at once when the parent
    named in :data:`PARENT_ENV` is already gone (it died before the request was made). False where
    the platform has no such request (then the child outlives a killed parent)."""
    if not sys.platform.startswith("linux"):
        return False
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    expected = os.environ.get(PARENT_ENV, "")
    if expected.isdigit() and os.getppid() != int(expected):
        os._exit(1)  # reparented already: the parent died between fork and here
    return True


class ChildProcess:
    """Runs ``command`` as a child process while the manager runs; restarts it when it exits.

    The parent-death signal is tied to the thread that started the child: this part's thread,
    which lives exactly as long as the part runs."""

    def __init__(
        self,
        name: str,
        command: Sequence[str],
        *,
        metrics: Metrics,
        stop_timeout: float = 10.0,
        backoff: tuple[float, float] = (0.5, 30.0),
        healthy_after: float = 60.0,
        poll: float = 0.5,
        failures_before_unready: int = 3,
        fetch_timeout: float = 0.5,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.command = list(command)
        self.metrics = metrics
        self.stop_timeout = stop_timeout
        self.backoff = backoff
        self.healthy_after = healthy_after  # a child that ran this long restarts at the first delay
        self.poll = poll
        self.failures_before_unready = failures_before_unready
        self.fetch_timeout = fetch_timeout
        self.env = env
        self.serving = threading.Event()  # the child answers its /readyz with 200
        self.started = 0  # how many times a child was started
        self._ports: ChildPorts | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    # -- what the parent reads ---------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    @property
    def ports(self) -> ChildPorts | None:
        return self._ports

    def exposition(self) -> str | None:
        """The child's ``/metrics`` now, or None (not started, or no answer within the timeout:
        a log line; the parent's scrape goes on with its own metrics)."""
        ports = self._ports
        if ports is None:
            return None
        try:
            text = _get(ports.metrics, "/metrics", self.fetch_timeout)[1]
        except OSError as exc:
            _LOG.warning("cannot read the child's metrics", extra={"child": self.name, "error": str(exc)})
            return None
        return text

    # -- running ------------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        delay = self.backoff[0]
        while not stop.is_set():
            began = time.monotonic()
            code = self._run_once(stop)
            if stop.is_set():
                return
            self.metrics.child_restarts.labels(name=self.name).inc()
            if time.monotonic() - began >= self.healthy_after:
                delay = self.backoff[0]
            _LOG.error(
                "child process exited; restarting",
                extra={"child": self.name, "exit_code": code, "restart_in_s": round(delay, 2)},
            )
            if stop.wait(delay):
                return
            delay = min(delay * 2, self.backoff[1])

    def _run_once(self, stop: threading.Event) -> int | None:
        """Start one child, watch it until it exits (its exit code) or ``stop`` is set (stop it)."""
        env = {**(self.env if self.env is not None else os.environ), PARENT_ENV: str(os.getpid())}
        try:
            proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True, env=env)
        except OSError as exc:
            _LOG.error("cannot start the child process", extra={"child": self.name, "error": str(exc)})
            return None
        with self._lock:
            self._proc, self._ports = proc, None
        self.started += 1
        _LOG.info("child process started", extra={"child": self.name, "pid": proc.pid})
        assert proc.stdout is not None
        reader = threading.Thread(
            target=self._read, args=(proc.stdout,), name=f"{self.name}-stdout", daemon=True
        )
        reader.start()
        failures = 0
        try:
            while proc.poll() is None:
                if stop.wait(self.poll):
                    self._stop(proc)
                    break
                failures = 0 if self._ready() else failures + 1
                if failures == 0:
                    self.serving.set()
                elif failures >= self.failures_before_unready:
                    self.serving.clear()
        finally:
            self.serving.clear()
            with self._lock:
                self._ports = None
            reader.join(1.0)
        return proc.returncode

    def _read(self, stdout: IO[str]) -> None:
        """The child's stdout: the announcement sets the ports; anything else is passed on."""
        for line in stdout:
            ports = parse_announcement(line)
            if ports is not None:
                with self._lock:
                    self._ports = ports
            else:
                sys.stdout.write(line)
                sys.stdout.flush()

    def _ready(self) -> bool:
        ports = self._ports
        if ports is None:
            return False
        try:
            return _get(ports.probes, "/readyz", 1.0)[0] == 200
        except OSError:
            return False

    def _stop(self, proc: subprocess.Popen[str]) -> None:
        self.serving.clear()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(self.stop_timeout)
        except subprocess.TimeoutExpired:
            _LOG.warning("child process did not stop in time; killing it", extra={"child": self.name})
            proc.kill()
            proc.wait()
        _LOG.info("child process stopped", extra={"child": self.name, "exit_code": proc.returncode})


def _get(port: int, path: str, timeout: float) -> tuple[int, str]:
    """GET ``http://127.0.0.1:port/path`` (never through a proxy): the status and body; a
    connection failure or a timeout raises OSError."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        resp = connection.getresponse()
        return resp.status, resp.read().decode("utf-8", "replace")
    except http.client.HTTPException as exc:
        raise OSError(str(exc)) from exc
    finally:
        connection.close()
