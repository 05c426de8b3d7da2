"""Arrow-native results: tables, batch streams, pandas and polars frames, the PyCapsule stream,
and ``pandas.read_sql`` / ``polars.read_database`` on an iceduck connection."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import CorruptDataError

ROWS = 10
ROOT = Path(__file__).resolve().parents[2]
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


# -- streaming: a query runs at its first fetch, in the form asked ---------------------------------

BIG = 30_000


@pytest.fixture(scope="module")
def deleted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Connection, list[str]]]:
    """A merge-on-read table of two files with every 7th row deleted (the scans register
    their deletes on the statement's cursor, which must outlive a lazily read result)."""
    with iceduck.connect(tmp_path_factory.mktemp("stream") / "wh") as con:
        con.execute("CREATE NAMESPACE db")
        con.execute(
            "CREATE TABLE db.big (id bigint, s string, v double) "
            "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
        )
        for part in range(2):
            con.execute(
                "INSERT INTO db.big SELECT i, 's' || i, i / 3 FROM range(?, ?) t(i)",
                [part * BIG // 2, (part + 1) * BIG // 2],
            )
        con.execute("DELETE FROM db.big WHERE id % 7 = 0")
        files = [row[0] for row in con.execute("SELECT file_path FROM db.big.data_files").fetchall()]
        yield con, files


BIG_QUERY = "SELECT id, s, v FROM db.big WHERE id >= ? ORDER BY id"


def plain_duckdb(files: list[str]) -> pa.Table:
    """What DuckDB itself answers over the table's data files, applying the delete by hand."""
    import duckdb

    listed = "[" + ", ".join(f"'{f.removeprefix('file:')}'" for f in files) + "]"
    return (
        duckdb.connect()
        .sql(f"SELECT id, s, v FROM read_parquet({listed}) WHERE id % 7 <> 0 AND id >= 10 ORDER BY id")
        .to_arrow_table()
    )


def test_every_form_answers_what_plain_duckdb_answers(deleted: tuple[Connection, list[str]]) -> None:
    con, files = deleted
    expected = plain_duckdb(files)
    rows = [tuple(r.values()) for r in expected.to_pylist()]
    assert con.execute(BIG_QUERY, [10]).fetchall() == rows
    cur = con.execute(BIG_QUERY, [10])
    chunks = [cur.fetchone(), *cur.fetchmany(1000)]
    while chunk := cur.fetchmany(4096):
        chunks.extend(chunk)
    assert chunks == rows
    assert list(con.execute(BIG_QUERY, [10])) == rows
    assert con.execute(BIG_QUERY, [10]).fetch_arrow_table().equals(expected)
    reader = con.execute(BIG_QUERY, [10]).fetch_record_batch(1000)
    batches = list(reader)
    assert len(batches) > 20 and pa.Table.from_batches(batches, reader.schema).equals(expected)
    assert pa.table(con.execute(BIG_QUERY, [10])).equals(expected)
    assert con.execute(BIG_QUERY, [10]).pl().equals(pl.from_arrow(expected))
    pd.testing.assert_frame_equal(con.execute(BIG_QUERY, [10]).df(), expected.to_pandas())


def test_a_stream_hands_out_batches_before_the_result_exists(con: Connection) -> None:
    """The first batch arrives although computing the whole result would fail: the reader
    is DuckDB's stream, not a copy of a finished result."""
    con.session.database.execute("SET GLOBAL threads = 1")  # rows in order (test-only handle)
    try:
        reader = con.execute(
            "SELECT CASE WHEN i < 1000000 THEN i ELSE error('stopped at ' || i) END AS i "
            "FROM range(3000000) t(i)"
        ).fetch_record_batch(1000)
        assert reader.read_next_batch()["i"][0].as_py() == 0
        with pytest.raises(iceduck.ProgrammingError, match="stopped at 1000000"):
            reader.read_all()
    finally:
        con.session.database.execute("RESET GLOBAL threads")


#: reads ~450 MB of Arrow batch by batch, in a fresh process, and prints how much its peak
#: resident set grew and how many bytes it read
STREAM_SCRIPT = """
import sys, iceduck
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
con = iceduck.connect(sys.argv[1])
query = "SELECT i, repeat('x', 300) || i AS s FROM range(1500000) t(i)"
start = peak()
read = 0
for batch in con.execute(query).fetch_record_batch(20000):
    read += batch.nbytes
print(peak() - start, read)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_stream_reads_in_flat_memory(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", STREAM_SCRIPT, str(tmp_path / "wh")],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
    )
    grown, read = map(int, out.stdout.split())
    assert read > 400 << 20
    assert grown < read / 4, f"peak grew by {grown >> 20} MB reading {read >> 20} MB batch by batch"


def test_a_damaged_file_is_named_by_every_form(tmp_path: Path) -> None:
    with iceduck.connect(tmp_path / "wh") as con:
        con.execute("CREATE NAMESPACE db")
        con.execute("CREATE TABLE db.t AS SELECT i AS id, md5(i::VARCHAR) AS s FROM range(200000) t(i)")
        path = con.execute("SELECT file_path FROM db.t.data_files").fetchone()[0].removeprefix("file:")
    data = bytearray(Path(path).read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 4096):
        data[i] ^= 0x5A
    Path(path).write_bytes(bytes(data))
    forms: dict[str, Callable[[Any], Any]] = {
        "fetchall": lambda cur: cur.fetchall(),
        "fetchone": lambda cur: [cur.fetchone() for _ in range(200000)],
        "fetchmany": lambda cur: [cur.fetchmany(1000) for _ in range(200)],
        "iteration": lambda cur: list(cur),
        "fetch_arrow_table": lambda cur: cur.fetch_arrow_table(),
        "fetch_record_batch": lambda cur: cur.fetch_record_batch(1000).read_all(),
        "df": lambda cur: cur.df(),
        "pl": lambda cur: cur.pl(),
        "pyarrow.table": lambda cur: pa.table(cur),
    }
    with iceduck.connect(tmp_path / "wh") as con:
        for name, read in forms.items():
            cur = con.execute("SELECT * FROM db.t")  # binding reads no data
            with pytest.raises(Exception) as caught:
                read(cur)
            assert path in str(caught.value), name
            if name != "pyarrow.table":  # pyarrow re-raises what crossed the stream as its own
                assert isinstance(caught.value, CorruptDataError), name
