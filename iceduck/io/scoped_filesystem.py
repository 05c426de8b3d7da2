"""One pyarrow filesystem for a whole store, each call served by the filesystem of its path.

DuckDB dispatches a registered filesystem by scheme alone (``s3://``), but the credentials
of an object depend on its location (:mod:`iceduck.io.store_scopes`): a table in one bucket
is read with its own keys, a table in the next bucket with others. :class:`ScopedHandler`
is the one filesystem DuckDB sees for a scheme; it turns each path back into a location and
hands the call to :func:`iceduck.io.object_store.filesystem` of that location, which picks
(and renews when due) the scope's filesystem.
"""

from __future__ import annotations

from typing import Any

import pyarrow.fs as pafs

from iceduck.io import object_store


class ScopedHandler(pafs.FileSystemHandler):
    """Every call of a ``PyFileSystem`` routed to the filesystem of its path's scope.

    Paths are pyarrow's (``bucket/key``; for ADLS ``container/key``, the account fixed by
    the location the handler was made for)."""

    def __init__(self, location: str) -> None:
        parsed = object_store.parse(location)
        self.store = parsed.store
        self.account = parsed.account

    def _location(self, path: str) -> str:
        path = path.lstrip("/")
        if self.store == "abfs":
            container, _, key = path.partition("/")
            return f"abfss://{container}@{self.account}.dfs.core.windows.net/{key}"
        return f"{self.store}://{path}"

    def _fs(self, path: str) -> pafs.FileSystem:
        return object_store.filesystem(self._location(path))[0]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScopedHandler) and (other.store, other.account) == (self.store, self.account)

    def __hash__(self) -> int:
        return hash((self.store, self.account))

    def get_type_name(self) -> str:
        return f"iceduck-{self.store}"

    def equals(self, other: Any) -> bool:
        return self == other

    def normalize_path(self, path: str) -> str:
        return path

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return [self._fs(p).get_file_info(p) for p in paths]

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self._fs(selector.base_dir).get_file_info(selector)

    def create_dir(self, path: str, recursive: bool) -> None:
        self._fs(path).create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self._fs(path).delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self._fs(path).delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise OSError("iceduck never empties a whole object store")

    def delete_file(self, path: str) -> None:
        self._fs(path).delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self._fs(src).move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self._fs(src).copy_file(src, dest)

    def open_input_stream(self, path: str) -> Any:
        return self._fs(path).open_input_stream(path)

    def open_input_file(self, path: str) -> Any:
        return self._fs(path).open_input_file(path)

    def open_output_stream(self, path: str, metadata: Any) -> Any:
        return self._fs(path).open_output_stream(path, metadata=metadata)

    def open_append_stream(self, path: str, metadata: Any) -> Any:
        return self._fs(path).open_append_stream(path, metadata=metadata)


def scoped_filesystem(location: str) -> pafs.FileSystem:
    """The store-wide filesystem of ``location``'s store (and ADLS account)."""
    return pafs.PyFileSystem(ScopedHandler(location))
