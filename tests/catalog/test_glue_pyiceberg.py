"""PyIceberg's ``GlueCatalog`` and iceduck's share one Glue catalog (moto's Glue and S3, the
run's moto server), each reading and writing what the other wrote: PyIceberg creates and
appends, iceduck reads the same rows; iceduck creates, inserts and deletes in SQL
(``iceduck.connect(..., catalog_uri="glue://")``), PyIceberg reads the same rows; and both
commit to one table in turn, each commit building on the other's.

Each test works in a Glue database of its own (moto's Glue is one catalog for the run).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.glue import GlueCatalog
from tests.support.s3 import REGION, S3Server

glue = pytest.importorskip(
    "pyiceberg.catalog.glue", reason="PyIceberg's GlueCatalog needs boto3 (test extra)"
)


@pytest.fixture
def lake(s3_server: S3Server, s3_bucket: str, object_store_restored: None) -> dict[str, str]:
    """The catalog properties both sides use: Glue and S3 at moto, the warehouse in a bucket."""
    return {
        **s3_server.properties,
        "glue.endpoint": s3_server.endpoint_url,
        "glue.region": REGION,
        # PyIceberg takes Glue's keys from glue.* or client.* (iceduck also from s3.*)
        "glue.access-key-id": s3_server.properties["s3.access-key-id"],
        "glue.secret-access-key": s3_server.properties["s3.secret-access-key"],
        "s3.region": REGION,
        "warehouse": f"s3://{s3_bucket}/wh",
    }


@pytest.fixture
def database() -> str:
    return f"db_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def pyiceberg(lake: dict[str, str]) -> Any:
    return glue.GlueCatalog("glue", **lake)


@pytest.fixture
def connection(lake: dict[str, str]) -> Iterator[Any]:
    properties = {k: v for k, v in lake.items() if k != "warehouse"}
    con = iceduck.connect(warehouse=lake["warehouse"], catalog_uri="glue://", properties=properties)
    yield con
    con.close()


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(row.values()) for row in table.to_pylist())


def _pyiceberg_rows(pyiceberg: Any, name: str) -> list[tuple[Any, ...]]:
    return _rows(pyiceberg.load_table(name).scan().to_arrow())


def _iceduck_rows(connection: Any, name: str) -> list[tuple[Any, ...]]:
    return sorted(connection.execute(f"SELECT * FROM {name}").fetchall())


def _batch(ids: list[int], names: list[str]) -> pa.Table:
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    return pa.table({"id": ids, "name": names}, schema=schema)


def test_iceduck_reads_what_pyiceberg_wrote(
    pyiceberg: Any, connection: Any, lake: dict[str, str], database: str
) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    pyiceberg.create_namespace(database, {"comment": "from PyIceberg"})
    name = f"{database}.events"
    schema = Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False)
    )
    table = pyiceberg.create_table(name, schema)
    table.append(_batch([1, 2], ["a", "b"]))
    table.append(_batch([3], ["c"]))
    table = pyiceberg.load_table(name)

    catalog = GlueCatalog("glue", lake["warehouse"], lake, read_only=True)
    assert (database,) in catalog.list_namespaces()
    assert catalog.list_tables((database,)) == [TableIdentifier((database,), "events")]
    loaded = catalog.load_table(TableIdentifier((database,), "events"))
    assert loaded.metadata_location == table.metadata_location
    assert [s.snapshot_id for s in loaded.metadata.snapshots] == [
        s.snapshot_id for s in table.metadata.snapshots
    ]
    assert (
        _iceduck_rows(connection, name) == _pyiceberg_rows(pyiceberg, name) == [(1, "a"), (2, "b"), (3, "c")]
    )


def test_pyiceberg_reads_what_iceduck_wrote(pyiceberg: Any, connection: Any, database: str) -> None:
    name = f"{database}.t"
    connection.execute(f"CREATE NAMESPACE {database}")
    connection.execute(f"CREATE TABLE {name} (id BIGINT, name VARCHAR)")
    connection.execute(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    connection.execute(f"DELETE FROM {name} WHERE id IN (2, 4)")
    connection.execute(f"INSERT INTO {name} VALUES (5, 'e')")

    assert pyiceberg.list_tables(database) == [(database, "t")]
    table = pyiceberg.load_table(name)
    glue_table = pyiceberg.glue.get_table(DatabaseName=database, Name="t")["Table"]
    assert glue_table["Parameters"]["metadata_location"] == table.metadata_location
    assert glue_table["TableType"] == "EXTERNAL_TABLE"
    assert [c["Name"] for c in glue_table["StorageDescriptor"]["Columns"]] == ["id", "name"]
    expected = [(1, "a"), (3, "c"), (5, "e")]
    assert _pyiceberg_rows(pyiceberg, name) == _iceduck_rows(connection, name) == expected


def test_alternating_commits_on_one_table(pyiceberg: Any, connection: Any, database: str) -> None:
    """PyIceberg and iceduck commit in turn, each on the other's metadata: every commit's
    previous_metadata_location is the file the other side made current."""
    name = f"{database}.t"
    connection.execute(f"CREATE NAMESPACE {database}")
    connection.execute(f"CREATE TABLE {name} (id BIGINT, name VARCHAR)")
    connection.execute(f"INSERT INTO {name} VALUES (1, 'iceduck')")
    previous = pyiceberg.load_table(name).metadata_location

    pyiceberg.load_table(name).append(_batch([2], ["pyiceberg"]))
    glue_table = pyiceberg.glue.get_table(DatabaseName=database, Name="t")["Table"]
    assert glue_table["Parameters"]["previous_metadata_location"] == previous
    previous = glue_table["Parameters"]["metadata_location"]

    connection.execute(f"INSERT INTO {name} VALUES (3, 'iceduck')")
    glue_table = pyiceberg.glue.get_table(DatabaseName=database, Name="t")["Table"]
    assert glue_table["Parameters"]["previous_metadata_location"] == previous

    pyiceberg.load_table(name).append(_batch([4], ["pyiceberg"]))
    connection.execute(f"DELETE FROM {name} WHERE id = 2")
    connection.execute(f"ALTER TABLE {name} ADD COLUMN note VARCHAR")
    pyiceberg.load_table(name).append(
        pa.table(
            {"id": [5], "name": ["pyiceberg"], "note": ["last"]},
            schema=pa.schema([("id", pa.int64()), ("name", pa.string()), ("note", pa.string())]),
        )
    )
    expected = [(1, "iceduck", None), (3, "iceduck", None), (4, "pyiceberg", None), (5, "pyiceberg", "last")]
    assert _iceduck_rows(connection, name) == _pyiceberg_rows(pyiceberg, name) == expected
    table = pyiceberg.load_table(name)
    assert len(table.metadata.snapshots) == 6
    log = [entry.metadata_file for entry in table.metadata.metadata_log]
    assert len(log) == 7 and log[-1] == glue_table_location(
        pyiceberg, database, "t", "previous_metadata_location"
    )


def glue_table_location(pyiceberg: Any, database: str, table: str, parameter: str) -> str:
    answer = pyiceberg.glue.get_table(DatabaseName=database, Name=table)["Table"]
    return str(answer["Parameters"][parameter])


def test_iceduck_drops_and_renames_what_pyiceberg_sees(
    pyiceberg: Any, connection: Any, database: str
) -> None:
    connection.execute(f"CREATE NAMESPACE {database}")
    connection.execute(f"CREATE TABLE {database}.a (id BIGINT)")
    connection.execute(f"INSERT INTO {database}.a VALUES (1)")
    connection.execute(f"ALTER TABLE {database}.a RENAME TO b")
    assert pyiceberg.list_tables(database) == [(database, "b")]
    assert _rows(pyiceberg.load_table(f"{database}.b").scan().to_arrow()) == [(1,)]
    pyiceberg.rename_table(f"{database}.b", f"{database}.c")
    assert connection.execute(f"SELECT id FROM {database}.c").fetchall() == [(1,)]
    connection.execute(f"DROP TABLE {database}.c")
    assert pyiceberg.list_tables(database) == []


def test_iceduck_serve_serves_a_glue_catalog_as_rest(
    pyiceberg: Any, lake: dict[str, str], database: str
) -> None:
    """``iceduck serve --catalog glue://``: a REST client's commits land in Glue, where
    PyIceberg's GlueCatalog reads them; what PyIceberg appends, the REST client reads."""
    from iceduck.catalog.open import open_catalog
    from iceduck.serve.context import ServeContext
    from iceduck.serve.server import CatalogServer

    properties = {k: v for k, v in lake.items() if k != "warehouse"}
    catalog = open_catalog(lake["warehouse"], "iceduck", catalog_uri="glue://", properties=properties)
    server = CatalogServer(("127.0.0.1", 0), ServeContext(catalog, lake["warehouse"]))
    server.start()
    try:
        rest = iceduck.connect(catalog_uri=server.url)
        cur = rest.cursor()
        cur.execute(f"CREATE NAMESPACE {database}")
        cur.execute(f"CREATE TABLE {database}.t (id bigint, name string)")
        cur.execute(f"INSERT INTO {database}.t VALUES (1, 'a'), (2, 'b')")
        assert _pyiceberg_rows(pyiceberg, f"{database}.t") == [(1, "a"), (2, "b")]
        pyiceberg.load_table(f"{database}.t").append(_batch([3], ["c"]))
        assert cur.execute(f"SELECT * FROM {database}.t ORDER BY id").fetchall() == [
            (1, "a"),
            (2, "b"),
            (3, "c"),
        ]
        rest.close()
    finally:
        server.stop()
