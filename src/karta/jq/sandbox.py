"""The sandbox: a small pool of killable worker processes that run libjq for untrusted expressions.

libjq cannot be interrupted or limited in-process (``def f: f; f`` spins forever, deep recursion
aborts the whole process, ``"x" * 1e9`` or ``setpath([1e9]; 1)`` allocate until the process dies),
so every untrusted expression the metered fast path cannot run is sent to a worker
(:mod:`karta.jq._worker`), whatever the safety check says about it. Each request carries its
limits: the time left (counted from when the request is sent: starting a worker is not charged),
the memory the worker may add to its address space (``RLIMIT_AS``, with ``RLIMIT_CPU`` as a
backstop for the time) and the largest reply (the output cap). A worker that passes its deadline
is killed; one that dies of its limits (``SIGABRT``/``SIGSEGV``: libjq's ``cannot allocate memory``
or the stack, ``SIGXCPU``: the CPU time) is reported as that budget; either way a replacement is
started at once, so the pool stays warm. Breaches raise :class:`~karta.errors.JqBudgetError`
(``time``: :class:`~karta.errors.JqTimeoutError`); a worker that dies otherwise raises
:class:`~karta.errors.JqRuntimeError`.

Workers start with an empty environment (the import path is passed on the command line; only
``LD_LIBRARY_PATH`` is passed on, for interpreters that need it to start) and clear even that
before compiling anything, so ``$ENV`` and ``env`` are ``{}`` there. The pool (:func:`shared`)
grows on demand up to :data:`DEFAULT_POOL_SIZE` workers, one per concurrent request (``kli``
uses one); requests beyond wait for a free worker within their time. Workers are started lazily,
kept between requests, and shut down at interpreter exit (or by :func:`shutdown`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from karta.errors import (
    JqBudgetError,
    JqCompileError,
    JqError,
    JqParseError,
    JqResultLimitError,
    JqRuntimeError,
    JqTimeoutError,
)
from karta.jq._worker import encode
from karta.jq.budget import DEFAULT_BUDGET

__all__ = ["DEFAULT_POOL_SIZE", "STARTUP_TIMEOUT_S", "Limits", "Sandbox", "run", "shared", "shutdown"]

STARTUP_TIMEOUT_S = 60.0
DEFAULT_POOL_SIZE = 4

_BOOT = "import json, sys; sys.path[:0] = json.loads(sys.argv[1]); from karta.jq._worker import main; main()"

_ERRORS: dict[str, type[JqError]] = {
    "parse": JqParseError,
    "compile": JqCompileError,
    "runtime": JqRuntimeError,
    "limit": JqResultLimitError,
}

# How a worker that died of its limits died.
_SIGNALS = {
    signal.SIGABRT: "memory",  # libjq: "cannot allocate memory", then abort()
    signal.SIGSEGV: "memory",  # the C stack
    signal.SIGBUS: "memory",
    signal.SIGXCPU: "time",  # RLIMIT_CPU
}


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of one request besides its time: ``memory_bytes`` of address space the worker
    may add, ``output_bytes`` of reply, and the message for passing the deadline."""

    memory_bytes: int = DEFAULT_BUDGET.memory_bytes
    output_bytes: int = DEFAULT_BUDGET.output_bytes
    timeout_message: str = ""


class _WorkerGone(Exception):
    """The worker closed its pipe (it died)."""


class _Deadline(Exception):
    """The deadline passed before the worker answered."""


class _Worker:
    """One worker process; ``ready`` once its handshake has been read."""

    __slots__ = ("proc", "ready")

    def __init__(self) -> None:
        env = {}
        if "LD_LIBRARY_PATH" in os.environ:
            env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
        path = json.dumps([p for p in sys.path if p])
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
        )
        self.ready = False

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def read_exact(self, n: int, deadline: float) -> bytes:
        stdout = self.proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        chunks: list[bytes] = []
        while n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Deadline
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                raise _Deadline
            chunk = os.read(fd, min(n, 1 << 20))
            if not chunk:
                raise _WorkerGone
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def read_frame(self, deadline: float, *, max_size: int) -> dict[str, Any]:
        size = int.from_bytes(self.read_exact(4, deadline), "big")
        if size > max_size:
            raise _Oversized
        body = self.read_exact(size, deadline)
        try:
            reply: dict[str, Any] = orjson.loads(body)
        except orjson.JSONDecodeError:
            reply = json.loads(body)
        return reply

    def kill(self) -> int | None:
        proc = self.proc
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        return code


class _Oversized(Exception):
    """The reply is larger than the output cap allows."""


class Sandbox:
    """A pool of up to ``size`` workers, each used by one request at a time."""

    def __init__(self, size: int = DEFAULT_POOL_SIZE) -> None:
        self.size = size
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []  # most recently used last
        self._busy = 0
        self._closed_generation = 0
        self.starts = 0  # how many workers were started (observable in tests)

    @property
    def running(self) -> bool:
        """Whether any worker process is alive."""
        with self._cond:
            return any(w.alive for w in self._idle) or self._busy > 0

    @property
    def _proc(self) -> subprocess.Popen[bytes] | None:
        """The process of the worker the next request gets (tests and diagnostics)."""
        with self._cond:
            return self._idle[-1].proc if self._idle else None

    def run(
        self,
        expression: str,
        text: str,
        *,
        max_results: int,
        timeout_ms: int,
        limits: Limits | None = None,
        on_startup: Callable[[float], None] | None = None,
    ) -> list[Any]:
        """Evaluate ``expression`` on the JSON document ``text`` in a worker; ``on_startup`` is
        told the seconds spent starting one (not charged to ``timeout_ms``)."""
        limits = limits or Limits()
        queued = time.monotonic()
        worker, generation = self._acquire(expression, queued + timeout_ms / 1000.0, limits)
        startup = 0.0
        keep = False
        try:
            if not worker.ready:
                begun = time.monotonic()
                self._handshake(worker, expression)
                startup = time.monotonic() - begun
                if on_startup is not None:
                    on_startup(startup)
            request = encode(
                {
                    "e": expression,
                    "t": text,
                    "n": max_results,
                    "m": limits.memory_bytes,
                    "o": limits.output_bytes,
                    "c": timeout_ms / 1000.0,
                }
            )
            deadline = time.monotonic() + max(
                0.0, timeout_ms / 1000.0 - (time.monotonic() - queued - startup)
            )
            try:
                assert worker.proc.stdin is not None
                worker.proc.stdin.write(request)
                worker.proc.stdin.flush()
                reply = worker.read_frame(deadline, max_size=2 * limits.output_bytes + (1 << 20))
            except _Deadline:
                raise JqTimeoutError(
                    f"JQ execution error for expression '{expression}': "
                    + (
                        limits.timeout_message
                        or f"context deadline exceeded (evaluation took longer than {timeout_ms} ms)"
                    ),
                    expression=expression,
                ) from None
            except _Oversized:
                raise _output_error(expression, limits) from None
            except (_WorkerGone, BrokenPipeError, OSError):
                raise self._death(worker, expression, limits) from None
            keep = not reply.get("recycle")
        finally:
            self._release(worker, generation, keep=keep)
        if "ok" in reply:
            results: list[Any] = reply["ok"]
            return results
        kind = reply.get("err", "")
        message = str(reply.get("msg", ""))
        if kind == "memory":
            raise _memory_error(expression, limits)
        if kind == "output":
            raise _output_error(expression, limits)
        raise _ERRORS.get(kind, JqRuntimeError)(message, expression=expression)

    def _acquire(self, expression: str, deadline: float, limits: Limits) -> tuple[_Worker, int]:
        with self._cond:
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive:
                        self._busy += 1
                        return worker, self._closed_generation
                    worker.kill()
                if self._busy < max(1, self.size):
                    self._busy += 1
                    try:
                        worker = self._start()
                    except BaseException:
                        self._busy -= 1
                        raise
                    return worker, self._closed_generation
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise JqTimeoutError(
                        f"JQ execution error for expression '{expression}': "
                        + (limits.timeout_message or "context deadline exceeded")
                        + " (waiting for a free jq worker)",
                        expression=expression,
                    )
                self._cond.wait(remaining)

    def _release(self, worker: _Worker, generation: int, *, keep: bool) -> None:
        with self._cond:
            self._busy -= 1
            closed = generation != self._closed_generation
            keep = keep and worker.alive and not closed
            if keep:
                self._idle.append(worker)
            elif not closed:
                # Killed or dying: start the replacement now, so the next request finds it warm.
                with contextlib.suppress(OSError):
                    self._idle.insert(0, self._start())
            self._cond.notify()
        if not keep:
            worker.kill()

    def _start(self) -> _Worker:
        worker = _Worker()
        self.starts += 1
        return worker

    def _handshake(self, worker: _Worker, expression: str) -> None:
        try:
            ready = worker.read_frame(time.monotonic() + STARTUP_TIMEOUT_S, max_size=1 << 16)
        except (_Deadline, _WorkerGone, _Oversized, OSError):
            raise JqRuntimeError(
                f"JQ execution error for expression '{expression}': the jq worker process failed to start",
                expression=expression,
            ) from None
        if not ready.get("ready"):
            raise JqRuntimeError(
                f"JQ execution error for expression '{expression}': unexpected worker handshake",
                expression=expression,
            )
        worker.ready = True

    @staticmethod
    def _death(worker: _Worker, expression: str, limits: Limits) -> JqError:
        code = worker.kill()
        kind = _SIGNALS.get(-code) if code is not None and code < 0 else None  # type: ignore[call-overload]
        if kind == "memory":
            return _memory_error(expression, limits)
        if kind == "time":
            return JqTimeoutError(
                f"JQ execution error for expression '{expression}': "
                + (limits.timeout_message or "context deadline exceeded")
                + " (the jq worker ran out of CPU time)",
                expression=expression,
            )
        return JqRuntimeError(
            f"JQ execution error for expression '{expression}': "
            f"the jq worker process died (exit code {code}); "
            "the expression probably exhausted memory or the stack",
            expression=expression,
        )

    def close(self) -> None:
        """Stop every idle worker, and busy ones when their request ends (a later request
        starts new ones)."""
        with self._cond:
            idle, self._idle = self._idle, []
            self._closed_generation += 1
            self._cond.notify_all()
        for worker in idle:
            worker.kill()


def _memory_error(expression: str, limits: Limits) -> JqBudgetError:
    return JqBudgetError(
        f"JQ execution error for expression '{expression}': memory budget exceeded "
        f"(the jq worker may allocate {limits.memory_bytes} bytes)",
        expression=expression,
        budget="memory",
    )


def _output_error(expression: str, limits: Limits) -> JqBudgetError:
    return JqBudgetError(
        f"JQ execution error for expression '{expression}': output budget exceeded "
        f"(results of more than {limits.output_bytes} bytes)",
        expression=expression,
        budget="output",
    )


_SANDBOX = Sandbox()
atexit.register(_SANDBOX.close)


run = _SANDBOX.run
"""Evaluate in the shared pool (:meth:`Sandbox.run`)."""


def shared() -> Sandbox:
    """The process-wide pool (for tests, diagnostics and sizing: ``shared().size``)."""
    return _SANDBOX


def shutdown() -> None:
    """Stop the shared pool's workers, if any."""
    _SANDBOX.close()
