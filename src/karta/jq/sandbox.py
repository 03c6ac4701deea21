"""The sandbox: a killable worker process for untrusted expressions that may not terminate.

libjq cannot be interrupted in-process (``def f: f; f`` spins forever, deep recursion aborts the
whole process), so expressions from outside the built-in catalog that the fast path cannot run
and the safety check cannot prove bounded are sent to one long-lived worker
(:mod:`karta.jq._worker`, started lazily on first use, never for fast-path or bounded
expressions). Each request carries the evaluator's time limit, counted from when the request is
sent (worker start-up is not charged to it). On timeout the worker is killed and the call raises
:class:`~karta.errors.JqTimeoutError`; a worker that dies raises
:class:`~karta.errors.JqRuntimeError`. Either way the next request starts a fresh worker.
The worker is shut down at interpreter exit (or by :func:`shutdown`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any

import orjson

from karta.errors import (
    JqCompileError,
    JqError,
    JqParseError,
    JqResultLimitError,
    JqRuntimeError,
    JqTimeoutError,
)
from karta.jq._worker import encode

STARTUP_TIMEOUT_S = 60.0

_ERRORS: dict[str, type[JqError]] = {
    "parse": JqParseError,
    "compile": JqCompileError,
    "runtime": JqRuntimeError,
    "limit": JqResultLimitError,
}


class _WorkerGone(Exception):
    """The worker closed its pipe (it died)."""


class _Deadline(Exception):
    """The deadline passed before the worker answered."""


class Sandbox:
    """One worker process, used by one request at a time."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self.starts = 0  # how many workers were started (observable in tests)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def run(self, expression: str, text: str, *, max_results: int, timeout_ms: int) -> list[Any]:
        """Evaluate ``expression`` on the JSON document ``text`` in the worker."""
        request = encode({"e": expression, "t": text, "n": max_results})
        with self._lock:
            proc = self._ensure(expression)
            deadline = time.monotonic() + timeout_ms / 1000.0
            try:
                assert proc.stdin is not None
                proc.stdin.write(request)
                proc.stdin.flush()
                reply = self._read_frame(proc, deadline)
            except _Deadline:
                self._kill()
                raise JqTimeoutError(
                    f"JQ execution error for expression '{expression}': "
                    f"context deadline exceeded (evaluation took longer than {timeout_ms} ms)",
                    expression=expression,
                ) from None
            except (_WorkerGone, BrokenPipeError, OSError):
                code = self._kill()
                raise JqRuntimeError(
                    f"JQ execution error for expression '{expression}': "
                    f"the jq worker process died (exit code {code}); "
                    "the expression probably exhausted memory or the stack",
                    expression=expression,
                ) from None
        if "ok" in reply:
            results: list[Any] = reply["ok"]
            return results
        kind = _ERRORS.get(reply.get("err", ""), JqRuntimeError)
        raise kind(str(reply.get("msg", "")), expression=expression)

    def _ensure(self, expression: str) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._kill()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        proc = subprocess.Popen(
            [sys.executable, "-m", "karta.jq._worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
        )
        self._proc = proc
        self.starts += 1
        try:
            ready = self._read_frame(proc, time.monotonic() + STARTUP_TIMEOUT_S)
        except (_Deadline, _WorkerGone):
            self._kill()
            raise JqRuntimeError(
                f"JQ execution error for expression '{expression}': the jq worker process failed to start",
                expression=expression,
            ) from None
        if not ready.get("ready"):
            self._kill()
            raise JqRuntimeError(
                f"JQ execution error for expression '{expression}': unexpected worker handshake",
                expression=expression,
            )
        return proc

    @staticmethod
    def _read_exact(proc: subprocess.Popen[bytes], n: int, deadline: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        chunks: list[bytes] = []
        while n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Deadline
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                raise _Deadline
            chunk = os.read(fd, n)
            if not chunk:
                raise _WorkerGone
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _read_frame(self, proc: subprocess.Popen[bytes], deadline: float) -> dict[str, Any]:
        size = int.from_bytes(self._read_exact(proc, 4, deadline), "big")
        body = self._read_exact(proc, size, deadline)
        try:
            reply: dict[str, Any] = orjson.loads(body)
        except orjson.JSONDecodeError:
            reply = json.loads(body)
        return reply

    def _kill(self) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        return code

    def close(self) -> None:
        """Stop the worker (a later request starts a new one)."""
        with self._lock:
            self._kill()


_SANDBOX = Sandbox()
atexit.register(_SANDBOX.close)


def run(expression: str, text: str, *, max_results: int, timeout_ms: int) -> list[Any]:
    """Evaluate in the shared worker (see :meth:`Sandbox.run`)."""
    return _SANDBOX.run(expression, text, max_results=max_results, timeout_ms=timeout_ms)


def shared() -> Sandbox:
    """The process-wide sandbox (for tests and diagnostics)."""
    return _SANDBOX


def shutdown() -> None:
    """Stop the shared worker, if any."""
    _SANDBOX.close()
