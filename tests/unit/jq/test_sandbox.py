"""The sandbox: runaway untrusted expressions fail within their deadline; the process lives on."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator

import pytest

from karta.errors import JqCompileError, JqResultLimitError, JqRuntimeError, JqTimeoutError
from karta.jq import Evaluator, sandbox


@pytest.fixture(scope="module", autouse=True)
def _stop_worker() -> Iterator[None]:
    yield
    sandbox.shutdown()


@pytest.mark.parametrize("expression", ["def f: f; f", "def f: 1 + f; f", "last(range(1e12))", "[repeat(1)]"])
def test_runaway_expressions_fail_within_two_seconds(expression: str) -> None:
    ev = Evaluator(timeout_ms=700)
    assert ev.engine_of(expression) == "sandbox"
    started = time.monotonic()
    with pytest.raises(JqRuntimeError, match=re.escape(f"JQ execution error for expression '{expression}'")):
        ev.evaluate(expression, {})
    assert time.monotonic() - started < 2.0 + 1.0  # + one worker start-up
    assert ev.evaluate(".alive", {"alive": True}) == [True]


def test_j7_timeout() -> None:
    ev = Evaluator(timeout_ms=100)
    with pytest.raises(JqTimeoutError, match=r"JQ execution error for expression .*deadline") as info:
        ev.evaluate("reduce range(1e12) as $i (0; . + 1)", {})
    assert "100 ms" in str(info.value)


def test_worker_restarts_after_a_timeout() -> None:
    box = sandbox.shared()
    box.run("1", "null", max_results=10, timeout_ms=5000)
    killed, starts = box._proc, box.starts
    with pytest.raises(JqTimeoutError):
        box.run("def f: f; f", "null", max_results=10, timeout_ms=200)
    # The killed worker is replaced at once, so that the pool stays warm.
    assert killed is not None and killed.poll() is not None
    assert box.starts == starts + 1 and box.running
    assert box.run("[limit(3; repeat(1))]", "null", max_results=10, timeout_ms=5000) == [[1, 1, 1]]
    assert box.starts == starts + 1 and box.running


def test_worker_errors_keep_their_class() -> None:
    box = sandbox.shared()
    with pytest.raises(JqResultLimitError, match="query results exceed the allowed number 2"):
        box.run("limit(3; repeat(1))", "null", max_results=2, timeout_ms=5000)
    with pytest.raises(JqRuntimeError, match="Cannot iterate"):
        box.run("def f: .[]; f", "1", max_results=2, timeout_ms=5000)
    with pytest.raises(JqCompileError):
        box.run("nosuchfn", "1", max_results=2, timeout_ms=5000)


def test_a_dying_worker_is_a_runtime_error() -> None:
    box = sandbox.shared()
    box.run("def f: 1; f", "null", max_results=2, timeout_ms=5000)
    proc = box._proc
    assert proc is not None
    threading.Timer(0.3, proc.kill).start()
    with pytest.raises(JqRuntimeError, match="worker process died"):
        box.run("def f: f; f", "null", max_results=2, timeout_ms=10_000)
    assert box.run("def f: 2; f", "null", max_results=2, timeout_ms=5000) == [2]


def test_trusted_and_fast_expressions_never_use_the_worker() -> None:
    box = sandbox.shared()
    box.close()
    starts = box.starts
    Evaluator().evaluate(".spec.replicas // 1", {})
    Evaluator(trusted=True).evaluate("[limit(2; repeat(1))]", {})
    with pytest.raises(JqCompileError):
        Evaluator().evaluate("nosuchfn", {})
    assert box.starts == starts and not box.running
