"""The manager: probes, metrics, leader-only parts, failing parts, shutdown within its deadline."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest

from karta.controller.runtime.manager import Manager, parse_address
from karta.controller.runtime.metrics import Metrics


class Part:
    def __init__(self, name: str, body: Callable[[threading.Event], None] | None = None) -> None:
        self.name = name
        self.started = threading.Event()
        self.body = body

    def run(self, stop: threading.Event) -> None:
        self.started.set()
        if self.body is not None:
            self.body(stop)
        stop.wait()


class Elector:
    def __init__(self) -> None:
        self.lead = threading.Event()
        self.lose = threading.Event()

    def run(
        self, stop: threading.Event, on_started: Callable[[], None], on_stopped: Callable[[], None]
    ) -> None:
        self.lead.wait()
        on_started()
        while not stop.is_set() and not self.lose.is_set():
            stop.wait(0.01)
        on_stopped()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (":8080", ("0.0.0.0", 8080)),
        ("127.0.0.1:9", ("127.0.0.1", 9)),
        ("[::1]:80", ("::1", 80)),
        ("0", None),
        ("", None),
    ],
)
def test_bind_addresses(text: str, expected: tuple[str, int] | None) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["8080", "localhost", ":http"])
def test_bad_bind_addresses_name_the_expected_form(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected \[HOST\]:PORT, or 0 to disable"):
        parse_address(text)


def test_probes_and_metrics() -> None:
    metrics = Metrics()
    manager = Manager(metrics=metrics, probe_address=("127.0.0.1", 0), metrics_address=("127.0.0.1", 0))
    synced = threading.Event()
    manager.add_ready_check("caches", synced.is_set)
    manager.start()
    try:
        probes = f"http://127.0.0.1:{manager.bound_port('probes')}"
        assert get(probes + "/healthz") == (200, "ok")
        code, body = get(probes + "/readyz")
        assert code == 500 and "[-]caches failed" in body
        synced.set()
        code, body = get(probes + "/readyz")
        assert code == 200 and "[+]caches ok" in body
        assert get(probes + "/nope")[0] == 404
        metrics.workqueue_adds.labels(name="q").inc()
        code, body = get(f"http://127.0.0.1:{manager.bound_port('metrics')}/metrics")
        assert code == 200 and 'workqueue_adds_total{name="q"} 1.0' in body
    finally:
        manager.shutdown()


def test_a_check_that_raises_is_not_ready() -> None:
    manager = Manager(metrics=Metrics())

    def broken() -> bool:
        raise RuntimeError("boom")

    manager.add_ready_check("broken", broken)
    assert manager.ready() == (False, {"broken": False})


def test_leader_only_parts_start_when_leading_and_losing_the_lease_stops_the_process() -> None:
    elector = Elector()
    manager = Manager(metrics=Metrics(), elector=elector)
    always, leading = Part("always"), Part("leading")
    manager.add(always)
    manager.add(leading, leader_only=True)
    manager.start()
    assert always.started.wait(10)
    assert not leading.started.is_set()
    elector.lead.set()
    assert leading.started.wait(10) and manager.leading
    elector.lose.set()
    assert manager.stop.wait(10)
    manager.shutdown()
    assert manager.exit_code == 1


def test_a_failing_part_stops_the_manager_with_exit_code_1() -> None:
    def fail(_stop: threading.Event) -> None:
        raise RuntimeError("broken part")

    manager = Manager(metrics=Metrics())
    manager.add(Part("bad", fail))
    manager.start()
    assert manager.stop.wait(10)
    manager.shutdown()
    assert manager.exit_code == 1


def test_shutdown_abandons_a_part_that_ignores_the_stop_after_the_deadline() -> None:
    release = threading.Event()

    def stubborn(_stop: threading.Event) -> None:
        release.wait(60)

    manager = Manager(metrics=Metrics(), shutdown_timeout=0.2)
    manager.add(Part("stubborn", stubborn))
    manager.start()
    manager.shutdown()  # returns after the deadline although the part is still running
    release.set()
    assert manager.exit_code == 0
