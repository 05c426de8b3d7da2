"""Catalog writes on every catalog (SQLite, PostgreSQL, Hadoop, the REST client talking
to an ``iceduck serve`` over SQLite, AWS Glue on moto's server, and a Hive standalone
metastore): namespaces, create/commit/drop/rename, conflicts, read-only."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from iceduck.catalog.base import Catalog, LoadedTable, TableIdentifier
from iceduck.catalog.filesystem import HadoopCatalog
from iceduck.catalog.glue import GlueCatalog
from iceduck.catalog.hive import HiveCatalog
from iceduck.catalog.jdbc_catalog import JdbcCatalog
from iceduck.catalog.metadata_files import METADATA_DIR, VERSION_HINT
from iceduck.catalog.postgres import PostgresCatalog
from iceduck.catalog.purge import reachable_files
from iceduck.catalog.rest_client.catalog import RestCatalog
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    NotFoundError,
    UnsupportedError,
    UserError,
    ValidationError,
)
from iceduck.io.fileio import to_local_path
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Operation
from iceduck.spec.sort import UNSORTED
from iceduck.spec.types import LongType, NestedField, StringType
from iceduck.txn.builder import MetadataBuilder, new_table_metadata
from iceduck.txn.snapshot import SnapshotChanges, produce
from tests.support.glue import glue_catalog, glue_table, new_account
from tests.support.hive_metastore import empty_metastore, metastore_table
from tests.support.rest import start_server
from tests.txn.snapshot_support import write_data

SCHEMA = Schema((NestedField(1, "id", LongType(), True), NestedField(2, "name", StringType())))
T = TableIdentifier(("db",), "t")

Factory = Callable[[], Catalog]
#: the database URI of each PostgreSQL catalog name a test opened
_DATABASES: dict[str, str] = {}
#: the SQLite file behind each REST server a test started, by its URI
_SERVED: dict[str, Path] = {}


@pytest.fixture(params=["sqlite", "postgres", "hadoop", "rest", "glue", "hive"])
def make_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Factory:
    """A factory: every call opens a new catalog object on the same warehouse (two writers).
    On PostgreSQL each test is a catalog of its own name in the module's database; REST is
    a client of an ``iceduck serve`` (in a thread) over a SQLite warehouse; Glue is moto's
    Glue (the run's moto server), each test a catalog id of its own, over a local warehouse
    (a Glue table may live anywhere, so the tests look at its files on disk); Hive is the
    run's metastore, emptied of the databases earlier tests left."""
    warehouse = tmp_path / "wh"
    if request.param == "hive":
        metastore = request.getfixturevalue("hive_metastore")
        empty_metastore(metastore)
        return lambda: HiveCatalog(metastore.uri, str(warehouse), "hms")
    if request.param == "sqlite":
        return lambda: SqliteCatalog(warehouse)
    if request.param == "rest":
        warehouse.mkdir()
        server = start_server(warehouse)
        request.addfinalizer(server.stop)
        _SERVED[server.url] = warehouse / "catalog.db"
        return lambda: RestCatalog(server.url, "iceduck")
    if request.param == "postgres":
        uri, name = request.getfixturevalue("postgres_database"), f"c_{uuid.uuid4().hex[:12]}"
        _DATABASES[name] = uri
        return lambda: PostgresCatalog(uri, str(warehouse), name)
    if request.param == "glue":
        server, account = request.getfixturevalue("s3_server"), new_account()
        return lambda: glue_catalog(server, account, str(warehouse))
    return lambda: HadoopCatalog(warehouse)


def _catalog_rows(catalog: Catalog, sql: str) -> list[tuple[object, ...]]:
    """Rows of ``sql`` read from a JDBC catalog's database directly (not through iceduck)."""
    if isinstance(catalog, SqliteCatalog):
        return sqlite3.connect(catalog.db_path).execute(sql).fetchall()
    if isinstance(catalog, RestCatalog):
        return sqlite3.connect(_SERVED[catalog.uri]).execute(sql).fetchall()
    import psycopg

    assert isinstance(catalog, PostgresCatalog)
    with psycopg.connect(_DATABASES[catalog.name]) as conn:
        return conn.execute(sql.replace("?", "%s")).fetchall()


def _create(catalog: Catalog, ident: TableIdentifier = T, **properties: str) -> LoadedTable:
    if not catalog.namespace_exists(ident.namespace):
        catalog.create_namespace(ident.namespace)
    metadata = new_table_metadata(
        SCHEMA, UNPARTITIONED, UNSORTED, catalog.default_table_location(ident), dict(properties)
    )
    return catalog.create_table(ident, metadata)


def _set(base: LoadedTable, **updates: str) -> object:
    builder = MetadataBuilder(base.metadata)
    builder.set_properties(dict(updates))
    return builder.build()


def _widen(base: LoadedTable, column: str) -> object:
    """``base`` with a new column (id 3) named ``column``: a change every catalog refuses on
    a base that is no longer current -- the REST protocol by the ``assert-last-assigned-field-id``
    and ``assert-current-schema-id`` requirements it asserts (a change of properties only
    asserts the table's UUID, and the server applies it to whatever is current)."""
    builder = MetadataBuilder(base.metadata)
    fields = (*base.metadata.schema().fields, NestedField(3, column, StringType()))
    builder.set_current_schema(builder.add_schema(Schema(fields), last_column_id=3))
    builder.set_properties({"who": column})
    return builder.build()


def _path(location: str, *more: str) -> Path:
    """A local table's location (a path, or a ``file:`` URI as a Hive Metastore qualifies it) as a Path."""
    return Path(to_local_path(location), *more)


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# -- namespaces ----------------------------------------------------------------------------------


def test_namespace_create_and_drop(make_catalog: Factory) -> None:
    catalog = make_catalog()
    catalog.create_namespace(("a",))
    assert catalog.namespace_exists(("a",))
    with pytest.raises(AlreadyExistsError, match="namespace 'a' already exists"):
        catalog.create_namespace(("a",))
    if isinstance(catalog, GlueCatalog):  # a Glue database has exactly one level
        with pytest.raises(UnsupportedError, match="exactly one level"):
            catalog.create_namespace(("a", "b"))
        assert catalog.list_namespaces(("a",)) == []
        catalog.drop_namespace(("a",))
        assert not catalog.namespace_exists(("a",))
        return
    if isinstance(catalog, HiveCatalog):  # a Hive database has no databases inside
        with pytest.raises(UserError, match="exactly one level"):
            catalog.create_namespace(("a", "b"))
    else:
        catalog.create_namespace(("a", "b"))
        with pytest.raises(ValidationError, match="not empty"):
            catalog.drop_namespace(("a",))
        catalog.drop_namespace(("a", "b"))
    catalog.drop_namespace(("a",))
    assert not catalog.namespace_exists(("a",))
    with pytest.raises(NotFoundError, match="namespace 'a' not found"):
        catalog.drop_namespace(("a",))


def test_namespace_with_a_table_cannot_be_dropped(make_catalog: Factory) -> None:
    catalog = make_catalog()
    _create(catalog)
    with pytest.raises(ValidationError, match="namespace 'db' is not empty"):
        catalog.drop_namespace(("db",))


def test_sqlite_namespace_rows_are_javas(tmp_path: Path) -> None:
    """Java's createNamespace stores the properties plus exists=true (also with properties,
    as in the catalog Spark writes)."""
    catalog = SqliteCatalog(tmp_path)
    catalog.create_namespace(("e",))
    catalog.create_namespace(("p", "q"), {"k": "v"})
    rows = sqlite3.connect(tmp_path / "catalog.db").execute(
        "SELECT catalog_name, namespace, property_key, property_value FROM iceberg_namespace_properties "
        "ORDER BY namespace, property_key"
    )
    assert rows.fetchall() == [
        ("iceduck", "e", "exists", "true"),
        ("iceduck", "p.q", "exists", "true"),
        ("iceduck", "p.q", "k", "v"),
    ]
    assert catalog.load_namespace_properties(("p", "q")) == {"k": "v", "location": f"{tmp_path}/p/q"}
    with pytest.raises(ValidationError, match="reserved"):
        catalog.create_namespace(("x",), {"exists": "false"})
    with pytest.raises(ValidationError, match="must not contain"):
        catalog.create_namespace(("a.b",))


def test_hadoop_namespaces_have_no_properties(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError, match="cannot have properties"):
        HadoopCatalog(tmp_path).create_namespace(("n",), {"k": "v"})


def test_default_table_location_is_javas(tmp_path: Path) -> None:
    """Spark's JDBC catalog: <warehouse>/<levels>/<table>, a plain path (see the fixture
    warehouse: location "/tmp/.../fmt/v1_unpartitioned")."""
    ident = TableIdentifier(("deep", "er"), "t")
    assert SqliteCatalog(tmp_path).default_table_location(ident) == f"{tmp_path}/deep/er/t"
    assert HadoopCatalog(tmp_path).default_table_location(ident) == f"{tmp_path}/deep/er/t"


# -- create / commit -----------------------------------------------------------------------------


def test_create_table_writes_first_metadata_file(make_catalog: Factory) -> None:
    catalog = make_catalog()
    created = _create(catalog)
    name = _path(created.metadata_location).name
    if isinstance(catalog, JdbcCatalog | RestCatalog | GlueCatalog | HiveCatalog):
        assert name.startswith("00000-") and name.endswith(".metadata.json")
    else:
        assert name == "v1.metadata.json"
        assert (_path(created.metadata_location).parent / VERSION_HINT).read_text() == "1"
    loaded = make_catalog().load_table(T)
    assert loaded.metadata_location == created.metadata_location
    assert loaded.metadata == created.metadata
    with pytest.raises(AlreadyExistsError, match=r"'db\.t' already exists"):
        _create(catalog)
    assert len(_files(_path(created.metadata.location) / METADATA_DIR)) == (1 if name[0] == "0" else 2)


def test_create_in_missing_namespace(make_catalog: Factory, tmp_path: Path) -> None:
    catalog = make_catalog()
    if isinstance(catalog, RestCatalog | HiveCatalog):  # locations come from namespaces that exist
        with pytest.raises(NotFoundError, match="namespace 'db' not found"):
            catalog.default_table_location(T)
        location = str(tmp_path / "wh" / "db" / "t")
    else:
        location = catalog.default_table_location(T)
    metadata = new_table_metadata(SCHEMA, UNPARTITIONED, UNSORTED, location, {})
    with pytest.raises(NotFoundError, match="namespace 'db' not found"):
        catalog.create_table(T, metadata)


def test_commit_writes_next_file_and_metadata_log(make_catalog: Factory) -> None:
    catalog = make_catalog()
    v0 = _create(catalog)
    v1 = catalog.commit_table(v0, _set(v0, a="1"))
    v2 = catalog.commit_table(v1, _set(v1, b="2"))
    names = [_path(t.metadata_location).name for t in (v0, v1, v2)]
    if isinstance(catalog, GlueCatalog):
        assert [n[:6] for n in names] == ["00000-", "00001-", "00002-"]
        parameters = glue_table(catalog, T)["Parameters"]
        assert parameters == {
            "table_type": "ICEBERG",
            "metadata_location": v2.metadata_location,
            "previous_metadata_location": v1.metadata_location,
        }
    elif isinstance(catalog, JdbcCatalog | RestCatalog):
        assert [n[:6] for n in names] == ["00000-", "00001-", "00002-"]
        row = _catalog_rows(
            catalog,
            "SELECT metadata_location, previous_metadata_location, iceberg_type FROM iceberg_tables "
            f"WHERE catalog_name = '{catalog.name}'",
        )
        assert row == [(v2.metadata_location, v1.metadata_location, "TABLE")]
    elif isinstance(catalog, HiveCatalog):
        assert [n[:6] for n in names] == ["00000-", "00001-", "00002-"]
        parameters = metastore_table(catalog.uri, "db", "t").parameters
        assert parameters["metadata_location"] == v2.metadata_location
        assert parameters["previous_metadata_location"] == v1.metadata_location
        assert parameters["table_type"] == "ICEBERG"
    else:
        assert names == ["v1.metadata.json", "v2.metadata.json", "v3.metadata.json"]
        assert (_path(v2.metadata_location).parent / VERSION_HINT).read_text() == "3"
    loaded = make_catalog().load_table(T)
    assert loaded.metadata_location == v2.metadata_location
    assert loaded.metadata.properties["a"] == "1" and loaded.metadata.properties["b"] == "2"
    log = [(e.timestamp_ms, e.metadata_file) for e in loaded.metadata.metadata_log]
    assert log == [
        (v0.metadata.last_updated_ms, v0.metadata_location),
        (v1.metadata.last_updated_ms, v1.metadata_location),
    ]


def test_conflicting_commits_from_the_same_base(make_catalog: Factory) -> None:
    first, second = make_catalog(), make_catalog()
    base = _create(first)
    base_again = second.load_table(T)
    winner = first.commit_table(base, _widen(base, "first"))
    before = _files(_path(base.metadata.location) / METADATA_DIR)
    with pytest.raises(CommitConflictError, match=r"'db\.t'"):
        second.commit_table(base_again, _widen(base_again, "second"))
    assert _files(_path(base.metadata.location) / METADATA_DIR) == before  # loser's file deleted
    assert first.load_table(T).metadata_location == winner.metadata_location
    assert second.load_table(T).metadata.properties["who"] == "first"


def test_metadata_log_trimmed_and_old_files_deleted(make_catalog: Factory) -> None:
    catalog = make_catalog()
    table = _create(
        catalog,
        **{"write.metadata.previous-versions-max": "2", "write.metadata.delete-after-commit.enabled": "true"},
    )
    history = [table]
    for i in range(4):
        table = catalog.commit_table(table, _set(table, n=str(i)))
        history.append(table)
    log = [e.metadata_file for e in table.metadata.metadata_log]
    assert log == [history[2].metadata_location, history[3].metadata_location]
    on_disk = {p.name for p in (_path(table.metadata.location) / METADATA_DIR).glob("*.metadata.json")}
    assert on_disk == {_path(t.metadata_location).name for t in history[2:]}


def test_metadata_log_kept_without_delete_after_commit(make_catalog: Factory) -> None:
    catalog = make_catalog()
    table = _create(catalog, **{"write.metadata.previous-versions-max": "1"})
    first = table
    for i in range(3):
        table = catalog.commit_table(table, _set(table, n=str(i)))
    assert len(table.metadata.metadata_log) == 1
    assert _path(first.metadata_location).exists()


def test_commit_assigns_a_missing_table_uuid(make_catalog: Factory) -> None:
    """Old v1 files may have no table-uuid; Java's commit assigns one."""
    catalog = make_catalog()
    table = _create(catalog)
    # the table as read from such a file, and a change built on it
    anonymous = dataclasses.replace(table, metadata=dataclasses.replace(table.metadata, table_uuid=None))
    builder = MetadataBuilder(anonymous.metadata)
    builder.set_properties({"k": "v"})
    committed = catalog.commit_table(anonymous, builder.build())
    assert committed.metadata.table_uuid is not None
    assert make_catalog().load_table(T).metadata.table_uuid == committed.metadata.table_uuid


def test_gzip_metadata_codec(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path)
    table = _create(catalog, **{"write.metadata.compression-codec": "gzip"})
    assert table.metadata_location.endswith(".gz.metadata.json")
    assert SqliteCatalog(tmp_path).load_table(T).metadata == table.metadata


# -- drop / rename -------------------------------------------------------------------------------


def test_drop_table_without_purge_keeps_files_in_sqlite(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path)
    table = _create(catalog)
    catalog.drop_table(T)
    assert not catalog.table_exists(T)
    assert _path(table.metadata_location).exists()
    with pytest.raises(NotFoundError, match=r"'db\.t' not found"):
        catalog.drop_table(T)


def test_drop_table_purge_deletes_every_metadata_file(make_catalog: Factory) -> None:
    catalog = make_catalog()
    table = _create(catalog)
    table = catalog.commit_table(table, _set(table, x="1"))
    files = reachable_files(table.metadata, table.metadata_location)
    assert len(files) == 2 and all(_path(f).exists() for f in files)
    catalog.drop_table(T, purge=True)
    assert not catalog.table_exists(T)
    assert not any(_path(f).exists() for f in files)


def test_drop_table_purge_deletes_data_manifests_and_lists(make_catalog: Factory) -> None:
    catalog = make_catalog()
    table = _create(catalog)
    _path(table.metadata.location, "data").mkdir(parents=True, exist_ok=True)
    cache = ManifestCache()
    for i in range(2):
        added = write_data(table.metadata, [i], "x")
        changes = SnapshotChanges(Operation.APPEND, added_data_files=(added,))
        pending = produce(table.metadata, changes, table_location=table.metadata.location, cache=cache)
        table = catalog.commit_table(table, pending.metadata)
    files = reachable_files(table.metadata, table.metadata_location)
    names = [_path(f).name for f in files]
    assert sum(n.endswith(".parquet") for n in names) == 2
    assert sum(n.startswith("snap-") for n in names) == 2
    assert sum(n.endswith(".metadata.json") for n in names) == 3
    assert len(files) >= 9 and all(_path(f).exists() for f in files)
    catalog.drop_table(T, purge=True)
    assert not any(_path(f).exists() for f in files)
    assert not catalog.table_exists(T)
    assert not _path(table.metadata.location).exists()  # the emptied folders go too


def test_purge_keeps_folders_that_hold_files_no_metadata_reaches(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path)
    catalog.create_namespace(("ns",))
    table = _create(catalog)
    stray = Path(table.metadata.location, "data", "part=1", "notes.txt")
    stray.parent.mkdir(parents=True)
    stray.write_text("not Iceberg's")
    Path(table.metadata.location, "data", "part=2").mkdir()
    catalog.drop_table(T, purge=True)
    assert stray.read_text() == "not Iceberg's"
    assert not Path(table.metadata.location, "data", "part=2").exists()
    assert not Path(table.metadata.location, "metadata").exists()


def test_rename_table_sqlite(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path)
    table = _create(catalog)
    catalog.create_namespace(("other",))
    target = TableIdentifier(("other",), "u")
    catalog.rename_table(T, target)
    assert not catalog.table_exists(T)
    assert catalog.load_table(target).metadata_location == table.metadata_location
    with pytest.raises(NotFoundError, match=r"'db\.t' not found"):
        catalog.rename_table(T, target)
    _create(catalog)
    with pytest.raises(AlreadyExistsError, match=r"'other\.u' already exists"):
        catalog.rename_table(T, target)
    with pytest.raises(NotFoundError, match="namespace 'nope' not found"):
        catalog.rename_table(T, TableIdentifier(("nope",), "t"))


def test_rename_table_hadoop_is_unsupported(tmp_path: Path) -> None:
    catalog = HadoopCatalog(tmp_path)
    _create(catalog)
    with pytest.raises(UnsupportedError, match="cannot rename"):
        catalog.rename_table(T, TableIdentifier(("db",), "u"))


def test_hadoop_table_must_live_in_its_folder(tmp_path: Path) -> None:
    catalog = HadoopCatalog(tmp_path)
    catalog.create_namespace(("db",))
    metadata = new_table_metadata(SCHEMA, UNPARTITIONED, UNSORTED, str(tmp_path / "elsewhere"), {})
    with pytest.raises(ValidationError, match="cannot have location"):
        catalog.create_table(T, metadata)


# -- read-only -----------------------------------------------------------------------------------


def test_read_only_catalogs_refuse_every_write(tmp_path: Path) -> None:
    writable = SqliteCatalog(tmp_path)
    table = _create(writable)
    HadoopCatalog(tmp_path / "h").create_namespace(("db",))
    before = (tmp_path / "catalog.db").read_bytes()
    for catalog in (SqliteCatalog(tmp_path, read_only=True), HadoopCatalog(tmp_path / "h", read_only=True)):
        calls = [
            lambda c=catalog: c.create_namespace(("n",)),
            lambda c=catalog: c.drop_namespace(("db",)),
            lambda c=catalog: c.create_table(T, table.metadata),
            lambda c=catalog: c.commit_table(table, table.metadata),
            lambda c=catalog: c.drop_table(T, purge=True),
            lambda c=catalog: c.rename_table(T, TableIdentifier(("db",), "u")),
        ]
        for call in calls:
            with pytest.raises((UserError, UnsupportedError), match=r"read-only|cannot rename"):
                call()
    assert (tmp_path / "catalog.db").read_bytes() == before
    assert writable.load_table(T).metadata_location == table.metadata_location
    assert json.loads(Path(table.metadata_location).read_text())["table-uuid"] == table.metadata.table_uuid
