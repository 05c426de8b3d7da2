"""What tools see: DuckDB's catalog views, table functions and listing statements show the
Iceberg tables (:mod:`iceduck.session.introspection`).

The oracle is DuckDB itself: a plain DuckDB connection holds native tables of the same
DuckDB types (the types the Iceberg columns are read as) in an attached database named as
the catalog, and every source must give the Iceberg tables the rows DuckDB gives those
(oids aside: DuckDB numbers its own objects)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

import iceduck
from iceduck.errors import NotFoundError
from iceduck.io.fileio import MissingFileError

#: the Iceberg table's columns, and the same columns as a DuckDB table declares them
EVENTS_ICEBERG = """(
    id bigint NOT NULL COMMENT 'the key', price decimal(12, 3), ts timestamptz, day date,
    flag boolean, f float, d double, u uuid, b binary, s string,
    payload struct<a: int, "dec": string, "Up": double>, tags array<string>,
    attrs map<string, bigint>, nested struct<inner: array<struct<x: int>>>
) PARTITIONED BY (day(ts)) TBLPROPERTIES ('comment' = 'what happened')"""
EVENTS_DUCKDB = """(
    id BIGINT NOT NULL, price DECIMAL(12, 3), ts TIMESTAMPTZ, "day" DATE,
    flag BOOLEAN, f FLOAT, d DOUBLE, u UUID, b BLOB, s VARCHAR,
    payload STRUCT(a INTEGER, "dec" VARCHAR, "Up" DOUBLE), tags VARCHAR[],
    attrs MAP(VARCHAR, BIGINT), nested STRUCT("inner" STRUCT(x INTEGER)[])
)"""

#: the columns that are DuckDB's numbering of its objects, or its size estimate
OIDS = {"database_oid", "schema_oid", "table_oid", "oid", "estimated_size"}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("introspection")
    with iceduck.connect(str(path)) as con:
        con.execute("CREATE NAMESPACE sales")
        con.execute("CREATE NAMESPACE ops")
        con.execute(f"CREATE TABLE sales.events {EVENTS_ICEBERG}")
        con.execute(
            "INSERT INTO sales.events (id, ts) VALUES (1, TIMESTAMPTZ '2024-01-01 00:00:00+00'), (2, NULL)"
        )
        con.execute("CREATE TABLE ops.runs (run_id int, note string)")
    return path


@pytest.fixture(scope="module")
def con(warehouse: Path) -> Iterator[iceduck.Connection]:
    connection = iceduck.connect(str(warehouse))
    connection.execute("CREATE TEMP TABLE scratch (x int NOT NULL, label varchar)")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def oracle() -> Iterator[duckdb.DuckDBPyConnection]:
    """DuckDB's own answer: the same tables, natively, in a database named ``iceduck``."""
    db = duckdb.connect()
    db.execute("ATTACH ':memory:' AS iceduck")
    db.execute("CREATE SCHEMA iceduck.sales")
    db.execute("CREATE SCHEMA iceduck.ops")
    db.execute(f"CREATE TABLE iceduck.sales.events {EVENTS_DUCKDB}")
    db.execute("COMMENT ON TABLE iceduck.sales.events IS 'what happened'")
    db.execute("COMMENT ON COLUMN iceduck.sales.events.id IS 'the key'")
    db.execute("CREATE TABLE iceduck.ops.runs (run_id INTEGER, note VARCHAR)")
    db.execute("CREATE TABLE scratch (x INTEGER NOT NULL, label VARCHAR)")
    yield db
    db.close()


def answer(cursor: Any, sql: str) -> tuple[list[tuple[str, str]], list[tuple[Any, ...]]]:
    """(column name, type) of a result, and its rows with the oid columns left out."""
    result = cursor.execute(sql)
    columns = [(str(d[0]), str(d[1])) for d in result.description]
    keep = [i for i, (name, _) in enumerate(columns) if name not in OIDS]
    return columns, [tuple(row[i] for i in keep) for row in result.fetchall()]


def same_as_duckdb(con: iceduck.Connection, oracle: duckdb.DuckDBPyConnection, sql: str) -> list[Any]:
    ours = answer(con, sql)
    assert ours == answer(oracle, sql), sql
    return ours[1]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM information_schema.tables WHERE table_catalog = 'iceduck' ORDER BY ALL",
        "SELECT * FROM information_schema.columns WHERE table_catalog = 'iceduck' "
        "ORDER BY table_schema, table_name, ordinal_position",
        "SELECT * FROM information_schema.schemata WHERE catalog_name = 'iceduck' AND schema_name <> 'main' "
        "ORDER BY ALL",
        "SELECT * FROM duckdb_tables() WHERE database_name = 'iceduck' ORDER BY schema_name, table_name",
        "SELECT * FROM duckdb_columns() WHERE database_name = 'iceduck' "
        "ORDER BY schema_name, table_name, column_index",
        "SELECT * FROM duckdb_schemas() WHERE database_name = 'iceduck' AND schema_name <> 'main' "
        "ORDER BY schema_name",
        "SELECT * FROM pragma_table_info('iceduck.sales.events')",
        "SELECT * FROM duckdb_tables WHERE database_name = 'iceduck' ORDER BY table_name",
        "SELECT * FROM system.information_schema.tables WHERE table_catalog = 'iceduck' ORDER BY ALL",
    ],
)
def test_every_source_shows_the_iceberg_tables_as_duckdb_shows_its_own(
    con: iceduck.Connection, oracle: duckdb.DuckDBPyConnection, sql: str
) -> None:
    assert same_as_duckdb(con, oracle, sql)  # not empty: the tables are there


def test_the_columns_are_typed_and_spelled_as_duckdb_types_them(con: iceduck.Connection) -> None:
    rows = con.execute(
        "SELECT column_name, ordinal_position, is_nullable, data_type, numeric_precision, numeric_scale, "
        "COLUMN_COMMENT FROM information_schema.columns WHERE table_schema = 'sales' "
        "ORDER BY ordinal_position"
    ).fetchall()
    assert rows[:3] == [
        ("id", 1, "NO", "BIGINT", 64, 0, "the key"),
        ("price", 2, "YES", "DECIMAL(12,3)", 12, 3, None),
        ("ts", 3, "YES", "TIMESTAMP WITH TIME ZONE", None, None, None),
    ]
    assert rows[-4:] == [
        ("payload", 11, "YES", 'STRUCT(a INTEGER, "dec" VARCHAR, Up DOUBLE)', None, None, None),
        ("tags", 12, "YES", "VARCHAR[]", None, None, None),
        ("attrs", 13, "YES", "MAP(VARCHAR, BIGINT)", None, None, None),
        ("nested", 14, "YES", 'STRUCT("inner" STRUCT(x INTEGER)[])', None, None, None),
    ]


def test_duckdbs_own_rows_keep_showing(con: iceduck.Connection) -> None:
    tables = con.execute(
        "SELECT table_catalog, table_schema, table_name, table_type FROM information_schema.tables"
    )
    assert sorted(tables.fetchall()) == [
        ("iceduck", "ops", "runs", "BASE TABLE"),
        ("iceduck", "sales", "events", "BASE TABLE"),
        ("memory", "main", "scratch", "BASE TABLE"),
    ]
    schemas = con.execute("SELECT catalog_name, schema_name FROM information_schema.schemata").fetchall()
    wanted = {("iceduck", "ops"), ("iceduck", "sales"), ("memory", "main"), ("system", "pg_catalog")}
    assert wanted <= set(schemas)
    info = con.execute("PRAGMA table_info('scratch')").fetchall()
    assert info == [(0, "x", "INTEGER", True, None, False), (1, "label", "VARCHAR", False, None, False)]


def test_the_size_estimate_is_the_snapshots_record_count(con: iceduck.Connection) -> None:
    sizes = con.execute(
        "SELECT table_name, estimated_size FROM duckdb_tables() WHERE database_name = 'iceduck'"
    )
    assert sorted(sizes.fetchall()) == [("events", 2), ("runs", 0)]


def test_show_all_tables_is_duckdbs(con: iceduck.Connection, oracle: duckdb.DuckDBPyConnection) -> None:
    ours = answer(con, "SHOW ALL TABLES")
    theirs = answer(oracle, "SHOW ALL TABLES")
    assert ours[0] == theirs[0]
    assert [r for r in ours[1] if r[0] == "iceduck"] == [r for r in theirs[1] if r[0] == "iceduck"]
    assert ("memory", "main", "scratch", ["x", "label"], ["INTEGER", "VARCHAR"], False) in ours[1]


def test_pragma_table_info_of_an_iceberg_table(
    con: iceduck.Connection, oracle: duckdb.DuckDBPyConnection
) -> None:
    ours = answer(con, "PRAGMA table_info('sales.events')")
    assert ours == answer(oracle, "PRAGMA table_info('iceduck.sales.events')")
    assert ours[1][0] == (0, "id", "BIGINT", True, None, False)
    with pytest.raises(NotFoundError):
        con.execute("PRAGMA table_info('sales.nope')").fetchall()


def test_pragma_show_tables_lists_the_current_namespace(warehouse: Path) -> None:
    with iceduck.connect(str(warehouse)) as con:
        con.execute("CREATE TEMP TABLE scratch (x int)")
        assert con.execute("PRAGMA show_tables").fetchall() == [("scratch",)]
        con.execute("USE sales")
        assert con.execute("PRAGMA show_tables").fetchall() == [("events",), ("scratch",)]


def test_the_done_when_a_tool_lists_tables_in_duckdbs_own_sql(con: iceduck.Connection) -> None:
    """What DBeaver or jupysql runs to fill its tree: DuckDB's SQL, nothing iceduck's."""
    sql = """
        SELECT t.table_schema, t.table_name, count(c.column_name) AS columns
        FROM information_schema.tables AS t
        JOIN information_schema.columns AS c USING (table_catalog, table_schema, table_name)
        WHERE t.table_catalog = 'iceduck'
        GROUP BY ALL ORDER BY ALL"""
    assert con.execute(sql).fetchall() == [("ops", "runs", 2), ("sales", "events", 14)]


def test_a_catalog_tree_joined_by_oids_is_duckdbs(
    con: iceduck.Connection, oracle: duckdb.DuckDBPyConnection
) -> None:
    """What a DuckDB IDE (harlequin) walks: databases, their schemas, tables and columns,
    joined by oid -- Iceberg objects have stable oids of their own that join alike."""
    sql = """
        SELECT d.database_name, d.type, s.schema_name, t.table_name, count(*) AS columns
        FROM duckdb_databases() d JOIN duckdb_schemas() s USING (database_oid)
        JOIN duckdb_tables() t ON t.schema_oid = s.oid JOIN duckdb_columns() c USING (table_oid)
        GROUP BY ALL ORDER BY ALL"""
    ours = con.execute(sql).fetchall()
    theirs = oracle.execute(sql).fetchall()
    assert [r for r in ours if r[0] != "iceduck"] == [r for r in theirs if r[0] != "iceduck"]
    assert [r for r in ours if r[0] == "iceduck"] == [
        ("iceduck", "iceberg", "ops", "runs", 2),
        ("iceduck", "iceberg", "sales", "events", 14),
    ]
    assert [(r[0], *r[2:]) for r in ours if r[0] == "iceduck"] == [
        (r[0], *r[2:]) for r in theirs if r[0] == "iceduck"
    ]
    columns = "SELECT * FROM duckdb_databases() LIMIT 0"
    assert con.execute(columns).description == oracle.execute(columns).description


def test_a_star_over_a_system_view_in_a_join_reads_the_iceberg_table_too(con: iceduck.Connection) -> None:
    rows = con.execute(
        "SELECT t.table_name, e.id FROM information_schema.tables t, sales.events e "
        "WHERE t.table_schema = 'sales' AND e.id = 1"
    ).fetchall()
    assert rows == [("events", 1)]


# -- what a listing loads ---------------------------------------------------------------------


def hide_metadata(warehouse: Path, table: str) -> Path:
    """Move a table's metadata folder away: a load of that table now fails."""
    folder = warehouse.joinpath(*table.split("."), "metadata")
    hidden = folder.with_name("metadata.hidden")
    shutil.move(folder, hidden)
    return hidden


def restore_metadata(hidden: Path) -> None:
    shutil.move(hidden, hidden.with_name("metadata"))


@pytest.fixture
def copied(warehouse: Path, tmp_path: Path) -> Path:
    """A copy of the warehouse whose files a test may move (its catalog names absolute
    locations, so the copy is made by a session of its own)."""
    path = tmp_path / "wh"
    with iceduck.connect(str(path)) as con:
        con.execute("CREATE NAMESPACE sales")
        con.execute("CREATE NAMESPACE ops")
        con.execute(f"CREATE TABLE sales.events {EVENTS_ICEBERG}")
        con.execute("CREATE TABLE ops.runs (run_id int, note string)")
    return path


def test_a_names_only_listing_loads_no_tables_metadata(copied: Path) -> None:
    hidden = [hide_metadata(copied, "sales.events"), hide_metadata(copied, "ops.runs")]
    with iceduck.connect(str(copied)) as con:
        names = "SELECT table_schema, table_name, table_type FROM information_schema.tables ORDER BY ALL"
        assert con.execute(names).fetchall() == [
            ("ops", "runs", "BASE TABLE"),
            ("sales", "events", "BASE TABLE"),
        ]
        assert len(con.execute("SELECT * FROM information_schema.schemata").fetchall()) > 2
        assert con.execute("SELECT table_name FROM duckdb_tables() ORDER BY ALL").fetchall() == [
            ("events",),
            ("runs",),
        ]
        assert len(con.execute("SELECT * FROM duckdb_schemas()").fetchall()) > 2
        # the control: a column that needs metadata loads it, and the load fails here
        with pytest.raises(MissingFileError):
            con.execute("SELECT table_name, column_count FROM duckdb_tables()").fetchall()
        with pytest.raises(MissingFileError):
            con.execute("SELECT * FROM information_schema.tables").fetchall()  # TABLE_COMMENT
    for folder in hidden:
        restore_metadata(folder)


def test_a_filter_on_the_table_name_loads_only_that_table(copied: Path) -> None:
    hidden = hide_metadata(copied, "ops.runs")
    with iceduck.connect(str(copied)) as con:
        filtered = (
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = 'sales' AND table_name IN ('events', 'other') "
            "ORDER BY ordinal_position LIMIT 2"
        )
        assert con.execute(filtered).fetchall() == [("id",), ("price",)]
        on_duckdb = "SELECT column_count FROM duckdb_tables() WHERE table_name = ?"
        assert con.execute(on_duckdb, ["events"]).fetchall() == [(14,)]
        # the switch that turns every pushdown off loads every table: the hidden one fails
        con.execute("SET iceduck.pruning = false")
        with pytest.raises(MissingFileError):
            con.execute(filtered).fetchall()
    restore_metadata(hidden)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM information_schema.columns WHERE table_schema = 'sales' ORDER BY ALL",
        "SELECT * FROM information_schema.columns WHERE table_name = 'runs' AND table_schema = 'ops' "
        "ORDER BY ALL",
        "SELECT * FROM information_schema.columns WHERE table_name IN ('runs', 'scratch') ORDER BY ALL",
        "SELECT * FROM duckdb_tables() WHERE schema_name = 'main' OR table_name = 'runs' ORDER BY ALL",
        "SELECT * FROM information_schema.tables t WHERE t.table_name = 'events' ORDER BY ALL",
        "SELECT * FROM information_schema.schemata WHERE schema_name = 'ops' ORDER BY ALL",
        "SELECT * FROM duckdb_columns() c WHERE c.table_name = 'nope' ORDER BY ALL",
    ],
)
def test_the_answer_is_the_same_without_the_name_filter(con: iceduck.Connection, sql: str) -> None:
    pushed = con.execute(sql).fetchall()
    con.execute("SET iceduck.pruning = false")
    try:
        assert con.execute(sql).fetchall() == pushed
    finally:
        con.execute("RESET iceduck.pruning")


def test_a_change_between_two_queries_shows(tmp_path: Path) -> None:
    with iceduck.connect(str(tmp_path)) as con, iceduck.connect(str(tmp_path)) as other:
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.t (a int)")
        columns = "SELECT table_name, column_name, data_type FROM information_schema.columns ORDER BY ALL"
        assert con.execute(columns).fetchall() == [("t", "a", "INTEGER")]
        other.execute("ALTER TABLE ns.t ADD COLUMN b decimal(5, 1)")
        assert con.execute(columns).fetchall() == [("t", "a", "INTEGER"), ("t", "b", "DECIMAL(5,1)")]
        other.execute("CREATE TABLE ns.u (c string)")
        other.execute("DROP TABLE ns.t")
        assert con.execute(columns).fetchall() == [("u", "c", "VARCHAR")]
        assert con.execute("SELECT table_name FROM information_schema.tables").fetchall() == [("u",)]
        other.execute("CREATE NAMESPACE more")
        schemas = (
            "SELECT schema_name FROM information_schema.schemata WHERE catalog_name = 'iceduck' ORDER BY 1"
        )
        assert con.execute(schemas).fetchall() == [("more",), ("ns",)]


# -- attached catalogs ----------------------------------------------------------------------------

PAIMON = Path(__file__).resolve().parents[1] / "fixtures" / "paimon" / "wh"


def test_an_attached_paimon_warehouse_is_listed_under_its_alias(tmp_path: Path) -> None:
    with iceduck.connect(str(tmp_path)) as con:
        con.execute(f"ATTACH '{PAIMON}' AS lake (TYPE paimon)")
        tables = con.execute(
            "SELECT table_catalog, table_schema, table_name FROM information_schema.tables ORDER BY ALL"
        ).fetchall()
        assert ("lake", "db", "app") in tables and ("lake", "db", "typed") in tables
        schemas = con.execute("SELECT catalog_name, schema_name FROM information_schema.schemata").fetchall()
        assert ("lake", "db") in schemas
        described = con.execute("DESCRIBE lake.db.app").fetchall()
        listed = con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = 'lake' AND table_name = 'app' ORDER BY ordinal_position"
        ).fetchall()
        assert listed == [(row[0], row[1]) for row in described]
        databases = (
            "SELECT database_name, type, readonly FROM duckdb_databases() WHERE NOT internal ORDER BY 1"
        )
        assert con.execute(databases).fetchall() == [
            ("iceduck", "iceberg", False),
            ("lake", "paimon", True),
            ("memory", "duckdb", False),
        ]
        info = con.execute("PRAGMA table_info('LAKE.db.APP')").fetchall()
        assert [(r[1], r[2]) for r in info] == listed
        insertable = (
            "SELECT DISTINCT is_insertable_into FROM information_schema.tables WHERE table_catalog = 'lake'"
        )
        assert con.execute(insertable).fetchall() == [("NO",)]  # iceduck reads Paimon tables, never writes
        sizes = con.execute("SELECT estimated_size FROM duckdb_tables() WHERE table_name = 'app'").fetchall()
        assert sizes == con.execute("SELECT count(*) FROM lake.db.app").fetchall()


def test_a_columns_default_is_its_write_default(tmp_path: Path) -> None:
    """Defaults as DESCRIBE shows them, which for these literals is DuckDB's spelling too."""
    db = duckdb.connect()
    db.execute("ATTACH ':memory:' AS iceduck")
    db.execute("CREATE SCHEMA iceduck.ns")
    db.execute(
        "CREATE TABLE iceduck.ns.t (k VARCHAR DEFAULT 'x', v DOUBLE NOT NULL DEFAULT 0.0, n INT DEFAULT 3)"
    )
    with iceduck.connect(str(tmp_path)) as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute(
            "CREATE TABLE ns.t (k string DEFAULT 'x', v double NOT NULL DEFAULT 0.0, n int DEFAULT 3) "
            "TBLPROPERTIES ('format-version' = '3')"
        )
        for sql in [
            "SELECT column_name, column_default FROM information_schema.columns WHERE table_schema = 'ns'",
            "SELECT column_name, column_default FROM duckdb_columns() WHERE database_name = 'iceduck'",
            "SELECT sql FROM duckdb_tables() WHERE database_name = 'iceduck'",
            "SELECT * FROM pragma_table_info('iceduck.ns.t')",
        ]:
            assert con.execute(sql).fetchall() == db.execute(sql).fetchall(), sql
    db.close()


def test_an_unnamed_item_around_a_source_is_named_as_duckdb_names_it(con: iceduck.Connection) -> None:
    result = con.execute("SELECT (SELECT count(*) FROM duckdb_tables WHERE database_name = 'iceduck')")
    assert [d[0] for d in result.description] == [
        "(SELECT count_star() FROM duckdb_tables WHERE (database_name = 'iceduck'))"
    ]
    assert result.fetchall() == [(2,)]


def test_the_catalogs_database_row_says_where_and_whether_read_only(warehouse: Path) -> None:
    databases = "SELECT path, readonly FROM duckdb_databases() WHERE database_name = 'iceduck'"
    with iceduck.connect(str(warehouse), read_only=True) as con:
        assert con.execute(databases).fetchall() == [(str(warehouse), True)]
    with iceduck.connect(str(warehouse)) as con:
        con.execute("BEGIN")  # the transaction in front of the catalog changes neither
        assert con.execute(databases).fetchall() == [(str(warehouse), False)]
        con.execute("ROLLBACK")
