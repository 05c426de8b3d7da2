"""The SQLite catalog; the reading tests run on PostgreSQL too (same layout, same rows)."""

import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.jdbc_catalog import JdbcCatalog
from iceduck.catalog.postgres import PostgresCatalog
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.errors import CorruptDataError, NotFoundError
from iceduck.io.fileio import MissingFileError
from tests.catalog.helpers import open_at_once, write_metadata

#: sqlite_master as Spark 3.5 + Iceberg 1.10.2 (jdbc.schema-version=V1) leaves a new
#: catalog.db: Java creates the V0 table, then adds iceberg_type by ALTER TABLE.
SPARK_DDL = {
    "iceberg_tables": (
        "CREATE TABLE iceberg_tables(catalog_name VARCHAR(255) NOT NULL,"
        "table_namespace VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,"
        "metadata_location VARCHAR(1000),"
        "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5),"
        "PRIMARY KEY (catalog_name, table_namespace, table_name))"
    ),
    "iceberg_namespace_properties": (
        "CREATE TABLE iceberg_namespace_properties(catalog_name VARCHAR(255) NOT NULL,"
        "namespace VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),"
        "PRIMARY KEY (catalog_name, namespace, property_key))"
    ),
}


def ddl(db: Path) -> dict[str, str]:
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
        return dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall())


def insert(db: Path, table: str, *rows: tuple[object, ...]) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for row in rows:
            conn.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)
    conn.close()


def _fill(tmp_path: Path, insert: Callable[..., None]) -> None:
    """Rows of two catalogs, a view, a pre-V1 row and a nested namespace, through ``insert``."""
    t1 = write_metadata(tmp_path / "ns" / "t1", "00001-a.metadata.json", 1)
    t3 = write_metadata(tmp_path / "deep" / "er" / "t3", "00000-c.metadata.json", 3)
    insert(
        "iceberg_tables",
        ("iceduck", "ns", "t1", str(t1), None, "TABLE"),
        ("iceduck", "ns", "old", f"file:{t1}", None, None),  # written before V1: a table
        ("iceduck", "ns", "v", "/somewhere/v.metadata.json", None, "VIEW"),
        ("iceduck", "ns", "gone", str(tmp_path / "ns" / "gone" / "00009-x.metadata.json"), None, "TABLE"),
        ("iceduck", "ns", "broken", None, None, "TABLE"),
        ("iceduck", "deep.er", "t3", str(t3), None, "TABLE"),
        ("iceduck", "view_only", "v", "/somewhere/v2.metadata.json", None, "VIEW"),
        ("other", "theirs", "t9", str(t1), None, "TABLE"),
        ("other", "ns", "t8", str(t1), None, "TABLE"),
    )
    insert(
        "iceberg_namespace_properties",
        ("iceduck", "empty_ns", "exists", "true"),
        ("iceduck", "ns", "exists", "true"),
        ("iceduck", "ns", "owner", "me"),
        ("iceduck", "a_b", "exists", "true"),
        ("other", "their_ns", "exists", "true"),
    )


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """A catalog.db holding the rows of :func:`_fill`."""
    SqliteCatalog(tmp_path).close()
    _fill(tmp_path, lambda table, *rows: insert(tmp_path / "catalog.db", table, *rows))
    return tmp_path


@dataclass
class Filled:
    """A catalog database holding the rows of :func:`_fill`, on SQLite or PostgreSQL."""

    warehouse: Path
    open: Callable[..., JdbcCatalog]  # (name="iceduck") -> a catalog on it
    where: str  # a regex for how messages name the database


@pytest.fixture(params=["sqlite", "postgres"])
def filled(request: pytest.FixtureRequest, tmp_path: Path) -> Filled:
    if request.param == "sqlite":
        SqliteCatalog(tmp_path).close()
        _fill(tmp_path, lambda table, *rows: insert(tmp_path / "catalog.db", table, *rows))
        return Filled(tmp_path, lambda name="iceduck": SqliteCatalog(tmp_path, name), r".*catalog\.db")
    import psycopg

    server = request.getfixturevalue("postgres_server")
    db = f"filled_{uuid.uuid4().hex[:12]}"
    uri = server.create_database(db)
    PostgresCatalog(uri, str(tmp_path)).close()

    def insert_pg(table: str, *rows: tuple[object, ...]) -> None:
        with psycopg.connect(uri) as conn:
            for row in rows:
                conn.execute(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * len(row))})", row)

    _fill(tmp_path, insert_pg)
    return Filled(
        tmp_path, lambda name="iceduck": PostgresCatalog(uri, str(tmp_path), name), rf"postgresql://.*/{db}"
    )


def test_new_warehouse_gets_sparks_exact_layout(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path / "new" / "wh")
    assert (tmp_path / "new" / "wh" / "catalog.db").is_file()
    assert ddl(catalog.db_path) == SPARK_DDL
    assert catalog.list_namespaces() == []
    catalog.close()
    SqliteCatalog(tmp_path / "new" / "wh").close()  # reopening changes nothing
    assert ddl(tmp_path / "new" / "wh" / "catalog.db") == SPARK_DDL


def test_concurrent_first_opens_create_the_layout_once(tmp_path: Path) -> None:
    assert open_at_once(lambda: SqliteCatalog(tmp_path)) == []
    assert ddl(tmp_path / "catalog.db") == SPARK_DDL


def test_custom_db_path(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path / "wh", "prod", db_path=tmp_path / "meta" / "c.sqlite")
    assert (tmp_path / "meta" / "c.sqlite").is_file() and catalog.name == "prod"


def test_namespaces(filled: Filled) -> None:
    warehouse, catalog = filled.warehouse, filled.open()
    assert catalog.list_namespaces() == [("a_b",), ("deep",), ("empty_ns",), ("ns",), ("view_only",)]
    assert catalog.list_namespaces(("deep",)) == [("deep", "er")]
    assert catalog.list_namespaces(("deep", "er")) == []
    for ns in [("deep",), ("deep", "er"), ("empty_ns",), ("ns",), ()]:
        assert catalog.namespace_exists(ns), ns
    # other catalogs' rows are invisible; LIKE wildcards and ASCII case do not leak in
    for ns in [("theirs",), ("their_ns",), ("NS",), ("axb",), ("a%",), ("dee",), ("deep", "e")]:
        assert not catalog.namespace_exists(ns), ns
    with pytest.raises(NotFoundError, match="namespace 'theirs' not found in catalog 'iceduck'"):
        catalog.list_namespaces(("theirs",))
    assert catalog.load_namespace_properties(("ns",)) == {"owner": "me", "location": str(warehouse / "ns")}
    assert catalog.load_namespace_properties(("deep", "er")) == {"location": str(warehouse / "deep" / "er")}
    assert filled.open("other").list_namespaces() == [("ns",), ("their_ns",), ("theirs",)]


def test_list_tables_skips_views_and_other_catalogs(filled: Filled) -> None:
    catalog = filled.open()
    assert [t.name for t in catalog.list_tables(("ns",))] == ["broken", "gone", "old", "t1"]
    assert catalog.list_tables(("deep", "er")) == [TableIdentifier(("deep", "er"), "t3")]
    assert catalog.list_tables(("deep",)) == []
    assert catalog.list_tables(("view_only",)) == []
    with pytest.raises(NotFoundError, match="namespace 'nope' not found in catalog 'iceduck'"):
        catalog.list_tables(("nope",))
    assert catalog.table_exists(TableIdentifier(("ns",), "old"))
    assert not catalog.table_exists(TableIdentifier(("ns",), "v"))
    assert not catalog.table_exists(TableIdentifier(("ns",), "t8"))  # catalog 'other'
    assert [t.name for t in filled.open("other").list_tables(("ns",))] == ["t8"]


def test_load_table(filled: Filled) -> None:
    warehouse, catalog = filled.warehouse, filled.open()
    loaded = catalog.load_table(TableIdentifier(("ns",), "t1"))
    assert loaded.identifier == TableIdentifier(("ns",), "t1")
    assert loaded.metadata_location == str(warehouse / "ns" / "t1" / "metadata" / "00001-a.metadata.json")
    assert loaded.metadata.last_updated_ms == 1
    old = catalog.load_table(TableIdentifier(("ns",), "old"))
    assert old.metadata_location.startswith("file:/") and old.metadata == loaded.metadata
    assert catalog.load_table(TableIdentifier(("deep", "er"), "t3")).metadata.last_updated_ms == 3


def test_load_table_errors(filled: Filled) -> None:
    catalog = filled.open()
    with pytest.raises(NotFoundError, match=r"^table 'ns\.nope' not found in catalog 'iceduck'$"):
        catalog.load_table(TableIdentifier(("ns",), "nope"))
    with pytest.raises(NotFoundError, match=r"^table 'theirs\.t9' not found in catalog 'iceduck'$"):
        catalog.load_table(TableIdentifier(("theirs",), "t9"))
    with pytest.raises(NotFoundError, match=r"^table 'ns\.v' not found in catalog 'iceduck': it is a view$"):
        catalog.load_table(TableIdentifier(("ns",), "v"))
    with pytest.raises(
        MissingFileError, match=r"ns/gone/00009-x\.metadata\.json: metadata file of table 'ns\.gone'"
    ):
        catalog.load_table(TableIdentifier(("ns",), "gone"))
    with pytest.raises(
        CorruptDataError, match=rf"{filled.where}: catalog row of table 'ns\.broken'.*no metadata_location"
    ):
        catalog.load_table(TableIdentifier(("ns",), "broken"))


def test_read_only_never_creates_or_changes(tmp_path: Path, warehouse: Path) -> None:
    with pytest.raises(NotFoundError, match=r"no catalog database at .*/absent/catalog\.db"):
        SqliteCatalog(tmp_path / "absent", read_only=True)
    assert not (tmp_path / "absent").exists()
    db = warehouse / "catalog.db"
    before = (db.read_bytes(), db.stat().st_mtime_ns)
    catalog = SqliteCatalog(warehouse, read_only=True)
    assert catalog.load_table(TableIdentifier(("ns",), "t1")).metadata.last_updated_ms == 1
    assert catalog.list_namespaces() == [("a_b",), ("deep",), ("empty_ns",), ("ns",), ("view_only",)]
    assert catalog.list_tables(("ns",)) == [
        TableIdentifier(("ns",), n) for n in ("broken", "gone", "old", "t1")
    ]
    catalog.close()
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before


def test_read_only_file_without_catalog_tables_is_empty(tmp_path: Path) -> None:
    sqlite3.connect(tmp_path / "catalog.db").execute("CREATE TABLE unrelated(x)").connection.close()
    catalog = SqliteCatalog(tmp_path, read_only=True)
    assert catalog.list_namespaces() == [] and not catalog.namespace_exists(("x",))
    with pytest.raises(NotFoundError):
        catalog.load_table(TableIdentifier(("x",), "t"))


def test_v0_layout_is_read_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    conn = sqlite3.connect(db)
    conn.execute(SPARK_DDL["iceberg_tables"].replace(" iceberg_type VARCHAR(5),", ""))
    t = write_metadata(tmp_path / "ns" / "t", "00000-a.metadata.json", 5)
    conn.execute("INSERT INTO iceberg_tables VALUES ('iceduck', 'ns', 't', ?, NULL)", (str(t),))
    conn.commit()
    conn.close()
    catalog = SqliteCatalog(tmp_path)  # writable: adds the missing properties table only
    assert catalog.list_tables(("ns",)) == [TableIdentifier(("ns",), "t")]
    assert catalog.load_table(TableIdentifier(("ns",), "t")).metadata.last_updated_ms == 5
    tables = ddl(db)
    assert "iceberg_type" not in tables["iceberg_tables"]
    assert tables["iceberg_namespace_properties"] == SPARK_DDL["iceberg_namespace_properties"]


def test_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "catalog.db").write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(CorruptDataError, match=r"catalog\.db: not a usable SQLite catalog database"):
        SqliteCatalog(tmp_path, read_only=True)


def test_readers_hold_no_lock_between_calls(warehouse: Path) -> None:
    catalog = SqliteCatalog(warehouse)
    catalog.list_namespaces()
    catalog.load_table(TableIdentifier(("ns",), "t1"))
    writer = sqlite3.connect(warehouse / "catalog.db", timeout=0, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")  # would fail at once if iceduck held a shared lock
    writer.execute("UPDATE iceberg_tables SET previous_metadata_location = 'x' WHERE table_name = 't1'")
    writer.execute("COMMIT")
    writer.close()
    assert catalog.table_exists(TableIdentifier(("ns",), "t1"))
