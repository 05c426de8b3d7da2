"""A DuckDB Arrow stream whose failures are iceduck's errors.

DuckDB's ``to_arrow_reader`` hands out a ``pyarrow.RecordBatchReader`` that pulls each
batch from DuckDB as it is read. A failure after the first batch -- a damaged data file
met half-way, an interrupt -- then crosses the Arrow C stream interface, which keeps only
the message: pyarrow raises it as a plain ``OSError`` (``Invalid Input Error: Failed to
read file "...": ZSTD Decompression failure``). :func:`translating_reader` wraps the reader
so that such an error becomes the DuckDB exception its message names again
(:func:`duckdb_error_of_stream`) and then the iceduck error it means, naming the file at
fault like every other form of a result. The wrapper is a reader too (pyarrow pulls one
batch at a time from a generator), so nothing is read ahead or copied.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

import duckdb

from iceduck.engine.errors import translate_duckdb_error

if TYPE_CHECKING:
    import pyarrow as pa

    from iceduck.engine.connection import Duck

#: DuckDB's message prefix (``<type> Error: ...``) -> the exception class it raises in Python
_KINDS: dict[str, type[duckdb.Error]] = {
    "Invalid Input": duckdb.InvalidInputException,
    "IO": duckdb.IOException,
    "HTTP": duckdb.HTTPException,
    "INTERRUPT": duckdb.InterruptException,
    "Conversion": duckdb.ConversionException,
    "Out of Range": duckdb.OutOfRangeException,
    "Not implemented": duckdb.NotImplementedException,
    "Constraint": duckdb.ConstraintException,
    "Serialization": duckdb.SerializationException,
    "INTERNAL": duckdb.InternalException,
    "Binder": duckdb.BinderException,
    "Catalog": duckdb.CatalogException,
}
_PREFIX = re.compile(r"^([A-Za-z ]+?) Error: ")


def duckdb_error_of_stream(error: BaseException) -> duckdb.Error | None:
    """The DuckDB exception an Arrow stream error carries the message of; None when the
    error did not come from DuckDB (pyarrow's own, or a Python one)."""
    if isinstance(error, duckdb.Error):
        return error
    if not isinstance(error, OSError):  # what pyarrow raises for a producer's failure
        return None
    message = str(error)
    match = _PREFIX.match(message)
    if match is None:
        return None
    kind = _KINDS.get(match.group(1), duckdb.Error)
    return kind(message)


def translated(error: BaseException, con: Duck) -> BaseException:
    """The iceduck error for a failure reading a result of ``con`` in any form; ``error``
    itself when it is not DuckDB's."""
    from_duckdb = duckdb_error_of_stream(error)
    if from_duckdb is None:
        return error
    return translate_duckdb_error(from_duckdb, con=con) or error


@contextmanager
def raised_as_iceduck(con: Duck) -> Iterator[None]:
    """Raise a DuckDB error met in the block (also one that crossed an Arrow stream) as the
    iceduck error :func:`translated` says."""
    try:
        yield
    except Exception as e:
        error = translated(e, con)
        if error is e:
            raise
        raise error from e


def translating_reader(
    reader: pa.RecordBatchReader, con: Duck, running: Callable[[], AbstractContextManager[Any]]
) -> pa.RecordBatchReader:
    """``reader``'s batches, each read while ``running()`` holds (so an interrupt reaches
    it), its failures raised as iceduck's errors."""
    import pyarrow as pa

    def batches() -> Iterator[pa.RecordBatch]:
        while True:
            try:
                with running(), raised_as_iceduck(con):
                    batch = reader.read_next_batch()
            except StopIteration:
                return
            yield batch

    return pa.RecordBatchReader.from_batches(reader.schema, batches())
