"""The sandbox worker process: evaluates jq requests with libjq, one at a time, over pipes.

Started by :mod:`karta.jq.sandbox` with an empty environment; it clears even what it was given
before compiling anything, because libjq reads ``$ENV`` when it compiles a program. Frames are a
4-byte big-endian length followed by an orjson document. The worker first sends
``{"ready": true}``; then for each request ``{"e": expression, "t": input JSON text, "n": result
cap, "m": memory bytes, "o": output bytes, "c": CPU seconds}`` it answers ``{"ok": [results]}`` or
``{"err": kind, "msg": message}`` with kind ``parse``, ``compile``, ``runtime``, ``limit``,
``memory`` (a ``MemoryError``) or ``output`` (a reply over the output cap), adding
``"recycle": true`` when its address space grew so much that it should be replaced.

Limits, per request: the address space may grow by ``m`` bytes over what it is when the request
arrives (``RLIMIT_AS``: libjq then dies with ``cannot allocate memory``, ``SIGABRT``), the CPU
time by ``c`` seconds plus one (``RLIMIT_CPU``, ``SIGXCPU``: a backstop, the parent kills the
worker at the deadline); no core files.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, BinaryIO

import orjson

try:
    import resource
except ImportError:  # pragma: no cover - not on POSIX
    resource = None  # type: ignore[assignment]

_RECYCLE_GROWTH = 256 << 20  # recycle a worker whose address space grew this much over its start


def _read_exact(stream: BinaryIO, n: int) -> bytes | None:
    chunks: list[bytes] = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def encode(message: Any) -> bytes:
    try:
        body = orjson.dumps(message)
    except TypeError:  # integers beyond 64 bits
        body = json.dumps(message).encode()
    return len(body).to_bytes(4, "big") + body


def _write(stream: BinaryIO, message: Any) -> None:
    stream.write(encode(message))
    stream.flush()


def _address_space() -> int:
    """The current size of the address space in bytes (0 when unknown)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _cpu_seconds() -> float:
    if resource is None:  # pragma: no cover
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _set_limits(memory: int, cpu: float) -> None:
    if resource is None:  # pragma: no cover
        return
    space = _address_space()
    if space and memory > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = space + memory
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    if cpu > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = math.ceil(_cpu_seconds() + cpu) + 1
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _clear_limits() -> None:
    if resource is None:  # pragma: no cover
        return
    for which in (resource.RLIMIT_AS, resource.RLIMIT_CPU):
        _, hard = resource.getrlimit(which)
        resource.setrlimit(which, (hard, hard))


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    from karta.errors import JqCompileError, JqParseError, JqResultLimitError, JqRuntimeError
    from karta.jq import _libjq

    baseline = _address_space()
    _write(stdout, {"ready": True})
    while True:
        header = _read_exact(stdin, 4)
        if header is None:
            return
        body = _read_exact(stdin, int.from_bytes(header, "big"))
        if body is None:
            return
        request = orjson.loads(body)
        del body
        output = int(request.get("o", 0))
        _set_limits(int(request.get("m", 0)), float(request.get("c", 0)))
        try:
            results = _libjq.run_text(request["e"], request["t"], max_results=request["n"])
            reply: dict[str, Any] = {"ok": results}
        except JqResultLimitError as exc:
            reply = {"err": "limit", "msg": str(exc)}
        except JqParseError as exc:
            reply = {"err": "parse", "msg": str(exc)}
        except JqCompileError as exc:
            reply = {"err": "compile", "msg": str(exc)}
        except JqRuntimeError as exc:
            reply = {"err": "runtime", "msg": str(exc)}
        except MemoryError:
            reply = {"err": "memory", "msg": "out of memory"}
        del request
        try:
            frame = encode(reply)
        except MemoryError:
            frame = encode({"err": "memory", "msg": "out of memory"})
        del reply
        _clear_limits()
        if output and len(frame) - 4 > output:
            frame = encode({"err": "output", "msg": "reply too large"})
        if baseline and _address_space() > baseline + _RECYCLE_GROWTH:
            frame = frame[:-1] + b',"recycle":true}' if frame.endswith(b"}") else frame
            frame = (len(frame) - 4).to_bytes(4, "big") + frame[4:]
        stdout.write(frame)
        stdout.flush()
        del frame


def main() -> None:
    if resource is not None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.environ.clear()  # before libjq compiles anything: $ENV and env are {}
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
