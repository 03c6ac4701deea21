"""Untrusted definitions never see the evaluating process's environment (issue 9, item 2):
``$ENV`` and ``env`` are ``{}`` on the metered fast path and in the sandbox worker, which starts
with an empty environment. Trusted (built-in) definitions are left as they are."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from karta.jq import Evaluator, sandbox

CANARY = "KARTA_TEST_CANARY"
SECRET = "s3cr3t-token-value"


@pytest.fixture(autouse=True)
def canary(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(CANARY, SECRET)
    sandbox.shutdown()  # workers started from now on see the canary in the parent
    yield
    sandbox.shutdown()


# Fast path (metered) and worker (a def keeps libjq on it) forms of the same reads.
READS = [
    ("$ENV", [{}]),
    ("env", [{}]),
    (f"$ENV.{CANARY}", [None]),
    (f"env.{CANARY}", [None]),
    ("$ENV | length", [0]),
    ('[env | to_entries[] | select(.value | tostring | contains("s3cr3t"))] | length', [0]),
    ('{label: ($ENV.HOME // "none")}', [{"label": "none"}]),
]


@pytest.mark.parametrize(("expression", "expected"), READS)
def test_untrusted_reads_of_the_environment_are_empty(expression: str, expected: list[object]) -> None:
    ev = Evaluator()
    assert ev.engine_of(expression) == "fast"
    assert ev.evaluate(expression, {}) == expected
    in_worker = f"def f: .; ({expression}) | f"
    assert ev.engine_of(in_worker) == "sandbox"
    assert ev.evaluate(in_worker, {}) == expected


def test_a_bound_variable_named_env_is_still_the_users() -> None:
    assert Evaluator().evaluate(". as $ENV | $ENV.a", {"a": 1}) == [1]


def test_the_worker_starts_with_an_empty_environment() -> None:
    ev = Evaluator()
    assert ev.evaluate("def f: 1; f", None) == [1]
    proc = sandbox.shared()._proc
    assert proc is not None
    environ = Path(f"/proc/{proc.pid}/environ")
    if not environ.exists():  # pragma: no cover - not Linux
        pytest.skip("no /proc")
    entries = [e for e in environ.read_bytes().split(b"\0") if e]
    names = {e.split(b"=", 1)[0].decode() for e in entries}
    assert names <= {"LD_LIBRARY_PATH"}, names
    assert SECRET.encode() not in environ.read_bytes()
    assert not any(name in names for name in ("HOME", "PATH", CANARY))


def test_trusted_definitions_see_no_environment_either() -> None:
    # The program libjq runs makes env and $ENV {} for every definition, as gojq embedded as a
    # library does (the catalog uses neither; tests/catalog checks it), so the engines agree.
    assert os.environ[CANARY] == SECRET
    assert Evaluator(trusted=True).evaluate(f"$ENV.{CANARY}", {}) == [None]
    assert Evaluator(trusted=True).evaluate("env | length", {}) == [0]
