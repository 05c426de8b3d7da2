"""Parse each manifest and manifest list once per connection.

Manifests and manifest lists are immutable ("a manifest can be written once and reused";
a committed file is never rewritten in place), so a connection keeps what it parsed,
keyed by path, and planning the same table again costs no Avro decoding. Decoding is the
dominant cost of cold planning (fastavro builds a dict per entry and per metric pair),
so the cache also keeps what planning derives from an entry: the base
:class:`~iceduck.scan.tasks.FileScanTask` of every live data file (no deletes, residual
``true``), and the :class:`~iceduck.scan.tasks.DeleteFile` of every live delete file.

One manifest path can be read with different inherited values: when a v2 table is
upgraded to v3, a manifest without ``first_row_id`` gets one in the next manifest list
("Any null (unassigned) ``first_row_id`` must be assigned via inheritance"). The key is
therefore the path *and* the manifest-list values inheritance uses (sequence number,
adding snapshot, first row id).

A manifest list is kept as a :class:`~iceduck.scan.manifest_index.ManifestListIndex`:
its rows plus the interval indexes that let a point query test only the rows whose
partition summaries can overlap it.

The cache is an :class:`~iceduck.lru.LRUCache` bounded by the number of entries (manifest
entries plus manifest-list rows) it holds, not by files, because a manifest's cost is its entry count
(:data:`DEFAULT_MAX_ENTRIES`; ``iceduck.connect(..., manifest_cache_entries=N)``). Cached
objects are shared by every plan: callers must treat them as read-only.

The same cache keeps whole scan plans (:mod:`iceduck.scan.plan_cache`): a plan is a pure
function of immutable inputs (a snapshot's manifests, the schema and specs it reads with,
the filter), so a statement that reads an unchanged table again gets the plan it got
before, weighed by its tasks against the same bound. One bound, one LRU, for everything
planning derives from immutable files.

Cold reads of many manifests can use threads (``workers``), but do not by default: on
local files the time goes to decoding (fastavro and building the model), which holds the
GIL, and measured on 2 cores a pool of 2 or 4 threads planned a cold full scan of 250 or
2,500 manifests no faster than one thread (medians within noise).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from iceduck.errors import CorruptDataError
from iceduck.formats.manifest_list import read_manifest_list
from iceduck.formats.manifests import ManifestMeta, read_manifest
from iceduck.io import fileio
from iceduck.lru import LRUCache
from iceduck.scan.manifest_index import ManifestListIndex
from iceduck.scan.tasks import DeleteFile, FileScanTask
from iceduck.spec.manifest import (
    DataFile,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.snapshot import Snapshot

T = TypeVar("T")

#: default bound, in manifest entries plus manifest-list rows: measured at about 3.7 KB a
#: cached entry for a four-column table with full metrics (the bench events table: its
#: 2,500 manifests and 20,000 files take 22,500 entries, 83 MB), so at most about 0.9 GB
#: for such tables, more for wider ones (metrics grow with the columns). Configurable per
#: connection: ``iceduck.connect(..., manifest_cache_entries=N)``.
DEFAULT_MAX_ENTRIES = 250_000
#: threads for cold reads of many manifests (1: read them in the calling thread)
DEFAULT_WORKERS = 1
#: fewer uncached manifests than this are read in the calling thread
PARALLEL_MIN = 8
#: threads fetching the bytes of an object store's manifests at once (:meth:`ManifestCache.prefetched`),
#: waiting on the network, not the GIL: as many as pyarrow's S3 client has connections (25)
FETCH_WORKERS = 25
#: reserved field id of ``file_path`` in position delete files (spec, "Position Delete Files")
DELETE_FILE_PATH_ID = 2147483546

Reader = Callable[[str], bytes]


@dataclass(frozen=True, eq=False)
class CachedManifest:
    """A parsed manifest, with inherited values applied, plus what planning derives from it."""

    meta: ManifestMeta
    #: every entry, DELETED ones included (metadata tables list them)
    entries: tuple[ManifestEntry, ...]
    #: ADDED and EXISTING entries: "Deleted entries [...] are not used in a scan"
    live: tuple[ManifestEntry, ...]
    #: data manifests: the base task of each live entry, in ``live`` order
    tasks: tuple[FileScanTask, ...] = ()
    #: delete manifests: the delete file of each live entry, in ``live`` order
    deletes: tuple[DeleteFile, ...] = ()
    #: the ``data_file`` of each live entry (metrics), in ``live`` order
    files: tuple[DataFile, ...] = ()
    #: the smallest data sequence number of the live entries (None: no live entry)
    min_sequence_number: int | None = None

    @property
    def path(self) -> str:
        return self.meta.path

    @property
    def spec_id(self) -> int:
        return self.meta.spec_id


def _manifest_key(manifest: ManifestFile) -> tuple[Any, ...]:
    """The cache key of a manifest: its path and the inherited values its list row gives."""
    return (
        "manifest",
        manifest.manifest_path,
        manifest.sequence_number,
        manifest.added_snapshot_id,
        manifest.first_row_id,
    )


def _data_sequence_number(e: ManifestEntry, path: str) -> int:
    seq = e.sequence_number
    if seq is None:
        raise CorruptDataError(
            f"live entry {e.data_file.file_path} has no data sequence number (not inherited either)", path
        )
    return seq


def _identity_positions(spec: PartitionSpec) -> list[tuple[int, int]]:
    """(position in the partition tuple, source field id) of identity partition fields."""
    return [(i, pf.source_id) for i, pf in enumerate(spec.fields) if pf.transform.is_identity]


def _base_tasks(live: tuple[ManifestEntry, ...], meta: ManifestMeta) -> tuple[FileScanTask, ...]:
    identity = _identity_positions(meta.spec)
    no_identity: dict[int, Any] = {}
    spec_id = meta.spec_id
    out = []
    for e in live:
        df = e.data_file
        partition = df.partition
        values = {fid: partition[i] for i, fid in identity} if identity else no_identity
        out.append(
            FileScanTask(
                df.file_path,
                df.file_format,
                df.record_count,
                df.file_size_in_bytes,
                spec_id,
                partition,
                _data_sequence_number(e, meta.path),
                df.first_row_id,
                values,
            )
        )
    return tuple(out)


def referenced_data_file(df: DataFile) -> str | None:
    """The one data file a position delete file refers to, when known.

    ``referenced_data_file`` if set; else, like Java's
    ``ContentFileUtil.referencedDataFileLocation``, the ``file_path`` column's bounds when
    the lower and upper bound are equal (every row names the same file).
    """
    if df.content is not FileContent.POSITION_DELETES:
        return None
    if df.referenced_data_file is not None:
        return df.referenced_data_file
    lower = (df.lower_bounds or {}).get(DELETE_FILE_PATH_ID)
    upper = (df.upper_bounds or {}).get(DELETE_FILE_PATH_ID)
    if lower is not None and lower == upper:
        try:
            return bytes(lower).decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


def _delete_files(live: tuple[ManifestEntry, ...], meta: ManifestMeta) -> tuple[DeleteFile, ...]:
    out = []
    for e in live:
        df = e.data_file
        out.append(
            DeleteFile(
                path=df.file_path,
                content=df.content,
                file_format=df.file_format,
                sequence_number=_data_sequence_number(e, meta.path),
                record_count=df.record_count,
                file_size_in_bytes=df.file_size_in_bytes,
                equality_ids=tuple(df.equality_ids or ()),
                referenced_data_file=referenced_data_file(df),
                content_offset=df.content_offset,
                content_size_in_bytes=df.content_size_in_bytes,
                spec_id=meta.spec_id,
                partition=df.partition,
            )
        )
    return tuple(out)


def parse_manifest(
    data: bytes, manifest: ManifestFile, specs_by_id: dict[int, PartitionSpec] | None = None
) -> CachedManifest:
    """Decode a manifest and derive the planning rows of its live entries."""
    meta, entries = read_manifest(data, manifest.manifest_path, manifest, specs_by_id)
    live = tuple(e for e in entries if e.is_live)
    files = tuple(e.data_file for e in live)
    min_seq = min((_data_sequence_number(e, meta.path) for e in live), default=None)
    if meta.content is ManifestContent.DATA:
        tasks = _base_tasks(live, meta)
        return CachedManifest(meta, tuple(entries), live, tasks, (), files, min_seq)
    return CachedManifest(meta, tuple(entries), live, (), _delete_files(live, meta), files, min_seq)


def v1_manifest_files(snapshot: Snapshot) -> tuple[ManifestFile, ...]:
    """Manifest-list rows for a v1 snapshot that lists its manifests directly.

    As Java's ``BaseSnapshot`` does: no partition summaries (nothing is skipped), spec id
    from the manifest's own metadata, sequence number 0, added by the snapshot itself.
    """
    return tuple(
        ManifestFile(
            manifest_path=location,
            manifest_length=0,
            partition_spec_id=0,
            content=ManifestContent.DATA,
            sequence_number=0,
            min_sequence_number=0,
            added_snapshot_id=snapshot.snapshot_id,
        )
        for location in snapshot.manifests or ()
    )


class ManifestCache:
    """Parsed manifests and manifest lists of one connection (thread-safe LRU)."""

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        read: Reader = fileio.read_bytes,
        workers: int = DEFAULT_WORKERS,
    ) -> None:
        #: threads reading manifests that are not cached (see :meth:`parsed_manifests`)
        self.workers = workers
        self._read = read
        #: manifests and indexed manifest lists, each weighed by its entries or rows
        self._items: LRUCache[tuple[Any, ...], Any] = LRUCache(max_entries)
        #: guards the two counters below (several threads may parse at once)
        self._counting = threading.Lock()
        #: bytes of manifests fetched ahead by :meth:`prefetched`, by path, until parsed
        self._fetched: dict[str, bytes] = {}
        #: how many manifests / manifest lists were decoded (tests assert "parsed once")
        self.manifests_parsed = 0
        self.lists_parsed = 0
        #: how many scan plans were made rather than found (:mod:`iceduck.scan.plan_cache`)
        self.plans_made = 0

    @property
    def max_entries(self) -> int:
        """The bound, in manifest entries plus manifest-list rows."""
        return self._items.max_weight

    @property
    def hits(self) -> int:
        """Lookups answered without decoding."""
        return self._items.hits

    def _put(self, key: tuple[Any, ...], value: Any, size: int, counter: str) -> None:
        """Store ``value`` weighing ``size`` and count it as decoded in ``counter``."""
        self._items.put(key, value, size)
        with self._counting:
            setattr(self, counter, getattr(self, counter) + 1)

    def clear(self) -> None:
        self._items.clear()

    def get_or_load(self, key: tuple[Any, ...], load: Callable[[], T], weight: Callable[[T], int]) -> T:
        """Another table format's immutable metadata file (Paimon manifests), parsed once
        and kept within the same bound; ``key`` starts with the format's name, so it
        cannot meet an Iceberg key."""
        cached = self._items.get(key)
        if cached is None:
            cached = load()
            self._put(key, cached, max(weight(cached), 1), "manifests_parsed")
        return cast(T, cached)


    def plan(self, key: tuple[Any, ...], make: Callable[[], T], weight: Callable[[T], int]) -> T:
        """A scan plan (:mod:`iceduck.scan.plan_cache`) made once per ``key``; ``key`` starts
        with ``"plan"``, so it cannot meet a manifest's or a list's. Counted in
        :attr:`plans_made`, not as a parsed manifest."""
        cached = self._items.get(key)
        if cached is None:
            cached = make()
            self._put(key, cached, max(weight(cached), 1), "plans_made")
        return cast(T, cached)

    @property
    def size(self) -> int:
        """Entries and manifest-list rows currently held."""
        return self._items.weight

    def __len__(self) -> int:
        return len(self._items)

    # -- manifest lists ---------------------------------------------------------------------

    def list_index(self, location: str, format_version: int | None = None) -> ManifestListIndex:
        """The manifest list at ``location``, read once and kept with its index (lists are
        immutable: the key is the path)."""
        key = ("list", location)
        cached = self._items.get(key)
        if cached is None:
            rows = read_manifest_list(self._read(location), location, format_version)
            cached = ManifestListIndex(rows)
            self._put(key, cached, len(cached.rows), "lists_parsed")
        return cached

    def snapshot_index(self, snapshot: Snapshot, format_version: int | None = None) -> ManifestListIndex:
        """The indexed manifest-list rows of a snapshot (v1 snapshots may list manifests
        directly: their rows have no summaries, so that index is built on each call)."""
        if snapshot.manifest_list is not None:
            return self.list_index(snapshot.manifest_list, format_version)
        if snapshot.manifests is None:
            raise CorruptDataError(
                f"snapshot {snapshot.snapshot_id} has neither a manifest list nor manifests"
            )
        return ManifestListIndex(v1_manifest_files(snapshot))

    def snapshot_manifests(
        self, snapshot: Snapshot, format_version: int | None = None
    ) -> tuple[ManifestFile, ...]:
        """The manifest-list rows of a snapshot (v1 snapshots may list manifests directly)."""
        return self.snapshot_index(snapshot, format_version).rows

    def manifest_list(self, path: str, format_version: int | None = None) -> list[ManifestFile]:
        """The rows of the manifest list at ``path`` (a fresh list; the rows are shared)."""
        return list(self.list_index(path, format_version).rows)

    # -- manifests --------------------------------------------------------------------------

    def parsed_manifest(
        self, manifest: ManifestFile, specs_by_id: dict[int, PartitionSpec] | None = None
    ) -> CachedManifest:
        """A manifest, parsed with the inherited values of its manifest-list row."""
        key = _manifest_key(manifest)
        cached = self._items.get(key)
        if cached is None:
            cached = self._parse(key, manifest, specs_by_id)
        return cached

    def _parse(
        self, key: tuple[Any, ...], manifest: ManifestFile, specs_by_id: dict[int, PartitionSpec] | None
    ) -> CachedManifest:
        data = self._fetched.pop(manifest.manifest_path, None)
        if data is None:
            data = self._read(manifest.manifest_path)
        parsed = parse_manifest(data, manifest, specs_by_id)
        self._put(key, parsed, len(parsed.entries), "manifests_parsed")
        return parsed

    def parsed_manifests(
        self, manifests: Sequence[ManifestFile], specs_by_id: dict[int, PartitionSpec] | None = None
    ) -> list[CachedManifest]:
        """Several manifests, in order, as :meth:`parsed_manifest` returns each.

        With ``workers > 1``, when at least :data:`PARALLEL_MIN` of them are not cached,
        those are read and parsed by a pool of that many threads. The result, and the error
        raised when one fails (the first failing one in ``manifests`` order), are the
        sequential ones.
        """
        keys = [_manifest_key(m) for m in manifests]
        found: list[CachedManifest | None] = [self._items.get(k) for k in keys]
        missing = [i for i, cm in enumerate(found) if cm is None]
        if self.workers > 1 and len(missing) >= PARALLEL_MIN:
            with ThreadPoolExecutor(min(self.workers, len(missing))) as pool:
                futures = [pool.submit(self._parse, keys[i], manifests[i], specs_by_id) for i in missing]
                try:
                    for i, future in zip(missing, futures, strict=True):
                        found[i] = future.result()
                except BaseException:
                    for future in futures:
                        future.cancel()
                    raise
        else:
            for i in missing:
                found[i] = self._parse(keys[i], manifests[i], specs_by_id)
        return found  # type: ignore[return-value]  # every None was replaced

    @contextmanager
    def prefetched(self, manifests: Sequence[ManifestFile]) -> Iterator[None]:
        """Within the block, the uncached ``manifests`` in an object store are parsed from
        bytes fetched all at once beforehand, by :data:`FETCH_WORKERS` threads.

        In an object store each read is a round trip of 10-30 ms; reading the manifests a
        plan needs one after the other costs one round trip each (two: pyarrow asks the
        size first), together they cost one. Only the fetch is concurrent: decoding holds
        the GIL (see the module docstring), so it stays in the caller's order. What is
        fetched and not parsed in the block (a delete manifest the plan turned out not to
        need) is dropped at its end; a failed fetch is left for the parse to read again,
        so it raises where and as a sequential read would.
        """
        missing = [m.manifest_path for m in manifests if _manifest_key(m) not in self._items]
        paths = sorted({path for path in missing if fileio.is_object_store(path)})
        if len(paths) >= 2:
            with ThreadPoolExecutor(min(FETCH_WORKERS, len(paths))) as pool:
                for path, data in zip(paths, pool.map(self._try_read, paths), strict=True):
                    if data is not None:
                        self._fetched[path] = data
        try:
            yield
        finally:
            for path in paths:
                self._fetched.pop(path, None)

    def _try_read(self, path: str) -> bytes | None:
        try:
            return self._read(path)
        except Exception:  # the sequential read raises it again, in order
            return None

    def manifest(
        self, manifest: ManifestFile, specs_by_id: dict[int, PartitionSpec] | None = None
    ) -> list[ManifestEntry]:
        """Every entry of a manifest, DELETED ones included (a fresh list; entries are shared)."""
        return list(self.parsed_manifest(manifest, specs_by_id).entries)
