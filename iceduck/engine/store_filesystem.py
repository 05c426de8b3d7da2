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
        key = (object_store.generation(), self.location.partition("://")[0], path)
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
        key = (object_store.generation(), self.location.partition("://")[0], path)
        handle = OPENED.get(key)
        if handle is None:
            handle = self.fs.open_input_file(path)
            OPENED.put(key, handle)
        return ArrowFile(self, RangeReader(handle), path, mode, block_size, **kwargs)


class RangeReader(io.RawIOBase):
    """A seekable stream of its own over an opened object shared with other readers: every
    read is a ``read_at`` of the object at this stream's position (closing it leaves the
    object open for the others)."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle
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
        data = bytes(self._handle.read_at(wanted, self._position)) if wanted else b""
        self._position += len(data)
        return data

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


class S3(StoreFileSystem):
    protocol = ("s3",)


class GS(StoreFileSystem):
    protocol = ("gs", "gcs")


class ABFS(StoreFileSystem):
    protocol = ("abfss", "abfs")


WRAPPERS: dict[str, type[StoreFileSystem]] = {"s3": S3, "gs": GS, "abfs": ABFS}
