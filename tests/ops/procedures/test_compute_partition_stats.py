"""``CALL system.compute_partition_stats``: the file's rows equal the counts the ``entries``
metadata table gives per (spec, partition), with the spec's field ids and order; the file
is registered in ``partition-statistics``; the table's rows and snapshots are untouched;
expiry deletes the files of expired snapshots; bad input is refused by name."""

from __future__ import annotations

import datetime
import decimal
import os
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import iceduck
from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import ValidationError
from iceduck.io.fileio import to_local_path
from iceduck.spec.snapshot import PartitionStatisticsFile
from iceduck.txn.partition_statistics import commit_partition_statistics
from tests.ops.procedures.expire_support import FUTURE, disk_files, referenced_files, snapshot_ids, table_dir
from tests.ops.procedures.partition_stats_support import SPEC_IDS, read_by_field_id
from tests.support.faults import add_equality_deletes

REQUIRED_V2 = {1, 2, 3, 4, 5}
REQUIRED_V3 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13}


def make_table(con: Connection, version: int) -> None:
    """An unpartitioned first spec with a data file and an equality-delete file, then
    partitioned by ``p``: three small inserts, a merge-on-read delete (a position-delete
    file on v2, a DV on v3) and a delete of a whole partition (its files removed)."""
    con.execute(
        "CREATE TABLE db.t (id bigint, p int) TBLPROPERTIES "
        f"('format-version'='{version}', 'write.delete.mode'='merge-on-read')"
    )
    con.execute("INSERT INTO db.t VALUES (1, 0), (2, 1)")
    add_equality_deletes(con, "db", "t", "id", [1])
    con.execute("ALTER TABLE db.t ADD PARTITION FIELD p")
    for k in range(3):
        con.execute("INSERT INTO db.t SELECT i, i % 3 FROM range(?, ?) r(i)", [10 * k + 10, 10 * k + 20])
    con.execute("DELETE FROM db.t WHERE id = 13")
    con.execute("DELETE FROM db.t WHERE p = 2")


def load(con: Connection, name: str = "t") -> LoadedTable:
    return con.session.catalog.load_table(TableIdentifier(("db",), name))


def expected_rows(con: Connection, version: int, table: str = "db.t") -> list[dict[str, Any]]:
    """The per-(spec, partition) counts from the ``entries`` metadata table and
    ``snapshots``, computed here without the code under test."""
    committed = dict(
        con.execute(f"SELECT snapshot_id, epoch_ms(committed_at) FROM {table}.snapshots").fetchall()
    )
    entries = con.execute(
        "SELECT status, snapshot_id, data_file.content, data_file.file_format, data_file.spec_id, "
        f"data_file.partition, data_file.record_count, data_file.file_size_in_bytes FROM {table}.entries"
    ).fetchall()
    groups: dict[tuple[int, tuple[Any, ...]], dict[str, Any]] = {}
    for status, snapshot_id, content, fmt, spec_id, partition, records, size in entries:
        key = (spec_id, tuple(partition.values()))
        row = groups.setdefault(key, {name: 0 for name in SPEC_IDS.values()})
        row.update(partition=partition, spec_id=spec_id)
        if status != 2:
            if content == 0:
                row["data_record_count"] += records
                row["data_file_count"] += 1
                row["total_data_file_size_in_bytes"] += size
            elif content == 1:
                row["position_delete_record_count"] += records
                row["dv_count" if fmt == "PUFFIN" else "position_delete_file_count"] += 1
            else:
                row["equality_delete_record_count"] += records
                row["equality_delete_file_count"] += 1
        if row["last_updated_at"] == 0 or committed[snapshot_id] > row["last_updated_at"]:
            row["last_updated_at"], row["last_updated_snapshot_id"] = committed[snapshot_id], snapshot_id
    for row in groups.values():
        row["total_record_count"] = None  # never written, as Java (iceduck.scan.partition_stats)
        if version < 3:
            del row["dv_count"]

    def order(key: tuple[int, tuple[Any, ...]]) -> tuple[Any, ...]:
        return (tuple((0,) if v is None else (1, v) for v in key[1]), key[0])

    return [groups[k] for k in sorted(groups, key=order)]


@pytest.mark.parametrize("version", [2, 3])
def test_the_file_holds_each_partitions_counts(con: Connection, version: int) -> None:
    make_table(con, version)
    rows_before = con.execute("SELECT * FROM db.t ORDER BY id").fetchall()
    before = load(con).metadata
    cur = con.execute("CALL system.compute_partition_stats('db.t')")
    assert [(d[0], d[1]) for d in cur.description] == [("partition_statistics_file", "VARCHAR")]
    [(path,)] = cur.fetchall()
    schema, rows = read_by_field_id(path)
    assert rows == expected_rows(con, version)
    # the unpartitioned spec's files, the DV or delete file, the emptied partition p = 2
    assert rows[0]["partition"] == {"p": None} and rows[0]["spec_id"] == 0
    assert rows[0]["equality_delete_file_count"] == 1
    assert [r["partition"]["p"] for r in rows[1:]] == [0, 1, 2]
    assert rows[2]["position_delete_record_count"] == 1
    assert (
        rows[3]["data_file_count"] == 0 and rows[3]["last_updated_snapshot_id"] == before.current_snapshot_id
    )
    assert rows[1]["data_record_count"] == 10 and rows[1]["total_record_count"] is None
    # the spec's field ids, required-ness per version, the unified partition type's ids
    required = REQUIRED_V3 if version >= 3 else REQUIRED_V2
    ids = {int(f.metadata[b"PARQUET:field_id"]): f for f in schema}
    assert set(ids) == set(SPEC_IDS) - ({13} if version < 3 else set())
    assert {i for i, f in ids.items() if not f.nullable} == required
    assert [int(f.metadata[b"PARQUET:field_id"]) for f in ids[1].type] == [1000]
    # registered for the current snapshot; nothing else changed
    after = load(con).metadata
    assert after.partition_statistics == (
        PartitionStatisticsFile(before.current_snapshot_id, path, os.path.getsize(to_local_path(path))),
    )
    assert os.path.dirname(to_local_path(path)) == str(table_dir(con, "db", "t") / "metadata")
    assert os.path.basename(path).startswith(f"partition-stats-{before.current_snapshot_id}-")
    assert after.snapshots == before.snapshots and after.current_snapshot_id == before.current_snapshot_id
    assert con.execute("SELECT * FROM db.t ORDER BY id").fetchall() == rows_before


def test_an_older_snapshot_and_a_second_call(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint, p int) PARTITIONED BY (p)")
    con.execute("INSERT INTO db.t VALUES (1, 1), (2, 2)")
    con.execute("INSERT INTO db.t VALUES (3, 2), (4, 3)")
    first, second = snapshot_ids(con, "db.t")
    [(path,)] = con.execute("CALL system.compute_partition_stats('db.t', ?)", [first]).fetchall()
    _, rows = read_by_field_id(path)
    assert [(r["partition"]["p"], r["data_record_count"], r["last_updated_snapshot_id"]) for r in rows] == [
        (1, 1, first),
        (2, 1, first),
    ]
    [(current,)] = con.execute("CALL system.compute_partition_stats(table => 'db.t')").fetchall()
    _, rows = read_by_field_id(current)
    assert [(r["partition"]["p"], r["data_file_count"], r["last_updated_snapshot_id"]) for r in rows] == [
        (1, 1, first),
        (2, 2, second),
        (3, 1, second),
    ]
    # a snapshot with a registered file gets it back: no new file, no new commit
    metadata = load(con).metadata
    assert con.execute("CALL system.compute_partition_stats('db.t', ?)", [first]).fetchall() == [(path,)]
    assert load(con).metadata == metadata
    assert {s.snapshot_id: s.statistics_path for s in metadata.partition_statistics} == {
        first: path,
        second: current,
    }


def test_expiry_deletes_the_files_of_expired_snapshots(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint, p int) PARTITIONED BY (p)")
    for i in range(3):
        con.execute("INSERT INTO db.t VALUES (?, ?)", [i, i % 2])
    ids = snapshot_ids(con, "db.t")
    paths = [con.execute("CALL system.compute_partition_stats('db.t', ?)", [s]).fetchall()[0][0] for s in ids]
    con.execute(f"CALL system.expire_snapshots(table => 'db.t', older_than => {FUTURE}, retain_last => 2)")
    kept = load(con).metadata.partition_statistics
    assert [s.statistics_path for s in kept] == paths[1:]
    local = [os.path.normpath(to_local_path(p)) for p in paths]
    on_disk = disk_files(table_dir(con, "db", "t"))
    assert local[0] not in on_disk and set(local[1:]) <= on_disk
    assert on_disk == referenced_files(con, "db.t") | set(local[1:])


def test_nothing_to_compute_gives_no_row(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint, p int) PARTITIONED BY (p)")
    assert con.execute("CALL system.compute_partition_stats('db.t')").fetchall() == []
    con.execute("ALTER TABLE db.t CREATE BRANCH b")  # an empty snapshot, on the branch only
    [empty] = snapshot_ids(con, "db.t")
    assert con.execute("CALL system.compute_partition_stats('db.t', ?)", [empty]).fetchall() == []
    assert load(con).metadata.partition_statistics == ()


@pytest.mark.parametrize(
    ("setup", "call", "says"),
    [
        ("", "CALL system.compute_partition_stats('db.t', 12345)", "Snapshot not found: 12345"),
        ("", "CALL system.compute_partition_stats('db.u')", "need a partitioned table: db.u"),
        ("", "CALL system.compute_partition_stats('db.t', 'x')", "snapshot_id takes a long"),
        ("", "CALL system.compute_partition_stats('db.nope')", "db.nope"),
        (
            "ALTER TABLE db.t SET TBLPROPERTIES ('write.format.default' = 'orc')",
            "CALL system.compute_partition_stats('db.t')",
            "written as Parquet only",
        ),
    ],
)
def test_errors_name_the_problem(con: Connection, setup: str, call: str, says: str) -> None:
    con.execute("CREATE TABLE db.t (id bigint, p int) PARTITIONED BY (p)")
    con.execute("INSERT INTO db.t VALUES (1, 1)")
    con.execute("CREATE TABLE db.u (id bigint)")
    con.execute("INSERT INTO db.u VALUES (1)")
    if setup:
        con.execute(setup)
    before = disk_files(table_dir(con, "db", "t"))
    with pytest.raises(iceduck.Error) as raised:
        con.execute(call)
    assert says in str(raised.value)
    assert load(con).metadata.partition_statistics == ()
    assert disk_files(table_dir(con, "db", "t")) == before


def test_a_snapshot_expired_meanwhile_is_refused_and_the_file_deleted(
    con: Connection, tmp_path: Path
) -> None:
    con.execute("CREATE TABLE db.t (id bigint, p int) PARTITIONED BY (p)")
    for i in range(2):
        con.execute("INSERT INTO db.t VALUES (?, 1)", [i])
    stale = load(con)
    first = snapshot_ids(con, "db.t")[0]
    con.execute(f"CALL system.expire_snapshots(table => 'db.t', older_than => {FUTURE}, retain_last => 1)")
    written = tmp_path / "wh" / "stats.parquet"
    written.write_bytes(b"not read")
    with pytest.raises(ValidationError, match=f"snapshot {first} .* removed by a concurrent commit"):
        commit_partition_statistics(
            con.session.catalog, stale, PartitionStatisticsFile(first, str(written), 8)
        )
    assert not written.exists()
    assert load(con).metadata.partition_statistics == ()


def test_partition_values_of_every_type(con: Connection) -> None:
    """Partition values keep Iceberg's Parquet types (a uuid is a 16-byte fixed); nulls sort first."""
    con.execute(
        "CREATE TABLE db.t (id bigint, d date, ts timestamp_ntz, dec decimal(10, 2), s string, "
        "b binary, f boolean, u uuid) PARTITIONED BY (d, ts, dec, s, b, f, u, truncate(2, s), "
        "bucket(3, id), hours(ts))"
    )
    con.execute(
        "INSERT INTO db.t VALUES (1, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05', 12.34, 'abc', "
        "'xy'::blob, true, '12345678-1234-5678-1234-567812345678'), "
        "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
    )
    [(path,)] = con.execute("CALL system.compute_partition_stats('db.t')").fetchall()
    schema, rows = read_by_field_id(path)
    types = {f.name: f.type for f in schema.field("partition").type}
    assert types == {
        "d": pa.date32(), "ts": pa.timestamp("us"), "dec": pa.decimal128(10, 2), "s": pa.string(),
        "b": pa.binary(), "f": pa.bool_(), "u": pa.binary(16), "s_trunc": pa.string(),
        "id_bucket": pa.int32(), "ts_hour": pa.int32(),
    }  # fmt: skip
    assert rows[0]["partition"]["d"] is None and rows[0]["partition"]["id_bucket"] is not None
    found = rows[1]["partition"]
    assert (found["d"], found["ts"], found["dec"]) == (
        datetime.date(2024, 1, 2),
        datetime.datetime(2024, 1, 2, 3, 4, 5),
        decimal.Decimal("12.34"),
    )
    assert (found["s"], found["b"], found["f"], found["s_trunc"]) == ("abc", b"xy", True, "ab")
    assert found["u"] == uuid.UUID("12345678-1234-5678-1234-567812345678").bytes
