"""Table properties are checked when a statement sets them -- CREATE TABLE, CTAS, REPLACE
TABLE, ALTER TABLE ... SET TBLPROPERTIES -- before any file is written; a table holding an
odd value written by another engine stays readable and alterable."""

from __future__ import annotations

from pathlib import Path

import pytest

from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import ValidationError
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.commit import PendingCommit, commit

BAD = "TBLPROPERTIES ('write.target-file-size-bytes'='-5')"
REFUSED = r"'write.target-file-size-bytes' must be a positive integer .* not '-5'"


def _files(con: Connection) -> list[Path]:
    """Every file under the namespace's folder (tables' metadata and data)."""
    warehouse = Path(con.session.catalog.default_table_location(TableIdentifier(("db",), "x"))).parent
    return sorted(p for p in warehouse.rglob("*") if p.is_file())


def _metadata_location(con: Connection, table: str = "t") -> str:
    return con.session.catalog.load_table(TableIdentifier(("db",), table)).metadata_location


@pytest.mark.parametrize(
    "sql",
    [
        f"CREATE TABLE db.t (a int) USING iceberg {BAD}",
        f"CREATE TABLE db.t USING iceberg {BAD} AS SELECT 1 AS a",
        "CREATE TABLE db.t (a int) TBLPROPERTIES ('write.metadata.metrics.column.b'='full')",
        "CREATE TABLE db.t (a int) TBLPROPERTIES ('commit.retry.num-retries'='-1')",
        "CREATE TABLE db.t (a int) TBLPROPERTIES ('write.delete.mode'='merge_on_read')",
    ],
)
def test_create_refuses_a_bad_value_and_writes_nothing(con: Connection, sql: str) -> None:
    with pytest.raises(ValidationError, match="table property"):
        con.execute(sql)
    assert not con.session.catalog.table_exists(TableIdentifier(("db",), "t"))
    assert _files(con) == []


def test_create_message_names_property_value_and_what_is_allowed(con: Connection) -> None:
    with pytest.raises(ValidationError, match=REFUSED):
        con.execute(f"CREATE TABLE db.t (a int) {BAD}")


def test_good_values_and_unknown_properties_are_kept(con: Connection) -> None:
    con.execute(
        "CREATE TABLE db.t (a int, p struct<x: int>) USING iceberg TBLPROPERTIES ("
        "'write.target-file-size-bytes'='1048576', 'write.metadata.metrics.column.p.x'='full', "
        "'write.delete.mode'='Merge-On-Read', 'my.own.property'=' anything ')"
    )
    con.execute("INSERT INTO db.t VALUES (1, {'x': 2})")
    properties = con.session.catalog.load_table(TableIdentifier(("db",), "t")).metadata.properties
    assert properties["my.own.property"] == " anything "
    assert properties["write.target-file-size-bytes"] == "1048576"


def test_replace_refuses_a_bad_value_and_keeps_the_table(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (a int)")
    con.execute("INSERT INTO db.t VALUES (1)")
    before, files = _metadata_location(con), _files(con)
    for sql in (
        f"CREATE OR REPLACE TABLE db.t (b int) USING iceberg {BAD}",
        f"REPLACE TABLE db.t USING iceberg {BAD} AS SELECT 2 AS b",
    ):
        with pytest.raises(ValidationError, match=REFUSED):
            con.execute(sql)
    assert _metadata_location(con) == before and _files(con) == files
    assert con.execute("SELECT * FROM db.t").fetchall() == [(1,)]


@pytest.mark.parametrize(
    ("value", "refused"),
    [
        ("'write.target-file-size-bytes'='-5'", REFUSED),
        ("'write.metadata.metrics.column.nope'='counts'", "names column 'nope'"),
        ("'write.parquet.compression-codec'='lzo'", "compression-codec"),
        ("'commit.manifest-merge.enabled'='yes'", "'true' or 'false'"),
        ("'write.merge.isolation-level'='serial'", "'serializable' or 'snapshot'"),
    ],
)
def test_alter_refuses_a_bad_value_and_keeps_the_table(con: Connection, value: str, refused: str) -> None:
    con.execute("CREATE TABLE db.t (a int)")
    before = _metadata_location(con)
    with pytest.raises(ValidationError, match=refused):
        con.execute(f"ALTER TABLE db.t SET TBLPROPERTIES ({value})")
    assert _metadata_location(con) == before


def test_alter_checks_metrics_columns_against_the_new_schema(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (a int)")
    con.execute("ALTER TABLE db.t ADD COLUMN b string")
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.metadata.metrics.column.b'='none')")
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.parquet.compression-level'='19')")
    with pytest.raises(ValidationError, match="compression-level"):  # 19 is no gzip level...
        con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.parquet.compression-level'='23')")
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.parquet.compression-codec'='gzip')")
    # ...but iceduck passes a level to zstd only, so with gzip any integer is left alone
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.parquet.compression-level'='23')")


def test_an_odd_value_written_by_another_engine_stays_readable(con: Connection) -> None:
    """Spark accepts ``write.target-file-size-bytes=-5`` (Java only parses the long); such
    a table must stay readable, and other properties stay settable."""
    con.execute("CREATE TABLE db.t (a int)")
    con.execute("INSERT INTO db.t VALUES (1)")
    catalog = con.session.catalog
    identifier = TableIdentifier(("db",), "t")

    def odd(base: LoadedTable) -> PendingCommit:  # as another engine commits it: not validated
        builder = MetadataBuilder(base.metadata)
        builder.set_properties({"write.target-file-size-bytes": "-5", "write.delete.mode": "odd"})
        return PendingCommit(builder.build(), [])

    commit(catalog, identifier, odd)
    assert con.execute("SELECT * FROM db.t").fetchall() == [(1,)]
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.update.mode'='merge-on-read')")
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.target-file-size-bytes'='1048576')")
    con.execute("INSERT INTO db.t VALUES (2)")  # fixed: writes work again
    assert sorted(con.execute("SELECT * FROM db.t").fetchall()) == [(1,), (2,)]
