"""A session's own objects (temporary tables, views, macros, settings, COPY, SUMMARIZE,
PIVOT), each compared with plain DuckDB running the same statements over a copy of the
Iceberg table's rows."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb
import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import NotFoundError, UnsupportedError, UserError


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id bigint, s string, g int)")
    con.execute("INSERT INTO db.t SELECT i, 's' || i, i % 3 FROM range(20) r(i)")
    yield con
    con.close()


def plain(con: Connection) -> duckdb.DuckDBPyConnection:
    """Plain DuckDB with table ``t`` holding db.t's rows now."""
    duck = duckdb.connect()
    rows = con.execute("SELECT * FROM db.t").fetch_arrow_table()
    duck.register("rows", rows)
    duck.execute("CREATE TABLE t AS SELECT * FROM rows")
    duck.unregister("rows")
    return duck


def both(con: Connection, duck: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (``db.t`` for the Iceberg table) in iceduck, checked equal to
    plain DuckDB's (``t``), in order."""
    ours = con.execute(sql).fetchall()
    theirs = duck.execute(sql.replace("db.t", "t")).fetchall()
    assert ours == theirs
    return ours


def test_a_temporary_table_reads_and_is_written_with_iceberg_tables(con: Connection) -> None:
    duck = plain(con)
    statements = [
        "CREATE TEMP TABLE tmp AS SELECT * FROM db.t WHERE id < 5",
        "INSERT INTO tmp SELECT * FROM db.t WHERE id >= 17",
        "UPDATE tmp SET s = 'changed' WHERE id IN (SELECT id FROM db.t WHERE g = 1)",
        "DELETE FROM tmp WHERE id IN (SELECT max(id) FROM db.t)",
        "DELETE FROM tmp USING db.t AS x WHERE tmp.id = x.id AND x.id = 0",
    ]
    for sql in statements:
        ours = con.execute(sql)
        [(count,)] = duck.execute(sql.replace("db.t", "t")).fetchall()
        assert ours.rowcount == count and [d[0] for d in ours.description] == ["Count"]
        assert ours.fetchall() == [(count,)]
    assert both(con, duck, "SELECT * FROM tmp ORDER BY id")[0] == (1, "changed", 1)
    assert both(con, duck, "SELECT count(*) FROM tmp JOIN db.t USING (id)") == [(6,)]
    con.execute("DROP TABLE tmp")
    with pytest.raises(NotFoundError, match="tmp"):
        con.execute("SELECT * FROM tmp")


def test_a_temporary_table_with_columns_and_its_messages(con: Connection) -> None:
    cur = con.cursor()
    assert cur.execute("CREATE TEMPORARY TABLE k (a int, b varchar)").rowcount == -1
    assert cur.result is not None and cur.result.written is not None
    assert cur.result.written.message == "created temporary table k"
    cur.execute("INSERT INTO k VALUES (?, ?), (2, 'b')", [1, "a"])
    assert cur.rowcount == 2 and cur.result.written.message == "inserted 2 rows into k"
    cur.execute("ALTER TABLE k ADD COLUMN c int")
    cur.execute("UPDATE k SET c = a * 10")
    assert cur.execute("SELECT * FROM k ORDER BY a").fetchall() == [(1, "a", 10), (2, "b", 20)]
    cur.execute("TRUNCATE k")
    assert cur.execute("SELECT count(*) FROM k").fetchone() == (0,)
    cur.execute("CREATE OR REPLACE TEMP TABLE k AS SELECT 1 AS z")
    assert cur.execute("SELECT * FROM k").fetchall() == [(1,)]
    cur.execute("CREATE TEMP TABLE IF NOT EXISTS k AS SELECT 2 AS z")
    assert cur.execute("SELECT * FROM k").fetchall() == [(1,)]
    with pytest.raises(UserError, match="one-part name"):
        cur.execute("CREATE TEMP TABLE db.k (a int)")
    cur.execute("DROP TABLE k")
    cur.execute("DROP TABLE IF EXISTS k")  # neither a session table nor an Iceberg one: nothing to drop


def test_a_temporary_table_shadows_an_iceberg_table_of_the_current_namespace(con: Connection) -> None:
    con.execute("USE db")
    # the query reads the Iceberg table: the temporary table does not exist yet
    con.execute("CREATE TEMP TABLE t AS SELECT id FROM t WHERE id < 3")
    assert con.execute("SELECT count(*) FROM t").fetchone() == (3,)
    assert con.execute("SELECT count(*) FROM db.t").fetchone() == (20,)  # two parts: Iceberg
    con.execute("INSERT INTO t VALUES (99)")  # the temporary table
    assert con.execute("SELECT max(id) FROM t").fetchone() == (99,)
    con.execute("DROP TABLE t")  # the temporary table: the Iceberg one stays
    assert con.execute("SELECT count(*) FROM t").fetchone() == (20,)


def test_temporary_tables_take_dataframes_and_outrank_variables(con: Connection) -> None:
    import pyarrow as pa

    frame = pa.table({"id": [7, 8], "s": ["a", "b"], "g": [1, 2]})  # noqa: F841 (read by name)
    con.execute("CREATE TEMP TABLE tmp AS SELECT * FROM frame")  # a variable of this code
    con.execute("INSERT INTO tmp SELECT * FROM frame WHERE id IN (SELECT id FROM db.t)")
    tmp = pa.table({"id": [0]})  # a variable named like the temporary table: the table wins
    assert len(tmp) == 1
    assert con.execute("SELECT count(*), sum(id) FROM tmp").fetchone() == (4, 30)


def test_another_connection_does_not_see_the_session_objects(con: Connection, tmp_path: Path) -> None:
    con.execute("CREATE TEMP TABLE tmp AS SELECT 1 AS a")
    con.execute("CREATE VIEW v AS SELECT * FROM db.t")
    con.execute("CREATE MACRO twice(x) AS x * 2")
    other = iceduck.connect(tmp_path / "wh")
    try:
        for sql in ("SELECT * FROM tmp", "SELECT * FROM v", "SELECT twice(1)"):
            with pytest.raises(iceduck.Error):
                other.execute(sql)
        assert con.execute("SELECT twice(a) FROM tmp").fetchone() == (2,)  # each statement: a new cursor
    finally:
        other.close()


def test_show_tables_lists_the_session_tables_and_views_after_the_catalog_s(
    con: Connection, tmp_path: Path
) -> None:
    """As Spark lists its temporary views: in every listing, with an empty namespace."""
    con.execute("CREATE TEMP TABLE tmp AS SELECT 1 AS a")
    con.execute("CREATE VIEW v AS SELECT * FROM db.t")
    listed = [("db", "t"), ("", "tmp"), ("", "v")]
    assert con.execute("SHOW TABLES").fetchall() == listed
    assert con.execute("SHOW TABLES IN db").fetchall() == listed
    con.execute("DROP VIEW v")
    con.execute("DROP TABLE tmp")
    assert con.execute("SHOW TABLES").fetchall() == [("db", "t")]
    other = iceduck.connect(tmp_path / "wh")
    try:
        con.execute("CREATE VIEW v AS SELECT 1")
        assert other.execute("SHOW TABLES").fetchall() == [("db", "t")]
    finally:
        other.close()


def test_a_view_replans_its_iceberg_scan_at_each_use(con: Connection) -> None:
    view = "SELECT g, count(*) AS n, sum(id) AS total FROM db.t GROUP BY g"
    con.execute(f"CREATE VIEW v AS {view}")
    duck = plain(con)
    duck.execute(f"CREATE VIEW v AS {view.replace('db.t', 't')}")
    both(con, duck, "SELECT * FROM v ORDER BY g")
    con.execute("INSERT INTO db.t VALUES (100, 'new', 0)")  # a new snapshot
    duck.execute("INSERT INTO t VALUES (100, 'new', 0)")
    assert both(con, duck, "SELECT * FROM v ORDER BY g")[0] == (0, 8, 0 + 3 + 6 + 9 + 12 + 15 + 18 + 100)


def test_views_on_views_with_column_names(con: Connection) -> None:
    duck = plain(con)
    for sql in (
        "CREATE TEMP VIEW evens AS SELECT * FROM db.t WHERE id % 2 = 0",
        "CREATE VIEW totals (grp, total) AS SELECT g, CAST(sum(id) AS BIGINT) FROM evens GROUP BY g",
    ):
        con.execute(sql)
        duck.execute(sql.replace("db.t", "t"))
    both(con, duck, "SELECT * FROM totals ORDER BY grp")
    both(con, duck, "SELECT e.id, x.total FROM evens AS e JOIN totals x ON e.g = x.grp ORDER BY 1")
    both(con, duck, "WITH evens AS (SELECT 1 AS id) SELECT * FROM evens")  # the CTE wins
    # a view's rows go into an Iceberg table too
    con.execute("CREATE TABLE db.copy AS SELECT * FROM totals")
    assert (
        con.execute("SELECT * FROM db.copy ORDER BY grp").fetchall()
        == duck.execute("SELECT * FROM totals ORDER BY grp").fetchall()
    )
    con.execute("INSERT INTO db.copy SELECT grp, total FROM totals WHERE grp = 0")
    assert con.execute("SELECT count(*) FROM db.copy").fetchone() == (4,)
    # a view is expanded where it is used: totals sees the new evens (as in Spark)
    con.execute("CREATE OR REPLACE VIEW evens AS SELECT * FROM db.t WHERE id % 2 = 0 AND id > 4")
    expected = duck.execute("SELECT g, sum(id) FROM t WHERE id % 2 = 0 AND id > 4 GROUP BY g ORDER BY g")
    assert con.execute("SELECT * FROM totals ORDER BY grp").fetchall() == expected.fetchall()


def test_iceberg_writes_read_views(con: Connection) -> None:
    duck = plain(con)
    con.execute("CREATE VIEW small AS SELECT * FROM db.t WHERE id < 3")
    con.execute("CREATE VIEW changes AS SELECT 5 AS id, 'merged' AS s")
    duck.execute("CREATE VIEW changes AS SELECT 5 AS id, 'merged' AS s")
    assert con.execute("DELETE FROM db.t WHERE id IN (SELECT id FROM small)").rowcount == 3
    duck.execute("DELETE FROM t WHERE id < 3")
    con.execute("MERGE INTO db.t USING changes AS c ON t.id = c.id WHEN MATCHED THEN UPDATE SET s = c.s")
    duck.execute("UPDATE t SET s = c.s FROM changes AS c WHERE t.id = c.id")
    con.execute("UPDATE db.t SET g = 9 WHERE id IN (SELECT id + 1 FROM changes)")
    duck.execute("UPDATE t SET g = 9 WHERE id = 6")
    both(con, duck, "SELECT * FROM db.t ORDER BY id")
    assert con.execute("SELECT count(*) FROM small").fetchone() == (0,)  # re-planned: the rows are gone
    with pytest.raises(UserError, match="small is a view of this session"):
        con.execute("CREATE TEMP TABLE small AS SELECT 1")
    with pytest.raises(UserError, match="tmp is a temporary table of this session"):
        con.execute("CREATE TEMP TABLE tmp AS SELECT 1")
        con.execute("CREATE VIEW tmp AS SELECT 1")


def test_a_view_shadows_an_iceberg_table_for_one_part_names(con: Connection) -> None:
    con.execute("USE db")  # with a namespace in use, CREATE VIEW t would make the Iceberg view db.t
    con.execute("CREATE TEMP VIEW t AS SELECT * FROM db.t WHERE id < 2")
    assert con.execute("SELECT count(*) FROM t").fetchone() == (2,)
    assert con.execute("SELECT count(*) FROM db.t").fetchone() == (20,)


def test_view_errors_name_the_view(con: Connection) -> None:
    with pytest.raises(NotFoundError, match=r"^view nosuch does not exist$"):
        con.execute("DROP VIEW nosuch")
    con.execute("DROP VIEW IF EXISTS nosuch")
    con.execute("CREATE VIEW v AS SELECT 1 AS a")
    with pytest.raises(UserError, match="view v already exists"):
        con.execute("CREATE VIEW v AS SELECT 2 AS a")
    con.execute("CREATE VIEW IF NOT EXISTS v AS SELECT 2 AS a")
    assert con.execute("SELECT * FROM v").fetchall() == [(1,)]
    with pytest.raises(UserError, match="refers to itself"):
        con.execute("CREATE OR REPLACE VIEW v AS SELECT * FROM v")
    with pytest.raises(UserError, match="names 2 columns but its query has 1"):
        con.execute("CREATE VIEW w (a, b) AS SELECT 1")
    with pytest.raises(NotFoundError, match="nosuch"):
        con.execute("CREATE VIEW w AS SELECT * FROM db.nosuch")
    with pytest.raises(UnsupportedError, match="CREATE TEMPORARY VIEW takes a one-part name"):
        con.execute("CREATE TEMP VIEW db.w AS SELECT 1")
    with pytest.raises(UserError, match="session view"):
        con.execute("SELECT * FROM v VERSION AS OF 1")
    con.execute("DROP VIEW v")
    with pytest.raises(NotFoundError):
        con.execute("SELECT * FROM v")


def test_explain_of_a_query_over_a_view_shows_the_iceberg_scan(con: Connection) -> None:
    con.execute("CREATE VIEW v AS SELECT * FROM db.t")
    lines = [row[0] for row in con.execute("EXPLAIN SELECT * FROM v WHERE id = 3").fetchall()]
    assert lines[0] == "Iceberg scan of iceduck.db.t"
    assert "DuckDB plan:" in lines


def test_macros(con: Connection) -> None:
    duck = plain(con)
    for sql in (
        "CREATE MACRO bump(a, b := 1) AS a + b",
        "CREATE TEMP MACRO label(x) AS 'g' || x",
        "CREATE TEMP TABLE small AS SELECT * FROM db.t WHERE id < 6",
        "CREATE MACRO rows_of(k) AS TABLE SELECT * FROM small WHERE g = k",
    ):
        con.execute(sql)
        duck.execute(sql.replace("db.t", "t").replace("TEMP ", ""))
    both(con, duck, "SELECT bump(id), bump(id, b := 10), label(g) FROM db.t ORDER BY id")
    both(con, duck, "SELECT * FROM rows_of(1) ORDER BY id")
    with pytest.raises(UnsupportedError, match=r"macro m reads the Iceberg table db\.t: .* use a view"):
        con.execute("CREATE MACRO m(k) AS TABLE SELECT * FROM db.t WHERE g = k")
    con.execute("DROP MACRO bump")
    con.execute("DROP MACRO TABLE rows_of")
    with pytest.raises(iceduck.Error):
        con.execute("SELECT bump(1)")
    with pytest.raises(iceduck.Error):
        con.execute("SELECT * FROM rows_of(1)")


def test_set_and_reset_apply_to_the_whole_session(con: Connection) -> None:
    duck = duckdb.connect()
    for sql in (
        "SET memory_limit = '1GB'",
        "SET threads TO 1",
        "SET GLOBAL default_null_order = 'nulls_first'",
    ):
        con.execute(sql)  # each later statement runs on a new cursor: the settings hold there
        duck.execute(sql)
    setting = (
        "SELECT current_setting('memory_limit'), current_setting('threads'), "
        "current_setting('default_null_order')"
    )
    assert (
        con.execute(setting).fetchone() == duck.execute(setting).fetchone() == ("953.6 MiB", 1, "NULLS_FIRST")
    )
    both(con, duck, "SELECT x FROM (VALUES (1), (NULL)) v(x) ORDER BY x")
    con.execute("RESET threads")
    duck.execute("RESET threads")
    assert (
        con.execute("SELECT current_setting('threads')").fetchone()
        == duck.execute("SELECT current_setting('threads')").fetchone()
    )
    con.execute("SET search_path = 'memory.main'")  # a setting DuckDB keeps per connection: replayed
    assert con.execute("SELECT current_setting('search_path')").fetchone() == ("memory.main",)
    with pytest.raises(NotFoundError, match="nosuch"):
        con.execute("SET nosuch = 1")


def test_set_timezone_moves_the_session_time_zone(con: Connection) -> None:
    session = con.session
    assert session.timezone == "UTC"
    con.execute("SET TimeZone = 'America/New_York'")
    assert session.timezone == "America/New_York"
    assert con.execute("SELECT TIMESTAMPTZ '2024-01-01 00:00:00+00'::VARCHAR").fetchone() == (
        "2023-12-31 19:00:00-05",
    )
    con.execute("RESET TimeZone")  # iceduck's default, not the machine's
    assert session.timezone == "UTC"
    assert con.execute("SELECT current_setting('TimeZone')").fetchone() == ("UTC",)


def test_timestamp_as_of_reads_literals_in_the_set_time_zone(con: Connection) -> None:
    [(committed,)] = con.execute("SELECT committed_at FROM db.t.snapshots").fetchall()
    con.execute("INSERT INTO db.t VALUES (100, 'x', 0)")
    local = committed.astimezone(ZoneInfo("America/New_York")).replace(tzinfo=None)
    query = f"SELECT count(*) FROM db.t TIMESTAMP AS OF '{local.isoformat(sep=' ', timespec='milliseconds')}'"
    con.execute("SET TimeZone = 'America/New_York'")
    assert con.execute(query).fetchone() == (20,)  # the first snapshot, read in New York time
    con.execute("RESET TimeZone")
    with pytest.raises(iceduck.Error):  # in UTC, the same wall time is five hours before any snapshot
        con.execute(query)


def test_variables_hold_across_statements(con: Connection) -> None:
    con.execute("SET VARIABLE top = (SELECT max(id) FROM db.t)")  # Iceberg tables read once, when set
    assert con.execute("SELECT getvariable('top')").fetchone() == (19,)
    con.execute("SET VARIABLE lo = 15")
    con.execute("SET VARIABLE tags = ['a', 'b']")
    assert con.execute("SELECT count(*) FROM db.t WHERE id >= getvariable('lo')").fetchone() == (5,)
    assert con.execute("SELECT getvariable('tags')").fetchone() == (["a", "b"],)
    con.execute("RESET VARIABLE lo")
    assert con.execute("SELECT getvariable('lo')").fetchone() == (None,)


def test_copy_to_and_from(con: Connection, tmp_path: Path) -> None:
    duck = plain(con)
    parquet, csv, projected = tmp_path / "q.parquet", tmp_path / "t.csv", tmp_path / "p.csv"
    cur = con.execute(f"COPY (SELECT * FROM db.t WHERE g = 1 ORDER BY id) TO '{parquet}' (FORMAT parquet)")
    assert cur.rowcount == 7
    con.execute(f"COPY db.t TO '{csv}' (HEADER)")
    con.execute(f"COPY db.t (id, s) TO '{projected}'")
    assert (
        duck.execute(f"SELECT * FROM '{parquet}'").fetchall()
        == duck.execute("SELECT * FROM t WHERE g = 1 ORDER BY id").fetchall()
    )
    assert (
        duck.execute(f"SELECT * FROM read_csv('{csv}') ORDER BY id").fetchall()
        == duck.execute("SELECT * FROM t ORDER BY id").fetchall()
    )
    projected_rows = duck.execute(f"SELECT * FROM read_csv('{projected}') ORDER BY id").fetchall()
    assert projected_rows == duck.execute("SELECT id, s FROM t ORDER BY id").fetchall()
    con.execute("CREATE TEMP TABLE loaded (id bigint, s varchar, g int)")
    assert con.execute(f"COPY loaded FROM '{csv}' (HEADER)").rowcount == 20
    assert con.execute("SELECT * FROM loaded EXCEPT SELECT * FROM db.t").fetchall() == []
    assert con.execute("SELECT count(*) FROM loaded").fetchone() == (20,)
    with pytest.raises(UnsupportedError, match=r"INSERT INTO db.t SELECT \* FROM read_csv"):
        con.execute(f"COPY db.t FROM '{csv}'")


def test_summarize(con: Connection) -> None:
    duck = plain(con)
    for sql in ("SUMMARIZE db.t", "SUMMARIZE SELECT id, g FROM db.t WHERE id > 3"):
        ours = con.execute(sql).fetchall()
        theirs = duck.execute(sql.replace("db.t", "t")).fetchall()
        assert [r[:5] + r[10:] for r in ours] == [r[:5] + r[10:] for r in theirs]
        for mine, other in zip(ours, theirs, strict=True):  # avg, std: the same up to rounding
            for a, b in zip(mine[5:7], other[5:7], strict=True):
                assert (a is None and b is None) or math.isclose(float(a), float(b), rel_tol=1e-9)


def test_top_level_pivot_and_unpivot(con: Connection) -> None:
    duck = plain(con)
    for sql in (
        "PIVOT db.t ON g USING count(*), sum(id) GROUP BY s",
        "PIVOT (SELECT g, id FROM db.t) ON g IN (0, 1) USING max(id)",
        "UNPIVOT (SELECT id, g FROM db.t WHERE id < 4) ON id, g INTO NAME k VALUE v",
        "UNPIVOT db.t ON id, g INTO NAME k VALUE v",
    ):
        ours = con.execute(sql)
        theirs = duck.execute(sql.replace("db.t", "t"))
        assert [d[0] for d in ours.description] == [d[0] for d in theirs.description]
        assert sorted(ours.fetchall(), key=repr) == sorted(theirs.fetchall(), key=repr)
