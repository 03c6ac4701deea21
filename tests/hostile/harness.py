"""Runs hostile inputs through ``kli`` (and the library) in a child process under a memory limit,
and checks what every run must look like whatever the input (issue 9, "A hostile-input suite"):

- it ends, within its time limit, with a documented exit code (0-4), never by a signal;
- nothing on stderr but ``error:``, ``warning:``, ``note:`` and ``hint:`` lines: no traceback, no
  ``internal error``;
- the canary environment variable of the parent never appears in any output (no expression sees
  the process environment);
- the child's peak memory stays under its limit (the limit is also its ``RLIMIT_AS``).

Cases run in batches in one child (``_child.py``) for speed; a case that kills or hangs the child
is reported as such and the batch goes on in a new child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).resolve().parent / "_child.py"
CANARY_NAME = "KARTA_HOSTILE_CANARY"
CANARY = "canary-3f1b0e9c-do-not-leak"
MEMORY_LIMIT = 1536 << 20  # bytes: the child's RLIMIT_AS
RSS_LIMIT_KIB = 768 << 10  # the child's peak resident memory after any case
EXIT_CODES = (0, 1, 2, 3, 4)
LINE_PREFIXES = ("error: ", "warning: ", "note: ", "hint: ")


@dataclass
class Case:
    id: str
    argv: list[str] | None = None
    call: dict[str, Any] | None = None
    files: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    stdin: str = ""
    seconds: float = 20.0  # the case's own time limit
    codes: tuple[int, ...] = EXIT_CODES  # the exit codes this case may end with

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "files": self.files, "env": self.env, "stdin": self.stdin}
        if self.argv is not None:
            out["argv"] = self.argv
        if self.call is not None:
            out["call"] = self.call
        return out


@dataclass
class Outcome:
    case: Case
    code: int | None  # None: the child died or hung during this case
    out: str = ""
    err: str = ""
    elapsed: float = 0.0
    rss_kib: int = 0
    death: str = ""  # how the child ended when it did not finish the case

    def problems(self) -> list[str]:
        """Everything this outcome does wrong (empty: it is as every run must be)."""
        found: list[str] = []
        if self.code is None:
            found.append(f"the child {self.death}")
            return found
        if self.code not in self.case.codes:
            found.append(f"exit code {self.code} (expected one of {self.case.codes})")
        if self.elapsed > self.case.seconds:
            found.append(f"took {self.elapsed:.1f} s (limit {self.case.seconds} s)")
        if "Traceback" in self.err or "internal error" in self.err or "CHILD-EXCEPTION" in self.err:
            found.append("traceback or internal error: " + self.err[-800:])
        bad = [line for line in self.err.splitlines() if line and not line.startswith(LINE_PREFIXES)]
        if bad:
            found.append(f"stderr line not error:/warning:/note:/hint: {bad[0][:200]!r}")
        if self.rss_kib > RSS_LIMIT_KIB:
            found.append(f"peak memory {self.rss_kib >> 10} MiB (limit {RSS_LIMIT_KIB >> 10} MiB)")
        if CANARY in self.out or CANARY in self.err:
            found.append("the canary environment variable leaked into the output")
        return found


def run_cases(cases: list[Case], *, memory: int = MEMORY_LIMIT) -> list[Outcome]:
    """Every case's outcome, in order; cases after one that killed the child run in a new one."""
    outcomes: list[Outcome] = []
    pending = list(cases)
    while pending:
        done = _batch(pending, memory=memory)
        outcomes.extend(done)
        pending = pending[len(done) :]
    return outcomes


def _batch(cases: list[Case], *, memory: int) -> list[Outcome]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(REPO), *(p for p in sys.path if p)]),
        "HOME": "/nonexistent-home",
        "KUBECONFIG": "/nonexistent-kubeconfig",
        "KARTA_DEFINITIONS": "/nonexistent-definitions",
        CANARY_NAME: CANARY,
    }
    proc = subprocess.Popen(
        [sys.executable, str(CHILD)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps({"memory": memory, "cases": [c.to_json() for c in cases]}))
    proc.stdin.close()
    by_id = {c.id: c for c in cases}
    outcomes: list[Outcome] = []
    current: Case | None = None
    started = time.monotonic()
    import selectors

    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    buffer = ""
    while True:
        limit = (current.seconds if current else 30.0) + 10.0
        if not selector.select(timeout=max(0.1, limit - (time.monotonic() - started))):
            proc.kill()
            proc.wait()
            if current is not None:
                outcomes.append(Outcome(current, None, death=f"hung (killed after {limit:.0f} s)"))
            return outcomes
        chunk = proc.stdout.readline()
        if not chunk:
            code = proc.wait()
            if current is not None:
                tail = (proc.stderr.read() if proc.stderr else "")[-600:]
                outcomes.append(Outcome(current, None, death=f"died (exit status {code}): {tail}"))
            return outcomes
        buffer = chunk
        event = json.loads(buffer)
        if "started" in event:
            current = by_id[event["started"]]
            started = time.monotonic()
            continue
        assert current is not None
        outcomes.append(
            Outcome(current, event["code"], event["out"], event["err"], event["elapsed"], event["rss"])
        )
        current = None
        if len(outcomes) == len(cases):
            proc.wait()
            return outcomes


def assert_all_fine(outcomes: list[Outcome]) -> None:
    failures = [f"{o.case.id}: {'; '.join(p)}" for o in outcomes if (p := o.problems())]
    assert not failures, "\n".join(failures)
