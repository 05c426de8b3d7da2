"""fsspec's view of an object store, for DuckDB's ``register_filesystem``.

The ``fsspec`` way of :mod:`iceduck.engine.object_stores`: fsspec's ``ArrowFSWrapper``
around the pyarrow filesystem :mod:`iceduck.io.object_store` builds. It lives apart so that
fsspec is imported only when a statement first reads an object store, not by every
connection to a local warehouse.
"""

from __future__ import annotations

from typing import Any

import pyarrow.fs as pafs
from fsspec.implementations.arrow import ArrowFSWrapper

from iceduck.io import object_store
from iceduck.io.scoped_filesystem import scoped_filesystem
from iceduck.lru import LRUCache

#: how many object descriptions (size, mtime) the fsspec path remembers, about 200 bytes each
MAX_CACHEDINFOS = 100_000


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


#: object descriptions the fsspec path read, by (configuration generation, scheme, path)
INFOS: LRUCache[tuple[int, str, str], Any] = LRUCache(MAX_CACHEDINFOS)


class S3(StoreFileSystem):
    protocol = ("s3",)


class GS(StoreFileSystem):
    protocol = ("gs", "gcs")


class ABFS(StoreFileSystem):
    protocol = ("abfss", "abfs")


WRAPPERS: dict[str, type[StoreFileSystem]] = {"s3": S3, "gs": GS, "abfs": ABFS}
