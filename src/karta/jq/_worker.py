"""The sandbox worker process: evaluates jq requests with libjq, one at a time, over pipes.

Run as ``python -m karta.jq._worker``. Frames are a 4-byte big-endian length followed by an
orjson document. The worker first sends ``{"ready": true}``; then for each request
``{"e": expression, "t": input JSON text, "n": result cap}`` it answers ``{"ok": [results]}`` or
``{"err": kind, "msg": message}`` with kind ``parse``, ``compile``, ``runtime`` or ``limit``.
The address space is capped (``KARTA_JQ_WORKER_MEMORY`` bytes, default 1 GiB) so runaway
programs die instead of exhausting the machine; the parent kills the worker on timeouts.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, BinaryIO

import orjson

DEFAULT_MEMORY_LIMIT = 1 << 30


def _limit_memory() -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return
    limit = int(os.environ.get("KARTA_JQ_WORKER_MEMORY", DEFAULT_MEMORY_LIMIT))
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


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


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    from karta.errors import JqCompileError, JqParseError, JqResultLimitError, JqRuntimeError
    from karta.jq import _libjq

    _write(stdout, {"ready": True})
    while True:
        header = _read_exact(stdin, 4)
        if header is None:
            return
        body = _read_exact(stdin, int.from_bytes(header, "big"))
        if body is None:
            return
        request = orjson.loads(body)
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
            reply = {"err": "runtime", "msg": "out of memory"}
        _write(stdout, reply)


def main() -> None:
    _limit_memory()
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
