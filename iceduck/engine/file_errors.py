"""DuckDB's errors about table files, as iceduck's error kinds naming the file.

DuckDB reports a file it cannot read or write in several shapes, and only some name it:

* ``IOException``: ``Could not write file "<path>": No space left on device`` (also
  wrapped in the JSON of ``Async write failed ...: {"exception_message": "... \\"<path>\\"
  ..."}``), ``Cannot open file "<path>": File name too long``, ``Could not read enough
  bytes from file "<path>"``;
* ``InvalidInputException``: ``No magic bytes found at end of file '<path>'``, ``File
  '<path>' too small to be a Parquet file``, ``Failed to read file "<path>": ZSTD
  Decompression failure`` -- the same class as a wrong argument, so it is a table's
  broken file only when ``<path>`` is one of the files the statement reads;
* a plain ``duckdb.Error`` from the Thrift decoder (``don't know what type: ...``,
  ``TProtocolException: Invalid data``) naming no file at all.

:func:`file_error` sorts these out: the storage refusing (its ``strerror`` text in the
message) is a :class:`~iceduck.errors.StorageError`, a missing file a ``MissingFileError``,
anything else a :class:`~iceduck.errors.CorruptDataError`; when the message names no file,
the candidate files are read one at a time (:func:`find_damaged`) to find the broken one
-- only after a failure, within :data:`PROBE_BYTES`.

The files a statement's scans read are on its DuckDB cursor already: :mod:`iceduck.engine.read`
hands each scan's file lists over as variables (``<view>__f<n>`` for data files,
``<view>__e<n>`` for equality deletes), which :func:`scan_files` reads back, or writes a
short list into the SQL itself and notes it here (:func:`note_scan_files`).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import duckdb

from iceduck.engine.types import quote_identifier, quote_string
from iceduck.errors import CorruptDataError, IceduckError, NotFoundError, StorageError
from iceduck.io import fileio
from iceduck.io.object_errors import object_error

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: a quoted absolute path or object-store location (``s3://b/k``) in a DuckDB message:
#: "...", '...', or \"...\" inside JSON details
_QUOTED_PATH = re.compile(r"""\\?["']((?:/|(?:s3|gs|gcs|abfss?)://)[^"'\\\n]+)\\?["']""")
#: characters a one-line message must not carry raw
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: the variables holding a scan's file lists (see :func:`iceduck.engine.read.scan_sql`)
_FILE_LIST = re.compile(r"__[fe][0-9]+$")
#: at most this many bytes of candidate files are read to find an unnamed broken one
PROBE_BYTES = 256 << 20
#: DuckDB exception classes that may come from a damaged file without naming it, compared
#: exactly: a subclass of ``duckdb.Error`` (``BinderException``...) means something else
_UNNAMED_KINDS: frozenset[type[Exception]] = frozenset(
    {duckdb.Error, duckdb.InternalException, duckdb.SerializationException, duckdb.IOException}
)
#: set on an exception whose files were probed in vain: a caller further up, translating
#: the same exception again, does not read them all a second time
_PROBED = "_iceduck_probed"
#: DuckDB exception classes that may be about a file at all
_FILE_KINDS = _UNNAMED_KINDS | {duckdb.HTTPException, duckdb.InvalidInputException}


def quoted_paths(message: str) -> list[str]:
    """The absolute paths a DuckDB message quotes, in order (without the ``LINE`` excerpt,
    which quotes the SQL rather than the failure)."""
    head = message.partition("\n\nLINE ")[0]
    return _QUOTED_PATH.findall(head)


def io_error(error: Exception, table_file: bool = True) -> IceduckError:
    """DuckDB's error for a file it could not read or write, as iceduck's (naming the file).

    ``table_file`` says the file is one of a table's (a data or delete file a scan reads):
    missing, it is "data file does not exist". Any other file -- one the user's own
    ``read_parquet('f')`` or ``COPY ... TO 'f'`` names -- is a NotFoundError in DuckDB's
    words, which say what was looked for (a pattern, a folder that does not exist)."""
    message = error_message(error)
    paths = quoted_paths(message)
    path = paths[0] if paths else None
    code = fileio.errno_in_message(message)
    if code is not None:
        return StorageError(fileio.storage_problem(code, path, message), path)
    if "No files found" in message or "No such file" in message:
        if not table_file:  # the user named it: the statement is wrong, no table is broken
            return NotFoundError(message)
        return fileio.MissingFileError("data file does not exist", path)
    return CorruptDataError(f"cannot read the file: {message}", path)


def error_message(error: Exception) -> str:
    """DuckDB's message without the excerpt of the SQL iceduck generated, and printable: the
    Thrift decoder quotes the garbage byte it met (``don't know what type: \\r``)."""
    head = str(error).partition("\n\nLINE ")[0].strip()
    return _CONTROL.sub(lambda m: " " if m[0] in "\n\t" else f"\\x{ord(m[0]):02x}", head)


def file_error(con: Duck, error: Exception, files: Sequence[str]) -> IceduckError | None:
    """The iceduck error for a DuckDB ``error`` raised while reading or writing ``files``
    (local paths) on ``con``; None when it is not about a file (a wrong query stays what
    DuckDB said)."""
    if not isinstance(error, duckdb.Error) or isinstance(error, duckdb.InterruptException):
        return None
    message = error_message(error)
    refused = object_store_refusal(message, files)
    if refused is not None:
        return refused
    named = quoted_paths(message)
    io_kind = isinstance(error, duckdb.IOException)  # HTTPException is one too
    if fileio.errno_in_message(message) is not None and (io_kind or named):  # the storage refused
        return io_error(error)
    if any(p in files for p in named):
        return io_error(error)
    if named and io_kind:
        return io_error(error, table_file=False)
    if named or type(error) not in _UNNAMED_KINDS or not files or getattr(error, _PROBED, False):
        return None
    found = find_damaged(con, files)
    if found is None:
        _mark_probed(error)
        return None
    path, problem = found
    if problem != message:
        problem += f" (the statement failed with: {message})"
    return CorruptDataError(f"cannot read the file: {problem}", path)


#: pyarrow's S3 failure, as DuckDB quotes the Python traceback of the fsspec filesystem:
#: ``When reading information for key 'k' in bucket 'b': AWS Error ...`` (an open), or
#: ``AWS Error ... during GetObject operation`` alone (a read of an opened object)
_PYARROW_S3 = re.compile(r"OSError: ((?:When [^\n]*?)?(?:AWS Error|curlCode)[^\n]*)")
_KEY_IN_BUCKET = re.compile(r"key '([^']*)' in bucket '([^']*)'|bucket '([^']*)'")


def object_store_refusal(message: str, files: Sequence[str] = ()) -> IceduckError | None:
    """The iceduck error for an object store refusing a read DuckDB made through the
    registered fsspec filesystem (its message holds pyarrow's, naming key and bucket; a
    read of an object opened already names neither: then the one file read, or the folder
    of the files read)."""
    found = _PYARROW_S3.search(message)
    if found is None:
        return None
    where = _KEY_IN_BUCKET.search(found.group(1))
    if where is None:
        return object_error(OSError(found.group(1)), _read_location(message, files))
    key, bucket = (where.group(1), where.group(2)) if where.group(2) else ("", where.group(3))
    return object_error(OSError(found.group(1)), f"s3://{bucket}/{key}".rstrip("/"), bucket)


def _read_location(message: str, files: Sequence[str]) -> str:
    """Where a failed read named by no key happened: the object DuckDB's message quotes,
    else the one file read, else the folder all the files read lie in."""
    named = [p for p in quoted_paths(message) if "://" in p]
    if named:
        return named[0]
    stored = [f for f in files if "://" in f]
    if len(stored) == 1:
        return stored[0]
    shared: list[str] = []
    for parts in zip(*(f.split("/")[:-1] for f in stored), strict=False):
        if len(set(parts)) != 1:
            break
        shared.append(parts[0])
    common = "/".join(shared)
    return f"{common}/ (one of {len(stored)} files)" if "://" in common else "s3://"


def statement_file_error(con: Duck, error: Exception) -> IceduckError | None:
    """:func:`file_error` over the files the scans attached to cursor ``con`` read (looked
    up only for the exception classes a file problem comes as)."""
    if type(error) not in _FILE_KINDS:
        return None
    return file_error(con, error, scan_files(con))


def _mark_probed(error: Exception) -> None:
    try:
        setattr(error, _PROBED, True)
    except AttributeError:  # an exception class without a __dict__: probing again is only slower
        pass


@contextmanager
def reading_files(con: Duck, files: Sequence[str]) -> Iterator[None]:
    """Run DuckDB reads of ``files`` (local paths), raising DuckDB's errors about them as
    :func:`file_error` says."""
    try:
        yield
    except duckdb.Error as e:
        translated = file_error(con, e, files)
        if translated is None:
            raise
        raise translated from e


#: the files scans on a cursor read through lists written into their SQL (a cursor serves
#: one statement: the notes go with it)
_NOTED: weakref.WeakKeyDictionary[Duck, list[str]] = weakref.WeakKeyDictionary()


def note_scan_files(con: Duck, files: Sequence[str]) -> None:
    """Remember that a scan attached to cursor ``con`` reads ``files`` (for :func:`scan_files`)."""
    _NOTED.setdefault(con, []).extend(files)


def scan_files(con: Duck) -> list[str]:
    """The data and equality-delete files the scans attached to cursor ``con`` read."""
    noted = list(_NOTED.get(con, ()))
    try:
        names = con.execute("SELECT name FROM duckdb_variables() ORDER BY name").fetchall()
        files: list[str] = []
        for (name,) in names:
            if _FILE_LIST.search(name):
                # fetchall: a fetchone would leave the result unfinished, and DuckDB then
                # refuses any other work on the cursor (the statement's own cleanup)
                ((value,),) = con.execute(f"SELECT getvariable({quote_string(name)})").fetchall()
                files.extend(value or ())
    except duckdb.Error:  # the cursor is unusable now (closed, interrupted): only the noted
        return list(dict.fromkeys(noted))
    return list(dict.fromkeys([*noted, *files]))


def find_damaged(con: Duck, paths: Sequence[str], budget: int = PROBE_BYTES) -> tuple[str, str] | None:
    """(path, DuckDB's message) of the first Parquet file among ``paths`` that DuckDB cannot
    read through, footer and every page; None if all read (or the budget ran out first)."""
    spent = 0
    for path in paths:
        try:
            spent += fileio.file_size(path)
        except IceduckError as e:  # missing, unreadable: that is the broken one
            return path, str(e)
        if spent > budget:
            return None
        try:
            con.execute(
                f"SELECT bit_xor(hash(t)) FROM read_parquet({quote_string(path)}) AS {quote_identifier('t')}"
            ).fetchall()
        except duckdb.InterruptException:
            return None
        except duckdb.Error as e:
            return path, error_message(e)
    return None
