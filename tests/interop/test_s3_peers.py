"""Other readers of iceduck's tables in S3: PyIceberg and DuckDB's Iceberg extension.

iceduck creates tables in the run's moto bucket (``CREATE TABLE ... LOCATION 's3://...'``
on a local SQLite catalog), and writes a history into each: inserts, a delete, an update,
a merge, a column added, a tag. The tables cover merge-on-read on v2 (position-delete
files) and v3 (deletion vectors in Puffin files), and copy-on-write. Then every snapshot
is read by:

* iceduck itself (``VERSION AS OF``), the reference;
* PyIceberg, through its SQL catalog on the same ``catalog.db`` with its own S3 FileIO
  (PyArrowFileIO) given the same Iceberg properties;
* DuckDB 1.5.5's Iceberg extension with httpfs (bench/.venv), given the credentials as a
  DuckDB secret, ``iceberg_scan`` of the moved metadata file with ``snapshot_from_id``.

Full result sets are compared, sorted. A reader missing on the machine skips, naming why.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.lake_peers import (
    duckdb_httpfs_unavailable,
    duckdb_s3_secret,
    iceduck_on_bucket,
    object_store_missing,
    pyiceberg_catalog,
    same_columns,
)
from tests.support.s3 import S3Server, list_keys
from tests.support.scenario_peers import duckdb_iceberg_read, pyiceberg_unavailable
from tests.support.scenario_rows import Rows, arrow_rows, assert_same, iceduck_rows

NS = "lake"
TAG = "loaded"


@dataclass(frozen=True)
class Recipe:
    name: str
    version: int
    mode: str  # write.delete/update/merge.mode


RECIPES = (
    Recipe("mor_v2", 2, "merge-on-read"),  # position-delete files
    Recipe("mor_v3", 3, "merge-on-read"),  # deletion vectors
    Recipe("cow_v2", 2, "copy-on-write"),
)

STEPS = (
    "INSERT INTO {t} SELECT i, 'c' || (i % 7), CAST(i AS decimal(10,2)) / 8, "
    "TIMESTAMPTZ '2024-05-01 00:00:00+00' + to_minutes(i * 7) FROM range(300) r(i)",
    "ALTER TABLE {t} CREATE TAG " + TAG,
    "INSERT INTO {t} SELECT i, 'late', NULL, TIMESTAMPTZ '2024-05-09 12:00:00+00' FROM range(300, 340) r(i)",
    "DELETE FROM {t} WHERE id % 5 = 0",
    "UPDATE {t} SET amount = amount * 2 WHERE customer = 'c3'",
    "ALTER TABLE {t} ADD COLUMN note string",
    "MERGE INTO {t} t USING (SELECT i AS id, 'merged' AS note FROM range(320, 360) r(i)) s ON t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET note = s.note "
    "WHEN NOT MATCHED THEN INSERT (id, customer, note, ts) "
    "VALUES (s.id, 'new', s.note, TIMESTAMPTZ '2024-05-10 00:00:00+00')",
)


@dataclass
class Written:
    recipe: Recipe
    location: str  # s3://bucket/...
    snapshot_ids: list[int] = field(default_factory=list)
    metadata_location: str = ""

    @property
    def name(self) -> str:
        return f"{NS}.{self.recipe.name}"


@pytest.fixture(scope="module")
def lake(s3_server: S3Server, s3_bucket: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    reason = object_store_missing()
    if reason is not None:
        pytest.skip(reason)
    warehouse = tmp_path_factory.mktemp("lake-catalog")
    with iceduck_on_bucket(warehouse, s3_server.properties) as con:
        con.execute(f"CREATE NAMESPACE {NS}")
        yield con, warehouse


@pytest.fixture(scope="module")
def written(lake: Any, s3_bucket: str) -> dict[str, Written]:
    """Each recipe's table, written by iceduck into the bucket, with its snapshot ids."""
    con, _ = lake
    out = {}
    for recipe in RECIPES:
        table = Written(recipe, f"s3://{s3_bucket}/warehouse/{NS}/{recipe.name}")
        modes = ", ".join(f"'write.{op}.mode' = '{recipe.mode}'" for op in ("delete", "update", "merge"))
        con.execute(
            f"CREATE TABLE {table.name} (id bigint NOT NULL, customer string, amount decimal(10,2), "
            f"ts timestamptz) USING iceberg PARTITIONED BY (days(ts), bucket(4, id)) "
            f"LOCATION '{table.location}' "
            f"TBLPROPERTIES ('format-version' = '{recipe.version}', {modes})"
        )
        for step in STEPS:
            con.execute(step.format(t=table.name))
        table.snapshot_ids = [
            r[0] for r in con.execute(f"SELECT snapshot_id FROM {table.name}.snapshots").fetchall()
        ]
        log = f"SELECT file FROM {table.name}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1"
        table.metadata_location = con.execute(log).fetchone()[0]
        out[recipe.name] = table
    return out


def versions(table: Written) -> list[str]:
    return [*(str(s) for s in table.snapshot_ids), f"'{TAG}'"]


def reference(con: Any, table: Written, version: str) -> Rows:
    return iceduck_rows(con, f"SELECT * FROM {table.name} VERSION AS OF {version}")


def snapshot_of(con: Any, table: Written, version: str) -> int:
    if version.startswith("'"):
        sql = f"SELECT snapshot_id FROM {table.name}.refs WHERE name = {version}"
        return int(con.execute(sql).fetchone()[0])
    return int(version)


# -- what iceduck wrote ---------------------------------------------------------------------------


def test_the_tables_live_in_the_bucket_and_only_the_catalog_on_disk(
    lake: Any, written: dict[str, Written], s3_server: S3Server, s3_bucket: str
) -> None:
    _, warehouse = lake
    assert sorted(p.name for p in Path(warehouse).iterdir() if p.is_file()) == ["catalog.db"]
    assert not [
        p for p in Path(warehouse).rglob("*") if p.suffix in (".parquet", ".avro", ".json", ".puffin")
    ]
    for table in written.values():
        prefix = table.location.removeprefix(f"s3://{s3_bucket}/") + "/"
        keys = list_keys(s3_server.endpoint_url, s3_bucket, prefix)
        assert table.metadata_location.removeprefix(f"s3://{s3_bucket}/") in keys
        assert any(k.startswith(prefix + "data/") for k in keys)
        kinds = {k.rsplit(".", 1)[1] for k in keys}
        if table.recipe.version == 3 and table.recipe.mode == "merge-on-read":
            assert "puffin" in kinds, "no deletion vector was written"
        assert len(table.snapshot_ids) == 5  # INSERT, INSERT, DELETE, UPDATE, MERGE


def test_the_history_reads_back_in_iceduck(lake: Any, written: dict[str, Written]) -> None:
    con, _ = lake
    for table in written.values():
        rows = con.execute(f"SELECT count(*), count(note) FROM {table.name}").fetchone()
        # 340 inserted, 68 deleted (id % 5 = 0), MERGE: 16 updated, 24 inserted (4 of them deleted before)
        assert rows == (296, 40), table.name
        assert con.execute(f"SELECT count(*) FROM {table.name} VERSION AS OF '{TAG}'").fetchone() == (300,)


# -- PyIceberg ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [r.name for r in RECIPES])
def test_pyiceberg_reads_every_snapshot(
    lake: Any, written: dict[str, Written], s3_server: S3Server, name: str
) -> None:
    why = pyiceberg_unavailable()
    if why:
        pytest.skip(why)
    con, warehouse = lake
    table = written[name]
    peer = pyiceberg_catalog(warehouse / "catalog.db", s3_server.properties).load_table(table.name)
    assert peer.metadata_location == table.metadata_location
    assert sorted(s.snapshot_id for s in peer.snapshots()) == sorted(table.snapshot_ids)
    for version in versions(table):
        expected = reference(con, table, version)
        got = arrow_rows(peer.scan(snapshot_id=snapshot_of(con, table, version)).to_arrow())
        assert_same(f"PyIceberg reading {name} at {version}", *same_columns(got, expected))


def test_pyiceberg_sees_the_same_files(lake: Any, written: dict[str, Written], s3_server: S3Server) -> None:
    why = pyiceberg_unavailable()
    if why:
        pytest.skip(why)
    con, warehouse = lake
    catalog = pyiceberg_catalog(warehouse / "catalog.db", s3_server.properties)
    for table in written.values():
        peer = catalog.load_table(table.name)
        theirs = sorted((t.file.file_path, t.file.record_count) for t in peer.scan().plan_files())
        ours = sorted(
            con.execute(
                f"SELECT file_path, record_count FROM {table.name}.files WHERE content = 0"
            ).fetchall()
        )
        assert theirs == ours, table.name


# -- DuckDB's Iceberg extension with httpfs ------------------------------------------------------------


@pytest.mark.parametrize("name", [r.name for r in RECIPES])
def test_duckdb_iceberg_reads_every_snapshot(
    lake: Any, written: dict[str, Written], s3_server: S3Server, name: str
) -> None:
    why = duckdb_httpfs_unavailable()
    if why:
        pytest.skip(why)
    con, _ = lake
    table = written[name]
    secret = duckdb_s3_secret(s3_server.properties)
    for version in versions(table):
        expected = reference(con, table, version)
        arrow = duckdb_iceberg_read(
            table.metadata_location, [secret], snapshot_id=snapshot_of(con, table, version)
        )
        assert_same(f"DuckDB iceberg_scan of {name} at {version}", *same_columns(arrow_rows(arrow), expected))
