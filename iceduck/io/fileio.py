"""File IO for table files on the local file system.

Iceberg stores full locations ("Full URI for the file with FS scheme"). Spark writes
local tables either as plain absolute paths or as ``file:`` URIs (``file:/a/b``,
``file:///a/b``); both name the same file, so every location goes through
:func:`to_local_path` before touching the disk. Other schemes (s3, hdfs, ...) are not
supported yet and say so.

Writes of new files are atomic and never overwrite: a metadata or manifest file that
already exists is someone else's commit, and replacing it would corrupt their table.
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlparse

from iceduck.errors import AlreadyExistsError, CorruptDataError, UnsupportedError

#: a URI scheme (two letters at least, so a Windows drive letter "C:" is not one)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


class MissingFileError(CorruptDataError):
    """A file that table metadata references does not exist."""


def to_local_path(location: str) -> str:
    """The local path of a location: ``/a/b``, ``file:/a/b``, ``file:///a/b`` -> ``/a/b``."""
    if location.startswith("file:"):
        parsed = urlparse(location)
        if parsed.netloc not in ("", "localhost"):
            raise UnsupportedError(f"file URI with a host is not supported: {location}")
        return unquote(parsed.path)
    if _SCHEME.match(location):
        raise UnsupportedError(f"only local files are supported, not {location!r}")
    return location


def read_bytes(location: str) -> bytes:
    """The whole file; a missing file raises :class:`MissingFileError` naming it."""
    path = to_local_path(location)
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise MissingFileError("file does not exist", location) from None
    except IsADirectoryError:
        raise CorruptDataError("expected a file, found a directory", location) from None


def open_input(location: str) -> BinaryIO:
    """A seekable binary stream, for reading parts of a file (a Puffin blob, a footer)."""
    path = to_local_path(location)
    try:
        return open(path, "rb")  # the caller owns the stream
    except FileNotFoundError:
        raise MissingFileError("file does not exist", location) from None


def file_size(location: str) -> int:
    try:
        return os.path.getsize(to_local_path(location))
    except FileNotFoundError:
        raise MissingFileError("file does not exist", location) from None


def exists(location: str) -> bool:
    return os.path.exists(to_local_path(location))


def write_new(location: str, data: bytes) -> None:
    """Create ``location`` with ``data`` atomically; fail if it already exists.

    The bytes go to a temporary file in the same directory, are fsynced, and are then
    hard-linked to the final name (``link`` fails if the name exists, unlike
    ``rename``), so readers never see a partial file and no existing file is replaced.
    """
    path = Path(to_local_path(location))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=f".{uuid.uuid4().hex[:8]}.tmp", dir=path.parent
    )
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise AlreadyExistsError(f"refusing to overwrite existing file {location}") from None
    finally:
        os.unlink(tmp)


def delete(location: str) -> None:
    """Remove a file; a file already gone is fine (cleanup may run twice)."""
    try:
        os.unlink(to_local_path(location))
    except FileNotFoundError:
        pass
