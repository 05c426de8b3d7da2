"""A statement's rows on its DuckDB cursor: a bound query runs at the first fetch, in the form
that fetch asks for, and every form gives what plain DuckDB gives for the same query."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import pandas as pd
import pyarrow as pa
import pytest

from iceduck.engine.results import StatementRows

QUERY = "SELECT i, 'v' || i AS s, i / 4 AS d, [i, i + 1] AS l FROM range(2500) t(i) WHERE i >= $1 ORDER BY i"
PARAMS = [100]


@pytest.fixture
def db() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    yield con
    con.close()


def bound(db: duckdb.DuckDBPyConnection, query: str = QUERY) -> StatementRows:
    return StatementRows.bind(db.cursor(), query, PARAMS)


def plain(db: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyRelation:
    return db.cursor().sql(QUERY, params=PARAMS)


def test_binding_raises_binder_errors_and_describes_before_any_row(db: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duckdb.BinderException, match="nosuch"):
        bound(db, "SELECT nosuch FROM range(3) WHERE $1 > 0")
    rows = bound(db)
    cursor = db.cursor()
    cursor.execute(QUERY, PARAMS)
    assert rows.description == [(d[0], d[1]) for d in cursor.description]
    assert [name for name, _ in rows.description or ()] == ["i", "s", "d", "l"]


def test_rows_forms_are_plain_duckdbs(db: duckdb.DuckDBPyConnection) -> None:
    expected = plain(db).fetchall()
    rows = bound(db)
    got = [rows.fetchone(), *rows.fetchmany(7), *rows.fetchall()]
    assert got == expected
    assert rows.fetchone() is None and rows.fetchall() == []


def test_arrow_forms_are_plain_duckdbs(db: duckdb.DuckDBPyConnection) -> None:
    expected = plain(db).to_arrow_table()
    assert bound(db).arrow_table().equals(expected)
    reader = bound(db).record_batch_reader(1000)
    batches = list(reader)
    assert [b.num_rows for b in batches] == [1000, 1000, 400]
    assert pa.Table.from_batches(batches, reader.schema).equals(expected)
    pd.testing.assert_frame_equal(bound(db).pandas_frame(), plain(db).df())


def test_an_arrow_form_consumes_the_rows_and_keeps_the_description(db: duckdb.DuckDBPyConnection) -> None:
    rows = bound(db)
    described = rows.description
    table = rows.arrow_table()
    assert table.num_rows == 2400
    assert rows.description == described
    assert rows.fetchone() is None and rows.fetchmany(3) == [] and rows.fetchall() == []
    rest = rows.arrow_table()
    assert rest.num_rows == 0 and rest.schema == table.schema
    assert list(rows.record_batch_reader()) == []


def test_rows_first_then_arrow_reads_the_rest(db: duckdb.DuckDBPyConnection) -> None:
    rows = bound(db)
    assert rows.fetchone() == (100, "v100", 25.0, [100, 101])
    rest = rows.arrow_table()
    assert rest.num_rows == 2399 and rest["i"][0].as_py() == 101


def test_every_read_runs_inside_running(db: duckdb.DuckDBPyConnection) -> None:
    entered = []

    @contextmanager
    def running() -> Iterator[None]:
        entered.append(True)
        yield

    rows = StatementRows.bind(db.cursor(), QUERY, PARAMS, running)
    assert entered == []  # binding runs nothing
    rows.fetchmany(2)
    assert len(entered) == 2  # the run, then the fetch
    reader = StatementRows.bind(db.cursor(), QUERY, PARAMS, running).record_batch_reader(1000)
    before = len(entered)
    assert sum(batch.num_rows for batch in reader) == 2400
    assert len(entered) - before >= 3  # each batch pulled from DuckDB


def test_a_runtime_error_raises_at_the_first_fetch_of_each_form(db: duckdb.DuckDBPyConnection) -> None:
    failing = "SELECT CAST('x' || i AS INTEGER) FROM range(3) t(i) WHERE i >= $1"
    for read in (
        lambda r: r.fetchall(),
        lambda r: r.fetchone(),
        lambda r: r.arrow_table(),
        lambda r: r.record_batch_reader().read_all(),
        lambda r: r.pandas_frame(),
    ):
        rows = StatementRows.bind(db.cursor(), failing, [0])  # binding succeeds
        with pytest.raises(Exception, match="Could not convert string 'x0'"):
            read(rows)


def test_a_query_duckdb_runs_at_once_runs_once(db: duckdb.DuckDBPyConnection) -> None:
    db.execute("CREATE SEQUENCE seq")
    writes = "SELECT nextval('seq') AS n FROM range(3)"  # DuckDB runs it when bound
    assert StatementRows.bind(db.cursor(), writes, None).fetchall() == [(1,), (2,), (3,)]
    assert StatementRows.bind(db.cursor(), writes, None).arrow_table()["n"].to_pylist() == [4, 5, 6]
    assert db.execute("SELECT nextval('seq')").fetchall() == [(7,)]
