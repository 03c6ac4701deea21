"""A progress line on stderr for listings that take a while: only on a terminal, only after 2 s."""

from __future__ import annotations

import sys
import threading
from typing import IO

from karta.cli.text import printable

__all__ = ["Progress"]


class Progress:
    """``with Progress("listing jobs") as p: ... p.add(n)``: after ``delay`` seconds (2 s) a line
    ``listing jobs... N objects`` appears on stderr and is refreshed until the block ends, then
    erased. Nothing at all unless the stream is a terminal (or ``enabled`` forces it)."""

    def __init__(
        self,
        label: str,
        *,
        stream: IO[str] | None = None,
        delay: float = 2.0,
        interval: float = 0.25,
        enabled: bool | None = None,
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.interval = interval
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.count = 0
        self.shown = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def add(self, n: int = 1) -> None:
        self.count += n

    def set_label(self, label: str) -> None:
        self.label = label

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="kli-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self.shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()

    def _run(self) -> None:
        if self._done.wait(self.delay):
            return
        while True:
            with self._lock:
                if self._done.is_set():
                    return
                self.shown = True
                self.stream.write(f"\r\x1b[K{printable(self.label)}... {self.count} objects")
                self.stream.flush()
            if self._done.wait(self.interval):
                return
