"""The web view's row store: every workload row of every cluster source, and a bounded change log
that live clients (server-sent events) follow.

Owns :class:`RowStore`. Sources (:class:`karta.ui.source.ClusterSource`, one per cluster) put and
remove rows; each change takes the next sequence number. A client remembers the last number it
saw and asks :meth:`RowStore.changes_since` for what changed after it: the rows changed since
(each once, as it is now) and the ids removed. The log keeps the last :data:`LOG_LENGTH` changes;
a client further behind is told to reload (None), so no per-client queue grows without bound.
Thread-safe: sources write from their watch threads, the HTTP server reads from its own.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from karta.ui.rows import RowQuery, select_rows

__all__ = ["LOG_LENGTH", "Changes", "RowStore"]

LOG_LENGTH = 20000


@dataclass(frozen=True)
class Changes:
    """What changed after a sequence number: ``upserts`` (rows as they are now), ``deletes``
    (ids), up to ``seq``."""

    seq: int
    upserts: list[Mapping[str, Any]]
    deletes: list[str]


class RowStore:
    """Rows by id, the change log, and the sources' readiness (see the module docstring)."""

    def __init__(self, *, log_length: int = LOG_LENGTH) -> None:
        self._rows: dict[str, Mapping[str, Any]] = {}
        self._log: deque[tuple[int, str]] = deque(maxlen=log_length)
        self._seq = 0
        self._changed = threading.Condition()
        self._synced: dict[str, bool] = {}
        self._warnings: dict[str, list[str]] = {}

    # -- writing (sources) ----------------------------------------------------------------------
    def put(self, row: Mapping[str, Any]) -> None:
        """Add or replace a row (by ``row["id"]``); an identical row is not a change."""
        with self._changed:
            key = str(row["id"])
            if self._rows.get(key) == row:
                return
            self._rows[key] = row
            self._bump(key)

    def remove(self, key: str) -> None:
        with self._changed:
            if self._rows.pop(key, None) is not None:
                self._bump(key)

    def replace_cluster(self, cluster: str, rows: Mapping[str, Mapping[str, Any]]) -> None:
        """The complete set of ``cluster``'s rows (after a re-list): the others are removed."""
        with self._changed:
            for key in [k for k, r in self._rows.items() if r.get("cluster") == cluster and k not in rows]:
                del self._rows[key]
                self._bump(key)
            for key, row in rows.items():
                if self._rows.get(key) != row:
                    self._rows[key] = row
                    self._bump(key)

    def retain_cluster(self, cluster: str, keep: set[str]) -> None:
        """Remove ``cluster``'s rows whose id is not in ``keep`` (those a new plan no longer sees)."""
        with self._changed:
            for key in [k for k, r in self._rows.items() if r.get("cluster") == cluster and k not in keep]:
                del self._rows[key]
                self._bump(key)

    def _bump(self, key: str) -> None:
        self._seq += 1
        self._log.append((self._seq, key))
        self._changed.notify_all()

    def set_state(self, cluster: str, *, synced: bool, warnings: list[str]) -> None:
        with self._changed:
            self._synced[cluster] = synced
            self._warnings[cluster] = list(warnings)
            self._changed.notify_all()

    # -- reading (the server) -------------------------------------------------------------------
    @property
    def seq(self) -> int:
        with self._changed:
            return self._seq

    def get(self, key: str) -> Mapping[str, Any] | None:
        with self._changed:
            return self._rows.get(key)

    def __len__(self) -> int:
        with self._changed:
            return len(self._rows)

    def select(self, query: RowQuery) -> tuple[list[Mapping[str, Any]], int, int]:
        """``(page, total, seq)`` for ``query`` (:func:`karta.ui.rows.select_rows`), at ``seq``."""
        with self._changed:
            rows = list(self._rows.values())
            seq = self._seq
        page, total = select_rows(rows, query)
        return page, total, seq

    def facets(self) -> dict[str, Any]:
        """The namespaces, kinds and statuses present, the clusters' readiness and warnings."""
        with self._changed:
            rows = list(self._rows.values())
            synced = dict(self._synced)
            warnings = {k: list(v) for k, v in self._warnings.items()}
            seq = self._seq
        return {
            "seq": seq,
            "count": len(rows),
            "namespaces": sorted({str(r.get("namespace") or "") for r in rows}),
            "kinds": sorted({str(r.get("kind") or "") for r in rows}),
            "statuses": sorted({str(s) for r in rows for s in r.get("phases") or ()}),
            "clusters": [
                {"name": name, "synced": synced[name], "warnings": warnings.get(name, [])}
                for name in sorted(synced)
            ],
        }

    def changes_since(self, seq: int, *, limit: int = 2000) -> Changes | None:
        """The changes after ``seq`` (at most ``limit`` rows; the rest come with the next call);
        None when ``seq`` is older than the log (or newer than the store): reload."""
        with self._changed:
            if seq > self._seq:
                return None
            if seq == self._seq:
                return Changes(seq, [], [])
            if not self._log or self._log[0][0] > seq + 1:
                return None
            keys: dict[str, None] = {}
            last = seq
            start = len(self._log) - (self._seq - seq)
            for index in range(start, len(self._log)):
                number, key = self._log[index]
                if key not in keys and len(keys) >= limit:
                    break
                keys[key] = None
                last = number
            upserts = [self._rows[k] for k in keys if k in self._rows]
            deletes = [k for k in keys if k not in self._rows]
            return Changes(last, upserts, deletes)

    def wait(self, seq: int, timeout: float) -> bool:
        """Block until the store is past ``seq`` (True) or ``timeout`` passed (False)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._seq > seq, timeout=timeout)
