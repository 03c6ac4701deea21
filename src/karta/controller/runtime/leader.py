"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

:class:`LeaseElector` implements the manager's :class:`~karta.controller.runtime.manager.Elector`:

* **acquire**: every ``retry_period`` (with jitter), read the Lease; take it when it is absent
  (create), released (empty ``holderIdentity``) or expired. Expiry is judged as client-go does, on
  this process's clock: a record is expired when it has not *changed* for its
  ``leaseDurationSeconds`` since we first saw it, never by comparing the holder's ``renewTime``
  with our clock (clocks differ between nodes);
* every write is an update with the read ``resourceVersion`` (optimistic concurrency): a 409
  Conflict means another candidate wrote first, so this round is lost;
* **renew**: while leading, every ``retry_period``; when no renewal has succeeded for
  ``renew_deadline`` seconds, leadership is given up (``on_stopped``; the manager then exits 1 so
  that a stale leader never races the next one). ``renew_deadline`` is below ``lease_duration``,
  so we stop before anybody else may take over. A renewal that hangs counts as failed once the
  deadline passes (client-go's context timeout): each runs on its own thread, watched, and every
  request of the elector has a timeout (``renew_deadline`` when the kubeconfig sets none);
* **release** (client-go's ``ReleaseOnCancel``): when ``stop`` is set while leading, the Lease is
  written with an empty ``holderIdentity`` and ``leaseDurationSeconds: 1``, so the next candidate
  takes over at its next retry instead of waiting for the lease to expire.

:func:`step` is the pure decision (tested with a fake clock); :class:`LeaseElector` does the I/O.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from karta.controller.runtime.logs import logger
from karta.errors import ApiError, ClusterError
from karta.kube.client import KubeClient
from karta.rbac import rule

__all__ = ["LeaseElector", "LeaseRecord", "Observation", "lease_rules", "micro_time", "step"]

_LOG = logger("leader")


def micro_time(when: dt.datetime) -> str:
    """A ``metav1.MicroTime``: RFC 3339 with microseconds, UTC."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaseRecord:
    """The fields of a Lease's spec that leader election reads and writes."""

    holder: str = ""
    duration: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    transitions: int = 0

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> LeaseRecord:
        spec = lease.get("spec") or {}
        return cls(
            holder=str(spec.get("holderIdentity") or ""),
            duration=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            transitions=int(spec.get("leaseTransitions") or 0),
        )

    def spec(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": self.duration,
            "leaseTransitions": self.transitions,
        }
        if self.acquire_time:
            out["acquireTime"] = self.acquire_time
        if self.renew_time:
            out["renewTime"] = self.renew_time
        return out


@dataclass(frozen=True)
class Observation:
    """The last record we saw and when it last changed (our monotonic clock)."""

    record: LeaseRecord
    changed_at: float


def step(
    current: LeaseRecord | None,
    observed: Observation | None,
    *,
    identity: str,
    lease_duration: float,
    now: float,
    wall: dt.datetime,
) -> tuple[LeaseRecord | None, Observation | None]:
    """client-go's ``tryAcquireOrRenew`` decision: the record to write (None: the lease is held by
    another, do not write) and the new observation. ``current`` None means there is no Lease."""
    stamp = micro_time(wall)
    duration = max(1, round(lease_duration))
    if current is None:
        record = LeaseRecord(identity, duration, stamp, stamp, 0)
        return record, observed
    if observed is None or observed.record != current:
        observed = Observation(current, now)
    held_by_other = current.holder not in ("", identity)
    if held_by_other and observed.changed_at + current.duration > now:
        return None, observed
    if current.holder == identity:
        record = LeaseRecord(identity, duration, current.acquire_time or stamp, stamp, current.transitions)
    else:
        record = LeaseRecord(identity, duration, stamp, stamp, current.transitions + 1)
    return record, observed


class LeaseElector:
    """Leader election for one process (see the module docstring)."""

    def __init__(
        self,
        client: KubeClient,
        *,
        name: str,
        namespace: str,
        identity: str,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], dt.datetime] | None = None,
    ) -> None:
        if not lease_duration > renew_deadline > retry_period * 1.2:
            raise ValueError(
                "leader election needs lease duration > renew deadline > 1.2 x retry period "
                f"(got {lease_duration}, {renew_deadline}, {retry_period})"
            )
        if client.config.timeout is None:
            # Our own connection with a bound: a hung request must never keep a stale leader.
            client = KubeClient(dataclasses.replace(client.config, timeout=renew_deadline))
        self.client = client
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.monotonic = monotonic
        self.wall = wall or (lambda: dt.datetime.now(dt.UTC))
        self.leading = threading.Event()
        self._observed: Observation | None = None
        self._lease: dict[str, Any] | None = None  # the last Lease we read or wrote

    @property
    def _path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    def _get(self) -> dict[str, Any] | None:
        try:
            return dict(self.client.request_json("GET", self._path))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def try_acquire_or_renew(self) -> bool:
        """One round: True when this process holds the lease afterwards."""
        lease = self._get()
        current = LeaseRecord.from_lease(lease) if lease is not None else None
        record, self._observed = step(
            current,
            self._observed,
            identity=self.identity,
            lease_duration=self.lease_duration,
            now=self.monotonic(),
            wall=self.wall(),
        )
        if record is None:
            return False
        try:
            if lease is None:
                body = {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": record.spec(),
                }
                written = self.client.request_json(
                    "POST", f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases", body=body
                )
            else:
                body = {**lease, "spec": {**(lease.get("spec") or {}), **record.spec()}}
                written = self.client.request_json("PUT", self._path, body=body)
        except ApiError as exc:
            if exc.status == 409:  # AlreadyExists or Conflict: another candidate wrote first
                return False
            raise
        self._lease = dict(written)
        self._observed = Observation(record, self.monotonic())
        return True

    def release(self) -> bool:
        """Give the lease up (only if we still hold it): empty holder, 1 s duration."""
        lease = self._get()
        if lease is None or LeaseRecord.from_lease(lease).holder != self.identity:
            return False
        old = LeaseRecord.from_lease(lease)
        stamp = micro_time(self.wall())
        record = LeaseRecord("", 1, stamp, stamp, old.transitions)
        spec = {k: v for k, v in (lease.get("spec") or {}).items() if k != "holderIdentity"}
        body = {**lease, "spec": {**spec, **record.spec()}}
        self.client.request_json("PUT", self._path, body=body)
        return True

    def _jittered(self) -> float:
        return self.retry_period * (1.0 + random.random() * 0.2)

    def _attempt(self) -> bool:
        try:
            return self.try_acquire_or_renew()
        except ClusterError as exc:
            _LOG.warning("leader election: cannot reach the lease", extra={"error": str(exc)})
            return False

    def _attempt_within(self, budget: float) -> bool:
        """One renewal, False when it failed or did not answer within ``budget`` seconds (the
        thread of a hung request is left to its request timeout)."""
        outcome: list[bool] = []
        done = threading.Event()

        def body() -> None:
            try:
                outcome.append(self._attempt())
            finally:
                done.set()

        threading.Thread(target=body, name="leader-election-renew", daemon=True).start()
        return done.wait(max(0.0, budget)) and bool(outcome and outcome[0])

    def run(
        self, stop: threading.Event, on_started: Callable[[], None], on_stopped: Callable[[], None]
    ) -> None:
        lease = f"{self.namespace}/{self.name}"
        _LOG.info("attempting to acquire the leader lease", extra={"lease": lease, "identity": self.identity})
        while not self._attempt():
            if stop.wait(self._jittered()):
                on_stopped()
                return
        _LOG.info("acquired the leader lease", extra={"lease": lease, "identity": self.identity})
        self.leading.set()
        last_renew = self.monotonic()
        try:
            on_started()
            while not stop.wait(self.retry_period):
                if self._attempt_within(last_renew + self.renew_deadline - self.monotonic()):
                    last_renew = self.monotonic()
                elif self.monotonic() - last_renew >= self.renew_deadline:
                    _LOG.error("failed to renew the leader lease in time", extra={"lease": lease})
                    self.leading.clear()
                    return
        finally:
            if self.leading.is_set():
                self.leading.clear()
                try:
                    if self.release():
                        _LOG.info("released the leader lease", extra={"lease": lease})
                except ClusterError as exc:
                    _LOG.warning("cannot release the leader lease", extra={"error": str(exc)})
            on_stopped()


def lease_rules(name: str) -> list[dict[str, Any]]:
    """The RBAC rules (in the Lease's namespace) of :class:`LeaseElector` for the Lease ``name``:
    create it, then get and update it by name."""
    return [
        rule("coordination.k8s.io", ["leases"], ["create"]),
        rule("coordination.k8s.io", ["leases"], ["get", "update"], [name]),
    ]
