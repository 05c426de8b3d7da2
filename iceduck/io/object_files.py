"""File operations on object-store locations, through the pyarrow filesystem of their store.

:mod:`iceduck.io.fileio` dispatches here for ``s3://``, ``gs://`` and ``abfss://``
locations. A missing object raises ``FileNotFoundError`` (the caller decides what a
missing file means); every other refusal of the store becomes one iceduck error naming
the location (:func:`iceduck.io.object_errors.object_error`).

There is no rename in an object store, and iceduck needs none: every metadata, manifest
and data file gets a new name carrying a UUID, :func:`write_new` refuses an existing name
(a check, then a single PUT), and a commit becomes visible only through the catalog's
compare-and-swap of the metadata pointer -- never by renaming or listing objects.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, cast

from iceduck.errors import AlreadyExistsError
from iceduck.io.object_errors import object_error
from iceduck.io.object_store import ObjectLocation, filesystem

# pyarrow.fs (with pyarrow and numpy) is imported by the functions that use it: a local
# warehouse never does, and a one-shot CLI query pays for every import
if TYPE_CHECKING:
    import pyarrow.fs as pafs

#: bytes copied per read when uploading a local file
_CHUNK = 8 << 20


@contextmanager
def _refusals(parsed: ObjectLocation, location: str) -> Iterator[None]:
    """Turn the store's refusals (not a missing object) into iceduck errors."""
    try:
        yield
    except FileNotFoundError:
        raise
    except OSError as e:
        raise object_error(e, location, parsed.bucket) from e


def read_bytes(location: str) -> bytes:
    fs, parsed = filesystem(location)
    with _refusals(parsed, location), fs.open_input_file(parsed.path) as f:
        return cast(bytes, f.read())


def open_input(location: str) -> BinaryIO:
    """A seekable stream of the object (pyarrow reads ranges on demand)."""
    fs, parsed = filesystem(location)
    with _refusals(parsed, location):
        return cast(BinaryIO, fs.open_input_file(parsed.path))


def info(location: str) -> pafs.FileInfo:
    fs, parsed = filesystem(location)
    with _refusals(parsed, location):
        return fs.get_file_info(parsed.path)


def file_size(location: str) -> int:
    import pyarrow.fs as pafs

    found = info(location)
    if found.type != pafs.FileType.File:
        raise FileNotFoundError(location)
    return int(found.size)


def exists(location: str) -> bool:
    import pyarrow.fs as pafs

    return bool(info(location).type != pafs.FileType.NotFound)


def write_new(location: str, data: bytes) -> None:
    """Put a new object; refuse a name that exists (a check, then one PUT: names carry
    UUIDs, and the catalog's compare-and-swap decides which commit wins)."""
    if object_exists(location):
        raise AlreadyExistsError(f"refusing to overwrite existing file {location}")
    fs, parsed = filesystem(location)
    with _refusals(parsed, location), fs.open_output_stream(parsed.path) as out:
        out.write(data)


def object_exists(location: str) -> bool:
    """Whether an object of that very name exists: one HEAD (S3), one metadata GET (GCS).

    Not :func:`exists`: pyarrow's ``get_file_info`` follows a missing object with a listing
    of ``name/`` to tell a "folder" from nothing, a second request for every free name. A
    folder-like prefix cannot be overwritten by a PUT of the name (S3 keeps ``a/b`` and
    ``a/b/c`` side by side), so only the object itself matters to :func:`write_new`;
    opening it for reading asks for exactly that (and reads nothing).
    """
    fs, parsed = filesystem(location)
    try:
        with _refusals(parsed, location):
            fs.open_input_file(parsed.path).close()
    except FileNotFoundError:
        return False
    return True


def upload(local_path: str, location: str) -> None:
    """Copy a finished local file (a spooled data or delete file) to ``location``."""
    fs, parsed = filesystem(location)
    with (
        _refusals(parsed, location),
        open(local_path, "rb") as src,
        fs.open_output_stream(parsed.path) as out,
    ):
        shutil.copyfileobj(src, out, _CHUNK)


def delete(location: str) -> bool:
    """Remove an object; whether it existed (one already gone is fine: cleanup may run twice)."""
    fs, parsed = filesystem(location)
    try:
        with _refusals(parsed, location):
            fs.delete_file(parsed.path)
    except FileNotFoundError:
        return False
    return True


def is_folder(location: str) -> bool:
    """Whether ``location`` is a prefix holding objects (or a folder marker)."""
    import pyarrow.fs as pafs

    return bool(info(location).type == pafs.FileType.Directory)


def children(location: str) -> tuple[list[str], list[str]]:
    """(objects, sub-folders) directly below the folder ``location``, as locations, sorted."""
    import pyarrow.fs as pafs

    fs, parsed = filesystem(location)
    root = parsed.path.rstrip("/")
    prefix = location.rstrip("/")
    with _refusals(parsed, location):
        found = fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
    files, folders = [], []
    for item in found:
        name = item.path[len(root) :].strip("/")
        if item.type == pafs.FileType.File:
            files.append(f"{prefix}/{name}")
        elif item.type == pafs.FileType.Directory:
            folders.append(f"{prefix}/{name}")
    return sorted(files), sorted(folders)


def remove_empty_folders(location: str) -> None:
    """Remove the folder markers (``key/`` objects) below and of ``location`` that hold no
    object any more, deepest first.

    pyarrow keeps S3 "folders" alive: deleting the last object under a prefix puts an empty
    ``prefix/`` marker in its place, so a purged table would leave a tree of markers.
    """
    import pyarrow.fs as pafs

    fs, parsed = filesystem(location)
    root = parsed.path.rstrip("/")
    with _refusals(parsed, location):
        found = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
        files = [f.path for f in found if f.type == pafs.FileType.File]
        folders = [f.path for f in found if f.type == pafs.FileType.Directory]
        if "/" in root:  # never the bucket itself
            folders.append(root)
        for folder in sorted(folders, key=lambda p: -p.count("/")):
            if any(f.startswith(folder + "/") for f in files):
                continue
            try:
                fs.delete_dir(folder)
            except FileNotFoundError:
                pass


@dataclass(frozen=True)
class ListedObject:
    #: the object's location, in the scheme of the listed folder
    location: str
    #: the path below the listed folder (``data/a=1/f.parquet``)
    relative: str
    #: last modification, epoch milliseconds
    modified_ms: int


def list_objects(location: str) -> Iterator[ListedObject]:
    """Every object below the folder ``location`` (nothing when there is none)."""
    import pyarrow.fs as pafs

    fs, parsed = filesystem(location)
    root = parsed.path.rstrip("/")
    prefix = location.rstrip("/")
    with _refusals(parsed, location):
        found = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    for item in found:
        if item.type != pafs.FileType.File:
            continue
        relative = item.path[len(root) :].lstrip("/")
        modified = item.mtime_ns // 1_000_000 if item.mtime_ns is not None else 0
        yield ListedObject(f"{prefix}/{relative}", relative, modified)
