"""The one identity cache (karta._identity): once per object, equal objects apart, bounded, and the
weak variant forgets an object when it dies."""

from __future__ import annotations

import gc

from karta._identity import IdentityCache, WeakIdentityCache
from karta.extract import convert, factory
from karta.gang import compiled as gang_compiled
from karta.model import validity
from karta.status import extract as status_extract


class Key:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Key)

    def __hash__(self) -> int:
        return 0


def test_built_once_per_object_and_equal_objects_apart() -> None:
    calls: list[Key] = []

    def build(key: Key) -> list[Key]:
        calls.append(key)
        return [key]

    for cache in (IdentityCache(build, size=8), WeakIdentityCache(build, size=8)):
        calls.clear()
        a, b = Key(), Key()
        assert cache(a) is cache(a) and cache(a) == [a]
        assert cache(b) is not cache(a)
        assert calls == [a, b] and len(cache) == 2


def test_bounded() -> None:
    cache: IdentityCache[Key, int] = IdentityCache(lambda key: 1, size=3)
    keys = [Key() for _ in range(7)]
    for key in keys:
        cache(key)
        assert len(cache) <= 3


def test_strong_entries_keep_their_key_weak_ones_go_with_it() -> None:
    strong: IdentityCache[Key, int] = IdentityCache(lambda key: 1, size=8)
    weak: WeakIdentityCache[Key, int] = WeakIdentityCache(lambda key: 1, size=8)
    kept, gone = Key(), Key()
    strong(kept)
    weak(gone)
    del kept, gone
    gc.collect()
    assert len(strong) == 1 and len(weak) == 0


def test_the_definition_caches_are_identity_caches() -> None:
    for cache in (
        factory._plan_for,
        factory._definitions_of,
        convert._checker_for,
        convert._composed_for,
        gang_compiled._compiled,
        status_extract._compiled_status,
        validity._findings,
    ):
        assert isinstance(cache, IdentityCache)
    assert isinstance(validity._findings, WeakIdentityCache)
