"""The JDBC layout's store on its own: transactions, the compare-and-swap, duplicate rows,
and that every statement goes through the dialect (what another database will rely on)."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.jdbc_catalog import JdbcCatalog
from iceduck.catalog.jdbc_store import JdbcStore, TableRow
from iceduck.catalog.sqlite import SQLITE, connect_sqlite
from iceduck.errors import AlreadyExistsError
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.sort import UNSORTED
from iceduck.txn.builder import new_table_metadata
from tests.catalog.test_catalog_writes import SCHEMA

T = TableIdentifier(("ns",), "t")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[JdbcStore]:
    db = tmp_path / "catalog.db"
    s = JdbcStore(lambda: connect_sqlite(db, False), SQLITE, "iceduck", str(db), read_only=False)
    s.insert_namespace(("ns",), [("exists", "true")])
    s.insert_table(T, "/wh/ns/t/metadata/00000-a.metadata.json")
    yield s
    s.close()


def test_transaction_rolls_back_on_error(store: JdbcStore) -> None:
    """All or nothing, and the connection is usable after."""
    half = TableIdentifier(("ns",), "half")
    with pytest.raises(RuntimeError), store.transaction():
        store.insert_table(half, "/x.metadata.json")
        assert store.table_row(half) == TableRow("/x.metadata.json", "TABLE")
        raise RuntimeError("commit failed half-way")
    assert store.table_row(half) is None
    with store.transaction():
        store.insert_table(half, "/x.metadata.json")
    assert store.table_names(("ns",)) == ["half", "t"]


def test_swap_is_a_compare_and_swap(store: JdbcStore, tmp_path: Path) -> None:
    first, second = "/wh/ns/t/metadata/00000-a.metadata.json", "/wh/ns/t/metadata/00001-b.metadata.json"
    assert not store.swap(T, "stale", second)  # a stale base changes nothing
    assert store.table_row(T) == TableRow(first, "TABLE")
    assert store.swap(T, first, second)
    assert not store.swap(T, first, "/elsewhere")  # the base moved on
    assert not store.swap(TableIdentifier(("ns",), "gone"), first, second)
    rows = sqlite3.connect(tmp_path / "catalog.db").execute(
        "SELECT table_name, metadata_location, previous_metadata_location FROM iceberg_tables"
    )
    assert rows.fetchall() == [("t", second, first)]


def test_a_taken_key_is_already_exists(store: JdbcStore) -> None:
    """Without a check first (as another engine may race us on a database without
    BEGIN IMMEDIATE), the primary key still says the name is taken."""
    with pytest.raises(AlreadyExistsError, match=r"^table 'ns\.t' already exists in catalog 'iceduck'$"):
        store.insert_table(T, "/other.metadata.json")
    with pytest.raises(AlreadyExistsError, match=r"^namespace 'ns' already exists in catalog 'iceduck'$"):
        store.insert_namespace(("ns",), [("exists", "true")])
    store.insert_table(TableIdentifier(("ns",), "u"), "/u.metadata.json")
    with pytest.raises(AlreadyExistsError, match=r"^table 'ns\.t' already exists"):
        store.rename_table(TableIdentifier(("ns",), "u"), T)
    assert store.table_row(T) == TableRow("/wh/ns/t/metadata/00000-a.metadata.json", "TABLE")


class _FormatParamstyle:
    """A SQLite connection posing as a ``format`` paramstyle driver (as psycopg is): it
    refuses ``?`` and records every statement it is given."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.statements: list[str] = []

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> sqlite3.Cursor:
        assert "?" not in sql, sql
        self.statements.append(sql)
        return self.conn.execute(sql.replace("%s", "?"), parameters)

    def rollback(self) -> None:
        self.conn.rollback()

    def close(self) -> None:
        self.conn.close()


def test_every_statement_goes_through_the_dialect(tmp_path: Path) -> None:
    """A catalog on a ``%s`` dialect whose write transaction takes two statements (the shape
    of PostgreSQL's ``BEGIN`` plus an advisory lock) does all its work in that spelling."""
    dialect = dataclasses.replace(
        SQLITE,
        placeholder="%s",
        begin_write=("BEGIN IMMEDIATE", "SELECT 'locked'"),
        begin_create=("BEGIN IMMEDIATE", "SELECT 'locked'"),
        column_names_sql="SELECT name FROM pragma_table_info(%s)",
    )
    conn = _FormatParamstyle(connect_sqlite(tmp_path / "catalog.db", False))
    catalog = JdbcCatalog("c", tmp_path, lambda: conn, dialect, "test database")
    catalog.create_namespace(("ns",), {"owner": "me"})
    metadata = new_table_metadata(SCHEMA, UNPARTITIONED, UNSORTED, catalog.default_table_location(T), {})
    created = catalog.create_table(T, metadata)
    committed = catalog.commit_table(created, metadata)
    catalog.rename_table(T, TableIdentifier(("ns",), "u"))
    assert catalog.list_tables(("ns",)) == [TableIdentifier(("ns",), "u")]
    assert catalog.load_table(TableIdentifier(("ns",), "u")).metadata_location == committed.metadata_location
    catalog.drop_table(TableIdentifier(("ns",), "u"))
    catalog.drop_namespace(("ns",))
    assert catalog.list_namespaces() == []
    begins = [i for i, sql in enumerate(conn.statements) if sql == "BEGIN IMMEDIATE"]
    assert len(begins) == 5  # creating the layout, create namespace, create, rename, drop namespace
    assert all(conn.statements[i + 1] == "SELECT 'locked'" for i in begins)
    assert any(sql.startswith("UPDATE iceberg_tables SET metadata_location = %s") for sql in conn.statements)
    catalog.close()
