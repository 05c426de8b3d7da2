"""SHOW CREATE TABLE and SHOW TBLPROPERTIES (iceduck.sql.show, iceduck.sql.create_statement):
what they print, and that the printed statement makes the same table again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import NotFoundError, UnsupportedError, UserError
from iceduck.sql.classify import classify
from iceduck.sql.show import CREATE, TBLPROPERTIES, ShowTable

TABLE = (
    "CREATE TABLE db.t (id bigint NOT NULL COMMENT 'the key', `odd name` string DEFAULT 'it''s', "
    "s struct<x: int NOT NULL COMMENT 'x''s doc', y: string>, l array<double>, "
    "m map<string, decimal(10,2)>, ts timestamp, ntz timestamp_ntz, d date, u uuid, f fixed(4), "
    "b binary, bo boolean, fl float, t time, n int DEFAULT 7) USING iceberg "
    "PARTITIONED BY (bucket(16, id), days(ts), truncate(`odd name`, 4), s.x AS sx) "
    "ORDERED BY (id DESC, days(ts)) COMMENT 'orders of ''2024''' "
    "TBLPROPERTIES ('format-version'='3', 'k'='v', 'write.metadata.previous-versions-max'='7')"
)


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    c = iceduck.connect(tmp_path / "wh")
    c.execute("CREATE NAMESPACE db")
    yield c
    c.close()


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SHOW CREATE TABLE db.t", ShowTable(CREATE, ("db", "t"))),
        ("show create table `d b`.t;", ShowTable(CREATE, ("d b", "t"))),
        ("SHOW TBLPROPERTIES iceduck.db.t", ShowTable(TBLPROPERTIES, ("iceduck", "db", "t"))),
        ("SHOW TBLPROPERTIES db.t ('write.format')", ShowTable(TBLPROPERTIES, ("db", "t"), "write.format")),
        ("SHOW TBLPROPERTIES t (format-version)", ShowTable(TBLPROPERTIES, ("t",), "format-version")),
    ],
)
def test_parse(sql: str, expected: ShowTable) -> None:
    assert classify(sql) == expected


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("SHOW CREATE TABLE db.t AS SERDE", UnsupportedError, "AS SERDE"),
        ("SHOW CREATE TABLE", UserError, "a table name"),
        ("SHOW CREATE TABLE db.t extra", UserError, "the end of the statement"),
        ("SHOW TBLPROPERTIES db.t ('a', 'b')", UserError, "shows one"),
    ],
)
def test_parse_errors(sql: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        classify(sql)


def test_show_create_table_prints_sparks_layout(con: Connection) -> None:
    con.execute(
        "CREATE TABLE db.plain (id bigint, data string) USING iceberg PARTITIONED BY (data)"
    )
    cur = con.execute("SHOW CREATE TABLE db.plain")
    assert [d[0] for d in cur.description] == ["createtab_stmt"]
    location = con.session.catalog.load_table(TableIdentifier(("db",), "plain")).metadata.location
    assert cur.fetchall() == [
        (
            "CREATE TABLE iceduck.db.plain (\n"
            "  id BIGINT,\n"
            "  data STRING)\n"
            "USING iceberg\n"
            "PARTITIONED BY (data)\n"
            f"LOCATION '{location}'\n"
            "TBLPROPERTIES (\n"
            "  'format-version' = '2',\n"
            "  'write.parquet.compression-codec' = 'zstd')\n",
        )
    ]


def _definition(con: Connection, table: str) -> tuple[object, ...]:
    """What a table is: DESCRIBE's rows, the Iceberg schema without ids, spec terms, sort
    order terms, properties and format version."""
    m = con.session.catalog.load_table(TableIdentifier(("db",), table)).metadata
    schema = m.schema()

    def shape(fields: tuple) -> tuple:  # type: ignore[type-arg]
        return tuple((f.name, str(f.field_type), f.required, f.doc, f.write_default) for f in fields)

    spec = tuple((schema.column_name(f.source_id), str(f.transform), f.name) for f in m.spec().fields)
    order = tuple(
        (schema.column_name(f.source_id), str(f.transform), f.direction, f.null_order)
        for f in m.sort_order().fields
    )
    return (
        con.execute(f"DESCRIBE db.{table}").fetchall(),
        shape(schema.fields),
        spec,
        order,
        m.properties,
        m.format_version,
    )


def test_the_statement_makes_the_same_table(con: Connection) -> None:
    con.execute(TABLE)
    statement = con.execute("SHOW CREATE TABLE db.t").fetchone()[0]
    assert statement.startswith("CREATE TABLE iceduck.db.t (\n  id BIGINT NOT NULL COMMENT 'the key',\n")
    assert "PARTITIONED BY (bucket(16, id), days(ts), truncate(4, `odd name`), s.x AS sx)\n" in statement
    assert "ORDERED BY (id DESC NULLS LAST, days(ts) ASC NULLS FIRST)\n" in statement
    location = con.session.catalog.load_table(TableIdentifier(("db",), "t")).metadata.location
    again = statement.replace("iceduck.db.t (", "iceduck.db.t2 (").replace(location, location + "2")
    con.execute(again)
    assert _definition(con, "t2") == _definition(con, "t")
    assert con.execute("SHOW CREATE TABLE db.t2").fetchone()[0] == again


def test_show_tblproperties(con: Connection) -> None:
    con.execute(TABLE)
    con.execute("INSERT INTO db.t (id) VALUES (1)")
    snapshot = con.session.catalog.load_table(TableIdentifier(("db",), "t")).metadata.current_snapshot_id
    cur = con.execute("SHOW TBLPROPERTIES db.t")
    assert [d[0] for d in cur.description] == ["key", "value"]
    assert cur.fetchall() == [
        ("current-snapshot-id", str(snapshot)),
        ("format", "iceberg/parquet"),
        ("format-version", "3"),
        ("k", "v"),
        ("sort-order", "id DESC NULLS LAST, days(ts) ASC NULLS FIRST"),
        ("write.metadata.previous-versions-max", "7"),
        ("write.parquet.compression-codec", "zstd"),
    ]
    assert con.execute("SHOW TBLPROPERTIES db.t ('k')").fetchall() == [("k", "v")]
    assert con.execute("SHOW TBLPROPERTIES db.t (comment)").fetchall() == [
        ("comment", "Table iceduck.db.t does not have property: comment")  # Spark hides it too
    ]
    con.execute("CREATE TABLE db.e (a int)")
    assert con.execute("SHOW TBLPROPERTIES db.e (current-snapshot-id)").fetchall() == [
        ("current-snapshot-id", "none")
    ]


def test_identifier_fields_are_listed(con: Connection) -> None:
    con.execute("CREATE TABLE db.k (id bigint NOT NULL, b int NOT NULL, v string)")
    con.execute("ALTER TABLE db.k SET IDENTIFIER FIELDS id, b")
    assert con.execute("SHOW TBLPROPERTIES db.k ('identifier-fields')").fetchall() == [
        ("identifier-fields", "[id,b]")
    ]


def test_names_resolve_as_in_queries(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (a int)")
    con.execute("USE db")
    assert con.execute("SHOW CREATE TABLE t").fetchone()[0].startswith("CREATE TABLE iceduck.db.t (")
    with pytest.raises(NotFoundError, match="nope"):
        con.execute("SHOW CREATE TABLE db.nope")
    with pytest.raises(UserError, match=r"takes a table: db\.t\.snapshots is not one"):
        con.execute("SHOW TBLPROPERTIES db.t.snapshots")
