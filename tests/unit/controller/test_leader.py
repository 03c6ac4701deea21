"""karta.controller.runtime.leader: client-go's acquire/renew decision with a fake clock (pure); the
Lease on a real API server and real processes are in tests/e2e/controller/test_leader.py."""

from __future__ import annotations

import datetime as dt

import pytest

from karta.controller.runtime.leader import LeaseElector, LeaseRecord, micro_time, step

WALL = dt.datetime(2026, 12, 2, 1, 0, 0, 123456, tzinfo=dt.UTC)
STAMP = "2026-12-02T01:00:00.123456Z"


def test_micro_time_is_rfc3339_with_microseconds() -> None:
    assert micro_time(WALL) == STAMP


def test_absent_lease_is_created_for_us() -> None:
    record, _ = step(None, None, identity="a", lease_duration=15, now=0.0, wall=WALL)
    assert record == LeaseRecord("a", 15, STAMP, STAMP, 0)
    assert record.spec() == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": STAMP,
        "renewTime": STAMP,
        "leaseTransitions": 0,
    }


def test_held_lease_waits_a_full_duration_from_our_first_observation() -> None:
    other = LeaseRecord("b", 15, "t0", "t0", 3)
    record, seen = step(other, None, identity="a", lease_duration=15, now=100.0, wall=WALL)
    assert record is None and seen is not None and seen.changed_at == 100.0
    # Still unchanged 14 s later: not yet expired (by our clock, whatever its renewTime says).
    record, seen = step(other, seen, identity="a", lease_duration=15, now=114.0, wall=WALL)
    assert record is None
    # The holder renewed: the record changed, the wait starts again.
    renewed = LeaseRecord("b", 15, "t0", "t1", 3)
    record, seen = step(renewed, seen, identity="a", lease_duration=15, now=114.5, wall=WALL)
    assert record is None and seen is not None and seen.changed_at == 114.5
    # Unchanged for its leaseDurationSeconds: expired, taken over, one more transition.
    record, _ = step(renewed, seen, identity="a", lease_duration=15, now=129.5, wall=WALL)
    assert record == LeaseRecord("a", 15, STAMP, STAMP, 4)


def test_released_lease_is_taken_at_once() -> None:
    released = LeaseRecord("", 1, "t0", "t0", 2)
    record, _ = step(released, None, identity="a", lease_duration=15, now=0.0, wall=WALL)
    assert record == LeaseRecord("a", 15, STAMP, STAMP, 3)


def test_renewal_keeps_acquire_time_and_transitions() -> None:
    mine = LeaseRecord("a", 15, "t0", "t0", 5)
    record, _ = step(mine, None, identity="a", lease_duration=15, now=0.0, wall=WALL)
    assert record == LeaseRecord("a", 15, "t0", STAMP, 5)


def test_durations_must_be_ordered() -> None:
    with pytest.raises(ValueError, match="lease duration > renew deadline"):
        LeaseElector(None, name="x", namespace="ns", identity="a", lease_duration=5, renew_deadline=10)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LeaseElector(None, name="x", namespace="ns", identity="a", renew_deadline=2, retry_period=2)  # type: ignore[arg-type]
