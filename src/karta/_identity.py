"""Values worked out once per object, keyed by the object's identity (``DESIGN.md`` 1: compile once).

Definitions are immutable (:class:`karta.model.base.Model` is frozen), so what is derived from one
(its extraction plans, compiled status and gang, validation findings, a shape's checker) can be
cached by ``id``. :class:`IdentityCache` is the one such cache: bounded (cleared when full, so a
long-running process that loads definitions again and again does not grow), and safe against id
reuse: an entry either keeps its key alive (:class:`IdentityCache`) or holds a weak reference that
removes the entry when the key dies (:class:`WeakIdentityCache`, for keys not worth pinning, such
as every user definition ``kli get`` validates).
Equal but distinct objects get their own entries.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["IdentityCache", "WeakIdentityCache"]

K = TypeVar("K")
V = TypeVar("V")


class IdentityCache(Generic[K, V]):
    """``cache(key)`` is ``build(key)``, computed once per key object while it stays cached; each
    entry keeps its key alive, so its id cannot be reused meanwhile."""

    __slots__ = ("_build", "_entries", "_size")

    def __init__(self, build: Callable[[K], V], *, size: int) -> None:
        self._build = build
        self._size = size
        self._entries: dict[int, tuple[Any, V]] = {}

    def __call__(self, key: K) -> V:
        entry = self._entries.get(id(key))
        if entry is not None and entry[0] is key:
            return entry[1]
        value = self._build(key)
        self._store(key, value)
        return value

    def _store(self, key: K, value: V) -> None:
        if len(self._entries) >= self._size:
            self._entries.clear()
        self._entries[id(key)] = (key, value)

    def seed(self, key: K, value: V) -> None:
        """Store ``value`` as what ``build(key)`` would return (a value known by other means)."""
        self._store(key, value)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()


class WeakIdentityCache(IdentityCache[K, V]):
    """An :class:`IdentityCache` whose entries hold a weak reference to their key: an entry goes
    when its key dies (and before its id can be reused)."""

    __slots__ = ()

    def __call__(self, key: K) -> V:
        entry = self._entries.get(id(key))
        if entry is not None and entry[0]() is key:
            return entry[1]
        value = self._build(key)
        self._store(key, value)
        return value

    def _store(self, key: K, value: V) -> None:
        entries = self._entries
        if len(entries) >= self._size:
            entries.clear()
        number = id(key)

        def forget(ref: Any) -> None:
            entry = entries.get(number)
            if entry is not None and entry[0] is ref:
                del entries[number]

        entries[number] = (weakref.ref(key, forget), value)
