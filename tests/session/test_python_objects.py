"""DataFrames and Arrow objects as tables in statements: the caller's variables, registered
objects, which name wins, and writes from them -- compared with plain DuckDB over the same
objects wherever DuckDB answers the same question."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import iceduck
from iceduck.connection import Connection

QUERY = "SELECT id, name FROM frame WHERE id > 1 ORDER BY id"


@pytest.fixture
def con(tmp_path: Any) -> Iterator[Connection]:
    with iceduck.connect(tmp_path / "wh") as con:
        con.execute("CREATE NAMESPACE db")
        con.execute("CREATE TABLE db.t (id bigint, name string)")
        con.execute("INSERT INTO db.t VALUES (10, 'iceberg')")
        yield con


def arrow_frame() -> pa.Table:
    return pa.table({"id": [1, 2, 3], "name": ["a", "b", None]})


class OnlyStream:
    """An object DuckDB knows only by its Arrow PyCapsule stream."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.table.__arrow_c_stream__(requested_schema)


FRAMES = {
    "pandas": lambda: arrow_frame().to_pandas(),
    "polars": lambda: pl.from_arrow(arrow_frame()),
    "polars lazy": lambda: pl.from_arrow(arrow_frame()).lazy(),  # type: ignore[union-attr]
    "arrow table": arrow_frame,
    "record batch": lambda: arrow_frame().to_batches()[0],
    "record batch reader": lambda: arrow_frame().to_reader(),
    "dataset": lambda: ds.dataset(arrow_frame()),
    "arrow c stream": lambda: OnlyStream(arrow_frame()),
}


@pytest.mark.parametrize("kind", FRAMES)
def test_a_variable_reads_as_duckdb_reads_it(con: Connection, kind: str) -> None:
    frame = FRAMES[kind]()
    got = con.execute(QUERY).fetchall()
    frame = FRAMES[kind]()  # a reader is read once: a fresh one for DuckDB  # noqa: F841 (read by name in the SQL)
    assert got == duckdb.connect().execute(QUERY).fetchall() == [(2, "b"), (3, None)]


def test_every_statement_kind_reads_a_variable(con: Connection) -> None:
    frame = arrow_frame().to_pandas()  # noqa: F841 (read by name in the SQL)
    plain = duckdb.connect()
    for sql in (
        "SELECT f.name, frame.id FROM frame AS f JOIN frame ON f.id = frame.id ORDER BY 2",
        "SELECT frame.id FROM frame WHERE frame.id IN (SELECT id FROM frame WHERE id < 3) ORDER BY 1",
        "DESCRIBE frame",
        "DESCRIBE SELECT * FROM frame",
    ):
        assert con.execute(sql).fetchall() == plain.execute(sql).fetchall(), sql
    explained = [row[0] for row in con.execute("EXPLAIN SELECT * FROM frame").fetchall()]
    assert explained[0] == "no Iceberg tables in this query" and "DuckDB plan:" in explained
    # a variable joined with an Iceberg table
    assert con.execute("SELECT count(*) FROM db.t, frame").fetchone() == (3,)


def test_a_local_wins_over_a_global_and_outer_frames_are_searched(con: Connection) -> None:
    frame = pa.table({"id": [7], "name": ["local"]})  # noqa: F841 (read by name in the SQL)

    def inner() -> list[Any]:
        return con.execute("SELECT name FROM frame").fetchall()  # frame: the caller's local

    assert inner() == duckdb.connect().execute("SELECT name FROM frame").fetchall() == [("local",)]
    assert globals()["GLOBAL_FRAME"] is not None
    assert con.execute("SELECT name FROM GLOBAL_FRAME").fetchall() == [("global",)]


GLOBAL_FRAME = pd.DataFrame({"name": ["global"]})


def test_pandas_read_sql_sees_the_callers_variables(con: Connection) -> None:
    frame = arrow_frame()  # noqa: F841 (read by name in the SQL)
    with pytest.warns(UserWarning):  # pandas: "only supports SQLAlchemy connectable..."
        got = pd.read_sql("SELECT id FROM frame ORDER BY id", con)
    assert got["id"].tolist() == [1, 2, 3]


def test_executemany_reads_variables(con: Connection) -> None:
    frame = arrow_frame()  # noqa: F841 (read by name in the SQL)
    cur = con.cursor()
    cur.executemany("INSERT INTO db.t SELECT id, name FROM frame WHERE id = ?", [[1], [3]])
    assert cur.rowcount == 2
    assert con.execute("SELECT id, name FROM db.t ORDER BY id").fetchall() == [
        (1, "a"),
        (3, None),
        (10, "iceberg"),
    ]


# -- which name wins ---------------------------------------------------------------------------


def test_an_iceberg_table_of_the_current_namespace_wins_over_a_variable(con: Connection) -> None:
    t = pa.table({"id": [1], "name": ["variable"]})  # noqa: F841 (read by name in the SQL)
    assert con.execute("SELECT name FROM t").fetchall() == [("variable",)]  # no namespace in use
    con.execute("USE db")
    assert con.execute("SELECT name FROM t").fetchall() == [("iceberg",)]


def test_a_duckdb_relation_and_a_cte_win_over_a_variable(con: Connection) -> None:
    pg_tables = pa.table({"x": [1]})  # noqa: F841 (read by name in the SQL)
    sql = "SELECT count(*) > 0 FROM pg_tables WHERE tablename IS NOT NULL OR true"
    assert con.execute(sql).fetchall() == duckdb.connect().execute(sql).fetchall()
    assert "x" not in [d[0] for d in con.execute("SELECT * FROM pg_tables").description or ()]
    frame = arrow_frame()  # noqa: F841 (read by name in the SQL)
    sql = "WITH frame AS (SELECT 42 AS id) SELECT id FROM frame"
    assert con.execute(sql).fetchall() == duckdb.connect().execute(sql).fetchall() == [(42,)]


def test_a_registered_object_wins_over_an_iceberg_table_and_a_variable(con: Connection) -> None:
    t = pa.table({"name": ["variable"]})  # noqa: F841 (read by name in the SQL)
    con.execute("USE db")
    con.register("T", pd.DataFrame({"name": ["registered"]}))  # names compare without case
    assert con.execute("SELECT name FROM t").fetchall() == [("registered",)]
    assert con.execute("SELECT name FROM db.t").fetchall() == [("iceberg",)]  # a dotted name is Iceberg's
    assert con.unregister("t") is con
    assert con.execute("SELECT name FROM t").fetchall() == [("iceberg",)]
    con.unregister("never registered")  # no error, as in DuckDB
    plain = duckdb.connect().register("t", pd.DataFrame({"name": ["registered"]}))
    assert plain.execute("SELECT name FROM t").fetchall() == [("registered",)]  # DuckDB: the same


def test_a_variable_name_is_case_sensitive_as_in_duckdb(con: Connection) -> None:
    frame = arrow_frame()  # noqa: F841 (read by name in the SQL)
    with pytest.raises(duckdb.CatalogException):
        duckdb.connect().execute("SELECT * FROM FRAME")
    with pytest.raises(iceduck.ProgrammingError, match="table FRAME does not exist"):
        con.execute("SELECT * FROM FRAME")


def test_a_registered_object_is_seen_by_every_cursor_a_cursors_own_only_by_it(con: Connection) -> None:
    registered = con.register("reg", arrow_frame())
    assert registered is con
    assert con.cursor().execute("SELECT count(*) FROM reg").fetchone() == (3,)
    mine = con.cursor()
    mine.register("mine", arrow_frame())
    assert mine.execute("SELECT count(*) FROM mine").fetchone() == (3,)
    with pytest.raises(iceduck.ProgrammingError, match="table mine does not exist"):
        con.cursor().execute("SELECT count(*) FROM mine")
    mine.unregister("mine")
    with pytest.raises(iceduck.ProgrammingError, match="table mine does not exist"):
        mine.execute("SELECT count(*) FROM mine")


def test_register_refuses_what_is_not_a_table(con: Connection) -> None:
    with pytest.raises(iceduck.ProgrammingError, match="object of type int is not a table"):
        con.register("x", 5)
    with pytest.raises(iceduck.ProgrammingError, match="needs a name"):
        con.register("", arrow_frame())


def test_an_unknown_name_or_a_variable_that_is_no_table(con: Connection) -> None:
    with pytest.raises(iceduck.ProgrammingError) as missing:
        con.execute("SELECT * FROM nowhere")
    assert str(missing.value).startswith("table nowhere does not exist (no namespace is in use")
    t = 5
    with pytest.raises(iceduck.ProgrammingError) as not_table:
        con.execute("SELECT * FROM t")
    message = str(not_table.value)
    assert "namespace db has a table t" in message  # where it looked
    assert "the Python variable t is of type int, not a table" in message
    assert t == 5


def test_a_record_batch_reader_is_read_once(con: Connection) -> None:
    frame = arrow_frame().to_reader()  # noqa: F841 (read by name in the SQL)
    assert con.execute("SELECT count(*) FROM frame").fetchone() == (3,)
    with pytest.raises(iceduck.Error, match="already been consumed"):
        con.execute("SELECT count(*) FROM frame").fetchall()


# -- objects are held for the statement only -----------------------------------------------------


def test_no_object_is_kept_alive_after_a_write(con: Connection) -> None:
    cur = con.cursor()

    def insert() -> weakref.ref[pd.DataFrame]:
        # in a frame that ends: before Python 3.13 reading a frame's locals leaves a snapshot
        # of them on the frame (for DuckDB's replacement scans too), alive as long as the frame
        frame = arrow_frame().to_pandas()
        cur.execute("INSERT INTO db.t SELECT * FROM frame")
        return weakref.ref(frame)

    alive = insert()
    gc.collect()
    assert alive() is None  # the cursor still holds the INSERT's result, but not the frame
    assert cur.rowcount == 3


def test_a_query_holds_its_objects_until_its_result_is_closed(con: Connection) -> None:
    cur = con.cursor()

    def query() -> weakref.ref[pa.Table]:
        frame = arrow_frame()
        cur.execute("SELECT * FROM frame")
        return weakref.ref(frame)

    alive = query()
    gc.collect()
    assert alive() is not None  # the result streams from it
    assert cur.fetchall()[0] == (1, "a")
    cur.close()
    gc.collect()
    assert alive() is None


# -- writes from a frame land with the table's field ids and types -------------------------------

COLUMNS = (
    "id int, s string, n bigint, f double, d string, ts timestamp, ntz timestamp_ntz, "
    "l array<int>, st struct<a: int, b: string>, dec decimal(10,2)"
)
VALUES = """
    (1, 'x', 1, 1.5, 'p', TIMESTAMPTZ '2024-01-01 09:00:00+00', TIMESTAMP '2024-01-01 10:00:00.123457',
     [1, 2], {'a': 1, 'b': 'u'}, 1.25),
    (2, NULL, NULL, NULL, 'q', TIMESTAMPTZ '2024-01-02 10:00:00+00', TIMESTAMP '2024-01-02 11:00:00.5',
     NULL, NULL, 2.5)
"""


def typed_frames() -> dict[str, Any]:
    """The rows of ``VALUES`` as pandas, polars and Arrow hold them: object and categorical
    strings, an int64 column with NaN (float), string_view, dictionary columns, timestamps
    with a zone and in nanoseconds, nested lists and structs."""
    pandas = pd.DataFrame(
        {
            "id": pd.Series([1, 2], dtype="int64"),
            "s": pd.Series(["x", None], dtype=object),
            "n": [1.0, np.nan],
            "f": [1.5, np.nan],
            "d": pd.Categorical(["p", "q"]),
            "ts": pd.to_datetime(["2024-01-01 10:00", "2024-01-02 11:00"]).tz_localize("Europe/Paris"),
            "ntz": pd.to_datetime(["2024-01-01 10:00:00.123456789", "2024-01-02 11:00:00.5"]),
            "l": [[1, 2], None],
            "st": [{"a": 1, "b": "u"}, None],
            "dec": [1.25, 2.5],
        }
    )
    arrow = pa.table(
        {
            "id": pa.array([1, 2], pa.int8()),
            "s": pa.array(["x", None], pa.large_string()),
            "n": pa.array([1, None], pa.int32()),
            "f": pa.array([1.5, None], pa.float32()),
            "d": pa.array(["p", "q"]).dictionary_encode(),
            "ts": pa.array(
                [datetime(2024, 1, 1, 9, tzinfo=UTC), datetime(2024, 1, 2, 10, tzinfo=UTC)],
                pa.timestamp("ns", "UTC"),
            ),
            "ntz": pa.array([datetime(2024, 1, 1, 10, 0, 0, 123457), datetime(2024, 1, 2, 11, 0, 0, 500000)]),
            "l": pa.array([[1, 2], None], pa.large_list(pa.int64())),
            "st": pa.array([{"a": 1, "b": "u"}, None]),
            "dec": pa.array([Decimal("1.25"), Decimal("2.5")], pa.decimal128(5, 2)),
        }
    )
    polars = pl.from_arrow(arrow).with_columns(  # type: ignore[union-attr]
        pl.col("s").cast(pl.String), pl.col("d").cast(pl.String).cast(pl.Categorical)
    )
    return {"pandas": pandas, "polars": polars, "arrow": arrow}


def field_ids(con: Connection, table: str) -> list[tuple[str, int, str]]:
    """(name, field id, Arrow type) of every field, nested ones too, of the table's data file."""
    path = con.execute(f"SELECT file_path FROM {table}.files").fetchone()[0]  # type: ignore[index]
    found: list[tuple[str, int, str]] = []

    def walk(fields: Any) -> None:
        for field in fields:
            found.append((field.name, int(field.metadata[b"PARQUET:field_id"]), str(field.type)))
            if pa.types.is_struct(field.type):
                walk(field.type.fields)
            elif pa.types.is_list(field.type):
                walk([field.type.value_field])

    walk(pq.read_schema(path.removeprefix("file:")))
    return found


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow"])
def test_insert_ctas_and_merge_from_a_frame_equal_plain_sql(con: Connection, kind: str) -> None:
    frame = typed_frames()[kind]  # noqa: F841 (read by name in the SQL)
    con.execute(f"CREATE TABLE db.want ({COLUMNS})")
    con.execute(f"INSERT INTO db.want VALUES {VALUES}")
    want = con.execute("SELECT * FROM db.want ORDER BY id").fetchall()
    con.execute(f"CREATE TABLE db.got ({COLUMNS})")
    con.execute("INSERT INTO db.got SELECT * FROM frame")
    assert con.execute("SELECT * FROM db.got ORDER BY id").fetchall() == want
    assert field_ids(con, "db.got") == field_ids(con, "db.want")
    con.execute("DELETE FROM db.got")
    con.execute("MERGE INTO db.got g USING frame s ON g.id = s.id WHEN NOT MATCHED THEN INSERT *")
    assert con.execute("SELECT * FROM db.got ORDER BY id").fetchall() == want
    con.execute("MERGE INTO db.got g USING frame s ON g.id = s.id WHEN MATCHED THEN UPDATE SET s = 'merged'")
    assert con.execute("SELECT DISTINCT s FROM db.got").fetchall() == [("merged",)]
    con.execute("UPDATE db.got SET s = 'u' WHERE id IN (SELECT id FROM frame WHERE id = 1)")
    con.execute("DELETE FROM db.got WHERE id IN (SELECT id FROM frame WHERE id = 2)")
    assert con.execute("SELECT id, s FROM db.got").fetchall() == [(1, "u")]


def test_ctas_from_a_frame_takes_duckdbs_types(con: Connection) -> None:
    frame = arrow_frame().to_pandas()  # noqa: F841 (read by name in the SQL)
    con.execute("CREATE TABLE db.c AS SELECT * FROM frame")
    assert con.execute("SELECT * FROM db.c ORDER BY id").fetchall() == (
        duckdb.connect().execute("SELECT * FROM frame ORDER BY id").fetchall()
    )
    described = [row[:2] for row in con.execute("DESCRIBE db.c").fetchall()]
    assert described == [("id", "BIGINT"), ("name", "VARCHAR")]
