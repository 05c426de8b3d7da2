"""Completion candidates from a real catalog (the pseudo-terminal tests press Tab for real)."""

from __future__ import annotations

from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

import iceduck
from iceduck.shell.completion import SqlCompleter


@pytest.fixture
def completer(warehouse: Path) -> SqlCompleter:
    con = iceduck.connect(warehouse)
    return SqlCompleter(con.session.catalog, [".tables", ".timer", ".schema"])


def complete(completer: SqlCompleter, text: str, cursor: int | None = None) -> list[str]:
    document = Document(text, len(text) if cursor is None else cursor)
    return [c.text for c in completer.get_completions(document, CompleteEvent(completion_requested=True))]


def test_tables_namespaces_and_keywords(completer: SqlCompleter) -> None:
    assert complete(completer, "SELECT * FROM shop.") == ["orders"]
    assert complete(completer, "SELECT * FROM iceduck.shop.o") == ["orders"]
    assert complete(completer, "SELECT * FROM ord") == ["shop.orders"]  # a table, never `order by`
    assert complete(completer, "SELECT * FROM sho") == ["shop", "shop.orders"]  # not `show tables`
    assert complete(completer, "select * from a JOIN sho") == ["shop", "shop.orders"]
    assert complete(completer, "INSERT INTO ord") == ["shop.orders"]
    assert complete(completer, "SELECT * FROM shop.orders ORDER BY id; SELECT * FROM sho") == [
        "shop",
        "shop.orders",
    ]
    assert "show tables" in complete(completer, "sho")  # where a statement starts, keywords too
    assert complete(completer, "sel") == ["select"]
    assert complete(completer, "SEL") == ["SELECT"]


def test_spark_introspection_statements_complete_table_names(completer: SqlCompleter) -> None:
    assert complete(completer, "DESCRIBE EXTENDED ord") == ["shop.orders"]
    assert complete(completer, "desc formatted ord") == ["shop.orders"]
    assert complete(completer, "SHOW PARTITIONS ord") == ["shop.orders"]
    assert complete(completer, "SHOW COLUMNS FROM ord") == ["shop.orders"]
    assert "show partitions" in complete(completer, "sho")
    assert "describe extended" in complete(completer, "desc")


def test_columns_and_metadata_tables(completer: SqlCompleter) -> None:
    assert "snapshots" in complete(completer, "SELECT * FROM shop.orders.")
    assert complete(completer, "SELECT * FROM shop.orders.ma") == ["manifests"]
    assert complete(completer, "SELECT * FROM shop.orders o WHERE o.a") == ["amount"]
    assert complete(completer, "SELECT cu") == []  # no table in the statement yet
    assert complete(completer, "SELECT * FROM shop.orders WHERE cu") == ["customer"]


def test_dot_commands(completer: SqlCompleter) -> None:
    assert complete(completer, ".t") == [".tables", ".timer"]


def test_new_tables_appear_after_invalidate(completer: SqlCompleter, warehouse: Path) -> None:
    assert complete(completer, "SELECT * FROM extra.") == []
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE NAMESPACE extra")
        con.execute("CREATE TABLE extra.items (sku VARCHAR)")
    assert complete(completer, "SELECT * FROM extra.") == []  # cached for a few seconds
    completer.invalidate()
    assert complete(completer, "SELECT * FROM extra.") == ["items"]
    assert complete(completer, "SELECT sk FROM extra.items", cursor=9) == ["sku"]


def test_paimon_databases_tables_and_system_tables(warehouse: Path) -> None:
    """An attached Paimon warehouse completes like a catalog: ``p.`` -> its databases,
    ``p.db.`` -> their tables, ``p.db.t.`` -> the system tables; ATTACH later is seen."""
    con = iceduck.connect(warehouse)
    completer = SqlCompleter(con.session.catalog, [], con.session.paimon)
    examples = Path(__file__).resolve().parents[2] / "examples" / "paimon" / "warehouse"
    con.execute(f"ATTACH '{examples}' AS lake (TYPE paimon)")
    assert complete(completer, "SELECT * FROM lake.") == ["shop"]
    assert complete(completer, "SELECT * FROM lake.shop.c") == ["customers"]
    assert complete(completer, "SELECT * FROM lake.shop.customers.sn") == ["snapshots"]
    assert complete(completer, "SELECT * FROM lake.nope.") == []
    con.close()
