"""Many resource types at once: paged lists in parallel, and their watches merged into one stream.

Owns :func:`list_many` and :class:`MergedWatch`, what ``kli get --all-types [-w]`` needs to list
and then follow every type a definition covers in one short-lived command (it resumes from its own
list's resourceVersions; the long-running consumers, the controller and the web view, keep their
objects in the shared cache instead: :mod:`karta.kube.cache`). Each type keeps the policies of
the single-type primitives, so there is one of each:

- lists page through :meth:`KubeClient.iter_pages`, whose 410 rule (an expired continue token
  re-lists from scratch, as one page marked ``restarted``) is passed through unchanged;
- watches are :class:`~karta.kube.watch.ListWatch` loops: resume from the last resourceVersion,
  re-list on 410 (a ``SYNC`` event with the complete state), back off and reconnect on outages.

A failure of one type is delivered in the stream, for that type, and never stops the others.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass
from typing import Any

from karta.kube.client import DEFAULT_CHUNK_SIZE, KubeClient, WatchEvent
from karta.kube.resources import ResourceType
from karta.kube.watch import ListWatch, SyncEvent

__all__ = ["MAX_PARALLEL_LISTS", "ListFailed", "ListedPage", "MergedWatch", "WatchFailed", "list_many"]

MAX_PARALLEL_LISTS = 4


@dataclass(frozen=True)
class ListedPage:
    """One page of the list of ``resources[index]``; ``restarted``: it holds that type's complete
    list again (after a 410), so whatever earlier pages of ``index`` gave must be dropped."""

    index: int
    items: list[dict[str, Any]]
    resource_version: str
    restarted: bool = False


@dataclass(frozen=True)
class ListFailed:
    """The list of ``resources[index]`` failed (``error`` is the exception raised; any pages of it
    delivered before stay valid). Every other type goes on."""

    index: int
    error: BaseException


def list_many(
    client: KubeClient,
    resources: Sequence[ResourceType],
    *,
    namespace: str | None = None,
    label_selector: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    max_parallel: int = MAX_PARALLEL_LISTS,
) -> Iterator[ListedPage | ListFailed]:
    """Pages of every type as they arrive, from up to ``max_parallel`` lists in background threads,
    so that the consumer's work overlaps the API server's. Each type's pages come in order.

    Closing the iterator early stops the lists after their current request."""
    out: queue.Queue[ListedPage | ListFailed | None] = queue.Queue(maxsize=64)
    stop = threading.Event()

    def produce(index: int) -> None:
        try:
            for page in client.iter_pages(
                resources[index], namespace=namespace, label_selector=label_selector, chunk_size=chunk_size
            ):
                if stop.is_set():
                    return
                out.put(ListedPage(index, page.items, page.resource_version, page.restarted))
        except BaseException as exc:  # delivered to the consumer, for this type only
            out.put(ListFailed(index, exc))

    pool = ThreadPoolExecutor(max_workers=max(1, min(max_parallel, len(resources))))
    try:
        futures = [pool.submit(produce, i) for i in range(len(resources))]

        def finish() -> None:
            # wait for every producer; one cancelled because the consumer stopped early (the
            # generator closed: see ``finally``) has nothing to deliver, and no one to deliver it to
            futures_wait(futures)
            out.put(None)

        threading.Thread(target=finish, daemon=True, name="karta-list-done").start()
        while True:
            entry = out.get()
            if entry is None:
                return
            yield entry
    finally:
        stop.set()
        while True:  # unblock producers waiting on a full queue
            try:
                out.get_nowait()
            except queue.Empty:
                break
        pool.shutdown(wait=False, cancel_futures=True)


@dataclass(frozen=True)
class WatchFailed:
    """The watch of ``resources[index]`` stopped for good (``error``: what ended it)."""

    index: int
    error: BaseException


class MergedWatch:
    """One :class:`ListWatch` per type, merged: ``with MergedWatch(...) as w: w.next(timeout)``.

    Each type resumes from ``resource_versions[index]`` when given (the version its list was taken
    at), else lists first (a ``SYNC`` event). :meth:`next` returns ``(index, event)``, a
    :class:`WatchFailed` for a type whose watch ended with an error it does not retry (403, …),
    or None when ``timeout`` passed without an event."""

    def __init__(
        self,
        client: KubeClient,
        resources: Sequence[ResourceType],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        resource_versions: Sequence[str] = (),
    ) -> None:
        self.resources = list(resources)
        self.watches = [
            ListWatch(
                client,
                rtype,
                namespace=namespace,
                label_selector=label_selector,
                chunk_size=chunk_size,
                resource_version=resource_versions[index] if index < len(resource_versions) else "",
            )
            for index, rtype in enumerate(self.resources)
        ]
        self._events: queue.Queue[tuple[int, SyncEvent | WatchEvent] | WatchFailed] = queue.Queue()
        self._threads: list[threading.Thread] = []

    def start(self) -> MergedWatch:
        for index, lw in enumerate(self.watches):
            thread = threading.Thread(target=self._pump, args=(index, lw), daemon=True, name="karta-watch")
            thread.start()
            self._threads.append(thread)
        return self

    def _pump(self, index: int, lw: ListWatch) -> None:
        try:
            for event in lw.events():
                self._events.put((index, event))
        except BaseException as exc:  # delivered to the consumer, for this type only
            if not lw.stopped:
                self._events.put(WatchFailed(index, exc))

    def next(self, timeout: float) -> tuple[int, SyncEvent | WatchEvent] | WatchFailed | None:
        try:
            return self._events.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None

    def stop(self) -> None:
        """Stop every watch (from any thread); their threads end after the current event."""
        for lw in self.watches:
            lw.stop()

    def __enter__(self) -> MergedWatch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
