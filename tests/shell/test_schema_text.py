"""What ``.schema`` prints about each column: required or optional, the write-default as
DESCRIBE writes it, and the doc."""

from __future__ import annotations

from pathlib import Path

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.shell.commands import describe_table


def test_schema_shows_required_defaults_and_docs(tmp_path: Path) -> None:
    with iceduck.connect(tmp_path) as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute(
            "CREATE TABLE ns.t (id bigint NOT NULL COMMENT 'the key', v double DEFAULT 0.0, "
            "d date DEFAULT DATE '2024-01-01' COMMENT 'day', s string) "
            "TBLPROPERTIES ('format-version' = '3')"
        )
        catalog = con.session.catalog
        text = describe_table(catalog.name, catalog.load_table(TableIdentifier(("ns",), "t")))
    assert text.splitlines()[:5] == [
        "table iceduck.ns.t (format v3)",
        "    1  id  long    required  -- the key",
        "    2  v   double  optional default 0.0",
        "    3  d   date    optional default DATE '2024-01-01'  -- day",
        "    4  s   string  optional",
    ]


def test_schema_shows_the_distinct_counts_of_the_current_statistics(tmp_path: Path) -> None:
    with iceduck.connect(tmp_path) as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.t (id bigint, s string)")
        con.execute("INSERT INTO ns.t SELECT i, 's' || (i % 3) FROM range(1500) r(i)")
        catalog = con.session.catalog
        loaded = lambda: catalog.load_table(TableIdentifier(("ns",), "t"))  # noqa: E731
        assert "ndv" not in describe_table(catalog.name, loaded())
        con.execute("CALL system.compute_table_stats('ns.t')")
        lines = describe_table(catalog.name, loaded()).splitlines()
    assert lines[1:3] == ["    1  id  long    optional ndv 1,500", "    2  s   string  optional ndv 3"]
