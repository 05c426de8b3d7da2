"""Arrow-native results: tables, batch streams, pandas and polars frames, the PyCapsule stream,
and ``pandas.read_sql`` / ``polars.read_database`` on an iceduck connection."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from decimal import Decimal

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import iceduck
from iceduck.connection import Connection

ROWS = 10
QUERY = "SELECT id, name, price FROM db.t ORDER BY id"


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Connection]:
    with iceduck.connect(tmp_path_factory.mktemp("arrow") / "wh") as con:
        con.execute("CREATE NAMESPACE db")
        con.execute("CREATE TABLE db.t (id bigint, name string, price decimal(10, 2))")
        con.executemany(
            "INSERT INTO db.t VALUES (?, ?, ?)", [(i, f"n{i}", Decimal(i) / 4) for i in range(ROWS)]
        )
        yield con


def expected() -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "name": [f"n{i}" for i in range(ROWS)],
            "price": pa.array([Decimal(i) / 4 for i in range(ROWS)], pa.decimal128(10, 2)),
        }
    )


def test_fetch_arrow_table_on_cursor_and_result(con: Connection) -> None:
    assert con.execute(QUERY).fetch_arrow_table().equals(expected())
    cur = con.execute(QUERY)
    assert cur.fetchone() == (0, "n0", Decimal("0.00"))
    rest = cur.to_arrow_table()  # what fetchone left
    assert rest.num_rows == ROWS - 1 and rest["id"][0].as_py() == 1
    assert cur.result is not None
    assert con.execute(QUERY).result.to_arrow_table().equals(expected())  # type: ignore[union-attr]
    assert con.execute(QUERY).result.fetch_arrow_table().equals(expected())  # type: ignore[union-attr]


def test_fetch_record_batch_streams_batches(con: Connection) -> None:
    reader = con.execute(QUERY).fetch_record_batch(rows_per_batch=4)
    assert isinstance(reader, pa.RecordBatchReader)
    batches = list(reader)
    assert [b.num_rows for b in batches] == [4, 4, 2]
    assert pa.Table.from_batches(batches).equals(expected())
    with pytest.raises(ValueError, match="rows_per_batch"):
        con.execute(QUERY).fetch_record_batch(0)


def test_pycapsule_stream_feeds_pyarrow_and_polars(con: Connection) -> None:
    assert pa.table(con.execute(QUERY)).equals(expected())
    assert pa.RecordBatchReader.from_stream(con.execute(QUERY)).read_all().equals(expected())
    frame = pl.DataFrame(con.execute(QUERY))
    assert frame["id"].to_list() == list(range(ROWS))
    result = con.execute(QUERY).result
    assert pa.table(result).equals(expected())


def test_df_and_pl(con: Connection) -> None:
    frame = con.execute(QUERY).df()
    assert isinstance(frame, pd.DataFrame)
    assert frame["id"].tolist() == list(range(ROWS)) and frame["name"].iloc[3] == "n3"
    polars_frame = con.execute(QUERY).pl()
    assert isinstance(polars_frame, pl.DataFrame)
    assert polars_frame.equals(pl.from_arrow(expected()))


def test_statement_without_rows_gives_empty_arrow(con: Connection) -> None:
    cur = con.execute("CREATE NAMESPACE IF NOT EXISTS scratch")
    assert cur.fetch_arrow_table().num_columns == 0
    assert list(cur.fetch_record_batch()) == []
    assert cur.df().empty and cur.pl().is_empty()


def test_missing_package_is_named(con: Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "polars", None)  # as if polars were not installed
    with pytest.raises(ImportError, match="pip install polars"):
        con.execute(QUERY).pl()


def test_pandas_read_sql(con: Connection) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # pandas: "only supports SQLAlchemy..."
        frame = pd.read_sql(QUERY, con)
        filtered = pd.read_sql("SELECT id FROM db.t WHERE id >= ? ORDER BY id", con, params=[8])
    assert list(frame.columns) == ["id", "name", "price"]
    assert frame["id"].tolist() == list(range(ROWS))
    assert filtered["id"].tolist() == [8, 9]


def test_polars_read_database(con: Connection) -> None:
    frame = pl.read_database(QUERY, con)
    assert frame.columns == ["id", "name", "price"]
    assert frame["id"].to_list() == list(range(ROWS))
    filtered = pl.read_database(
        "SELECT id FROM db.t WHERE id < ? ORDER BY id", con, execute_options={"parameters": [2]}
    )
    assert filtered["id"].to_list() == [0, 1]
