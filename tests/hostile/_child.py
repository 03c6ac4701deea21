"""The child process of the hostile-input harness (tests/hostile/harness.py): runs many ``kli``
command lines, or library calls, in one interpreter under a memory limit, and reports each outcome
as one JSON line on the real stdout *before* starting the next, so that a case that kills or hangs
the process is known by the last line the parent read.

Input (stdin, one JSON document): ``{"memory": bytes, "cases": [{"id", "argv" | "call", "files":
{relative name: text}, "env": {name: value}, "stdin": text}]}``. Each case runs in a fresh
temporary directory holding its files (argv may name them relative to it).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any


def _limit(memory: int) -> None:
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _run_kli(argv: list[str], stdin: str) -> tuple[int, str, str]:
    from karta.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # click's own exits, if any escape
                code = int(exc.code) if isinstance(exc.code, int) else 1
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def _run_call(call: dict[str, Any]) -> tuple[int, str, str]:
    """A library call: ``{"module", "function", "args"}``; the function returns text to report."""
    import importlib

    module = importlib.import_module(call["module"])
    result = getattr(module, call["function"])(**call.get("args", {}))
    return 0, str(result), ""


def main() -> None:
    request = json.loads(sys.stdin.read())
    _limit(int(request.get("memory", 0)))
    real_stdout = sys.stdout
    for case in request["cases"]:
        real_stdout.write(json.dumps({"started": case["id"]}) + "\n")
        real_stdout.flush()
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in (case.get("files") or {}).items():
                path = Path(tmp) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            saved_env = dict(os.environ)
            os.environ.update({k: v.replace("{tmp}", tmp) for k, v in (case.get("env") or {}).items()})
            cwd = os.getcwd()
            os.chdir(tmp)
            start = time.monotonic()
            try:
                if "argv" in case:
                    code, out, err = _run_kli(
                        [a.replace("{tmp}", tmp) for a in case["argv"]], case.get("stdin", "")
                    )
                else:
                    code, out, err = _run_call(case["call"])
            except BaseException:  # the harness reports it; the parent's assertions fail on it
                code, out, err = -1, "", "CHILD-EXCEPTION\n" + traceback.format_exc()
            finally:
                os.chdir(cwd)
                os.environ.clear()
                os.environ.update(saved_env)
            elapsed = time.monotonic() - start
        rss_kib = _peak_rss_kib()
        real_stdout.write(
            json.dumps(
                {"id": case["id"], "code": code, "out": out, "err": err, "elapsed": elapsed, "rss": rss_kib}
            )
            + "\n"
        )
        real_stdout.flush()


def _peak_rss_kib() -> int:
    """This process's own peak resident memory (``VmHWM``). Not ``ru_maxrss``: Linux carries the
    peak of the address space replaced at ``execve`` into it, and a child started by ``vfork``
    (Python's subprocess) replaces its parent's, so it reads as the test runner's peak."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # no procfs: the best there is


if __name__ == "__main__":
    main()
