"""Views in the JDBC catalog (SQLite and PostgreSQL): ``iceberg_type = 'VIEW'`` rows as Java's
``JdbcCatalog``/``JdbcViewOperations`` (schema version V1) keep them, one namespace of names
shared with tables, and the V0 schema that cannot hold views."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.jdbc_catalog import JdbcCatalog
from iceduck.catalog.jdbc_store import CREATE_NAMESPACE_PROPERTIES_SQL, CREATE_TABLES_SQL
from iceduck.catalog.postgres import PostgresCatalog
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    NotFoundError,
    UnsupportedError,
    ValidationError,
)
from iceduck.io.fileio import to_local_path
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.types import LongType, NestedField
from iceduck.spec.view_metadata import ViewMetadata, ViewRepresentation, add_view_version, new_view
from iceduck.txn.builder import new_table_metadata

V = TableIdentifier(("ns",), "v")
T = TableIdentifier(("ns",), "t")
SCHEMA = Schema((NestedField(1, "id", LongType()),))

Rows = Callable[[str], list[tuple[object, ...]]]


@pytest.fixture(params=["sqlite", "postgres"])
def catalog_and_rows(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[JdbcCatalog, Rows]:
    """A fresh V1 catalog with namespace ``ns``, and a way to read its database's rows directly."""
    warehouse = tmp_path / "wh"
    catalog: JdbcCatalog
    if request.param == "sqlite":
        catalog = SqliteCatalog(warehouse)

        def rows(sql: str) -> list[tuple[object, ...]]:
            with sqlite3.connect(warehouse / "catalog.db") as conn:
                return conn.execute(sql).fetchall()

    else:
        import psycopg

        uri = request.getfixturevalue("postgres_database")
        catalog = PostgresCatalog(uri, str(warehouse), f"c_{uuid.uuid4().hex[:12]}")

        def rows(sql: str) -> list[tuple[object, ...]]:
            with psycopg.connect(uri) as conn:
                return conn.execute(sql).fetchall()

    request.addfinalizer(catalog.close)
    catalog.create_namespace(("ns",))
    return catalog, rows


def _view(catalog: JdbcCatalog, ident: TableIdentifier = V, sql: str = "SELECT 1 AS id") -> ViewMetadata:
    return new_view(
        catalog.default_view_location(ident),
        SCHEMA,
        [ViewRepresentation(sql, "spark")],
        ident.namespace,
        default_catalog=catalog.name,
        summary={"engine-name": "iceduck"},
        timestamp_ms=1,
    )


def _create_table(catalog: JdbcCatalog, ident: TableIdentifier = T) -> None:
    md = new_table_metadata(SCHEMA, UNPARTITIONED, UNSORTED, catalog.default_table_location(ident), {})
    catalog.create_table(ident, md)


def test_a_view_is_a_view_row_pointing_at_a_gzip_metadata_file(
    catalog_and_rows: tuple[JdbcCatalog, Rows],
) -> None:
    catalog, rows = catalog_and_rows
    created = catalog.create_view(V, _view(catalog))
    stored = rows(
        "SELECT table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type "
        f"FROM iceberg_tables WHERE catalog_name = '{catalog.name}'"
    )
    assert stored == [("ns", "v", created.metadata_location, None, "VIEW")]
    assert created.metadata_location.startswith(f"{catalog.default_view_location(V)}/metadata/00000-")
    assert created.metadata_location.endswith(".gz.metadata.json")
    loaded = catalog.load_view(V)
    assert loaded == created
    assert catalog.list_views(("ns",)) == [V] and catalog.list_tables(("ns",)) == []
    assert catalog.view_exists(V) and not catalog.table_exists(V)
    with pytest.raises(NotFoundError, match="it is a view"):
        catalog.load_table(V)


def test_commit_is_a_compare_and_swap(catalog_and_rows: tuple[JdbcCatalog, Rows]) -> None:
    catalog, rows = catalog_and_rows
    base = catalog.create_view(V, _view(catalog))
    replaced = add_view_version(
        base.metadata, SCHEMA, [ViewRepresentation("SELECT 2 AS id", "spark")], ("ns",)
    )
    committed = catalog.commit_view(base, replaced)
    assert "/00001-" in committed.metadata_location
    assert catalog.load_view(V).metadata.current_version_id == 2
    stored = rows(
        "SELECT metadata_location, previous_metadata_location FROM iceberg_tables "
        f"WHERE catalog_name = '{catalog.name}'"
    )
    assert stored == [(committed.metadata_location, base.metadata_location)]
    with pytest.raises(CommitConflictError, match=r"Cannot commit ns\.v"):
        catalog.commit_view(base, replaced)  # base is no longer current
    leftover = sorted(
        p.name for p in Path(to_local_path(catalog.default_view_location(V)), "metadata").iterdir()
    )
    assert len(leftover) == 2  # the losing commit's file was deleted


def test_tables_and_views_share_one_namespace_of_names(catalog_and_rows: tuple[JdbcCatalog, Rows]) -> None:
    catalog, _ = catalog_and_rows
    catalog.create_view(V, _view(catalog))
    _create_table(catalog)
    with pytest.raises(AlreadyExistsError, match=r"View with same name already exists: ns\.v"):
        _create_table(catalog, V)
    with pytest.raises(AlreadyExistsError, match=r"Table with same name already exists: ns\.t"):
        catalog.create_view(T, _view(catalog, T))
    with pytest.raises(AlreadyExistsError, match=r"View already exists: ns\.v"):
        catalog.create_view(V, _view(catalog))
    with pytest.raises(AlreadyExistsError, match=r"Cannot rename ns\.t to ns\.v\. View already exists"):
        catalog.rename_table(T, V)
    with pytest.raises(AlreadyExistsError, match=r"Cannot rename ns\.v to ns\.t\. Table already exists"):
        catalog.rename_view(V, T)
    with pytest.raises(AlreadyExistsError, match=r"View with same name already exists: ns\.v"):
        catalog.register_table(V, catalog.load_table(T).metadata_location)
    with pytest.raises(NotFoundError, match=r"view 'ns\.t' not found .*: it is a table"):
        catalog.load_view(T)
    with pytest.raises(NotFoundError):
        catalog.drop_view(T)  # a table is never dropped as a view
    with pytest.raises(NotFoundError):
        catalog.drop_table(V)
    assert catalog.table_exists(T) and catalog.view_exists(V)


def test_rename_drop_register_and_the_namespace(catalog_and_rows: tuple[JdbcCatalog, Rows]) -> None:
    catalog, _ = catalog_and_rows
    created = catalog.create_view(V, _view(catalog))
    with pytest.raises(ValidationError, match="not empty"):
        catalog.drop_namespace(("ns",))
    catalog.create_namespace(("other",))
    w = TableIdentifier(("other",), "w")
    with pytest.raises(NotFoundError, match="namespace 'nope'"):
        catalog.rename_view(V, TableIdentifier(("nope",), "w"))
    catalog.rename_view(V, w)
    assert catalog.list_views(("ns",)) == [] and catalog.list_views(("other",)) == [w]
    assert catalog.load_view(w).metadata == created.metadata
    registered = catalog.register_view(V, created.metadata_location)
    assert registered.metadata == created.metadata
    catalog.drop_view(w)
    assert not catalog.view_exists(w)
    # Java's dropView deletes the current metadata file (gc.enabled defaults to true)
    assert not Path(to_local_path(created.metadata_location)).exists()
    with pytest.raises(NotFoundError, match=r"view 'other\.w' not found"):
        catalog.drop_view(w)
    with pytest.raises(NotFoundError, match=r"view 'ns\.x' not found"):
        catalog.rename_view(TableIdentifier(("ns",), "x"), w)


def test_a_v0_database_lists_no_views_and_refuses_to_write_one(tmp_path: Path) -> None:
    """Java: "JDBC catalog is initialized without view support" on a V0 schema."""
    tmp_path.mkdir(exist_ok=True)
    with sqlite3.connect(tmp_path / "catalog.db") as conn:
        conn.execute(CREATE_TABLES_SQL)
        conn.execute(CREATE_NAMESPACE_PROPERTIES_SQL)
    catalog = SqliteCatalog(tmp_path)
    catalog.create_namespace(("ns",))
    assert catalog.list_views(("ns",)) == [] and not catalog.view_exists(V)
    with pytest.raises(UnsupportedError, match=r"V0 schema.*initialized without view support"):
        catalog.create_view(V, _view(catalog))
    assert not (tmp_path / "ns").exists()  # no metadata file left behind
    _create_table(catalog)  # tables still work
    assert catalog.list_tables(("ns",)) == [T]
    catalog.close()


def test_the_rows_spark_wrote_read_as_views(tmp_path: Path) -> None:
    """tests/fixtures/views/catalog_rows.json: Spark's ``iceberg_tables`` rows, their metadata
    locations moved to the fixture folder, read by iceduck's catalog."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "views"
    saved = json.loads((fixtures / "catalog_rows.json").read_text())
    catalog = SqliteCatalog(tmp_path)
    view_rows = [r for r in saved["catalog_rows"][1:] if r["iceberg_type"] == "VIEW"]
    with sqlite3.connect(tmp_path / "catalog.db") as conn:
        for r in view_rows:
            location = r["metadata_location"].replace(saved["root"], str(fixtures))
            conn.execute(
                "INSERT INTO iceberg_tables VALUES (?, ?, ?, ?, ?, ?)",
                (r["catalog_name"], r["table_namespace"], r["table_name"], location, None, "VIEW"),
            )
    names = sorted(r["table_name"] for r in view_rows)
    assert [v.name for v in catalog.list_views(("ns",))] == names
    assert catalog.list_tables(("ns",)) == []
    replaced = catalog.load_view(TableIdentifier(("ns",), "replaced"))
    assert (
        replaced.metadata_location.endswith(".gz.metadata.json") and "/00003-" in replaced.metadata_location
    )
    assert replaced.metadata.current_version.representation("spark") is not None
    assert catalog.load_view(
        TableIdentifier(("ns",), "cross_catalog")
    ).metadata.current_version.default_catalog == ("spark_catalog")
    catalog.close()
