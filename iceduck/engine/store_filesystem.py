"""fsspec's view of an object store, for DuckDB's ``register_filesystem``.

The ``fsspec`` way of :mod:`iceduck.engine.object_stores`: fsspec's ``ArrowFSWrapper``
around the pyarrow filesystem :mod:`iceduck.io.object_store` builds. It lives apart so that
fsspec is imported only when a statement first reads an object store, not by every
connection to a local warehouse.
"""

from __future__ import annotations

import io
from typing import Any

import pyarrow.fs as pafs
from fsspec.implementations.arrow import ArrowFile, ArrowFSWrapper

from iceduck.io import object_store
from iceduck.io.scoped_filesystem import scoped_filesystem
from iceduck.lru import LRUCache

#: how many object descriptions (size, mtime) the fsspec path remembers, about 200 bytes each
MAX_CACHEDINFOS = 100_000
#: how many opened objects (a path, a size and the store's client) the fsspec path keeps
MAX_OPEN_OBJECTS = 1_000
#: the bytes :func:`prefetch` keeps of the objects a scan will read, at most
PREFETCH_BYTES = 64 << 20
#: an object up to this size is prefetched whole (a point query's small data file)...
PREFETCH_WHOLE = 1 << 20
#: ...of a larger one its tail, where a Parquet footer lies
PREFETCH_TAIL = 64 << 10
#: objects fetched at once (the threads wait on the network, not the GIL): the size of the
#: AWS SDK's connection pool under pyarrow's S3 client (25, which pyarrow does not expose;
#: more threads only queue for a connection, as a proxy counting them showed)
PREFETCH_WORKERS = 25


class StoreFileSystem(ArrowFSWrapper):
    """fsspec's wrapper of a pyarrow filesystem whose every call takes the filesystem of its
    path from :mod:`iceduck.io.object_store` (:mod:`iceduck.io.scoped_filesystem`): a later
    ``configure`` applies to a database that registered it earlier, and each table's
    objects are read with that table's credentials. DuckDB dispatches on the scheme alone,
    so one database reads ADLS through the account of the first location it met (one
    account per process is the supported set-up)."""

    location = ""

    def __init__(self, location: str) -> None:
        super().__init__(scoped_filesystem(location))
        self.location = location

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        """The pyarrow path of a location: ``bucket/key``; for ADLS ``container/key`` (the
        account is the filesystem's, not part of the path as fsspec would leave it)."""
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        text = str(path)
        if object_store.is_object_store(text):
            return object_store.parse(text).path
        return super()._strip_protocol(text)

    # DuckDB asks about each file it reads several times (glob, exists, info, size and
    # modified, each one HEAD request through pyarrow: about 7 per file and scan, counted
    # against moto). Table files are immutable once written (the spec: "Data files are
    # immutable"; Iceberg never rewrites a file under the same name), so what one HEAD said
    # of a file holds until the configuration changes: it is kept, keyed by the
    # configuration's generation. Only files are kept; a missing object is asked again.

    def info(self, path: Any, **kwargs: Any) -> dict[str, Any]:
        return self._make_entry(self._file_info(self._strip_protocol(path)))

    def modified(self, path: Any) -> Any:
        return self._file_info(self._strip_protocol(path)).mtime

    def _file_info(self, path: str) -> Any:
        key = (object_store.generation(), self.protocol[0], path)
        found = INFOS.get(key)
        if found is not None:
            return found
        [info] = self.fs.get_file_info([path])
        if info.type == pafs.FileType.File:
            INFOS.put(key, info)
        return info

    # Each open of an object through pyarrow asks its size first (one HEAD), and DuckDB opens
    # a Parquet file once for its footer and again for each part it scans: four HEADs for a
    # one-row file, 10-30 ms each in a real store. For the same reason as above an opened
    # object is kept and each open gets its own position over it (``read_at`` reads a range
    # at an offset, without touching a shared position, from any thread).

    def _open(
        self, path: str, mode: str = "rb", block_size: Any = None, seekable: bool = True, **kwargs: Any
    ) -> Any:
        if mode != "rb" or not seekable:
            return super()._open(path, mode, block_size, seekable, **kwargs)
        object_store.refresh_due()  # credentials about to expire: renewed (a new generation) first
        key = (object_store.generation(), self.protocol[0], path)
        handle = OPENED.get(key)
        if handle is None:
            handle = self.fs.open_input_file(path)
            OPENED.put(key, handle)
        return ArrowFile(self, RangeReader(handle, key), path, mode, block_size, **kwargs)


def prefetch(locations: list[str]) -> None:
    """Fetch what DuckDB will ask of each object, all objects at once, before it runs.

    DuckDB reads the files of a scan through this filesystem in its own order: for each
    one a description (a HEAD), an open (another HEAD) and reads of the footer and the
    column chunks, each a round trip of 10-30 ms in a real store, one after another. Here
    every file's description and opened object go into :data:`INFOS` and :data:`OPENED`
    together, by :data:`PREFETCH_WORKERS` threads (the two HEADs of one file overlap), with
    the bytes DuckDB reads first: a small file whole, a larger one's tail (the Parquet
    footer), kept in :data:`PREFETCHED` within its byte bound. A read outside them goes
    to the store, so what DuckDB gets never depends on what was prefetched.

    The bytes serve the statement they were fetched for: each call drops what earlier
    ones kept of its files and fetches their bytes again (over the objects already opened,
    so a scan run again costs one round trip); the other scans of one statement (a join)
    keep theirs. A file deleted behind iceduck's back after a first scan is then an error
    naming it in the next, never rows of a file no longer there.

    ``locations`` are objects of one store (and ADLS account).
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    object_store.refresh_due()
    generation = object_store.generation()
    scheme = WRAPPERS[object_store.parse(locations[0]).store].protocol[0]
    keys = [(generation, scheme, object_store.parse(location).path) for location in dict.fromkeys(locations)]
    filesystem = scoped_filesystem(locations[0])
    budget = [PREFETCHED.max_weight]
    lock = threading.Lock()

    def describe(key: tuple[int, str, str]) -> None:
        [info] = filesystem.get_file_info([key[2]])
        if info.type == pafs.FileType.File:
            INFOS.put(key, info)

    def fetch(key: tuple[int, str, str]) -> None:
        PREFETCHED.discard(key)  # only bytes read for this statement serve it
        handle = OPENED.get(key)
        if handle is None:
            handle = filesystem.open_input_file(key[2])
            OPENED.put(key, handle)
        size = int(handle.size())
        wanted = size if size <= PREFETCH_WHOLE else PREFETCH_TAIL
        with lock:
            wanted = min(wanted, budget[0])
            budget[0] -= wanted
        if wanted > 0:
            PREFETCHED.put(key, (size - wanted, bytes(handle.read_at(wanted, size - wanted))), wanted)

    def run(job: tuple[Any, tuple[int, str, str]]) -> None:
        try:
            job[0](job[1])
        except Exception:  # left for DuckDB's own read of the object to meet and report
            pass

    # the fetches first: one not opened yet is two round trips (pyarrow's HEAD, then the
    # read), a description one
    jobs = [(fetch, k) for k in keys] + [(describe, k) for k in keys if k not in INFOS]
    if len(jobs) == 1:
        run(jobs[0])
        return
    with ThreadPoolExecutor(min(PREFETCH_WORKERS, len(jobs))) as pool:
        list(pool.map(run, jobs))


class RangeReader(io.RawIOBase):
    """A seekable stream of its own over an opened object shared with other readers: every
    read is a ``read_at`` of the object at this stream's position (closing it leaves the
    object open for the others)."""

    def __init__(self, handle: Any, key: tuple[int, str, str] | None = None) -> None:
        self._handle = handle
        #: where :func:`prefetch` may have kept bytes of the object
        self._key = key
        self._size = int(handle.size())
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def size(self) -> int:
        return self._size

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError(f"negative seek position {base + offset}")
        self._position = base + offset
        return self._position

    def read(self, size: int | None = -1) -> bytes:
        left = max(0, self._size - self._position)
        wanted = left if size is None or size < 0 else min(size, left)
        data = self._prefetched(wanted) if wanted else b""
        if data is None:
            data = bytes(self._handle.read_at(wanted, self._position))
        self._position += len(data)
        return data

    def _prefetched(self, wanted: int) -> bytes | None:
        """The ``wanted`` bytes at the position, when :func:`prefetch` kept all of them."""
        found = PREFETCHED.get(self._key) if self._key is not None else None
        if found is None:
            return None
        offset, data = found
        start = self._position - offset
        if start < 0 or start + wanted > len(data):
            return None
        return data[start : start + wanted]

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(memoryview(buffer)))
        memoryview(buffer)[: len(data)] = data
        return len(data)


#: object descriptions the fsspec path read, by (configuration generation, scheme, path)
INFOS: LRUCache[tuple[int, str, str], Any] = LRUCache(MAX_CACHEDINFOS)
#: objects the fsspec path opened, by (configuration generation, scheme, path)
OPENED: LRUCache[tuple[int, str, str], Any] = LRUCache(MAX_OPEN_OBJECTS)
#: bytes :func:`prefetch` read ahead: (offset, bytes) of an object, by the key of :data:`OPENED`,
#: weighed by their length
PREFETCHED: LRUCache[tuple[int, str, str], tuple[int, bytes]] = LRUCache(PREFETCH_BYTES)


class S3(StoreFileSystem):
    protocol = ("s3",)


class GS(StoreFileSystem):
    protocol = ("gs", "gcs")


class ABFS(StoreFileSystem):
    protocol = ("abfss", "abfs")


WRAPPERS: dict[str, type[StoreFileSystem]] = {"s3": S3, "gs": GS, "abfs": ABFS}
