"""A DuckDB Arrow stream that fails half-way raises iceduck's error for DuckDB's failure,
after the batches DuckDB produced before it."""

from __future__ import annotations

from contextlib import nullcontext

import duckdb
import pytest

from iceduck.engine.arrow_stream import duckdb_error_of_stream, translated, translating_reader
from iceduck.errors import UserError

#: run single-threaded, so that the rows come out in order and the failure comes after the
#: first batches (DuckDB computes a few hundred thousand rows ahead of the reader)
FAILS_LATE = (
    "SELECT CASE WHEN i < 1000000 THEN i ELSE error('stopped at ' || i) END AS i FROM range(3000000) t(i)"
)


def test_a_stream_error_is_the_duckdb_exception_its_message_names() -> None:
    error = duckdb_error_of_stream(OSError('Invalid Input Error: Failed to read file "/x.parquet": ZSTD'))
    assert isinstance(error, duckdb.InvalidInputException) and "/x.parquet" in str(error)
    assert isinstance(
        duckdb_error_of_stream(OSError("INTERRUPT Error: Interrupted!")), duckdb.InterruptException
    )
    assert type(duckdb_error_of_stream(OSError("Strange Error: what"))) is duckdb.Error
    assert duckdb_error_of_stream(OSError(2, "No such file or directory")) is None  # not DuckDB's
    assert duckdb_error_of_stream(ValueError("Invalid Input Error: x")) is None
    original = duckdb.IOException("IO Error: x")
    assert duckdb_error_of_stream(original) is original


def test_translated_keeps_what_is_not_duckdbs() -> None:
    con = duckdb.connect()
    error = ValueError("nothing to do with DuckDB")
    assert translated(error, con) is error
    assert isinstance(translated(OSError("INTERRUPT Error: Interrupted!"), con), UserError)


def test_a_failure_half_way_comes_after_the_first_batches_as_an_iceduck_error() -> None:
    con = duckdb.connect(config={"threads": 1})
    raw = con.sql(FAILS_LATE).to_arrow_reader(1000)
    reader = translating_reader(raw, con, nullcontext)
    assert reader.schema.names == ["i"]
    first = reader.read_next_batch()  # DuckDB streams: the failing rows are not computed yet
    assert first.num_rows == 1000 and first["i"][0].as_py() == 0
    read = first.num_rows
    with pytest.raises(UserError, match="stopped at 1000000") as caught:
        for batch in reader:
            read += batch.num_rows
    assert 1000 < read <= 1000000
    assert isinstance(caught.value.__cause__, OSError)  # what crossed the Arrow stream
