"""Tables in S3 (moto on loopback), through SQL: every file of the table -- metadata JSON,
manifest lists, manifests, Puffin, data and delete files -- lives in the bucket.

The catalog is a local SQLite one (the warehouse folder is local); each table gets a
``LOCATION 's3://...'``. The answers must be exactly those of the same statements on a
local table, which each test checks against a twin table in the warehouse folder.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from iceduck.connection import Connection
from iceduck.errors import ValidationError
from tests.support.s3 import S3Server, age_objects, client, list_keys

LAYOUTS = [(2, "merge-on-read"), (3, "merge-on-read"), (2, "copy-on-write")]


@pytest.fixture
def con(s3_connection: Connection) -> Connection:
    return s3_connection


def rows(con: Connection, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    return con.execute(sql, params).fetchall()


def keys(server: S3Server, bucket: str, prefix: str) -> set[str]:
    """The objects under ``prefix`` (folder markers aside)."""
    return {k for k in list_keys(server.endpoint_url, bucket, prefix) if not k.endswith("/")}


def create_twins(con: Connection, bucket: str, columns: str, tail: str) -> str:
    """``db.s3t`` in the bucket and ``db.local`` in the warehouse, alike; the S3 prefix."""
    prefix = f"t-{uuid.uuid4().hex[:8]}"
    con.execute(f"CREATE TABLE db.s3t ({columns}) USING iceberg {_location(tail, f's3://{bucket}/{prefix}')}")
    con.execute(f"CREATE TABLE db.local ({columns}) USING iceberg {tail}")
    return prefix


def _location(tail: str, location: str) -> str:
    head, sep, rest = tail.partition("TBLPROPERTIES")
    return f"{head} LOCATION '{location}' {sep}{rest}"


def both(con: Connection, sql: str) -> None:
    """Run ``sql`` (naming ``{t}``) on both twins."""
    for t in ("db.s3t", "db.local"):
        con.execute(sql.format(t=t))


def same(con: Connection, sql: str) -> list[tuple[Any, ...]]:
    """``sql`` (naming ``{t}``) answers the same on both twins; the answer."""
    got = sorted(rows(con, sql.format(t="db.s3t")), key=repr)
    assert got == sorted(rows(con, sql.format(t="db.local")), key=repr)
    return got


@pytest.mark.parametrize(("version", "mode"), LAYOUTS)
def test_row_changes_on_a_partitioned_s3_table(
    con: Connection, s3_configured: S3Server, s3_bucket: str, version: int, mode: str
) -> None:
    tail = (
        f"PARTITIONED BY (bucket(4, id), s) TBLPROPERTIES ('format-version'='{version}', "
        f"'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
    )
    prefix = create_twins(con, s3_bucket, "id bigint, s string, v double", tail)
    both(con, "INSERT INTO {t} SELECT i, 'p' || (i % 3), i / 2 FROM range(200) r(i)")
    both(con, "INSERT INTO {t} SELECT i, 'p' || (i % 3), i / 4 FROM range(200, 260) r(i)")
    assert same(con, "SELECT count(*), sum(id), sum(v) FROM {t}") == [(260, 33670, 9950 + 13770 / 4)]

    both(con, "DELETE FROM {t} WHERE id % 10 = 3")  # rows of many files
    both(con, "UPDATE {t} SET v = -v WHERE s = 'p1' AND id < 100")
    both(
        con,
        "MERGE INTO {t} AS t USING (SELECT i AS id, 'p9' AS s FROM range(250, 270) r(i)) AS src "
        "ON t.id = src.id WHEN MATCHED THEN UPDATE SET v = 0 "
        "WHEN NOT MATCHED THEN INSERT (id, s, v) VALUES (src.id, src.s, 1)",
    )
    same(con, "SELECT id, s, v FROM {t}")
    same(con, "SELECT id, s FROM {t} WHERE s = 'p2' AND id BETWEEN 10 AND 90")

    paths = [p for (p,) in rows(con, "SELECT file_path FROM db.s3t.all_files")]
    assert paths and all(p.startswith(f"s3://{s3_bucket}/{prefix}/data/") for p in paths)
    stored = keys(s3_configured, s3_bucket, prefix)
    assert {p.removeprefix(f"s3://{s3_bucket}/") for p in paths} <= stored
    if mode == "merge-on-read":
        kinds = {c for (c,) in rows(con, "SELECT content FROM db.s3t.delete_files")}
        assert kinds == {1}
        if version == 3:
            assert any(k.endswith(".puffin") for k in stored)  # deletion vectors
        else:
            assert any(k.endswith("-deletes.parquet") for k in stored)  # position deletes
    assert any(k.endswith(".metadata.json") for k in stored)
    assert any("/metadata/snap-" in k and k.endswith(".avro") for k in stored)

    # time travel to the first snapshot, and the metadata tables
    first = rows(con, "SELECT snapshot_id FROM db.s3t.snapshots ORDER BY committed_at LIMIT 1")[0][0]
    assert rows(con, f"SELECT count(*) FROM db.s3t VERSION AS OF {first}") == [(200,)]
    assert len(rows(con, "SELECT * FROM db.s3t.history")) == len(rows(con, "SELECT * FROM db.local.history"))
    same(con, "SELECT partition, record_count FROM {t}.partitions")

    con.execute("DROP TABLE db.s3t PURGE")
    assert list_keys(s3_configured.endpoint_url, s3_bucket, prefix) == []  # objects and markers


def test_unpartitioned_table_prunes_files_by_metrics(con: Connection, s3_bucket: str) -> None:
    create_twins(con, s3_bucket, "id bigint, name string", "TBLPROPERTIES ('format-version'='2')")
    for start in range(0, 400, 100):
        both(con, f"INSERT INTO {{t}} SELECT i, 'n' || i FROM range({start}, {start + 100}) r(i)")
    assert same(con, "SELECT name FROM {t} WHERE id = 250") == [("n250",)]
    plan = "\n".join(r[0] for r in rows(con, "EXPLAIN SELECT * FROM db.s3t WHERE id = 250"))
    assert "data files: 1 read, 3 skipped (0 by partition, 3 by column metrics)" in plan, plan


def test_equality_and_field_id_projection_after_schema_change(con: Connection, s3_bucket: str) -> None:
    create_twins(con, s3_bucket, "id bigint, a int", "TBLPROPERTIES ('format-version'='2')")
    both(con, "INSERT INTO {t} VALUES (1, 10), (2, 20)")
    both(con, "ALTER TABLE {t} RENAME COLUMN a TO b")
    both(con, "ALTER TABLE {t} ADD COLUMN c string")
    both(con, "ALTER TABLE {t} ALTER COLUMN b TYPE bigint")
    both(con, "INSERT INTO {t} VALUES (3, 30, 'x')")
    assert same(con, "SELECT id, b, c FROM {t}") == [(1, 10, None), (2, 20, None), (3, 30, "x")]


def test_s3a_locations_read_and_write_as_s3(con: Connection, s3_configured: S3Server, s3_bucket: str) -> None:
    prefix = f"a-{uuid.uuid4().hex[:8]}"
    con.execute(
        f"CREATE TABLE db.hadoop (id bigint) USING iceberg LOCATION 's3a://{s3_bucket}/{prefix}' "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    con.execute("INSERT INTO db.hadoop SELECT * FROM range(10)")
    con.execute("DELETE FROM db.hadoop WHERE id < 3")
    assert rows(con, "SELECT count(*), min(id) FROM db.hadoop") == [(7, 3)]
    paths = [p for (p,) in rows(con, "SELECT file_path FROM db.hadoop.files")]
    assert all(p.startswith("s3a://") for p in paths)  # as the table's location spells it
    assert rows(con, "SELECT count(*) FROM db.hadoop WHERE _file LIKE 's3a://%'") == [(7,)]
    # orphans compare s3a:// locations with the s3:// keys a listing returns
    client(s3_configured.endpoint_url).put_object(
        Bucket=s3_bucket, Key=f"{prefix}/data/orphan.parquet", Body=b"x"
    )
    age_objects(s3_bucket)
    got = {r[0] for r in rows(con, "CALL system.remove_orphan_files(table => 'db.hadoop', dry_run => true)")}
    assert got == {f"s3a://{s3_bucket}/{prefix}/data/orphan.parquet"}


def test_expire_snapshots_and_remove_orphan_files_in_a_bucket(
    con: Connection, s3_configured: S3Server, s3_bucket: str
) -> None:
    prefix = create_twins(
        con, s3_bucket, "id bigint, s string", "PARTITIONED BY (s) TBLPROPERTIES ('format-version'='2')"
    )
    for i in range(3):
        con.execute("INSERT OVERWRITE db.s3t SELECT i, 's' || (i % 2) FROM range(?) r(i)", [10 * (i + 1)])
    before = keys(s3_configured, s3_bucket, prefix)
    expired = rows(
        con,
        "CALL system.expire_snapshots(table => 'db.s3t', "
        "older_than => TIMESTAMP '2999-01-01', retain_last => 1)",
    )
    assert expired[0][0] > 0  # data files of the overwritten snapshots
    after = keys(s3_configured, s3_bucket, prefix)
    assert before - after  # the expired snapshots' files are gone from the bucket
    assert rows(con, "SELECT count(*) FROM db.s3t") == [(30,)]
    referenced = {
        p.removeprefix(f"s3://{s3_bucket}/") for (p,) in rows(con, "SELECT file_path FROM db.s3t.files")
    }
    assert referenced <= after

    s3 = client(s3_configured.endpoint_url)
    planted = {
        f"{prefix}/data/s=s0/orphan.parquet",
        f"{prefix}/metadata/snap-orphan.avro",
        f"{prefix}/stray/x",
    }
    for key in planted:
        s3.put_object(Bucket=s3_bucket, Key=key, Body=b"orphan")
    s3.put_object(Bucket=s3_bucket, Key=f"{prefix}/data/_temporary/part", Body=b"hidden")
    age_objects(s3_bucket)
    found = {r[0] for r in rows(con, "CALL system.remove_orphan_files('db.s3t')")}
    assert found == {f"s3://{s3_bucket}/{k}" for k in planted}
    left = keys(s3_configured, s3_bucket, prefix)
    assert not planted & left and f"{prefix}/data/_temporary/part" in left
    assert rows(con, "SELECT count(*) FROM db.s3t") == [(30,)]
    assert rows(con, "CALL system.remove_orphan_files('db.s3t')") == []


def test_a_failed_insert_leaves_no_object(con: Connection, s3_configured: S3Server, s3_bucket: str) -> None:
    prefix = f"f-{uuid.uuid4().hex[:8]}"
    con.execute(
        f"CREATE TABLE db.strict (id bigint NOT NULL) USING iceberg LOCATION 's3://{s3_bucket}/{prefix}'"
    )
    before = keys(s3_configured, s3_bucket, prefix)
    with pytest.raises(ValidationError, match="null value in required column id"):
        con.execute("INSERT INTO db.strict SELECT CASE WHEN i = 5 THEN NULL ELSE i END FROM range(10) r(i)")
    assert keys(s3_configured, s3_bucket, prefix) == before
    assert rows(con, "SELECT count(*) FROM db.strict") == [(0,)]


def test_a_table_loads_from_its_metadata_file_in_the_bucket(con: Connection, s3_bucket: str) -> None:
    from iceduck.catalog.direct import load_table_from_path

    prefix = create_twins(con, s3_bucket, "id bigint", "TBLPROPERTIES ('format-version'='2')")
    con.execute("INSERT INTO db.s3t VALUES (1), (2)")
    current = rows(con, "SELECT file FROM db.s3t.metadata_log_entries ORDER BY timestamp DESC LIMIT 1")[0][0]
    loaded = load_table_from_path(current)
    assert loaded.metadata_location == current
    assert load_table_from_path(f"s3://{s3_bucket}/{prefix}").metadata_location == current
    assert (
        load_table_from_path(f"s3a://{s3_bucket}/{prefix}/metadata").metadata.table_uuid
        == loaded.metadata.table_uuid
    )


def test_add_files_imports_parquet_files_from_a_bucket(con: Connection, s3_bucket: str) -> None:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from iceduck.io import fileio

    source = f"s3://{s3_bucket}/import-{uuid.uuid4().hex[:8]}"
    for part, ids in (("a", [1, 2]), ("b", [3])):
        buffer = io.BytesIO()
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), buffer)
        fileio.write_new(f"{source}/s={part}/f.parquet", buffer.getvalue())
    fileio.write_new(f"{source}/s=a/_SUCCESS", b"")
    con.execute(
        f"CREATE TABLE db.imported (id bigint, s string) USING iceberg PARTITIONED BY (s) "
        f"LOCATION 's3://{s3_bucket}/imported-{uuid.uuid4().hex[:8]}'"
    )
    added = rows(
        con, f"CALL system.add_files(table => 'db.imported', source_table => '`parquet`.`{source}`')"
    )
    assert added[0][0] == 2
    assert sorted(rows(con, "SELECT id, s FROM db.imported")) == [(1, "a"), (2, "a"), (3, "b")]
    with pytest.raises(ValidationError, match="already exist within the target table"):
        con.execute(f"CALL system.add_files(table => 'db.imported', source_table => '`parquet`.`{source}`')")
