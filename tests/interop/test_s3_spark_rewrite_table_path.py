"""Spark-written tables moved to S3 with Iceberg's ``rewrite_table_path``, read by iceduck.

Spark cannot write to S3 on this machine (the AWS jars are not on PyPI), so Spark writes
each table on the local disk, in the session's warehouse, and Iceberg 1.10's own
procedure moves it: ``CALL system.rewrite_table_path(table, source_prefix, target_prefix,
staging_location)`` rewrites every metadata file, manifest list, manifest and position
delete file with ``s3://`` locations into the staging folder and lists every file to
copy (``file_list_location``: ``source,target`` pairs). The test uploads each listed file
to its target in the run's moto bucket -- exactly what a user does to move a table to S3
-- and then:

* the bucket holds no location of the local disk (every file holding locations was
  rewritten; only data files are copied as they are);
* PyIceberg, with its own S3 FileIO, reads every snapshot as Spark read the original, and
  DuckDB 1.5.5's iceberg + httpfs extensions the current one (not of a table with position
  deletes: it trusts the sizes the rewritten manifests keep from the original files);
* iceduck registers the moved table (``CALL system.register_table``) and reads the
  current snapshot, every snapshot (``VERSION AS OF``), a tag, and the ``snapshots`` and
  ``files`` metadata tables as Spark reads them on the original (file paths with the
  prefix swapped).

Iceberg 1.10.2's procedure has three bugs, each pinned by a test below so that the
workaround goes when the harness's Iceberg is fixed: a whole history with two
position-delete commits fails (one call per metadata version instead), some staged
position-delete files are listed but never written (written here from the originals),
and a table with deletion vectors cannot be moved at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.lake_peers import (
    Upload,
    duckdb_httpfs_unavailable,
    duckdb_s3_secret,
    iceduck_on_bucket,
    object_store_missing,
    position_delete_rewrite,
    pyiceberg_table,
    read_file_list,
    same_columns,
    upload_file_list,
)
from tests.support.s3 import S3Server, list_keys
from tests.support.scenario_peers import PeerError, duckdb_iceberg_read
from tests.support.scenario_rows import Rows, arrow_rows, assert_same, iceduck_rows, spark_rows
from tests.support.spark_session import CATALOG

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

NS = "s3_moved"
MOR = ", ".join(f"'write.{op}.mode'='merge-on-read'" for op in ("delete", "update", "merge"))
ROWS = (
    "SELECT id, concat('row-', id) AS data, "
    "element_at(array('a', 'b', 'c'), cast(id % 3 + 1 AS int)) AS cat, "
    "timestamp_seconds(1700000000 + id * 5000) AS ts FROM range({lo}, {hi})"
)


@dataclass(frozen=True)
class Recipe:
    """A table Spark builds, statement by statement (``{t}`` is its name)."""

    name: str
    version: int
    columns: str
    partitioning: str
    statements: tuple[str, ...]
    properties: str = ""
    tag: str | None = None


RECIPES = (
    Recipe(
        "mor_v2",
        2,
        "(id bigint NOT NULL, data string, cat string, ts timestamp)",
        "PARTITIONED BY (cat, days(ts))",
        (
            f"INSERT INTO {{t}} {ROWS.format(lo=0, hi=60)}",
            "ALTER TABLE {t} CREATE TAG loaded",
            "DELETE FROM {t} WHERE id % 5 = 0",  # position deletes
            "ALTER TABLE {t} ADD COLUMN amount decimal(10,2)",
            "ALTER TABLE {t} RENAME COLUMN data TO label",
            f"INSERT INTO {{t}} SELECT id, data, cat, ts, CAST(id AS decimal(10,2)) / 4 "
            f"FROM ({ROWS.format(lo=60, hi=80)})",
            "UPDATE {t} SET amount = 1.50 WHERE id % 7 = 0",  # position deletes + new rows
            "MERGE INTO {t} t USING (SELECT id, 'merged' AS label FROM range(70, 90)) s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET t.label = s.label "
            "WHEN NOT MATCHED THEN INSERT (id, label, cat, ts) VALUES (s.id, s.label, 'm', "
            "TIMESTAMP '2024-02-29 12:00:00')",
        ),
        properties=MOR,
        tag="loaded",
    ),
    Recipe(
        "cow_v3",
        3,
        "(id bigint, v double, d date)",
        "PARTITIONED BY (bucket(4, id))",
        (
            "INSERT INTO {t} SELECT id, id * 1.5, date_add(DATE '2024-01-01', CAST(id AS int)) "
            "FROM range(0, 40)",
            "DELETE FROM {t} WHERE id % 3 = 0",  # copy-on-write: files rewritten
            "ALTER TABLE {t} ADD PARTITION FIELD months(d)",
            "ALTER TABLE {t} ADD COLUMN note string",
            "INSERT INTO {t} VALUES (100, -0.5, DATE '2025-06-30', 'late'), (101, NULL, NULL, NULL)",
            "UPDATE {t} SET note = 'upd' WHERE id < 10",
        ),
    ),
)


@dataclass
class Moved:
    """A Spark table and its copy in the bucket, registered in iceduck's catalog."""

    recipe: Recipe
    spark_name: str  # iceduck.s3_moved.<name>
    source_prefix: str  # the table's local location, as Spark spells it
    target_prefix: str  # s3://bucket/...
    metadata_location: str  # the moved table's current metadata file
    uploads: list[Upload]
    snapshot_ids: list[int]
    staging: Path  # where rewrite_table_path wrote the rewritten files
    completed: list[Upload]  # position-delete files Iceberg listed but did not write

    @property
    def iceduck_name(self) -> str:
        return f"{NS}.{self.recipe.name}"


def _table_location(spark: SparkSession, name: str) -> str:
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").where("col_name = 'Location'").collect()
    return str(rows[0][1])


def _rewrite(
    spark: SparkSession, name: str, source: str, target: str, staging: Path, versions: str = ""
) -> tuple[str, str]:
    """``rewrite_table_path``: (the latest metadata file's name, the file list's location)."""
    row = spark.sql(
        f"CALL {CATALOG}.system.rewrite_table_path(table => '{name.split('.', 1)[1]}', "
        f"source_prefix => '{source}', target_prefix => '{target}', "
        f"staging_location => '{staging.as_uri()}'{versions})"
    ).collect()[0]
    return str(row["latest_version"]), str(row["file_list_location"])


def _metadata_versions(spark: SparkSession, name: str) -> list[str]:
    """The table's metadata files, oldest first, by file name (how ``start_version`` and
    ``end_version`` name them)."""
    rows = spark.sql(f"SELECT file FROM {name}.metadata_log_entries ORDER BY timestamp").collect()
    return [str(r[0]).rsplit("/", 1)[1] for r in rows]


def move(
    spark: SparkSession, name: str, source: str, target: str, staging: Path, endpoint_url: str
) -> tuple[str, list[Upload], list[Upload]]:
    """Move a table to ``target``: one ``rewrite_table_path`` per metadata version, each
    uploaded; returns (the moved current metadata file, every file uploaded, the position
    delete files the test had to write itself).

    Two bugs of Iceberg 1.10.2 shape this, each pinned by a test below:

    * one call for the whole history rewrites a position-delete file once for every
      manifest list reaching its manifest, and the second write fails ("already exists",
      apache/iceberg#14814). Between two consecutive versions (``start_version``
      exclusive, ``end_version`` inclusive) only the manifests the new snapshots added are
      rewritten, each once;
    * it lists every position-delete file of a rewritten delete manifest but writes only
      some of them (apache/iceberg#12772): the missing ones are written here from the
      originals (:func:`position_delete_rewrite`), as the fixed Iceberg does.
    """
    uploads: list[Upload] = []
    completed: list[Upload] = []
    previous = None
    for n, version in enumerate(_metadata_versions(spark, name)):
        versions = f", end_version => '{version}'"
        if previous is not None:
            versions += f", start_version => '{previous}'"
        latest, file_list = _rewrite(spark, name, source, target, staging / str(n), versions)
        assert latest == version, (latest, version)
        for upload in read_file_list(file_list):
            if upload.target.endswith(".parquet") and not Path(upload.source).exists():
                original = source + upload.target.removeprefix(target)
                position_delete_rewrite(original, upload.source, source, target)
                completed.append(upload)
        uploads += upload_file_list(file_list, endpoint_url)
        previous = version
    assert previous is not None
    return f"{target}/metadata/{previous}", uploads, completed


def _build(spark: SparkSession, recipe: Recipe) -> str:
    name = f"{CATALOG}.{NS}.{recipe.name}"
    spark.sql(f"DROP TABLE IF EXISTS {name} PURGE")
    properties = f"'format-version'='{recipe.version}'" + (
        f", {recipe.properties}" if recipe.properties else ""
    )
    spark.sql(
        f"CREATE TABLE {name} {recipe.columns} USING iceberg {recipe.partitioning}"
        f" TBLPROPERTIES ({properties})"
    )
    for statement in recipe.statements:
        spark.sql(statement.format(t=name))
    return name


@pytest.fixture(scope="module")
def moved(
    spark: SparkSession, s3_server: S3Server, s3_bucket: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Moved]]:
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{NS}")
    out: dict[str, Moved] = {}
    for recipe in RECIPES:
        name = _build(spark, recipe)
        source = _table_location(spark, name)
        target = f"s3://{s3_bucket}/lake/{NS}/{recipe.name}"
        staging = tmp_path_factory.mktemp(f"staging-{recipe.name}")
        metadata, uploads, completed = move(spark, name, source, target, staging, s3_server.endpoint_url)
        snapshots = [r[0] for r in spark.sql(f"SELECT snapshot_id FROM {name}.snapshots").collect()]
        out[recipe.name] = Moved(
            recipe, name, source, target, metadata, uploads, snapshots, staging, completed
        )
    yield out
    for m in out.values():
        spark.sql(f"DROP TABLE IF EXISTS {m.spark_name} PURGE")


@pytest.fixture(scope="module")
def con(
    moved: dict[str, Moved], s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """iceduck on a local catalog with every moved table registered under its name."""
    reason = object_store_missing()
    if reason is not None:
        pytest.skip(reason)
    with iceduck_on_bucket(tmp_path_factory.mktemp("iceduck-moved"), s3_server.properties) as connection:
        connection.execute(f"CREATE NAMESPACE {NS}")
        for m in moved.values():
            connection.execute(f"CALL system.register_table('{m.iceduck_name}', '{m.metadata_location}')")
        yield connection


def _swap(rows: Rows, column: str, source: str, target: str) -> Rows:
    """``rows`` with ``column``'s values moved from the ``source`` prefix to ``target``."""
    names, values = rows
    i = names.index(column)
    moved = [tuple(_moved(v, source, target) if j == i else v for j, v in enumerate(r)) for r in values]
    return names, sorted(moved, key=repr)


def _moved(location: str, source: str, target: str) -> str:
    for prefix in (source, "file:" + source, "file://" + source):
        if location.startswith(prefix + "/"):
            return target + location[len(prefix) :]
    raise AssertionError(f"{location} is not under {source}")


# -- the move itself -------------------------------------------------------------------------


def test_the_file_list_moves_every_file_of_the_table(moved: dict[str, Moved], s3_server: S3Server) -> None:
    for m in moved.values():
        targets = sorted({u.target for u in m.uploads})
        assert all(t.startswith(m.target_prefix + "/") for t in targets), targets[:3]
        assert m.metadata_location in targets
        bucket = m.target_prefix.split("/")[2]
        prefix = m.target_prefix.removeprefix(f"s3://{bucket}/")
        keys = sorted(f"s3://{bucket}/{k}" for k in list_keys(s3_server.endpoint_url, bucket, prefix + "/"))
        assert keys == targets


def test_only_data_files_are_copied_as_they_are(spark: SparkSession, moved: dict[str, Moved]) -> None:
    """Every file holding locations (metadata JSON, manifest lists, manifests, position
    deletes) is uploaded from the staged rewrite, which names the bucket and never the
    local disk; only data files, which hold no locations, are copied from the table."""
    for m in moved.values():
        data_files = {
            _local(r[0]) for r in spark.sql(f"SELECT file_path FROM {m.spark_name}.all_data_files").collect()
        }
        staged = [u for u in m.uploads if u.source.startswith(str(m.staging) + "/")]
        assert staged, "rewrite_table_path staged nothing"
        assert {u.source for u in m.uploads} - {u.source for u in staged} <= data_files
        for u in staged:
            data = Path(u.source).read_bytes()
            assert m.source_prefix.encode() not in data, f"{u.target} still names {m.source_prefix}"
            if u.target.endswith(".metadata.json"):
                assert m.target_prefix.encode() in data, u.target


def _local(location: str) -> str:
    return location.removeprefix("file:").removeprefix("//")


# -- PyIceberg reads the moved table -------------------------------------------------------------


def test_pyiceberg_reads_every_snapshot_as_spark(
    spark: SparkSession, moved: dict[str, Moved], s3_server: S3Server
) -> None:
    for m in moved.values():
        table = pyiceberg_table(m.metadata_location, s3_server.properties)
        assert table.metadata.location == m.target_prefix
        for snapshot_id in m.snapshot_ids:
            expected = spark_rows(spark, f"SELECT * FROM {m.spark_name} VERSION AS OF {snapshot_id}")
            got = arrow_rows(table.scan(snapshot_id=snapshot_id).to_arrow())
            # PyIceberg reads with the current schema; compare the columns both have
            common = [c for c in expected[0] if c in got[0]]
            assert_same(
                f"PyIceberg, {m.recipe.name} at {snapshot_id}",
                _columns(got, common),
                _columns(expected, common),
            )


def _columns(rows: Rows, names: list[str]) -> Rows:
    index = [rows[0].index(n) for n in names]
    return names, sorted((tuple(r[i] for i in index) for r in rows[1]), key=repr)


def test_duckdb_iceberg_reads_the_current_snapshots_as_spark(
    spark: SparkSession, moved: dict[str, Moved], s3_server: S3Server
) -> None:
    """DuckDB's extension reads a position-delete file at the size its manifest gives, and
    Iceberg 1.10.2 keeps the original's size for the rewritten file (apache/iceberg#12554):
    it cannot read a moved table with position deletes (pinned), and reads the others."""
    why = duckdb_httpfs_unavailable()
    if why:
        pytest.skip(why)
    secret = duckdb_s3_secret(s3_server.properties)
    for m in moved.values():
        if m.completed or any(u.source.endswith("-deletes.parquet") for u in m.uploads):
            with pytest.raises(PeerError, match="No magic bytes found at end of file"):
                duckdb_iceberg_read(m.metadata_location, [secret])
            continue
        expected = spark_rows(spark, f"SELECT * FROM {m.spark_name}")
        got = arrow_rows(duckdb_iceberg_read(m.metadata_location, [secret]))
        assert_same(f"DuckDB iceberg_scan, {m.recipe.name}", *same_columns(got, expected))


# -- iceduck reads the moved table ----------------------------------------------------------------


def test_iceduck_reads_the_current_snapshot_as_spark(
    spark: SparkSession, moved: dict[str, Moved], con: Any
) -> None:
    for m in moved.values():
        expected = spark_rows(spark, f"SELECT * FROM {m.spark_name}")
        assert_same(
            f"iceduck, {m.recipe.name}", iceduck_rows(con, f"SELECT * FROM {m.iceduck_name}"), expected
        )


def test_iceduck_reads_every_snapshot_and_tag_as_spark(
    spark: SparkSession, moved: dict[str, Moved], con: Any
) -> None:
    for m in moved.values():
        versions: list[str] = [str(s) for s in m.snapshot_ids]
        if m.recipe.tag:
            versions.append(f"'{m.recipe.tag}'")
        for version in versions:
            expected = spark_rows(spark, f"SELECT * FROM {m.spark_name} VERSION AS OF {version}")
            got = iceduck_rows(con, f"SELECT * FROM {m.iceduck_name} VERSION AS OF {version}")
            assert_same(f"iceduck, {m.recipe.name} VERSION AS OF {version}", got, expected)


def test_iceduck_filters_and_aggregates_as_spark(
    spark: SparkSession, moved: dict[str, Moved], con: Any
) -> None:
    m = moved["mor_v2"]
    query = (
        "SELECT cat, count(*) AS n, sum(amount) AS total FROM {t} "
        "WHERE ts >= TIMESTAMP '2023-11-16' GROUP BY cat"
    )
    expected = spark_rows(spark, query.format(t=m.spark_name))
    assert_same("iceduck, filtered aggregate", iceduck_rows(con, query.format(t=m.iceduck_name)), expected)


def test_iceduck_metadata_tables_match_spark(spark: SparkSession, moved: dict[str, Moved], con: Any) -> None:
    for m in moved.values():
        snapshots = "SELECT snapshot_id, parent_id, operation FROM {t}.snapshots"
        assert_same(
            f"{m.recipe.name}.snapshots",
            iceduck_rows(con, snapshots.format(t=m.iceduck_name)),
            spark_rows(spark, snapshots.format(t=m.spark_name)),
        )
        files = "SELECT content, file_path, record_count FROM {t}.files"
        expected = _swap(
            spark_rows(spark, files.format(t=m.spark_name)), "file_path", m.source_prefix, m.target_prefix
        )
        assert_same(f"{m.recipe.name}.files", iceduck_rows(con, files.format(t=m.iceduck_name)), expected)


# -- what Iceberg 1.10 cannot move ------------------------------------------------------------------


def test_iceberg_110_cannot_move_a_table_with_deletion_vectors(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Pinned: apache/iceberg#13671. When this fails, Iceberg moves DV tables: add a v3
    merge-on-read recipe above (iceduck reads deletion vectors on S3, see test_s3_peers.py)."""
    recipe = Recipe(
        "mor_dv_v3",
        3,
        "(id bigint, cat string)",
        "PARTITIONED BY (cat)",
        (
            "INSERT INTO {t} SELECT id, CAST(id % 2 AS string) FROM range(0, 20)",
            "DELETE FROM {t} WHERE id % 4 = 0",
        ),
        properties=MOR,
    )
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{NS}")
    name = _build(spark, recipe)
    try:
        assert spark.sql(f"SELECT count(*) FROM {name}.delete_files").collect()[0][0] > 0
        with pytest.raises(Exception, match="Content offset is required for DV"):
            _rewrite(
                spark, name, _table_location(spark, name), "s3://bucket/dv", tmp_path_factory.mktemp("dv")
            )
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name} PURGE")


def test_iceberg_110_cannot_move_two_position_delete_commits_in_one_call(
    spark: SparkSession, moved: dict[str, Moved], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Pinned: apache/iceberg#14814, why :func:`move` makes one call per version. When this
    fails, one call moves the whole history."""
    m = moved["mor_v2"]
    with pytest.raises(Exception, match="already exists"):
        _rewrite(spark, m.spark_name, m.source_prefix, "s3://bucket/once", tmp_path_factory.mktemp("once"))


def test_iceberg_110_leaves_position_delete_files_unwritten(moved: dict[str, Moved]) -> None:
    """Pinned: apache/iceberg#12772, why :func:`move` writes some staged delete files
    itself. Those Iceberg did write hold the rows the test's rewrite gives."""
    m = moved["mor_v2"]
    assert m.completed, "Iceberg now writes every staged position-delete file: drop the workaround"
    written = [u for u in m.uploads if u.source.endswith("-deletes.parquet") and u not in m.completed]
    assert written, "Iceberg wrote no staged position-delete file at all"
    import pyarrow.parquet as pq

    for u in written:
        ours = Path(u.source).with_suffix(".check.parquet")
        original = m.source_prefix + u.target.removeprefix(m.target_prefix)
        position_delete_rewrite(original, str(ours), m.source_prefix, m.target_prefix)
        assert pq.ParquetFile(ours).read().to_pylist() == pq.ParquetFile(u.source).read().to_pylist()
