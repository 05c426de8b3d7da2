"""The one bounded least-recently-used cache every layer uses.

Iceberg's files are immutable once committed (manifests, manifest lists, metadata files,
data and delete files), so several layers keep what they decoded from one, keyed by its
path: the planner its parsed manifests (:mod:`iceduck.scan.manifest_cache`), the catalogs
their parsed metadata files (:mod:`iceduck.catalog.metadata_files`), the engine the file
layouts and deleted positions it read (:mod:`iceduck.engine.layout`,
:mod:`iceduck.engine.deletes`), the session its parsed statements. They differ only in
what they hold and what an entry costs, so they share this one structure.

It lives at the top of the package, beside :mod:`iceduck.errors` and in the same lowest
layer of the import contracts, because it belongs to no layer: it does no I/O and imports
nothing of iceduck, so ``catalog/``, ``scan/``, ``engine/`` and the session may all import
it without bending the layer order. It is not in ``spec/``, which models the Iceberg spec
and nothing else.

The bound is a *weight*: each entry states its own (1 by default, so the bound is then an
entry count; the manifest cache weighs a manifest by its entries, the position cache a
decoded delete by its positions). Past the bound the least recently used entries go, but
never the newest one: a single entry heavier than the whole bound is still kept until the
next one arrives, since dropping it at once would decode it again on every use.

Every operation takes a lock: one session is used from several cursors, threads and
planning pools at once, and an uncontended lock costs less than a dict lookup's
surroundings. Decoding happens outside it (a caller gets, decodes on a miss, then puts), so
two threads missing the same key may both decode it; the second put replaces the first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
D = TypeVar("D")


class LRUCache(Generic[K, V]):
    """A thread-safe LRU map bounded by the total weight of its entries.

    ``hits`` and ``misses`` count :meth:`get` and :meth:`get_many` lookups, for callers
    that report them (tests assert "parsed once" with them).
    """

    def __init__(self, max_weight: int) -> None:
        self.max_weight = max_weight
        self.hits = 0
        self.misses = 0
        self._weight = 0
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, default: D | None = None) -> V | D | None:
        """The value under ``key`` (now the most recently used), else ``default``."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return default
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[0]

    def get_many(self, keys: Iterable[K]) -> dict[K, V]:
        """The cached values of ``keys`` (under one lock), by key; missing keys are left out."""
        found: dict[K, V] = {}
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is None:
                    self.misses += 1
                    continue
                self._entries.move_to_end(key)
                self.hits += 1
                found[key] = entry[0]
        return found

    def put(self, key: K, value: V, weight: int = 1) -> None:
        """Store ``value`` as the most recently used entry, evicting beyond the bound.

        ``weight`` is what the entry counts against ``max_weight`` (at least 1)."""
        with self._lock:
            self._store(key, value, weight)

    def put_many(self, items: Iterable[tuple[K, V]]) -> None:
        """Store several entries of weight 1 under one lock, in order."""
        with self._lock:
            for key, value in items:
                self._store(key, value, 1)

    def _store(self, key: K, value: V, weight: int) -> None:
        weight = max(weight, 1)
        old = self._entries.pop(key, None)
        if old is not None:
            self._weight -= old[1]
        self._entries[key] = (value, weight)
        self._weight += weight
        while self._weight > self.max_weight and len(self._entries) > 1:
            _, (_, evicted) = self._entries.popitem(last=False)
            self._weight -= evicted

    def discard(self, key: K) -> None:
        """Drop the entry under ``key``, if any."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._weight -= old[1]

    def count_missing(self, keys: Iterable[K]) -> int:
        """How many of ``keys`` are not cached (recency and counts unchanged)."""
        with self._lock:
            return sum(1 for key in keys if key not in self._entries)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weight = 0

    @property
    def weight(self) -> int:
        """The total weight of the entries held."""
        return self._weight

    def __len__(self) -> int:
        return len(self._entries)
