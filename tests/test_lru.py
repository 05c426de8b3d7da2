"""The one LRU cache: bounded by weight, least recently used dropped first, newest kept."""

from __future__ import annotations

import threading

from iceduck.lru import LRUCache


def test_bounded_by_count_least_recently_used_goes_first() -> None:
    cache: LRUCache[str, int] = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3
    assert (len(cache), cache.weight) == (2, 2)


def test_bounded_by_weight_and_the_newest_entry_is_kept() -> None:
    cache: LRUCache[str, str] = LRUCache(10)
    cache.put("a", "small", 4)
    cache.put("b", "small", 4)
    cache.put("c", "medium", 5)  # 13 > 10: "a" goes
    assert "a" not in cache and cache.weight == 9
    cache.put("huge", "x", 50)  # heavier than the bound: kept alone until the next one
    assert list(cache.get_many(["a", "b", "c", "huge"])) == ["huge"] and cache.weight == 50
    cache.put("b", "again", 0)  # weights count at least 1
    assert "huge" not in cache and cache.weight == 1


def test_replacing_a_key_replaces_its_weight() -> None:
    cache: LRUCache[str, int] = LRUCache(100)
    cache.put("a", 1, 60)
    cache.put("a", 2, 30)
    assert (cache.get("a"), cache.weight, len(cache)) == (2, 30, 1)


def test_none_values_are_cached_and_told_from_misses_by_a_default() -> None:
    cache: LRUCache[str, int | None] = LRUCache(4)
    missing = object()
    assert cache.get("q", missing) is missing
    cache.put("q", None)
    assert cache.get("q", missing) is None
    assert (cache.hits, cache.misses) == (1, 1)


def test_bulk_operations_and_counts() -> None:
    cache: LRUCache[int, str] = LRUCache(3)
    cache.put_many([(1, "a"), (2, "b"), (3, "c"), (4, "d")])
    assert cache.count_missing([1, 2, 3, 4, 5]) == 2
    assert cache.get_many([4, 1, 2]) == {4: "d", 2: "b"}
    assert (cache.hits, cache.misses) == (2, 1)
    cache.clear()
    assert (len(cache), cache.weight) == (0, 0)


def test_shared_between_threads() -> None:
    cache: LRUCache[int, int] = LRUCache(50)

    def work(offset: int) -> None:
        for i in range(2_000):
            cache.put((i + offset) % 80, i, 1 + i % 3)
            cache.get(i % 80)

    threads = [threading.Thread(target=work, args=(n * 7,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 0 < cache.weight <= 50 and len(cache) <= 50  # the bound held through the race


def test_discard_drops_an_entry_and_its_weight() -> None:
    cache: LRUCache[str, str] = LRUCache(10)
    cache.put("a", "x", 4)
    cache.put("b", "y", 3)
    cache.discard("a")
    cache.discard("missing")
    assert ("a" in cache, "b" in cache, cache.weight) == (False, True, 3)
