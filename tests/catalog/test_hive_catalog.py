"""The Hive Metastore catalog against a real Hive standalone metastore: what it stores is what
Java's HiveCatalog stores, a Hive table is named as such, the table lock, a metastore that is
down, a lost answer, and the namespace properties as Java maps them."""

from __future__ import annotations

import getpass
import threading
from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.hive import HiveCatalog
from iceduck.errors import (
    AlreadyExistsError,
    CommitStateUnknownError,
    NotFoundError,
    StorageError,
    UnsupportedError,
    UserError,
)
from iceduck.io.fileio import to_local_path
from tests.catalog.test_catalog_writes import SCHEMA, T, _create, _set
from tests.support.hive_metastore import HiveMetastore, client, empty_metastore, free_port, metastore_table
from tests.support.lost_answers import AnswerLosingProxy


@pytest.fixture
def catalog(hive_metastore: HiveMetastore, tmp_path: Path) -> HiveCatalog:
    empty_metastore(hive_metastore)
    return HiveCatalog(hive_metastore.uri, str(tmp_path / "wh"), "hms")


def _hive_table(uri: str, database: str, name: str) -> None:
    """A plain Hive table (no table_type parameter), as Hive's CREATE TABLE makes it."""
    from hive_metastore import ttypes

    sd = ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(name="x", type="int")],
        location=None,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=ttypes.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"),
    )
    table = ttypes.Table(tableName=name, dbName=database, sd=sd, parameters={}, tableType="MANAGED_TABLE")
    with client(uri) as hms:
        hms.create_table(table)


def _locks(metastore: HiveMetastore) -> list[Any]:
    """The locks the metastore holds (SHOW LOCKS)."""
    from hive_metastore import ttypes

    with client(metastore.uri) as hms:
        return list(hms.show_locks(ttypes.ShowLocksRequest()).locks or [])


def test_stored_table_is_javas(catalog: HiveCatalog) -> None:
    """HiveTableOperations with the Hive engine off: EXTERNAL_TABLE, EXTERNAL=TRUE,
    table_type=ICEBERG, metadata_location (+ previous on commits), the storage descriptor's
    location, columns in Hive's type names, FileInputFormat/FileOutputFormat, LazySimpleSerDe."""
    v0 = _create(catalog, T, owner_note="x")
    stored = metastore_table(catalog.uri, "db", "t")
    assert stored.tableType == "EXTERNAL_TABLE"
    assert stored.parameters["EXTERNAL"] == "TRUE"
    assert stored.parameters["table_type"] == "ICEBERG"
    assert stored.parameters["metadata_location"] == v0.metadata_location
    assert "previous_metadata_location" not in stored.parameters
    assert stored.parameters["owner_note"] == "x"  # table properties are copied, as Java does
    assert stored.parameters["uuid"] == v0.metadata.table_uuid
    assert stored.sd.location == v0.metadata.location
    assert [(c.name, c.type) for c in stored.sd.cols] == [("id", "bigint"), ("name", "string")]
    assert stored.sd.inputFormat == "org.apache.hadoop.mapred.FileInputFormat"
    assert stored.sd.outputFormat == "org.apache.hadoop.mapred.FileOutputFormat"
    assert stored.sd.serdeInfo.serializationLib == "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
    builder_metadata = _set(v0, extra="1")
    v1 = catalog.commit_table(v0, builder_metadata)  # type: ignore[arg-type]
    stored = metastore_table(catalog.uri, "db", "t")
    assert stored.parameters["metadata_location"] == v1.metadata_location
    assert stored.parameters["previous_metadata_location"] == v0.metadata_location
    assert stored.parameters["extra"] == "1"


def test_default_location_is_the_database_s(catalog: HiveCatalog, tmp_path: Path) -> None:
    """Java's defaultWarehouseLocation: <database location>/<table>, the database at
    <warehouse>/<db>.db (qualified by the metastore as a file: URI) or where it says."""
    catalog.create_namespace(("db",))
    assert to_local_path(catalog.default_table_location(T)) == str(tmp_path / "wh" / "db.db" / "t")
    catalog.create_namespace(("other",), {"location": str(tmp_path / "elsewhere")})
    located = catalog.default_table_location(TableIdentifier(("other",), "t"))
    assert to_local_path(located) == str(tmp_path / "elsewhere" / "t")


def test_namespace_properties_as_java_maps_them(catalog: HiveCatalog, tmp_path: Path) -> None:
    catalog.create_namespace(("db",), {"comment": "the team's", "owner-team": "etl"})
    with client(catalog.uri) as hms:
        database = hms.get_database("db")
    assert database.description == "the team's"
    assert database.parameters == {"owner-team": "etl"}
    properties = catalog.load_namespace_properties(("db",))
    assert properties["comment"] == "the team's" and properties["owner-team"] == "etl"
    assert to_local_path(properties["location"]) == str(tmp_path / "wh" / "db.db")
    assert properties["hive.metastore.database.owner"] == database.ownerName == getpass.getuser()
    assert properties["hive.metastore.database.owner-type"] == "USER"
    assert catalog.update_namespace_properties(("db",), {"a": "1"}, ["owner-team", "nope"]) == (
        ["a"],
        ["owner-team"],
        ["nope"],
    )
    properties = catalog.load_namespace_properties(("db",))
    assert "owner-team" not in properties and properties["a"] == "1"


def test_a_namespace_is_one_database(catalog: HiveCatalog) -> None:
    with pytest.raises(UserError, match="exactly one level"):
        catalog.create_namespace(("a", "b"))
    catalog.create_namespace(("a",))
    assert catalog.list_namespaces(("a",)) == []
    assert ("a",) in catalog.list_namespaces()
    # a reader probing a dotted name (temp.main.t) finds nothing; a writer is told why
    deep = TableIdentifier(("a", "b"), "t")
    assert not catalog.table_exists(deep) and not catalog.namespace_exists(("a", "b"))
    with pytest.raises(NotFoundError, match=r"table 'a\.b\.t' not found"):
        catalog.load_table(deep)
    with pytest.raises(UserError, match="exactly one level"):
        _create(catalog, deep)


def test_a_hive_table_is_named_for_what_it_is(catalog: HiveCatalog) -> None:
    catalog.create_namespace(("db",))
    _hive_table(catalog.uri, "db", "plain")
    plain = TableIdentifier(("db",), "plain")
    with pytest.raises(
        UnsupportedError, match=r"'db\.plain' in catalog 'hms' is a Hive MANAGED_TABLE .*not an Iceberg"
    ):
        catalog.load_table(plain)
    assert not catalog.table_exists(plain)
    assert catalog.list_tables(("db",)) == []
    with pytest.raises(AlreadyExistsError, match="MANAGED_TABLE"):
        _create(catalog, plain)


def test_rename_and_register(catalog: HiveCatalog) -> None:
    v0 = _create(catalog)
    catalog.create_namespace(("other",))
    moved = TableIdentifier(("other",), "u")
    catalog.rename_table(T, moved)
    assert not catalog.table_exists(T)
    assert catalog.load_table(moved).metadata_location == v0.metadata_location
    registered = catalog.register_table(T, v0.metadata_location)
    assert registered.metadata == catalog.load_table(moved).metadata
    with pytest.raises(AlreadyExistsError):
        catalog.register_table(T, v0.metadata_location)
    catalog.drop_table(T)
    assert Path(to_local_path(v0.metadata_location)).exists()  # without purge: the files stay


def test_a_lock_held_elsewhere_is_waited_for_then_named(
    hive_metastore: HiveMetastore, tmp_path: Path
) -> None:
    """Java's MetastoreLock: a commit waits for the table's lock; one not granted in time is a
    clear error naming the table, and the commit's new metadata file is deleted."""
    from hive_metastore import ttypes

    empty_metastore(hive_metastore)
    impatient = HiveCatalog(
        hive_metastore.uri, str(tmp_path / "wh"), "hms", properties={"lock-acquire-timeout-ms": "300"}
    )
    v0 = _create(impatient)
    component = ttypes.LockComponent(
        type=ttypes.LockType.EXCLUSIVE, level=ttypes.LockLevel.TABLE, dbname="db", tablename="t"
    )
    with client(hive_metastore.uri) as hms:
        held = hms.lock(ttypes.LockRequest(component=[component], user="other", hostname="elsewhere"))
        assert held.state == ttypes.LockState.ACQUIRED
        metadata_dir = Path(to_local_path(v0.metadata.location)) / "metadata"
        before = sorted(metadata_dir.iterdir())
        with pytest.raises(UserError, match=r"could not take the metastore lock on db\.t"):
            impatient.commit_table(v0, _set(v0, a="1"))  # type: ignore[arg-type]
        assert sorted(metadata_dir.iterdir()) == before
        # a patient writer waits: its lock request shows as WAITING, then ours goes
        patient = HiveCatalog(hive_metastore.uri, str(tmp_path / "wh"), "hms")
        outcome: list[Any] = []
        writer = threading.Thread(
            target=lambda: outcome.append(patient.commit_table(v0, _set(v0, a="2")))  # type: ignore[arg-type]
        )
        writer.start()
        while not any(
            lock.state == ttypes.LockState.WAITING for lock in hms.show_locks(ttypes.ShowLocksRequest()).locks
        ):
            writer.join(0.05)  # polls the metastore, no fixed sleep
        hms.unlock(ttypes.UnlockRequest(lockid=held.lockid))
        writer.join()
    assert outcome and impatient.load_table(T).metadata.properties["a"] == "2"


def test_a_metastore_that_is_down_is_one_clear_error(tmp_path: Path) -> None:
    uri = f"thrift://127.0.0.1:{free_port()}"
    with pytest.raises(
        StorageError, match=rf"catalog 'hms' at {uri} did not answer .*check that the metastore is running"
    ):
        HiveCatalog(uri, str(tmp_path), "hms")


def test_a_lost_answer_to_alter_table_is_checked(hive_metastore: HiveMetastore, tmp_path: Path) -> None:
    """The connection ends after alter_table reached the metastore: the commit landed, and the
    catalog finds that out by reading the table again (Java's checkCommitStatus), rather
    than deleting a file the table now references."""
    empty_metastore(hive_metastore)
    with AnswerLosingProxy("127.0.0.1", hive_metastore.port) as proxy:
        catalog = HiveCatalog(f"thrift://127.0.0.1:{proxy.port}", str(tmp_path / "wh"), "hms")
        v0 = _create(catalog)
        proxy.lose_answer_to(b"alter_table_with_environment_context")
        v1 = catalog.commit_table(v0, _set(v0, a="1"))  # type: ignore[arg-type]
        assert proxy.lost.is_set()
    assert (
        metastore_table(hive_metastore.uri, "db", "t").parameters["metadata_location"] == v1.metadata_location
    )
    assert Path(to_local_path(v1.metadata_location)).exists()


def test_a_lost_answer_that_cannot_be_checked_is_unknown(
    hive_metastore: HiveMetastore, tmp_path: Path
) -> None:
    """The answer to alter_table is lost and so is the answer to the check that follows:
    CommitStateUnknownError, naming the table and the file, and the file is kept (the
    commit did land: the metastore points at it)."""
    empty_metastore(hive_metastore)
    with AnswerLosingProxy("127.0.0.1", hive_metastore.port) as proxy:
        catalog = HiveCatalog(f"thrift://127.0.0.1:{proxy.port}", str(tmp_path / "wh"), "hms")
        v0 = _create(catalog)
        proxy.lose_answer_to(b"alter_table_with_environment_context", b"get_table")
        with pytest.raises(CommitStateUnknownError, match=r"'db\.t' may or may not have landed") as caught:
            catalog.commit_table(v0, _set(v0, a="1"))  # type: ignore[arg-type]
        assert proxy.lost.is_set()
    current = metastore_table(hive_metastore.uri, "db", "t").parameters["metadata_location"]
    assert current != v0.metadata_location and current in str(caught.value)
    assert Path(to_local_path(current)).exists()
    assert _locks(hive_metastore) == []


def test_schema_types_in_hive_names() -> None:
    from iceduck.catalog.hive_types import hive_type
    from iceduck.spec.types import (
        DecimalType,
        ListType,
        MapType,
        NestedField,
        StringType,
        StructType,
        TimestamptzType,
    )

    nested = StructType(
        (NestedField(1, "a", DecimalType(9, 2)), NestedField(2, "b", ListType(3, StringType())))
    )
    assert hive_type(nested) == "struct<a:decimal(9,2),b:array<string>>"
    assert hive_type(MapType(4, StringType(), 5, TimestamptzType())) == "map<string,timestamp>"
    assert SCHEMA.fields[0].name == "id"


def test_connect_with_a_thrift_catalog_uri(hive_metastore: HiveMetastore, tmp_path: Path) -> None:
    """``iceduck.connect(warehouse, catalog_uri="thrift://...")`` opens the metastore: new
    databases under ``<warehouse>/<db>.db``, SQL writes and reads through it."""
    import iceduck

    empty_metastore(hive_metastore)
    with iceduck.connect(tmp_path / "wh", catalog_uri=hive_metastore.uri) as con:
        con.execute("CREATE NAMESPACE sales")
        con.execute("CREATE TABLE sales.t (id bigint, s string)")
        con.execute("INSERT INTO sales.t VALUES (1, 'a'), (2, 'b')")
        con.execute("DELETE FROM sales.t WHERE id = 1")
        assert con.execute("SELECT * FROM sales.t").fetchall() == [(2, "b")]
    stored = metastore_table(hive_metastore.uri, "sales", "t")
    assert to_local_path(stored.sd.location) == str(tmp_path / "wh" / "sales.db" / "t")
