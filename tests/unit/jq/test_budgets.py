"""Budgets of untrusted evaluation (issue 9): hand-made bombs end in one JqBudgetError within the
budget, the process lives, and the next object starts with a fresh budget.

Every bomb runs in a child process whose address space is capped at 1 GiB (``RLIMIT_AS``), so
a budget that fails to hold kills the child, never the test runner: the child evaluates the
cases one after the other and reports each outcome as a JSON line. The cases are split into
those the metered fast path runs in-process and those the sandbox worker runs (libjq).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest

from karta.errors import JqBudgetError, JqRuntimeError, JqTimeoutError
from karta.extract import ComponentFactory
from karta.jq import DEFAULT_BUDGET, Budget, Evaluator, sandbox
from karta.jq.budget import Meter
from karta.model.types import Karta

TIME_MS = 1000
SLACK_S = 1.5  # a loaded machine; the deadline itself is checked every few hundred microseconds

FAN_OUT = " | ".join(f".a[] as ${v}" for v in "xyzwvu")  # 10**6 outputs
DOUBLE = "[.,.] | " * 40  # a tree of 2**40 leaves in 40 lists: shared subtrees
DATA = {"a": list(range(10)), "s": 'ab"c\\', "n": None}


def _chain(step: str, times: int, tail: str = "") -> str:
    return " | ".join([step] * times) + tail


def _defs(depth: int) -> str:
    """``def f1: f0|f0; ...``: 2**depth calls of ``f0``."""
    return (
        "def f0: .; "
        + " ".join(f"def f{i}: f{i - 1} | f{i - 1};" for i in range(1, depth + 1))
        + f" f{depth}"
    )


# (expression, the budgets it may breach). In-process: the metered fast path takes them.
IN_PROCESS: list[tuple[str, set[str]]] = [
    (" | ".join(f".a[] as ${v}" for v in "bcdefghij") + " | [$b, $j]", {"steps", "time"}),  # 10**9
    (".a | " + _chain(". + .", 40), {"output", "memory"}),
    (".s | " + _chain(". + .", 40), {"output", "memory"}),
    (".a | " + _chain("[.[], .[]]", 40), {"output", "memory", "steps"}),
    (_chain("tojson", 40), {"output", "memory"}),
    (DOUBLE + "tojson", {"output"}),
    (DOUBLE + '"\\(.)"', {"output"}),
    (DOUBLE + ". == .", {"output"}),
    (DOUBLE + "sort", {"output"}),
    (DOUBLE + "flatten | length", {"output"}),
    (DOUBLE + "contains(.)", {"output"}),
    (DOUBLE + ". - .", {"output"}),
    (DOUBLE + "error", {"output"}),
    (DOUBLE + ".", {"output"}),  # the result itself: the caller would render it
    (_chain("{a: ., b: .}", 40, " | . * ."), {"output"}),
    ('"x" * 1e9', {"output"}),
    ('[.a[], .a[], .a[], .a[] | "x" * 9000000] | length', {"memory"}),
    (
        # 10**7 results: more steps than the budget has, however fast the machine (10**6 could
        # finish just under the one-second deadline on a fast one, and pass)
        "[limit(1e9; .a[] as $x | .a[] as $y | .a[] as $z | .a[] as $w | .a[] as $v | .a[] as $u"
        " | .a[] as $t | 1)]",
        {"steps", "time"},
    ),
    (
        ". as $x | [$x, $x] | [.[], .[]] | " + _chain("[.[], .[]] | map([.])", 30),
        {"output", "memory", "steps", "time"},
    ),
]

# The sandbox worker takes them (libjq; def and the generators are outside the fast path).
IN_WORKER: list[tuple[str, set[str]]] = [
    ("def f: f; f", {"time"}),
    (_defs(40), {"time"}),
    ("[limit(1e9; repeat(1))]", {"time", "memory"}),
    ("[range(1e12)]", {"time", "memory"}),
    ("last(range(1e12))", {"time"}),
    ("until(false; .)", {"time"}),
    ("null | setpath([100000000]; 1)", {"memory"}),
    ('def f: .; "x" * 1e9 | f | length', {"memory", "output"}),
    ('def f: .; "x" * 2e7 | f', {"output", "memory"}),  # libjq has no length cap: the reply is too large
    ("def f: .; " + DOUBLE + "f | tojson | length", {"memory", "time"}),
    ("reduce range(1e9) as $i ([]; . + [$i])", {"time", "memory"}),
]

_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from karta.errors import JqBudgetError, KartaError
    from karta.jq import Budget, Evaluator

    cases, data, time_ms = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
    ev = Evaluator(budget=Budget(time_ms=time_ms))
    ev.evaluate("def f: .; f", None)  # a warm worker: its start-up is not what is measured
    for expression in cases:
        started = time.monotonic()
        try:
            with ev.session(data):
                ev.evaluate(expression, data)
            outcome = {"kind": "ok"}
        except JqBudgetError as exc:
            outcome = {"kind": "budget", "budget": exc.budget, "message": str(exc)}
        except KartaError as exc:
            outcome = {"kind": type(exc).__name__, "message": str(exc)}
        outcome["seconds"] = time.monotonic() - started
        with ev.session({"alive": True}) as fresh:  # the next object: a fresh budget
            fast, worker = fresh.evaluate(".alive", {"alive": True}), fresh.evaluate("def f: .a; f", {"a": 1})
            outcome["next"] = fast + worker
        print(json.dumps(outcome), flush=True)
    """
)


def _run_child(cases: list[tuple[str, set[str]]]) -> list[dict[str, Any]]:
    expressions = [e for e, _ in cases]
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(expressions), json.dumps(DATA), str(TIME_MS)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    outcomes = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if len(outcomes) < len(cases):
        failed = expressions[len(outcomes)]
        pytest.fail(f"the child died (exit {proc.returncode}) on {failed!r}:\n{proc.stderr[-2000:]}")
    return outcomes


@pytest.fixture(scope="module")
def in_process() -> list[dict[str, Any]]:
    return _run_child(IN_PROCESS)


@pytest.fixture(scope="module")
def in_worker() -> list[dict[str, Any]]:
    return _run_child(IN_WORKER)


def _check(expression: str, allowed: set[str], outcome: dict[str, Any]) -> None:
    assert outcome["kind"] == "budget", (expression, outcome)
    assert outcome["budget"] in allowed, (expression, outcome)
    assert outcome["message"].startswith(f"JQ execution error for expression '{expression}': ")
    assert "budget exceeded" in outcome["message"] or "deadline exceeded" in outcome["message"]
    assert outcome["seconds"] < TIME_MS / 1000 + SLACK_S, (expression, outcome)
    assert outcome["next"] == [True, 1]


@pytest.mark.parametrize(("index", "case"), list(enumerate(IN_PROCESS)), ids=[e[:60] for e, _ in IN_PROCESS])
def test_in_process_bombs_breach_a_budget(in_process: list[dict[str, Any]], index: int, case: Any) -> None:
    expression, allowed = case
    assert Evaluator().engine_of(expression) == "fast"
    _check(expression, allowed, in_process[index])


@pytest.mark.parametrize(("index", "case"), list(enumerate(IN_WORKER)), ids=[e[:60] for e, _ in IN_WORKER])
def test_worker_bombs_breach_a_budget(in_worker: list[dict[str, Any]], index: int, case: Any) -> None:
    expression, allowed = case
    assert Evaluator().engine_of(expression) == "sandbox"
    _check(expression, allowed, in_worker[index])


# --- the budget record and the per-object budget ------------------------------------------------


def test_budget_defaults_and_validation() -> None:
    assert Budget() == DEFAULT_BUDGET
    assert (Budget().time_ms, Budget().memory_bytes, Budget().output_bytes, Budget().steps) == (
        2000,
        256 << 20,
        16 << 20,
        10_000_000,
    )
    assert Evaluator().budget == DEFAULT_BUDGET
    with pytest.raises(ValueError, match="time_ms"):
        Budget(time_ms=0)
    with pytest.raises(ValueError, match="steps"):
        Budget(steps=-1)


SLOW = (
    "[limit(1e9; .a[] as $x | .a[] as $y | .a[] as $z | .a[] as $w | .a[] as $v | .a[] as $u | 1)] | length"
)


def test_one_budget_for_all_expressions_of_an_object() -> None:
    ev = Evaluator(budget=Budget(time_ms=300))
    started = time.monotonic()
    errors = []
    with ev.session(DATA):
        for _ in range(4):
            with pytest.raises(JqBudgetError) as info:
                ev.evaluate(SLOW, DATA)
            errors.append(info.value)
        # Once a budget is spent, every expression of the object fails at once, cheap ones too.
        with pytest.raises(JqTimeoutError, match="time budget of 300 ms per object"):
            ev.evaluate(".a[0]", DATA)
    assert time.monotonic() - started < 0.3 + SLACK_S
    assert {e.budget for e in errors} == {"time"}
    with ev.session(DATA):  # the next object: a fresh budget
        assert ev.evaluate(".a[0]", DATA) == [0]


def test_outside_a_session_each_evaluation_has_its_own_budget() -> None:
    ev = Evaluator(budget=Budget(time_ms=200))
    for _ in range(2):
        with pytest.raises(JqTimeoutError):
            ev.evaluate(SLOW, DATA)
        assert ev.evaluate(".a[1]", DATA) == [1]


def test_steps_are_deterministic() -> None:
    ev = Evaluator(budget=Budget(steps=5000))
    with pytest.raises(JqBudgetError, match=r"steps budget exceeded \(5000 per object\)") as info:
        ev.evaluate(".a[] as $x | .a[] as $y | .a[] as $z | [$x, $y, $z]", DATA)
    assert info.value.budget == "steps" and type(info.value) is JqBudgetError
    assert ev.evaluate(".a[] as $x | .a[] as $y | [$x, $y] | length", DATA) == [2] * 100


def test_the_per_evaluation_timeout_still_caps_one_expression() -> None:
    ev = Evaluator(timeout_ms=100, budget=Budget(time_ms=5000))
    with pytest.raises(JqTimeoutError, match="evaluation took longer than 100 ms"):
        ev.evaluate(SLOW, DATA)


def test_budgets_are_per_thread() -> None:
    ev = Evaluator(budget=Budget(time_ms=400))
    results: dict[str, Any] = {}

    def slow() -> None:
        with ev.session(DATA):
            try:
                ev.evaluate(SLOW, DATA)
            except JqBudgetError as exc:
                results["slow"] = exc.budget

    def quick() -> None:
        other = {"a": [7]}
        with ev.session(other):
            time.sleep(0.2)
            results["quick"] = [ev.evaluate(".a[0]", other) for _ in range(100)][-1]

    threads = [threading.Thread(target=slow), threading.Thread(target=quick)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert results == {"slow": "time", "quick": [7]}


def test_sessions_nest_and_share_the_budget_of_the_same_object() -> None:
    ev = Evaluator()
    pod = {"metadata": {"name": "p"}}
    with ev.session(DATA):
        outer = ev.open_session(DATA)
        inner = ev.open_session(pod)
        assert outer is ev.open_session(DATA)  # one budget per object, however many layers open one
        assert inner is not outer
        with inner:
            assert ev.evaluate(".metadata.name", pod) == ["p"]
            assert ev.open_session(pod) is inner
        assert ev.evaluate(".a[2]", DATA) == [2]


def test_the_metered_fast_path_gives_the_unmetered_results() -> None:
    cases = [
        (".a | map(. * 2) | add", DATA),
        ('[.a[] | tostring] | join(",")', DATA),
        ("to_entries | map(.key) | sort", DATA),
        (".a as [$x, $y] | {x: $x, y: $y, s: .s}", DATA),
        ("[paths] | length", DATA),  # outside the fast path: the worker
        ('.s | ascii_upcase | ltrimstr("A") | . + "!" | @base64', DATA),
        ("reduce .a[] as $x (0; . + $x)", DATA),
        ("[foreach .a[] as $x (0; . + $x)] | last", DATA),
    ]
    trusted, untrusted = Evaluator(trusted=True), Evaluator()
    for expression, data in cases:
        assert untrusted.evaluate(expression, data) == trusted.evaluate(expression, data), expression


def test_write_back_cannot_pad_an_array_past_the_output_budget() -> None:
    ev = Evaluator(budget=Budget(output_bytes=1 << 20))
    with pytest.raises(JqBudgetError, match="writing array index 100000000") as info:
        ev.assign("getpath([100000000])", None, 1)
    assert info.value.budget == "output"
    assert ev.assign("getpath([2])", None, 1) == [None, None, 1]
    assert Evaluator(trusted=True).assign(".[3]", None, 1) == [None, None, None, 1]


# --- the worker's limits ----------------------------------------------------------------------------


def test_the_worker_reply_is_capped_by_the_output_budget() -> None:
    ev = Evaluator(budget=Budget(output_bytes=1000))
    with pytest.raises(JqBudgetError, match="output budget exceeded") as info:
        ev.evaluate("def f: .; [range(1000)] | f", None)
    assert info.value.budget == "output"
    assert ev.evaluate("def f: .; [range(10)] | f", None) == [list(range(10))]


def test_the_worker_memory_follows_the_budget() -> None:
    ev = Evaluator(budget=Budget(memory_bytes=64 << 20, time_ms=10_000))
    with pytest.raises(JqBudgetError, match="memory budget exceeded") as info:
        ev.evaluate("def f: .; [range(1e8)] | f | length", None)
    assert info.value.budget == "memory"
    assert Evaluator(budget=Budget(time_ms=10_000)).evaluate("def f: .; [range(1e6)] | f | length", None) == [
        1_000_000
    ]


def test_the_pool_serves_threads_in_parallel() -> None:
    box = sandbox.shared()
    for _ in range(2):  # two warm workers
        threading.Thread(target=lambda: box.run("1", "null", max_results=1, timeout_ms=30_000)).start()
    ev = Evaluator(budget=Budget(time_ms=600))
    ev.evaluate("def f: 1; f", None)
    seconds: list[float] = []

    def slow() -> None:
        started = time.monotonic()
        with pytest.raises(JqTimeoutError):
            ev.evaluate("def f: f; f", None)
        seconds.append(time.monotonic() - started)

    threads = [threading.Thread(target=slow) for _ in range(3)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(seconds) == 3
    # Not one after the other (3 x 0.6 s): at least two ran at once.
    assert time.monotonic() - started < 3 * 0.6 + 0.2 or max(seconds) < 0.6 + SLACK_S


def test_a_budget_error_is_a_runtime_error() -> None:
    assert issubclass(JqBudgetError, JqRuntimeError)
    meter = Meter(Budget(steps=10))
    meter.charge(5)
    assert meter.steps == 5


# --- status: several slow matchers share the object's time ------------------------------------------


def _karta(matchers: int) -> Karta:
    root = {
        "name": "thing",
        "kind": {"group": "example.dev", "version": "v1", "kind": "Thing"},
        "statusDefinition": {
            "statusMappings": {
                key: [{"byExpression": {"expression": "until(false; .)", "expectedResult": "true"}}]
                for key in ("failed", "completed", "suspended", "degraded")[:matchers]
            }
            | {"running": [{"byExpression": {"expression": ".status.ok", "expectedResult": "true"}}]}
        },
    }
    return Karta.model_validate(
        {"metadata": {"name": "slow"}, "spec": {"structureDefinition": {"rootComponent": root}}}
    )


def _thing(ok: bool) -> dict[str, Any]:
    return {"apiVersion": "example.dev/v1", "kind": "Thing", "metadata": {"name": "t"}, "status": {"ok": ok}}


def test_four_slow_matchers_cost_one_object_budget() -> None:
    karta = _karta(4)
    ev = Evaluator(budget=Budget(time_ms=500))
    started = time.monotonic()
    # The budget is the object's: its breach ends the object's status extraction (R3 contains
    # every other error in its matcher, not this one).
    with pytest.raises(JqBudgetError, match="time budget of 500 ms per object"):
        ComponentFactory(karta, _thing(True), evaluator=ev).root().status()
    assert time.monotonic() - started < 0.5 + SLACK_S + 0.5  # + a worker start
    # The next object: a fresh budget.
    fresh = ComponentFactory(_karta(0), _thing(True), evaluator=ev).root().status()
    assert fresh is not None and [s.value for s in fresh.matched] == ["Running"]


def test_libjq_never_compiles_an_untrusted_expression_in_process() -> None:
    # libjq folds constants while it compiles: "x" * 1e9 would allocate a gigabyte right there. The
    # parent's jq.compile is wrapped to record every call: there must be none (measuring the
    # parent's peak RSS instead is not reliable: some kernels charge a spawned child's to it).
    code = textwrap.dedent(
        """
        import jq
        compiled = []
        real = jq.compile
        def recording(program, *args, **kwargs):
            compiled.append(program)
            return real(program, *args, **kwargs)
        jq.compile = recording
        from karta.errors import JqBudgetError
        from karta.jq import Evaluator
        expression = 'def f: .; "x" * 1e9 | f'
        ev = Evaluator()
        assert ev.engine_of(expression) == "sandbox"
        try:
            ev.evaluate(expression, None)
        except JqBudgetError as exc:
            print(exc.budget, len(compiled))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    budget, compiled = proc.stdout.split()
    assert budget in ("memory", "time")  # the worker's limits, whichever it reaches first under load
    assert compiled == "0", proc.stdout  # the parent compiled nothing
