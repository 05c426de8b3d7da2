"""End to end through ``iceduck.connect``: SQL in, rows out, on small PyIceberg-written tables.

The warehouse is written by PyIceberg's SQL catalog into ``<warehouse>/catalog.db`` under
the catalog name ``iceduck`` (the layout iceduck, Spark and PyIceberg share):

* ``ns.events``: identity-partitioned by ``device``; two appends of 48 rows, a tag
  ``first`` and a branch ``dev`` on the first snapshot, then ``DELETE id < 5``;
* ``ns.devices``: a small dimension table for joins;
* ``deep.er.nested``: a table in a two-level namespace.

Tests that damage files work on their own copy of the warehouse.
"""

from __future__ import annotations

import datetime as dt
import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import CorruptDataError, NotFoundError, UnsupportedError, UserError
from tests.sql.copies import copy_metadata, copy_of, missing_path

pyiceberg = pytest.importorskip("pyiceberg")
pytest.importorskip("sqlalchemy")

UTC = dt.UTC
T0 = dt.datetime(2024, 1, 1, tzinfo=UTC)


def _event_rows(lo: int, hi: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "device": f"d{i % 3}", "ts": T0 + dt.timedelta(hours=i), "v": i * 0.5}
        for i in range(lo, hi)
    ]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestamptzType

    path = tmp_path_factory.mktemp("session-warehouse")
    catalog = SqlCatalog("iceduck", uri=f"sqlite:///{path}/catalog.db", warehouse=f"file://{path}")
    catalog.create_namespace("ns")
    catalog.create_namespace("deep.er")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "device", StringType()),
        NestedField(3, "ts", TimestamptzType()),
        NestedField(4, "v", DoubleType()),
    )
    events = catalog.create_table(
        "ns.events",
        schema,
        partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "device")),
    )
    arrow_schema = events.schema().as_arrow()
    events.append(pa.Table.from_pylist(_event_rows(0, 48), arrow_schema))
    first = events.current_snapshot().snapshot_id
    events.append(pa.Table.from_pylist(_event_rows(48, 96), arrow_schema))
    second = events.current_snapshot().snapshot_id
    events.manage_snapshots().create_tag(first, "first").create_branch(first, "dev").commit()
    events.delete("id < 5")
    events = catalog.load_table("ns.events")
    devices_schema = Schema(NestedField(1, "device", StringType()), NestedField(2, "label", StringType()))
    devices = catalog.create_table("ns.devices", devices_schema)
    devices.append(
        pa.Table.from_pylist(
            [{"device": "d0", "label": "zero"}, {"device": "d1", "label": "one"}], devices_schema.as_arrow()
        )
    )
    nested_schema = Schema(NestedField(1, "x", LongType()))
    nested = catalog.create_table("deep.er.nested", nested_schema)
    nested.append(pa.Table.from_pylist([{"x": 1}, {"x": 2}], nested_schema.as_arrow()))
    snapshots = events.snapshots()
    return {
        "path": path,
        "first": first,
        "second": second,
        "current": events.current_snapshot().snapshot_id,
        "times": [s.timestamp_ms for s in snapshots],
        "location": events.location(),
    }


@pytest.fixture
def con(warehouse: dict[str, Any]) -> Iterator[Connection]:
    with iceduck.connect(warehouse["path"]) as connection:
        yield connection


def rows(con: Connection, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    return con.execute(sql, params).fetchall()


def scalar(con: Connection, sql: str, params: Any = None) -> Any:
    return con.execute(sql, params).fetchone()[0]


def explain(con: Connection, sql: str) -> str:
    return "\n".join(r[0] for r in rows(con, "EXPLAIN " + sql))


# -- reading ------------------------------------------------------------------------------------------


def test_select_star_returns_the_current_rows(con: Connection) -> None:
    cur = con.execute("SELECT * FROM ns.events ORDER BY id")
    assert [d[0] for d in cur.description] == ["id", "device", "ts", "v"]
    got = cur.fetchall()
    expected = [tuple(r.values()) for r in _event_rows(5, 96)]
    assert got == expected


def test_names_with_catalog_and_nested_namespaces(con: Connection) -> None:
    assert scalar(con, "SELECT count(*) FROM iceduck.ns.events") == 91
    assert rows(con, "SELECT x FROM deep.er.nested ORDER BY x") == [(1,), (2,)]
    assert rows(con, "SELECT x FROM iceduck.deep.er.nested ORDER BY x") == [(1,), (2,)]


def test_filters_are_pushed_and_results_stay_exact(con: Connection) -> None:
    sql = "SELECT count(*), sum(id) FROM ns.events WHERE device = 'd1' AND id >= 50"
    expected = [i for i in range(50, 96) if i % 3 == 1]
    assert rows(con, sql) == [(len(expected), sum(expected))]
    plan = explain(con, sql)
    assert "pushed filter: (device == 'd1' and id >= 50)" in plan
    # identity partitions: only device=d1 files are read (one per append; the first
    # append's d1 file holds ids < 48 only, so its metrics rule it out too)
    assert "data files: 1 read, 5 skipped (4 by partition, 1 by column metrics)" in plan
    assert "DuckDB plan:" in plan


def test_the_manifest_cache_bound_is_a_connection_option(warehouse: dict[str, Any]) -> None:
    sql = "SELECT count(*), sum(id) FROM ns.events WHERE device = 'd1' AND id >= 50"
    with iceduck.connect(warehouse["path"]) as default:
        expected = rows(default, sql)
    with iceduck.connect(warehouse["path"], manifest_cache_entries=2) as small:
        cache = small.session.manifests
        assert cache.max_entries == 2
        assert rows(small, sql) == rows(small, sql) == expected
        assert cache.size <= 2 or len(cache) == 1  # the newest item stays even when larger
    for bad in (0, -1, 2.5, True):
        with pytest.raises(UserError, match="manifest_cache_entries"):
            iceduck.connect(warehouse["path"], manifest_cache_entries=bad)  # type: ignore[arg-type]


def test_decoded_deletes_and_file_layouts_belong_to_the_connection(tmp_path: Path) -> None:
    """What a scan decodes (deleted positions, Parquet footers) is kept by the connection that
    read it, within its bound, and never shared with another connection."""
    with iceduck.connect(tmp_path / "wh") as writer:
        writer.execute("CREATE NAMESPACE db")
        writer.execute(
            "CREATE TABLE db.t (id bigint, s struct<a: int>) USING iceberg "
            "TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')"
        )
        writer.execute("INSERT INTO db.t SELECT i, {'a': i::INT} FROM range(10) r(i)")
        writer.execute("DELETE FROM db.t WHERE id % 3 = 0")
    with iceduck.connect(tmp_path / "wh") as one, iceduck.connect(tmp_path / "wh") as other:
        assert rows(one, "SELECT count(*) FROM db.t") == [(6,)]
        positions, layouts = one.session.positions, one.session.layouts
        assert positions.weight == 4 and len(layouts) == 1  # rows 0, 3, 6, 9 of one file
        assert rows(one, "SELECT sum(s.a) FROM db.t") == [(1 + 2 + 4 + 5 + 7 + 8,)]
        assert positions.hits >= 1 and positions.weight == 4  # read again from the cache
        assert len(other.session.positions) == len(other.session.layouts) == 0
        assert positions.max_weight == 100_000_000  # about 800 MB of positions


def test_parameters_qmark_numbered_and_named(con: Connection) -> None:
    assert scalar(con, "SELECT count(*) FROM ns.events WHERE device = ? AND id < ?", ["d0", 30]) == len(
        [i for i in range(5, 30) if i % 3 == 0]
    )
    assert scalar(con, "SELECT count(*) FROM ns.events WHERE id = $1 OR id = $2", [7, 8]) == 2
    assert scalar(con, "SELECT count(*) FROM ns.events WHERE device = $dev", {"dev": "d2"}) == len(
        [i for i in range(5, 96) if i % 3 == 2]
    )
    plan = [r[0] for r in con.execute("EXPLAIN SELECT * FROM ns.events WHERE id = ?", [7]).fetchall()]
    assert "  pushed filter: id == 7" in plan


def test_timestamps_compare_in_utc(con: Connection) -> None:
    sql = (
        "SELECT min(id), max(id) FROM ns.events "
        "WHERE ts >= '2024-01-02 00:00:00' AND ts < TIMESTAMPTZ '2024-01-02 06:00:00+00'"
    )
    assert rows(con, sql) == [(24, 29)]


def test_joins_ctes_windows_and_subqueries(con: Connection) -> None:
    joined = rows(
        con,
        "SELECT d.label, count(*) FROM ns.events e JOIN ns.devices d ON e.device = d.device "
        "WHERE e.id < 12 GROUP BY ALL ORDER BY 1",
    )
    assert joined == [("one", 2), ("zero", 2)]  # ids 7, 10 / 6, 9
    left = rows(
        con,
        "SELECT e.device, d.label FROM ns.events e LEFT JOIN ns.devices d ON e.device = d.device "
        "WHERE e.id = 8 AND d.label IS NULL",
    )
    assert left == [("d2", None)]
    windowed = rows(
        con,
        "WITH recent AS (SELECT * FROM ns.events WHERE id >= 90) "
        "SELECT id, sum(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
        "FROM recent ORDER BY id LIMIT 2",
    )
    assert windowed == [(90, 45.0), (91, 90.5)]
    assert scalar(
        con,
        "SELECT count(*) FROM ns.events WHERE device IN (SELECT device FROM ns.devices WHERE label = 'one')",
    ) == len([i for i in range(5, 96) if i % 3 == 1])


def test_the_same_table_twice_at_different_versions(con: Connection, warehouse: dict[str, Any]) -> None:
    sql = (
        "SELECT (SELECT count(*) FROM ns.events), "
        f"(SELECT count(*) FROM ns.events VERSION AS OF {warehouse['first']}), "
        "(SELECT count(*) FROM ns.events VERSION AS OF 'first')"
    )
    assert rows(con, sql) == [(91, 48, 48)]


# -- time travel ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("clause", "count"),
    [
        ("VERSION AS OF {first}", 48),
        ("VERSION AS OF {second}", 96),
        ("FOR SYSTEM_VERSION AS OF {second}", 96),
        ("VERSION AS OF '{second}'", 96),
        ("VERSION AS OF 'first'", 48),
        ("VERSION AS OF 'dev'", 48),
        ("VERSION AS OF 'main'", 91),
    ],
)
def test_version_as_of(con: Connection, warehouse: dict[str, Any], clause: str, count: int) -> None:
    assert scalar(con, f"SELECT count(*) FROM ns.events {clause.format(**warehouse)}") == count


def test_timestamp_as_of(con: Connection, warehouse: dict[str, Any]) -> None:
    first_ms = warehouse["times"][0]
    when = dt.datetime.fromtimestamp(first_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    assert scalar(con, f"SELECT count(*) FROM ns.events TIMESTAMP AS OF '{when}'") == 48
    assert scalar(con, f"SELECT count(*) FROM ns.events FOR SYSTEM_TIME AS OF '{when}'") == 48
    with pytest.raises(
        NotFoundError, match=r"no snapshot of table iceduck\.ns\.events at or before 2000-01-01"
    ):
        con.execute("SELECT * FROM ns.events TIMESTAMP AS OF '2000-01-01 00:00:00'")


def test_branch_and_tag_suffixes(con: Connection, warehouse: dict[str, Any]) -> None:
    assert scalar(con, "SELECT count(*) FROM ns.events.tag_first") == 48
    assert scalar(con, "SELECT count(*) FROM iceduck.ns.events.branch_dev") == 48
    assert scalar(con, f"SELECT count(*) FROM ns.events.snapshot_id_{warehouse['second']}") == 96
    with pytest.raises(NotFoundError, match="is a tag, not a branch"):
        con.execute("SELECT * FROM ns.events.branch_first")
    with pytest.raises(UserError, match="cannot combine"):
        con.execute("SELECT * FROM ns.events.tag_first VERSION AS OF 1")


def test_unknown_versions_name_what_is_missing(con: Connection) -> None:
    with pytest.raises(NotFoundError, match="has no snapshot with id 1"):
        con.execute("SELECT * FROM ns.events VERSION AS OF 1")
    with pytest.raises(NotFoundError, match="no snapshot id or branch or tag matching version 'nope'"):
        con.execute("SELECT * FROM ns.events VERSION AS OF 'nope'")


# -- metadata tables, table function, SHOW, DESCRIBE -------------------------------------------------------


def test_metadata_tables(con: Connection, warehouse: dict[str, Any]) -> None:
    snapshots = rows(con, "SELECT snapshot_id FROM ns.events.snapshots ORDER BY committed_at")
    assert [s[0] for s in snapshots][:2] == [warehouse["first"], warehouse["second"]]
    refs = dict(rows(con, "SELECT name, type FROM ns.events.refs"))
    assert refs == {"main": "BRANCH", "first": "TAG", "dev": "BRANCH"}
    assert scalar(con, "SELECT sum(record_count) FROM ns.events.files") == 91
    assert (
        scalar(con, f"SELECT sum(record_count) FROM ns.events.files VERSION AS OF {warehouse['first']}") == 48
    )
    plan = explain(con, "SELECT * FROM ns.events.history")
    assert "Iceberg metadata table iceduck.ns.events.history" in plan


def test_table_function_reads_a_table_folder(con: Connection, warehouse: dict[str, Any]) -> None:
    location = warehouse["location"]
    assert scalar(con, f"SELECT count(*) FROM iceduck_scan('{location}')") == 91
    assert scalar(con, f"SELECT count(*) FROM iceduck_scan('{location}') VERSION AS OF 'first'") == 48


def test_show_and_describe(con: Connection) -> None:
    assert rows(con, "SHOW TABLES IN ns") == [("ns", "devices"), ("ns", "events")]
    assert ("deep.er", "nested") in rows(con, "SHOW TABLES")
    assert rows(con, "SHOW NAMESPACES") == [("deep",), ("ns",)]
    described = rows(con, "DESCRIBE ns.events")
    assert [(r[0], r[1]) for r in described] == [
        ("id", "BIGINT"),
        ("device", "VARCHAR"),
        ("ts", "TIMESTAMP WITH TIME ZONE"),
        ("v", "DOUBLE"),
    ]


def test_pass_through_to_duckdb(con: Connection) -> None:
    assert rows(con, "SELECT 1 + 1") == [(2,)]
    assert rows(con, "SELECT count(*) > 0 FROM information_schema.schemata") == [(True,)]
    assert rows(con, "WITH x AS (SELECT 1 AS a) SELECT * FROM x") == [(1,)]


def test_several_statements_return_the_last_result(con: Connection) -> None:
    assert rows(con, "SELECT 1; SELECT count(*) FROM ns.devices;") == [(2,)]


# -- errors ---------------------------------------------------------------------------------------------


def test_unknown_tables_are_named(con: Connection) -> None:
    with pytest.raises(
        iceduck.ProgrammingError, match=r"table ns\.nope not found in catalog 'iceduck'"
    ) as info:
        con.execute("SELECT * FROM ns.nope")
    assert isinstance(info.value, NotFoundError)
    with pytest.raises(NotFoundError, match="has no namespace nowhere"):
        con.execute("SELECT * FROM nowhere.t")
    with pytest.raises(NotFoundError, match="nope"):
        con.execute("SELECT * FROM nope")  # DuckDB's own catalog error


def test_unsupported_statements_are_named(con: Connection) -> None:
    with pytest.raises(iceduck.NotSupportedError, match=r"materialized views are not supported") as info:
        con.execute("CREATE MATERIALIZED VIEW ns.v AS SELECT * FROM ns.events")
    assert isinstance(info.value, UnsupportedError)
    with pytest.raises(iceduck.NotSupportedError, match=r"CALL"):
        con.execute("CALL iceduck.system.migrate('ns.events')")  # Spark's, not run by iceduck


def test_syntax_and_binding_errors_are_programming_errors(con: Connection) -> None:
    with pytest.raises(iceduck.ProgrammingError, match=r'at or near "SELEC" \(line 1, column 1\)'):
        con.execute("SELEC 1")
    with pytest.raises(iceduck.ProgrammingError, match='"nope" not found') as info:
        con.execute("SELECT nope FROM ns.events")
    assert "__iceduck" not in str(info.value)


def test_a_copy_of_the_metadata_reads_like_the_table(
    con: Connection, warehouse: dict[str, Any], tmp_path: Path
) -> None:
    target = copy_metadata(warehouse["location"], tmp_path / "events")
    assert scalar(con, f"SELECT count(*) FROM iceduck_scan('{target}')") == 91


def test_missing_data_file_is_named(con: Connection, warehouse: dict[str, Any], tmp_path: Path) -> None:
    [(path,)] = rows(con, "SELECT file_path FROM ns.events.files ORDER BY file_path LIMIT 1")
    target = tmp_path / "events"
    missing = missing_path(target, path)
    copy_metadata(warehouse["location"], target, {path: missing})
    with pytest.raises(iceduck.DatabaseError, match=re.escape(missing)) as info:
        con.execute(f"SELECT count(*) FROM iceduck_scan('{target}')").fetchall()
    assert isinstance(info.value, CorruptDataError)


def test_corrupt_manifest_is_named(con: Connection, warehouse: dict[str, Any], tmp_path: Path) -> None:
    target = copy_metadata(warehouse["location"], tmp_path / "events")
    [(path,)] = rows(con, "SELECT path FROM ns.events.manifests ORDER BY path LIMIT 1")
    victim = copy_of(path, warehouse["location"], target)  # a manifest the current snapshot reads
    victim.write_bytes(b"this is not avro")
    with pytest.raises(CorruptDataError) as info:
        con.execute(f"SELECT count(*) FROM iceduck_scan('{target}')").fetchall()
    assert str(victim) in str(info.value)


# -- the DB-API surface -----------------------------------------------------------------------------------


def test_cursor_fetching(con: Connection) -> None:
    cur = con.cursor()
    with pytest.raises(iceduck.ProgrammingError, match="no statement"):
        cur.fetchone()
    cur.execute("SELECT id FROM ns.events WHERE id < 12 ORDER BY id")
    assert cur.fetchone() == (5,)
    assert cur.fetchmany() == [(6,)]
    cur.arraysize = 2
    assert cur.fetchmany() == [(7,), (8,)]
    assert cur.fetchmany(1) == [(9,)]
    assert list(cur) == [(10,), (11,)]
    assert cur.fetchone() is None
    assert cur.rowcount == -1


def test_two_cursors_fetch_independently(con: Connection) -> None:
    a = con.cursor().execute("SELECT id FROM ns.events ORDER BY id")
    b = con.cursor().execute("SELECT id FROM ns.events ORDER BY id DESC")
    assert (a.fetchone(), b.fetchone(), a.fetchone(), b.fetchone()) == ((5,), (95,), (6,), (94,))


def test_closing(warehouse: dict[str, Any]) -> None:
    con = iceduck.connect(warehouse["path"])
    cur = con.cursor()
    with cur:
        cur.execute("SELECT 1")
    with pytest.raises(iceduck.InterfaceError, match="cursor is closed"):
        cur.execute("SELECT 1")
    con.close()
    assert con.closed
    with pytest.raises(iceduck.InterfaceError, match="connection is closed"):
        con.cursor()
    with pytest.raises(iceduck.InterfaceError, match="connection is closed"):
        con.close()  # twice is an error: the DB-API suite's test_non_idempotent_close


def test_module_globals() -> None:
    assert (iceduck.apilevel, iceduck.threadsafety, iceduck.paramstyle) == ("2.0", 1, "qmark")
    assert issubclass(iceduck.ProgrammingError, iceduck.DatabaseError)
    assert issubclass(iceduck.DatabaseError, iceduck.Error)


# -- the metadata-indexing post's events shape --------------------------------------------------------------


@pytest.fixture(scope="module")
def events_table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """bench/events.py's table at a small scale: 10 daily appends, day x bucket(8) partitions."""
    bench = Path(__file__).resolve().parents[2] / "bench"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    events = importlib.import_module("events")
    shape = events.EventsShape(days=10, rows_per_day=400, devices=20)
    table = events.build(tmp_path_factory.mktemp("events") / "wh", shape, quiet=True)
    return events, table


def test_point_query_reads_one_manifest_and_one_file(events_table: Any) -> None:
    events, table = events_table
    point = events.point_query(table.shape)
    where = f"device_id = {point.device_id} AND ts >= '{point.start_text}' AND ts < '{point.end_text}'"
    with iceduck.connect(table.warehouse) as con:
        plan = explain(con, f"SELECT count(*), sum(v) FROM bench.events WHERE {where}")
        got = rows(con, f"SELECT count(*), sum(v) FROM bench.events WHERE {where}")
    assert "manifests: 10 total, 1 read, 9 skipped" in plan
    assert "data files: 1 read, 7 skipped (7 by partition, 0 by column metrics)" in plan
    only = table.file_for(point.epoch_day, events.bucket_of(point.device_id, table.shape.buckets))
    assert only in plan
    direct = duckdb.connect()
    direct.execute("SET TimeZone = 'UTC'")
    expected = direct.execute(f"SELECT count(*), sum(v) FROM read_parquet('{only}') WHERE {where}").fetchall()
    assert got == expected and expected[0][0] > 0


def test_timestamp_as_of_an_expression(con: Connection) -> None:
    assert scalar(con, "SELECT count(*) FROM ns.events TIMESTAMP AS OF now()") == 91
    with pytest.raises(NotFoundError, match="no snapshot"):
        con.execute("SELECT * FROM ns.events TIMESTAMP AS OF now() - INTERVAL 100 YEAR")


def test_names_match_without_case_like_duckdb(con: Connection) -> None:
    assert scalar(con, "SELECT count(*) FROM NS.Events") == 91
    assert scalar(con, "SELECT count(*) FROM ICEDUCK.Deep.ER.Nested") == 2
    assert scalar(con, "SELECT count(*) FROM ns.EVENTS.tag_first") == 48


def test_pruning_on_a_negative_38_digit_decimal_finds_the_row(tmp_path: Path) -> None:
    """The pushed value used to be rounded to 28 digits (-1.0E+29): metrics then ruled the
    file out and the query returned no row."""
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (d decimal(38, 1), k int)")
    con.execute("INSERT INTO db.t VALUES (-99999999999999999999999999999.5, 1), (1.5, 2)")
    for op in ("= -99999999999999999999999999999.5", "< -99999999999999999999999999999.4"):
        assert con.execute(f"SELECT k FROM db.t WHERE d {op}").fetchall() == [(1,)]
