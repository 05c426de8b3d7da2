"""File IO for table files: the local file system and object stores.

Iceberg stores full locations ("Full URI for the file with FS scheme"). Spark writes
local tables either as plain absolute paths or as ``file:`` URIs (``file:/a/b``,
``file:///a/b``); both name the same file, so every local location goes through
:func:`to_local_path` before touching the disk. ``s3://`` (``s3a://``, ``s3n://``),
``gs://`` and ``abfs(s)://`` locations go to :mod:`iceduck.io.object_files`, through
the pyarrow filesystem :mod:`iceduck.io.object_store` configures. Other schemes (hdfs,
...) are not supported and say so.

Writes of new files never overwrite: a metadata or manifest file that already exists is
someone else's commit, and replacing it would corrupt their table. Locally the write is
atomic (temporary file, then ``link``); in an object store a PUT is atomic by itself and
the name is checked first. Neither is what makes a commit safe: every metadata and
manifest name carries a UUID, and a commit lands only through the catalog's
compare-and-swap of the table's metadata pointer, never through a rename or a listing.

When the machine refuses (disk full, read-only file system, permission denied, file size
limit, name too long), the ``OSError`` becomes a :class:`~iceduck.errors.StorageError`
naming the file and saying what to do: :func:`storage_error` is the one translation, used
by :func:`storage_errors` around every file operation here and by the engine for DuckDB's and
pyarrow's I/O errors, whose messages carry the C library's ``strerror`` text
(:func:`errno_in_message`).
"""

from __future__ import annotations

import errno
import os
import re
import resource
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, TypeVar

from iceduck.errors import AlreadyExistsError, CorruptDataError, StorageError, UnsupportedError, UserError
from iceduck.io import object_files
from iceduck.io.object_store import is_object_store

T = TypeVar("T")

#: a URI scheme (two letters at least, so a Windows drive letter "C:" is not one)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


class MissingFileError(CorruptDataError):
    """A file that table metadata references does not exist."""


#: the longest file or folder name (bytes) the usual file systems take (ext4, xfs, tmpfs, ...)
NAME_MAX = 255

#: what the storage refusing with each errno means, and what to do about it
_ADVICE: dict[int, str] = {
    errno.ENOSPC: "no space left on device: free space and run the statement again",
    errno.EDQUOT: "disk quota exceeded: free space or raise the quota and run the statement again",
    errno.EROFS: "read-only file system: remount it read-write (or use a writable warehouse) "
    "and run the statement again",
    errno.EACCES: "permission denied: give the user running iceduck access to the file and its folder",
    errno.EPERM: "operation not permitted: check the permissions and attributes (chattr) "
    "of the file and its folder",
    errno.EIO: "input/output error reported by the device: check the disk",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n) and run the statement again",
    errno.ENFILE: "too many open files in the system: close some and run the statement again",
}


def to_local_path(location: str) -> str:
    """The local path of a location: ``/a/b``, ``file:/a/b``, ``file:///a/b`` -> ``/a/b``.

    The path of a ``file:`` location is taken literally, never percent-decoded: Iceberg
    locations are not encoded URIs. Java's writers name partition folders with
    ``URLEncoder`` (``s=a%2Fb``, ``ts=2024-01-01T10%3A00``) and store ``file:/.../s=a%2Fb/f``
    for the folder literally named ``s=a%2Fb``; Hadoop's ``Path(String)`` reads it back
    literally, and so do DuckDB and PyIceberg. Decoding would look for ``s=a/b``.

    A NUL character cannot be part of a file name on any local file system: such a
    location is refused here, once for every file operation, as a :class:`UserError`
    (Python's own ``ValueError: embedded null byte`` says nothing of where it came from).
    """
    if "\x00" in location:
        raise UserError(f"a file location cannot contain a NUL character: {location!r}")
    if location.startswith("file:"):
        path = location[len("file:") :]
        if path.startswith("//"):  # file://<authority>/path
            authority, _, rest = path[2:].partition("/")
            if authority not in ("", "localhost"):
                raise UnsupportedError(f"file URI with a host is not supported: {location}")
            path = "/" + rest
        return path
    if is_object_store(location):  # a caller that should have asked fileio to do the work
        raise UnsupportedError(f"{location}: an object-store location has no local path")
    if _SCHEME.match(location):
        raise UnsupportedError(
            f"only local files and s3://, gs://, abfss:// locations are supported, not {location!r}"
        )
    return location


# -- the storage refusing: OSError -> StorageError ------------------------------------------------


def storage_error(error: OSError, path: str | None = None) -> StorageError:
    """The :class:`StorageError` for an ``OSError`` of a file operation on ``path``.

    The message says what the machine refused and what to do; ``path`` defaults to the
    file the error names. Every errno maps (the kind is "the machine refused", whatever
    the reason); the common ones get advice.
    """
    path = path or _filename(error)
    code = error.errno or errno_in_message(str(error))
    return StorageError(storage_problem(code, path, error.strerror or str(error)), path)


def storage_problem(code: int | None, path: str | None, fallback: str) -> str:
    """What ``errno`` ``code`` means for a file operation on ``path``, with what to do."""
    if code == errno.ENAMETOOLONG:
        return _name_too_long(path or "")
    if code == errno.EFBIG:
        return _file_too_large()
    advice = _ADVICE.get(code) if code is not None else None
    if advice is not None:
        return advice
    return f"the file system refused: {fallback}" + (f" (errno {code})" if code else "")


def errno_in_message(message: str) -> int | None:
    """The errno whose C library text (``strerror``) a message quotes, as DuckDB's and
    pyarrow's I/O errors do (``Could not write file "...": No space left on device``);
    None when it quotes none of those :func:`storage_problem` explains."""
    for code in (*_ADVICE, errno.EFBIG, errno.ENAMETOOLONG):
        if os.strerror(code) in message:
            return code
    return None


@contextmanager
def storage_errors(location: str) -> Iterator[None]:
    """Run a file operation on ``location``, raising an ``OSError`` as :func:`storage_error`
    (an ``OSError`` naming another file names that one)."""
    try:
        yield
    except OSError as e:
        local = location if is_object_store(location) else to_local_path(location)
        raise storage_error(e, _filename(e) or local) from e


def _filename(error: OSError) -> str | None:
    name = error.filename
    return os.fsdecode(name) if isinstance(name, str | bytes) else None


def _name_too_long(path: str) -> str:
    """Name the component over :data:`NAME_MAX` bytes (or the path over ``PATH_MAX``)."""
    parts = [p for p in path.split("/") if p]
    longest = max(parts, key=lambda p: len(p.encode("utf-8", "surrogateescape")), default="")
    size = len(longest.encode("utf-8", "surrogateescape"))
    if size > NAME_MAX:
        shown = longest if len(longest) <= 40 else f"{longest[:20]}...{longest[-12:]}"
        return (
            f"name too long: {shown!r} has {size} bytes ({NAME_MAX} bytes per name): "
            "use a shorter name or LOCATION"
        )
    total = len(path.encode("utf-8", "surrogateescape"))
    return f"name too long: the path has {total} bytes, more than the file system takes: use a shorter path"


def _file_too_large() -> str:
    """EFBIG: a process file size limit (``ulimit -f``), or the file system's own."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY:
        return (
            f"file too large (limit {soft:,} bytes, ulimit -f): raise the limit or lower "
            "write.target-file-size-bytes, and run the statement again"
        )
    return "file too large (limit of the file system): lower write.target-file-size-bytes"


# -- reading ------------------------------------------------------------------------------------


def read_bytes(location: str) -> bytes:
    """The whole file; a missing file raises :class:`MissingFileError` naming it."""
    if is_object_store(location):
        return _read_object(object_files.read_bytes, location)
    path = to_local_path(location)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise _read_error(e, location) from e


def open_input(location: str) -> BinaryIO:
    """A seekable binary stream, for reading parts of a file (a Puffin blob, a footer)."""
    if is_object_store(location):
        return _read_object(object_files.open_input, location)
    path = to_local_path(location)
    try:
        return open(path, "rb")  # the caller owns the stream
    except OSError as e:
        raise _read_error(e, location) from e


def file_size(location: str) -> int:
    if is_object_store(location):
        return _read_object(object_files.file_size, location)
    try:
        return os.path.getsize(to_local_path(location))
    except OSError as e:
        raise _read_error(e, location) from e


def _read_object(read: Callable[[str], T], location: str) -> T:
    """``read(location)`` of an object; a missing object is the table's problem, as a
    missing local file is (:class:`MissingFileError` naming it)."""
    try:
        return read(location)
    except FileNotFoundError:
        raise MissingFileError("file does not exist", location) from None


def _read_error(error: OSError, location: str) -> CorruptDataError | StorageError:
    """Reading a file the metadata names: missing is the table's problem (MissingFileError),
    a folder in its place too; anything else (permissions, I/O) is the storage's."""
    if isinstance(error, FileNotFoundError):
        return MissingFileError("file does not exist", location)
    if isinstance(error, IsADirectoryError):
        return CorruptDataError("expected a file, found a directory", location)
    return storage_error(error, to_local_path(location))


def exists(location: str) -> bool:
    if is_object_store(location):
        return object_files.exists(location)
    return os.path.exists(to_local_path(location))


def write_new(location: str, data: bytes) -> None:
    """Create ``location`` with ``data`` atomically; fail if it already exists.

    The bytes go to a temporary file in the same directory, are fsynced, and are then
    hard-linked to the final name (``link`` fails if the name exists, unlike
    ``rename``), so readers never see a partial file and no existing file is replaced.
    In an object store: a check that the name is free, then one PUT (see the module
    docstring for why that suffices).
    """
    if is_object_store(location):
        object_files.write_new(location, data)
        return
    path = Path(to_local_path(location))
    try:
        # the temporary name must fit where the final one does: a name of up to NAME_MAX
        # bytes (after "." and the random suffix the limit would be reached sooner)
        prefix = f".{path.name}." if len(path.name.encode()) <= NAME_MAX - 32 else ".iceduck-new."
        fd, tmp = _new_temporary_file(path.parent, prefix)
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
    except OSError as e:  # named by the file being written, not its temporary name
        raise storage_error(e, str(path)) from e


#: tries of making a folder and a file in it when a concurrent purge removes the folder
_FOLDER_TRIES = 5


def _new_temporary_file(folder: Path, prefix: str) -> tuple[int, str]:
    """``mkstemp`` in ``folder``, made first. A purge of a table tidies up the folders it
    emptied (:func:`iceduck.catalog.purge.remove_empty_folders`), so a writer of the same
    location at that moment (a commit that will then fail its compare-and-swap) can see the
    folder vanish between making it and creating the file in it: it is made again."""
    for attempt in range(_FOLDER_TRIES):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return tempfile.mkstemp(prefix=prefix, suffix=f".{uuid.uuid4().hex[:8]}.tmp", dir=folder)
        except (FileExistsError, FileNotFoundError):
            if attempt == _FOLDER_TRIES - 1 or (folder.exists() and not folder.is_dir()):
                raise
    raise AssertionError("unreachable")


def delete(location: str) -> None:
    """Remove a file; a file already gone is fine (cleanup may run twice)."""
    if is_object_store(location):
        object_files.delete(location)
        return
    try:
        os.unlink(to_local_path(location))
    except FileNotFoundError:
        pass
