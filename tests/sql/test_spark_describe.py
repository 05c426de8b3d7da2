"""DESCRIBE EXTENDED, SHOW COLUMNS and SHOW PARTITIONS (iceduck.sql.spark_describe): the
rows Spark 3.5 with Iceberg 1.10 shows for the same table (its layout as Spark printed it
for tables like these; tests/interop/test_sql_spark_describe_spark.py compares with Spark)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import NotFoundError, UserError

METADATA_COLUMNS = [
    ("_file", "string", ""),
    ("_pos", "bigint", ""),
    ("_deleted", "boolean", ""),
    ("_row_id", "bigint", ""),
    ("_last_updated_sequence_number", "bigint", ""),
]


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    c = iceduck.connect(tmp_path / "wh")
    c.execute("CREATE NAMESPACE db")
    yield c
    c.close()


def _parts(con: Connection) -> None:
    con.execute(
        "CREATE TABLE db.parts (id bigint NOT NULL COMMENT 'key', cat string, ts timestamp, name string, "
        "s struct<x: int COMMENT 'inner', y: string>, l array<string>, m map<string, decimal(9,2)>, "
        "u uuid, f fixed(2), ntz timestamp_ntz) USING iceberg "
        "PARTITIONED BY (cat, bucket(4, id), days(ts), truncate(2, name)) COMMENT 'parted' "
        "TBLPROPERTIES ('k'='v', 'fs.s3.secret'='hush')"
    )


def test_describe_extended_of_a_partitioned_table(con: Connection, tmp_path: Path) -> None:
    _parts(con)
    snapshot = con.execute("SELECT snapshot_id FROM db.parts.snapshots").fetchall()
    assert snapshot == []
    rows = (cur := con.execute("DESCRIBE EXTENDED db.parts")).fetchall()
    assert [d[0] for d in cur.description] == ["col_name", "data_type", "comment"]
    assert rows == [
        ("id", "bigint", "key"),
        ("cat", "string", None),
        ("ts", "timestamp", None),
        ("name", "string", None),
        ("s", "struct<x:int,y:string>", None),
        ("l", "array<string>", None),
        ("m", "map<string,decimal(9,2)>", None),
        ("u", "string", None),
        ("f", "binary", None),
        ("ntz", "timestamp_ntz", None),
        ("", "", ""),
        ("# Partitioning", "", ""),
        ("Part 0", "cat", ""),
        ("Part 1", "bucket(4, id)", ""),
        ("Part 2", "days(ts)", ""),
        ("Part 3", "truncate(2, name)", ""),
        ("", "", ""),
        ("# Metadata Columns", "", ""),
        ("_spec_id", "int", ""),
        ("_partition", "struct<cat:string,id_bucket:int,ts_day:date,name_trunc:string>", ""),
        *METADATA_COLUMNS,
        ("", "", ""),
        ("# Detailed Table Information", "", ""),
        ("Name", "iceduck.db.parts", ""),
        ("Type", "MANAGED", ""),
        ("Comment", "parted", ""),
        ("Location", str(tmp_path / "wh" / "db" / "parts"), ""),
        ("Provider", "iceberg", ""),
        (
            "Table Properties",
            "[current-snapshot-id=none,format=iceberg/parquet,format-version=2,"
            "fs.s3.secret=*********(redacted),k=v,write.parquet.compression-codec=zstd]",
            "",
        ),
    ]
    assert con.execute("DESC TABLE FORMATTED db.parts").fetchall() == rows


def test_describe_extended_of_identity_partitions_lists_them_as_columns(con: Connection) -> None:
    """Spark's "# Partition Information" section, without a blank row before it, when every
    term is an identity; a nested source is named by its path."""
    con.execute(
        "CREATE TABLE db.ids (id int COMMENT 'the id', s struct<x: int COMMENT 'inner'>) "
        "PARTITIONED BY (id, s.x)"
    )
    rows = con.execute("DESCRIBE EXTENDED db.ids").fetchall()
    assert rows[:7] == [
        ("id", "int", "the id"),
        ("s", "struct<x:int>", None),
        ("# Partition Information", "", ""),
        ("# col_name", "data_type", "comment"),
        ("id", "int", "the id"),
        ("s.x", "int", "inner"),
        ("", "", ""),
    ]
    assert rows[8] == ("_spec_id", "int", "")
    assert rows[9] == ("_partition", "struct<id:int,s.x:int>", "")


def test_describe_extended_of_an_evolved_and_an_unpartitioned_table(con: Connection) -> None:
    """The partitioning is the current spec's; ``_partition`` has every spec's fields. The
    owner row appears only for a table with an ``owner`` property (Spark stores the user
    there when it creates a table), after Provider."""
    con.execute("CREATE TABLE db.evolved (id bigint, cat string) PARTITIONED BY (cat)")
    con.execute("INSERT INTO db.evolved VALUES (1, 'x')")
    con.execute("ALTER TABLE db.evolved ADD PARTITION FIELD bucket(2, id)")
    con.execute("ALTER TABLE db.evolved DROP PARTITION FIELD cat")
    rows = con.execute("DESCRIBE EXTENDED db.evolved").fetchall()
    assert rows[2:6] == [
        ("", "", ""),
        ("# Partitioning", "", ""),
        ("Part 0", "bucket(2, id)", ""),
        ("", "", ""),
    ]
    assert ("_partition", "struct<cat:string,id_bucket_2:int>", "") in rows
    con.execute("CREATE TABLE db.plain (a int) TBLPROPERTIES ('owner'='alice', 'format-version'='1')")
    con.execute("ALTER TABLE db.plain WRITE ORDERED BY a")
    rows = con.execute("DESCRIBE EXTENDED db.plain").fetchall()
    assert rows[:4] == [
        ("a", "int", None),
        ("", "", ""),
        ("# Metadata Columns", "", ""),
        ("_spec_id", "int", ""),
    ]
    assert ("_partition", "struct<>", "") in rows
    details = rows[rows.index(("# Detailed Table Information", "", "")) + 1 :]
    assert [r[0] for r in details] == ["Name", "Type", "Location", "Provider", "Owner", "Table Properties"]
    assert details[4] == ("Owner", "alice", "")
    assert details[5][1] == (
        "[current-snapshot-id=none,format=iceberg/parquet,format-version=1,"
        "sort-order=a ASC NULLS FIRST,write.distribution-mode=range,write.parquet.compression-codec=zstd]"
    )


def test_show_columns(con: Connection) -> None:
    _parts(con)
    expected = [(c,) for c in ("id", "cat", "ts", "name", "s", "l", "m", "u", "f", "ntz")]
    cur = con.execute("SHOW COLUMNS FROM db.parts")
    assert cur.fetchall() == expected
    assert [d[0] for d in cur.description] == ["col_name"]
    assert con.execute("SHOW COLUMNS IN parts IN db").fetchall() == expected
    assert con.execute("SHOW COLUMNS IN db.parts FROM db").fetchall() == expected
    con.execute("USE db")
    assert con.execute("SHOW COLUMNS IN parts").fetchall() == expected
    with pytest.raises(UserError, match="conflicting namespaces"):
        con.execute("SHOW COLUMNS IN db.parts IN other")
    with pytest.raises(NotFoundError):
        con.execute("SHOW COLUMNS IN nowhere")
    with pytest.raises(UserError, match=r"SHOW COLUMNS takes a table: db\.parts\.snapshots is not one"):
        con.execute("SHOW COLUMNS IN db.parts.snapshots")


def test_show_partitions_as_hive_paths(con: Connection) -> None:
    _parts(con)
    con.execute(
        "INSERT INTO db.parts (id, cat, ts, name) VALUES "
        "(1, 'a', TIMESTAMP '2024-01-01 10:00:00', 'alpha'), "
        "(2, 'b/c=d', TIMESTAMP '2024-01-02 10:00:00', 'beta'), "
        "(3, NULL, NULL, NULL), (4, '', NULL, 'x')"
    )
    rows = (cur := con.execute("SHOW PARTITIONS db.parts")).fetchall()
    assert [d[0] for d in cur.description] == ["partition"]
    assert rows == [
        ("cat=__HIVE_DEFAULT_PARTITION__/id_bucket=2/ts_day=__HIVE_DEFAULT_PARTITION__/name_trunc=x",),
        ("cat=__HIVE_DEFAULT_PARTITION__/id_bucket=3/ts_day=__HIVE_DEFAULT_PARTITION__/"
         "name_trunc=__HIVE_DEFAULT_PARTITION__",),
        ("cat=a/id_bucket=0/ts_day=2024-01-01/name_trunc=al",),
        ("cat=b%2Fc%3Dd/id_bucket=0/ts_day=2024-01-02/name_trunc=be",),
    ]  # fmt: skip
    assert con.execute("SELECT count(*) FROM db.parts.partitions").fetchone() == (len(rows),)


def test_show_partitions_of_an_evolved_table_and_errors(con: Connection) -> None:
    con.execute("CREATE TABLE db.evolved (id bigint, cat string) PARTITIONED BY (cat)")
    assert con.execute("SHOW PARTITIONS db.evolved").fetchall() == []
    con.execute("INSERT INTO db.evolved VALUES (1, 'x')")
    con.execute("ALTER TABLE db.evolved ADD PARTITION FIELD bucket(2, id)")
    con.execute("INSERT INTO db.evolved VALUES (2, 'y')")
    con.execute("ALTER TABLE db.evolved DROP PARTITION FIELD cat")
    con.execute("INSERT INTO db.evolved VALUES (3, 'z')")
    assert con.execute("SHOW PARTITIONS db.evolved").fetchall() == [
        ("cat=__HIVE_DEFAULT_PARTITION__/id_bucket_2=1",),
        ("cat=x/id_bucket_2=__HIVE_DEFAULT_PARTITION__",),
        ("cat=y/id_bucket_2=0",),
    ]
    con.execute("CREATE TABLE db.plain (a int)")
    with pytest.raises(UserError, match=r"^SHOW PARTITIONS: table iceduck.db.plain is not partitioned$"):
        con.execute("SHOW PARTITIONS db.plain")


def test_a_wide_struct_is_cut_short_as_spark_prints_it(con: Connection) -> None:
    """Spark's ``truncatedString`` with ``spark.sql.debug.maxToStringFields`` = 25."""
    wide = ", ".join(f"f{i}: int" for i in range(27))
    narrow = ", ".join(f"f{i}: int" for i in range(25))
    con.execute(f"CREATE TABLE db.wide (s struct<{wide}>, t struct<{narrow}>)")
    rows = con.execute("DESCRIBE EXTENDED db.wide").fetchall()
    kept = ",".join(f"f{i}:int" for i in range(24))
    assert rows[0] == ("s", f"struct<{kept},... 3 more fields>", None)
    assert rows[1] == ("t", f"struct<{kept},f24:int>", None)


def test_an_external_table_says_so_in_its_type_only(con: Connection) -> None:
    """Spark's ``DescribeTableExec.addTableDetails`` turns the ``external`` property into
    ``Type EXTERNAL`` and skips it among the reserved properties' own rows."""
    con.execute("CREATE TABLE db.ext (a int) TBLPROPERTIES ('external'='TRUE')")
    rows = con.execute("DESCRIBE EXTENDED db.ext").fetchall()
    details = rows[rows.index(("# Detailed Table Information", "", "")) + 1 :]
    assert [r[0] for r in details] == ["Name", "Type", "Location", "Provider", "Table Properties"]
    assert details[1] == ("Type", "EXTERNAL", "")
