"""Manifest lists and manifests written by Spark 3.5 + Iceberg 1.10.2 (tests/fixtures/spark),
parsed by iceduck: partition tuples against the transforms of Spark's own rows, partition
summaries and column bounds decoded to values, counts, sequence numbers and row ids."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

from iceduck.spec.manifest import EntryStatus, FileContent, FileFormat, ManifestContent
from iceduck.spec.types import PrimitiveType
from iceduck.spec.values import from_bytes
from tests.fixtures.spark.parsed import (
    entries,
    manifest,
    manifest_list,
    metadata,
    micros,
    partition_of,
    snapshots,
)
from tests.fixtures.spark.tables import expected


def test_identity_bucket_day_partitions_match_spark_rows() -> None:
    md = metadata("part.mixed_v2")
    found: Counter[tuple[Any, ...]] = Counter()
    for e in entries("part.mixed_v2"):
        found[e.data_file.partition] += e.data_file.record_count
    rows = expected()["part.mixed_v2"]["rows"]
    assert found == Counter(partition_of(r, md.spec(), md.schema()) for r in rows)
    assert len(found) == 26 and sum(found.values()) == 40
    assert ("a", 0, 19675) in found  # 2023-11-14 is day 19675


def test_truncate_partitions_match_spark_rows() -> None:
    md = metadata("part.truncate_v2")
    found = Counter(e.data_file.partition for e in entries("part.truncate_v2"))
    rows = expected()["part.truncate_v2"]["rows"]
    assert found == Counter(partition_of(r, md.spec(), md.schema()) for r in rows)
    assert (None,) * 5 in found
    assert (80, 12000000080, Decimal("38.00"), "ice", b"\x0c\r") in found


def decoded_summaries(identifier: str) -> list[tuple[bool, Any, Any]]:
    md = metadata(identifier)
    (row,) = manifest_list(identifier).manifests
    types = [f.field_type for f in md.spec().partition_type(md.schema()).fields]
    assert row.partitions is not None
    return [
        (s.contains_null, from_bytes(t, s.lower_bound), from_bytes(t, s.upper_bound))  # type: ignore[arg-type]
        for s, t in zip(row.partitions, types, strict=True)
    ]


def test_manifest_list_partition_summaries() -> None:
    assert decoded_summaries("part.mixed_v2") == [(False, "a", "c"), (False, 0, 3), (False, 19675, 19678)]
    summaries = decoded_summaries("part.truncate_v2")
    assert [s[0] for s in summaries] == [True] * 5  # the all-NULL row
    assert summaries[0][1:] == (-110, 90)
    assert summaries[3][1:] == ("15", "中文字")


def test_column_bounds_decode_to_the_rows_of_each_file() -> None:
    """v1, two appends of two files: each file's id range selects Spark's rows, whose
    counts, data and timestamps agree with the file's other metrics."""
    md = metadata("fmt.v1_unpartitioned")
    schema = md.schema()
    rows = expected()["fmt.v1_unpartitioned"]["rows"]
    ranges = []
    for e in entries("fmt.v1_unpartitioned"):
        f = e.data_file
        assert f.lower_bounds is not None and f.upper_bounds is not None
        low = {i: from_bytes(schema.find_type(i), b) for i, b in f.lower_bounds.items()}  # type: ignore[arg-type]
        high = {i: from_bytes(schema.find_type(i), b) for i, b in f.upper_bounds.items()}  # type: ignore[arg-type]
        mine = [r for r in rows if low[1] <= r["id"] <= high[1]]
        assert f.record_count == len(mine) == f.value_counts[1]  # type: ignore[index]
        assert (low[2], high[2]) == (min(r["data"] for r in mine), max(r["data"] for r in mine))
        assert (low[4], high[4]) == (min(micros(r["ts"]) for r in mine), max(micros(r["ts"]) for r in mine))
        assert f.null_value_counts == {1: 0, 2: 0, 3: 0, 4: 0}
        ranges.append((low[1], high[1]))
    assert sorted(ranges) == [(0, 29), (30, 59), (60, 79), (80, 99)]


def test_v1_entries_carry_no_sequence_numbers() -> None:
    for e in entries("fmt.v1_unpartitioned"):
        assert (e.status, e.sequence_number, e.file_sequence_number) == (EntryStatus.ADDED, 0, 0)
        assert e.data_file.file_format is FileFormat.PARQUET


def test_deletion_vector_manifests() -> None:
    """The second DELETE replaces the first DV: one manifest adds the merged vector, one
    records the old one as deleted."""
    listing = manifest_list("deletes.dv_v3")
    first, _, last = snapshots("deletes.dv_v3")
    assert (listing.snapshot_id, listing.sequence_number, listing.first_row_id) == (last.snapshot_id, 3, 20)
    rows = [
        (m.content, m.sequence_number, m.added_files_count, m.deleted_files_count, m.added_rows_count)
        for m in listing.manifests
    ]
    assert sorted(rows) == [
        (ManifestContent.DATA, 1, 1, 0, 20),
        (ManifestContent.DELETES, 3, 0, 1, 0),
        (ManifestContent.DELETES, 3, 1, 0, 7),
    ]
    data = next(m for m in listing.manifests if m.content is ManifestContent.DATA)
    assert (data.added_snapshot_id, data.first_row_id) == (first.snapshot_id, 0)
    (data_entry,) = manifest("deletes.dv_v3", data).entries
    assert data_entry.data_file.first_row_id == 0  # inherited from the list row
    dvs = {
        e.status: e for e in entries("deletes.dv_v3") if e.data_file.content is FileContent.POSITION_DELETES
    }
    for status, count, seq in ((EntryStatus.ADDED, 7, 3), (EntryStatus.DELETED, 5, 2)):
        f = dvs[status].data_file
        assert (f.file_format, f.record_count, dvs[status].sequence_number) == (FileFormat.PUFFIN, count, seq)
        assert f.referenced_data_file == data_entry.data_file.file_path
        assert f.content_offset == 4  # right after the Puffin magic
    assert dvs[EntryStatus.ADDED].data_file.content_size_in_bytes == 54


def test_equality_delete_entries() -> None:
    """Three equality deletes (ids [1], [2], [1, 3]) between data at sequence numbers 1 and
    3, then Spark's position delete at 6."""
    found = sorted(
        (e.sequence_number, e.data_file.content, e.data_file.equality_ids, e.data_file.record_count)
        for e in entries("dml.eq_delete_v2")
    )
    assert found == [
        (1, FileContent.DATA, None, 15),
        (1, FileContent.DATA, None, 15),
        (2, FileContent.EQUALITY_DELETES, [1], 3),
        (3, FileContent.DATA, None, 1),
        (4, FileContent.EQUALITY_DELETES, [2], 2),
        (5, FileContent.EQUALITY_DELETES, [1, 3], 3),
        (6, FileContent.POSITION_DELETES, None, 1),
    ]


def test_equality_delete_bounds() -> None:
    schema = metadata("dml.eq_delete_v2").schema()
    by_ids = {
        tuple(e.data_file.equality_ids): e.data_file
        for e in entries("dml.eq_delete_v2")
        if e.data_file.equality_ids
    }

    def bounds(ids: tuple[int, ...], field_id: int) -> tuple[Any, Any]:
        f = by_ids[ids]
        t: PrimitiveType = schema.find_type(field_id)  # type: ignore[assignment]
        return from_bytes(t, f.lower_bounds[field_id]), from_bytes(t, f.upper_bounds[field_id])  # type: ignore[index]

    assert bounds((1,), 1) == (3, 11)
    assert bounds((2,), 2) == ("n13", "n13")
    assert by_ids[(2,)].null_value_counts == {2: 1}  # the NULL key
    assert bounds((1, 3), 1) == (22, 24)
    assert bounds((1, 3), 3) == ("b", "b")
